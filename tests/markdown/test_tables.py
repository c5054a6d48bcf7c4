from __future__ import annotations

import pytest

from local_vector_search_mcp.markdown import (
    ProjectedRow,
    cell_display_text,
    parse_text,
    table_projection,
    table_source,
)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain", "plain"),
        ("**bold** _em_", "bold em"),
        ("`co|de`", "co|de"),
        ("a\\|b", "a|b"),
        ("&amp; &lt;x&gt;", "& <x>"),
        ("[link](http://x) ![alt](i.png)", "link alt"),
        ("\\*lit\\*", "*lit*"),
        ("", ""),
    ],
)
def test_cell_display_text(raw: str, shown: str) -> None:
    assert cell_display_text(raw) == shown


def test_cell_spans_and_pipes() -> None:
    text = "Intro.\n\n a | b \n---|:--\n|1|2|\r\n3\n"
    doc = parse_text(text)
    table = doc.get("t1")
    assert table is not None
    source = table_source(doc, table)
    assert not source.header.leading_pipe and not source.header.trailing_pipe
    assert [doc.text[c.start : c.end] for c in source.header.cells] == ["a", "b"]
    assert source.alignments == ("none", "left")
    first = source.rows[0]
    assert first.leading_pipe and first.trailing_pipe and first.eol == "\r\n"
    assert [c.raw for c in first.cells] == ["1", "2"]
    projection = table_projection(doc, table)
    assert projection.rows[1] == ProjectedRow(index=1, cells=("3", ""))
    assert projection.editable is True


def test_table_in_list_is_not_an_element() -> None:
    doc = parse_text("- item\n\n  | a |\n  |---|\n  | 1 |\n")
    assert [e.pointer for e in doc.elements] == ["li1"]
