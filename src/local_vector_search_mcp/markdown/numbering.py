"""Paragraph ordinals and their historical rule (contract §4.6).

``pN`` counts the paragraphs of a section. Where a document holds tables, the
ordinals are those a parse *without* the table extension gives, wherever a
paragraph's line range is the same in both parses: pointers written before
tables were recognised keep working. Only the chunks that hold a table are
re-parsed without it. The historical parse also reads a footnote definition
(``[^1]: x``) as the reference definition it was before it became a paragraph
(``footnotes.py``): such a paragraph takes an ordinal after all others. A
chunk is a run of top-level blocks; chunks are cut where a block starts after
a blank line, where block structure cannot depend on earlier lines
(:func:`is_chunk_cut`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence

from markdown_it import MarkdownIt

from .front_matter import front_matter_plugin
from .scan import (
    CONTAINER_CLOSE,
    CONTINUABLE,
    LIST_OPEN,
    OP_PARAGRAPH,
    PARAGRAPH_FOOTNOTE,
    BlockRecord,
    block_only,
    is_blank,
    trimmed_end,
)
from .source import LineIndex

__all__ = ["LineRange", "historical_ranges", "is_chunk_cut", "paragraph_pointers", "section_prefix"]

LineRange = tuple[int, int]

_HISTORICAL_HEAD = block_only(MarkdownIt("commonmark").use(front_matter_plugin))
# A chunk starting later must not mistake a ``---`` line for front matter.
_HISTORICAL = block_only(MarkdownIt("commonmark"))
# What a table's lines must avoid to read as one paragraph without tables (_table_as_paragraph):
# a first character that can start a block or interrupt a paragraph, and a setext underline.
_BLOCK_START = frozenset("`~>*-_+#<[0123456789")
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")


def section_prefix(section: str) -> str:
    return f"{section}." if section else ""


def paragraph_pointers(
    paragraphs: Sequence[tuple[str, int, int]],
    history: Iterable[LineRange] | None,
    section_at: Callable[[int], str],
    footnotes: Collection[int] = (),
) -> tuple[list[str], set[str]]:
    """The ``pN`` pointer of every counted ``(section, first, end)`` paragraph, in
    order, and the pointers only the historical parse knows (reserved, §4.6).

    Without ``history`` the ordinals simply count the paragraphs per section. With
    it, a paragraph keeps the ordinal of its line range in the historical parse;
    any other takes the lowest ordinal still free in its section.

    ``footnotes`` (positions in ``paragraphs``) are the paragraphs of footnote definitions, which
    the historical parse reads as reference definitions (decision 1194): they are left out of the
    rules above, so every other paragraph keeps the ordinal it had before they were elements, and
    then each takes, in order, the lowest ordinal of its section that neither another paragraph
    nor the historical parse holds (never a reserved one).
    """
    current: dict[str, list[tuple[int, LineRange]]] = {}
    notes: dict[str, list[int]] = {}
    note_positions = set(footnotes)
    for position, (section, first, end) in enumerate(paragraphs):
        if note_positions and position in note_positions:
            notes.setdefault(section, []).append(position)
            continue
        current.setdefault(section, []).append((position, (first, end)))
    historical: dict[str, dict[LineRange, int]] = {}
    if history is None:
        for section, occurrences in current.items():
            historical[section] = {line_range: ordinal for ordinal, (_, line_range) in enumerate(occurrences, 1)}
    else:
        for first, end in history:
            table = historical.setdefault(section_at(first), {})
            table[(first, end)] = len(table) + 1
    pointers = [""] * len(paragraphs)
    reserved: set[str] = set()
    for section in current.keys() | historical.keys() | notes.keys():
        known = historical.get(section, {})
        occurrences = current.get(section, [])
        ordinals: list[int | None] = [known.get(line_range) for _, line_range in occurrences]
        used = {ordinal for ordinal in ordinals if ordinal is not None}
        lowest_free = 1
        for occurrence_index, ordinal in enumerate(ordinals):
            if ordinal is None:
                while lowest_free in used:
                    lowest_free += 1
                ordinals[occurrence_index] = lowest_free
                used.add(lowest_free)
        prefix = section_prefix(section)
        for (position, _), ordinal in zip(occurrences, ordinals, strict=True):
            pointers[position] = f"{prefix}p{ordinal}"
        reserved.update(f"{prefix}p{ordinal}" for ordinal in known.values() if ordinal not in used)
        if section in notes:
            held = used | set(known.values())
            lowest_free = 1
            for position in notes[section]:
                while lowest_free in held:
                    lowest_free += 1
                pointers[position] = f"{prefix}p{lowest_free}"
                held.add(lowest_free)
    return pointers, reserved


def is_chunk_cut(text: str, lines: LineIndex, first_lines: list[int], records: list[BlockRecord], block: int) -> bool:
    """Whether a historical chunk starts at ``block``: it follows a blank line and
    every line between the previous block's end and it is blank."""
    first = first_lines[block]
    previous_end = first_lines[block - 1] + records[block - 1].line_count
    return (
        first > 0
        and is_blank(text, lines, first - 1)
        and all(is_blank(text, lines, line) for line in range(min(previous_end, first), first))
    )


