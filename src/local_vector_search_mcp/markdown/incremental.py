"""Element building, full and incremental (the kb_patch path).

A full parse (:func:`build_state`) scans every top-level block into a record
(``scan.py``), assembles and numbers the elements (``assemble.py``,
``numbering.py``) and hashes them (``elements.py``). It yields exactly what the
reference builder in ``tests/markdown/reference_builder.py`` yields (a property
test holds them equal), and keeps a :class:`BlockState` for later re-parses.

Incremental re-parse (:func:`reparse`). CommonMark block structure restarts at
a top-level block that starts after a blank line when the block before it cannot
continue past a blank line (not a list, fence, indented code, HTML block or
front matter): the text from there on parses the same on its own. For an edit
of the old range ``[edit_start, edit_end)`` the last such cut at or before the
edit and the first after it are found in the old document; only the new text
between them is parsed, and the seam is checked in the new text (the cut line
still follows a blank line and the re-parsed region does not end in a
continuable block), else the region widens, up to a full parse. Records before
and after are reused (line-shifted). Assembly re-runs from the heading that
opens the section of the first changed block, with the section state saved at
that heading, until a heading after the edit where the state (root count, open
headings with their child counts and titles) equals the one saved in the old
document: from there on the old elements are reused, shifted by the length
delta. Historical paragraph ordinals are recomputed the same way, from a chunk
the old computation started afresh to one after the edit where it again started
afresh.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .assemble import Assembler, SectionState
from .elements import finish_run, shifted, with_section_end
from .front_matter import TOML_FENCE
from .links import LinkSource, link_source
from .model import Document, Element
from .numbering import LineRange, historical_ranges, is_chunk_cut
from .scan import NO_RESTART, PARSER_HEAD, PARSER_REST, BlockRecord, is_blank, scan_blocks
from .source import LineIndex

__all__ = ["BlockState", "build_state", "raw_blocks", "reparse", "reused_elements"]

_BREAK_RE = re.compile(r"\r\n|\r|\n")
# What front matter's opening fence starts with, YAML's and TOML's (decisions 830, 1026).
_FENCES = ("---", TOML_FENCE)
# Widening a region whose seam does not hold is retried this often before the
# region simply runs to the end of the text.
_SEAM_ATTEMPTS = 6


@dataclass(frozen=True, slots=True)
class BlockState:
    """What an incremental re-parse needs of a parsed document (kept on ``Document``)."""

    first_lines: list[int]  # absolute first line of every top-level block
    records: list[BlockRecord]
    first_elements: list[int]  # index of the block's first element
    section_states: list[SectionState | None]  # section state before a heading block
    has_tables: bool
    history: list[LineRange] | None  # historical paragraph ranges (only with tables)
    regions: list[LineRange] | None  # line ranges re-parsed without tables
    # Set by ``reparse``: the sourceHash of the document this one was re-parsed
    # from, and how many of its leading elements were reused as they are and how
    # many trailing ones were reused shifted (``reused_elements``).
    base: str | None = None
    reused: tuple[int, int] = (0, 0)
    # Set by a full parse only: what link extraction needs of the block tokens (``links.py``),
    # so indexing a document never parses its blocks twice.
    link_source: LinkSource | None = None


Built = tuple[tuple[Element, ...], frozenset[str], BlockState]


def raw_blocks(doc: Document, kinds: Collection[str]) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of the document's top-level blocks of ``kinds`` (markdown-it token
    types: ``html_block``, ``hr``), which are no elements (§4.2), trailing blank lines trimmed."""
    state = doc._state
    if not isinstance(state, BlockState):  # pragma: no cover - every parse keeps its block state
        return []
    text, lines = doc.text, doc.lines
    found = []
    for block_first, record in zip(state.first_lines, state.records, strict=True):
        if record.kind not in kinds:
            continue
        last = block_first + max(record.line_count, 1) - 1
        while last > block_first and not text[lines.start_of(last) : lines.ends[last]].strip():
            last -= 1
        found.append((lines.start_of(block_first), lines.ends[last], record.kind))
    return found


