"""From drafts to hashed :class:`Element` values (contract §3.3, §4.4).

Section ends are resolved here: a heading's section runs to the next heading
of the same or a higher level, or to the end of the text. When an incremental
re-parse stops before the end, headings still open at the stop take their end
from the stop point or from the old document (:func:`finish_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .assemble import Assembler, Draft
from .hashing import segments_hash, span_hash
from .kinds import ElementKind
from .model import Element

__all__ = ["finish_run", "shifted", "with_section_end"]

Span = tuple[int, int]


def _own_segments(text: str, draft: Draft) -> tuple[Span, ...]:
    """A list item's range minus its direct children: the break before a child is
    cut from the preceding segment and the break after a child skipped (§4.4)."""
    segments: list[Span] = []
    pos = draft.start
    for child in draft.children:
        cut = child.start
        if cut - 2 >= pos and text.startswith("\r\n", cut - 2):
            cut -= 2
        elif cut - 1 >= pos and text[cut - 1] in "\r\n":
            cut -= 1
        if cut > pos:
            segments.append((pos, cut))
        pos = max(pos, child.end)
        if text.startswith("\r\n", pos):
            pos += 2
        elif pos < len(text) and text[pos] in "\r\n":
            pos += 1
    if draft.end > pos:
        segments.append((pos, draft.end))
    return tuple(segments)


def _element(text: str, draft: Draft, section_end: int | None) -> Element:
    if draft.kind is ElementKind.LIST_ITEM:
        segments = _own_segments(text, draft)
        parts = [text[start:end] for start, end in segments]
        own = "".join(parts)
        self_hash = segments_hash(parts)
        subtree = span_hash(text[draft.start : draft.end]) if draft.children else self_hash
    else:
        segments = ((draft.start, draft.end),)
        own = text[draft.start : draft.end]
        self_hash = span_hash(own)
        subtree = self_hash
    if section_end is not None:
        subtree = span_hash(text[draft.start : section_end])
    return Element(
        draft.pointer,
        draft.kind,
        draft.start,
        draft.end,
        segments,
        own,
        self_hash,
        subtree,
        draft.heading_path,
        draft.level,
        section_end,
        draft.parent.pointer if draft.parent is not None else None,
        draft.title,
    )


def with_section_end(text: str, heading: Element, section_end: int) -> Element:
    """``heading`` (unchanged otherwise) whose section now ends at ``section_end``."""
    return Element(
        heading.pointer,
        heading.kind,
        heading.start,
        heading.end,
        heading.segments,
        heading.text,
        heading.self_hash,
        span_hash(text[heading.start : section_end]),
        heading.heading_path,
        heading.level,
        section_end,
        heading.parent,
        heading.title,
    )


def finish_run(
    text: str,
    assembler: Assembler,
    prefix_open: list[tuple[int, int, str]],
    stop_start: int | None,
    stop_level: int,
    old_section_end: Callable[[str], int],
) -> tuple[list[Element], dict[int, int]]:
    """Elements of the assembled run, and the new section ends of the
    ``prefix_open`` headings ``(level, element index, key)`` open when it started.

    The run stops at the end of the text (``stop_start`` None) or right before a
    heading at ``stop_start`` of level ``stop_level`` after which the old document
    is reused: headings still open there end at it (same or deeper level) or
    where they ended before (shifted by ``old_section_end``).
    """
    drafts = assembler.drafts
    run_ends: dict[int, int] = {}  # draft index -> section end
    prefix_ends: dict[int, int] = {}  # prefix element index -> section end
    # (level, index, index is in the prefix, key) of the headings whose section is open.
    open_headings: list[tuple[int, int, bool, str]] = [(level, index, True, key) for level, index, key in prefix_open]
    for draft_index, draft in enumerate(drafts):
        if draft.kind is ElementKind.HEADING and draft.level is not None:
            while open_headings and open_headings[-1][0] >= draft.level:
                _, index, in_prefix, _ = open_headings.pop()
                (prefix_ends if in_prefix else run_ends)[index] = draft.start
            open_headings.append((draft.level, draft_index, False, draft.pointer))
    for level, index, in_prefix, key in open_headings:
        if stop_start is None:
            end = len(text)
        elif level >= stop_level:
            end = stop_start
        else:
            end = old_section_end(key)
        (prefix_ends if in_prefix else run_ends)[index] = end
    elements = [_element(text, draft, run_ends.get(draft_index)) for draft_index, draft in enumerate(drafts)]
    return elements, prefix_ends


def shifted(elements: Sequence[Element], delta: int) -> list[Element]:
    """Copies of ``elements`` moved by ``delta`` (the suffix a re-parse reuses).

    The hot loop of a re-parse near the start of a big document: a single-range
    ``segments`` (every kind but a parent list item) is rebuilt without a
    generator, and the constructor is bound locally.
    """
    make = Element
    out: list[Element] = []
    append = out.append
    for element in elements:
        segments = element.segments
        if len(segments) == 1:
            ((start, end),) = segments
            moved: tuple[Span, ...] = ((start + delta, end + delta),)
        else:
            moved = tuple([(start + delta, end + delta) for start, end in segments])
        section_end = element.section_end
        append(
            make(
                element.pointer,
                element.kind,
                element.start + delta,
                element.end + delta,
                moved,
                element.text,
                element.self_hash,
                element.subtree_hash,
                element.heading_path,
                element.level,
                None if section_end is None else section_end + delta,
                element.parent,
                element.title,
            )
        )
    return out
