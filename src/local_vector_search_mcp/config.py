"""Configuration: defaults, the ``--config`` YAML file and command-line options.

Precedence (later wins): built-in defaults (from spec/config.yaml) -> the YAML
file named by ``--config`` (never loaded implicitly) -> command-line options.
Then paths are resolved and the result validated. Every problem is a
:class:`ConfigError` whose message the CLI prints before exiting with code 1.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lvsm_contract.config import Config

from .errors import InvalidArgument
from .globs import validate_glob

__all__ = ["CliOptions", "Config", "ConfigError", "Settings", "load_settings"]

STATE_DIR = Path(".local-vector-search-mcp")
DEFAULT_STORAGE = STATE_DIR / "index.db"
# Enum-valued keys are matched case-insensitively (the contract's rule).
_ENUM_KEYS = (
    ("server", "transport"),
    ("embedding", "provider"),
    ("embedding", "vectorStorage"),
    ("search", "defaultMode"),
)
_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}


class ConfigError(Exception):
    """The configuration cannot be used; the message says why and how to fix it."""


@dataclass
class CliOptions:
    """Command-line values; ``None`` means "not given"."""

    config: str | None = None
    project_root: str | None = None
    root: str | None = None
    storage_path: str | None = None
    embedding_provider: str | None = None
    embedding_endpoint: str | None = None
    embedding_model: str | None = None
    search_mode: str | None = None
    include: list[str] | None = None
    exclude: list[str] | None = None
    watch_files: bool | None = None
    allow_writes: bool | None = None
    transport: str | None = None
    host: str | None = None
    port: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    project_root: Path
    root: Path
    storage_path: Path
    config: Config
    config_file: Path | None
    # locks shared by every server process of the project (the Markdown write lock); kept apart
    # from the index, which may live in another folder or in no file at all (spec/decisions.md)
    state_dir: Path
    # storage.backend postgresql: storage.url, else LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL (may hold
    # a password: never logged or shown; index/postgres.py shows host, port and database only)
    database_url: str | None = field(default=None, repr=False)


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml  # only when a file is given: keeps start-up fast

    if not path.is_file():
        raise ConfigError(f"Configuration file was not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"Configuration file {path} could not be read: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"Configuration file {path} must contain a mapping of sections.")
    if "knowledgeBases" in data:
        raise ConfigError(
            f"Configuration file {path}: 'knowledgeBases' is not supported; "
            "one server serves one knowledge base, configure it under the singular 'knowledgeBase'."
        )
    return data


def _set(data: dict[str, Any], section: str, key: str, value: Any) -> None:
    if value is None:
        return
    block = data.setdefault(section, {})
    if not isinstance(block, dict):
        raise ConfigError(f"'{section}' must be a mapping.")
    block[key] = value


def _format_validation_error(exc: Any) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; see docs/reference/configuration.md)"
        lines.append(f"  {loc}: {msg}")
    return "Invalid configuration:\n" + "\n".join(lines)


def build_config(data: dict[str, Any]) -> Config:
    from pydantic import ValidationError

    for section, key in _ENUM_KEYS:
        block = data.get(section)
        if isinstance(block, dict) and isinstance(block.get(key), str):
            block[key] = block[key].strip().lower()
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc)) from None
    _check_semantics(config)
    return config


_HOST_NAME = re.compile(
    r"^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$", re.I
)


def _allowed_host_problem(host: str) -> str | None:
    """Why a downloads.allowedHosts entry is not a bare host name or IP literal (None when it is)."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    if "://" in host or "/" in host:
        return "must be a host name or IP address, not a URL"
    if "*" in host:
        return "must name one host; wildcards are not supported"
    if ":" in host:
        return "must not carry a port"
    if not _HOST_NAME.match(host):
        return "is not a valid host name"
    return None


def _check_semantics(config: Config) -> None:
    kb = config.knowledge_base
    for name, patterns in (("knowledgeBase.include", kb.include), ("knowledgeBase.exclude", kb.exclude)):
        for pattern in patterns:
            try:
                validate_glob(str(pattern), name)
            except InvalidArgument as exc:
                raise ConfigError(f"Invalid configuration: {exc.message}") from None
    server = config.server
    for name, origins in (
        ("server.allowedOrigins", server.allowed_origins),
        ("server.corsOrigins", server.cors_origins),
    ):
        for origin in origins:
            if not _is_origin(origin):
                raise ConfigError(
                    f"Invalid configuration: {name} entry {origin!r} must be an origin such as https://ide.example.com "
                    "(scheme, host and optional port; no path)."
                )
    for host in server.allowed_hosts:
        if not host.strip() or "/" in host or " " in host:
            raise ConfigError(
                f"Invalid configuration: server.allowedHosts entry {host!r} must be a host name, optionally with :port."
            )
    for item in config.downloads.allowed_hosts:
        host = item.root
        problem = _allowed_host_problem(host)
        if problem:
            raise ConfigError(f"Invalid configuration: downloads.allowedHosts entry {host!r} {problem}.")
    emb = config.embedding
    storage = str(getattr(emb.vector_storage, "value", emb.vector_storage))
    if storage == "float16" and str(getattr(config.storage.backend, "value", config.storage.backend)) != "postgresql":
        raise ConfigError(
            "Invalid configuration: embedding.vectorStorage float16 needs storage.backend postgresql (pgvector "
            "halfvec); sqlite-vec stores float32, int8 or bit vectors only. On SQLite use int8 (a quarter of "
            "float32's size; recall in docs/performance.md) or float32."
        )
    if emb.provider == "openai-compatible":
        parts = urlsplit(emb.endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"Invalid configuration: embedding.endpoint {emb.endpoint!r} must be an absolute http(s) URL."
            )
        if parts.hostname not in _LOOPBACK and not emb.allow_remote_endpoint:
            raise ConfigError(
                f"Invalid configuration: embedding.endpoint host {parts.hostname!r} is not loopback; "
                "document text would leave this machine. Set embedding.allowRemoteEndpoint: true to allow it."
            )
        if not emb.model:
            raise ConfigError("Invalid configuration: embedding.model is required for the openai-compatible provider.")
        if not emb.api_key:
            raise ConfigError("Invalid configuration: embedding.apiKey is required for the openai-compatible provider.")


