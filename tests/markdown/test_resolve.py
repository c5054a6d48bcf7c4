from __future__ import annotations

import pytest

from local_vector_search_mcp.errors import Conflict, ConflictReason, InvalidArgument
from local_vector_search_mcp.markdown import (
    Anchor,
    MutationScope,
    parse_anchor,
    parse_text,
    resolve,
    resolve_for_mutation,
    resolve_pointer,
)

DOC = "# One\n\nA.\n\nB.\n\n- x\n  - y\n"


def anchor_of(text: str, pointer: str) -> Anchor:
    element = parse_text(text).get(pointer)
    assert element is not None
    return parse_anchor(element.anchor)


def test_direct_match() -> None:
    doc = parse_text(DOC)
    element = resolve(doc, anchor_of(DOC, "1.p2"), "a.md")
    assert element is not None and element.pointer == "1.p2"


def test_direct_match_wins_over_duplicates() -> None:
    text = "Same.\n\nSame.\n"
    element = resolve(parse_text(text), anchor_of(text, "p2"), "a.md")
    assert element is not None and element.pointer == "p2"


def test_relocation_after_insert_above() -> None:
    anchor = anchor_of(DOC, "1.p2")
    moved = parse_text("# One\n\nNew.\n\nA.\n\nB.\n")
    element = resolve(moved, anchor, "a.md")
    assert element is not None and element.pointer == "1.p3" and element.text == "B."


def test_self_hash_mismatch() -> None:
    with pytest.raises(Conflict) as info:
        resolve(parse_text("# One\n\nA.\n\nB changed.\n"), anchor_of(DOC, "1.p2"), "a.md")
    assert info.value.reason is ConflictReason.SELF_HASH_MISMATCH


def test_target_not_found() -> None:
    with pytest.raises(Conflict) as info:
        resolve(parse_text("# One\n\nA.\n"), anchor_of(DOC, "1.p2"), "a.md")
    assert info.value.reason is ConflictReason.TARGET_NOT_FOUND


def test_ambiguous() -> None:
    with pytest.raises(Conflict) as info:
        resolve(parse_text("# One\n\nB.\n\nX.\n\nB.\n\nB.\n"), anchor_of(DOC, "1.p2"), "a.md")
    assert info.value.reason is ConflictReason.AMBIGUOUS


def test_reserved_pointer_is_conflict_not_relocation() -> None:
    # An old paragraph anchor whose ordinal is now swallowed by a list.
    anchor = anchor_of("A.\n\nB.\n", "p2")
    doc = parse_text("A.\n\n- B.\n\nB.\n")
    assert "p2" in doc.reserved
    with pytest.raises(Conflict) as info:
        resolve(doc, anchor, "a.md")
    assert info.value.reason is ConflictReason.RESERVED_POINTER


@pytest.mark.parametrize(
    "above",
    ["- item\n", "| a |\n| --- |\n| 1 |\n", "> quoted\n>\n> twice\n", "- item\n\n  more\n"],
    ids=["list", "table", "quote", "loose-list"],
)
def test_an_ordinal_taken_by_a_container_placed_above_relocates(above: str) -> None:
    # Decision 490: a list, table or quote inserted above a paragraph takes its old ordinal
    # (reserved); the paragraph itself did not change and is followed to its new position.
    anchor = anchor_of("# S\n\nIntro.\n\nNext.\n", "1.p1")
    doc = parse_text(f"# S\n\n{above}\nIntro.\n\nNext.\n")
    assert "1.p1" in doc.reserved
    element = resolve(doc, anchor, "a.md")
    assert element is not None and element.text == "Intro." and element.pointer != "1.p1"


def test_unhashed_pointer_not_found_mentions_pointer_and_path() -> None:
    with pytest.raises(InvalidArgument, match=r"'1\.p9'.*'docs/a\.md'"):
        resolve_pointer(parse_text(DOC), "1.p9", "docs/a.md")


def test_document_resolves_to_none() -> None:
    assert resolve_pointer(parse_text(DOC), "document", "a.md") is None


def test_subtree_scope() -> None:
    doc = parse_text(DOC)
    item = doc.get("1.li1")
    assert item is not None
    v1 = parse_anchor(f"1.li1~{item.self_hash}")
    with pytest.raises(Conflict) as info:
        resolve_for_mutation(doc, v1, "a.md", MutationScope.SUBTREE)
    assert info.value.reason is ConflictReason.MISSING_SUBTREE_HASH
    assert resolve_for_mutation(doc, v1, "a.md", MutationScope.SELF) == item
    changed = parse_text("# One\n\nA.\n\nB.\n\n- x\n  - y changed\n")
    with pytest.raises(Conflict) as info:
        resolve_for_mutation(changed, parse_anchor(item.anchor), "a.md", MutationScope.SUBTREE)
    assert info.value.reason is ConflictReason.SUBTREE_HASH_MISMATCH


def test_mutation_requires_fingerprint() -> None:
    with pytest.raises(InvalidArgument, match="A fingerprint is required"):
        resolve_for_mutation(parse_text(DOC), parse_anchor("1.p1"), "a.md", MutationScope.SELF)
    assert resolve_for_mutation(parse_text(DOC), parse_anchor("document"), "a.md", MutationScope.SELF) is None
