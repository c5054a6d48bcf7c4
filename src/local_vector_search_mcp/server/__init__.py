"""The stdio MCP server, assembled from the generated registration table."""

from .app import build_server, serve

__all__ = ["build_server", "serve"]
