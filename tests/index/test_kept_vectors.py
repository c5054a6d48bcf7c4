"""kb_search's semantic ranking from the kept rows (decision 960): the same answers as vec0's,
equal distances by chunk id, and the rows brought up to date from ``vector_log`` after writes by
another connection (the delta), or loaded again when the log no longer reaches back (pruned)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from local_vector_search_mcp.index import sqlite_chunks
from local_vector_search_mcp.index.chunks import ChunkFilterSpec, unit
from local_vector_search_mcp.index.kept_vectors import KeptVectors, vec0_cosine_distances, vec0_int8_distances
from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord
from local_vector_search_mcp.index.query import PathScope
from local_vector_search_mcp.index.sqlite import SqliteStore, _bits, _i8

DIMS = 16
PER_DOC = 10


def _unit(v: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    rows: npt.NDArray[np.float32] = (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)
    return rows


def _vectors(n: int, seed: int) -> npt.NDArray[np.float32]:
    """Random unit vectors, every fifth a copy of one of four (equal scores straddle every cut)."""
    rng = np.random.default_rng(seed)
    v = _unit(rng.standard_normal((n, DIMS)))
    twins = _unit(np.random.default_rng(99).standard_normal((4, DIMS)))
    v[::5] = twins[rng.integers(0, 4, len(v[::5]))]
    return v


def _doc(store: SqliteStore, name: str, vectors: npt.NDArray[np.float32], pending: int = 0) -> None:
    """``name`` with one chunk per vector; the last ``pending`` chunks wait for their vector."""
    chunks = [
        ChunkRecord(
            i, f"p{i}", f"a{i}", f"{name} chunk {i}", None, f"h{name}{i}", None if i >= len(vectors) - pending else v
        )
        for i, v in enumerate(vectors)
    ]
    store.replace_document(DocumentRecord(name, "s" * 64, 1, 1, "2026-12-01T00:00:00Z"), chunks)


def _open(path: Path, storage: str) -> SqliteStore:
    store = SqliteStore(path)
    store.ensure_schema(DIMS, storage)
    store.write_manifest({"embedding_dimensions": str(DIMS), "vector_storage": storage})
    return store


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Any]:
    """``stores(storage)``: two stores (two connections, two sets of kept rows) on one new file."""
    opened: list[SqliteStore] = []

    def make(storage: str = "float32") -> tuple[SqliteStore, SqliteStore]:
        path = tmp_path / f"{len(opened)}.db"
        pair = (_open(path, storage), SqliteStore(path))
        opened.extend(pair)
        return pair

    yield make
    for store in opened:
        store.close()


def _fill(store: SqliteStore, docs: int, seed: int) -> None:
    vectors = _vectors(docs * PER_DOC, seed)
    for d in range(docs):
        _doc(store, f"d{d:03d}.md", vectors[d * PER_DOC : (d + 1) * PER_DOC])


def _vec0(store: SqliteStore, query: npt.NDArray[np.float32], limit: int, scope: PathScope | None = None) -> list[Any]:
    """vec0's own answer (float32): its KNN over every row, equal distances by chunk id."""
    c = store._conn()
    docs = None if scope is None else set(store._allowed_docs(scope) or ())
    rows = c.execute(
        "SELECT v.chunk_id, v.distance, c.document_id FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id "
        "WHERE v.embedding MATCH ? AND k = 4096",
        (unit(query).astype(np.float32).tobytes(),),  # the query as ``semantic`` hands it on
    )
    found = sorted((d, cid) for cid, d, doc in rows if docs is None or doc in docs)
    return [(cid, d) for d, cid in found[:limit]]


def _exact(store: SqliteStore, query: npt.NDArray[np.float32], limit: int, storage: str) -> list[tuple[int, float]]:
    """int8 and binary when the pool holds every row: every stored vector re-scored as the float
    query's cosine (the float32 rows for binary, the restored codes for int8), by chunk id on ties."""
    c = store._conn()
    table, dtype = ("chunk_vectors_exact", np.float32) if storage == "binary" else ("chunk_vectors", np.int8)
    rows = list(c.execute(f"SELECT chunk_id, embedding FROM {table}"))
    stored = np.stack([np.frombuffer(r[1], dtype=dtype).astype(np.float32) for r in rows])
    stored /= np.maximum(np.linalg.norm(stored, axis=1, keepdims=True), 1e-12)
    distances = 1.0 - np.einsum("ij,j->i", stored, unit(query))
    return sorted(((int(r[0]), float(d)) for r, d in zip(rows, distances, strict=True)), key=lambda kv: (kv[1], kv[0]))[
        :limit
    ]


