"""kb_patch planning (contract §5): every operation kind and every refusal."""

from __future__ import annotations

import pytest

from local_vector_search_mcp.errors import Conflict, InvalidArgument, KbError
from local_vector_search_mcp.markdown import parse_document, parse_text
from local_vector_search_mcp.markdown.patch import Op, list_marker, patch_text, plan_patch


def anchors(text: str) -> dict[str, str]:
    return {e.pointer: e.anchor for e in parse_text(text).elements}


def patch(text: str, *ops: tuple[str, str, str | None]) -> str:
    doc = parse_text(text)
    a = anchors(text)
    operations = [Op(kind, a.get(ptr, ptr), md) for kind, ptr, md in ops]
    return plan_patch(doc, "doc.md", operations)


def refused(text: str, *ops: tuple[str, str, str | None]) -> KbError:
    with pytest.raises(KbError) as info:
        patch(text, *ops)
    return info.value


DOC = "# One\n\nA.\n\nB.\n"


# -- non-list elements (§5.2) -------------------------------------------------------


def test_replace_and_replace_element_are_aliases() -> None:
    assert patch(DOC, ("replace", "1.p1", "AA.")) == "# One\n\nAA.\n\nB.\n"
    assert patch(DOC, ("replace_element", "1.p1", "AA.")) == "# One\n\nAA.\n\nB.\n"


def test_delete_removes_exactly_the_span() -> None:
    assert patch("# One\n\nAA.\n\nB.\n", ("delete", "1.p2", None)) == "# One\n\nAA.\n\n\n"


def test_insert_before_and_after_add_one_blank_line() -> None:
    assert patch(DOC, ("insert_before", "1.p2", "New.\n\n")) == "# One\n\nA.\n\nNew.\n\nB.\n"
    assert patch(DOC, ("insert_after", "1.p1", "\n\nNew.")) == "# One\n\nA.\n\nNew.\n\nB.\n"


def test_replace_heading_keeps_the_section_body() -> None:
    assert patch(DOC, ("replace_element", "1", "# Uno")) == "# Uno\n\nA.\n\nB.\n"


def test_replace_section_spans_the_owned_section_and_keeps_a_blank_line() -> None:
    text = "# A\n\nx\n\n## A1\n\ny\n\n# B\n\nz\n"
    assert patch(text, ("replace_section", "1", "# New\n\n## Sub")) == "# New\n\n## Sub\n\n# B\n\nz\n"
    assert patch(text, ("replace_section", "1", "# New\n")) == "# New\n\n# B\n\nz\n"
    assert patch(text, ("replace_section", "1.1", "## N\n\n")) == "# A\n\nx\n\n## N\n\n# B\n\nz\n"
    assert patch(text, ("replace_section", "2", "# Last")) == "# A\n\nx\n\n## A1\n\ny\n\n# Last"


def test_delete_section() -> None:
    text = "# A\n\nx\n\n## A1\n\ny\n\n# B\n\nz\n"
    assert patch(text, ("delete_section", "1.1", None)) == "# A\n\nx\n\n# B\n\nz\n"
    assert patch(text, ("delete_section", "2", None)) == "# A\n\nx\n\n## A1\n\ny\n\n"


def test_code_table_quote_front_matter() -> None:
    text = "---\na: 1\n---\n\n```\nx\n```\n\n| a |\n|---|\n| 1 |\n\n> q\n> r\n\nEnd\n"
    assert patch(text, ("replace_element", "code1", "```py\ny\n```")).startswith("---\na: 1\n---\n\n```py\ny\n```\n")
    assert "| b |\n|---|\n| 2 |\n\n> q" in patch(text, ("replace_element", "t1", "| b |\n|---|\n| 2 |"))
    assert patch(text, ("replace_element", "q1", "> new")).endswith("| 1 |\n\n> new\n\nEnd\n")
    assert patch(text, ("delete", "q1", None)).endswith("| 1 |\n\n\nEnd\n")
    assert patch(text, ("replace_element", "frontmatter", "---\na: 2\n---")).startswith("---\na: 2\n---\n\n```")
    assert patch(text, ("insert_after", "q1", "Para")).endswith("> r\n\nPara\n\nEnd\n")


