"""local-vector-search-mcp: a local knowledge workbench for AI agents over a project's Markdown."""

__version__ = "0.1.0"
