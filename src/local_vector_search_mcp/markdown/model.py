"""The element model: addressable elements of one parsed document (contract §4).

``Document`` is immutable by convention: parsed documents are shared through
the parse cache, so callers must never mutate them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from .kinds import ElementKind
from .pointers import format_anchor
from .source import LineIndex

__all__ = ["Document", "Element", "ElementKind"]


@dataclass(frozen=True, slots=True)
class Element:
    """One addressable element.

    ``start``/``end`` is the physical span in ``Document.text`` (the subtree
    range for a list item; the heading line(s) for a heading), final line
    break excluded. ``segments`` are the own ranges ``self_hash`` covers; for
    every kind but a parent list item that is the single range ``(start, end)``.
    """

    pointer: str
    kind: ElementKind
    start: int
    end: int
    segments: tuple[tuple[int, int], ...]
    text: str
    self_hash: str
    subtree_hash: str
    heading_path: str | None = None
    level: int | None = None
    section_end: int | None = None
    parent: str | None = None
    title: str | None = None

    @property
    def anchor(self) -> str:
        """Canonical v2 anchor ``logical~self~subtree``."""
        return format_anchor(self.pointer, self.self_hash, self.subtree_hash)


@dataclass(frozen=True, eq=False)
class Document:
    """A decoded Markdown file and its elements in source (pre-)order."""

    text: str
    bom: bool
    eol: str
    source_hash: str
    elements: tuple[Element, ...]
    reserved: frozenset[str]
    lines: LineIndex = field(repr=False)
    _by_pointer: Mapping[str, int] = field(repr=False, default_factory=lambda: MappingProxyType({}))
    # Parser state for incremental re-parses of an edited version (``incremental.BlockState``).
    _state: object = field(repr=False, default=None)

    @classmethod
    def create(
        cls,
        *,
        text: str,
        bom: bool,
        eol: str,
        source_hash: str,
        elements: tuple[Element, ...],
        reserved: frozenset[str],
        lines: LineIndex,
        state: object = None,
    ) -> Document:
        index = MappingProxyType({e.pointer: i for i, e in enumerate(elements)})
        return cls(text, bom, eol, source_hash, elements, reserved, lines, index, state)

    @cached_property
    def readable(self) -> tuple[Element, ...]:
        """Elements with a non-empty span: what ``kb_read`` pages over (§7.1)."""
        return tuple(e for e in self.elements if e.end > e.start)

    @cached_property
    def _readable_index(self) -> dict[str, int]:
        return {e.pointer: i for i, e in enumerate(self.readable)}

    def readable_index(self, pointer: str) -> int | None:
        """Position of an element in ``readable``."""
        return self._readable_index.get(pointer)

    def get(self, pointer: str) -> Element | None:
        """The element at a logical pointer, or ``None``."""
        i = self._by_pointer.get(pointer)
        return None if i is None else self.elements[i]

    def index_of(self, pointer: str) -> int | None:
        """Position of an element in ``elements`` (source order)."""
        return self._by_pointer.get(pointer)

    def is_reserved(self, pointer: str) -> bool:
        return pointer in self.reserved

    def of_kind(self, kind: ElementKind) -> list[Element]:
        return [e for e in self.elements if e.kind is kind]

    @property
    def headings(self) -> list[Element]:
        return self.of_kind(ElementKind.HEADING)

    def children(self, item: Element) -> list[Element]:
        """Direct child items of a list item."""
        return [e for e in self.elements if e.parent == item.pointer]

    def line_start(self, offset: int) -> int:
        """Start of the line containing ``offset``."""
        return self.lines.line_start(offset)

    def line_end(self, offset: int) -> int:
        """End (before its break) of the line containing ``offset``."""
        return self.lines.line_end(offset)

    def break_after(self, offset: int) -> int:
        """Offset just past the line break at ``offset`` (``offset`` itself if none)."""
        if self.text.startswith("\r\n", offset):
            return offset + 2
        if offset < len(self.text) and self.text[offset] in "\r\n":
            return offset + 1
        return offset
