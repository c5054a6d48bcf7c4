"""The PostgreSQL vector layouts (``index/pg_vectors.py``): what each ``embedding.vectorStorage``
stores, that its search agrees with exact float32 search, and that changing the choice on an
existing index is refused without force and rebuilt with it (decisions 170-172)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kb_fakes import HashEmbedder, client
from pg_server import PgServer

from local_vector_search_mcp.config import ConfigError
from local_vector_search_mcp.errors import IndexNotReady
from local_vector_search_mcp.index.chunks import unit
from local_vector_search_mcp.index.pg_vectors import VectorLayout, int8_codes
from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord
from local_vector_search_mcp.index.postgres import PostgresStore
from local_vector_search_mcp.index.quantized import int8_scale

DIMS = 48
STORAGES = ["float32", "float16", "int8", "binary"]


def _vectors(n: int, seed: int = 3) -> np.ndarray:
    """Clustered unit vectors (nearest neighbours mean something)."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((12, DIMS))
    v = centers[rng.integers(0, 12, n)] + 0.7 * rng.standard_normal((n, DIMS))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _filled(pg_server: PgServer, storage: str, vectors: np.ndarray) -> PostgresStore:
    store = PostgresStore(pg_server.url, pg_server.fresh_schema())
    store.ensure_schema(DIMS, storage)
    for d in range(0, len(vectors), 20):
        chunks = [
            ChunkRecord(i - d, f"p{i}", f"a{i}", f"chunk {i}", None, f"h{i}", vectors[i])
            for i in range(d, min(d + 20, len(vectors)))
        ]
        store.replace_document(DocumentRecord(f"d{d // 20:02d}.md", "s" * 64, 1, 1, "2026-12-01T00:00:00Z"), chunks)
    return store


def test_int8_is_symmetric_scalar_quantization_with_one_scale_per_vector() -> None:
    """decision 425: round(127 v / max|v|), the largest component +-127 whatever the vector's size."""
    codes = int8_codes(np.array([0.2, -0.1, 0.05, -0.0004, 0.15, -0.3], dtype=np.float32))
    assert codes.tolist() == [85, -42, 21, 0, 64, -127]
    assert codes.dtype == np.int8
    assert int8_codes(np.array([1.0, -1.0, 0.5, -0.003], dtype=np.float32)).tolist() == [127, -127, 64, 0]
    assert int8_codes(np.zeros(4, dtype=np.float32)).tolist() == [0, 0, 0, 0]
    rows = np.array([[0.02, -0.01], [3.0, 6.0]], dtype=np.float32)  # a matrix: row by row
    assert int8_codes(rows).tolist() == [[127, -64], [64, 127]]
    # codes / 127 (what an export gives) quantize to the same codes: a copy keeps them bit for bit
    rng = np.random.default_rng(4)
    for _ in range(200):
        c = rng.integers(-127, 128, DIMS)
        c[rng.integers(DIMS)] = rng.choice([-127, 127])
        assert np.array_equal(int8_codes(c.astype(np.float32) / np.float32(127.0)), c)


