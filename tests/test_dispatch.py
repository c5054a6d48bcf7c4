"""dispatch.py: what the dispatcher makes of arguments before a handler sees them."""

from __future__ import annotations

from typing import Any

import pytest
from lvsm_contract.registry import BY_NAME

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.errors import InvalidArgument

# A valid value for every required property the cases below need.
REQUIRED: dict[str, dict[str, Any]] = {
    "kb_read": {"path": "a.md"},
    "kb_search": {"query": "x"},
    "kb_create_pdf_book": {"path": "a.md"},
    "kb_move": {"sourcePath": "a.md", "targetPath": "b.md", "expectedSourceHash": "0" * 64},
    "kb_move_image": {"sourcePath": "a.png", "targetPath": "b.png"},
    "kb_save_image": {"data": "iVBORw0KGgo="},
    "get_chunk": {"id": "md:a.md#0"},
}


def _optional_properties(tool: str) -> list[str]:
    spec = BY_NAME[tool]
    schema = spec.input_schema()
    defs = schema.get("$defs", {})
    if spec.envelope == "request":
        schema = defs[schema["properties"]["request"]["$ref"].rsplit("/", 1)[-1]]
    required = set(schema.get("required", []))
    return [name for name in schema.get("properties", {}) if name not in required]


def _arguments(tool: str, fields: dict[str, Any]) -> dict[str, Any]:
    request = {**REQUIRED.get(tool, {}), **fields}
    return {"request": request} if BY_NAME[tool].envelope == "request" else request


TOOLS = ["kb_reindex", "kb_search", "kb_read", "kb_list_files", "kb_create_pdf_book", "kb_list_images"]
TOOLS += ["kb_links", "kb_move", "kb_move_image", "kb_save_image", "get_chunk", "list_chunks"]
CASES = [
    (tool, name)
    for tool in TOOLS
    for name in _optional_properties(tool)
    if not (tool == "kb_save_image" and name == "data")
]


@pytest.mark.parametrize(("tool", "name"), CASES, ids=[f"{t}.{n}" for t, n in CASES])
def test_an_explicit_null_for_an_optional_argument_means_omitted(tool: str, name: str) -> None:
    """Decision 280: clients that spell "absent" as ``null`` (strict-mode function calling sends
    every property) get the default, on every optional property, whether or not it has one."""
    spec = BY_NAME[tool]
    with_null = dispatch.validate_arguments(spec, _arguments(tool, {name: None}))
    omitted = dispatch.validate_arguments(spec, _arguments(tool, {}))
    assert with_null == omitted


def test_null_stays_an_error_for_a_required_argument() -> None:
    with pytest.raises(InvalidArgument, match="query"):
        dispatch.validate_arguments(BY_NAME["kb_search"], {"request": {"query": None}})
    with pytest.raises(InvalidArgument, match="request"):
        dispatch.validate_arguments(BY_NAME["kb_read"], {"request": None})


def test_a_meaningful_null_is_kept() -> None:
    """A metadata filter value may be null (equality with null): it is not dropped."""
    spec = BY_NAME["search_knowledge"]
    parsed = dispatch.validate_arguments(spec, {"query": "x", "filter": {"metadata": {"status": None}}})
    assert parsed is not None
    assert parsed.filter is not None and parsed.filter.metadata == {"status": None}  # type: ignore[attr-defined]


def test_null_inside_array_items_means_omitted_too() -> None:
    spec = BY_NAME["kb_edit_table"]
    update = {"rowIndex": 0, "column": "a", "value": "v"}
    base = {"path": "a.md", "pointer": "t1~0000000000000000", "action": "update_cells"}
    with_null = dispatch.validate_arguments(spec, {**base, "updates": [{**update, "valueFormat": None}]})
    omitted = dispatch.validate_arguments(spec, {**base, "updates": [update]})
    assert with_null == omitted


def test_every_tool_declares_invalid_argument() -> None:
    """A malformed call (a missing, unknown or ill-typed property) is INVALID_ARGUMENT on every
    tool, kb_status included, so each one's error list says so (decision 286)."""
    for name, spec in BY_NAME.items():
        assert "INVALID_ARGUMENT" in spec.errors, name
