"""Fragment pre-validation (contract §5.3): the Markdown an operation brings
must parse to what the operation kind promises, before anything is spliced.

Each check parses the fragment on its own; the structural validator
(``validate.py``) later checks the fragment in place.
"""

from __future__ import annotations

import re
from functools import lru_cache

from local_vector_search_mcp.errors import InvalidArgument

from .document import parse_text
from .edits import NEWLINES, REPLACE_ELEMENT, kind_name, unsupported
from .kinds import ElementKind
from .list_markers import item_marker, list_marker
from .model import Document, Element
from .source import split_lines

__all__ = ["check_closed_fences", "check_list_fragment", "check_section", "check_single_element"]


@lru_cache(maxsize=1)
def _fragment(markdown: str) -> Document:
    """The fragment parsed on its own, once per operation: its kind check and the fence check
    (decision 842) run one after the other on the same text, and a 140 KB replace_section fragment
    takes ~100 ms to parse. One entry keeps no more than the last fragment alive; documents are
    immutable by convention, so sharing one is safe."""
    return parse_text(markdown)


def check_single_element(target: Element, markdown: str) -> None:
    """replace_element on a block: exactly one element of the target's kind (and level)."""
    fragment = _fragment(markdown)
    pointer = target.pointer
    hint = " Use replace_section to replace a heading together with its section." if target.level else ""
    if len(fragment.elements) != 1:
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' must be exactly one editable Markdown element "
            f"(a {kind_name(target.kind)}); it holds {len(fragment.elements)}.{hint}"
        )
    element = fragment.elements[0]
    if markdown[: element.start].strip() or markdown[element.end :].strip():
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' must be exactly one editable Markdown element "
            f"with only whitespace around it.{hint}"
        )
    if element.kind is not target.kind:
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' is a {kind_name(element.kind)}, but the target is a "
            f"{kind_name(target.kind)}; the replacement must be exactly one editable Markdown element of the same "
            "kind (use delete and insert_before/insert_after to change the kind)."
        )
    if target.level is not None and element.level != target.level:
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' is a level-{element.level} heading; the target is "
            f"level {target.level}.{hint}"
        )


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def check_closed_fences(kind: str, pointer: str, markdown: str) -> None:
    """Every fenced code block the fragment opens at its top level is closed in it (decision 842).

    An unclosed fence runs on to the end of the document: in the middle of a file the structural
    check refuses what it swallows, but as the last block it would be written, and every later
    append to the file would then be refused as a change of that code block. Fences inside list
    items and quotes end with their container, so only the fragment's own code blocks count."""
    for element in _fragment(markdown).elements:
        if element.kind is not ElementKind.CODE_BLOCK:
            continue
        lines = split_lines(element.text)  # a fence closed by ```<U+2028> is not closed
        opening = _FENCE.match(lines[0])
        if opening is None:
            continue  # indented code has no fence to close
        fence = opening.group(1)
        closing = re.compile(r" {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*")
        if len(lines) < 2 or closing.fullmatch(lines[-1]) is None:
            # Worded as the structural check words what an open fence swallows (§5.4), which
            # is how the same mistake was refused before in the middle of a file.
            raise unsupported(
                pointer,
                f"the markdown for {kind} opens a code fence ({fence}) that it never closes, so it would run "
                f"on to the end of the document; end the code block with a line of at least {len(fence)} "
                f"'{fence[0]}'",
            )


def check_section(target: Element, markdown: str) -> None:
    """replace_section: one root section, opened by a heading of the target's level."""
    fragment = _fragment(markdown)
    level = target.level or 1
    headings = fragment.headings
    first = fragment.elements[0] if fragment.elements else None
    ok = (
        first is not None
        and first.kind is ElementKind.HEADING
        and first.level == level
        and not markdown[: first.start].strip()
        and all((heading.level or 0) > level for heading in headings[1:])
    )
    if not ok:
        raise InvalidArgument(
            f"The markdown for replace_section at '{target.pointer}' must be exactly one root section: it must "
            f"start with a level-{level} heading, and every later heading must be deeper (level > {level})."
        )


def check_list_fragment(doc: Document, target: Element, markdown: str, kind: str) -> None:
    """A list item fragment: one item with the target's indent and marker style."""
    marker = item_marker(doc, target)
    if marker is None:
        raise unsupported(target.pointer, "unsupported list container (unknown marker style or indentation)")
    style, indent = marker
    what = f"The markdown for {kind} at '{target.pointer}'"
    stripped = markdown.lstrip(NEWLINES)
    own = list_marker(stripped, 0)
    if own is None or own[1] != indent:
        lead = doc.text[target.start : target.start + indent]
        raise InvalidArgument(
            f"{what} must be exactly one list item, {_indent_hint(lead)}, with a "
            f"{_marker_hint(doc, target, indent, style)}."
        )
    if own[0] != style:
        raise InvalidArgument(
            f"{what} uses marker style '{_as_written(stripped, 0, own[1], own[0])}'; the list uses "
            f"'{_as_written(doc.text, target.start, indent, style)}' (ordered numbers may differ)."
        )
    # Parse the fragment as if it stood at column 0 (an item indented by four
    # spaces would otherwise read as indented code).
    lines = stripped.split(doc.eol) if doc.eol in stripped else [stripped]
    dedented = doc.eol.join(_dedent(line, indent) for line in lines)
    fragment = parse_text(dedented)
    roots = [e for e in fragment.elements if e.kind is ElementKind.LIST_ITEM and e.parent is None]
    others = [e for e in fragment.elements if e.kind is not ElementKind.LIST_ITEM]
    if len(roots) != 1 or others:
        raise InvalidArgument(f"{what} must be exactly one list item (nested items inside it only), nothing else.")
    root = roots[0]
    if dedented[: root.start].strip() or dedented[root.end :].strip():
        raise InvalidArgument(f"{what} must be exactly one list item with nothing outside it.")
    if kind == REPLACE_ELEMENT and any(e.parent is not None for e in fragment.elements):
        raise InvalidArgument(
            f"{what} may not contain nested items: replace_element keeps the existing nested items. "
            "Use replace_subtree to replace the item with its nested items."
        )


def _dedent(line: str, indent: int) -> str:
    """``line`` without up to ``indent`` leading spaces or tabs."""
    removed = 0
    while removed < indent and removed < len(line) and line[removed] in " \t":
        removed += 1
    return line[removed:]


def _indent_hint(lead: str) -> str:
    """The target item's indentation in words: a tab is one character of it, not a space."""
    if not lead:
        return "not indented"
    if lead == " " * len(lead):
        return f"indented by {len(lead)} space(s)"
    if lead == "\t" * len(lead):
        return f"indented by {len(lead)} tab(s)"
    return f"indented exactly as {lead!r}"


def _as_written(text: str, line_start: int, indent: int, style: str) -> str:
    """The marker of the item whose line starts at ``line_start`` as written (``3.``, ``-``).

    Hints name the item's own number: ``1.`` for a list numbered from 3 led agents to
    renumber its first item, which renumbers the whole list (decision 1051)."""
    if not style.startswith("ordered:"):
        return style
    start = line_start + indent
    return text[start : text.index(style[-1], start) + 1]


def _marker_hint(doc: Document, target: Element, indent: int, style: str) -> str:
    """The marker the fragment needs, in words: ordered numbers are free, the delimiter is not."""
    marker = _as_written(doc.text, target.start, indent, style)
    if style.startswith("ordered:"):
        return f"'{marker}' marker (ordered numbers may differ; keep '{style[-1]}')"
    return f"'{marker}' marker"
