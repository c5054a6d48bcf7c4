"""Opens the configured index store: the one place that knows the adapters.

``storage.backend`` in the configuration selects the engine: ``sqlite``
(``storage.path``, default ``<project>/.local-vector-search-mcp/index.db``) or
``postgresql`` (``storage.url`` or the environment variable
``LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL``, tables in ``storage.schema``). The
engine sees only :class:`~.port.IndexStore`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..config import DATABASE_URL_ENV, ConfigError, Settings, check_database_url
from .port import IndexStore

__all__ = ["open_store", "open_store_spec"]

_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")  # storage.schema's pattern (spec/config.yaml)


def open_store(settings: Settings) -> IndexStore:
    """The store of ``settings`` (opens nothing yet: adapters connect on first use)."""
    storage = settings.config.storage
    if storage.backend == "postgresql":
        return _postgres(settings.database_url or "", storage.schema_)
    from .owner import Owner
    from .sqlite import SqliteStore  # apsw and sqlite-vec load only when the index is used

    # The file records the knowledge base it indexes; another's is refused (decision 535). A file
    # inside the knowledge base is its own whatever it records (a copied folder); the project root
    # is no such proof, it is the working folder when only --root is given (decision 536). The file
    # records its own place too: one found elsewhere at the same place relative to the root
    # travelled with its knowledge base (a copied project with `root: docs`, decision 550).
    root, file = settings.root.resolve(), settings.storage_path.resolve()
    owner = Owner(root, file.is_relative_to(root), file, settings.project_root.resolve())
    return SqliteStore(settings.storage_path, storage_label(settings.storage_path, settings.project_root), owner)


def storage_label(path: Path, project_root: Path) -> str:
    """How messages name the index file: relative to the project root when it lies there, else
    only as the setting (an absolute path of the server's machine is never shown)."""
    try:
        rel = path.relative_to(project_root)
    except ValueError:
        return "at the configured storage.path (outside the project root)"
    return f"{rel.as_posix()!r} (storage.path, relative to the project root)"


def _postgres(url: str, schema: str) -> IndexStore:
    try:
        from .postgres import PostgresStore  # psycopg loads only when PostgreSQL is used
    except ImportError as exc:
        raise ConfigError(
            f"storage.backend postgresql needs the optional packages of the project's `postgresql` extra"
            f" ({exc.name} is missing): reinstall with it, e.g. pip install '/path/to/checkout[postgresql]'"
            " (pipx: pipx inject local-vector-search-mcp 'psycopg[binary]' pgvector)."
        ) from None
    return PostgresStore(check_database_url(url), schema)


def open_store_spec(spec: str, settings: Settings) -> IndexStore:
    """A store named on the command line (``index copy``): ``sqlite:PATH`` (relative to the
    project root), ``postgresql://...[#schema]``, or ``postgresql:SCHEMA`` with the URL from
    ``storage.url`` or the environment. Errors never repeat a URL (it may hold a password)."""
    kind, sep, rest = spec.partition(":")
    if kind == "sqlite" and sep and rest:
        path = Path(rest).expanduser()
        if path.suffix.lower() == ".md":  # as storage.path (decision 676): never a document's file
            raise ConfigError(f"{spec} names a Markdown document; an index needs a file of its own (e.g. index.db).")
        return open_store_path(path if path.is_absolute() else settings.project_root / path)
    if kind in ("postgresql", "postgres") and sep:
        if rest.startswith("//"):
            url, _, schema = spec.partition("#")
            schema = schema or "local_vector_search_mcp"
        else:
            schema = rest or settings.config.storage.schema_
            url = settings.config.storage.url or os.environ.get(DATABASE_URL_ENV, "").strip()
            if not url:
                raise ConfigError(f"{kind}:{schema} needs a database URL: set {DATABASE_URL_ENV} or storage.url.")
        if not _SCHEMA.match(schema):
            raise ConfigError(f"PostgreSQL schema {schema!r} must match {_SCHEMA.pattern}.")
        return _postgres(url, schema)
    raise ConfigError(
        "A store is sqlite:PATH, postgresql://user@host:port/database[#schema] or postgresql:SCHEMA"
        f" (got {spec.split('://')[0]!r}...)."
    )


def open_store_path(path: Path) -> IndexStore:
    from .sqlite import SqliteStore

    return SqliteStore(Path(os.path.abspath(path)), "given as sqlite:PATH")
