"""Opens the configured index store: the one place that knows the adapters.

``storage`` in the configuration selects the engine. Only SQLite exists
today (``storage.path``, default ``<project>/.local-vector-search-mcp/index.db``);
a PostgreSQL adapter adds its branch here and nothing else in the engine
changes (the engine sees only :class:`~.port.IndexStore`).
"""

from __future__ import annotations

from ..config import Settings
from .port import IndexStore

__all__ = ["open_store"]


def open_store(settings: Settings) -> IndexStore:
    """The store of ``settings`` (opens nothing yet: adapters connect on first use)."""
    from .sqlite import SqliteStore  # apsw and sqlite-vec load only when the index is used

    return SqliteStore(settings.storage_path)