def build_state(text: str, lines: LineIndex) -> Built:
    """Full parse: elements, reserved pointers and the state for later re-parses."""
    env: dict[str, object] = {}
    tokens = PARSER_HEAD.parse(text, env)
    first_lines, records = scan_blocks(tokens, text, lines, 0)
    has_tables = any(record.has_table for record in records)
    history = regions = None
    if has_tables:
        history, regions, _ = historical_ranges(text, lines, first_lines, records, 0, len(first_lines) + 1)
    assembler = Assembler(text, lines, (0, ()))
    for block_first, record in zip(first_lines, records, strict=True):
        assembler.add_block(block_first, record)
    assembler.assign_paragraphs(history)
    elements, _ = finish_run(text, assembler, [], None, 0, _no_old_end)
    state = BlockState(
        first_lines,
        records,
        assembler.first_elements,
        assembler.states,
        has_tables,
        history,
        regions,
        link_source=link_source(tokens, env),
    )
    return tuple(elements), frozenset(assembler.reserved), state


def _no_old_end(key: str) -> int:  # pragma: no cover - only called when a run stops at a sync point
    raise AssertionError(key)


def reused_elements(old: Document, new: Document) -> tuple[int, int]:
    """``(prefix, suffix)``: ``new`` was re-parsed from ``old`` and reuses its first
    ``prefix`` elements unchanged (same pointer, kind, span, text and parent; an
    open heading's section end may differ) and its last ``suffix`` elements shifted
    by the length delta. A non-empty prefix is followed, and a non-empty suffix
    starts, with a top-level heading in both documents. ``(0, 0)`` when unknown."""
    state = new._state
    if not isinstance(state, BlockState) or state.base != old.source_hash:
        return 0, 0
    return state.reused


# -- the re-parsed window ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Window:
    """Blocks ``[first_block, old_resume)`` of the old document were re-parsed into
    ``first_lines``/``records``; old blocks from ``old_resume`` on are reused, moved
    by ``line_shift`` lines."""

    first_block: int
    old_resume: int
    lines: LineIndex  # of the new text
    first_lines: list[int]
    records: list[BlockRecord]
    line_shift: int


def _restart_block(old: Document, state: BlockState, new_text: str, edit_start: int) -> int:
    """The block the re-parse starts at: the last restartable cut at or before the edit."""
    text, lines = old.text, old.lines
    first_lines, records = state.first_lines, state.records

    def restartable(block: int) -> bool:
        first = first_lines[block]
        if not (first > 0 and records[block - 1].kind not in NO_RESTART and is_blank(text, lines, first - 1)):
            return False
        # Inserting "\n" right after a "\r" would merge two breaks into one.
        start = lines.starts[first]
        return start < edit_start or not (text[start - 1] == "\r" and new_text.startswith("\n", start))

    block = bisect_right(first_lines, lines.line_of(edit_start)) - 1
    while block > 0 and not restartable(block):
        block -= 1
    if text.startswith(_FENCES) and records[0].kind != "front_matter":
        block = 0  # an unclosed front matter opener: a later edit may close it
    return max(block, 0)