def _answer(
    store: SqliteStore, query: npt.NDArray[np.float32], limit: int, scope: PathScope | None = None
) -> list[Any]:
    return [(h.chunk_id, h.distance) for h in store.semantic(query, limit, scope)]


def _queries(seed: int) -> list[npt.NDArray[np.float32]]:
    twins = _unit(np.random.default_rng(99).standard_normal((4, DIMS)))
    return [*_unit(np.random.default_rng(seed).standard_normal((6, DIMS))), twins[0], twins[3]]


def _same_as_a_fresh_load(store: SqliteStore) -> None:
    """The kept rows hold exactly the stored vectors, row for row, as a full load reads them."""
    kept = store.__dict__["_kept"]
    fresh = KeptVectors.of(0, kept.storage, store._vector_rows(store._conn(), kept.storage, None))
    assert sorted(kept.slots) == sorted(fresh.slots)
    for cid, slot in fresh.slots.items():
        mine = kept.slots[cid]
        assert kept.owners[mine] == fresh.owners[slot]
        assert np.array_equal(kept.matrix[mine], fresh.matrix[slot])
        if fresh.bits is not None:
            assert np.array_equal(kept.bits[mine], fresh.bits[slot])
    assert all(kept.ids[s] == -1 for s in kept.free)


def _warmed(stores: Any, docs: int, seed: int) -> tuple[SqliteStore, SqliteStore, list[Any], KeptVectors]:
    """Two stores on a file of ``docs`` documents, the first with its rows loaded by a search."""
    store, other = stores()
    _fill(store, docs, seed)
    q = _queries(seed + 1)
    assert _answer(store, q[0], 10) == _vec0(store, q[0], 10)
    return store, other, q, store.__dict__["_kept"]


# float32: vec0's answer, ties by chunk id ----------------------------------------------------------
@pytest.mark.parametrize("limit", [1, 5, 10, 37])
def test_semantic_equals_vec0_with_equal_distances_by_chunk_id(stores: Any, limit: int) -> None:
    store, _ = stores()
    _fill(store, 30, 1)
    for q in _queries(2):
        assert _answer(store, q, limit) == _vec0(store, q, limit)
    twin = _queries(2)[-1]
    tied = [cid for cid, d in _answer(store, twin, 10) if d == _answer(store, twin, 1)[0][1]]
    assert len(tied) > 1 and tied == sorted(tied)  # the copies of the query all tie; lowest ids first


def test_a_scope_is_a_mask_before_the_cut(stores: Any) -> None:
    store, _ = stores()
    _fill(store, 30, 3)
    scope = PathScope(("d01*.md",), ())
    for q in _queries(4):
        found = _answer(store, q, 10, scope)
        assert found == _vec0(store, q, 10, scope)
        assert len(found) == 10


# the delta: writes by another connection ----------------------------------------------------------
def test_writes_by_another_connection_are_applied_as_a_delta(stores: Any) -> None:
    store, other, q, kept = _warmed(stores, 30, 5)
    rng = np.random.default_rng(7)
    steps: list[Callable[[], object]] = [
        lambda: _doc(other, "d003.md", _vectors(PER_DOC, 8)),  # an edit: every vector replaced
        lambda: other.delete_document("d029.md"),  # the highest chunk ids go ...
        lambda: _doc(other, "new.md", _vectors(12, 9)),  # ... and are given again
        lambda: _doc(other, "near.md", _unit(q[0] + 0.01 * rng.standard_normal((3, DIMS)))),  # the new best
        lambda: other.delete_document("near.md"),
        lambda: _doc(other, "wait.md", _vectors(4, 10), pending=4),  # chunks without vectors yet
        lambda: other.store_vectors([(p, _vectors(1, 11)[0]) for p in other.pending_vectors(10)]),
    ]
    for step in steps:
        step()
        for query in q:
            assert _answer(store, query, 10) == _vec0(store, query, 10)
        assert store.__dict__["_kept"] is kept  # brought up to date, never loaded again
        _same_as_a_fresh_load(store)