TOML = '+++ \r\n# a comment\r\ntitle = "T"  \r\n[params]\r\nnote = """\r\nline\r\n"""\r\n+++\t\r\n'


def test_toml_front_matter_keeps_every_byte_and_edits_as_yaml_s_does() -> None:
    """Decision 1026: Hugo's ``+++`` front matter is the ``frontmatter`` element. Editing other
    elements keeps its bytes (CRLF, a comment, spaces after a fence, a multi-line string); it is
    replaced and deleted as YAML front matter is, and nothing is inserted before it."""
    text = TOML + "\r\n# H\r\n\r\nText.\r\n"
    assert patch(text, ("replace", "1.p1", "New.")) == TOML + "\r\n# H\r\n\r\nNew.\r\n"
    assert patch(text, ("insert_before", "document", "Intro")) == TOML + "\r\nIntro\r\n\r\n# H\r\n\r\nText.\r\n"
    replaced = patch(text, ("replace_element", "frontmatter", '+++\ntitle = "U"\n+++'))
    assert replaced == '+++\r\ntitle = "U"\r\n+++\r\n\r\n# H\r\n\r\nText.\r\n'
    assert patch(text, ("delete", "frontmatter", None)) == "\r\n\r\n# H\r\n\r\nText.\r\n"
    assert isinstance(refused(text, ("replace_element", "frontmatter", "Para")), InvalidArgument)
    assert isinstance(refused(text, ("insert_before", "frontmatter", "Para")), InvalidArgument)


# -- document pointer ---------------------------------------------------------------------


def test_document_inserts() -> None:
    assert patch(DOC, ("insert_before", "document", "Top\n\n\n")) == "Top\n\n# One\n\nA.\n\nB.\n"
    assert patch(DOC, ("insert_after", "document", "\nEnd\n")) == "# One\n\nA.\n\nB.\n\nEnd\n"
    assert patch("x", ("insert_after", "document", "y")) == "x\n\ny"
    assert patch("x\n\n", ("insert_after", "document", "y")) == "x\n\ny"
    assert patch("\nx", ("insert_before", "document", "y")) == "y\n\nx"


def test_document_insert_before_goes_after_front_matter() -> None:
    text = "---\nt: 1\n---\n# H\n"
    assert patch(text, ("insert_before", "document", "Intro")) == "---\nt: 1\n---\n\nIntro\n\n# H\n"
    assert patch("---\nt: 1\n---\n", ("insert_before", "document", "Intro")) == "---\nt: 1\n---\n\nIntro\n"


def test_empty_file_takes_the_content() -> None:
    assert patch("", ("insert_after", "document", "# New\r\n")) == "# New\n"
    assert patch("", ("replace_element", "document", "# New")) == "# New"


@pytest.mark.parametrize("kind", ["replace", "replace_element", "replace_section", "replace_subtree"])
def test_document_refuses_replace_kinds(kind: str) -> None:
    err = refused(DOC, (kind, "document", "x"))
    assert isinstance(err, InvalidArgument) and "document pointer" in err.message


@pytest.mark.parametrize("kind", ["delete", "delete_section"])
def test_document_refuses_delete_kinds(kind: str) -> None:
    assert isinstance(refused(DOC, (kind, "document", None)), InvalidArgument)


# -- fidelity -----------------------------------------------------------------------------


def test_replacement_takes_the_document_eol_and_untouched_bytes_survive() -> None:
    text = "# One  \r\n\r\nA.\r\n\r\n\r\nB.   \r\n"
    out = patch(text, ("replace_element", "1.p1", "New\nline"))
    assert out == "# One  \r\n\r\nNew\r\nline\r\n\r\n\r\nB.   \r\n"


def test_mixed_eol_file_uses_crlf_for_new_text_and_keeps_its_mix() -> None:
    text = "A.\n\nB.\r\n"
    assert patch(text, ("insert_after", "p1", "N")) == "A.\r\n\r\nN\n\nB.\r\n"