def _reparse_window(old: Document, state: BlockState, new_text: str, edit_start: int, edit_end: int) -> _Window | None:
    text, lines = old.text, old.lines
    first_lines, records = state.first_lines, state.records
    block_count = len(first_lines)
    delta = len(new_text) - len(text)

    def is_cut(block: int) -> bool:
        first = first_lines[block]
        return first > 0 and records[block - 1].kind not in NO_RESTART and is_blank(text, lines, first - 1)

    first_block = _restart_block(old, state, new_text, edit_start)
    window_first_line = first_lines[first_block] if first_block > 0 else 0
    window_start = lines.starts[window_first_line]
    resume = max(bisect_right(first_lines, lines.line_of(edit_end)), first_block + 1)
    for attempt in range(_SEAM_ATTEMPTS):
        # The first cut whose preceding blank line lies wholly after the edit.
        while resume < block_count and not (is_cut(resume) and lines.starts[first_lines[resume] - 1] >= edit_end):
            resume += 1
        if attempt == _SEAM_ATTEMPTS - 1:  # pragma: no cover - seams rarely fail five times
            resume = block_count
        resume_line = first_lines[resume] if resume < block_count else lines.count
        window_end = lines.starts[resume_line] + delta if resume < block_count else len(new_text)
        window_starts = [window_start]
        window_ends: list[int] = []
        for line_break in _BREAK_RE.finditer(new_text, window_start, window_end):
            window_ends.append(line_break.start())
            window_starts.append(line_break.end())
        if resume < block_count:
            # The seam: the window must end with a line break, after a blank line.
            if not window_ends or window_starts[-1] != window_end:
                resume += 1
                continue
            window_starts.pop()
            if new_text[window_starts[-1] : window_ends[-1]].strip(" \t"):
                resume += 1
                continue
        else:
            window_ends.append(len(new_text))
        line_shift = window_first_line + len(window_starts) - resume_line
        new_lines = LineIndex(
            lines.starts[:window_first_line]
            + tuple(window_starts)
            + tuple([start + delta for start in lines.starts[resume_line:]]),
            lines.ends[:window_first_line]
            + tuple(window_ends)
            + tuple([end + delta for end in lines.ends[resume_line:]]),
            len(new_text),
        )
        parser = PARSER_HEAD if window_first_line == 0 else PARSER_REST
        tokens = parser.parse(new_text[window_start:window_end])
        window_first_lines, window_records = scan_blocks(tokens, new_text, new_lines, window_first_line)
        if resume < block_count and window_records and window_records[-1].kind in NO_RESTART:
            resume += 1  # the last re-parsed block might run on into the reused ones
            continue
        front_matter_closed = bool(window_records) and window_records[0].kind == "front_matter"
        if resume < block_count and window_first_line == 0 and new_text.startswith(_FENCES) and not front_matter_closed:
            resume = block_count  # an unclosed front matter opener may close anywhere later
            continue
        return _Window(first_block, resume, new_lines, window_first_lines, window_records, line_shift)
    return None  # pragma: no cover - the last attempt always parses to the end


# -- historical paragraph ranges ----------------------------------------------------------


def _inside(regions: list[LineRange], line: int) -> LineRange | None:
    """The region strictly containing ``line`` (not at its first line), if any."""
    region_index = bisect_right(regions, (line, -1)) - 1
    if region_index >= 0 and regions[region_index][0] < line < regions[region_index][1]:
        return regions[region_index]
    return None


def _shift_ranges(ranges: Sequence[LineRange], line_shift: int) -> list[LineRange]:
    return [(first + line_shift, end + line_shift) for first, end in ranges]


def _update_history(
    old: Document,
    state: BlockState,
    window: _Window,
    new_text: str,
    new_first_lines: list[int],
    new_records: list[BlockRecord],
) -> tuple[list[LineRange], list[LineRange], int]:
    """Historical ranges and regions of the new document, and the new block from
    which on the old ones were reused (the block count when none were)."""
    new_block_count = len(new_first_lines)
    new_lines = window.lines
    if state.history is None or state.regions is None:
        history, regions, _ = historical_ranges(
            new_text, new_lines, new_first_lines, new_records, 0, new_block_count + 1
        )
        return history, regions, new_block_count
    text, lines = old.text, old.lines
    first_lines, records = state.first_lines, state.records
    old_history, old_regions = state.history, state.regions
    # Restart at a chunk start before the window that the old computation did
    # not reach from inside a wider re-parsed region (blocks before the window
    # are the same in both documents).
    block = window.first_block - 1
    while block > 0 and not is_chunk_cut(text, lines, first_lines, records, block):
        block -= 1
    block = max(block, 0)
    while block > 0:
        region = _inside(old_regions, first_lines[block])
        if region is None:
            break
        block = bisect_left(first_lines, region[0]) if region[0] else 0
    start_line = first_lines[block] if block else 0
    window_end = window.first_block + len(window.first_lines)  # first new block after the window
    block_shift = window_end - window.old_resume

    def can_stop(chunk_start: int) -> bool:
        # After the window, at a chunk start the old computation also started afresh.
        return chunk_start > window_end and _inside(old_regions, first_lines[chunk_start - block_shift]) is None

    found, new_regions, stopped = historical_ranges(
        new_text, new_lines, new_first_lines, new_records, block, new_block_count + 1, can_stop
    )
    history = old_history[: bisect_left(old_history, (start_line, -1))] + found
    regions = old_regions[: bisect_left(old_regions, (start_line, -1))] + new_regions
    if stopped < new_block_count:
        old_line = first_lines[stopped - block_shift]
        history += _shift_ranges(old_history[bisect_left(old_history, (old_line, -1)) :], window.line_shift)
        regions += _shift_ranges(old_regions[bisect_left(old_regions, (old_line, -1)) :], window.line_shift)
    return history, regions, stopped