def test_a_write_batch_of_another_connection_is_one_delta(stores: Any) -> None:
    store, other, queries, kept = _warmed(stores, 10, 12)
    q = queries[0]
    with other.write_batch() as batch:
        for d in range(3):
            _doc(other, f"d{d:03d}.md", _vectors(PER_DOC, 20 + d))
        other.delete_document("d009.md")
        batch.flush()
    assert _answer(store, q, 10) == _vec0(store, q, 10)
    assert store.__dict__["_kept"] is kept
    _same_as_a_fresh_load(store)


def _edit_in_a_process(path: str, seed: int) -> None:
    other = SqliteStore(Path(path))
    _doc(other, "d002.md", _vectors(PER_DOC, seed))
    other.delete_document("d005.md")
    other.close()


def test_writes_by_another_process_are_applied_as_a_delta(stores: Any) -> None:
    store, _, queries, kept = _warmed(stores, 10, 14)
    q = queries[1]
    process = multiprocessing.get_context("spawn").Process(target=_edit_in_a_process, args=(str(store.path), 16))
    process.start()
    process.join(60)
    assert process.exitcode == 0
    assert _answer(store, q, 10) == _vec0(store, q, 10)
    assert store.__dict__["_kept"] is kept
    _same_as_a_fresh_load(store)


def test_every_writer_logs_what_it_changes(stores: Any) -> None:
    """Fails when a write changes a vector without naming its chunk in the log: the delta then
    misses it and the kept rows part from the table."""
    store, other = stores()
    _fill(store, 6, 17)
    _answer(store, _queries(18)[0], 5)
    gen = store._generation()
    _doc(other, "d001.md", _vectors(PER_DOC, 19))
    logged = {r[0] for r in other._conn().execute("SELECT chunk_id FROM vector_log WHERE generation > ?", (gen,))}
    now = {
        r[0]
        for r in other._conn().execute(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = 'd001.md'"
        )
    }
    assert now <= logged and len(logged) == 2 * PER_DOC  # the old chunks' removal and the new ones
    _answer(store, _queries(18)[0], 5)
    _same_as_a_fresh_load(store)


def test_a_writer_that_does_not_log_makes_readers_load_every_row(stores: Any) -> None:
    """A version from before the log moves the generation alone: the rows are loaded again."""
    store, other, queries, kept = _warmed(stores, 6, 21)
    q = queries[0]
    with other._write() as c:  # as an older writer: a vector replaced, the generation bumped, nothing logged
        cid = other._one("SELECT chunk_id FROM chunk_vectors LIMIT 1")
        c.execute("DELETE FROM chunk_vectors WHERE chunk_id = ?", (cid,))
        doc = other._one("SELECT document_id FROM chunks WHERE id = ?", (cid,))
        c.execute("INSERT INTO chunk_vectors VALUES(?,?,?)", (cid, doc, q.tobytes()))
        c.execute("UPDATE vector_generation SET n = n + 1")
    assert _answer(store, q, 1) == [(cid, pytest.approx(0.0, abs=1e-6))]
    assert store.__dict__["_kept"] is not kept


def test_a_pruned_log_loads_every_row_again(stores: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_chunks, "LOG_KEEP", 40)
    store, other, q, kept = _warmed(stores, 10, 23)
    for d in range(8):  # more entries than the log keeps
        _doc(other, f"d{d:03d}.md", _vectors(PER_DOC, 30 + d))
    floor = other._one("SELECT floor FROM vector_log_state")
    assert floor > kept.generation  # the log no longer reaches back to the kept rows
    assert other._one("SELECT count(*) FROM vector_log") <= 40
    for query in q:
        assert _answer(store, query, 10) == _vec0(store, query, 10)
    assert store.__dict__["_kept"] is not kept
    _same_as_a_fresh_load(store)


