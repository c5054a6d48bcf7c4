"""Untouched links keep the targets their reference definitions give them (decision 990)."""

from __future__ import annotations

import pytest

from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.markdown import parse_text
from local_vector_search_mcp.markdown.links import extract_links
from local_vector_search_mcp.markdown.patch import Op, patch_text

DOC = "# Top\n\nIntro with [ref link][lbl].\n\nLast para.\n\n[lbl]: target.md\n"
# The definition in a section of its own, the link in another.
SPLIT = "# A\n\nSee [x][lbl].\n\n# B\n\nText.\n\n[lbl]: target.md\n"


def edit(text: str, kind: str, pointer: str, markdown: str | None) -> str:
    doc = parse_text(text)
    element = doc.get(pointer)
    assert element is not None
    return patch_text(doc, "d.md", [Op(kind, element.anchor, markdown)])[0]


def refusal(text: str, kind: str, pointer: str, markdown: str | None) -> str:
    with pytest.raises(InvalidArgument) as info:
        edit(text, kind, pointer, markdown)
    message = info.value.message
    assert message.startswith("Unsupported Markdown structure at '")
    assert "nothing was changed" in message
    return message


def targets(text: str) -> list[str]:
    return [link.destination for link in extract_links(parse_text(text)).links]


# -- a definition placed before an untouched one -------------------------------------------------


def test_an_inserted_definition_may_not_take_over_an_untouched_label() -> None:
    # The tester's case: the first definition wins, so the untouched link went to other.md.
    message = refusal(DOC, "insert_after", "1.p2", "[lbl]: other.md")
    assert "[lbl]" in message and "'target.md'" in message and "'other.md'" in message
    message = refusal(DOC, "insert_before", "1.p1", "[LBL]: target.md 'Other title'")
    assert "'target.md' \"Other title\"" in message  # a title is part of what a label resolves to


def test_a_definition_placed_after_the_winning_one_is_accepted() -> None:
    text = "# Top\n\n[lbl]: target.md\n\nIntro with [ref link][lbl].\n\nLast para.\n"
    new = edit(text, "insert_after", "1.p2", "[lbl]: other.md")
    assert new.endswith("Last para.\n\n[lbl]: other.md\n")
    assert targets(new) == ["target.md"]


def test_a_definition_of_a_label_of_its_own_is_accepted() -> None:
    new = edit(DOC, "insert_after", "1.p2", "[other]: other.md\n\nSee [o][other].")
    assert targets(new) == ["target.md", "other.md"]


# -- a definition the edit replaced or deleted ---------------------------------------------------


def test_removing_a_definition_an_untouched_link_uses_is_refused() -> None:
    message = refusal(SPLIT, "replace_section", "2", "# B\n\nText.\n")
    assert "[lbl] ('target.md')" in message and "line 3" in message and "no destination" in message
    refusal(SPLIT, "delete_section", "2", None)
    # An image through the label counts as a link.
    refusal(SPLIT.replace("[x][lbl]", "![x][lbl]"), "delete_section", "2", None)


def test_a_definition_only_the_edited_text_used_may_go() -> None:
    text = "# A\n\nPlain.\n\n# B\n\nSee [x][lbl].\n\n[lbl]: target.md\n"
    assert edit(text, "replace_section", "2", "# B\n\nText.\n") == "# A\n\nPlain.\n\n# B\n\nText.\n"


def test_the_edit_may_redefine_a_definition_it_replaced() -> None:
    new = edit(SPLIT, "replace_section", "2", "# B\n\nText.\n\n[lbl]: moved.md\n")
    assert targets(new) == ["moved.md"]
    # Inside a block quote, the definition is part of the element the edit replaces.
    quoted = "> [lbl]: target.md\n> Quote.\n\nSee [x][lbl].\n"
    assert targets(edit(quoted, "replace", "q1", "> [lbl]: moved.md\n> Quote.")) == ["moved.md"]
    assert "'target.md'" in refusal(quoted, "replace", "q1", "> Quote.")


def test_removing_a_definition_may_not_hand_its_label_to_a_later_duplicate() -> None:
    text = "# A\n\nSee [x][lbl].\n\n# B\n\n[lbl]: first.md\n\n# C\n\n[lbl]: second.md\n"
    message = refusal(text, "delete_section", "2", None)
    assert "'first.md'" in message and "'second.md'" in message


# -- a new label -------------------------------------------------------------------------------


def test_a_new_definition_completes_the_links_written_before_it() -> None:
    """Review of 990: an agent writes the link first and its definition in a second call (a
    reference link, a footnote); refused, the advice to pick another label was wrong too."""
    for use in ("See the [install guide][install] here.", "See [install] here.", "A claim.[^install]"):
        text = f"# Top\n\n{use}\n\nLast para.\n"
        label = "^install" if "^" in use else "install"
        new = edit(text, "insert_after", "1.p2", f"[{label}]: install.md")
        assert targets(new) == ["install.md"], use
    # Untouched text that names the label in an inline link stays what it was; the edit's own
    # text may link through its new label.
    text = "# Top\n\nSee [lbl](inline.md) here.\n\nLast para.\n"
    new = edit(text, "insert_after", "1.p2", "Next [para][lbl].\n\n[lbl]: new.md")
    assert targets(new) == ["inline.md", "new.md"]


# -- cost ---------------------------------------------------------------------------------------


def test_an_edit_without_a_definition_parses_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    from local_vector_search_mcp.markdown import references as references_module

    def fail(text: str) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(references_module, "document_link_source", fail)
    assert edit(DOC, "replace", "1.p2", "Other para.") == DOC.replace("Last para.", "Other para.")
