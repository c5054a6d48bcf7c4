"""The incremental re-parse after an edit equals a full parse of the new text.

The oracle is the reference builder (``reference_builder.build_elements``, one walk over a
whole-document token stream); ``incremental.build_state`` (the cold path) and
``incremental.reparse`` (the kb_patch path) must both agree with it exactly:
pointers, kinds, spans, segments, text, hashes, heading paths, section ends,
parents, titles, the reserved set and the line index.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from md_strategies import block, documents, markdown_doc, paragraph
from reference_builder import build_elements, line_spans

from local_vector_search_mcp.markdown.document import clear_cache, parse_edited, parse_text
from local_vector_search_mcp.markdown.incremental import BlockState, build_state, reparse
from local_vector_search_mcp.markdown.model import Document
from local_vector_search_mcp.markdown.source import LineIndex

_LINE_START = re.compile(r"(?:^|(?<=\n)|(?<=\r)(?!\n))")

fragments = st.one_of(
    block,
    paragraph(),
    markdown_doc(),
    st.sampled_from(
        ["", "\n", "\n\n", "# H\n", "## Sub\n\n", "- x\n", "  - y\n", "```\n", "~~~", "> ", "    code\n", "---\n"]
    ),
    st.sampled_from(["| a | b |\n|---|---|\n| 1 | 2 |", "<div>\n", "<!--", "-->", "1. one\n2. two", "text\n==="]),
)


def _expected(text: str) -> tuple[object, ...]:
    result = build_elements(text)
    return result.elements, result.reserved, line_spans(text)


def _check(old: Document, new_text: str, a: int, b: int) -> Document:
    state = old._state
    assert isinstance(state, BlockState)
    got = reparse(old, state, new_text, a, b)
    exp_elements, exp_reserved, exp_lines = _expected(new_text)
    if got is not None:  # None: nothing to reuse (an empty document), a full parse follows
        elements, reserved, lines, _ = got
        assert elements == exp_elements
        assert reserved == exp_reserved
        assert list(zip(lines.starts, lines.ends, strict=True)) == exp_lines
        assert lines.length == len(new_text)
    clear_cache()
    doc = parse_edited(old, new_text, a, b)
    assert doc.elements == exp_elements and doc.reserved == exp_reserved
    return doc


@st.composite
def edits(draw: st.DrawFn, text: str) -> tuple[int, int, str]:
    starts = [m.start() for m in _LINE_START.finditer(text)]
    a = draw(st.sampled_from(starts)) if draw(st.booleans()) and starts else draw(st.integers(0, len(text)))
    span = draw(st.sampled_from([0, 0, 1, 3, 10, 40, 200, len(text)]))
    b = min(len(text), a + span)
    if draw(st.booleans()):  # end on a line start too
        later = [s for s in starts if s >= a]
        if later:
            b = draw(st.sampled_from(later))
    frag = draw(fragments)
    eol = draw(st.sampled_from(["", "\n", "\n\n", "\r\n"]))
    where = draw(st.integers(0, 2))
    frag = eol + frag if where == 0 else frag + eol if where == 1 else frag
    return a, b, frag


@given(documents)
def test_cold_build_equals_reference(text: str) -> None:
    elements, reserved, _ = build_state(text, LineIndex.build(text))
    exp_elements, exp_reserved, _ = _expected(text)
    assert elements == exp_elements
    assert reserved == exp_reserved


@given(documents, st.data())
def test_incremental_equals_full_parse(text: str, data: st.DataObject) -> None:
    doc = parse_text(text)
    for _ in range(data.draw(st.integers(1, 3))):  # chained edits reuse the re-parsed state
        a, b, frag = data.draw(edits(doc.text))
        new_text = doc.text[:a] + frag + doc.text[b:]
        doc = _check(doc, new_text, a, b)


@given(st.lists(block, min_size=3, max_size=25).map("\n\n".join), st.data())
def test_incremental_on_longer_documents(text: str, data: st.DataObject) -> None:
    doc = parse_text(text)
    a, b, frag = data.draw(edits(text))
    _check(doc, text[:a] + frag + text[b:], a, b)
