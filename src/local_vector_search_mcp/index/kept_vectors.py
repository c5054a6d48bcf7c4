"""The Markdown chunks' vectors kept in memory per process, brought up to date by the change log.

Every SQLite write that adds, replaces or removes a Markdown chunk's vector names the chunk in
``vector_log`` (in its own transaction, at the generation its commit makes), so a process whose
rows are at generation ``g`` reads the chunk ids logged after ``g`` and re-reads just those rows,
instead of the whole table (decision 960). A full load happens the first time, when the log no
longer reaches back to ``g`` (pruned, or a write of an older version that logs nothing moved the
generation), when the storage layout changed, or when the delta is large (a reindex).

The rows are kept as stored (float32; int8 codes as floats), with the inverse of each row's norm:
one matrix product times those gives every row's cosine to within float rounding, and the rows
within ``NEAR`` of the cut are then scored exactly as each caller always scored them (the chunk
API and int8/binary's re-scoring: the rows normalised, then the product; float32 kb_search: vec0's
own arithmetic, :func:`vec0_cosine_distances`), so answers and scores are the same to the bit.

The rows sit in slots: a removed row frees its slot (its id becomes -1), an added one takes a
free slot or grows the arrays (by an eighth); every slot is scored, free ones are masked out. So the
order of the rows is NOT the order ties are broken in: callers break ties by the chunk id (kb_search)
or by (path, ordinal) (the chunk API, decision 361).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .vecmath import dot_rows

__all__ = [
    "FULL_SHARE",
    "LOG_KEEP",
    "NEAR",
    "KeptVectors",
    "Rows",
    "inverse_norms",
    "stored_rows",
    "unit_rows",
    "vec0_cosine_distances",
    "vec0_int8_distances",
]

# (ids, owners, stored vectors as float32, binary's packed bits or None), row for row
Rows = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.uint8] | None]

# The log keeps about this many entries (one per chunk whose vector a write changed); a process
# further behind loads every row again, which a delta that large costs about as much as anyway.
LOG_KEEP = 20_000
# A delta naming more than this share of the kept rows is applied as a full load (vec0 reads one
# row by id in ~0.3 ms, the whole table at ~25 µs a row).
FULL_SHARE = 16
# The product times the inverse norm and the exact scores part by under 1e-6 (float32 sums of 384
# products of unit vectors); every row within this of the cut is scored exactly.
NEAR = 1e-4


def stored_rows(raw: bytes, count: int, dtype: Any) -> npt.NDArray[np.float32]:
    """``count`` stored vectors (float32, or int8 codes) as float32 rows, as stored."""
    rows: npt.NDArray[np.float32] = np.frombuffer(raw, dtype=dtype).reshape(count, -1).astype(np.float32)
    return rows


def unit_rows(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``rows`` at unit length, row by row as the scores always normalised them (the same values
    whichever rows are normalised together)."""
    unit: npt.NDArray[np.float32] = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return unit


