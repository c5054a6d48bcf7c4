"""Property tests of the element model over generated realistic Markdown."""

from __future__ import annotations

import re
import struct

import pytest
import xxhash
from hypothesis import assume, example, given
from hypothesis import strategies as st
from md_strategies import RAW_LINES, documents, markdown_doc
from reference_builder import historical_paragraph_ranges

from local_vector_search_mcp.errors import Conflict
from local_vector_search_mcp.markdown import (
    Anchor,
    Document,
    ElementKind,
    numbering,
    outline,
    parse_anchor,
    parse_document,
    parse_text,
    read_slice,
    resolve,
    scan,
)
from local_vector_search_mcp.markdown.incremental import build_state
from local_vector_search_mcp.markdown.source import LineIndex


def xxh(text: str) -> str:
    return xxhash.xxh64(text.encode("utf-8", "surrogatepass"), seed=0).hexdigest()


def expected_self_hash(parts: list[str]) -> str:
    if len(parts) <= 1:
        return xxh(parts[0] if parts else "")
    buf = struct.pack("<i", len(parts))
    for part in parts:
        data = part.encode("utf-8")
        buf += struct.pack("<i", len(data)) + data
    return xxhash.xxh64(buf, seed=0).hexdigest()


# -- (a) pointer round trip -------------------------------------------------

N = st.integers(1, 10_000).map(str)
leaf = st.one_of(
    st.tuples(st.sampled_from(["p", "code", "q", "t"]), N).map("".join),
    st.lists(N, min_size=1, max_size=4).map(lambda ns: ".".join("li" + n for n in ns)),
)
section = st.lists(N, min_size=1, max_size=4).map(".".join)
logical = st.one_of(
    st.just("frontmatter"),
    section,
    st.tuples(section, leaf).map(".".join),
    leaf,
)
hex16 = st.text("0123456789abcdefABCDEF", min_size=16, max_size=16)


@given(logical, st.one_of(st.none(), hex16), st.one_of(st.none(), hex16))
def test_anchor_round_trip(pointer: str, self_hash: str | None, subtree: str | None) -> None:
    parts = [pointer] + ([self_hash] if self_hash else []) + ([subtree] if self_hash and subtree else [])
    value = "~".join(parts)
    anchor = parse_anchor(value)
    assert anchor.logical == pointer
    assert anchor.format() == value.lower() if self_hash else anchor.format() == pointer
    assert parse_anchor(anchor.format()) == anchor


# -- (b) hashes match the spans they claim ------------------------------------


def check_spans(doc: Document) -> None:
    text = doc.text
    by_pointer = {e.pointer: e for e in doc.elements}
    assert len(by_pointer) == len(doc.elements), "pointers are unique"
    assert not (by_pointer.keys() & doc.reserved), "reserved pointers are never published"
    for e in doc.elements:
        assert 0 <= e.start <= e.end <= len(text)
        parts = [text[s:t] for s, t in e.segments]
        for s, t in e.segments:
            assert e.start <= s < t <= e.end
        assert e.text == "".join(parts)
        assert e.self_hash == expected_self_hash(parts)
        assert re.fullmatch(r"[0-9a-f]{16}", e.self_hash)
        if e.kind is ElementKind.HEADING:
            assert e.section_end is not None
            assert e.subtree_hash == xxh(text[e.start : e.section_end])
        elif e.kind is ElementKind.LIST_ITEM and any(c.parent == e.pointer for c in doc.elements):
            assert e.subtree_hash == xxh(text[e.start : e.end])
        else:
            assert e.subtree_hash == e.self_hash
        if e.kind is not ElementKind.LIST_ITEM:
            assert e.segments == ((e.start, e.end),)
        # Spans never end in a line break.
        assert not text[e.start : e.end].endswith(("\n", "\r"))


@given(documents)
def test_self_hash_is_hash_of_claimed_span(text: str) -> None:
    check_spans(parse_text(text))


@given(documents, st.booleans())
def test_bytes_round_trip_with_bom(text: str, bom: bool) -> None:
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    doc = parse_document(raw)
    assert doc.bom is bom
    assert doc.text == text
    crs, lfs = text.count("\r"), text.count("\n")
    assert doc.eol == ("\r\n" if "\r\n" in text else "\r" if crs > lfs else "\n")
    if text.startswith(("---\ntitle", "---\r\ntitle", "---\rtitle")):
        assert doc.elements and doc.elements[0].pointer == "frontmatter"
    check_spans(doc)


# -- (c) totality -----------------------------------------------------------


@given(st.text())
def test_parsing_is_total(text: str) -> None:
    doc = parse_text(text)
    check_spans(doc)
    read_slice(doc, "a.md")
    outline(doc, "a.md")