def test_a_search_inside_a_write_sees_the_write_and_keeps_nothing(stores: Any) -> None:
    store, _ = stores()
    _fill(store, 5, 25)
    q = _queries(26)[0]
    before = _answer(store, q, 3)
    kept = store.__dict__["_kept"]
    with store.write_batch():
        _doc(store, "near.md", _unit(np.stack([q, q])))
        inside = _answer(store, q, 3)
    assert [cid for cid, _ in inside[:2]] != [cid for cid, _ in before[:2]]
    assert store.__dict__["_kept"] is kept  # nothing uncommitted was kept
    assert _answer(store, q, 3) == inside
    _same_as_a_fresh_load(store)


# int8 and binary ------------------------------------------------------------------------------------
@pytest.mark.parametrize("storage", ["int8", "binary"])
def test_int8_and_binary_re_score_as_before_after_deltas(stores: Any, storage: str) -> None:
    """Up to 40 (int8) / 400 (binary) rows the pool is every row: the answer is then every
    stored vector re-scored with the float query, ties by chunk id."""
    store, other = stores(storage)
    _fill(store, 3, 27)
    for q in _queries(28):
        assert _answer(store, q, 10) == _exact(store, q, 10, storage)
    kept = store.__dict__["_kept"]
    _doc(other, "d001.md", _vectors(PER_DOC, 29))
    other.delete_document("d002.md")
    for q in _queries(28):
        assert _answer(store, q, 10) == _exact(store, q, 10, storage)
    if storage == "binary":  # the bits the Hamming pool is taken by are kept too
        assert kept.bits is not None
    _same_as_a_fresh_load(store)


def test_int8_candidates_are_those_of_the_quantized_query(stores: Any) -> None:
    """More rows than the pool: the pool is the rows nearest the quantized query by the codes'
    cosine (vec0's int8 KNN), then re-scored with the float query."""
    store, other = stores("int8")
    _fill(store, 30, 31)
    _doc(other, "d004.md", _vectors(PER_DOC, 32))
    c = store._conn()
    for q in _queries(33)[:6]:
        pool = [
            r[0]
            for r in c.execute(
                "SELECT chunk_id FROM chunk_vectors WHERE embedding MATCH vec_int8(?) AND k = 40", (_i8(q),)
            )
        ]
        rows = list(
            c.execute(
                f"SELECT chunk_id, embedding FROM chunk_vectors WHERE chunk_id IN ({','.join('?' * len(pool))})", pool
            )
        )
        stored = np.stack([np.frombuffer(r[1], dtype=np.int8).astype(np.float32) for r in rows])
        stored /= np.linalg.norm(stored, axis=1, keepdims=True)
        want = sorted(
            ((int(r[0]), float(d)) for r, d in zip(rows, 1.0 - np.einsum("ij,j->i", stored, unit(q)), strict=True)),
            key=lambda kv: (kv[1], kv[0]),
        )
        assert _answer(store, q, 10) == want[:10]


def test_binary_candidates_are_the_nearest_bits(stores: Any) -> None:
    """More rows than the pool (400): the pool is the rows of the fewest differing centred bits,
    equal counts by chunk id, re-scored exactly."""
    store, other = stores("binary")
    _fill(store, 60, 34)
    _doc(other, "d010.md", _vectors(PER_DOC, 35))
    c = store._conn()
    centre = store._centre()
    rows = list(c.execute("SELECT chunk_id, embedding FROM chunk_vectors_exact"))
    exact = {int(r[0]): np.frombuffer(r[1], dtype=np.float32) for r in rows}
    for q in _queries(36)[:6]:
        probe = np.unpackbits(np.frombuffer(_bits(q, centre), dtype=np.uint8))
        ham = {
            cid: int((np.unpackbits(np.frombuffer(_bits(v, centre), dtype=np.uint8)) != probe).sum())
            for cid, v in exact.items()
        }
        pool = sorted(ham, key=lambda cid: (ham[cid], cid))[:400]
        scored = sorted(
            ((cid, float(1.0 - np.dot(exact[cid] / np.linalg.norm(exact[cid]), q))) for cid in pool),
            key=lambda kv: (kv[1], kv[0]),
        )
        assert [cid for cid, _ in _answer(store, q, 10)] == [cid for cid, _ in scored[:10]]


