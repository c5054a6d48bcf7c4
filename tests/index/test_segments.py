"""FTS5 segments (``segments.py``, decision 637): the structure record read as FTS5 writes it,
when a merge pays, and the store's merge steps: a pass or ``tidy_lexical`` leaves one segment
per FTS5 table, with the same search results and scores; the small segments of later edits are
left to FTS5's own automerge. The pages a merge frees go back to the file system (decision 654)."""

from __future__ import annotations

import random
from pathlib import Path

import apsw
import pytest
from kb_fakes import client

from local_vector_search_mcp.index import indexer, sqlite
from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord
from local_vector_search_mcp.index.query import AnyOf, Term
from local_vector_search_mcp.index.segments import (
    STRUCTURE_ROWID,
    Structure,
    read_structure,
    worth_merging,
)
from local_vector_search_mcp.index.sqlite import SqliteStore

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
VOCABULARY = WORDS + [f"word{i}" for i in range(300)]
ZIPF = [1 / (i + 1) for i in range(len(VOCABULARY))]  # a few common words, many rare ones


def _structure(conn: apsw.Connection, table: str) -> Structure | None:
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = ?", (STRUCTURE_ROWID,)).fetchone()
    assert row is not None
    return read_structure(row[0])


def _fts(inserts: int, per: int = 20) -> apsw.Connection:
    """An in-memory FTS5 table written in ``inserts`` transactions: one segment each, until
    FTS5's automerge folds four of a level into one of the next."""
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    rng = random.Random(1)
    for _ in range(inserts):
        with conn:
            conn.executemany(
                "INSERT INTO t(body) VALUES(?)", [(" ".join(rng.choices(WORDS, k=30)),) for _ in range(per)]
            )
    return conn


@pytest.mark.parametrize("inserts", [1, 3, 4, 5, 17, 40])
def test_the_structure_record_lists_every_segment(inserts: int) -> None:
    conn = _fts(inserts)
    structure = _structure(conn, "t")
    assert structure is not None
    # FTS5's own count (a level of four is merged when the fourth is written: never 4 of a level)
    assert 1 <= len(structure.pages) <= inserts
    assert all(p >= 1 for p in structure.pages)
    conn.execute("INSERT INTO t(t) VALUES('optimize')")
    merged = _structure(conn, "t")
    assert merged is not None and len(merged.pages) == 1 and not merged.merging


def test_a_record_it_cannot_read_is_none() -> None:
    conn = _fts(5)
    (block,) = conn.execute("SELECT block FROM t_data WHERE id = ?", (STRUCTURE_ROWID,)).fetchone()
    assert read_structure(block) is not None
    assert read_structure(block[:-1]) is None  # cut short
    assert read_structure(block + b"\x00") is None  # longer than its segments
    assert read_structure(b"") is None
    assert not worth_merging(None)


def test_a_merge_pays_for_two_large_segments_or_one_under_way() -> None:
    assert not worth_merging(Structure((1000,), False))
    assert not worth_merging(Structure((1000, 3, 2, 5, 1), False))  # edits' small segments: automerge's
    assert worth_merging(Structure((600, 400), False))
    assert worth_merging(Structure((800, 100, 5), False))  # 100 of 905 pages: large
    assert not worth_merging(Structure((900, 90, 5), False))  # 90 of 995: under a tenth
    assert worth_merging(Structure((1000, 2), True))  # an incremental merge is finished


def test_merge_steps_end_with_one_segment_at_every_step_readable() -> None:
    conn = _fts(40, per=200)
    assert worth_merging(_structure(conn, "t"))
    seen_merging = False
    for _ in range(1000):
        before = conn.total_changes()
        conn.execute("INSERT INTO t(t, rank) VALUES('merge', -16)")
        if conn.total_changes() - before <= 2:
            break
        structure = _structure(conn, "t")
        assert structure is not None  # every intermediate record reads
        seen_merging = seen_merging or structure.merging
    final = _structure(conn, "t")
    assert final is not None and len(final.pages) == 1 and not worth_merging(final)
    assert seen_merging  # 16 pages a step: the merge was under way between steps


# --------------------------------------------------------------------------- the store
@pytest.fixture
def store(sqlite_store: SqliteStore) -> SqliteStore:
    return sqlite_store


