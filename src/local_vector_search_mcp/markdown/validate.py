"""The structural validator (contract §5.4): refuse a patched document whose
untouched elements changed, or whose new blocks leak out of the inserted text.

Old and new documents are compared through an :class:`OffsetMapper` over the
splices. Every old element no edit touches must reappear as itself at its
mapped offset, with the same parent and depth; every new element must start
and end inside one edit's new text; list and quote edits must yield exactly
one root element of the right shape; list containers map one to one; untouched
HTML blocks and thematic breaks (not elements) survive byte for byte, and
untouched links keep the targets their reference definitions give them
(``references.py``).

When the new document was re-parsed incrementally only the window between the
reused runs is compared (:func:`_window`); the outcome and message equal those
of a full comparison (``tests/markdown/validator_oracle.py`` holds them equal).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from .edits import DELETE, Edit, kind_name, unsupported
from .incremental import raw_blocks, reused_elements
from .kinds import ElementKind
from .list_markers import item_depth, item_marker, marker_style
from .model import Document, Element
from .pointers import containing_section
from .references import check_references

__all__ = ["OffsetMapper", "validate_structure"]


class OffsetMapper:
    """Maps offsets of the old text to the new text through sorted edits."""

    def __init__(self, edits: Sequence[Edit]) -> None:
        self.edits = list(edits)
        self.starts = [edit.start for edit in edits]
        self.ends = [edit.end for edit in edits]
        # shifts[k]: how far an offset after the first k edits moves.
        self.shifts = [0]
        for edit in edits:
            self.shifts.append(self.shifts[-1] + len(edit.text) - (edit.end - edit.start))
        self.new_starts = [edit.start + self.shifts[edit_index] for edit_index, edit in enumerate(edits)]

    def map(self, pos: int) -> int:
        return pos + self.shifts[bisect_right(self.ends, pos)]

    def touching(self, start: int, end: int) -> Edit | None:
        """The edit that changes or inserts into ``[start, end)``, if any."""
        edit_index = bisect_right(self.starts, end) - 1
        while edit_index >= 0:
            edit = self.edits[edit_index]
            if edit.end < start:
                break
            if edit.start == edit.end:  # an insertion touches only what it lands inside
                if start < edit.start < end:
                    return edit
            elif edit.start < end and edit.end > start:
                return edit
            edit_index -= 1
        return None

    def new_range(self, edit_index: int) -> tuple[int, int]:
        """Where an edit's text lies in the new document."""
        new_start = self.new_starts[edit_index]
        return new_start, new_start + len(self.edits[edit_index].text)

    def edit_at_new(self, pos: int) -> int | None:
        """Index of the edit whose new text contains ``pos`` (boundaries included)."""
        edit_index = bisect_right(self.new_starts, pos) - 1
        while edit_index >= 0:
            new_start, new_end = self.new_range(edit_index)
            if new_start <= pos <= new_end:
                return edit_index
            if new_end < pos:
                return None
            edit_index -= 1
        return None

    def nearest(self, pos: int) -> Edit:
        """The edit to blame for a change at old offset ``pos``."""
        edit_index = bisect_right(self.starts, pos) - 1
        return self.edits[max(edit_index, 0)]

    def pointer_for_new(self, pos: int) -> str:
        """Pointer of the edit whose new text holds new offset ``pos`` (else the first)."""
        edit_index = self.edit_at_new(pos)
        return self.edits[edit_index].pointer if edit_index is not None else self.edits[0].pointer


def _containers(text: str, elements: Sequence[Element]) -> dict[str, int]:
    """List container of every item: consecutive siblings with only whitespace
    between them and the same marker style share one (CommonMark list rules).

    ``elements`` is a run of a document's elements that starts at the document
    start or at a top-level heading: no item after a heading continues a list
    from before it (its key, parent or section, is new), so a run gives every
    item in it the same container as the whole document does.
    """
    result: dict[str, int] = {}
    last: dict[tuple[str | None, str | None], Element] = {}  # sibling group -> its last item
    for element in elements:
        if element.kind is not ElementKind.LIST_ITEM:
            continue
        group = (element.parent, None if element.parent else containing_section(element.pointer))
        previous = last.get(group)
        if (
            previous is not None
            and not text[previous.end : element.start].strip()
            and marker_style(text, previous.start) == marker_style(text, element.start)
        ):
            result[element.pointer] = result[previous.pointer]
        else:
            result[element.pointer] = element.start
        last[group] = element
    return result