def test_bom_is_not_part_of_the_text() -> None:
    doc = parse_document(b"\xef\xbb\xbfA.\n")
    a = doc.elements[0].anchor
    assert doc.bom and plan_patch(doc, "d.md", [Op("replace_element", a, "B.")]) == "B.\n"


# -- list items (§4.4, §5.2) -----------------------------------------------------------------

LIST = "- a\n- b\n  - c\n- d\n"


def test_list_item_replace_element_keeps_children() -> None:
    assert patch(LIST, ("replace_element", "li2", "- B")) == "- a\n- B\n  - c\n- d\n"
    loose = "- a\n\n  - c\n"
    assert patch(loose, ("replace_element", "li1", "- A")) == "- A\n\n  - c\n"


def test_deleting_an_item_of_a_loose_list_keeps_one_blank_line() -> None:
    # Decision 493 (found by tests/handlers/test_edit_sequences.py): the blank line that
    # separated the item from the next one goes with it. Inside a parent item the left-over
    # blank line joined the parent's own text, and the structural check refused the delete.
    assert patch("- p\n  - a\n\n  - b\n\n  - c\n", ("delete", "li1.li2", None)) == "- p\n  - a\n\n  - c\n"
    assert patch("- p\n  - a\n\n  - b\n", ("delete", "li1.li1", None)) == "- p\n  - b\n"
    assert patch("1. p\n   - a\n\n   - b\n\n1. q\n", ("delete", "li1.li2", None)) == "1. p\n   - a\n\n1. q\n"
    assert patch("- a\n\n- b\n\n- c\n", ("delete", "li2", None)) == "- a\n\n- c\n"
    assert patch("- a\r\n\r\n- b\r\n", ("delete", "li1", None)) == "- b\r\n"
    # A tight neighbour above: the gap below stays (one blank line either way).
    assert patch("- a\n- b\n\n- c\n", ("delete", "li2", None)) == "- a\n\n- c\n"


def test_deleting_the_only_nested_item_after_a_blank_line_keeps_the_parent() -> None:
    """Decision 669 (found by a black-box sweep): a parent's own text keeps its line break when a
    blank line separates it from its first nested item (decision 59), so deleting its only nested
    item ended that text one break earlier and the structural check refused the delete as a change
    of the untouched parent. The item and its line ending go; every other byte stays."""
    assert patch("- p\n\n  - child\n", ("delete", "li1.li1", None)) == "- p\n\n"
    assert patch("- p\n\n  - child\n- q\n", ("delete", "li1.li1", None)) == "- p\n\n- q\n"
    assert patch("- p\n\n  - child\n\n- q\n", ("delete", "li1.li1", None)) == "- p\n\n- q\n"
    assert patch("- p\n\n  text\n\n  - child\n- q\n", ("delete", "li1.li1", None)) == "- p\n\n  text\n\n- q\n"
    assert patch("- p\r\n\r\n  - child\r\n- q\r\n", ("delete", "li1.li1", None)) == "- p\r\n\r\n- q\r\n"
    assert patch("- a\n  - p\n\n    - c\n  - q\n", ("delete", "li1.li1.li1", None)) == "- a\n  - p\n\n  - q\n"
    assert patch("- p\n\n  - c1\n  - c2\n", ("delete", "li1.li1", None), ("delete", "li1.li2", None)) == "- p\n\n"
    # The parent's own text after the child still may not move up (decision 493).
    assert "untouched list item 'li1'" in refused("- p\n\n  - child\n\n  more\n", ("delete", "li1.li1", None)).message


def test_list_item_replace_subtree_delete_and_inserts() -> None:
    assert patch(LIST, ("replace_subtree", "li2", "- q\n  - r\n")) == "- a\n- q\n  - r\n- d\n"
    assert patch(LIST, ("delete", "li2", None)) == "- a\n- d\n"
    assert patch(LIST, ("insert_before", "li1", "- z")) == "- z\n- a\n- b\n  - c\n- d\n"
    assert patch(LIST, ("insert_after", "li2", "- X\n  - y")) == "- a\n- b\n  - c\n- X\n  - y\n- d\n"
    assert patch(LIST, ("insert_after", "li3", "- e")) == "- a\n- b\n  - c\n- d\n- e\n"
    assert patch("- a", ("insert_after", "li1", "- b")) == "- a\n- b"
    assert patch(LIST, ("insert_before", "li2.li1", "  - z")) == "- a\n- b\n  - z\n  - c\n- d\n"