# the chunk API shares the kept rows ----------------------------------------------------------------
def test_the_chunk_api_cuts_ties_by_path_and_ordinal_after_deltas(stores: Any) -> None:
    store, other = stores()
    _fill(store, 10, 37)
    twin = _queries(38)[-1]
    store.nearest_chunks(twin, 3, ChunkFilterSpec())
    for d in (7, 2, 5):  # the twin written again: its copies now sit in other slots
        _doc(other, f"d{d:03d}.md", np.stack([twin] * 3 + list(_vectors(PER_DOC - 3, 40 + d))))
    found = store.nearest_chunks(twin, 4, ChunkFilterSpec())
    fresh = SqliteStore(store.path)
    try:
        assert [(c.id, s) for c, s in found] == [(c.id, s) for c, s in fresh.nearest_chunks(twin, 4, ChunkFilterSpec())]
    finally:
        fresh.close()
    tied = [(c.source_path, c.chunk_index) for c, s in found if s == found[0][1]]
    assert len(tied) == 4 and tied == sorted(tied)


def test_the_chunk_api_takes_sign_candidates_from_the_kept_rows(stores: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above EXACT_ROWS the sign bits are made from the kept rows (again after a delta); the
    rows found are scored as unit rows and free slots are never found."""
    monkeypatch.setattr(sqlite_chunks, "EXACT_ROWS", 50)
    monkeypatch.setattr(sqlite_chunks, "RERANK_MIN", 120)
    monkeypatch.setattr(sqlite_chunks, "RERANK_PER_RESULT", 10)  # a pool of 120 of the 300 rows
    assert sqlite_chunks._pool(300, 5) == 120
    store, other, q, kept = _warmed(stores, 30, 41)
    store.nearest_chunks(q[0], 5, ChunkFilterSpec())
    first = store._bits("markdown")
    other.delete_document("d004.md")
    _doc(other, "d031.md", _vectors(PER_DOC - 4, 42))  # 4 slots stay free
    for query in q:
        found = store.nearest_chunks(query, 5, ChunkFilterSpec())
        assert len(found) == 5
        for chunk, score in found:
            assert not chunk.source_path.startswith("d004")
            row = store._vector_rows(store._conn(), "float32", None)
            at = {(int(i)): n for n, i in enumerate(row[0])}
            cid = other._one(
                "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.path = ? AND c.ordinal = ?",
                (chunk.source_path, chunk.chunk_index),
            )
            unit_row = row[2][at[cid]] / np.linalg.norm(row[2][at[cid]])
            assert score == pytest.approx(float(unit_row @ unit(query)), abs=1e-6)
    assert store.__dict__["_kept"] is kept and kept.free
    assert store._bits("markdown") is not first


@pytest.mark.parametrize("dims", [384, 30])
def test_vec0s_arithmetic_is_reproduced_to_the_bit(stores: Any, dims: int) -> None:
    """The float32 and int8 cosine distances vec0's KNN reports, computed again in numpy: fails
    when a sqlite-vec upgrade changes its arithmetic (the kept rows would then rank by another)."""
    rng = np.random.default_rng(dims)
    rows = _unit(rng.standard_normal((300, dims)))
    query = _unit(rng.standard_normal(dims))
    for storage in ("float32", "int8"):
        store, _ = stores(storage)
        c = store._conn()
        column = f"{'float' if storage == 'float32' else 'int8'}[{dims}] distance_metric=cosine"
        c.execute("DROP TABLE chunk_vectors")
        c.execute(f"CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_id INTEGER PRIMARY KEY, embedding {column})")
        put = "?" if storage == "float32" else "vec_int8(?)"
        blobs = [r.tobytes() if storage == "float32" else _i8(r) for r in rows]
        c.executemany(f"INSERT INTO chunk_vectors VALUES(?, {put})", list(enumerate(blobs, 1)))
        probe = query.tobytes() if storage == "float32" else _i8(query)
        knn = dict(
            c.execute(f"SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH {put} AND k = 300", (probe,))
        )
        if storage == "float32":
            mine = vec0_cosine_distances(rows, query)
        else:
            codes = np.stack([np.frombuffer(b, dtype=np.int8) for b in blobs]).astype(np.float32)
            mine = vec0_int8_distances(codes, np.frombuffer(probe, dtype=np.int8).astype(np.float32))
        assert [knn[i + 1] for i in range(300)] == mine.tolist()