def _window(old: Document, new: Document, edits: Sequence[Edit]) -> tuple[int, int]:
    """How many leading and trailing elements the validator may skip.

    When ``new`` was re-parsed from ``old`` (``reused_elements``), its first
    ``prefix`` elements are ``old``'s and its last ``suffix`` are ``old``'s shifted
    by the length delta. If every edit lies between the two runs, the full
    validator provably passes on them: each is untouched, maps to its own copy
    (nothing else starts at its mapped offset: the prefix ends before the first
    edit, the suffix starts after the last), keeps its parent, and its list
    container maps to its own copy. Both runs end / start at a top-level heading,
    where list containers restart, so the containers of the middle window are
    those of the whole document, and old and new window ids (offsets between the
    runs) never collide with the runs' ids. ``(0, 0)`` (validate everything)
    whenever one of these conditions cannot be confirmed.
    """
    prefix, suffix = reused_elements(old, new)
    if not prefix and not suffix:
        return 0, 0
    old_count, new_count = len(old.elements), len(new.elements)
    if prefix + suffix > min(old_count, new_count):
        return 0, 0
    heading = ElementKind.HEADING
    if prefix:
        if prefix >= old_count or prefix >= new_count:
            return 0, 0
        old_first, new_first = old.elements[prefix], new.elements[prefix]
        if old_first.kind is not heading or new_first.kind is not heading or old_first.start != new_first.start:
            return 0, 0
        if old_first.start > edits[0].start:
            return 0, 0
    if suffix:
        old_last, new_last = old.elements[old_count - suffix], new.elements[new_count - suffix]
        if old_last.kind is not heading or new_last.kind is not heading:
            return 0, 0
        delta = len(new.text) - len(old.text)
        if old_last.start + delta != new_last.start or old_last.start < max(edit.end for edit in edits):
            return 0, 0
    for edit in edits:  # the container checks look structured targets up in the window only
        if edit.structured and edit.target is not None:
            target_index = old.index_of(edit.target.pointer)
            if target_index is None or target_index < prefix or target_index >= old_count - suffix:
                return 0, 0
    return prefix, suffix


def _same_parent(old: Document, new: Document, mapper: OffsetMapper, old_item: Element, new_item: Element) -> bool:
    """Whether both items have no parent, or parents at corresponding offsets."""
    old_parent = old.get(old_item.parent) if old_item.parent else None
    new_parent = new.get(new_item.parent) if new_item.parent else None
    if old_parent is None or new_parent is None:
        return old_parent is None and new_parent is None
    return mapper.map(old_parent.start) == new_parent.start


def _match_untouched(
    old: Document, new: Document, mapper: OffsetMapper, old_window: Sequence[Element], new_window: Sequence[Element]
) -> dict[str, str]:
    """Old pointer -> new pointer of every untouched element; refuses one that changed."""
    by_start: dict[tuple[int, ElementKind], Element] = {(e.start, e.kind): e for e in new_window}
    survivors: dict[str, str] = {}
    for element in old_window:
        ranges = element.segments or ((element.start, element.end),)
        if any(mapper.touching(start, end) is not None for start, end in ranges):
            continue
        twin = by_start.get((mapper.map(element.start), element.kind))
        if twin is None or (twin.text != element.text and not _lost_its_separator(element, twin, mapper)):
            raise unsupported(
                mapper.nearest(element.start).pointer,
                f"the edit would change the untouched {kind_name(element.kind)} '{element.pointer}'",
            )
        if element.kind is ElementKind.LIST_ITEM and (
            not _same_parent(old, new, mapper, element, twin) or item_depth(twin) != item_depth(element)
        ):
            raise unsupported(
                mapper.nearest(element.start).pointer,
                f"the edit would move the untouched list item '{element.pointer}'",
            )
        survivors[element.pointer] = twin.pointer
    return survivors