def _is_origin(value: str) -> bool:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and parts.path in ("", "/") and not parts.query


def load_settings(options: CliOptions, *, cwd: Path | None = None, environ: dict[str, str] | None = None) -> Settings:
    cwd = cwd or Path.cwd()
    environ = dict(os.environ) if environ is None else environ

    if options.project_root:
        project_root = (cwd / options.project_root).resolve()
        if not project_root.is_dir():
            raise ConfigError(f"--project-root {options.project_root} is not an existing folder.")
    elif environ.get("CLAUDE_PROJECT_DIR", "").strip():
        project_root = Path(environ["CLAUDE_PROJECT_DIR"]).resolve()
        if not project_root.is_dir():
            raise ConfigError("CLAUDE_PROJECT_DIR does not name an existing folder.")
    else:
        project_root = cwd.resolve()
    config_file = None
    data: dict[str, Any] = {}
    if options.config:
        base = project_root if options.project_root else cwd
        config_file = (base / options.config).resolve()
        data = _read_yaml(config_file)

    _set(data, "knowledgeBase", "root", options.root)
    _set(data, "storage", "path", options.storage_path)
    _set(data, "embedding", "provider", options.embedding_provider)
    _set(data, "embedding", "endpoint", options.embedding_endpoint)
    _set(data, "embedding", "model", options.embedding_model)
    _set(data, "search", "defaultMode", options.search_mode)
    _set(data, "knowledgeBase", "include", options.include)
    _set(data, "knowledgeBase", "exclude", options.exclude)
    _set(data, "knowledgeBase", "watchFiles", options.watch_files)
    _set(data, "knowledgeBase", "allowWrites", options.allow_writes)
    _set(data, "server", "transport", options.transport)
    _set(data, "server", "host", options.host)
    _set(data, "server", "port", options.port)
    config = build_config(data)

    root = (project_root / config.knowledge_base.root).resolve() if config.knowledge_base.root else project_root
    guessed = not (options.project_root or environ.get("CLAUDE_PROJECT_DIR", "").strip() or config.knowledge_base.root)
    if guessed and root == Path(root.anchor):
        # decision 375: a client that starts servers in / (Claude Desktop does) would index the disk;
        # a root given on the command line or in YAML is honoured from any working folder
        raise ConfigError(
            f"No project root or knowledge-base root was given and the working folder is {root} (MCP clients "
            "such as Claude Desktop start servers there), which is never taken as a knowledge base. Pass "
            "--project-root /abs/path/to/project (or --root) in the client's args, or set CLAUDE_PROJECT_DIR."
        )
    if not root.is_dir():
        raise ConfigError(f"The knowledge-base root {root} does not exist or is not a folder (it is never created).")
    storage = Path(config.storage.path) if config.storage.path else DEFAULT_STORAGE
    storage_path = storage if storage.is_absolute() else (project_root / storage)
    storage_path = Path(os.path.abspath(storage_path))
    return Settings(
        project_root=project_root,
        root=root,
        storage_path=storage_path,
        config=config,
        config_file=config_file,
        state_dir=project_root / STATE_DIR,
        database_url=_database_url(config, environ),
    )


DATABASE_URL_ENV = "LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL"


def _database_url(config: Config, environ: dict[str, str]) -> str | None:
    """The PostgreSQL URL when that backend is chosen: ``storage.url``, else the environment
    (so a password can stay out of YAML). Errors never repeat the URL: it may hold a password."""
    if config.storage.backend != "postgresql":
        return None
    url = config.storage.url or environ.get(DATABASE_URL_ENV, "").strip()
    if not url:
        raise ConfigError(
            f"storage.backend is postgresql but no database URL is set: give storage.url or {DATABASE_URL_ENV}."
        )
    return check_database_url(url)


def check_database_url(url: str) -> str:
    """``url`` if it can be a PostgreSQL URL; errors never repeat it (it may hold a password)."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(
            "The PostgreSQL URL must start with postgresql:// (the URL is not shown: it may hold a password)."
        )
    try:
        urlsplit(url).port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise ConfigError(
            "The PostgreSQL URL's port is not a number from 0 to 65535 (the URL is not shown: it may hold a "
            "password); the form is postgresql://user:password@host:5432/database."
        ) from None
    return url
