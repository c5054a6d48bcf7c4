from __future__ import annotations

import pytest

from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.markdown import (
    ElementKind,
    containing_section,
    is_valid_pointer,
    parent_item,
    parse_anchor,
    pointer_kind,
)

H = "0123456789abcdef"


@pytest.mark.parametrize(
    "value",
    ["document", "frontmatter", "1", "1.2", "2.1.3", "p1", "code2", "li3", "q1", "t1", "1.2.li3.li1", "li1.li2"],
)
def test_valid_pointers(value: str) -> None:
    assert is_valid_pointer(value)


@pytest.mark.parametrize(
    "value", ["li1.p1", "q1.li1", "p0", "01", "../x", "", " ", "1.", ".1", "1.p1.p2", "li1.2", "1 ", "P1"]
)
def test_invalid_pointers(value: str) -> None:
    assert not is_valid_pointer(value)
    with pytest.raises(InvalidArgument, match="Invalid semantic pointer: "):
        parse_anchor(value)


def test_a_search_results_full_pointer_is_refused_with_what_to_send() -> None:
    """Decision 1095: kb_search's ``fullPointer`` (``<path>::<pointer>``) passed as a pointer keeps
    the contract's message and is told which path and pointer to send; other invalid pointers keep
    the message alone (the conformance suite compares it whole)."""
    hashed = "docs/a b.md::1.p2~0123456789abcdef~fedcba9876543210"
    with pytest.raises(InvalidArgument) as caught:
        parse_anchor(hashed)
    assert str(caught.value) == (
        f"Invalid semantic pointer: {hashed} (a search result's fullPointer, `<path>::<pointer>`, is no "
        "pointer: send path `docs/a b.md` and pointer `1.p2~0123456789abcdef~fedcba9876543210`)"
    )
    with pytest.raises(InvalidArgument, match=r"send path `a.md` and pointer `li1`\)$"):
        parse_anchor("a.md::li1")
    for value in ("a.md::p0", "::1.p1", "x::", "a.md:1.p1"):  # no pointer after `::`, no path, one colon
        with pytest.raises(InvalidArgument) as caught:
            parse_anchor(value)
        assert str(caught.value) == f"Invalid semantic pointer: {value}"


@pytest.mark.parametrize(
    ("pointer", "kind"),
    [
        ("1.2", ElementKind.HEADING),
        ("1.p2", ElementKind.PARAGRAPH),
        ("code1", ElementKind.CODE_BLOCK),
        ("1.li2.li1", ElementKind.LIST_ITEM),
        ("q1", ElementKind.BLOCK_QUOTE),
        ("3.t1", ElementKind.TABLE),
        ("frontmatter", ElementKind.FRONT_MATTER),
        ("document", None),
    ],
)
def test_pointer_kind(pointer: str, kind: ElementKind | None) -> None:
    assert pointer_kind(pointer) == kind


def test_sections_and_parents() -> None:
    assert containing_section("1.2.li3.li1") == "1.2"
    assert containing_section("li1.li2") is None
    assert parent_item("1.li2.li1") == "1.li2"
    assert parent_item("1.li2") is None
    assert parent_item("li1") is None


def test_anchor_forms() -> None:
    plain = parse_anchor("1.p2")
    assert plain.self_hash is None and not plain.hashed
    v1 = parse_anchor(f"1.p2~{H.upper()}")
    assert v1.self_hash == H and v1.subtree_hash is None
    v2 = parse_anchor(f"1.p2~{H}~{H}")
    assert v2.format() == f"1.p2~{H}~{H}"


@pytest.mark.parametrize(
    "value",
    [f"1~{H}~{H}~{H}", "1~abc", f"~{H}", f" ~{H}", f"1~{H}~zzzzzzzzzzzzzzzz", "1~", f"1~{H}0"],
)
def test_bad_fingerprints(value: str) -> None:
    with pytest.raises(InvalidArgument, match=r"^Invalid semantic pointer fingerprint\.$"):
        parse_anchor(value)


def test_document_never_hashed() -> None:
    assert parse_anchor("document").is_document
    with pytest.raises(InvalidArgument, match="Invalid semantic pointer: document~"):
        parse_anchor(f"document~{H}")