def _lost_its_separator(element: Element, twin: Element, mapper: OffsetMapper) -> bool:
    """Whether list item ``element`` changed only by losing the blank line before a deleted child.

    When a blank line separates a parent's own text from its first nested item (``- p`` blank
    ``  - child``), the own text keeps the line break that ends ``- p``: only the one break
    before the child is cut (decision 59). Once the children after that text are deleted, the
    text ends at ``- p`` whatever blank lines stay, so deleting an only nested item was refused
    as a change of the untouched parent (decision 669). Only that loss is forgiven: the twin is
    the old own text minus a tail of one line break and blank lines, and a ``delete`` in the
    batch removed a direct child placed after all of the parent's own text; any other change to
    the parent is still refused.
    """
    if element.kind is not ElementKind.LIST_ITEM or not element.segments:
        return False
    lost = element.text[len(twin.text) :]
    if not element.text.startswith(twin.text) or lost[:1] not in ("\r", "\n") or lost.strip(" \t\r\n"):
        return False
    own_end = element.segments[-1][1]
    return any(
        edit.kind == DELETE
        and edit.target is not None
        and edit.target.parent == element.pointer
        and edit.target.start >= own_end
        for edit in mapper.edits
    )


def _created_by_edit(
    new: Document, mapper: OffsetMapper, new_window: Sequence[Element], matched: set[str]
) -> dict[int, list[Element]]:
    """Edit index -> the new elements inside its text; refuses one that leaks out."""
    created: dict[int, list[Element]] = {}
    for element in new_window:
        if element.pointer in matched:
            continue
        first = element.segments[0][0] if element.segments else element.start
        edit_index = mapper.edit_at_new(first)
        if edit_index is None:
            raise unsupported(mapper.nearest(first).pointer, "the edit would absorb untouched text into a new block")
        _, new_end = mapper.new_range(edit_index)
        if element.kind is ElementKind.LIST_ITEM:  # a list item's own text, not its nested items
            stop = element.segments[0][1] if element.segments else element.end
        else:
            stop = element.end
        while stop > first and new.text[stop - 1] in " \t\r\n":
            stop -= 1
        if stop > new_end:
            raise unsupported(mapper.edits[edit_index].pointer, "the edit would absorb untouched text into a new block")
        created.setdefault(edit_index, []).append(element)
    return created


def validate_structure(old: Document, new: Document, edits: Sequence[Edit]) -> None:
    """Refuse a result whose untouched elements changed or whose new blocks leak (§5.4).

    Only the elements between the runs a re-parse reused (``_window``) are
    compared; the outcome and message equal those of a full comparison.
    """
    prefix, suffix = _window(old, new, edits)
    old_window = old.elements[prefix : len(old.elements) - suffix]
    new_window = new.elements[prefix : len(new.elements) - suffix]
    mapper = OffsetMapper(edits)
    survivors = _match_untouched(old, new, mapper, old_window, new_window)
    created = _created_by_edit(new, mapper, new_window, set(survivors.values()))
    old_containers = _containers(old.text, old_window)
    new_containers = _containers(new.text, new_window)
    allowed = _check_structured(old, new, mapper, created, survivors, old_containers, new_containers)
    _check_containers(old, new, mapper, survivors, old_containers, new_containers, allowed)
    _check_raw_blocks(old, new, mapper)
    check_references(old, new, mapper)