def inverse_norms(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    inverse: npt.NDArray[np.float32] = (1.0 / np.maximum(np.linalg.norm(rows, axis=1), 1e-12)).astype(np.float32)
    return inverse


def vec0_cosine_distances(rows: npt.NDArray[np.float32], query: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """sqlite-vec's cosine distance (``vec0 float[n] distance_metric=cosine`` and
    ``vec_distance_cosine``) of each stored row to ``query``, to the bit: the products summed in
    float32 one dimension after another, then ``1 - dot / (sqrt(|a|²) sqrt(|b|²))`` in double,
    rounded to float32. For the few rows near the cut only (a loop over the dimensions)."""
    dot = np.zeros(len(rows), dtype=np.float32)
    own = np.zeros(len(rows), dtype=np.float32)
    theirs = np.float32(0.0)
    for i in range(rows.shape[1]):
        column = rows[:, i]
        dot += column * query[i]
        own += column * column
        theirs = np.float32(theirs + query[i] * query[i])
    cosine = dot.astype(np.float64) / (np.sqrt(own.astype(np.float64)) * math.sqrt(float(theirs)))
    distances: npt.NDArray[np.float64] = (1.0 - cosine).astype(np.float32).astype(np.float64)
    return distances


def vec0_int8_distances(rows: npt.NDArray[np.float32], query: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """sqlite-vec's cosine distance of int8 codes (``vec0 int8[n] distance_metric=cosine``), to the
    bit: the sums are exact integers, then ``1 - dot / (sqrt(|a|^2) sqrt(|b|^2))`` in double,
    rounded to float32. ``rows`` and ``query`` hold the codes as floats."""
    codes = rows.astype(np.int64)
    probe = query.astype(np.int64)
    dot = codes @ probe
    own = np.einsum("ij,ij->i", codes, codes)
    theirs = int(probe @ probe)
    cosine = dot / (np.sqrt(own.astype(np.float64)) * math.sqrt(theirs))
    distances: npt.NDArray[np.float64] = (1.0 - cosine).astype(np.float32).astype(np.float64)
    return distances


@dataclass
class KeptVectors:
    """One kind's stored vectors at ``generation``, in slots, with each row's inverse norm
    (``scale``; 0 for a free slot). ``bits``: binary storage's stored sign bits (packed bytes,
    the Hamming candidates' source), row for row with ``matrix``."""

    generation: int
    storage: str
    ids: npt.NDArray[np.int64]
    owners: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    scale: npt.NDArray[np.float32]
    bits: npt.NDArray[np.uint8] | None = None
    slots: dict[int, int] = field(default_factory=dict)
    free: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, generation: int, storage: str, rows: Rows) -> KeptVectors:
        """``rows`` in the order given (the first slots)."""
        ids, owners, matrix, bits = rows
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        kept = cls(generation, storage, ids.copy(), owners.copy(), matrix, inverse_norms(matrix), bits)
        kept.slots = {int(i): s for s, i in enumerate(ids.tolist())}
        return kept

    @property
    def count(self) -> int:
        """Rows held (free slots not counted)."""
        return len(self.slots)

    @property
    def live(self) -> npt.NDArray[np.bool_]:
        """The slots holding a row."""
        held: npt.NDArray[np.bool_] = self.ids >= 0
        return held

    def cosines(self, probe: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Every slot's cosine with the unit ``probe``, to within float rounding (``NEAR``)."""
        scores: npt.NDArray[np.float32] = dot_rows(self.matrix, probe) * self.scale
        return scores

    def big_delta(self, changed: int) -> bool:
        return changed > max(500, self.count // FULL_SHARE)

    def remove(self, ids: Iterable[int]) -> None:
        for chunk_id in ids:
            slot = self.slots.pop(int(chunk_id), None)
            if slot is not None:
                self.ids[slot] = -1
                self.owners[slot] = -1
                self.matrix[slot] = 0.0
                self.scale[slot] = 0.0
                self.free.append(slot)

    def add(self, rows: Rows) -> None:
        """Rows whose ids are not held (remove them first)."""
        ids, owners, matrix, bits = rows
        if not len(ids):
            return
        self._room(len(ids))
        slots = np.asarray([self.free.pop() for _ in range(len(ids))], dtype=np.intp)
        self.ids[slots], self.owners[slots], self.matrix[slots] = ids, owners, matrix
        self.scale[slots] = inverse_norms(matrix)
        if self.bits is not None and bits is not None:
            self.bits[slots] = bits
        self.slots.update(zip(ids.tolist(), slots.tolist(), strict=True))

    def _room(self, wanted: int) -> None:
        if len(self.free) >= wanted:
            return
        old = len(self.ids)
        size = old + max(wanted - len(self.free), old // 8, 64)  # an eighth more: 50k rows grow by 6,250
        grow = size - old
        self.ids = np.concatenate([self.ids, np.full(grow, -1, dtype=np.int64)])
        self.owners = np.concatenate([self.owners, np.full(grow, -1, dtype=np.int64)])
        width = self.matrix.shape[1]
        self.matrix = np.concatenate([self.matrix, np.zeros((grow, width), dtype=np.float32)])
        self.scale = np.concatenate([self.scale, np.zeros(grow, dtype=np.float32)])
        if self.bits is not None:
            self.bits = np.concatenate([self.bits, np.zeros((grow, self.bits.shape[1]), dtype=np.uint8)])
        self.free.extend(range(size - 1, old - 1, -1))  # popped from the end: the lowest slot first