@pytest.mark.parametrize("storage", STORAGES)
def test_each_layout_stores_its_own_type_and_finds_the_exact_neighbours(pg_server: PgServer, storage: str) -> None:
    vectors = _vectors(400)
    store = _filled(pg_server, storage, vectors)
    try:
        assert store.vector_dimensions() == DIMS
        assert store._layout() == VectorLayout.new(storage, DIMS)
        (row,) = store._rows(
            "select pg_column_size(embedding), format_type(atttypid, atttypmod) from vectors,"
            " pg_attribute where attrelid = 'vectors'::regclass and attname = 'embedding' limit 1"
        )
        width, column = row
        assert column == {"float32": f"vector({DIMS})", "float16": f"halfvec({DIMS})", "int8": "bytea"}.get(
            storage, f"vector({DIMS})"
        )
        payload = {"float32": 4 * DIMS, "float16": 2 * DIMS, "int8": DIMS, "binary": 4 * DIMS}[storage]
        assert payload < width <= payload + 8  # the value plus pgvector's / PostgreSQL's header
        if storage == "int8":
            # q_scale: what a code is worth for that vector at unit length (decision 425)
            rows = store._rows(
                "select c.ordinal, d.path, v.q_scale, v.q_zero from vectors v join chunks c on c.id = v.chunk_id"
                " join documents d on d.id = c.doc_id"
            )
            for ordinal, path, q_scale, q_zero in rows:
                i = int(path[1:3]) * 20 + ordinal
                assert q_zero == 0 and q_scale == pytest.approx(int8_scale(vectors[i]), rel=1e-6)
            assert len(rows) == 400 and max(r[2] for r in rows) < 0.99 / 127  # finer than the fixed 1/127 of before
        queries = _vectors(30, seed=9)
        exact = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
        found = 0
        for q, truth in zip(queries, exact, strict=True):
            hits = store.semantic(q, 10, None)
            assert len(hits) == 10
            ids = [int(h.text.split()[1]) for h in hits]
            found += len(set(ids) & set(truth.tolist()))
            distances = [h.distance for h in hits]
            assert distances == sorted(distances)  # type: ignore[type-var]
        recall = found / (10 * len(queries))
        assert recall >= {"float32": 0.98, "float16": 0.98, "int8": 0.95, "binary": 0.9}[storage], recall
        # the stored vector comes back close to what was given, as unit length
        (first,) = store.markdown_chunks("d00.md", None, 1, with_vector=True)
        assert first.vector is not None and abs(float(np.linalg.norm(first.vector)) - 1) < 1e-3
        assert float(np.dot(first.vector, vectors[0])) > {"int8": 0.999, "float16": 0.9999}.get(storage, 0.99999)
        reuse = store.vectors_by_text_hash("d00.md")
        assert len(reuse) == 20 and float(np.dot(reuse["h1"], vectors[1])) > 0.999
    finally:
        store.close()


def test_a_chunk_stored_again_with_its_own_vector_keeps_it_bit_for_bit(pg_server: PgServer) -> None:
    # a re-index hands an unchanged chunk its stored vector back (vectors_by_text_hash); dividing
    # it by its float32 norm again moved its last bits on every re-index (decision 1036)
    vectors = _vectors(40)
    store = _filled(pg_server, "float32", vectors)
    try:
        before = store.vectors_by_text_hash("d00.md")
        chunks = [ChunkRecord(i, f"p{i}", f"a{i}", f"chunk {i}", None, f"h{i}", before[f"h{i}"]) for i in range(20)]
        for _ in range(3):
            store.replace_document(DocumentRecord("d00.md", "t" * 64, 1, 1, "2026-12-01T00:00:01Z"), chunks)
        after = store.vectors_by_text_hash("d00.md")
        assert {h: v.tobytes() for h, v in after.items()} == {h: v.tobytes() for h, v in before.items()}
        # the same for any stored unit vector (a third of these moved a bit when divided again)
        layout = VectorLayout.new("float32", DIMS)
        stored = [unit(v) for v in np.random.default_rng(0).standard_normal((300, DIMS))]
        assert all(layout.row(v)[0].tobytes() == v.tobytes() for v in stored)
        assert abs(float(np.linalg.norm(layout.row(3 * vectors[0])[0])) - 1) < 1e-6  # others made unit
    finally:
        store.close()


@pytest.mark.parametrize("storage", STORAGES)
def test_an_export_imports_into_the_same_layout_unchanged(pg_server: PgServer, storage: str) -> None:
    """The copy between engines (decision 160) goes through export/import: the same layout
    stores exactly the same values again (int8: the codes x 1/127, re-quantized to the same codes)."""
    vectors = _vectors(40)
    source = _filled(pg_server, storage, vectors)
    target = PostgresStore(pg_server.url, pg_server.fresh_schema())
    try:
        target.ensure_schema(DIMS, storage)
        dumps = source.export_documents(None, 10)
        assert target.import_documents(dumps) == 40
        column = "embedding::text" if storage != "int8" else "encode(embedding, 'hex')"
        query = f"select c.ordinal, d.path, {column} from vectors v join chunks c on c.id = v.chunk_id"
        query += " join documents d on d.id = c.doc_id order by 2, 1"
        assert target._rows(query) == source._rows(query)
        if storage == "int8":
            chunk = dumps[0].chunks[0]
            assert chunk.vector is not None and np.array_equal(np.rint(chunk.vector * 127), int8_codes(vectors[0]))
    finally:
        source.close()
        target.close()