# -- re-parse -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Run:
    """The blocks re-assembled: ``[heading_block, sync_block)`` of the new document."""

    assembler: Assembler
    heading_block: int  # the heading opening the section of the first changed block (0 if none)
    at_heading: bool  # False: the run starts at the document start
    start_state: SectionState
    sync_block: int  # from here on old elements are reused (the block count if none are)


def _assemble_run(
    state: BlockState,
    new_text: str,
    new_lines: LineIndex,
    new_first_lines: list[int],
    new_records: list[BlockRecord],
    first_block: int,
    window_end: int,
    block_shift: int,
    history: list[LineRange] | None,
    history_synced: int,
) -> _Run:
    """Assembly restarts at the heading opening the section of the first changed
    block, from the section state saved there, and stops at a heading after the
    window where the state equals the one the old document had there (numbering
    from there on is unchanged), once the historical ranges are in sync too."""
    heading_block = first_block - 1
    while heading_block >= 0 and state.section_states[heading_block] is None:
        heading_block -= 1
    start_state: SectionState = (0, ())
    at_heading = heading_block >= 0
    if at_heading:
        start_state = state.section_states[heading_block] or start_state
    else:
        heading_block = 0
    assembler = Assembler(new_text, new_lines, start_state)
    new_block_count = len(new_first_lines)
    sync_block = new_block_count
    for block in range(heading_block, new_block_count):
        if block >= window_end and block >= history_synced:
            old_state = state.section_states[block - block_shift]
            if old_state is not None and assembler.state() == old_state:
                sync_block = block
                break
        assembler.add_block(new_first_lines[block], new_records[block])
    run_first_line = new_first_lines[heading_block] if at_heading else 0
    run_end_line = new_first_lines[sync_block] if sync_block < new_block_count else new_lines.count
    run_history = None
    if history is not None:
        run_history = history[bisect_left(history, (run_first_line, -1)) : bisect_left(history, (run_end_line, -1))]
    assembler.assign_paragraphs(run_history)
    return _Run(assembler, heading_block, at_heading, start_state, sync_block)


def reparse(
    old: Document, state: BlockState, new_text: str, edit_start: int, edit_end: int
) -> tuple[tuple[Element, ...], frozenset[str], LineIndex, BlockState] | None:
    """Elements of ``new_text``, which is ``old.text`` with ``[edit_start, edit_end)`` replaced.

    ``None`` when the region cannot be bounded (the caller then parses fully).
    """
    if not state.first_lines:
        return None
    window = _reparse_window(old, state, new_text, edit_start, edit_end)
    if window is None:  # pragma: no cover - the last attempt always parses to the end
        return None
    first_block, old_resume = window.first_block, window.old_resume
    new_first_lines = (
        state.first_lines[:first_block]
        + window.first_lines
        + [first + window.line_shift for first in state.first_lines[old_resume:]]
    )
    new_records = state.records[:first_block] + window.records + state.records[old_resume:]
    window_end = first_block + len(window.first_lines)  # first new block after the window
    block_shift = window_end - old_resume  # new block index minus old, after the window
    has_tables = any(record.has_table for record in new_records)
    history: list[LineRange] | None = None
    regions: list[LineRange] | None = None
    history_synced = 0  # the first new block from which on old historical ranges were reused
    if has_tables:
        history, regions, history_synced = _update_history(old, state, window, new_text, new_first_lines, new_records)
    run = _assemble_run(
        state,
        new_text,
        window.lines,
        new_first_lines,
        new_records,
        first_block,
        window_end,
        block_shift,
        history,
        history_synced,
    )
    spliced = _splice(old, state, new_text, window.lines, new_first_lines, new_records, run, block_shift)
    if spliced is None:  # pragma: no cover - saved state always names old headings
        return None
    elements, reserved, first_elements, section_states, reused = spliced
    new_state = BlockState(
        new_first_lines,
        new_records,
        first_elements,
        section_states,
        has_tables,
        history,
        regions,
        old.source_hash,
        reused,
    )
    return elements, reserved, window.lines, new_state