def test_ordered_list_numbers_may_differ_but_delimiter_must_match() -> None:
    text = "1. a\n2. b\n"
    assert patch(text, ("replace_element", "li2", "7. B")) == "1. a\n7. B\n"
    assert "marker style" in refused(text, ("replace_element", "li2", "2) B")).message


def test_an_ordered_list_refusal_names_the_item_s_own_number() -> None:
    """Decision 1051: the hint said "with a '1.' marker" for a list numbered from 3; an agent that
    followed it replaced `3. three` with `1. ...`, which is accepted and renumbers the whole list."""
    text = "3. three\n4. four\n"
    message = refused(text, ("replace_element", "li1", " 3. THREE")).message
    assert "with a '3.' marker (ordered numbers may differ; keep '.')" in message
    assert "uses marker style '4)'; the list uses '4.'" in refused(text, ("replace_element", "li2", "4) FOUR")).message
    assert "with a '12)' marker" in refused("  12) a\n", ("insert_after", "li1", "13) b")).message
    assert "with a '-' marker." in refused(LIST, ("insert_after", "li2", "para")).message


def test_list_fragment_refusals() -> None:
    assert "marker style" in refused(LIST, ("replace_element", "li2", "* B")).message
    assert "nested items" in refused(LIST, ("replace_element", "li2", "- B\n  - n")).message
    assert "exactly one list item" in refused(LIST, ("insert_after", "li2", "para")).message
    # its requirements as a list: "item not indented with a '-' marker" read as a marker refused
    assert "one list item, not indented, with a '-' marker" in refused(LIST, ("insert_after", "li2", "para")).message
    assert "exactly one list item" in refused(LIST, ("insert_after", "li1", "- x\n\nPara")).message
    assert "indented by 2" in refused(LIST, ("replace_element", "li2.li1", "- c2")).message
    assert "exactly one list item" in refused(LIST, ("insert_after", "li1", "- x\n- y")).message


def test_a_list_fragment_refusal_names_the_indentation_as_written() -> None:
    """Decision 703: an item indented by a tab was said to be "indented by 1 space(s)", and a
    fragment indented by one space, as told, was then refused for its depth."""
    tabbed = "- a\n\t- b\n- c\n"
    assert "indented by 1 tab(s)" in refused(tabbed, ("insert_after", "li1.li1", "  - z")).message
    assert patch(tabbed, ("insert_after", "li1.li1", "\t- z")) == "- a\n\t- b\n\t- z\n- c\n"
    assert "not indented" in refused(LIST, ("insert_after", "li1", "  - x")).message
    assert "indented exactly as ' \\t'" in refused("- a\n \t- b\n", ("insert_after", "li1.li1", "   - z")).message


def test_list_item_delete_and_subtree_need_v2_anchor() -> None:
    doc = parse_text(LIST)
    v1 = "~".join(doc.get("li2").anchor.split("~")[:2])  # type: ignore[union-attr]
    with pytest.raises(Conflict):
        plan_patch(doc, "d.md", [Op("delete", v1)])
    with pytest.raises(Conflict):
        plan_patch(doc, "d.md", [Op("replace_subtree", v1, "- x")])
    assert plan_patch(doc, "d.md", [Op("replace_element", v1, "- B")]) == "- a\n- B\n  - c\n- d\n"


def test_list_marker() -> None:
    assert list_marker("  - x", 0) == ("-", 2)
    assert list_marker("10) x", 0) == ("ordered:)", 0)
    assert list_marker("text", 0) is None


# -- argument and scope refusals -------------------------------------------------------------


def test_no_operations() -> None:
    with pytest.raises(InvalidArgument):
        plan_patch(parse_text(DOC), "d.md", [])


