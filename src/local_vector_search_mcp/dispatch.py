"""Invoke a tool by name: validate the arguments with the generated models,
call the hand-written handler, check the result against the declared schema.

Shared by the MCP server and the ``call`` CLI so both behave identically.
"""

from __future__ import annotations

import importlib
import logging
from functools import cache
from typing import Any

from lvsm_contract.registry import BY_NAME, ToolSpec
from .errors import InvalidArgument, InvalidPath, KbError
from .handlers import HANDLERS
from .workspace import Workspace

__all__ = ["available_tools", "invoke", "missing_handlers"]

log = logging.getLogger(__name__)


def available_tools() -> list[ToolSpec]:
    """Spec'd tools that have a handler, in spec order: the ones the server lists."""
    return [spec for name, spec in BY_NAME.items() if name in HANDLERS]


def missing_handlers() -> list[str]:
    return [name for name in BY_NAME if name not in HANDLERS]


@cache
def _models() -> Any:
    # Imported on first call, not at start-up: building ~100 pydantic classes costs time.
    return importlib.import_module("lvsm_contract.models")


@cache
def _handler(name: str) -> Any:
    module_name, _, function = HANDLERS[name].partition(":")
    module = importlib.import_module(f"local_vector_search_mcp.handlers.{module_name}")
    return getattr(module, function)


def _fold_enums(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """Accept enum values in any case (``Hybrid`` -> ``hybrid``), as the contract does."""
    while "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    if isinstance(value, str) and "enum" in schema:
        for option in schema["enum"]:
            if isinstance(option, str) and option.lower() == value.lower():
                return option
        return value
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _fold_enums(v, props[k], defs) if k in props else v for k, v in value.items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_fold_enums(v, schema["items"], defs) for v in value]
    return value


# A malformed value in one of these fields is a path refusal, not an argument error
# (spec/decisions.md): `notes.txt` where a `.md` document is required is INVALID_PATH.
_PATH_FIELDS = {"path", "pathPrefix", "sourcePath", "targetPath", "outputPath"}
_PATH_ERRORS = {"string_pattern_mismatch", "string_too_short", "string_too_long"}


def _is_path_error(exc: Any) -> bool:
    return any(err["loc"] and err["loc"][-1] in _PATH_FIELDS and err["type"] in _PATH_ERRORS for err in exc.errors())


def _format_validation(exc: Any) -> str:
    problems = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        problems.append(f"{loc}: {msg}")
    return "Invalid arguments: " + "; ".join(problems)


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any] | None) -> Any:
    from pydantic import ValidationError

    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArgument("Arguments must be a JSON object.")
    schema = spec.input_schema()
    arguments = _fold_enums(arguments, schema, schema.get("$defs", {}))
    model = getattr(_models(), spec.arguments_model)
    try:
        parsed = model.model_validate(arguments)
    except ValidationError as exc:
        if _is_path_error(exc):
            raise InvalidPath(_format_validation(exc).replace("Invalid arguments", "Path not permitted")) from None
        raise InvalidArgument(_format_validation(exc)) from None
    if spec.envelope == "request":
        request = parsed.request
        if request is None:  # optional envelope: every field has a default
            request = getattr(_models(), f"{spec.arguments_model[: -len('Arguments')]}Request")()
        return request
    return parsed


def invoke(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Run tool ``name``; return its structured result or content, or raise :class:`KbError`."""
    spec = BY_NAME.get(name)
    if spec is None or name not in HANDLERS:
        raise InvalidArgument(f"Unknown tool {name!r}.")
    request = validate_arguments(spec, arguments)
    handler = _handler(name)
    result = handler(ws) if spec.envelope == "none" else handler(ws, request)
    if hasattr(result, "model_dump"):
        result = result.model_dump(mode="json", by_alias=True)
    if spec.result_model:
        # The declared outputSchema is a promise: a handler bug must not reach the client silently.
        from pydantic import ValidationError

        try:
            getattr(_models(), spec.result_model).model_validate(result)
        except ValidationError as exc:
            log.error("%s produced a result that does not match its schema: %s", name, exc)
            raise KbError("The server produced an invalid result; see the server log.") from None
    return dict(result)
