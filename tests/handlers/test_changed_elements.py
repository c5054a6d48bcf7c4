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


def _patch(ws: Workspace, path: str, kind: str, pointer: str, markdown: str | None = None) -> Any:
    """One kb_patch operation, as an agent sends it."""
    operation = {"kind": kind, "pointer": pointer, **({} if markdown is None else {"markdown": markdown})}
    return invoke(ws, "kb_patch", {"request": {"path": path, "operations": [operation]}})


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
    _patch(ws, "n.md", "replace_element", third, "Done.")
    before = doc.read_bytes()
    for kind, markdown in (("delete", None), ("replace_element", "Other.")):
        with pytest.raises(Conflict):
            _patch(ws, "n.md", kind, third, markdown)
        assert doc.read_bytes() == before
    _patch(ws, "n.md", "delete", first)
    text = doc.read_text("utf-8")
    assert "See also" not in text and text.endswith("Middle.\n\nDone.\n")


def test_a_pointer_shifted_by_an_unrelated_edit_is_still_followed(ws: Workspace) -> None:
    """The promise the relocation keeps (contract §3.4): an edit above never blocks it."""
    doc = ws.root / "s.md"
    doc.write_text("# S\n\nOne.\n\nTwo.\n\nThree.\n", encoding="utf-8")
    first, _, third = _pointers(ws, "s.md", "paragraph")
    _patch(ws, "s.md", "insert_before", first, "Zero.")
    _patch(ws, "s.md", "replace_element", first, "Uno.")
    _patch(ws, "s.md", "replace_element", third, "Tres.")
    assert doc.read_text("utf-8") == "# S\n\nZero.\n\nUno.\n\nTwo.\n\nTres.\n"


def test_one_read_dedupe_deletes_a_copy_then_edits_the_one_kept(ws: Workspace) -> None:
    """Review of 993: kb_patch returns no new pointers, so an agent edits from one read. Removing
    the first of two identical paragraphs and then fixing the second was refused when any hash
    that lost an instance was noted; only the removed one's place is noted now."""
    doc = ws.root / "d.md"
    doc.write_text("# D\n\nExample.\n\nA.\n\nExample.\n\nB.\n", encoding="utf-8")
    p1, _, p3, _ = _pointers(ws, "d.md", "paragraph")
    _patch(ws, "d.md", "delete", p1)
    _patch(ws, "d.md", "replace_element", p3, "Fixed.")
    assert doc.read_text("utf-8").endswith("A.\n\nFixed.\n\nB.\n")


def test_a_stale_edit_planned_while_the_edit_is_written_sees_its_note(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of 993: the note was taken after the write returned, outside the file's edit lock, so
    another session's stale edit planned in between was still relocated to the twin."""
    import threading

    from local_vector_search_mcp import writer

    doc = ws.root / "n.md"
    doc.write_text("# N\n\nSee also the guide.\n\nMiddle.\n\nSee also the guide.\n", encoding="utf-8")
    _, _, third = _pointers(ws, "n.md", "paragraph")
    real_commit = writer.commit
    outcome: list[object] = []

    def stale_delete() -> None:
        try:
            _patch(ws, "n.md", "delete", third)
            outcome.append("accepted")
        except Conflict:
            outcome.append("conflict")

    other = threading.Thread(target=stale_delete)

    def commit_while_another_session_plans(*args: Any) -> str:
        if not other.is_alive() and not outcome:
            other.start()  # agent A plans its stale edit while agent B's edit is being written
            other.join(0.3)
        return real_commit(*args)

    monkeypatch.setattr(writer, "commit", commit_while_another_session_plans)
    _patch(ws, "n.md", "replace_element", third, "Done.")
    other.join(10)
    assert outcome == ["conflict"] and doc.read_text("utf-8").count("See also") == 1


def test_only_changed_elements_whose_hash_lost_an_instance_are_noted() -> None:
    changed = ChangedElements()
    before = parse_document(b"# T\n\nA.\n\nB.\n\nA.\n")
    changed.record("t.md", before, parse_document(b"# T\n\nNew.\n\nA.\n\nB.\n\nA.\n"))  # a shift
    assert changed.of("t.md") == frozenset()
    changed.record("t.md", before, parse_document(b"# T\n\nA.\n\nB.\n\nC.\n"))  # the second A changed
    ((kind, _, pointer),) = changed.of("t.md")
    assert (kind, pointer) == (ElementKind.PARAGRAPH, "1.p3")
    assert changed.of("other.md") == frozenset()


def test_the_notes_are_bounded_in_all(monkeypatch: pytest.MonkeyPatch) -> None:
    from local_vector_search_mcp.handlers import changed_elements

    monkeypatch.setattr(changed_elements, "MAX_KEYS", 3)
    changed = ChangedElements()
    before = parse_document(b"# T\n\nA.\n\nA.\n")
    for i in range(5):
        changed.record(f"d{i}.md", before, parse_document(b"# T\n\nA.\n\nC.\n"))
    assert [changed.of(f"d{i}.md") != frozenset() for i in range(5)] == [False, False, True, True, True]


def test_the_changed_span_is_found_by_blocks() -> None:
    from local_vector_search_mcp.handlers.changed_elements import changed_span

    old = "x" * 10_000 + "middle" + "y" * 9_000
    assert changed_span(old, old.replace("middle", "MID")) == (10_000, 10_006)
    assert changed_span("abc", "abc") == (3, 3)
    assert changed_span("abXc", "abc") == (2, 3)
