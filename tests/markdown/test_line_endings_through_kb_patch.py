"""kb_patch on files with any line endings, a BOM or none, a final newline or none (task H113).

The byte promise over the real tool (the dispatcher the MCP server calls, a real workspace): an
edit of one element leaves every other byte identical (the BOM, each line's own CR, LF or CRLF,
the missing final newline), new line breaks take the document's EOL, and a refused edit leaves
the file byte-identical. The pure planner has the same property over its splices
(``test_patch_properties.py``); this one reads the file the tool wrote, with spans taken from
the document as it was, so a character changed outside every splice is caught too.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st
from kb_fakes import make_workspace
from md_strategies import documents, heading, markdown_doc, paragraph, table, with_eol

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.markdown import Document, Element, ElementKind, parse_document, parse_text
from local_vector_search_mcp.markdown.document import clear_cache, parse_edited
from local_vector_search_mcp.markdown.patch import Op, plan_edits, plan_patch, seal_joins
from local_vector_search_mcp.workspace import Workspace

BOM = b"\xef\xbb\xbf"
BREAKS = re.compile(r"\r\n|\r|\n")
BLANK = " \t\r\n"
DOCUMENTED = {"CONFLICT", "INVALID_ARGUMENT"}
FRAGMENTS = [
    "New kqtext.",
    "Two\nlines kqtwo",
    "- kqitem",
    "# Kqhead",
    "```\nkqcode\n```",
    "| a |\n|---|\n| 1 |",
    "> kqq",
]
_workspace: list[Workspace] = []


def workspace() -> Workspace:
    """One real workspace for every example (a fixture would be reset per test, not per example)."""
    if not _workspace:
        root = Path(tempfile.mkdtemp(prefix="lvsm-eol-"))
        _workspace.append(make_workspace(root, knowledge_base__allow_writes=True))
    return _workspace[0]


def patch(ws: Workspace, raw: bytes, op: dict[str, str]) -> tuple[bytes, KbError | None]:
    path = ws.root / "d.md"
    path.write_bytes(raw)
    try:
        invoke(ws, "kb_patch", {"request": {"path": "d.md", "operations": [op]}})
    except KbError as exc:
        return path.read_bytes(), exc
    return path.read_bytes(), None


def owned_end(doc: Document, target: Element, kind: str) -> int:
    """The end of what ``kind`` may change: the section of a heading, the nested items of a list item."""
    if kind in ("replace_section", "delete_section") and target.section_end is not None:
        return target.section_end
    end = target.end
    if target.kind is ElementKind.LIST_ITEM:
        inside = target.pointer + "."
        end = max([end, *(e.end for e in doc.elements if e.pointer.startswith(inside))])
    return end


def widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The span with the blank lines and line breaks around it, which edits may add or remove."""
    while start > 0 and text[start - 1] in BLANK:
        start -= 1
    while end < len(text) and text[end] in BLANK:
        end += 1
    return start, end


def body(raw: bytes) -> str:
    return (raw[3:] if raw.startswith(BOM) else raw).decode("utf-8")


@given(
    documents,
    st.booleans(),
    st.booleans(),
    st.sampled_from(
        [
            "replace_element",
            "insert_before",
            "insert_after",
            "delete",
            "replace_subtree",
            "replace_section",
            "delete_section",
        ]
    ),
    st.sampled_from(FRAGMENTS),
    st.booleans(),
    st.data(),
)
def test_an_edit_of_one_element_leaves_every_other_byte_identical(
    text: str, bom: bool, drop_final: bool, kind: str, fragment: str, crlf_fragment: bool, data: st.DataObject
) -> None:
    if drop_final:
        text = text.rstrip("\r\n")
    raw = (BOM if bom else b"") + text.encode("utf-8")
    doc = parse_document(raw)
    assume(doc.elements)
    target = data.draw(st.sampled_from(doc.elements))
    op = {"kind": kind, "pointer": target.anchor}
    if kind not in ("delete", "delete_section"):
        op["markdown"] = fragment.replace("\n", "\r\n") if crlf_fragment else fragment
    new, refused = patch(workspace(), raw, op)
    if refused is not None:
        assert refused.code in DOCUMENTED, refused
        assert new == raw  # a refused edit leaves the file byte-identical
        return
    assert new.startswith(BOM) == bom
    new_text = body(new)
    start, end = widen(text, target.start, owned_end(doc, target, kind))
    assert new_text[:start] == text[:start]
    assert new_text[len(new_text) - (len(text) - end) :] == text[end:]
    # New line breaks take the document's EOL; the breaks of the replaced region may stay.
    changed = new_text[start : len(new_text) - (len(text) - end)]
    assert set(BREAKS.findall(changed)) <= set(BREAKS.findall(text[start:end])) | {doc.eol}
    if end < len(text):  # the end of the file was not touched: a missing final newline stays missing
        assert new_text[-1:] == text[-1:]
    reread = invoke(workspace(), "kb_read", {"request": {"path": "d.md", "maxElements": 100, "maxBytes": 100000}})
    assert reread["sourceHash"] == parse_document(new).source_hash


