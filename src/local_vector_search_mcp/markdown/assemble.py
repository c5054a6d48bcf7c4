"""Phase 2 of element building: number the block records' elements per section.

:class:`Assembler` walks block records (``scan.py``) in order, from a saved
:data:`SectionState`, and makes one :class:`Draft` per element: heading keys
(``1``, ``1.2``), per-section leaf counters (``p``, ``code``, ``li``, ``t``,
``q``), nested item pointers and heading paths. The section state before every
heading is kept, so an incremental re-parse can restart at a heading and stop
where the new state equals the old one. Paragraph ordinals are left to
:func:`numbering.paragraph_pointers`; hashing to ``elements.py``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from .kinds import ElementKind
from .numbering import LineRange, paragraph_pointers, section_prefix
from .pointers import FRONT_MATTER
from .scan import OP_CODE, OP_HEADING, OP_ITEM, OP_PARAGRAPH, OP_QUOTE, OP_TABLE, PARAGRAPH_FOOTNOTE, BlockRecord
from .source import LineIndex

__all__ = ["Assembler", "Draft", "SectionState"]

# The section state at a point of the document: the count of root headings and
# the open headings as ``(level, key, title, child count)``, outermost first.
SectionState = tuple[int, tuple[tuple[int, str, str, int], ...]]

# Block ops that become one element spanning their lines, with the leaf name of
# their pointer (front matter has a fixed pointer instead).
_SIMPLE_KINDS = {
    OP_TABLE: (ElementKind.TABLE, "t"),
    OP_QUOTE: (ElementKind.BLOCK_QUOTE, "q"),
}


class Draft:
    """An element before hashing; list items link to their parent and children."""

    __slots__ = (
        "child_count",
        "children",
        "end",
        "first_line",
        "heading_path",
        "kind",
        "level",
        "parent",
        "pointer",
        "section",
        "start",
        "title",
    )

    def __init__(
        self, kind: ElementKind, start: int, end: int, pointer: str, section: str, heading_path: str | None
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.pointer = pointer
        self.section = section
        self.heading_path = heading_path
        self.level: int | None = None
        self.title: str | None = None
        self.parent: Draft | None = None
        self.children: list[Draft] = []
        self.child_count = 0  # nested items numbered so far
        self.first_line = -1  # a list item's first line


@dataclass(slots=True)
class _OpenHeading:
    level: int
    key: str
    title: str
    child_count: int


def _after_marker(text: str, lines: LineIndex, pos: int) -> int:
    """Offset of the content after the list marker at or after ``pos``."""
    end = lines.line_end(pos)
    while pos < end and text[pos] in " \t":
        pos += 1
    if pos < end and text[pos] in "-+*":
        pos += 1
    else:
        while pos < end and text[pos].isdigit():
            pos += 1
        if pos < end and text[pos] in ".)":
            pos += 1
    while pos < end and text[pos] in " \t":
        pos += 1
    return pos


class Assembler:
    """Phase 2 over a run of blocks, from a saved section state."""

    def __init__(self, text: str, lines: LineIndex, state: SectionState) -> None:
        self.text = text
        self.lines = lines
        self.root_count, open_headings = state
        self.open_headings = [_OpenHeading(*heading) for heading in open_headings]
        self.heading_path: str | None = (
            " > ".join(heading.title for heading in self.open_headings) if self.open_headings else None
        )
        self.section = self.open_headings[-1].key if self.open_headings else ""
        self.counters: dict[str, int] = {}
        self.drafts: list[Draft] = []
        self.reserved: set[str] = set()
        # (section, first line, end line, element or None if hidden) of every counted paragraph.
        self.paragraphs: list[tuple[str, int, int, Draft | None]] = []
        self.footnotes: list[int] = []  # positions in ``paragraphs`` of footnote definitions (decision 1194)
        self.heading_lines: list[int] = []
        self.heading_keys: list[str] = []
        self.first_elements: list[int] = []  # per block: index of its first draft
        self.states: list[SectionState | None] = []  # per block: the state before it, if a heading

    def state(self) -> SectionState:
        return self.root_count, tuple(
            (heading.level, heading.key, heading.title, heading.child_count) for heading in self.open_headings
        )

    def _next_leaf(self, leaf: str) -> str:
        number = self.counters.get(leaf, 0) + 1
        self.counters[leaf] = number
        return f"{section_prefix(self.section)}{leaf}{number}"

    def _open_heading(self, level: int, title: str, line: int) -> str:
        open_headings = self.open_headings
        while open_headings and open_headings[-1].level >= level:
            open_headings.pop()
        if open_headings:
            parent = open_headings[-1]
            parent.child_count += 1
            key = f"{parent.key}.{parent.child_count}"
        else:
            self.root_count += 1
            key = str(self.root_count)
        open_headings.append(_OpenHeading(level, key, title, 0))
        self.heading_path = " > ".join(heading.title for heading in open_headings)
        self.section = key
        self.counters = {}
        self.heading_lines.append(line)
        self.heading_keys.append(key)
        return key

    def _new(self, kind: ElementKind, start: int, end: int, pointer: str) -> Draft:
        draft = Draft(kind, start, end, pointer, self.section, self.heading_path)
        self.drafts.append(draft)
        return draft

    def add_block(self, block_first: int, record: BlockRecord) -> None:
        """The drafts of one block record whose first line is ``block_first``."""
        self.first_elements.append(len(self.drafts))
        starts, ends = self.lines.starts, self.lines.ends
        items: list[Draft] = []  # the block's visible list items, numbered as in its ops
        state_before: SectionState | None = None
        for code, first_rel, end_rel, arg, title in record.ops:
            first = first_rel + block_first
            if code == OP_PARAGRAPH:
                end = end_rel + block_first
                draft = self._new(ElementKind.PARAGRAPH, starts[first], ends[end - 1], "") if arg else None
                if arg == PARAGRAPH_FOOTNOTE:
                    self.footnotes.append(len(self.paragraphs))
                self.paragraphs.append((self.section, first, end, draft))
            elif code == OP_ITEM:
                items.append(self._add_item(first, end_rel, block_first, items[arg] if arg >= 0 else None))
            elif code == OP_CODE:
                pointer = self._next_leaf("code")
                if arg:
                    self._new(ElementKind.CODE_BLOCK, starts[first], ends[end_rel + block_first - 1], pointer)
                else:  # hidden in a container: its pointer is reserved
                    self.reserved.add(pointer)
            elif code == OP_HEADING:
                state_before = self.state()
                key = self._open_heading(arg, title, first)
                draft = self._new(ElementKind.HEADING, starts[first], ends[end_rel + block_first - 1], key)
                draft.level = arg
                draft.title = title
            elif code in _SIMPLE_KINDS:
                kind, leaf = _SIMPLE_KINDS[code]
                self._new(kind, starts[first], ends[end_rel + block_first - 1], self._next_leaf(leaf))
            else:  # OP_FRONT_MATTER
                self._new(ElementKind.FRONT_MATTER, starts[first], ends[end_rel + block_first - 1], FRONT_MATTER)
        self.states.append(state_before)

    def _add_item(self, first: int, end_rel: int, block_first: int, parent: Draft | None) -> Draft:
        if parent is not None:
            parent.child_count += 1
            pointer = f"{parent.pointer}.li{parent.child_count}"
        else:
            pointer = self._next_leaf("li")
        start = self.lines.starts[first]
        if parent is not None and parent.first_line == first:
            # ``- - a``: the nested item starts at its own marker, on its parent's line.
            start = _after_marker(self.text, self.lines, parent.start)
        draft = self._new(ElementKind.LIST_ITEM, start, start, pointer)
        draft.first_line = first
        if end_rel >= 0:
            draft.end = max(start, self.lines.ends[end_rel + block_first - 1])
        draft.parent = parent
        if parent is not None:
            parent.children.append(draft)
        return draft

    def _section_at(self, line: int) -> str:
        heading_index = bisect_right(self.heading_lines, line) - 1
        return self.heading_keys[heading_index] if heading_index >= 0 else ""

    def assign_paragraphs(self, history: Iterable[LineRange] | None) -> None:
        """§4.6 ordinals for the paragraphs of this run (``history``: its historical ranges)."""
        pointers, reserved = paragraph_pointers(
            [(section, first, end) for section, first, end, _ in self.paragraphs],
            history,
            self._section_at,
            self.footnotes,
        )
        self.reserved |= reserved
        for (_, _, _, draft), pointer in zip(self.paragraphs, pointers, strict=True):
            if draft is None:
                self.reserved.add(pointer)
            else:
                draft.pointer = pointer
