"""Opens the configured index store: the one place that knows the adapters.

``storage.backend`` in the configuration selects the engine: ``sqlite``
(``storage.path``, default ``<project>/.local-vector-search-mcp/index.db``) or
``postgresql`` (``storage.url`` or the environment variable
``LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL``, tables in ``storage.schema``). The
engine sees only :class:`~.port.IndexStore`.
"""

from __future__ import annotations

from ..config import ConfigError, Settings
from .port import IndexStore

__all__ = ["open_store"]


def open_store(settings: Settings) -> IndexStore:
    """The store of ``settings`` (opens nothing yet: adapters connect on first use)."""
    storage = settings.config.storage
    if storage.backend == "postgresql":
        try:
            from .postgres import PostgresStore  # psycopg loads only when PostgreSQL is configured
        except ImportError as exc:
            raise ConfigError(
                f"storage.backend postgresql needs the optional packages: pip install"
                f" 'local-vector-search-mcp[postgresql]' ({exc.name} is missing)."
            ) from None

        return PostgresStore(settings.database_url or "", storage.schema_)
    from .sqlite import SqliteStore  # apsw and sqlite-vec load only when the index is used

    return SqliteStore(settings.storage_path)