@given(st.text(alphabet=st.sampled_from(list("-*+>|#`~ \t\n\r1.)[]:=<!abc中\u2028\x00\ufeff")), max_size=80))
def test_parsing_is_total_on_markdown_alphabet(text: str) -> None:
    doc = parse_text(text)
    check_spans(doc)
    page = read_slice(doc, "a.md", max_elements=2, max_bytes=10)
    while page.next_pointer:
        page = read_slice(doc, "a.md", page.next_pointer, max_elements=2, max_bytes=10)


# -- (d) edits elsewhere keep hashes; the resolver relocates -----------------


@given(markdown_doc(), st.data())
def test_edit_outside_element_relocates(text: str, data: st.DataObject) -> None:
    doc = parse_text(text)
    targets = [e for e in doc.elements if e.kind is not ElementKind.FRONT_MATTER]
    assume(targets)
    target = data.draw(st.sampled_from(targets))
    same = [e for e in doc.elements if e.kind is target.kind and e.self_hash == target.self_hash]
    assume(len(same) == 1)
    # Insert a paragraph before an earlier top-level element that starts a line.
    befores = [
        e
        for e in doc.elements
        if e.start < target.start
        and e.parent is None
        and e.kind is not ElementKind.FRONT_MATTER
        and doc.line_start(e.start) == e.start
        and e.end < target.start
        and not text[e.start : e.start + 1].isspace()
    ]
    if befores and data.draw(st.booleans()):
        at = data.draw(st.sampled_from(befores)).start
        edited = text[:at] + "Inserted paragraph.\n\n" + text[at:]
    else:
        edited = text + ("\n\n" if not text.endswith("\n") else "\n") + "Appended paragraph.\n"
    new = parse_text(edited)
    anchor = Anchor(target.pointer, target.self_hash, target.subtree_hash)
    try:
        found = resolve(new, anchor, "a.md")
    except Conflict as exc:
        # Allowed: a new duplicate makes it ambiguous, or the old ordinal became
        # reserved (§3.4 item 6: reserved positions are never relocated).
        assert exc.reason == "ambiguous" or (exc.reason == "reserved_pointer" and target.pointer in new.reserved), (
            exc.message
        )
        return
    assert found is not None
    assert found.kind is target.kind
    assert found.self_hash == target.self_hash
    assert found.text == target.text


# -- (e) elements plus raw regions reconstruct the source --------------------


@given(markdown_doc())
def test_spans_and_raw_regions_reconstruct_source(text: str) -> None:
    doc = parse_text(text)
    outer = [e for e in doc.elements if e.parent is None]
    pieces: list[str] = []
    pos = 0
    for e in outer:
        assert e.start >= pos, "outermost spans do not overlap"
        gap = text[pos : e.start]
        for line in gap.splitlines():
            assert not line.strip() or line.strip() in RAW_LINES, f"addressable text left out: {line!r}"
        pieces.append(gap)
        pieces.append(text[e.start : e.end])
        pos = e.end
    tail = text[pos:]
    for line in tail.splitlines():
        assert not line.strip() or line.strip() in RAW_LINES
    pieces.append(tail)
    assert "".join(pieces) == text
    # A list item = own segments + child subtrees; only the cut line breaks are uncovered.
    for e in doc.elements:
        if e.kind is not ElementKind.LIST_ITEM:
            continue
        covered = list(e.segments) + [(c.start, c.end) for c in doc.children(e)]
        covered.sort()
        pos = e.start
        for s, t in covered:
            assert s >= pos
            assert text[pos:s] in ("", "\n", "\r", "\r\n", "\n\n", "\r\n\r\n")
            pos = t
        assert pos == e.end


# -- (f) paging visits every element once ------------------------------------


@given(documents, st.integers(1, 6), st.integers(1, 400))
def test_paging_visits_every_element_once(text: str, max_elements: int, max_bytes: int) -> None:
    doc = parse_text(text)
    seen: list[str] = []
    markdown: list[str] = []
    page = read_slice(doc, "a.md", None, max_elements, max_bytes)
    assert page.pointer == "document"
    while True:
        seen.extend(e.anchor for e in page.elements)
        markdown.append(page.markdown)
        assert len(page.elements) <= max_elements
        if page.next_pointer is None:
            break
        page = read_slice(doc, "a.md", page.next_pointer, max_elements, max_bytes)
        assert page.pointer == page.elements[0].anchor
    assert seen == [e.anchor for e in doc.elements if e.end > e.start]
    assert "".join(markdown) == text


# -- the chunked historical parse equals a whole-document one ----------------


