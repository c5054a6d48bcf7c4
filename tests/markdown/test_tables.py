from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from local_vector_search_mcp.markdown import (
    ProjectedRow,
    cell_display_text,
    parse_text,
    table_projection,
    table_source,
)
from local_vector_search_mcp.markdown import tables as tables_module


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


# Letters and digits enough to spell entities (`&amp;`, `&#35;`, `&#x41;`) and autolinks (`<a:b>`).
_SPELLED = ["&amp;", "&#35;", "x &lt; y", "<a:b>", "<a>", "x <b>y</b>", "\\*x\\*", "a\\_b", "a\x00b", "a\rb", "~x~"]
_CELL_CHARACTERS = list("abmpltgqx0123456789 \t\u00a0é中#$%+-:=@^{}()'\"/.,;?|\\`*_[]!<>&~\r\n\x00")


@settings(max_examples=5000, deadline=None)
@given(st.text(alphabet=st.sampled_from(_CELL_CHARACTERS), max_size=12) | st.sampled_from(_SPELLED))
def test_cell_display_text_skips_the_parse_only_where_the_parse_changes_nothing(raw: str) -> None:
    """Decision 704: a cell without inline syntax is its own display text, without a parse; every
    other cell is parsed as before. The parse is the judge of both."""
    from local_vector_search_mcp.markdown.tables import _MD_INLINE, _inline_text

    unescaped = raw.replace("\\|", "|")
    parsed = "".join(_inline_text(t.children) for t in _MD_INLINE.parseInline(unescaped)).strip()
    assert cell_display_text(raw) == parsed


def test_a_table_read_again_parses_no_cell_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kb_read of a table and a kb_edit_table of it each parsed every cell with markup anew (the
    projection, the edit's grid, the check of the result): a third of the edit's CPU on the bench's
    largest tables (decision 955). The display text of a cell's text is kept: the second
    projection of the same table parses nothing, and gives what a fresh parse gives."""
    rows = "\n".join(f"| **r{i}** | `c{i}` & more | plain {i} |" for i in range(20))
    doc = parse_text("| *A* | B | C |\n|---|---|---|\n" + rows + "\n")
    table = next(e for e in doc.elements if e.kind.value == "table")
    parsed: list[str] = []
    real = tables_module._MD_INLINE.parseInline
    monkeypatch.setattr(tables_module._MD_INLINE, "parseInline", lambda src, *a: parsed.append(src) or real(src, *a))
    tables_module._parsed_display_text.cache_clear()
    first = table_projection(doc, table)
    assert len(parsed) == 41  # the header's *A*, then two marked-up cells per row
    second = table_projection(doc, table)
    assert len(parsed) == 41 and second == first
    assert [c.name for c in first.columns] == ["A", "B", "C"]
    assert first.rows[3].cells == ("r3", "c3 & more", "plain 3")
