"""The windowed structural validator decides exactly like the full one.

``validate.validate_structure`` skips the elements an incremental re-parse reused
unchanged (prefix) or shifted (suffix) and computes list containers only in
between. The oracle (``validator_oracle.validate_structure_full``, the former
implementation) compares every element. For generated documents and random
operations (planned kb_patch operations, chains of them, and raw splices the
planner would never produce) both must accept, or both refuse with the same
exception and message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import event, given
from hypothesis import strategies as st
from md_strategies import block, heading, list_block, paragraph, quote, raw_block, table, with_eol, words
from validator_oracle import validate_structure_full

from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.markdown import ElementKind, parse_text
from local_vector_search_mcp.markdown.document import clear_cache, parse_edited
from local_vector_search_mcp.markdown.incremental import reused_elements
from local_vector_search_mcp.markdown.model import Document, Element
from local_vector_search_mcp.markdown.patch import (
    Edit,
    Op,
    apply_edits,
    list_marker,
    plan_edits,
    seal_joins,
    validate_structure,
)
from local_vector_search_mcp.markdown.validate import _window

KINDS = ["replace_element", "insert_before", "insert_after", "delete", "replace_subtree", "replace_section"]
KINDS += ["delete_section"]
FRAGMENTS = [
    "New text.",
    "# Head",
    "## Head\n\ntext",
    "```\ncode\n```",
    "| a |\n|---|\n| 1 |",
    "> q",
    "> q\nlazy",
    "> q\n\nafter",
    "- item",
    "* item",
    "1. item",
    "- a\n- b",
    "- item\n\n<!-- c -->",
    "  - nested",
    "text\n- item",
    "<div>",
    "---",
    "",
    "\n\n- x\n\n",
]
# Tails of a list item fragment built with the target's own marker and indent.
TAILS = [
    "inserted",
    "x\n{pad}- child",
    "x\n\n<!-- c -->",
    "x\n\n{pad}<!-- c -->",
    "x\n# h",
    "x\n\n- other",
    "x\n\n1. other",
    "x\n{ind}{bullet} y",
    "x\n\n{ind}{bullet} y",
    "x\n\ntail paragraph",
    "x\n{pad}continued",
    "x\n{pad}    indented code",
    "x\n\n{pad}> quote",
    "",
]

# Documents with many sections, so that re-parses reuse a prefix and a suffix.
body_block = st.one_of(list_block(), list_block(), quote(), table(), paragraph(), raw_block, block)


@st.composite
def sectioned(draw: st.DrawFn) -> str:
    parts: list[str] = draw(st.lists(body_block, max_size=2))
    for _ in range(draw(st.integers(1, 6))):
        parts.append(draw(heading()))
        parts.extend(draw(st.lists(body_block, max_size=3)))
    text = ""
    for k, part in enumerate(parts):
        if k:
            text += draw(st.sampled_from(["\n\n", "\n\n", "\n\n\n", "\n"]))
        text += part
    if draw(st.booleans()):
        text += "\n"
    return text


documents = sectioned().flatmap(lambda t: with_eol(t))


def _outcome(check: Callable[[], None]) -> tuple[str, str] | None:
    try:
        check()
    except Exception as exc:  # every outcome counts, crashes included
        return type(exc).__name__, str(exc)
    return None


def _compare(old: Document, new: Document, edits: Sequence[Edit]) -> tuple[str, str] | None:
    prefix, suffix = _window(old, new, edits)
    event(f"window reuse: prefix={'yes' if prefix else 'no'} suffix={'yes' if suffix else 'no'}")
    got = _outcome(lambda: validate_structure(old, new, edits))
    expected = _outcome(lambda: validate_structure_full(old, new, edits))
    assert got == expected
    event("refused" if expected else "accepted")
    return expected


def _fragment(doc: Document, target: Element, data: st.DataObject) -> str:
    marker = list_marker(doc.text, target.start) if target.kind is ElementKind.LIST_ITEM else None
    if marker is None or data.draw(st.integers(0, 3)) == 0:
        return data.draw(st.sampled_from(FRAGMENTS))
    style, indent = marker
    bullet = style if not style.startswith("ordered:") else "1" + style[-1]
    ind = " " * indent
    tail = data.draw(st.sampled_from(TAILS)).format(pad=ind + " " * (len(bullet) + 1), ind=ind, bullet=bullet)
    return f"{ind}{bullet} {tail}".rstrip(" ")


def _operations(doc: Document, data: st.DataObject) -> list[Op]:
    ops = []
    for _ in range(data.draw(st.integers(1, 3))):
        on_element = data.draw(st.integers(0, 7)) > 0
        if doc.elements and on_element:
            target = data.draw(st.sampled_from(doc.elements))
            kind = data.draw(st.sampled_from(KINDS))
            md = None if kind in ("delete", "delete_section") else _fragment(doc, target, data)
            ops.append(Op(kind, target.anchor, md))
        else:
            kind = data.draw(st.sampled_from(["insert_before", "insert_after"]))
            ops.append(Op(kind, "document", data.draw(st.sampled_from(FRAGMENTS[:-1]))))
    return ops


def _patched(doc: Document, ops: list[Op]) -> tuple[Document, list[Edit]] | None:
    try:
        edits = seal_joins(doc.text, plan_edits(doc, "d.md", ops))
    except KbError:
        return None
    text = apply_edits(doc.text, edits)
    clear_cache()  # a cached document would not carry this re-parse's reuse
    return parse_edited(doc, text, edits[0].start, max(e.end for e in edits)), edits


@given(documents, st.data())
def test_planned_operations_decide_alike(text: str, data: st.DataObject) -> None:
    doc = parse_text(text)
    # Chained patches: later documents come from re-parses (open headings rewritten).
    for _ in range(data.draw(st.integers(1, 3))):
        if not doc.text:
            return
        result = _patched(doc, _operations(doc, data))
        if result is None:
            continue
        new, edits = result
        if _compare(doc, new, edits) is None:
            doc = new


@given(documents, st.data())
def test_raw_splices_decide_alike(text: str, data: st.DataObject) -> None:
    """Arbitrary splices (any span, any text, any target, structured or not)."""
    doc = parse_text(text)
    if not doc.text or not doc.elements:
        return
    n = len(doc.text)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=1, max_size=6)))
    edits: list[Edit] = []
    k = 0
    while k < len(cuts):
        start = cuts[k]
        end = cuts[k + 1] if k + 1 < len(cuts) and data.draw(st.booleans()) else start
        k += 2 if end != start or k + 1 >= len(cuts) else 1
        if edits and (start < edits[-1].end or start == edits[-1].start):
            continue
        target = data.draw(st.sampled_from(doc.elements))
        structured = target.kind in (ElementKind.LIST_ITEM, ElementKind.BLOCK_QUOTE) and data.draw(st.booleans())
        new_text = data.draw(
            st.one_of(
                st.sampled_from(FRAGMENTS),
                words,
                st.sampled_from(["\n", "\n\n", "- x\n", "\n- x", "  - y\n", "1. z\n", "> q\n", "# H\n", "\n## S\n\n"]),
            )
        )
        edits.append(
            Edit(start, end, new_text.replace("\n", doc.eol), target.pointer, "raw", start, end, target, structured)
        )
    if not edits:
        return
    edits = seal_joins(doc.text, edits)
    new_text = apply_edits(doc.text, edits)
    clear_cache()
    new = parse_edited(doc, new_text, edits[0].start, max(e.end for e in edits))
    _compare(doc, new, edits)


def test_reuse_is_reported_only_for_the_base_document() -> None:
    text = "# A\n\n- a\n- b\n\n# B\n\npara\n\n# C\n\n- c\n"
    doc = parse_text(text)
    target = doc.get("2.p1")
    assert target is not None
    (edit,) = plan_edits(doc, "d.md", [Op("insert_after", target.anchor, "more")])
    clear_cache()
    new = parse_edited(doc, apply_edits(text, [edit]), edit.start, edit.end)
    prefix, suffix = reused_elements(doc, new)
    assert prefix == 3 and suffix == 2  # "# A" with its items; "# C" with its item
    assert _window(doc, new, [edit]) == (3, 2)
    assert reused_elements(parse_text(text), new) == (3, 2)  # same sourceHash, same elements
    assert reused_elements(new, new) == (0, 0)
    assert reused_elements(doc, parse_text(new.text)) == (0, 0)  # a full parse reuses nothing
    validate_structure(doc, new, [edit])