@given(markdown_doc().filter(lambda t: "|" in t).flatmap(lambda t: st.just(t)))
def test_chunked_historical_parse_matches_full(text: str) -> None:
    """Production re-parses only the chunks holding a table without the table
    extension (``numbering.historical_ranges``); the contract words the rule as
    one table-less parse of the whole document (the oracle's)."""
    _, _, state = build_state(text, LineIndex.build(text))
    expected = historical_paragraph_ranges(text)
    assert state.history == (expected if state.has_tables else None)


@pytest.mark.parametrize("text", ["", "\n", "\r\n", "   ", "\ufeff", "---", "|a|\n|-|"])
def test_degenerate_documents(text: str) -> None:
    doc = parse_text(text)
    check_spans(doc)
    page = read_slice(doc, "a.md")
    assert "".join([page.markdown]) == text or page.next_pointer is not None


# Table lines with and without a leading pipe, indented, interrupting paragraphs, lines a
# table-less parse reads otherwise (reference definitions, setext underlines, list and quote
# starts), blank and whitespace-only lines (decision 277's shortcut and its refusals).
_TABLE_MIX = [
    "",
    "  ",
    "\u00a0",
    "text",
    "more text",
    "[ref] text",
    "[r]: /u",
    "[a",
    "| a ]:",
    "| a | b |",
    "|---|---|",
    "|-|",
    "| 1 | 2 |",
    "   | x |",
    "    | x |",
    "\t| x |",
    "a | b",
    "--- | ---",
    ":-- | --:",
    "1 | 2",
    "--",
    "- a | b",
    "# a | b",
    "a |",
    "---",
    "===",
    "# h",
    "- item",
    "> q",
    "```",
    "<div>",
]


@given(st.lists(st.sampled_from(_TABLE_MIX), max_size=14).map("\n".join))
@example("[a\n| a ]:\n|-|")  # a reference definition ending inside the table: no paragraph at all
@example("| a | b |\n|---|---|\n| 1 | 2 |\n\u00a0\ntext")  # the table ends at a line paragraphs read on
@example("| a | b |\n|---|---|\n| 1 | 2 |\n    | x |\n\ntext")  # an indented line ends the table only
@example("text\n| a | b |\n|---|---|\n\n| c |\n|---|\n")
@example("| a |\n|---|\n===")  # a table row, but a setext underline without tables
@example("text\n| a |\n|---|\n| b |\n===\n")
@example("a |\n---\n")  # the delimiter row is a setext underline without tables
@example("# a | b\n--|--")  # the header row is an ATX heading
@example("text\n- a | b\n--|--")  # the header row interrupts the paragraph as a list
@example("text\n1. a | b\n--|--")
@example("a | b\n--|--\n--\nc | d")  # a body row that underlines
@example("a | b\n--|--\n1 | 2\n<span>x</span> | y\n* not | a list\n")
def test_tables_taken_as_paragraphs_without_a_parse_match_the_parse(text: str) -> None:
    """A chunk that is a table (or a paragraph and the table interrupting it) gets its
    historical paragraph without a table-less parse (numbering._table_as_paragraph):
    history and re-parsed regions equal the parse's, and the oracle's ranges."""
    _, _, state = build_state(text, LineIndex.build(text))
    original = numbering._table_as_paragraph
    try:
        numbering._table_as_paragraph = lambda *args: None
        _, _, parsed = build_state(text, LineIndex.build(text))
    finally:
        numbering._table_as_paragraph = original
    assert (state.history, state.regions) == (parsed.history, parsed.regions)
    assert state.history == (historical_paragraph_ranges(text) if state.has_tables else None)


@given(st.lists(st.sampled_from([*_TABLE_MIX, "", "", "text"]), max_size=30).map("\n".join))
@example("text\n\n| a |\n|---|\n\ntext\n\n| b |\n|---|\n- item\n\n| c |\n|---|")
@example("- item\n\n| a |\n|---|\n\n```\n| b |\n|---|\n```\n\n| c |\n|---|")
def test_a_full_pass_walks_to_each_table_as_the_chunk_walk_does(text: str) -> None:
    """``historical_ranges`` over a whole document looks for chunk cuts only around tables
    (decision 711); any ``can_stop`` makes it walk chunk by chunk as before. Both give the same
    history, re-parsed regions and stop."""
    lines = LineIndex.build(text)
    tokens = scan.PARSER_HEAD.parse(text, {})
    first_lines, records = scan.scan_blocks(tokens, text, lines, 0)
    stop = len(first_lines) + 1
    shortcut = numbering.historical_ranges(text, lines, first_lines, records, 0, stop)
    walked = numbering.historical_ranges(text, lines, first_lines, records, 0, stop, lambda block: False)
    assert shortcut == walked
