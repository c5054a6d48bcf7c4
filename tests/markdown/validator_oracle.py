"""The structural validator (§5.4) as a plain full comparison, for tests only.

``validate_structure_full`` compares every element of both documents and
computes the list containers of the whole documents, the way the production
validator worked before it became proportional to the edit. It shares no code
with ``markdown.validate``: offset mapping, marker styles, depths, messages and
the raw-block check (HTML blocks and thematic breaks found by its own parse)
are written here again, simply and slowly, so a bug in a production helper
cannot hide in the oracle. Only the ``Edit`` values (the input) and the element
model come from production.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt

from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.markdown.edits import Edit
from local_vector_search_mcp.markdown.front_matter import front_matter_plugin
from local_vector_search_mcp.markdown.kinds import ElementKind
from local_vector_search_mcp.markdown.model import Document, Element

__all__ = ["validate_structure_full"]

_KIND_NAMES = {
    ElementKind.FRONT_MATTER: "front matter",
    ElementKind.HEADING: "heading",
    ElementKind.PARAGRAPH: "paragraph",
    ElementKind.CODE_BLOCK: "code block",
    ElementKind.LIST_ITEM: "list item",
    ElementKind.TABLE: "table",
    ElementKind.BLOCK_QUOTE: "block quote",
}
_RAW_NAMES = {"html_block": "HTML block", "hr": "thematic break"}
_PARSER = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
_SECTION_RE = re.compile(r"[0-9]+(?:\.[0-9]+)*(?=\.|$)")


def _refuse(pointer: str, reason: str) -> InvalidArgument:
    return InvalidArgument(f"Unsupported Markdown structure at '{pointer}': {reason}")


# -- offsets through the edits (linear scans; edits are few) ----------------------------


def _shift_before(edits: Sequence[Edit], count: int) -> int:
    return sum(len(e.text) - (e.end - e.start) for e in edits[:count])


def _map(edits: Sequence[Edit], pos: int) -> int:
    """An old offset in the new text: every edit ending at or before it moves it."""
    return pos + sum(len(e.text) - (e.end - e.start) for e in edits if e.end <= pos)


def _touched(edits: Sequence[Edit], start: int, end: int) -> bool:
    for e in edits:
        if e.start == e.end:
            if start < e.start < end:  # an insertion strictly inside
                return True
        elif e.start < end and e.end > start:
            return True
    return False


def _new_range(edits: Sequence[Edit], index: int) -> tuple[int, int]:
    start = edits[index].start + _shift_before(edits, index)
    return start, start + len(edits[index].text)


def _edit_holding(edits: Sequence[Edit], new_pos: int) -> int | None:
    """The last edit whose new text contains ``new_pos`` (boundaries included)."""
    for index in reversed(range(len(edits))):
        start, end = _new_range(edits, index)
        if start <= new_pos <= end:
            return index
    return None


def _blame(edits: Sequence[Edit], pos: int) -> Edit:
    """The last edit starting at or before old offset ``pos``, else the first."""
    before = [e for e in edits if e.start <= pos]
    return before[-1] if before else edits[0]


# -- list items -------------------------------------------------------------------------


def _marker(text: str, start: int) -> tuple[str, int] | None:
    """(style, indent) of a list marker at ``start``: a bullet or 1-9 digits and a
    delimiter, then a space, a tab, a line break or the end (decision 843)."""
    pos = start
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    indent = pos - start
    if pos < len(text) and text[pos] in "-+*":
        style, pos = text[pos], pos + 1
    else:
        digits = 0
        while pos < len(text) and text[pos].isascii() and text[pos].isdigit():
            pos += 1
            digits += 1
        if not 1 <= digits <= 9 or pos >= len(text) or text[pos] not in ".)":
            return None
        style, pos = "ordered:" + text[pos], pos + 1
    rest = text[pos:]
    if not rest or rest[0] in " \t\r\n":
        return style, indent
    return None


def _starts_line(text: str, pos: int) -> bool:
    return pos == 0 or text[pos - 1] in "\r\n"


def _item_marker(doc: Document, item: Element) -> tuple[str, int] | None:
    return _marker(doc.text, item.start) if _starts_line(doc.text, item.start) else None


def _style(text: str, start: int) -> str | None:
    marker = _marker(text, start)
    return None if marker is None else marker[0]


def _depth(item: Element) -> int:
    return len(re.findall(r"(?:^|\.)li[0-9]+", item.pointer))


def _section(pointer: str) -> str | None:
    match = _SECTION_RE.match(pointer)
    return match.group(0) if match else None


def _containers(doc: Document) -> dict[str, int]:
    """List container of every item: consecutive siblings with only whitespace
    between them and the same marker style share one (CommonMark list rules)."""
    result: dict[str, int] = {}
    last: dict[tuple[str | None, str | None], Element] = {}
    text = doc.text
    for e in doc.elements:
        if e.kind is not ElementKind.LIST_ITEM:
            continue
        key = (e.parent, None if e.parent else _section(e.pointer))
        prev = last.get(key)
        if (
            prev is not None
            and not text[prev.end : e.start].strip()
            and _style(text, prev.start) == _style(text, e.start)
        ):
            result[e.pointer] = result[prev.pointer]
        else:
            result[e.pointer] = e.start
        last[key] = e
    return result


def _same_parent(old: Document, new: Document, edits: Sequence[Edit], old_item: Element, new_item: Element) -> bool:
    old_parent = old.get(old_item.parent) if old_item.parent else None
    new_parent = new.get(new_item.parent) if new_item.parent else None
    if old_parent is None and new_parent is None:
        return True
    return old_parent is not None and new_parent is not None and _map(edits, old_parent.start) == new_parent.start


def _only_lost_blank_tail(edits: Sequence[Edit], item: Element, twin: Element) -> bool:
    """Decision 669: a parent item whose own text lost only its trailing line break and blank
    lines, because a ``delete`` removed a direct child that came after all of that text."""
    if item.kind is not ElementKind.LIST_ITEM or not item.segments or len(twin.text) >= len(item.text):
        return False
    head, tail = item.text[: len(twin.text)], item.text[len(twin.text) :]
    if head != twin.text or tail[0] not in "\r\n" or tail.strip(" \t\r\n"):
        return False
    last_own = item.segments[-1][1]
    deleted_children = [e.target for e in edits if e.kind == "delete" and e.target and e.target.parent == item.pointer]
    return any(child.start >= last_own for child in deleted_children)


# -- the validator ----------------------------------------------------------------------


def validate_structure_full(old: Document, new: Document, edits: Sequence[Edit]) -> None:
    """Refuse a result whose untouched elements changed or whose new blocks leak (§5.4)."""
    by_start = {(e.start, e.kind): e for e in new.elements}
    survivors: dict[str, str] = {}  # old pointer -> new pointer
    for e in old.elements:
        if any(_touched(edits, s, t) for s, t in e.segments or ((e.start, e.end),)):
            continue
        twin = by_start.get((_map(edits, e.start), e.kind))
        if twin is None or (twin.text != e.text and not _only_lost_blank_tail(edits, e, twin)):
            raise _refuse(
                _blame(edits, e.start).pointer,
                f"the edit would change the untouched {_KIND_NAMES[e.kind]} '{e.pointer}'",
            )
        if e.kind is ElementKind.LIST_ITEM and (
            not _same_parent(old, new, edits, e, twin) or _depth(twin) != _depth(e)
        ):
            raise _refuse(_blame(edits, e.start).pointer, f"the edit would move the untouched list item '{e.pointer}'")
        survivors[e.pointer] = twin.pointer
    matched = set(survivors.values())
    created: dict[int, list[Element]] = {}
    for e in new.elements:
        if e.pointer in matched:
            continue
        first = e.segments[0][0] if e.segments else e.start
        index = _edit_holding(edits, first)
        if index is None:
            raise _refuse(_blame(edits, first).pointer, "the edit would absorb untouched text into a new block")
        stop = (e.segments[0][1] if e.segments else e.end) if e.kind is ElementKind.LIST_ITEM else e.end
        stop = first + len(new.text[first:stop].rstrip(" \t\r\n"))
        if stop > _new_range(edits, index)[1]:
            raise _refuse(edits[index].pointer, "the edit would absorb untouched text into a new block")
        created.setdefault(index, []).append(e)
    _check_structured(old, new, edits, created, survivors)
    _check_raw_blocks(old, new, edits)


def _check_structured(
    old: Document, new: Document, edits: Sequence[Edit], created: dict[int, list[Element]], survivors: dict[str, str]
) -> None:
    old_c = _containers(old)
    new_c = _containers(new)
    allowed: dict[str, int] = {}  # new root item -> new container it may join
    for index, edit in enumerate(edits):
        target = edit.target
        if not edit.structured or target is None:
            continue
        items = created.get(index, [])
        if target.kind is ElementKind.BLOCK_QUOTE:
            if len(items) != 1 or items[0].kind is not ElementKind.BLOCK_QUOTE:
                raise _refuse(edit.pointer, "the replacement must remain exactly one block quote")
            continue
        if any(e.kind is not ElementKind.LIST_ITEM for e in items):
            raise _refuse(edit.pointer, "the fragment would create a block outside the new list item")
        new_ids = {e.pointer for e in items}
        tops = [e for e in items if e.parent is None or e.parent not in new_ids]
        if len(tops) != 1:
            raise _refuse(edit.pointer, "the fragment must become exactly one list item at the target's depth")
        root = tops[0]
        if _depth(root) != _depth(target) or _item_marker(new, root) != _item_marker(old, target):
            raise _refuse(edit.pointer, "the new item has a different depth, indent or marker style")
        if not _same_parent(old, new, edits, target, root):
            raise _refuse(edit.pointer, "the new item would get a different parent")
        a, b = _new_range(edits, index)
        inserted = new.text[a:b]
        if inserted[: max(root.start - a, 0)].strip() or inserted[root.end - a :].strip():
            raise _refuse(edit.pointer, "the fragment leaves text outside the new list item")
        mates = [survivors[p] for p, c in old_c.items() if c == old_c[target.pointer] and p in survivors]
        if mates:
            allowed[root.pointer] = new_c[mates[0]]
    # Containers map one to one: no split, no merge, no new item joining an old list.
    image: dict[int, int] = {}
    reverse: dict[int, int] = {}
    for p_old, p_new in survivors.items():
        if p_old not in old_c:
            continue
        a, b = old_c[p_old], new_c[p_new]
        if image.setdefault(a, b) != b or reverse.setdefault(b, a) != a:
            item = old.get(p_old)
            raise _refuse(
                _blame(edits, item.start if item else 0).pointer,
                f"the edit would split or merge the list holding '{p_old}'",
            )
    kept = set(survivors.values())
    for p_new, c in new_c.items():
        if p_new in kept or c not in reverse or allowed.get(p_new) == c:
            continue
        element = new.get(p_new)
        if element is not None and element.parent is not None and element.parent not in kept:
            continue  # nested inside a new item
        if element is None:
            pointer = _blame(edits, 0).pointer
        else:
            index = _edit_holding(edits, element.start)
            pointer = edits[index if index is not None else 0].pointer
        raise _refuse(
            pointer,
            "the new list item would join an existing list (a list continues across blank lines while the marker "
            "style stays the same): add items to it with insert_before/insert_after on one of its items, or start "
            "a separate list with another marker",
        )


# -- HTML blocks and thematic breaks ----------------------------------------------------


def _line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end before the break) of every line; CRLF, CR and LF each break a line."""
    spans = []
    start = 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _raw_blocks(text: str) -> set[tuple[int, int, str]]:
    """Top-level HTML blocks and thematic breaks by their own parse, trailing blank lines trimmed."""
    spans = _line_spans(text)
    found = set()
    for token in _PARSER.parse(text):
        if token.level != 0 or token.type not in _RAW_NAMES or token.map is None:
            continue
        first, end = token.map
        last = first + max(end - first, 1) - 1
        while last > first and not text[spans[last][0] : spans[last][1]].strip():
            last -= 1
        start = spans[first][0] if first < len(spans) else len(text)
        found.add((start, spans[last][1], token.type))
    return found


def _check_raw_blocks(old: Document, new: Document, edits: Sequence[Edit]) -> None:
    kept = _raw_blocks(new.text)
    for start, end, kind in sorted(_raw_blocks(old.text)):
        if _touched(edits, start, end):
            continue
        at = _map(edits, start)
        if (at, at + end - start, kind) not in kept or new.text[at : at + end - start] != old.text[start:end]:
            line = len(_line_spans(old.text[:start]))
            raise _refuse(
                _blame(edits, start).pointer, f"the edit would change the untouched {_RAW_NAMES[kind]} at line {line}"
            )