@pytest.mark.parametrize("storage", ["int8", "binary"])
def test_exact_scores_and_scoped_search(pg_server: PgServer, storage: str) -> None:
    """int8 scores compare the float query with the codes (asymmetric, decision 381; as SQLite);
    binary re-ranks by exact float cosine; a scoped search scans its scope exactly."""
    vectors = _vectors(100)
    store = _filled(pg_server, storage, vectors)
    try:
        q = _vectors(1, seed=11)[0]
        (hit,) = store.semantic(q, 1, None)
        i = int(hit.text.split()[1])
        if storage == "int8":
            a, b = q.astype(np.float64), int8_codes(vectors[i]).astype(np.float64)
            expected = 1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b)
        else:
            expected = 1 - float(q @ vectors[i])
        assert hit.distance == pytest.approx(expected, abs=1e-4)
        from local_vector_search_mcp.index.chunks import ChunkFilterSpec

        (nearest, score), *_ = store.nearest_chunks(q, 3, ChunkFilterSpec())  # the chunk API: exact, same scores
        assert nearest.content == hit.text and score == pytest.approx(1 - expected, abs=1e-4)
        from local_vector_search_mcp.index.query import PathScope

        scoped = store.semantic(q, 5, PathScope(("d01.md",)))
        best = sorted(range(20, 40), key=lambda j: -float(q @ vectors[j]))[:5]
        assert {h.path for h in scoped} == {"d01.md"} and len(scoped) == 5
        assert len({int(h.text.split()[1]) for h in scoped} & set(best)) >= 4
    finally:
        store.close()


def test_float16_is_refused_on_sqlite_with_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"float16 needs storage\.backend postgresql"):
        client(tmp_path, "local", embedder=HashEmbedder(DIMS), embedding__vector_storage="float16")


def test_changing_the_storage_needs_a_forced_rebuild(tmp_path: Path, pg_server: PgServer) -> None:
    (tmp_path / "guide.md").write_text("# Guide\n\nInstall the tool with pip.\n", encoding="utf-8")
    (tmp_path / "rc.md").write_text("# Rc\n\nUse Rc::strong_count to count references.\n", encoding="utf-8")
    schema = pg_server.fresh_schema()

    def kb(storage: str):  # type: ignore[no-untyped-def]
        return client(
            tmp_path,
            "local",
            embedder=HashEmbedder(DIMS),
            embedding__vector_storage=storage,
            storage__backend="postgresql",
            storage__url=pg_server.url,
            storage__schema=schema,
        )

    first = kb("float32")
    first.reindex()
    assert first.search(query="Install the tool with pip", mode="semantic")["results"][0]["path"] == "guide.md"
    first.store.close()
    second = kb("int8")
    try:
        with pytest.raises(IndexNotReady, match=r"vector_storage: indexed 'float32', current 'int8'"):
            second.reindex()
        second.reindex(force=True)
        assert second.store._layout() == VectorLayout("int8", DIMS)
        assert second.store.read_manifest()["vector_storage"] == "int8"
        assert second.store.pending_vector_count() == 0
        hit = second.search(query="Install the tool with pip", mode="semantic")["results"][0]
        assert hit["path"] == "guide.md"
    finally:
        second.store.close()


def test_a_float16_index_cannot_be_copied_into_sqlite(tmp_path: Path, pg_server: PgServer) -> None:
    from local_vector_search_mcp.index.copy import copy_index
    from local_vector_search_mcp.index.sqlite import SqliteStore

    source = _filled(pg_server, "float16", _vectors(20))
    source.write_manifest(
        {"vector_storage": "float16", "embedding_dimensions": str(DIMS), "index_mode": "vector-enabled"}
    )
    target = SqliteStore(tmp_path / "copy.db")
    try:
        with pytest.raises(ConfigError, match=r"cannot store 'float16' vectors"):
            copy_index(source, target)
        assert not target.has_vectors() and target.counts().chunks == 0
    finally:
        source.close()
        target.close()
