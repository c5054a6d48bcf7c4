"""Per-thread connections do not pile up when threads come and go.

A long-running server reads and writes the index from short-lived threads (a vector pass per
edit, worker threads that expire when idle). Each thread has its own connection; a dead thread's
connection must be closed, or every edit leaks a connection (its page cache and three file
descriptors: the database, its WAL and its shared-memory index).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from local_vector_search_mcp.index.sqlite import SqliteStore


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_connections_of_finished_threads_are_closed(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "index.db")
    store.ensure_schema(None, "float32")

    def use() -> None:
        store.read_manifest()

    def in_a_thread() -> None:
        thread = threading.Thread(target=use)
        thread.start()
        thread.join()

    for _ in range(3):
        in_a_thread()
    baseline = _open_fds()
    for _ in range(40):
        in_a_thread()
    assert _open_fds() <= baseline + 3  # at most the last thread's connection is still open
    assert store.read_manifest() is not None  # this thread's own connection is untouched
    store.close()


def test_a_burst_of_threads_leaves_no_connections_behind_when_the_survivors_keep_reading(tmp_path: Path) -> None:
    """A burst of concurrent calls spreads over many worker threads; afterwards the idle ones end
    while the few that serve the steady load live on. No new thread opens a connection then, so
    the burst's connections (three descriptors and a page cache each) were held for the server's
    life (decision 520)."""
    store = SqliteStore(tmp_path / "index.db")
    store.ensure_schema(None, "float32")
    store.read_manifest()  # this thread: the survivor
    baseline = _open_fds()
    opened = threading.Barrier(21)

    def burst() -> None:
        store.read_manifest()
        opened.wait()  # all 20 hold a connection at once, as concurrent calls do

    threads = [threading.Thread(target=burst) for _ in range(20)]
    for thread in threads:
        thread.start()
    opened.wait()
    for thread in threads:
        thread.join()
    during = _open_fds() - baseline  # the burst's connections are open while it lasts (2 each)
    assert during >= 40
    for _ in range(5):  # the steady load, on the surviving thread
        assert store.read_manifest() is not None
    assert len(store._connections) == 1  # closed: their page caches and WAL descriptors are freed
    # SQLite parks a closed connection's database descriptor while another connection of the
    # process holds a lock on the file (POSIX locks are per process), and hands it to the next
    # connection opened: at most one per ended thread, reused, never more
    assert _open_fds() - baseline <= during // 2
    store.close()