def test_a_list_item_after_a_line_ending_in_a_lone_cr_can_be_deleted() -> None:
    """Decision 920. The item's line ending goes with it, so the CR ending the line above meets
    the LF of the blank line below; 528 turns that CR into the document's EOL (no new CRLF of two
    breaks), but did it outside the splice, so the validator's offset map was one character off
    after it and refused: "the edit would change the untouched list item '1.li2'"."""
    raw = b"# T\n\n- one\n  - nested\r- two\r\n\n1. first\r2. second\n"
    doc = parse_document(raw)
    two = doc.get("1.li2")
    assert two is not None and two.text == "- two"
    new, refused = patch(workspace(), raw, {"kind": "delete", "pointer": two.anchor})
    assert refused is None, refused
    assert new == b"# T\n\n- one\n  - nested\r\n\n1. first\r2. second\n"  # the file had a CRLF: its EOL


def test_sealed_splices_describe_the_new_text() -> None:
    """The widened splice is what the incremental re-parse reads: its document equals a full parse."""
    text = "- a\r- b\n\n1. c\n"
    doc = parse_text(text)
    b = doc.get("li2")
    assert b is not None
    edits = seal_joins(text, plan_edits(doc, "d.md", [Op("delete", b.anchor)]))
    assert [(e.start, e.end, e.text) for e in edits] == [(3, 8, "\n")]  # the CR taken in, the LF file's EOL
    new_text = "- a\n\n1. c\n"
    clear_cache()
    incremental = parse_edited(doc, new_text, edits[0].start, edits[0].end)
    clear_cache()
    assert incremental.elements == parse_text(new_text).elements


@given(markdown_doc(), st.data())
def test_line_endings_never_decide_whether_an_edit_is_accepted(text: str, data: st.DataObject) -> None:
    """An edit the LF file takes, the same file with CRLF, CR or mixed line endings takes too
    (each with its own anchor for the same element). Before 920 a delete whose join met a lone CR
    was refused in the mixed file alone."""
    lf = parse_text(text)
    assume(lf.elements)
    target = data.draw(st.sampled_from(lf.elements))
    kind = data.draw(st.sampled_from(["replace_element", "insert_before", "insert_after", "delete", "delete_section"]))
    fragment = None if kind.startswith("delete") else data.draw(st.sampled_from(FRAGMENTS))
    variant = data.draw(with_eol(text))
    if variant == text:
        return
    other = parse_text(variant)
    # A CR ending one line and an LF ending the blank line after it are one CRLF: the variant
    # then has one blank line fewer, and another structure (a paragraph may become a heading).
    assume([(e.pointer, e.kind) for e in other.elements] == [(e.pointer, e.kind) for e in lf.elements])
    twin = other.get(target.pointer)
    assert twin is not None
    outcomes = []
    for doc, element in ((lf, target), (other, twin)):
        try:
            plan_patch(doc, "d.md", [Op(kind, element.anchor, fragment)])
            outcomes.append(None)
        except KbError as exc:
            outcomes.append(exc.code)
    assert outcomes[1] is None or outcomes[0] is not None, (outcomes, variant)


TABLE_ACTIONS = [
    {"action": "update_cells", "updates": [{"rowIndex": 0, "columnIndex": 0, "value": "kqcell"}]},
    {"action": "insert_row", "values": ["kqrow"]},
    {"action": "insert_row", "values": ["kqrow"], "beforeRowIndex": 0},
    {"action": "delete_row", "rowIndex": 0},
    {"action": "insert_column", "name": "kqcol", "defaultValue": "v"},
    {"action": "delete_column", "columnIndex": 0},
    {"action": "rename_column", "columnIndex": 0, "newName": "kqname"},
    {"action": "set_alignment", "columnIndex": 0, "alignment": "center"},
]


@given(
    st.lists(st.one_of(table(), paragraph(), heading()), min_size=1, max_size=4).map("\n\n".join),
    st.booleans(),
    st.booleans(),
    st.sampled_from(TABLE_ACTIONS),
    st.data(),
)
def test_a_table_edit_leaves_every_byte_outside_the_table_identical(
    text: str, bom: bool, final: bool, action: dict[str, object], data: st.DataObject
) -> None:
    """kb_edit_table's half of the promise, on tables among other blocks with any line endings."""
    text = data.draw(with_eol(text + ("\n" if final else "")))
    raw = (BOM if bom else b"") + text.encode("utf-8")
    doc = parse_document(raw)
    tables = [e for e in doc.elements if e.kind is ElementKind.TABLE]
    assume(tables)
    target = data.draw(st.sampled_from(tables))
    ws = workspace()
    path = ws.root / "t.md"
    path.write_bytes(raw)
    try:
        invoke(ws, "kb_edit_table", {"path": "t.md", "pointer": target.anchor, **action})
    except KbError as exc:
        assert exc.code in DOCUMENTED, exc
        assert path.read_bytes() == raw
        return
    new = path.read_bytes()
    assert new.startswith(BOM) == bom
    new_text = body(new)
    start, end = widen(text, target.start, target.end)  # a row goes with its line break
    assert new_text[:start] == text[:start]
    assert new_text[len(new_text) - (len(text) - end) :] == text[end:]
    changed = new_text[start : len(new_text) - (len(text) - end)]
    assert set(BREAKS.findall(changed)) <= set(BREAKS.findall(text[start:end])) | {doc.eol}
    assert new_text.endswith(("\r", "\n")) == text.endswith(("\r", "\n"))  # no final newline appears