def _parse_without_tables(text: str, lines: LineIndex, first: int, end: int) -> tuple[list[LineRange], str | None]:
    """Paragraph ranges of lines ``[first, end)`` parsed without tables, and the
    token type of the region's last top-level block."""
    source = "\n".join(text[lines.starts[line] : lines.ends[line]] for line in range(first, end))
    tokens = (_HISTORICAL_HEAD if first == 0 else _HISTORICAL).parse(source)
    found: list[LineRange] = []
    quotes: list[LineRange | None] = []  # open quote ranges; None for lists and items
    last_type: str | None = None
    for token in tokens:
        line_map = token.map
        if token.level == 0 and token.nesting >= 0 and line_map is not None:
            last_type = token.type
        token_type = token.type
        if token_type == "blockquote_open":
            quote_first, quote_end = (line_map[0], line_map[1]) if line_map else (0, 1)
            quotes.append((quote_first + first, trimmed_end(text, lines, quote_first + first, quote_end + first)))
        elif token_type in LIST_OPEN or token_type == "list_item_open":
            quotes.append(None)
        elif token_type in CONTAINER_CLOSE:
            if quotes:
                quotes.pop()
        elif token_type == "paragraph_open":
            para_first, para_end = (line_map[0], line_map[1]) if line_map else (0, 1)
            line_range = (para_first + first, trimmed_end(text, lines, para_first + first, para_end + first))
            if not (quotes and quotes[-1] == line_range):  # §4.5: a paragraph filling its quote is not counted
                found.append(line_range)
    return found, last_type


def _table_as_paragraph(
    text: str, lines: LineIndex, first_lines: list[int], records: list[BlockRecord], blocks: range, end: int
) -> list[LineRange] | None:
    """The table-less parse of a chunk that is a table, or a paragraph and the table that
    interrupts it, worked out without parsing (spec/decisions.md 277); ``None`` for any
    other chunk or any line this reasoning does not cover. ``end`` is the chunk's end
    line; the chunk starts at its first block.

    Without tables, the table's lines continue the paragraph before it (or make one from
    the table's first line) up to the blank line that ended the table, because none of
    them can start or interrupt a block or underline a setext heading: the first line
    starts with none of the characters those rules need; the delimiter row holds a ``|``
    or ``:``; a body row passed the table's own terminators (the same rules as a
    paragraph's, less strict for lists) and is checked not to be an underline. The
    paragraph's own lines neither ended it nor made it a heading with tables, and the
    rules that could without tables are a subset. A first line starting with ``[`` is
    refused: a reference definition may span lines and end inside the table."""
    kinds = [records[block].kind for block in blocks]
    if kinds != ["table_open"] and kinds != ["paragraph_open", "table_open"]:
        return None
    starts, ends = lines.starts, lines.ends
    first = first_lines[blocks[0]]
    table_first = first_lines[blocks[-1]]
    table_end = table_first + records[blocks[-1]].line_count
    if table_end > end or table_end - table_first < 2:
        return None
    if len(blocks) == 2 and (
        first + records[blocks[0]].line_count != table_first
        or text[starts[first] : ends[first]].lstrip(" \t").startswith("[")
    ):
        return None
    header = text[starts[table_first] : ends[table_first]].lstrip(" \t")
    delimiter = text[starts[table_first + 1] : ends[table_first + 1]]
    if not header or header[0] in _BLOCK_START or ("|" not in delimiter and ":" not in delimiter):
        return None
    if any(_UNDERLINE.match(text, starts[line], ends[line]) for line in range(table_first + 2, table_end)):
        return None
    if not all(is_blank(text, lines, line) for line in range(table_end, end)):
        return None
    return [(first, trimmed_end(text, lines, first, table_end))]