def test_markdown_required_and_forbidden() -> None:
    # the operation's pointer names which of a batch (decision 1122)
    assert "'replace_element' at '1.p1' requires markdown" in refused(DOC, ("replace_element", "1.p1", None)).message
    assert "'delete' at '1.p1' does not take markdown" in refused(DOC, ("delete", "1.p1", "x")).message
    assert "does not take markdown" in refused(DOC, ("delete", "1.p1", "x")).message
    assert "does not take markdown" in refused(DOC, ("delete_section", "1", "x")).message


def test_kind_must_fit_the_target() -> None:
    assert "requires a heading pointer" in refused(DOC, ("replace_section", "1.p1", "# X")).message
    assert "requires a heading pointer" in refused(LIST, ("delete_section", "li1", None)).message
    assert "requires a list item pointer" in refused(DOC, ("replace_subtree", "1.p1", "x")).message


def test_unhashed_and_malformed_pointers() -> None:
    doc = parse_text(DOC)
    with pytest.raises(InvalidArgument, match="fingerprint is required"):
        plan_patch(doc, "d.md", [Op("replace_element", "1.p1", "y")])
    with pytest.raises(InvalidArgument, match="Invalid semantic pointer"):
        plan_patch(doc, "d.md", [Op("replace_element", "1.x1~0000000000000000~0000000000000000", "y")])
    with pytest.raises(InvalidArgument, match="fingerprint"):
        plan_patch(doc, "d.md", [Op("replace_element", "1.p1~xyz", "y")])


def test_stale_anchor_is_a_conflict() -> None:
    doc = parse_text(DOC)
    with pytest.raises(Conflict, match="self hash mismatch"):
        plan_patch(doc, "d.md", [Op("replace_element", "1.p1~0000000000000000~0000000000000000", "y")])
    old = anchors("# One\n\nZ.\n")["1.p1"]
    with pytest.raises(Conflict):
        plan_patch(parse_text("Other.\n"), "d.md", [Op("replace_element", old, "y")])


def test_section_ops_need_v2_and_current_subtree() -> None:
    doc = parse_text(DOC)
    heading = doc.get("1")
    assert heading is not None
    with pytest.raises(Conflict, match="no subtree hash"):
        plan_patch(doc, "d.md", [Op("delete_section", f"1~{heading.self_hash}")])
    with pytest.raises(Conflict, match="subtree hash mismatch"):
        plan_patch(doc, "d.md", [Op("delete_section", f"1~{heading.self_hash}~0000000000000000")])


def test_relocated_anchor_is_followed() -> None:
    old = anchors("# One\n\nB.\n")["1.p1"]
    doc = parse_text(DOC)  # B. is now 1.p2
    assert plan_patch(doc, "d.md", [Op("replace_element", old, "BB.")]) == "# One\n\nA.\n\nBB.\n"


def test_reserved_pointer_is_a_conflict() -> None:
    before = anchors("First.\n\nSecond.\n")["p2"]
    with pytest.raises(Conflict, match="inside a list"):
        plan_patch(parse_text("First.\n\n- Second.\n"), "d.md", [Op("replace_element", before, "x")])


def test_an_anchor_survives_a_list_inserted_above_it() -> None:
    # Decision 490 (found by tests/handlers/test_edit_sequences.py): another agent's list,
    # inserted before the paragraph, took the paragraph's old ordinal; the edit of the
    # unchanged paragraph must not be refused.
    held = anchors("# One\n\nA.\n\nB.\n")["1.p1"]
    doc = parse_text("# One\n\n- new item\n\nA.\n\nB.\n")
    assert plan_patch(doc, "d.md", [Op("replace_element", held, "AA.")]) == "# One\n\n- new item\n\nAA.\n\nB.\n"


# -- fragment pre-validation (§5.3) -----------------------------------------------------------------


def test_replacement_must_be_one_element_of_the_same_kind() -> None:
    assert "exactly one editable Markdown element" in refused(DOC, ("replace_element", "1.p1", "X\n\nY")).message
    assert "same kind" in refused(DOC, ("replace_element", "1.p1", "- X")).message
    table = "| a |\n|---|\n| 1 |\n"
    assert "same kind" in refused(table, ("replace_element", "t1", "just text")).message
    assert "replace_section" in refused(DOC, ("replace_element", "1", "## Deeper")).message
    assert "replace_section" in refused(DOC, ("replace_element", "1", "# X\n\nbody")).message
    assert "whitespace" in refused(DOC, ("replace_element", "1.p1", "X\n\n<!-- c -->")).message