def _splice(
    old: Document,
    state: BlockState,
    new_text: str,
    new_lines: LineIndex,
    new_first_lines: list[int],
    new_records: list[BlockRecord],
    run: _Run,
    block_shift: int,
) -> tuple[tuple[Element, ...], frozenset[str], list[int], list[SectionState | None], tuple[int, int]] | None:
    """The old prefix (open headings re-ended), the run's elements and the old
    suffix shifted; with the reserved set, the per-block element starts and
    section states, and how many elements were reused on each side."""
    delta = len(new_text) - len(old.text)
    old_elements = old.elements
    heading_block, sync_block = run.heading_block, run.sync_block
    new_block_count = len(new_first_lines)
    # Headings open at the restart (``(level, element index, key)``): their
    # sections may now end elsewhere.
    prefix_open: list[tuple[int, int, str]] = []
    for level, key, _, _ in run.start_state[1]:
        element_index = old.index_of(key)
        if element_index is None:  # pragma: no cover - saved state always names old headings
            return None
        prefix_open.append((level, element_index, key))

    def old_section_end(key: str) -> int:
        element_index = old.index_of(key)
        end = old_elements[element_index].section_end if element_index is not None else None
        if end is None:  # pragma: no cover - synced headings exist in the old document
            raise AssertionError(key)
        return end + delta

    stop_start: int | None = None
    stop_level = 0
    if sync_block < new_block_count:
        _, heading_first, _, heading_level, _ = new_records[sync_block].ops[0]
        stop_start = new_lines.starts[new_first_lines[sync_block] + heading_first]
        stop_level = heading_level
    assembler = run.assembler
    run_elements, prefix_ends = finish_run(new_text, assembler, prefix_open, stop_start, stop_level, old_section_end)

    block_count = len(state.first_lines)
    prefix_length = state.first_elements[heading_block] if heading_block < block_count else len(old_elements)
    prefix = list(old_elements[:prefix_length])
    for _, element_index, _ in prefix_open:
        prefix[element_index] = with_section_end(new_text, prefix[element_index], prefix_ends[element_index])
    suffix: Sequence[Element] = ()
    first_elements = state.first_elements[:heading_block] + [
        element_index + prefix_length for element_index in assembler.first_elements
    ]
    section_states = state.section_states[:heading_block] + assembler.states
    # Sections the run re-numbered: their old reserved pointers are recomputed.
    renumbered: set[str] = set() if run.at_heading else {""}
    old_sync_block = sync_block - block_shift if sync_block < new_block_count else block_count
    for block in range(heading_block, old_sync_block):
        if state.section_states[block] is not None:
            renumbered.add(old_elements[state.first_elements[block]].pointer)
    if sync_block < new_block_count:
        old_sync_element = state.first_elements[old_sync_block]
        reused = old_elements[old_sync_element:]
        suffix = reused if delta == 0 else shifted(reused, delta)
        element_shift = prefix_length + len(run_elements) - old_sync_element
        first_elements += [element_index + element_shift for element_index in state.first_elements[old_sync_block:]]
        section_states += state.section_states[old_sync_block:]
    elements = (*prefix, *run_elements, *suffix)
    reserved = {pointer for pointer in old.reserved if pointer.rpartition(".")[0] not in renumbered}
    reserved |= assembler.reserved
    return elements, frozenset(reserved), first_elements, section_states, (prefix_length, len(suffix))