class _Chunks:
    """Chunk starts (block indices) found lazily from ``first_block`` on: a
    re-parse that stops early never tests the blocks after it."""

    def __init__(
        self, text: str, lines: LineIndex, first_lines: list[int], records: list[BlockRecord], first_block: int
    ) -> None:
        self.text, self.lines = text, lines
        self.first_lines, self.records = first_lines, records
        self.starts = [first_block]
        self.next_to_test = first_block + 1

    def start(self, chunk: int) -> int | None:
        """First block of ``chunk``, or ``None`` past the last chunk."""
        block_count = len(self.first_lines)
        while len(self.starts) <= chunk and self.next_to_test < block_count:
            if is_chunk_cut(self.text, self.lines, self.first_lines, self.records, self.next_to_test):
                self.starts.append(self.next_to_test)
            self.next_to_test += 1
        return self.starts[chunk] if chunk < len(self.starts) else None

    def blocks(self, chunk: int) -> range:
        following = self.start(chunk + 1)
        return range(self.starts[chunk], len(self.first_lines) if following is None else following)


def _current_paragraphs(
    first_lines: list[int], records: list[BlockRecord], blocks: range, out: list[LineRange]
) -> None:
    """The current parse's paragraph ranges of ``blocks`` (a part without tables), onto ``out``:
    a footnote definition's paragraph is none of the historical parse's (decision 1194)."""
    for block in blocks:
        base = first_lines[block]
        for op in records[block].ops:
            if op[0] == OP_PARAGRAPH and op[3] != PARAGRAPH_FOOTNOTE:
                out.append((op[1] + base, op[2] + base))


def historical_ranges(
    text: str,
    lines: LineIndex,
    first_lines: list[int],
    records: list[BlockRecord],
    first_block: int,
    stop: int,
    can_stop: Callable[[int], bool] | None = None,
) -> tuple[list[LineRange], list[LineRange], int]:
    """Historical paragraph ranges from block ``first_block`` (a chunk start) on.

    Stops at the first chunk start at or after block ``stop`` (or one that
    ``can_stop`` accepts); returns ``(ranges, regions re-parsed without tables,
    block index stopped at or the block count)``.
    """
    block_count = len(first_lines)
    chunks = _Chunks(text, lines, first_lines, records, first_block)
    result: list[LineRange] = []
    regions: list[LineRange] = []
    stopped = block_count
    chunk = 0
    # A pass that runs to the end (a full parse) looks for chunk cuts only around tables: the
    # chunks between them hold no table, so their paragraphs are historical wherever they are cut.
    # The cuts depend on each block and the one before it only (is_chunk_cut), so the chunk a
    # table is in starts at the last cut at or before it, whichever chunk the walk came from.
    tables = [b for b in range(first_block, block_count) if records[b].has_table] if stop > block_count else []
    next_table = 0
    while (chunk_start := chunks.start(chunk)) is not None:
        if chunk > 0 and (chunk_start >= stop or (can_stop is not None and can_stop(chunk_start))):
            stopped = chunk_start
            break
        if tables and can_stop is None:
            while next_table < len(tables) and tables[next_table] < chunk_start:
                next_table += 1
            if next_table == len(tables):  # no table from here on
                _current_paragraphs(first_lines, records, range(chunk_start, block_count), result)
                break
            table_chunk = tables[next_table]
            while table_chunk > chunk_start and not is_chunk_cut(text, lines, first_lines, records, table_chunk):
                table_chunk -= 1
            if table_chunk > chunk_start:
                _current_paragraphs(first_lines, records, range(chunk_start, table_chunk), result)
                chunks, chunk = _Chunks(text, lines, first_lines, records, table_chunk), 0
                continue
        blocks = chunks.blocks(chunk)
        if not any(records[block].has_table for block in blocks):
            # Without a table both parses agree: the current paragraphs are historical.
            _current_paragraphs(first_lines, records, blocks, result)
            chunk += 1
            continue
        region_first = first_lines[chunk_start] if chunk_start else 0
        following = chunks.start(chunk + 1)
        region_end = first_lines[following] if following is not None else lines.count
        simple = (
            _table_as_paragraph(text, lines, first_lines, records, blocks, region_end)
            if region_first == first_lines[chunk_start]
            else None
        )
        if simple is not None:
            regions.append((region_first, region_end))
            result.extend(simple)
            chunk += 1
            continue
        while True:
            following = chunks.start(chunk + 1)
            region_end = first_lines[following] if following is not None else lines.count
            found, last_type = _parse_without_tables(text, lines, region_first, region_end)
            if last_type in CONTINUABLE and following is not None:
                chunk += 1  # the table-less parse may run on past the cut: re-parse wider
                continue
            break
        regions.append((region_first, region_end))
        result.extend(found)
        chunk += 1
    result.sort()
    return result, regions, stopped
