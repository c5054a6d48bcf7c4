"""A stale pointer is never relocated to a twin of the element an edit changed (decision 993)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kb_fakes import make_workspace

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import Conflict
from local_vector_search_mcp.handlers.changed_elements import ChangedElements
from local_vector_search_mcp.markdown import ElementKind, parse_document
from local_vector_search_mcp.workspace import Workspace

TABLE = "| id | name |\n| --- | --- |\n| 1 | Jake |\n"


@pytest.fixture
def ws(tmp_path: Path) -> Any:
    workspace = make_workspace(tmp_path, knowledge_base__allow_writes=True)
    yield workspace
    workspace.close()


def _pointers(ws: Workspace, path: str, kind: str) -> list[str]:
    read = invoke(ws, "kb_read", {"request": {"path": path}})
    return [e["pointer"] for e in read["elements"] if e["kind"] == kind]


def test_a_stale_table_edit_never_lands_on_the_identical_table(ws: Workspace) -> None:
    """Two identical tables; agent B edits the second, then agent A's delete_row with the pointer
    it read before lands on the first, untouched one (its hash is now the only one left)."""
    doc = ws.root / "twins.md"
    doc.write_text(f"# Source\n\n{TABLE}\n# Result\n\n{TABLE}", encoding="utf-8")
    first, second = _pointers(ws, "twins.md", "table")
    invoke(
        ws,
        "kb_edit_table",
        {
            "path": "twins.md",
            "pointer": second,
            "action": "update_cells",
            "updates": [{"rowIndex": 0, "columnIndex": 1, "value": "B"}],
        },
    )
    before = doc.read_bytes()
    with pytest.raises(Conflict) as refused:
        invoke(ws, "kb_edit_table", {"path": "twins.md", "pointer": second, "action": "delete_row", "rowIndex": 0})
    assert refused.value.reason == "self_hash_mismatch"
    assert doc.read_bytes() == before
    # the first table's own pointer still edits it
    invoke(ws, "kb_edit_table", {"path": "twins.md", "pointer": first, "action": "delete_row", "rowIndex": 0})
    assert doc.read_text("utf-8").count("Jake") == 0 and doc.read_text("utf-8").count("| 1 | B |") == 1


def test_a_stale_patch_never_lands_on_the_identical_paragraph(ws: Workspace) -> None:
    doc = ws.root / "n.md"
    doc.write_text("# N\n\nSee also the guide.\n\nMiddle.\n\nSee also the guide.\n", encoding="utf-8")
    first, _, third = _pointers(ws, "n.md", "paragraph")
    invoke(
        ws,
        "kb_patch",
        {
            "request": {
                "path": "n.md",
                "operations": [{"kind": "replace_element", "pointer": third, "markdown": "Done."}],
            }
        },
    )
    before = doc.read_bytes()
    for kind, markdown in (("delete", None), ("replace_element", "Other.")):
        with pytest.raises(Conflict):
            invoke(
                ws,
                "kb_patch",
                {"request": {"path": "n.md", "operations": [{"kind": kind, "pointer": third, "markdown": markdown}]}},
            )
        assert doc.read_bytes() == before
    invoke(ws, "kb_patch", {"request": {"path": "n.md", "operations": [{"kind": "delete", "pointer": first}]}})
    text = doc.read_text("utf-8")
    assert "See also" not in text and text.endswith("Middle.\n\nDone.\n")


def test_a_pointer_shifted_by_an_unrelated_edit_is_still_followed(ws: Workspace) -> None:
    """The promise the relocation keeps (contract §3.4): an edit above never blocks it."""
    doc = ws.root / "s.md"
    doc.write_text("# S\n\nOne.\n\nTwo.\n\nThree.\n", encoding="utf-8")
    first, _, third = _pointers(ws, "s.md", "paragraph")
    invoke(
        ws,
        "kb_patch",
        {"request": {"path": "s.md", "operations": [{"kind": "insert_before", "pointer": first, "markdown": "Zero."}]}},
    )
    invoke(
        ws,
        "kb_patch",
        {
            "request": {
                "path": "s.md",
                "operations": [{"kind": "replace_element", "pointer": first, "markdown": "Uno."}],
            }
        },
    )
    invoke(
        ws,
        "kb_patch",
        {
            "request": {
                "path": "s.md",
                "operations": [{"kind": "replace_element", "pointer": third, "markdown": "Tres."}],
            }
        },
    )
    assert doc.read_text("utf-8") == "# S\n\nZero.\n\nUno.\n\nTwo.\n\nTres.\n"


def test_only_hashes_that_lost_an_instance_are_recorded() -> None:
    changed = ChangedElements()
    before = parse_document(b"# T\n\nA.\n\nB.\n\nA.\n")
    shifted = parse_document(b"# T\n\nNew.\n\nA.\n\nB.\n\nA.\n")
    changed.record("t.md", before, shifted)
    assert changed.of("t.md") == frozenset()
    edited = parse_document(b"# T\n\nA.\n\nB.\n\nC.\n")
    changed.record("t.md", before, edited)
    (kind, _), *rest = changed.of("t.md")
    assert kind is ElementKind.PARAGRAPH and rest == []
    assert changed.of("other.md") == frozenset()
