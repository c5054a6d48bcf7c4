"""Our block parsers try only the rules a line can start (``markdown/dispatch.py``, decision 252):
their tokens must equal stock markdown-it's, token for token, whatever the lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_block.table import escapedSplit
from markdown_it.token import Token
from shared_data import CORPORA

from local_vector_search_mcp.markdown import dispatch, numbering, scan
from local_vector_search_mcp.markdown.dispatch import line_tables
from local_vector_search_mcp.markdown.footnotes import footnote_definitions
from local_vector_search_mcp.markdown.front_matter import front_matter_plugin
from local_vector_search_mcp.markdown.source import decode_markdown


def _stock(md: MarkdownIt) -> MarkdownIt:
    return md.disable(["inline", "text_join"])


def _lean(tokens: list[Token]) -> list[Token]:
    """Stock tokens less a table's row and cell structure, which our parsers do not keep
    (decision 279): every other token, cells' inline tokens included, must be equal."""
    return [t for t in tokens if t.type not in dispatch.TABLE_STRUCTURE]


# The element model's parsers make a top-level footnote definition a paragraph too (decision 1194):
# their stock counterparts are given the same reference rule, the shortcuts are what is compared.
PAIRS = [
    (scan.PARSER_HEAD, _stock(footnote_definitions(MarkdownIt("commonmark").enable("table").use(front_matter_plugin)))),
    (scan.PARSER_REST, _stock(footnote_definitions(MarkdownIt("commonmark").enable("table")))),
    (numbering._HISTORICAL_HEAD, _stock(MarkdownIt("commonmark").use(front_matter_plugin))),
    (numbering._HISTORICAL, _stock(MarkdownIt("commonmark"))),
]

# Line starts of every block rule, their near misses, and indentation that makes or breaks them,
# so that blocks interrupt paragraphs, lists, quotes and each other without blank lines.
_LINES = [
    "",
    "text here",
    "a | b",
    "| a | b |",
    "|---|---|",
    "--- | ---",
    ":-: | -:",
    "- item",
    "-",
    "-- not",
    "* star",
    "+ plus",
    "1. one",
    "2) two",
    "12345678901. long",
    "> quote",
    ">",
    ">> deep",
    "# h1",
    "###### h6",
    "####### seven",
    "#nospace",
    "```",
    "```py",
    "~~~",
    "``",
    "---",
    "***",
    "___",
    "===",
    "<div>",
    "</div>",
    "<!-- c -->",
    "<span>inline</span>",
    "[ref]: /url",
    "[^1]: https://example.org",
    '  [^note]: Smith2020 "t"',
    "[ref]:",
    "[not a ref",
    "    code",
    "\tcode",
    "  - nested",
    "   > q",
    " 1. x",
    "\t- tab item",
    "  | a |",
    "| a \\| b | c\\\\|",
    "\u00a0nbsp",
    "\\# escaped",
    "cr\rbreak",
    "crlf\r\n",
    "nul\0here",
]
_TEXT = st.lists(st.sampled_from(_LINES), max_size=25).map("\n".join)


@given(_TEXT, st.booleans())
def test_tokens_equal_stock_markdown_it(text: str, trailing_newline: bool) -> None:
    text += "\n" if trailing_newline else ""
    for ours, stock in PAIRS:
        ours_env: dict[str, object] = {}
        stock_env: dict[str, object] = {}
        assert ours.parse(text, ours_env) == _lean(stock.parse(text, stock_env))
        assert ours_env == stock_env


FILES = sorted(CORPORA.rglob("*.md")) if CORPORA.is_dir() else []


@pytest.mark.skipif(not FILES, reason="corpora folder missing")
@pytest.mark.slow
def test_tokens_equal_stock_markdown_it_over_the_corpora() -> None:
    for path in FILES:
        text, _ = decode_markdown(path.read_bytes())
        for ours, stock in PAIRS[:1]:
            assert ours.parse(text, {}) == _lean(stock.parse(text, {})), path


@given(st.text(alphabet=" \t\na#>|-\u00a0x", max_size=40))
def test_line_tables_equal_markdown_its(src: str) -> None:
    stock = StateBlock(src, scan.PARSER_HEAD, {}, [])
    assert line_tables(src) == (stock.bMarks, stock.eMarks, stock.tShift, stock.sCount)


@given(st.text(alphabet="ab|\\ ", max_size=60))
def test_table_cells_split_as_markdown_it_splits_them(row: str) -> None:
    assert scan._escaped_split(row) == escapedSplit(row)


def test_our_block_states_make_tokens_without_the_dataclass_constructor() -> None:
    """Decision 275: with markdown-it-py's current Token fields the fast state is in use (a
    release that changes them falls back to the stock state, and this test says so)."""
    assert dispatch.FAST_PUSH
    state = dispatch._state("# a\n\ntext\n", scan.PARSER_HEAD, {}, [])
    assert type(state) is dispatch._FastState
    token = state.push("paragraph_open", "p", 1)
    assert token == Token("paragraph_open", "p", 1, block=True) and state.level == 1
    assert state.push("paragraph_close", "p", -1).level == 0


def test_our_tables_keep_cells_but_not_rows() -> None:
    """Decision 279: the lean table rule is in use, and what it keeps is stock markdown-it's."""
    text = "| a | b |\n|:--|--:|\n| [x](y.md) | 2 |\n\npara\n"
    stock = _stock(MarkdownIt("commonmark").enable("table").use(front_matter_plugin)).parse(text)
    ours = scan.PARSER_HEAD.parse(text)
    assert [t.type for t in ours] == [
        "table_open", "inline", "inline", "inline", "inline", "table_close",
        "paragraph_open", "inline", "paragraph_close",
    ]  # fmt: skip
    assert ours == _lean(stock) and len(stock) > len(ours)
    assert [t.level for t in ours if t.type == "inline"][:4] == [4, 4, 4, 4]


@given(
    st.text(alphabet=" \t\n>ax", max_size=40),
    st.integers(0, 12),
    st.integers(0, 12),
    st.booleans(),
    st.lists(st.integers(0, 12), max_size=3),
)
def test_line_slices_equal_markdown_its(src: str, begin: int, end: int, keep: bool, moved: list[int]) -> None:
    """_FastState.getLines takes one slice of the source where markdown-it joins one per line
    (indent 0, lines adjacent); a line whose start a blockquote moved keeps the stock way."""
    ours = dispatch._state(src, scan.PARSER_HEAD, {}, [])
    stock = StateBlock(src, scan.PARSER_HEAD, {}, [])
    for line in moved:  # what a blockquote does to its lines: the start moves past the marker
        if line < len(stock.bMarks) and stock.bMarks[line] < stock.eMarks[line]:
            stock.bMarks[line] += 1
            ours.bMarks[line] += 1
    end = min(end, len(stock.bMarks) - 1)
    for indent in (0, 1, 4):
        assert _outcome(ours.getLines, begin, end, indent, keep) == _outcome(stock.getLines, begin, end, indent, keep)


def _outcome(get_lines: Callable[[int, int, int, bool], str], *args: Any) -> object:
    """What ``get_lines`` returns, or the type of what it raises: markdown-it's own method reads
    past the source on some states made up here (a moved start on a last line without a break,
    with ``keepLastLF``), which a real parse never builds; ours must then fail the same way."""
    try:
        return get_lines(*args)
    except IndexError as exc:
        return type(exc)
