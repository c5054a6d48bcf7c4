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