def _write_docs(store: SqliteStore, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for d in range(count):  # each its own transaction: its own segment
        chunks = [
            ChunkRecord(
                i,
                f"p{i}",
                f"a{i}",
                " ".join(rng.choices(VOCABULARY, ZIPF, k=60)),
                f"Doc {rng.choice(WORDS)}",
                f"h{d}-{i}",
            )
            for i in range(20)
        ]
        store.replace_document(DocumentRecord(f"d{d}.md", f"{d:064d}", 1, 1, "2026-12-03T00:00:00Z"), chunks)


def _ranking(store: SqliteStore) -> list[list[tuple[int, float]]]:
    return [
        ranked
        for a, b in [("alpha", "word7"), ("word30", "word31"), ("word150", "gamma")]
        for ranked in store._rank_all([("chunks_fts", f'"{a}" OR "{b}"'), ("chunks_stems", f'"{a}"')], 50, None)
    ]


def _segments(store: SqliteStore, table: str) -> tuple[int, ...]:
    structure = _structure(store._conn(), table)
    assert structure is not None
    return structure.pages


def test_tidy_merges_each_table_into_one_segment_with_the_same_results(store: SqliteStore) -> None:
    _write_docs(store, 60)
    assert all(worth_merging(_structure(store._conn(), t)) for t in ("chunks_fts", "chunks_stems"))
    before = _ranking(store)
    hits = [h.chunk_id for h in store.lexical(AnyOf((Term("word40"), Term("beta"))), 10, None)]
    steps = 0
    while store.tidy_lexical():
        steps += 1
    assert steps >= 2  # short steps, each its own transaction
    assert len(_segments(store, "chunks_fts")) == 1 and len(_segments(store, "chunks_stems")) == 1
    after = _ranking(store)
    assert [[r for r, _ in part] for part in after] == [[r for r, _ in part] for part in before]
    assert [s for part in after for _, s in part] == pytest.approx([s for part in before for _, s in part])
    assert len({s for part in before for _, s in part}) > 20  # scores that tell rows apart
    assert [h.chunk_id for h in store.lexical(AnyOf((Term("word40"), Term("beta"))), 10, None)] == hits
    store._conn().execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    assert not store.tidy_lexical()  # nothing left


def test_an_edit_after_a_merge_leaves_the_large_segment_alone(store: SqliteStore) -> None:
    _write_docs(store, 60)
    while store.tidy_lexical():
        pass
    (large,) = _segments(store, "chunks_fts")
    _write_docs(store, 3, seed=8)  # three small edits: three small segments
    pages = _segments(store, "chunks_fts")
    assert len(pages) == 4 and large in pages
    assert not store.tidy_lexical()  # FTS5's automerge folds them; rewriting the index would not pay
    assert _segments(store, "chunks_fts") == pages


def test_a_pass_leaves_one_segment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexer, "BATCH_FILES", 1)  # a commit per file: a segment per file
    root = tmp_path / "kb"
    root.mkdir()
    rng = random.Random(3)
    for n in range(40):
        paras = "\n\n".join(" ".join(rng.choices(WORDS, k=50)) for _ in range(15))
        (root / f"note{n:02d}.md").write_text(f"# Note {n}\n\n{paras}\n", encoding="utf-8")
    kb = client(root, knowledge_base__index_workers=0)
    try:
        assert kb.reindex()["indexedFiles"] == 40
        store = kb.ws.store
        assert isinstance(store, SqliteStore)
        for table in ("chunks_fts", "chunks_stems"):
            structure = _structure(store._conn(), table)
            assert structure is not None and not worth_merging(structure), table
        free, pages = _free_pages(store)
        assert free < sqlite.FREE_MIN_PAGES or free * sqlite.FREE_SHARE < pages
    finally:
        kb.ws.close()


# --------------------------------------------------------------------------- free pages (decision 654)
def _free_pages(store: SqliteStore) -> tuple[int, int]:
    c = store._conn()
    return c.execute("PRAGMA freelist_count").fetchone()[0], c.execute("PRAGMA page_count").fetchone()[0]


def test_the_pages_a_merge_frees_go_back_to_the_file_system(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_docs(store, 150)
    with monkeypatch.context() as held:
        held.setattr(sqlite, "FREE_MIN_PAGES", 10**9)  # merge only: see what it leaves free
        while store.tidy_lexical():
            pass
    free, pages = _free_pages(store)
    assert free >= sqlite.FREE_MIN_PAGES and free * sqlite.FREE_SHARE >= pages  # the replaced segments
    before = _ranking(store)
    steps = 0
    while store.tidy_lexical():
        steps += 1
    assert steps >= 1
    left, now = _free_pages(store)
    assert left * sqlite.FREE_SHARE < now and now <= pages - free + left
    assert store._conn().execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    store._conn().execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    assert _ranking(store) == before
    store.close()
    assert (store.path.stat().st_size // 4096) <= now  # the file itself shrank (checkpointed at close)


def test_a_file_made_without_incremental_vacuum_keeps_its_free_pages(tmp_path: Path) -> None:
    """Files made before decision 654 cannot give pages back without a full VACUUM (a rewrite
    of the whole file under the write lock): tidying leaves them as they are, and ends."""
    path = tmp_path / "index.db"
    old = apsw.Connection(str(path))
    old.execute("PRAGMA auto_vacuum=NONE; CREATE TABLE made_before(x)")
    old.close()
    store = SqliteStore(path)
    store.ensure_schema(None, "float32")
    try:
        _write_docs(store, 60)
        steps = 0
        while store.tidy_lexical():
            steps += 1
            assert steps < 1000
        free, pages = _free_pages(store)
        assert free * sqlite.FREE_SHARE >= pages  # kept, for the index's next writes
        assert store._conn().execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    finally:
        store.close()