def _check_structured(
    old: Document,
    new: Document,
    mapper: OffsetMapper,
    created: dict[int, list[Element]],
    survivors: dict[str, str],
    old_containers: dict[str, int],
    new_containers: dict[str, int],
) -> dict[str, int]:
    """List and quote edits yield exactly one root element of the target's shape.

    Returns new root item -> the new container it may join (its target's).
    """
    allowed: dict[str, int] = {}
    for edit_index, edit in enumerate(mapper.edits):
        target = edit.target
        if not edit.structured or target is None:
            continue
        items = created.get(edit_index, [])
        if target.kind is ElementKind.BLOCK_QUOTE:
            if len(items) != 1 or items[0].kind is not ElementKind.BLOCK_QUOTE:
                raise unsupported(edit.pointer, "the replacement must remain exactly one block quote")
            continue
        new_pointers = {e.pointer for e in items}
        if any(e.kind is not ElementKind.LIST_ITEM for e in items):
            raise unsupported(edit.pointer, "the fragment would create a block outside the new list item")
        tops = [e for e in items if e.parent is None or e.parent not in new_pointers]
        if len(tops) != 1:
            raise unsupported(edit.pointer, "the fragment must become exactly one list item at the target's depth")
        root = tops[0]
        if item_depth(root) != item_depth(target) or item_marker(new, root) != item_marker(old, target):
            raise unsupported(edit.pointer, "the new item has a different depth, indent or marker style")
        if not _same_parent(old, new, mapper, target, root):
            raise unsupported(edit.pointer, "the new item would get a different parent")
        new_start, new_end = mapper.new_range(edit_index)
        inserted = new.text[new_start:new_end]
        if inserted[: max(root.start - new_start, 0)].strip() or inserted[root.end - new_start :].strip():
            raise unsupported(edit.pointer, "the fragment leaves text outside the new list item")
        # The container the new item must share: the target's (through any surviving sibling).
        mates = [
            survivors[pointer]
            for pointer, container in old_containers.items()
            if container == old_containers[target.pointer] and pointer in survivors
        ]
        if mates:
            allowed[root.pointer] = new_containers[mates[0]]
    return allowed


def _check_containers(
    old: Document,
    new: Document,
    mapper: OffsetMapper,
    survivors: dict[str, str],
    old_containers: dict[str, int],
    new_containers: dict[str, int],
    allowed: dict[str, int],
) -> None:
    """Containers map one to one: no split, no merge, no new item joining an old list."""
    image: dict[int, int] = {}
    reverse: dict[int, int] = {}
    for old_pointer, new_pointer in survivors.items():
        if old_pointer not in old_containers:
            continue
        old_container, new_container = old_containers[old_pointer], new_containers[new_pointer]
        if image.setdefault(old_container, new_container) != new_container or (
            reverse.setdefault(new_container, old_container) != old_container
        ):
            item = old.get(old_pointer)
            raise unsupported(
                mapper.nearest(item.start if item else 0).pointer,
                f"the edit would split or merge the list holding '{old_pointer}'",
            )
    kept = set(survivors.values())
    for new_pointer, container in new_containers.items():
        if new_pointer in kept or container not in reverse:
            continue
        if allowed.get(new_pointer) == container:
            continue
        element = new.get(new_pointer)
        if element is not None and element.parent is not None and element.parent not in kept:
            continue  # nested inside a new item
        raise unsupported(
            mapper.nearest(0).pointer if element is None else mapper.pointer_for_new(element.start),
            _JOINS_LIST,
        )


# CommonMark continues a list across blank lines while the marker style stays the same, so an
# item inserted next to a paragraph that borders a list becomes that list's item (decision 844).
_JOINS_LIST = (
    "the new list item would join an existing list (a list continues across blank lines while the marker "
    "style stays the same): add items to it with insert_before/insert_after on one of its items, or start a "
    "separate list with another marker"
)


# Top-level blocks that are not elements but must survive edits unchanged (§4.2, §5.4).
_RAW_KINDS = {"html_block": "HTML block", "hr": "thematic break"}


def _check_raw_blocks(old: Document, new: Document, mapper: OffsetMapper) -> None:
    """An untouched HTML block or thematic break must reappear as itself at its mapped place.

    Elements are checked above; this catches a new block that swallows raw source,
    e.g. an inserted ``<!-- unclosed`` comment running on into an existing comment.
    """
    kept = set(raw_blocks(new, _RAW_KINDS))
    for start, end, kind in raw_blocks(old, _RAW_KINDS):
        if mapper.touching(start, end) is not None:
            continue
        mapped = mapper.map(start)
        if (mapped, mapped + end - start, kind) not in kept or new.text[mapped : mapped + end - start] != old.text[
            start:end
        ]:
            line = old.lines.line_of(start) + 1
            raise unsupported(
                mapper.nearest(start).pointer, f"the edit would change the untouched {_RAW_KINDS[kind]} at line {line}"
            )
