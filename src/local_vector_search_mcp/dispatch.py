"""Invoke a tool by name: validate the arguments into the generated request model,
call the handler bound in :data:`handlers.BINDINGS`, turn its result model into JSON.

Shared by the MCP server and the ``call`` CLI so both behave identically. A tool's
output is either its structured result (a JSON object matching the declared
outputSchema) or, for a content-only tool, a :class:`~lvsm_contract.content.ContentResult`.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import logging
import math
import re
from collections.abc import Callable, Sequence
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from lvsm_contract.content import ContentResult
from lvsm_contract.registry import BY_NAME, ToolSpec

from .errors import InvalidArgument, InvalidPath, KbError, NotFound, missing_document
from .handlers import BINDINGS
from .lazy_imports import IMPORT_LOCK
from .paths import close_paths
from .workspace import Workspace

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

__all__ = ["ToolOutput", "available_tools", "invoke", "missing_handlers"]

log = logging.getLogger(__name__)

ToolOutput = dict[str, Any] | ContentResult
"""A structured result (JSON object) or the content blocks of a content-only tool."""


def available_tools(toolsets: Sequence[str] | None = None) -> list[ToolSpec]:
    """Spec'd tools that have a handler, in spec order, of the enabled tool sets (``server.toolsets``;
    every set when ``None``): the ones the server lists."""
    return [
        spec for name, spec in BY_NAME.items() if name in BINDINGS and (toolsets is None or spec.toolset in toolsets)
    ]


def missing_handlers() -> list[str]:
    return [name for name in BY_NAME if name not in BINDINGS]


@cache
def _models() -> ModuleType:
    # Imported on first call, not at start-up: building ~100 pydantic classes costs time.
    with IMPORT_LOCK:
        return importlib.import_module("lvsm_contract.models")


def _model(name: str) -> type[BaseModel]:
    model: type[BaseModel] = getattr(_models(), name)
    return model


@cache
def _handler(name: str) -> Callable[..., object]:
    with IMPORT_LOCK:  # the binder imports the handler's module
        return BINDINGS[name]()


def import_models() -> None:
    """Import the contract's models now (a server's warm-up, decision 643), not at a first call."""
    _models()


def import_handler(name: str) -> None:
    """Import tool ``name``'s handler module now (a server's warm-up, decision 643)."""
    _handler(name)


def import_module(name: str) -> None:
    """Import module ``name`` (one a workspace service imports on first use) now, under the lock
    such imports take (a server's warm-up, decision 643). An optional extra that is not installed
    (psycopg) is left to the call that needs it, which says so."""
    with IMPORT_LOCK, contextlib.suppress(ImportError):
        importlib.import_module(name)


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return schema


def _allows_null(schema: dict[str, Any], defs: dict[str, Any]) -> bool:
    schema = _resolve(schema, defs)
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_allows_null(option, defs) for option in schema.get("anyOf", []) + schema.get("oneOf", []))


def _normalise(value: object, schema: dict[str, Any], defs: dict[str, Any]) -> object:
    """Accept enum values in any case (``Hybrid`` -> ``hybrid``), and read an explicit ``null`` for
    an optional property whose schema has no null as "omitted" (decision 280), as the contract does."""
    schema = _resolve(schema, defs)
    if isinstance(value, str) and "enum" in schema:
        for option in schema["enum"]:
            if isinstance(option, str) and option.lower() == value.lower():
                return option
        return value
    if isinstance(value, dict):
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return {
            k: _normalise(v, props[k], defs) if k in props else v
            for k, v in value.items()
            if not (v is None and k in props and k not in required and not _allows_null(props[k], defs))
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = _resolve(schema["items"], defs)
        if not _CHANGEABLE.intersection(items):  # scalars such as an embedding's 384 numbers stay as they are
            return value
        return [_normalise(v, items, defs) for v in value]
    return value


# What `_normalise` rewrites below a schema: an enum value's case, an object's optional nulls.
_CHANGEABLE = frozenset({"enum", "properties", "items"})


# What each published pattern asks for, in words (decision 1055): "String should match pattern
# '\\.[mM][dD]$'" left the caller to decode a regular expression to learn that `notes.txt` is no
# Markdown document. tests/test_dispatcher.py holds every pattern in spec/ to having words here.
PATTERN_WORDS = {
    r"\.[mM][dD]$": "should name a Markdown document (a path ending in .md)",
    r"\.[pP][dD][fF]$": "should name a PDF ending in .pdf",
    r"\.([pP][nN][gG]|[jJ][pP][eE]?[gG]|[wW][eE][bB][pP]|[gG][iI][fF])$": (
        "should name an image ending in .png, .jpg, .jpeg, .webp or .gif"
    ),
    r"\S": "should hold a character other than whitespace",
    r"^[0-9a-fA-F]{64}$": "should be a SHA-256 as 64 hex digits",
    r"^[0-9a-f]{16}$": "should be 16 lowercase hex digits",
    r"^(frontmatter|[0-9a-z.]+)~[0-9a-f]{16}~[0-9a-f]{16}$": (
        "should be an anchor `logical~selfHash~subtreeHash` as kb_read and kb_search return it"
    ),
    r"^[A-Za-z0-9][A-Za-z0-9_.-]*$": (
        "should start with a letter or digit and hold only letters, digits, `_`, `.` and `-`"
    ),
}


def _pattern_problem(pattern: str) -> str:
    return PATTERN_WORDS.get(pattern) or f"String should match pattern {pattern!r}"


def _item_problem(item: object, schema: dict[str, Any]) -> str | None:
    """What a scalar array item breaks of its published constraints, if anything."""
    if isinstance(item, str):
        if "minLength" in schema and len(item) < schema["minLength"]:
            return f"String should have at least {schema['minLength']} character(s)"
        if "maxLength" in schema and len(item) > schema["maxLength"]:
            return f"String should have at most {schema['maxLength']} characters"
        if "pattern" in schema and not re.search(schema["pattern"], item):
            return _pattern_problem(schema["pattern"])
    elif isinstance(item, int | float) and not isinstance(item, bool):
        if "minimum" in schema and item < schema["minimum"]:
            return f"Input should be greater than or equal to {schema['minimum']}"
        if "maximum" in schema and item > schema["maximum"]:
            return f"Input should be less than or equal to {schema['maximum']}"
    return None


def _kinds(schema: dict[str, Any]) -> set[str]:
    kinds = schema.get("type")
    return {kinds} if isinstance(kinds, str) else set(kinds or ())


def _type_problem(value: object, kinds: set[str]) -> str | None:
    """A JSON boolean where a number is expected, or anything but a boolean where a boolean is
    (decision 288): pydantic's lax mode would read `true` as 1 and `"yes"` or 1 as true."""
    if not kinds or value is None:
        return None
    if isinstance(value, bool):
        if "boolean" in kinds:
            return None
        if "integer" in kinds:
            return "Input should be a valid integer"
        # `number` too (decision 730): an embedding `[true, false]` was stored as the vector (1, 0)
        return "Input should be a valid number" if "number" in kinds else None
    if kinds == {"boolean"} or kinds == {"boolean", "null"}:
        return "Input should be a valid boolean (true or false)"
    return None


def _check_items(value: object, schema: dict[str, Any], defs: dict[str, Any], where: str) -> None:
    """Hold values to what the published schema says and the models do not check: array items to
    their constraints (the generated models keep items plain, decision 287), so `tags: [""]` passed
    the model, and booleans apart from numbers (decision 288)."""
    schema = _resolve(schema, defs)
    problem = _type_problem(value, _kinds(schema)) if where else None
    if problem is not None:
        raise InvalidArgument(f"Invalid arguments: {where}: {problem} (got {shown_value(value)})")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key, sub in value.items():
            if key in props:
                _check_items(sub, props[key], defs, f"{where}.{key}" if where else key)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = _resolve(schema["items"], defs)
        kinds = _kinds(items)
        constrained = not _ITEM_CONSTRAINTS.isdisjoint(items)
        boolean = "boolean" in kinds
        # One pass with the item schema read once, and an item's path built only for a refusal or
        # a nested value: an embedding of 384 numbers took three times the call's own work here.
        for i, item in enumerate(value):
            if not (constrained or boolean or type(item) is bool or isinstance(item, dict | list)):
                continue  # nothing below can refuse it
            problem = (_item_problem(item, items) if constrained else None) or _type_problem(item, kinds)
            if problem is not None:
                raise InvalidArgument(f"Invalid arguments: {where}.{i}: {problem} (got {shown_value(item)})")
            if isinstance(item, dict | list):
                _check_items(item, items, defs, f"{where}.{i}")


_ITEM_CONSTRAINTS = frozenset({"minLength", "maxLength", "pattern", "minimum", "maximum"})


# A malformed value in one of these fields is a path refusal, not an argument error
# (spec/decisions.md): `notes.txt` where a `.md` document is required is INVALID_PATH. Only for a
# tool that lists INVALID_PATH: the chunk tools' `sourcePath` and `pathPrefix` are free-form
# strings, whose malformed values are INVALID_ARGUMENT (decision 1004).
_PATH_FIELDS = {"path", "pathPrefix", "sourcePath", "targetPath", "outputPath"}
_PATH_ERRORS = {"string_pattern_mismatch", "string_too_short", "string_too_long"}


def _is_path_error(exc: ValidationError) -> bool:
    return any(err["loc"] and err["loc"][-1] in _PATH_FIELDS and err["type"] in _PATH_ERRORS for err in exc.errors())


def _siblings(schema: dict[str, Any], loc: Sequence[int | str]) -> list[str]:
    """The property names published at ``loc``'s parent (``loc`` is pydantic's error location)."""
    defs = schema.get("$defs", {})
    node = _resolve(schema, defs)
    for part in loc[:-1]:
        if isinstance(part, int):
            items = node.get("items")
            node = _resolve(items, defs) if isinstance(items, dict) else {}
        else:
            node = _resolve(node.get("properties", {}).get(part, {}), defs)
    return list(node.get("properties", {}))


def _spelling(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


# How long a value sent may be when a refusal shows it (decision 1115): enough to recognise it.
SHOWN_CHARS = 60


def shown_value(value: object, field: str | int | None = None) -> str:
    """``value`` as a refusal names it (decision 1115), trimmed: a string in quotes, cut after
    ``SHOWN_CHARS`` characters, JSON's words for booleans and null, what an object or a list is
    rather than its content. An absolute path in a path field is not repeated: it names folders
    outside the knowledge base, which no message does (decision 9)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if field in _PATH_FIELDS and (value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", value)):
            return "an absolute path"
        return repr(value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "...")
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item(s)"
    return type(value).__name__


# pydantic error types whose message needs no value after it: the field is absent or not ours, or
# the message says the size already ("List should have at least 1 item after validation, not 0")
_NO_VALUE = {"missing", "extra_forbidden", "too_short", "too_long"}


def _got(err: Any) -> str:
    """What was sent, after a problem pydantic reports (decision 1115): `topK: Input should be
    greater than or equal to 1` left an agent that sent a computed value to guess which one."""
    if err["type"] in _NO_VALUE or "input" not in err:
        return ""
    value = err["input"]
    if err["type"] == "string_too_long" and isinstance(value, str):
        return f" (got {len(value)} characters)"
    name = err["loc"][-1] if err["loc"] else None
    return f" (got {shown_value(value, name)})"


def _format_validation(exc: ValidationError, schema: dict[str, Any] | None = None) -> str:
    """pydantic's errors in the published names (decision 855): an unknown field written in another
    case or in snake_case (`topk`, `top_k`) is named with the property it meant (`topK`), and a
    value that should be an object is called a JSON object, not by our generated class's name.
    Each problem ends with the value sent, trimmed (decision 1115)."""
    problems = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
            name = err["loc"][-1] if err["loc"] else None
            if schema is not None and isinstance(name, str):
                meant = [p for p in _siblings(schema, err["loc"]) if _spelling(p) == _spelling(name)]
                if meant:
                    msg += f" (did you mean {meant[0]!r}?)"
        elif err["type"] in ("model_type", "model_attributes_type", "dict_type"):
            msg = "Input should be a JSON object"
        elif err["type"] == "string_pattern_mismatch":
            msg = _pattern_problem(err.get("ctx", {}).get("pattern", ""))
        else:
            msg = err["msg"]
        problems.append(f"{loc}: {msg}{_got(err)}")
    return "Invalid arguments: " + "; ".join(problems)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_values(value: object, where: str) -> None:
    """Refuse, anywhere in the arguments (one walk), values the tools would otherwise take wrongly:
    - a lone surrogate (JSON's ``"\\ud800"`` escape decodes to one): no text can hold it, and
      SQLite's driver failed on it with an internal error (a tag of kb_search through ``call --json``;
      the MCP transports refuse such a message already);
    - NaN and Infinity (decision 731): JSON has none, but the SDK's parser reads `NaN` / `Infinity`
      (Python's json writes them): a metadata value was stored as null, and a metadata filter on one
      matched every chunk without the field."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise InvalidArgument(f"Invalid arguments: {where.lstrip('.') or 'arguments'}: not valid Unicode text")
    elif isinstance(value, float):
        if not math.isfinite(value):
            where = where.lstrip(".") or "arguments"
            raise InvalidArgument(f"Invalid arguments: {where}: not a finite number (JSON has no NaN or Infinity)")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_values(key, where)
            _check_values(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            # the path is built only where it can be needed (an embedding is 384 plain numbers)
            if isinstance(item, str | float | dict | list) and (type(item) is not float or not math.isfinite(item)):
                _check_values(item, f"{where}.{i}")


def _envelope_hint(spec: ToolSpec, arguments: dict[str, Any], schema: dict[str, Any]) -> str:
    """The shape the tool takes, when the refused arguments are its fields in the other envelope
    (decision 851): flat fields sent to a `request` tool, a `request` object sent to a flat one,
    anything sent to the tool that takes nothing. A model reading "request: Field required; query:
    unknown field" often retried the same call; the shape tells it what to send."""
    if spec.envelope == "none":
        return f" {spec.name} takes no arguments: send {{}}." if arguments else ""
    props: dict[str, Any] = schema.get("properties", {})
    if spec.envelope == "request":
        fields = _resolve(props.get("request", {}), schema.get("$defs", {})).get("properties", {})
        sent = [key for key in arguments if key in fields]
        if "request" in arguments or not sent:
            return ""
        shape = ", ".join(f'"{key}": ...' for key in sent)
        return f' {spec.name} takes its arguments inside one `request` object: {{"request": {{{shape}}}}}.'
    inner = arguments.get("request")
    if "request" in props or not isinstance(inner, dict):
        return ""
    # the fields it meant, or none: `{"request": {}}` to kb_list_images was only "request: unknown
    # field", where a `request` tool's habit is the cause (decision 1007)
    shape = ", ".join(f'"{key}": ...' for key in inner if key in props)
    return f" {spec.name} takes its arguments directly, not inside a `request` object: {{{shape}}}."


def validate_arguments(spec: ToolSpec, arguments: object) -> BaseModel | None:
    """The model the tool's handler receives (None for a tool without arguments)."""
    from pydantic import ValidationError

    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArgument("Arguments must be a JSON object.")
    _check_values(arguments, "")
    given: dict[str, Any] = arguments
    schema = spec.input_schema()
    arguments = _normalise(arguments, schema, schema.get("$defs", {}))
    _check_items(arguments, schema, schema.get("$defs", {}), "")
    try:
        # published (camelCase) names only: the models also take their Python names, a second
        # spelling the schemas do not publish and the checks above do not see (decision 855)
        parsed = _model(spec.arguments_model).model_validate(arguments, by_alias=True, by_name=False)
    except ValidationError as exc:
        if "INVALID_PATH" in spec.errors and _is_path_error(exc):
            raise InvalidPath(
                _format_validation(exc, schema).replace("Invalid arguments", "Path not permitted")
            ) from None
        hint = _envelope_hint(spec, given, schema)  # its own sentence after pydantic's list (decision 983)
        raise InvalidArgument(_format_validation(exc, schema) + (f".{hint}" if hint else "")) from None
    if spec.request_model is None:
        return None
    if spec.envelope == "request":
        request: BaseModel | None = getattr(parsed, "request", None)
        # The envelope is optional when every field has a default.
        return _model(spec.request_model)() if request is None else request
    return parsed


def _tool_hint(ws: Workspace, name: str) -> str:
    """The tools an unknown name may have meant (decision 1121): a client that guessed `kb_get` or
    `search` was told only that the name is unknown."""
    offered = [spec.name for spec in available_tools(ws.config.server.toolsets)]
    close = difflib.get_close_matches(str(name), offered, n=3, cutoff=0.5)
    meant = f" Did you mean {', '.join(repr(n) for n in close)}?" if close else ""
    return f"{meant} tools/list names the {len(offered)} tools this server offers."


def _close_documents(ws: Workspace, rel: str) -> list[str]:
    """The indexed documents, still on disk, an agent that sent ``rel`` may have meant (decision 1099)."""
    try:
        indexed = ws.store.document_states()
    except Exception:  # a suggestion never replaces the refusal it decorates
        log.debug("no close paths for %r: the index could not be read", rel, exc_info=True)
        return []
    return [p for p in close_paths(rel, indexed) if (ws.root / p).is_file()]


def invoke(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> ToolOutput:
    """Run tool ``name``; return its structured result or content, or raise :class:`KbError`."""
    spec = BY_NAME.get(name)
    if spec is None or name not in BINDINGS:
        raise InvalidArgument(f"Unknown tool {name!r}.{_tool_hint(ws, name)}")
    if spec.toolset not in ws.config.server.toolsets:
        raise InvalidArgument(
            f"Tool {name!r} belongs to the {spec.toolset!r} tool set, which is not enabled "
            f"(server.toolsets: {list(ws.config.server.toolsets)}). Enable it in the --config file: "
            f"server: {{toolsets: [{', '.join(dict.fromkeys([*ws.config.server.toolsets, spec.toolset]))}]}}."
        )
    try:
        request = validate_arguments(spec, arguments)
        handler = _handler(name)
        result = handler(ws) if request is None else handler(ws, request)
    except NotFound as exc:
        if exc.document is None:
            raise
        raise missing_document(exc.document, _close_documents(ws, exc.document)) from None
    finally:
        # A server's first call starts the catch-up with the files (decision 205), once it is
        # done: the catch-up's walk ran beside it and made it several times slower (decision 644)
        ws.catch_up_once()
    if spec.result_model is None:
        if isinstance(result, ContentResult):
            return result
    elif isinstance(result, _model(spec.result_model)):
        # Constructing the model validated it: the declared outputSchema holds.
        return result.model_dump(mode="json", by_alias=True)
    # mypy checks every binding, so this is a handler that escaped its declared type.
    log.error("%s returned %s instead of %s", name, type(result).__name__, spec.result_model or "ContentResult")
    raise KbError("The server produced an invalid result; see the server log.")