def test_replace_section_fragment_rules() -> None:
    text = "# A\n\nx\n\n# B\n"
    assert "exactly one root section" in refused(text, ("replace_section", "1", "Intro\n\n# A")).message
    assert "exactly one root section" in refused(text, ("replace_section", "1", "## A")).message
    assert "exactly one root section" in refused(text, ("replace_section", "1", "# A\n\n# C")).message


# -- batches ------------------------------------------------------------------------------------------


def test_batch_applies_all_operations_together() -> None:
    out = patch(DOC, ("replace_element", "1.p1", "AA."), ("delete", "1.p2", None), ("replace_element", "1", "# 1"))
    assert out == "# 1\n\nAA.\n\n\n"


def test_duplicate_target_is_refused() -> None:
    assert "both target" in refused(DOC, ("replace_element", "1.p1", "x"), ("insert_after", "1.p1", "y")).message
    assert "both target" in refused(DOC, ("insert_after", "document", "x"), ("insert_before", "document", "y")).message


def test_overlaps_are_refused_and_next_heading_may_be_edited() -> None:
    text = "# A\n\nx\n\n# B\n\ny\n"
    assert "overlap" in refused(text, ("delete_section", "1", None), ("replace_element", "1.p1", "z")).message
    out = patch(text, ("delete_section", "1", None), ("replace_element", "2", "# BB"))
    assert out == "# BB\n\ny\n"
    assert "overlap" in refused(LIST, ("delete", "li2", None), ("replace_element", "li2.li1", "  - z")).message


def test_an_insertion_at_a_sections_end_overlaps_the_section_when_its_target_is_inside() -> None:
    """Decision 668 (found by a black-box sweep): claims are half-open, so an insert_after whose
    insertion point is exactly the section's end (the last paragraph of a file without a final line
    break, a list item running straight into the next heading) was accepted with the section
    operation, and the inserted text landed where the section had been."""
    for text, section, inner, md in [
        ("# A\n\nx\n\n# B\n\nlast", "2", "2.p1", "IA"),
        ("# A\n\n- i1\n- i2\n# B\n\ny\n", "1", "1.li2", "- IA"),
        ("# A\n\n- i1\n  - n\n# B\n\ny\n", "1", "1.li1.li1", "  - IA"),
    ]:
        for op in [("delete_section", section, None), ("replace_section", section, "# NEW\n\nnew body")]:
            message = refused(text, op, ("insert_after", inner, md)).message
            assert "a section operation covers everything inside its section" in message
            assert "a section operation" in refused(text, ("insert_after", inner, md), op).message
    # The next heading is outside the section, also where the section's end is its start.
    text = "# A\n\n- i1\n- i2\n# B\n\ny\n"
    assert patch(text, ("delete_section", "1", None), ("insert_before", "2", "N")).endswith("N\n\n# B\n\ny\n")
    assert patch(text, ("delete_section", "1", None), ("replace_element", "2", "# BB")) == "# BB\n\ny\n"
    assert patch("# A\n\nx", ("delete_section", "1", None), ("insert_after", "document", "B")).strip() == "B"


def test_an_overlap_says_what_collides() -> None:
    """Decision 841: every overlap used to be explained as "a section operation covers everything
    inside its section", also where no section operation was involved."""
    section = refused("# A\n\nx\n", ("delete_section", "1", None), ("replace_element", "1.p1", "z")).message
    assert "a section operation covers everything inside its section" in section
    nested = refused(LIST, ("delete", "li2", None), ("replace_element", "li2.li1", "  - z")).message
    assert "delete on a list item covers its nested items" in nested and "section" not in nested
    # The end of the last paragraph without a line break is also where the document's end is.
    same = refused("x", ("insert_after", "document", "B"), ("insert_after", "p1", "y")).message
    assert "both would change the text at the same place" in same and "section" not in same


