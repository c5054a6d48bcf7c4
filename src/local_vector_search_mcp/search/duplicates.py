"""Near-duplicate collapse: a passage found in several files is one result.

Versioned documentation trees hold the same page several times (``1.0/``,
``2.0/``, ``latest/``), so five copies of one answer took five of the ten
places. Two chunks are the same passage when their text is equal (leading and
trailing whitespace aside). The best-ranked copy stays; the others ride along
in its ``also_in`` and take no place.

The rule is exact, not a similarity threshold: it needs no tuning, costs one
hash per candidate (~5 us for a 4 KB chunk; case-folding and collapsing
whitespace first cost 20x that, 4 ms a query over a 50-chunk pool, for copies
that differ in nothing else in practice), and never merges two passages that
differ in a word or a number (ignoring digits was tried and merged pages that
differ only in a status code or a counter: different answers).

Which copy is shown (decision 1080): the one in the largest document holding it
(by its chunks), the best-ranked among equally large ones. A reference page is copied from in
part (npm's ``config.md`` holds every option; each command's page repeats the
sections of the options it takes), and the agent that reads on should land on
the page holding them all; BM25 ranked the shorter command page's copy first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import xxhash

from ..index.port import ChunkHit

__all__ = ["Collapsed", "collapse", "passage_key", "sections_first", "shown_from_largest"]


def passage_key(text: str) -> bytes:
    """What two chunks share when they hold the same passage."""
    return xxhash.xxh3_128_digest(text.strip().encode("utf-8"))


@dataclass(slots=True)
class Collapsed:
    """A kept hit, its score, and the hits with the same passage that ranked below it."""

    hit: ChunkHit
    score: float
    also_in: list[ChunkHit] = field(default_factory=list)


def collapse(ranked: Sequence[tuple[ChunkHit, float]], limit: int) -> list[Collapsed]:
    """The first ``limit`` distinct passages of ``ranked`` (best first); every later copy of a
    kept passage in ``ranked`` is listed in its ``also_in``, in rank order."""
    kept: dict[bytes, Collapsed] = {}
    for hit, score in ranked:
        key = passage_key(hit.text)
        found = kept.get(key)
        if found is not None:
            if found.hit.path != hit.path or found.hit.anchor != hit.anchor:
                found.also_in.append(hit)
        elif len(kept) < limit:
            kept[key] = Collapsed(hit, score)
    return list(kept.values())


def shown_from_largest(kept: Sequence[Collapsed], sizes: Mapping[str, int]) -> None:
    """Each passage of ``kept`` shown from the largest document holding a copy (``sizes``: its
    chunks by path; a path not in it counts as empty), the best-ranked first among equally large ones;
    the others stay in ``also_in``, in rank order. The passage keeps its rank and score."""
    for c in kept:
        if not c.also_in:
            continue
        copies = [c.hit, *c.also_in]
        shown = max(copies, key=lambda h: sizes.get(h.path, 0))  # the first of the largest
        if shown is not c.hit:
            c.hit, c.also_in = shown, [h for h in copies if h is not shown]


def sections_first(ranked: Sequence[tuple[ChunkHit, float]]) -> list[tuple[ChunkHit, float]]:
    """``ranked`` (best first) with each section's best chunk (a section: a path and a heading
    path) ahead of any section's second: a section split into several chunks took several of the
    places, one answer said twice, while reading on from its first (``readHint``) reaches the rest
    (decision 1082). Orders kept within each part; a chunk moved down takes the score of the one
    before it, so scores stay non-increasing."""
    seen: set[tuple[str, str | None]] = set()
    first: list[tuple[ChunkHit, float]] = []
    again: list[tuple[ChunkHit, float]] = []
    for hit, score in ranked:
        key = (hit.path, hit.heading_path)
        (again if key in seen else first).append((hit, score))
        seen.add(key)
    out: list[tuple[ChunkHit, float]] = []
    for hit, score in first + again:
        out.append((hit, min(score, out[-1][1]) if out else score))
    return out
