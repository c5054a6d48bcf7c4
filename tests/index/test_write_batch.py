"""Write batches (spec/decisions.md 250): a reindex with parse workers stores consecutive files
in one SQLite transaction; what another connection sees, what a failure undoes, and that the
caller's writer gate is held exactly while a batch transaction is open."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import apsw
import pytest
from kb_fakes import client

from local_vector_search_mcp.index import parallel
from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord
from local_vector_search_mcp.index.sqlite import SqliteStore


def _doc(path: str) -> DocumentRecord:
    return DocumentRecord(path, "s" * 64, 10, 20, "2026-12-01T00:00:00.000Z")


def _chunk(text: str) -> ChunkRecord:
    return ChunkRecord(0, "p1", "p1~0000000000000000~0000000000000000", text, None, "h" + text)


def _paths_seen_elsewhere(db: Path) -> list[str]:
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [row[0] for row in con.execute("SELECT path FROM documents ORDER BY path")]
    finally:
        con.close()


def _free_elsewhere(lock: threading.RLock) -> bool:
    """Whether another thread can take ``lock`` now."""
    got: list[bool] = []

    def probe() -> None:
        ok = lock.acquire(blocking=False)
        if ok:
            lock.release()
        got.append(ok)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return got[0]


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    made = SqliteStore(tmp_path / "index.db")
    made.ensure_schema(None, "float32")
    return made


def test_writes_in_a_batch_commit_together_and_hold_the_gate_meanwhile(store: SqliteStore) -> None:
    gate = threading.RLock()
    with store.write_batch(gate) as batch:
        assert batch.files == 0 and batch.age == 0.0 and _free_elsewhere(gate)
        store.replace_document(_doc("a.md"), [_chunk("alpha")])
        store.replace_document(_doc("b.md"), [_chunk("beta")])
        assert batch.files == 2 and batch.age > 0.0
        assert _paths_seen_elsewhere(store.path) == []  # not committed yet
        assert not _free_elsewhere(gate)  # no other writer of this process can wait on the store's lock
        batch.flush()
        assert batch.files == 0 and _free_elsewhere(gate)
        assert _paths_seen_elsewhere(store.path) == ["a.md", "b.md"]
        store.replace_document(_doc("c.md"), [_chunk("gamma")])  # a new transaction
    assert _paths_seen_elsewhere(store.path) == ["a.md", "b.md", "c.md"]  # leaving the block commits
    assert _free_elsewhere(gate)
    store.close()


def test_a_failed_write_rolls_back_the_open_batch_and_releases_the_gate(store: SqliteStore) -> None:
    gate = threading.RLock()
    store.replace_document(_doc("a.md"), [_chunk("original")])
    with store.write_batch(gate) as batch:
        store.replace_document(_doc("a.md"), [_chunk("replaced")])
        store.replace_document(_doc("b.md"), [_chunk("beta")])
        with pytest.raises((AttributeError, TypeError)):
            store.replace_document(_doc("c.md"), [_chunk("gamma"), None])  # type: ignore[list-item]
        assert batch.files == 0 and _free_elsewhere(gate)
        assert _paths_seen_elsewhere(store.path) == ["a.md"]  # the previous revision, nothing half-written
        store.replace_document(_doc("d.md"), [_chunk("delta")])
    assert _paths_seen_elsewhere(store.path) == ["a.md", "d.md"]
    hits = store.counts()
    assert (hits.documents, hits.chunks) == (2, 2)
    store.close()


def test_a_batch_between_parses_commits_each_write_and_never_holds_the_gate(store: SqliteStore) -> None:
    # an in-process pass parses between writes: SQLite's shared transaction would hold the write
    # lock, which other processes' writers wait for, across each parse (decision 720)
    gate = threading.RLock()
    with store.write_batch(gate, parsing=True) as batch:
        store.replace_document(_doc("a.md"), [_chunk("alpha")])
        assert batch.files == 0 and batch.age == 0.0 and _free_elsewhere(gate)
        assert _paths_seen_elsewhere(store.path) == ["a.md"]  # committed on its own
    store.close()


def test_batches_do_not_nest(store: SqliteStore) -> None:
    with store.write_batch(), pytest.raises(RuntimeError), store.write_batch():
        pass  # pragma: no cover - the inner block is never entered
    store.replace_document(_doc("a.md"), [_chunk("alpha")])  # the outer batch ended: plain writes again
    assert _paths_seen_elsewhere(store.path) == ["a.md"]
    store.close()


def test_other_writers_of_the_process_proceed_during_a_parallel_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass holds the writer gate only while a batch is open; a thread that writes through
    the same gate meanwhile (an edit's sync) is neither deadlocked nor starved."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_FILES", 0)
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(120):
        (root / f"doc{i:03}.md").write_text(f"# Doc {i}\n\nalpha {i}\n\n" + "words " * 300, "utf-8")
    svc = client(root, storage=tmp_path / "index.db", knowledge_base__index_workers=2)
    indexer = svc.indexer
    indexer.store.ensure_schema(None, "float32")
    stop = threading.Event()
    writes: list[float] = []

    def other_writer() -> None:
        while not stop.is_set():
            start = time.perf_counter()
            with indexer.gate:
                indexer.store.set_unreadable("elsewhere.md", f"reason {len(writes)}")
            writes.append(time.perf_counter() - start)

    thread = threading.Thread(target=other_writer)
    thread.start()
    try:
        result = svc.reindex()
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    assert result["indexedFiles"] == 120
    assert len(writes) > 1 and max(writes) < 5.0
    assert svc.store.counts().documents == 120
    svc.store.close()


def _generation_elsewhere(db: Path) -> int:
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(con.execute("SELECT n FROM vector_generation").fetchone()[0])
    finally:
        con.close()


def test_a_batch_bumps_the_vector_generation_once_when_it_commits(store: SqliteStore) -> None:
    """Other processes drop their vector matrices when the generation moves; a batch moves it
    once, with its commit (a bump per file would make FTS5 flush a segment per file)."""
    start = _generation_elsewhere(store.path)
    store.replace_document(_doc("a.md"), [_chunk("alpha")])
    assert _generation_elsewhere(store.path) == start + 1  # a plain write bumps at once
    with store.write_batch() as batch:
        for name in ("b.md", "c.md", "d.md"):
            store.replace_document(_doc(name), [_chunk(name)])
        assert _generation_elsewhere(store.path) == start + 1
        batch.flush()
        assert _generation_elsewhere(store.path) == start + 2
        store.replace_document(_doc("e.md"), [_chunk("epsilon")])
        with pytest.raises((AttributeError, TypeError)):
            store.replace_document(_doc("f.md"), [_chunk("phi"), None])  # type: ignore[list-item]
    assert _generation_elsewhere(store.path) == start + 2  # the failed batch changed nothing
    assert _paths_seen_elsewhere(store.path) == ["a.md", "b.md", "c.md", "d.md"]
    store.close()


def test_a_failed_write_leaves_the_generation_alone(store: SqliteStore) -> None:
    start = _generation_elsewhere(store.path)
    with store.write_batch():
        store.replace_document(_doc("a.md"), [_chunk("alpha")])
        with pytest.raises((AttributeError, TypeError)):
            store.replace_document(_doc("b.md"), [_chunk("beta"), None])  # type: ignore[list-item]
    assert _generation_elsewhere(store.path) == start and _paths_seen_elsewhere(store.path) == []
    store.close()
