"""One FTS5 ranking split over rowid ranges that run on several cores (decision 635).

FTS5 computes BM25 for every row a MATCH finds before ``ORDER BY rank LIMIT n``
keeps the best ``n``: about 1.6 us per row, so an English question whose words
are in 13,000 of 50,000 chunks spends 25-30 ms there, most of a search. BM25's
idf and average row length are the whole table's whatever rowid range a query
is limited to, so the best ``n`` of each range, merged, are the best ``n`` of
the table, with the same scores; and apsw releases the GIL while SQLite runs,
so ranges ranked on different threads run on different cores.

The calling thread ranks the first range itself; the others go to a shared pool
of threads. Each range recounts the idf of its phrases (10-20% more CPU in all),
which only pays when cores are idle: a ranking is split only while no other
ranking of the process is running (many searches at once already use every
core) and, where Linux tells (``/proc/stat``), while the machine had at least
half a core idle over the last half second (an embedding pass, an indexer or
another program keeping the cores busy made split searches slower: decision
638); a range no pool thread has started when the caller is done is taken back
and ranked by the caller.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

from .parallel import available_cores

__all__ = [
    "MAX_PARTS",
    "SPLIT_MIN_IDLE",
    "SPLIT_MIN_SPAN",
    "IdleCores",
    "alone",
    "merge_ranked",
    "row_ranges",
    "run_all",
    "split_parts",
]

SPLIT_MIN_SPAN = 10_000  # chunk ids an index spans before its rankings are split: smaller ones take < 5 ms
MAX_PARTS = 4  # more ranges than this add fixed costs (each recounts the idf of every phrase) for little
SPLIT_MIN_IDLE = 0.5  # idle cores (averaged over the last reading's period) a split needs

T = TypeVar("T")
Ranked = list[tuple[int, float]]

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_running = 0  # rankings of the process in progress (alone)


@contextmanager
def alone() -> Iterator[bool]:
    """Counts a ranking in progress; yields whether it is the only one (then it may split)."""
    global _running
    with _pool_lock:
        _running += 1
        only = _running == 1
    try:
        yield only
    finally:
        with _pool_lock:
            _running -= 1


class IdleCores:
    """How many of the machine's cores sat idle lately: the share of idle time in ``/proc/stat``
    between two readings at least ``period`` seconds apart, times the number of cores it lists.
    ``None`` where that cannot be told: no ``/proc/stat`` (not Linux), no earlier reading, or one
    older than ``stale`` seconds (a first search after a quiet spell splits, as on an idle
    machine)."""

    def __init__(self, path: str = "/proc/stat", period: float = 0.5, stale: float = 5.0) -> None:
        self.path, self.period, self.stale = path, period, stale
        self._last: tuple[float, int, int] | None = None  # (monotonic time, idle ticks, all ticks)
        self._value: float | None = None
        self._lock = threading.Lock()

    def __call__(self) -> float | None:
        now = time.monotonic()
        with self._lock:
            last = self._last
            if last is not None and now - last[0] < self.period:
                return self._value
            sample = self._read()
            if sample is None:
                return None
            idle, total, cores = sample
            fresh = last is not None and now - last[0] <= self.stale and total > last[2]
            self._value = cores * (idle - last[1]) / (total - last[2]) if fresh and last is not None else None
            self._last = (now, idle, total)
            return self._value

    def _read(self) -> tuple[int, int, int] | None:
        """(idle ticks, all ticks, cores) from the ``cpu`` lines; ``None`` when unreadable."""
        try:
            with open(self.path, encoding="ascii") as f:
                lines = [line.split() for line in f if line.startswith("cpu")]
        except (OSError, ValueError):
            return None
        if not lines or lines[0][0] != "cpu" or len(lines[0]) < 5:
            return None
        try:
            ticks = [int(v) for v in lines[0][1:]]
        except ValueError:
            return None
        # user nice system idle iowait irq softirq steal (guest time is inside user already)
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
        return idle, sum(ticks[:8]), max(1, len(lines) - 1)


idle_cores = IdleCores()


def split_parts(span: tuple[int, int] | None) -> int:
    """How many rowid ranges a ranking over rows ``span`` (lowest, highest id; ``None``: no
    rows) is split into: 1 below :data:`SPLIT_MIN_SPAN`, on one core, or while the machine has
    less than :data:`SPLIT_MIN_IDLE` cores idle."""
    if span is None or span[1] - span[0] + 1 < SPLIT_MIN_SPAN:
        return 1
    parts = max(1, min(available_cores(), MAX_PARTS))
    if parts > 1:
        idle = idle_cores()
        if idle is not None and idle < SPLIT_MIN_IDLE:
            return 1
    return parts


def row_ranges(span: tuple[int, int], parts: int) -> list[tuple[int, int]]:
    """``parts`` adjacent inclusive ranges covering ``span`` (ids are dense enough after a cold
    index that equal widths hold about equal numbers of matching rows)."""
    lo, hi = span
    width = hi - lo + 1
    bounds = [lo + width * k // parts for k in range(parts + 1)]
    return [(bounds[k], bounds[k + 1] - 1) for k in range(parts) if bounds[k + 1] > bounds[k]]


def merge_ranked(parts: Sequence[Ranked], limit: int) -> Ranked:
    """The best ``limit`` rows of ranked ``parts`` (rowid, FTS5 rank; lower is better). The sort
    is stable and the parts come in rowid order, so rows of equal rank keep the order one
    ranking of the whole table gives them."""
    rows = [row for part in parts for row in part]
    rows.sort(key=lambda row: row[1])
    return rows[:limit]


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=MAX_PARTS, thread_name_prefix="lvsm-rank")
        return _pool


def run_all(calls: Sequence[Callable[[], T]]) -> list[T]:
    """The results of ``calls`` in order: the first on the calling thread, the others on the
    pool, each taken back by the caller when no pool thread has started it yet. The first
    exception is raised once every call has ended (none is left running on a thread)."""
    if len(calls) <= 1:
        return [call() for call in calls]
    pool = _executor()
    futures: list[Future[T]] = [pool.submit(call) for call in calls[1:]]
    results: list[T] = []
    error: BaseException | None = None
    try:
        results.append(calls[0]())
    except BaseException as exc:
        error = exc
    for call, future in zip(calls[1:], futures, strict=True):
        try:
            if not future.cancel():
                results.append(future.result())
            elif error is None:  # not started: the caller ranks it (none after a failure)
                results.append(call())
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error
    return results
