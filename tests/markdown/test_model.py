"""Fixture-driven hard cases of the element model.

Expected hashes are computed here from the expected span text, independently
of the engine's hashing helpers.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import xxhash

from local_vector_search_mcp.errors import UnsupportedFormat
from local_vector_search_mcp.markdown import ElementKind, document, parse_document, parse_text
from local_vector_search_mcp.markdown.document import clear_cache

FIXTURES = Path(__file__).parent.parent / "fixtures" / "markdown"

FM, H, P, C, LI, T, Q = (
    ElementKind.FRONT_MATTER,
    ElementKind.HEADING,
    ElementKind.PARAGRAPH,
    ElementKind.CODE_BLOCK,
    ElementKind.LIST_ITEM,
    ElementKind.TABLE,
    ElementKind.BLOCK_QUOTE,
)


def xxh(data: str) -> str:
    return xxhash.xxh64(data.encode("utf-8"), seed=0).hexdigest()


def framed(parts: list[str]) -> str:
    buf = struct.pack("<i", len(parts))
    for part in parts:
        raw = part.encode("utf-8")
        buf += struct.pack("<i", len(raw)) + raw
    return xxhash.xxh64(buf, seed=0).hexdigest()


# (pointer, kind, own text or list of own segments)
Expected = list[tuple[str, ElementKind, str | list[str]]]

CASES: dict[str, tuple[Expected, set[str]]] = {
    "basic.md": (
        [
            ("frontmatter", FM, "---\ntitle: Basic\ntags: [a, b]\n---"),
            ("p1", P, "Intro before any heading."),
            ("1", H, "# A"),
            ("1.p1", P, "Alpha para."),
            ("1.1", H, "### X"),  # a skipped level is simply a child
            ("1.1.code1", C, "```py\nprint('x')\n```"),
            ("1.2", H, "## Y"),
            ("1.2.code1", C, "    indented code\n    line two"),
            ("1.2.1", H, "#### Z ####"),
            ("1.2.1.p1", P, "Zed para\nwith two lines."),
            ("2", H, "# B"),
            ("3", H, "Setext Title\n============"),
            ("3.p1", P, "Last para."),
        ],
        set(),
    ),
    "lists.md": (
        [
            ("1", H, "# Lists"),
            ("1.li1", LI, "- one"),
            ("1.li2", LI, ["- two", "\n  two tail"]),
            ("1.li2.li1", LI, "  - two.a\n    lazy two.a"),
            ("1.li2.li2", LI, "  - two.b"),
            ("1.li3", LI, "* star"),  # a new marker starts a new list; the counter runs on
            ("1.li4", LI, "1. first"),
            ("1.li5", LI, "2) second\n   ```\n   - not an item\n   ```"),
            ("1.li6", LI, "- a\ncontinued lazily"),
            ("1.li7", LI, "- "),
            ("1.li7.li1", LI, "- same line"),
            ("1.p11", P, "After lists."),
        ],
        {f"1.p{n}" for n in range(1, 11)} | {"1.code1"},
    ),
    "quotes.md": (
        [
            ("1", H, "# Q"),
            ("1.q1", Q, "> # Inner heading\n> - inner item\n>\n> ```\n> code\n> ```"),
            ("1.q2", Q, "> Single paragraph quote\n> on two lines"),
            ("1.p2", P, "After quotes."),  # q2's paragraph fills its quote: no ordinal
        ],
        {"1.p1", "1.code1"},
    ),
    "tables.md": (
        [
            ("p1", P, "First."),
            (
                "t1",
                T,
                "| Name | Qty | Note |\n|:-----|----:|:----:|\n| a\\|b | 2 | **bold** &amp; `c|d` |\n"
                "| short |\n| x | y | z | extra |",
            ),
            ("p3", P, "Last."),  # historical ordinal kept, p2 (the old table paragraph) reserved
            ("li1", LI, "- item\n\n  | in | list |\n  |----|------|\n  | 1  | 2    |"),
            ("p6", P, "End."),
        ],
        {"p2", "p4", "p5"},
    ),
    "raw.md": ([("1", H, "# Raw"), ("1.p1", P, "Text [ref].")], set()),
    "cjk.md": (
        [
            ("1", H, "# 标题"),
            ("1.p1", P, "中文段落，包含标点。"),
            ("1.li1", LI, "- 项目一"),
            ("1.li1.li1", LI, "  - 子项目"),
            ("1.t1", T, "| 列 | 值 |\n|---|---|\n| 甲 | 乙 |"),
        ],
        {"1.p2", "1.p3", "1.p4"},
    ),
    "crlf.md": (
        [
            ("1", H, "# Title"),
            ("1.p1", P, "Para one."),
            ("1.li1", LI, ["- a", "\r\n  tail"]),
            ("1.li1.li1", LI, "  - b"),
            ("1.li2", LI, "- c"),
            ("1.1", H, "## Sub"),
            ("1.1.p1", P, "End."),
        ],
        {"1.p2", "1.p3", "1.p4", "1.p5"},
    ),
    "cr.md": (
        [
            ("1", H, "# Title"),
            ("1.p1", P, "Para one."),
            ("1.li1", LI, ["- a", "\r  tail"]),
            ("1.li1.li1", LI, "  - b"),
            ("1.li2", LI, "- c"),
            ("1.1", H, "## Sub"),
            ("1.1.p1", P, "End."),
        ],
        {"1.p2", "1.p3", "1.p4", "1.p5"},
    ),
    "bom_frontmatter.md": (
        [
            ("frontmatter", FM, "---\r\ntitle: BOM\r\n---"),
            ("1", H, "# Heading"),
            ("1.p1", P, "Body."),
        ],
        set(),
    ),
    "mixed_eol.md": (
        [("1", H, "# One"), ("1.p1", P, "A."), ("1.p2", P, "B."), ("1.p3", P, "C.")],
        set(),
    ),
    "no_final_eol.md": ([("li1", LI, "- x"), ("li2", LI, "- y")], {"p1", "p2"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_elements(name: str) -> None:
    raw = (FIXTURES / name).read_bytes()
    doc = parse_document(raw)
    expected, reserved = CASES[name]
    assert [(e.pointer, e.kind) for e in doc.elements] == [(p, k) for p, k, _ in expected]
    for element, (_, _, own) in zip(doc.elements, expected, strict=True):
        parts = own if isinstance(own, list) else [own]
        assert element.text == "".join(parts)
        assert element.self_hash == (framed(parts) if len(parts) > 1 else xxh(parts[0]))
    assert doc.reserved == reserved
    assert doc.bom is raw.startswith(b"\xef\xbb\xbf")
    assert doc.text.encode() == raw.removeprefix(b"\xef\xbb\xbf")


def test_heading_subtree_covers_owned_section() -> None:
    doc = parse_document((FIXTURES / "basic.md").read_bytes())
    a, y, b = doc.get("1"), doc.get("1.2"), doc.get("2")
    assert a is not None and y is not None and b is not None
    assert a.subtree_hash == xxh(doc.text[a.start : b.start])
    assert doc.text[y.start : y.section_end] == (
        "## Y\n\n    indented code\n    line two\n\n#### Z ####\n\nZed para\nwith two lines.\n\n"
    )
    last = doc.get("3")
    assert last is not None and last.section_end == len(doc.text)


def test_heading_titles_and_paths() -> None:
    doc = parse_document((FIXTURES / "basic.md").read_bytes())
    z = doc.get("1.2.1")
    assert z is not None and z.title == "Z" and z.level == 4 and z.heading_path == "A > Y > Z"
    setext = doc.get("3")
    assert setext is not None and setext.title == "Setext Title" and setext.level == 1
    p = doc.get("1.2.1.p1")
    assert p is not None and p.heading_path == "A > Y > Z"
    assert doc.elements[1].heading_path is None


def test_list_item_parents_and_subtree() -> None:
    doc = parse_document((FIXTURES / "lists.md").read_bytes())
    two = doc.get("1.li2")
    assert two is not None
    assert [c.pointer for c in doc.children(two)] == ["1.li2.li1", "1.li2.li2"]
    assert doc.text[two.start : two.end] == "- two\n  - two.a\n    lazy two.a\n  - two.b\n\n  two tail"
    assert two.subtree_hash == xxh(doc.text[two.start : two.end])
    leaf = doc.get("1.li1")
    assert leaf is not None and leaf.self_hash == leaf.subtree_hash == xxh("- one")
    child = doc.get("1.li2.li1")
    assert child is not None and child.parent == "1.li2"


def test_changing_a_child_keeps_the_parent_self_hash() -> None:
    before = parse_text("- parent\n  - child\n  - other\n")
    after = parse_text("- parent\n  - CHILD CHANGED\n")
    p0, p1 = before.get("li1"), after.get("li1")
    assert p0 is not None and p1 is not None
    assert p0.self_hash == p1.self_hash
    assert p0.subtree_hash != p1.subtree_hash


def test_headings_inside_containers_open_no_section() -> None:
    doc = parse_text("- # In item\n\n> # In quote\n\n# Real\n\nText.\n")
    assert [e.pointer for e in doc.elements] == ["li1", "q1", "1", "1.p1"]


def test_table_interrupting_paragraph_takes_lowest_unused_ordinal() -> None:
    doc = parse_text("Foo\n| a |\n| - |\n| 1 |\n\nBar\n")
    assert [(e.pointer, e.text) for e in doc.elements] == [
        ("p1", "Foo"),
        ("t1", "| a |\n| - |\n| 1 |"),
        ("p2", "Bar"),
    ]
    assert doc.reserved == frozenset()


def test_bom_without_strip_would_break_front_matter() -> None:
    doc = parse_document(b"\xef\xbb\xbf---\na: 1\n---\n")
    assert doc.bom and doc.elements[0].pointer == "frontmatter"
    assert doc.source_hash == __import__("hashlib").sha256(b"\xef\xbb\xbf---\na: 1\n---\n").hexdigest()


def test_invalid_utf8_is_unsupported() -> None:
    with pytest.raises(UnsupportedFormat):
        parse_document((FIXTURES / "latin1.md").read_bytes())


def test_parse_cache_returns_same_document() -> None:
    clear_cache()
    raw = (FIXTURES / "basic.md").read_bytes()
    assert parse_document(raw) is parse_document(raw)
    assert parse_document(raw + b"\n") is not parse_document(raw)


def test_keep_false_reuses_a_cached_document_and_keeps_no_new_one() -> None:
    """Decision 639: a sweep over many files must not push out the documents an agent has open."""
    clear_cache()
    raw = (FIXTURES / "basic.md").read_bytes()
    held = parse_document(raw)
    assert parse_document(raw, keep=False) is held
    other = raw + b"\nmore\n"
    swept = parse_document(other, keep=False)
    assert parse_document(other, keep=False) is not swept  # parsed again: it was never kept
    assert parse_document(raw) is held


def test_the_cache_holds_a_bounded_amount_of_text_but_always_the_newest_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Decision 1005: 32 documents near the size limit pinned gigabytes (a parsed document weighs
    up to ~90x its text). The cache now also stays under CACHE_CHARS of text in all."""
    monkeypatch.setattr(document, "CACHE_CHARS", 1_000)
    clear_cache()
    small = [parse_document(f"# {i}\n\n{'x' * 300}\n".encode()) for i in range(3)]
    assert all(parse_document(d.text.encode()) is d for d in small)  # 3 x ~310 characters fit
    big = parse_document(b"# Big\n\n" + b"y" * 5_000 + b"\n")
    assert parse_document(big.text.encode()) is big  # over the budget alone, and still kept
    assert all(parse_document(d.text.encode()) is not d for d in small)  # evicted for it
    assert document._cached_chars == sum(len(d.text) for d in document._cache.values())


def test_html_blocks_and_definitions_are_not_addressable() -> None:
    doc = parse_document((FIXTURES / "raw.md").read_bytes())
    heading = doc.get("1")
    assert heading is not None and heading.section_end == len(doc.text)
    assert "<div>" in doc.text[heading.start : heading.section_end]
