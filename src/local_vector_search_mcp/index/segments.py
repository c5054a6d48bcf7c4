"""How an FTS5 index is split into segments, and when merging them pays (decision 637).

FTS5 writes each transaction's rows as a new segment (a b-tree) and merges
segments of one size level once ``automerge`` (4) of them pile up, so a pass
that indexed a tree leaves a handful of large segments of different levels: a
cold index of opensearch-docs 8, a 50,000-chunk index 20. A query reads every
segment that holds its words and merges their doclists row by row, so a common
word split over several large segments costs more per matching row: merged
into one segment, the 50k index ranked the dev-set questions with 14-18% less
CPU (same rows, same scores; ranking is three quarters of a search).

FTS5's ``('merge', -N)`` command merges every segment into one, about ``N``
pages per call, so the merge runs as short steps (each its own transaction)
that edits can slip between. It pays only when more than one segment is large:
the small segments that single edits add are cheap to read and are merged by
FTS5's own automerge, so a merge that would rewrite the whole index for them
would cost more than it saves.

The segment sizes come from FTS5's structure record (row 10 of ``<table>_data``),
whose layout is described in ``fts5_index.c``; a record this module cannot read
means "no merge" (an index that is only slower, never wrong).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LARGE_SHARE", "MERGE_STEP_PAGES", "STRUCTURE_ROWID", "Structure", "read_structure", "worth_merging"]

STRUCTURE_ROWID = 10  # FTS5_STRUCTURE_ROWID: the record listing levels and segments
MERGE_STEP_PAGES = 256  # leaf pages one merge step writes (~1 MB; 10-30 ms at 4 KB pages)
LARGE_SHARE = 0.1  # a segment holding this share of the index's pages is large

_V2_MARKER = b"\xff\x00\x00\x01"  # "structure v2": each segment carries five more varints


def _varint(block: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint at ``block[at]``: (value, offset after it). IndexError past the end."""
    value = 0
    for i in range(9):
        byte = block[at]
        at += 1
        if i == 8:
            return (value << 8) | byte, at
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class Structure:
    """What an FTS5 structure record says of the index's segments."""

    pages: tuple[int, ...]  # leaf pages of each segment
    merging: bool  # an incremental merge is under way (some level's segments feed the next)


def read_structure(block: bytes) -> Structure | None:
    """The segments of an FTS5 structure record, ``None`` when the record is not one this
    module can read (a future layout, a damaged row)."""
    try:
        at = 4  # the configuration cookie
        v2 = block[at : at + 4] == _V2_MARKER
        if v2:
            at += 4
        levels, at = _varint(block, at)
        segments, at = _varint(block, at)
        _, at = _varint(block, at)  # the write counter
        pages: list[int] = []
        merging = False
        for _ in range(levels):
            feeding, at = _varint(block, at)  # segments of the level being merged into the next
            merging = merging or feeding > 0
            count, at = _varint(block, at)
            for _ in range(count):
                fields = []
                for _ in range(8 if v2 else 3):  # segid, first and last page (v2: origins, tombstones, entries)
                    value, at = _varint(block, at)
                    fields.append(value)
                pages.append(fields[2] - fields[1] + 1)
    except IndexError:
        return None
    if len(pages) != segments or at != len(block) or any(p < 0 for p in pages):
        return None
    return Structure(tuple(pages), merging)


def worth_merging(structure: Structure | None) -> bool:
    """Whether a merge is under way (finish it) or more than one segment is large (holds
    ``LARGE_SHARE`` of all pages): then a common word's rows are read from several b-trees and
    merging them pays."""
    if structure is None:
        return False
    if structure.merging:
        return True
    pages = structure.pages
    if len(pages) < 2:
        return False
    total = sum(pages)
    return sum(p >= LARGE_SHARE * total for p in pages) >= 2
