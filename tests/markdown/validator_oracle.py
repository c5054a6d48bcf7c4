"""The structural validator as it was before it became proportional to the edit.

Test oracle only: ``validate_structure_full`` compares every element of both
documents and computes the list containers of the whole documents (verbatim
the pre-window implementation of ``markdown.patch.validate_structure``, plus the
raw-block check added later, which both share).
"""

from __future__ import annotations

from collections.abc import Sequence

from local_vector_search_mcp.markdown.kinds import ElementKind
from local_vector_search_mcp.markdown.model import Document, Element
from local_vector_search_mcp.markdown.patch import (
    Edit,
    _check_raw_blocks,
    _depth,
    _edit_for_new,
    _item_marker,
    _kind_name,
    _Mapper,
    _style_at,
    _unsupported,
)
from local_vector_search_mcp.markdown.pointers import containing_section

__all__ = ["validate_structure_full"]


def _containers(doc: Document) -> dict[str, int]:
    """List container of every item: consecutive siblings with only whitespace
    between them and the same marker style share one (CommonMark list rules)."""
    result: dict[str, int] = {}
    last: dict[tuple[str | None, str | None], Element] = {}
    text = doc.text
    for e in doc.elements:
        if e.kind is not ElementKind.LIST_ITEM:
            continue
        key = (e.parent, None if e.parent else containing_section(e.pointer))
        prev = last.get(key)
        style = _style_at(text, e.start)
        if prev is not None and not text[prev.end : e.start].strip() and _style_at(text, prev.start) == style:
            result[e.pointer] = result[prev.pointer]
        else:
            result[e.pointer] = e.start
        last[key] = e
    return result


def validate_structure_full(old: Document, new: Document, edits: Sequence[Edit]) -> None:
    """Refuse a result whose untouched elements changed or whose new blocks leak (§5.4)."""
    mapper = _Mapper(edits)
    by_start: dict[tuple[int, ElementKind], Element] = {(e.start, e.kind): e for e in new.elements}
    matched: set[str] = set()
    survivors: dict[str, str] = {}  # old pointer -> new pointer
    for e in old.elements:
        touched = None
        for s, t in e.segments or ((e.start, e.end),):
            touched = mapper.touching(s, t)
            if touched is not None:
                break
        if touched is not None:
            continue
        twin = by_start.get((mapper.map(e.start), e.kind))
        if twin is None or twin.text != e.text:
            edit = mapper.nearest(e.start)
            raise _unsupported(edit.pointer, f"the edit would change the untouched {_kind_name(e.kind)} '{e.pointer}'")
        if e.kind is ElementKind.LIST_ITEM:
            old_parent = old.get(e.parent) if e.parent else None
            new_parent = new.get(twin.parent) if twin.parent else None
            same = (old_parent is None and new_parent is None) or (
                old_parent is not None and new_parent is not None and mapper.map(old_parent.start) == new_parent.start
            )
            if not same or _depth(twin) != _depth(e):
                edit = mapper.nearest(e.start)
                raise _unsupported(edit.pointer, f"the edit would move the untouched list item '{e.pointer}'")
        matched.add(twin.pointer)
        survivors[e.pointer] = twin.pointer
    # New elements must stay inside the inserted text.
    roots: dict[int, list[Element]] = {}
    for e in new.elements:
        if e.pointer in matched:
            continue
        first = e.segments[0][0] if e.segments else e.start
        k = mapper.edit_at_new(first)
        if k is None:
            raise _unsupported(mapper.nearest(first).pointer, "the edit would absorb untouched text into a new block")
        _a, b = mapper.new_range(k)
        stop = (e.segments[0][1] if e.segments else e.end) if e.kind is ElementKind.LIST_ITEM else e.end
        while stop > first and new.text[stop - 1] in " \t\r\n":
            stop -= 1
        if stop > b:
            raise _unsupported(mapper.edits[k].pointer, "the edit would absorb untouched text into a new block")
        roots.setdefault(k, []).append(e)
    _check_structured(old, new, mapper, roots, survivors)
    _check_raw_blocks(old, new, mapper)  # added after the windowing; shared, not windowed


def _check_structured(
    old: Document,
    new: Document,
    mapper: _Mapper,
    created: dict[int, list[Element]],
    survivors: dict[str, str],
) -> None:
    old_c = _containers(old)
    new_c = _containers(new)
    allowed: dict[str, int] = {}  # new root item -> new container it may join
    for k, edit in enumerate(mapper.edits):
        target = edit.target
        if not edit.structured or target is None:
            continue
        items = created.get(k, [])
        if target.kind is ElementKind.BLOCK_QUOTE:
            if len(items) != 1 or items[0].kind is not ElementKind.BLOCK_QUOTE:
                raise _unsupported(edit.pointer, "the replacement must remain exactly one block quote")
            continue
        new_ids = {e.pointer for e in items}
        depth = _depth(target)
        if any(e.kind is not ElementKind.LIST_ITEM for e in items):
            raise _unsupported(edit.pointer, "the fragment would create a block outside the new list item")
        tops = [e for e in items if e.parent is None or e.parent not in new_ids]
        if len(tops) != 1:
            raise _unsupported(edit.pointer, "the fragment must become exactly one list item at the target's depth")
        root = tops[0]
        if _depth(root) != depth or _item_marker(new, root) != _item_marker(old, target):
            raise _unsupported(edit.pointer, "the new item has a different depth, indent or marker style")
        old_parent = old.get(target.parent) if target.parent else None
        new_parent = new.get(root.parent) if root.parent else None
        if (old_parent is None) != (new_parent is None) or (
            old_parent is not None and new_parent is not None and mapper.map(old_parent.start) != new_parent.start
        ):
            raise _unsupported(edit.pointer, "the new item would get a different parent")
        a, b = mapper.new_range(k)
        inserted = new.text[a:b]
        offset = root.start - a
        if inserted[: max(offset, 0)].strip() or inserted[root.end - a :].strip():
            raise _unsupported(edit.pointer, "the fragment leaves text outside the new list item")
        # The container the new item must share: the target's (through any surviving sibling).
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
            raise _unsupported(
                mapper.nearest(item.start if item else 0).pointer,
                f"the edit would split or merge the list holding '{p_old}'",
            )
    kept = set(survivors.values())
    for p_new, c in new_c.items():
        if p_new in kept or c not in reverse:
            continue
        if allowed.get(p_new) == c:
            continue
        element = new.get(p_new)
        if element is not None and element.parent is not None and element.parent not in kept:
            continue  # nested inside a new item
        raise _unsupported(
            mapper.nearest(0).pointer if element is None else _edit_for_new(mapper, element.start),
            "the new list item would join an existing list",
        )