def test_failed_batch_reports_the_first_error() -> None:
    err = refused(DOC, ("replace_element", "1.p1", "ok"), ("replace_element", "1.p2", "- list"))
    assert isinstance(err, InvalidArgument)


# -- structural validator (§5.4) --------------------------------------------------------------------------


def test_validator_refuses_merging_two_lists() -> None:
    text = "- a\n\nPara\n\n- b\n"
    err = refused(text, ("delete", "p2", None))
    assert err.message.startswith("Unsupported Markdown structure at 'p2':")


def test_validator_refuses_absorbing_untouched_text() -> None:
    # An unclosed comment swallows everything after it (an unclosed fence is refused before, as
    # a fragment: decision 842).
    err = refused(DOC, ("insert_after", "1.p1", "<!-- open"))
    assert err.message.startswith("Unsupported Markdown structure at '1.p1':")
    # A paragraph inserted right before a setext underline would turn into a heading... refused.
    text = "A.\n\n<div>\nraw\n</div>\n\nB.\n"
    assert patch(text, ("insert_after", "p1", "N.")) == "A.\n\nN.\n\n<div>\nraw\n</div>\n\nB.\n"


def test_validator_refuses_a_list_item_joining_an_existing_list() -> None:
    text = "Para\n\n- a\n"
    err = refused(text, ("insert_after", "p1", "- x"))
    assert "Unsupported Markdown structure" in err.message
    # Decision 844: the refusal says why (the list runs on across the blank line) and what to
    # do instead; another marker starts a list of its own and is accepted.
    assert "would join an existing list" in err.message
    assert "insert_before/insert_after on one of its items" in err.message
    assert patch(text, ("insert_after", "p1", "* x")) == "Para\n\n* x\n\n- a\n"


def test_validator_refuses_detached_text_after_a_list_fragment() -> None:
    err = refused("- a\n- b\n", ("insert_after", "li1", "- x\n\n<!-- note -->"))
    assert isinstance(err, InvalidArgument)
    # An indented comment nests inside the new item and is accepted.
    assert patch("- a\n- b\n", ("insert_after", "li1", "- x\n  <!-- note -->")) == "- a\n- x\n  <!-- note -->\n- b\n"


def test_refusal_leaves_the_document_object_untouched() -> None:
    doc = parse_text(LIST)
    before = doc.text
    with pytest.raises(KbError):
        plan_patch(doc, "d.md", [Op("replace_element", doc.elements[0].anchor, "nope")])
    assert doc.text == before


def test_an_insert_may_not_swallow_an_untouched_html_block() -> None:
    doc = parse_text("# T\n\nPara.\n\n<!-- keep -->\n")
    anchor = doc.get("1.p1").anchor
    with pytest.raises(InvalidArgument, match="untouched HTML block at line 5"):
        patch_text(doc, "x.md", [Op("insert_after", anchor, "<!-- open comment")])
    ok, _ = patch_text(doc, "x.md", [Op("insert_after", anchor, "<!-- closed -->")])
    assert ok == "# T\n\nPara.\n\n<!-- closed -->\n\n<!-- keep -->\n"


def test_thematic_breaks_survive_untouched() -> None:
    doc = parse_text("# T\n\nPara.\n\n---\n\nAfter.\n")
    new, _ = patch_text(doc, "x.md", [Op("replace_element", doc.get("1.p1").anchor, "Other.")])
    assert new == "# T\n\nOther.\n\n---\n\nAfter.\n"


def test_every_anchor_is_resolved_before_any_fragment_is_checked() -> None:
    """§5.1: step 3 resolves every operation's anchor against the revision, step 4 checks the
    fragments. A stale anchor later in the batch is the CONFLICT that tells the agent to re-read;
    it used to be hidden behind an earlier operation's fragment refusal (INVALID_ARGUMENT), so the
    agent fixed the fragment, retried and only then learnt it had to re-read (decision 840)."""
    doc = parse_text(DOC)
    bad_fragment = Op("replace_element", doc.get("1.p1").anchor, "# Not a paragraph")  # type: ignore[union-attr]
    stale = Op("replace_element", "1.p2~0000000000000000~0000000000000000", "x")
    with pytest.raises(Conflict, match="self hash mismatch"):
        plan_patch(doc, "d.md", [bad_fragment, stale])
    with pytest.raises(Conflict, match="self hash mismatch"):
        plan_patch(doc, "d.md", [stale, bad_fragment])
    # With every anchor current, the fragment refusal is what is reported.
    fresh = Op("replace_element", doc.get("1.p2").anchor, "x")  # type: ignore[union-attr]
    with pytest.raises(InvalidArgument, match="is a heading"):
        plan_patch(doc, "d.md", [bad_fragment, fresh])


