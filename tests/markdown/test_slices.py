from __future__ import annotations

from pathlib import Path

import pytest

from local_vector_search_mcp.errors import Conflict, InvalidArgument
from local_vector_search_mcp.markdown import (
    OutlineNode,
    ProjectedColumn,
    ProjectedRow,
    TableProjection,
    outline,
    parse_document,
    parse_text,
    read_slice,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "markdown"


def test_root_read_starts_at_offset_zero() -> None:
    doc = parse_document((FIXTURES / "basic.md").read_bytes())
    page = read_slice(doc, "basic.md", max_elements=2)
    assert page.pointer == "document"
    assert page.markdown == "---\ntitle: Basic\ntags: [a, b]\n---\n\nIntro before any heading.\n\n"
    assert [e.anchor.split("~")[0] for e in page.elements] == ["frontmatter", "p1"]
    assert page.elements[1] is doc.elements[1]
    assert page.next_pointer == doc.elements[2].anchor
    assert page.source_hash == doc.source_hash
    assert page.table is None
    assert page.path == "basic.md"


def test_non_root_read_starts_at_line_start() -> None:
    doc = parse_text("- a\n  - b\n- c\n")
    page = read_slice(doc, "a.md", "li1.li1", max_elements=1)
    assert page.markdown == "  - b\n"
    assert page.pointer == doc.elements[1].anchor


def test_first_element_always_included_and_bytes_counted_in_utf8() -> None:
    doc = parse_text("中文中文\n\nB.\n")
    page = read_slice(doc, "a.md", max_bytes=1)
    assert [e.text for e in page.elements] == ["中文中文"]
    page = read_slice(doc, "a.md", max_bytes=len("中文中文\n\n".encode()))
    assert len(page.elements) == 1
    page = read_slice(doc, "a.md", max_bytes=len("中文中文\n\nB.\n".encode()))
    assert len(page.elements) == 2 and page.next_pointer is None


def test_clamping() -> None:
    doc = parse_text("\n\n".join(f"P{n}." for n in range(150)))
    assert len(read_slice(doc, "a.md", max_elements=0).elements) == 1
    assert len(read_slice(doc, "a.md", max_elements=1000, max_bytes=10**9).elements) == 100
    assert len(read_slice(doc, "a.md").elements) == 20


def test_empty_document() -> None:
    doc = parse_text("\n\n<!-- only a comment -->\n")
    page = read_slice(doc, "a.md")
    assert page.pointer == "document" and page.elements == () and page.next_pointer is None
    assert page.markdown == doc.text


def test_pointer_errors() -> None:
    doc = parse_text("# A\n\nText.\n")
    with pytest.raises(InvalidArgument, match="Invalid semantic pointer"):
        read_slice(doc, "a.md", "  ")
    with pytest.raises(InvalidArgument, match=r"1\.p7"):
        read_slice(doc, "a.md", "1.p7")
    with pytest.raises(Conflict):
        read_slice(doc, "a.md", "1.p1~0000000000000000~0000000000000000")


def test_stale_subtree_hash_does_not_block_reading() -> None:
    doc = parse_text("# A\n\nText.\n")
    heading = doc.get("1")
    assert heading is not None
    page = read_slice(doc, "a.md", f"1~{heading.self_hash}~0000000000000000")
    assert page.pointer == heading.anchor


def test_table_projection_on_addressed_table() -> None:
    doc = parse_document((FIXTURES / "tables.md").read_bytes())
    table = doc.get("t1")
    assert table is not None
    page = read_slice(doc, "tables.md", table.anchor, max_bytes=1)
    assert page.table == TableProjection(
        columns=(
            ProjectedColumn(index=0, name="Name", alignment="left"),
            ProjectedColumn(index=1, name="Qty", alignment="right"),
            ProjectedColumn(index=2, name="Note", alignment="center"),
        ),
        rows=(
            ProjectedRow(index=0, cells=("a|b", "2", "bold & `c")),
            ProjectedRow(index=1, cells=("short", "", "")),
            ProjectedRow(index=2, cells=("x", "y", "z")),
        ),
        editable=False,
    )
    assert page.table.column_count == 3 and page.table.row_count == 3
    assert read_slice(doc, "tables.md").table is None


def test_outline_tree() -> None:
    doc = parse_document((FIXTURES / "basic.md").read_bytes())
    tree = outline(doc, "basic.md")
    assert tree.path == "basic.md" and tree.source_hash == doc.source_hash

    def shape(nodes: list[OutlineNode]) -> list[object]:
        return [(n.title, n.level, shape(n.children)) for n in nodes]

    assert shape(tree.headings) == [
        ("A", 1, [("X", 3, []), ("Y", 2, [("Z", 4, [])])]),
        ("B", 1, []),
        ("Setext Title", 1, []),
    ]
    first = doc.get("1")
    assert first is not None and tree.headings[0].pointer == first.anchor