def test_a_fragment_may_not_leave_a_code_fence_open() -> None:
    """Decision 842: an unclosed fence in a fragment runs on to the end of the document. In the
    middle of a file the structural check refused it (the untouched blocks below were swallowed),
    but as the last block it was written, and from then on every append to the file was refused
    ("would change the untouched code block") until someone found and closed the fence."""
    text = "# T\n\nA.\n\n```\ncode\n```\n"
    for op in (
        ("insert_after", "1.code1", "```python\nprint(1)"),
        ("insert_before", "1.p1", "Intro.\n\n~~~~\nx\n~~~"),  # a shorter closing run does not close
        ("replace_element", "1.code1", "```\nopen\n"),
        ("replace_section", "1", "# T\n\n```\nopen"),
        ("insert_after", "document", "````"),
    ):
        message = refused(text, op).message
        assert message.startswith("Unsupported Markdown structure at ") and "never closes" in message, op
    with pytest.raises(InvalidArgument, match="never closes"):
        plan_patch(parse_text(""), "d.md", [Op("insert_after", "document", "```\nx")])
    # Closed fences, longer closing runs, indented code and fences inside list items are fine.
    assert patch(text, ("insert_after", "1.code1", "```js\nx\n````")) == text + "\n```js\nx\n````\n"
    assert patch(text, ("replace_element", "1.code1", "    indented")) == "# T\n\nA.\n\n    indented\n"
    assert patch("- a\n", ("insert_after", "li1", "- b\n  ```\n  code")) == "- a\n- b\n  ```\n  code\n"


def test_a_fence_is_closed_only_by_a_line_that_markdown_reads_as_one() -> None:
    """Decision 923: the check of 842 split the fragment's code block with ``str.splitlines``, which
    also breaks at U+2028 and FF; ```` ```<U+2028> ```` (or ```` ```<FF> ````) read as a closing line,
    but Markdown reads both characters as ordinary text, so the fence stayed open: written as the
    last block, and every later append was refused as a change of that code block."""
    text = "# T\n\nA.\n"
    for tail in ("\u2028", "\x0c", " \u2028x"):
        message = refused(text, ("insert_after", "document", "```\ncode\n```" + tail)).message
        assert "never closes" in message, repr(tail)
    # CRLF and CR are line breaks: a fence closed on a CR or CRLF line is closed.
    assert patch(text, ("insert_after", "document", "```\r\ncode\r```")) == text + "\n```\ncode\n```"


def test_an_item_whose_marker_ends_its_line_is_editable() -> None:
    """Decision 843: CommonMark lets an item's content start on the next line (``-`` alone, then
    indented text). The marker pattern wanted a space or tab after the marker (or the end of the
    whole text), so such an item had "unknown marker style" and every list operation on it, and
    any fragment written that way, was refused as an unsupported list container."""
    text = "-\n  text\n- b\n"
    assert list_marker(text, 0) == ("-", 0)
    assert list_marker("1.\r\n   x", 0) == ("ordered:.", 0)
    assert patch(text, ("replace_element", "li1", "- T")) == "- T\n- b\n"
    assert patch(text, ("delete", "li1", None)) == "- b\n"
    assert patch(text, ("insert_after", "li1", "- z")) == "-\n  text\n- z\n- b\n"
    assert patch("- a\n", ("insert_after", "li1", "-\n  later")) == "- a\n-\n  later\n"
    assert patch("1. a\n2. b\n", ("replace_element", "li2", "2.\n   two")) == "1. a\n2.\n   two\n"
