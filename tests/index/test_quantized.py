"""The compressed vector layouts on both engines (decisions 380-382, 425): binary's bits are taken
around a centre stored with the index, int8's codes have one scale per vector and its candidates
are re-scored with the float query.

The vectors here share a strong common direction, as the bundled e5 model's do: raw sign bits
then hardly tell two vectors apart (the numpy figure each test checks first), while the centred
bits find the float32 top 10. The int8 recall test uses 384-d vectors whose components are as
small as e5's (95 % under 0.1), where a fixed scale 1/127 leaves them about 4 bits.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from kb_fakes import HashEmbedder, client
from pg_server import PgServer
from vector_shapes import embedding_like

from local_vector_search_mcp.errors import IndexNotReady
from local_vector_search_mcp.index.chunks import ChunkFilterSpec
from local_vector_search_mcp.index.manifest import compatibility_problems
from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord, IndexStore
from local_vector_search_mcp.index.postgres import PostgresStore
from local_vector_search_mcp.index.quantized import (
    BINARY_MAX_CANDIDATES,
    BINARY_MIN_CANDIDATES,
    CENTRE_SAMPLE,
    INT8_SCALE_KEY,
    binary_candidates,
    int8_codes,
)
from local_vector_search_mcp.index.query import PathScope
from local_vector_search_mcp.index.sqlite import SqliteStore

DIMS = 64
N = 2000
PER_DOC = 50
ENGINES = ["sqlite", "postgresql"]


def _offset_vectors(n: int, seed: int) -> npt.NDArray[np.float32]:
    """Clustered unit vectors around one common direction with equal-sized components, so
    nearly every raw sign is the common direction's."""
    rng = np.random.default_rng(seed)
    common = np.sign(np.random.default_rng(0).standard_normal(DIMS)) / np.sqrt(DIMS)
    centres = np.random.default_rng(1).standard_normal((40, DIMS)) / np.sqrt(DIMS)
    v = 2.5 * common + centres[rng.integers(0, 40, n)] + 0.35 * rng.standard_normal((n, DIMS)) / np.sqrt(DIMS)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


VECTORS = _offset_vectors(N, 2)
QUERIES = _offset_vectors(40, 3)


def _codes(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """The stored int8 codes: one scale per vector, round(127 v / max|v|) (decision 425)."""
    return int8_codes(v).astype(np.float64)


def _asymmetric(q: npt.NDArray[np.float32], rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    """int8's score: the float query's cosine with the stored codes."""
    codes = _codes(rows)
    return (codes @ q.astype(np.float64)) / np.linalg.norm(codes, axis=1) / float(np.linalg.norm(q))


def _top10(scores: npt.NDArray[Any]) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")[:10]]


@pytest.fixture
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """``open_store(engine, where=None)``: a store, new or (``where`` from an earlier call) reopened."""
    opened: list[IndexStore] = []

    def make(engine: str, where: str | None = None) -> tuple[IndexStore, str]:
        if engine == "sqlite":
            where = where or str(tmp_path / f"{len(opened)}.db")
            store: IndexStore = SqliteStore(Path(where))
        else:
            server: PgServer = request.getfixturevalue("pg_server")
            where = where or server.fresh_schema()
            store = PostgresStore(server.url, where)
        opened.append(store)
        return store, where

    yield make
    for store in opened:
        store.close()


def _fill(store: IndexStore, storage: str, vectors: npt.NDArray[np.float32], first_doc: int = 0) -> None:
    dims = int(vectors.shape[1])
    store.ensure_schema(dims, storage)
    store.write_manifest({"embedding_dimensions": str(dims), "vector_storage": storage})
    _write(store, vectors, first_doc)


def _write(store: IndexStore, vectors: npt.NDArray[np.float32], first_doc: int = 0) -> None:
    for start in range(0, len(vectors), PER_DOC):
        chunks = [
            ChunkRecord(i - start, f"p{i}", f"a{i}", f"chunk {first_doc * PER_DOC + i}", None, f"h{i}", vectors[i])
            for i in range(start, min(start + PER_DOC, len(vectors)))
        ]
        doc = first_doc + start // PER_DOC
        store.replace_document(DocumentRecord(f"d{doc:03d}.md", "s" * 64, 1, 1, "2026-12-01T00:00:00Z"), chunks)


def _ids(hits: list[Any]) -> list[int]:
    return [int(h.text.split()[1]) for h in hits]


def _recall(store: IndexStore) -> float:
    truth = np.argsort(-(QUERIES @ VECTORS.T), axis=1)[:, :10]
    found = sum(
        len(set(_ids(store.semantic(q, 10, None))) & set(t.tolist())) for q, t in zip(QUERIES, truth, strict=True)
    )
    return found / (10 * len(QUERIES))


def _centre(store: IndexStore) -> tuple[int, npt.NDArray[np.float32]]:
    """(vectors the centre was made from, the centre) as stored."""
    if isinstance(store, SqliteStore):
        made, blob = store._conn().execute("SELECT vectors, centre FROM chunk_vectors_centre").fetchone()
        return int(made), np.frombuffer(blob, dtype=np.float32).copy()
    assert isinstance(store, PostgresStore)
    ((made, centre),) = store._rows("select vectors, centre from vector_centre")
    return int(made), np.asarray(centre.to_numpy(), dtype=np.float32)


def _bits_agree_with_the_centre(store: IndexStore, centre: npt.NDArray[np.float32] | None) -> int:
    """Every stored row's bits are the signs of its float32 vector minus ``centre`` (None: raw
    signs); returns how many rows were checked."""
    if isinstance(store, SqliteStore):
        rows = list(
            store._conn().execute(
                "SELECT e.embedding, v.embedding FROM chunk_vectors_exact e JOIN chunk_vectors v USING (chunk_id)"
            )
        )
        for exact, bits in rows:
            v = np.frombuffer(exact, dtype=np.float32)
            expected = np.packbits((v if centre is None else v - centre) > 0, bitorder="little").tobytes()
            assert bytes(bits) == expected
        return len(rows)
    assert isinstance(store, PostgresStore)
    # centred: what the index holds, the function with the centre as its constant
    column = (
        f"lvsm_binary_bits(embedding)::bit({DIMS})"
        if centre is not None
        else f"binary_quantize(embedding)::bit({DIMS})"
    )
    rows = store._rows(f"select embedding, {column} from vectors")
    for vector, bits in rows:
        v = np.asarray(vector.to_numpy(), dtype=np.float32)
        expected = (v if centre is None else v - centre) > 0
        found = np.array([c == "1" for c in bits]) if isinstance(bits, str) else np.asarray(bits.to_numpy(), bool)
        assert np.array_equal(found, expected)
    return len(rows)


# binary ----------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_binary_finds_the_float32_top_10_despite_a_common_offset(open_store: Any, engine: str) -> None:
    raw = (QUERIES > 0)[:, None, :] != (VECTORS > 0)[None, :, :]
    pool = np.argsort(raw.sum(-1), axis=1, kind="stable")[:, :400]
    truth = np.argsort(-(QUERIES @ VECTORS.T), axis=1)[:, :10]
    raw_recall = np.mean(
        [
            len(set(p[np.argsort(-(VECTORS[p] @ q))[:10]]) & set(t)) / 10
            for q, p, t in zip(QUERIES, pool, truth, strict=True)
        ]
    )
    assert raw_recall < 0.7  # the data is as hard for raw signs as the e5 vectors are
    store, _ = open_store(engine)
    _fill(store, "binary", VECTORS)
    assert _recall(store) >= 0.97
    made, centre = _centre(store)
    assert CENTRE_SAMPLE <= made <= N  # remade while the count doubled, then fixed
    assert np.allclose(centre, VECTORS[:made].mean(axis=0), atol=1e-5)  # the mean of what was stored then
    assert _bits_agree_with_the_centre(store, centre) == N


@pytest.mark.parametrize("engine", ENGINES)
def test_the_centre_is_fixed_once_made_and_survives_reopening(open_store: Any, engine: str) -> None:
    store, where = open_store(engine)
    _fill(store, "binary", VECTORS[:1700])
    made, centre = _centre(store)
    assert made == 1600  # remade at 50, 100, 200, ..., 1600 vectors (one document = 50), then fixed
    store.close()
    again, _ = open_store(engine, where)
    _fill(again, "binary", VECTORS[1700:], first_doc=34)  # more documents, written by a new connection
    assert again.delete_document("d000.md")
    assert _centre(again)[0] == made and np.array_equal(_centre(again)[1], centre)
    assert _bits_agree_with_the_centre(again, centre) == N - PER_DOC
    hits = again.semantic(VECTORS[1700], 3, None)
    assert _ids(hits)[0] == 1700 and hits[0].distance == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_index_from_before_the_centre_is_read_as_built_then_centred_in_place(
    open_store: Any, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A binary index built before decision 380 has no centre. A process that only searches and
    writes it keeps its raw signs (nothing is mixed); the next ``ensure_schema`` (every reindex
    and every indexing start does it) gives it its centre in place, from the float32 vectors it
    keeps, without re-embedding anything."""
    store, where = open_store(engine)
    if engine == "sqlite":
        store.ensure_schema(DIMS, "binary")
        with store._write() as c:  # type: ignore[attr-defined]
            c.execute("DROP TABLE chunk_vectors_centre")  # what an index of the earlier code has
    else:
        from local_vector_search_mcp.index.pg_vectors import VectorLayout

        monkeypatch.setattr(VectorLayout, "new", classmethod(lambda cls, s, n: cls(s, n)))  # the earlier code
        store.ensure_schema(DIMS, "binary")
        monkeypatch.undo()
    _write(store, VECTORS[:600])
    store.close()
    old, _ = open_store(engine, where)
    _write(old, VECTORS[600:700], first_doc=12)
    if engine == "sqlite":
        assert not old._table_exists("chunk_vectors_centre")  # type: ignore[attr-defined]
    else:
        assert not old._layout().centred  # type: ignore[attr-defined]
    assert _bits_agree_with_the_centre(old, None) == 700
    hits = old.semantic(VECTORS[650], 5, None)
    assert _ids(hits)[0] == 650 and hits[0].distance == pytest.approx(0.0, abs=1e-5)

    old.ensure_schema(DIMS, "binary")  # a reindex: centred in place
    made, centre = _centre(old)
    assert made == 700 and np.allclose(centre, VECTORS[:700].mean(axis=0), atol=1e-5)
    assert _bits_agree_with_the_centre(old, centre) == 700
    if engine == "postgresql":
        assert old._layout().centred  # type: ignore[attr-defined]
        ((index,),) = old._rows(  # type: ignore[attr-defined]
            "select indexdef from pg_indexes where indexname = 'vectors_hnsw' and schemaname = %s", (where,)
        )
        assert "lvsm_binary_bits(embedding)" in index
    _write(old, VECTORS[700:], first_doc=14)
    assert _recall(old) >= 0.97
    assert _centre(old)[0] >= CENTRE_SAMPLE  # it kept growing as a new index's does
    assert _bits_agree_with_the_centre(old, _centre(old)[1]) == N


def _notes_kb(tmp_path: Path, request: pytest.FixtureRequest, engine: str, storage: str) -> Any:
    """Six short notes indexed through the whole service with ``storage`` on ``engine``."""
    for i in range(6):
        (tmp_path / f"n{i}.md").write_text(f"# Note {i}\n\nalpha beta gamma {i} delta {i * i}\n", encoding="utf-8")
    backend: dict[str, Any] = {}
    if engine == "postgresql":
        server: PgServer = request.getfixturevalue("pg_server")
        backend = {
            "storage__backend": "postgresql",
            "storage__url": server.url,
            "storage__schema": server.fresh_schema(),
        }
    return client(tmp_path, "local", embedder=HashEmbedder(DIMS), embedding__vector_storage=storage, **backend)


@pytest.mark.parametrize("engine", ENGINES)
def test_reindexing_keeps_the_centre(tmp_path: Path, request: pytest.FixtureRequest, engine: str) -> None:
    """The centre is the index's, not a file's: replacing documents (a plain reindex, or a forced
    one over a compatible index, which keeps its tables) keeps it while the count has not doubled."""
    kb = _notes_kb(tmp_path, request, engine, "binary")
    kb.reindex()
    made, centre = _centre(kb.store)
    assert made == 6
    (tmp_path / "n2.md").write_text("# Note 2\n\nepsilon zeta eta\n", encoding="utf-8")
    kb.reindex()  # one document's vectors replaced: the count has not doubled
    assert _centre(kb.store)[0] == 6 and np.array_equal(_centre(kb.store)[1], centre)
    assert _bits_agree_with_the_centre(kb.store, centre) == 6
    assert kb.search(query="epsilon zeta eta", mode="semantic")["results"][0]["path"] == "n2.md"
    kb.reindex(force=True)
    assert _centre(kb.store)[0] == 6 and np.array_equal(_centre(kb.store)[1], centre)
    assert _bits_agree_with_the_centre(kb.store, centre) == 6
    kb.store.close()


# int8 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_int8_scores_the_float_query_against_the_codes(open_store: Any, engine: str) -> None:
    store, _ = open_store(engine)
    _fill(store, "int8", VECTORS)
    symmetric_differs = 0
    for q in QUERIES[:20]:
        hits = store.semantic(q, 10, None)
        ids = _ids(hits)
        scores = _asymmetric(q, VECTORS)
        assert ids == _top10(scores)  # the full asymmetric scan's top 10: the candidate pool is enough
        for i, h in zip(ids, hits, strict=True):
            assert h.distance == pytest.approx(1 - scores[i], abs=2e-5)
        qc = _codes(q)
        symmetric_differs += ids != _top10(_codes(VECTORS) @ qc / np.linalg.norm(_codes(VECTORS), axis=1))
        (nearest, score), *_ = store.nearest_chunks(q, 1, ChunkFilterSpec())  # the chunk API scores alike
        assert int(nearest.content.split()[1]) == ids[0] and score == pytest.approx(1 - hits[0].distance, abs=2e-5)
    assert symmetric_differs >= 5  # the quantized query would have ranked otherwise


def _stored_codes(store: IndexStore) -> npt.NDArray[np.int8]:
    """Every row's int8 codes as the adapter stored them."""
    if isinstance(store, SqliteStore):
        blobs = [bytes(r[0]) for r in store._conn().execute("SELECT embedding FROM chunk_vectors ORDER BY chunk_id")]
    else:
        assert isinstance(store, PostgresStore)
        blobs = [bytes(r[0]) for r in store._rows("select embedding from vectors order by chunk_id")]
    return np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1)


@pytest.mark.parametrize("engine", ENGINES)
def test_int8_keeps_the_float32_top_10_of_vectors_with_small_components(open_store: Any, engine: str) -> None:
    """decision 425: with the fixed scale 1/127 these codes average a few units and even a full
    scan of the float query against them (381's score) misses the float32 top 10 (numpy: about
    0.91); with one scale per vector every row's largest code is +-127 and the adapter keeps it."""
    rows = embedding_like(1000, 5)
    queries = embedding_like(40, 105)
    assert float(np.mean(np.abs(rows) < 0.1)) > 0.9  # shaped like e5's
    truth = np.argsort(-(queries @ rows.T), axis=1, kind="stable")[:, :10]

    def recall(top: list[list[int]]) -> float:
        return sum(len(set(t) & set(b.tolist())) for t, b in zip(top, truth, strict=True)) / truth.size

    fixed = np.clip(np.rint(rows * 127), -127, 127)  # decision 172's scale
    fixed /= np.linalg.norm(fixed, axis=1, keepdims=True)
    assert recall([_top10(fixed @ q) for q in queries]) < 0.95

    store, _ = open_store(engine)
    _fill(store, "int8", rows)
    codes = _stored_codes(store)
    assert len(codes) == len(rows) and bool(np.all(np.abs(codes.astype(np.int16)).max(axis=1) == 127))
    found = [[int(h.text.split()[1]) for h in store.semantic(q, 10, None)] for q in queries]
    assert recall(found) >= 0.95


def test_an_int8_index_of_the_fixed_scale_is_named_incompatible() -> None:
    """decision 425: an int8 manifest without ``int8_scale`` holds codes of the fixed scale; another
    vector storage is named by ``vector_storage`` alone."""
    before = {"embedding_dimensions": "64", "vector_storage": "int8"}
    now = {**before, INT8_SCALE_KEY: "per-vector"}
    assert compatibility_problems(before, now) == ["int8_scale: indexed '1/127', current 'per-vector'"]
    assert compatibility_problems(now, now) == []
    assert compatibility_problems({**before, "vector_storage": "float32"}, now) == [
        "vector_storage: indexed 'float32', current 'int8'"
    ]
    assert compatibility_problems(now, {**before, "vector_storage": "binary"}) == [
        "vector_storage: indexed 'int8', current 'binary'"
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_int8_index_of_the_fixed_scale_is_rebuilt_never_mixed(
    request: pytest.FixtureRequest, tmp_path: Path, engine: str
) -> None:
    """An int8 index built before decision 425 (codes round(127 v), no ``int8_scale`` in its
    manifest) is not searched or written with the new codes beside its old ones: searches and a
    plain reindex answer INDEX_NOT_READY naming the scale, nothing is deleted, and a forced
    reindex rebuilds every vector with one scale per vector."""
    kb = _notes_kb(tmp_path, request, engine, "int8")
    kb.reindex()
    assert kb.store.read_manifest()[INT8_SCALE_KEY] == "per-vector"
    assert bool(np.all(np.abs(_stored_codes(kb.store).astype(np.int16)).max(axis=1) == 127))
    # as an index from before 425 was: the fixed-scale codes, and no int8_scale in the manifest
    old = {k: v for k, v in kb.store.read_manifest().items() if k != INT8_SCALE_KEY}
    kb.store.write_manifest(old)
    status = kb.status_fields()["compatibility"]
    assert status["isCompatible"] is False
    assert status["problems"] == ["int8_scale: indexed '1/127', current 'per-vector'"]
    with pytest.raises(IndexNotReady, match="int8_scale: indexed '1/127', current 'per-vector'"):
        kb.search(query="alpha beta gamma", mode="semantic")
    (tmp_path / "n6.md").write_text("# Note 6\n\nepsilon zeta eta\n", encoding="utf-8")
    with pytest.raises(IndexNotReady, match="force=true"):
        kb.reindex()
    assert kb.store.counts().documents == 6  # nothing deleted, nothing added with other codes
    result = kb.reindex(force=True)
    assert result["indexedFiles"] == 7
    assert kb.store.read_manifest()[INT8_SCALE_KEY] == "per-vector"
    assert kb.status_fields()["compatibility"] == {"isCompatible": True, "problems": []}
    assert kb.store.counts().pending_vectors == 0
    codes = _stored_codes(kb.store)
    assert len(codes) == 7 and bool(np.all(np.abs(codes.astype(np.int16)).max(axis=1) == 127))
    assert kb.search(query="epsilon zeta eta", mode="semantic")["results"][0]["path"] == "n6.md"
    kb.store.close()


# binary's pool grows with the index (decision 430) -----------------------------------------
def _spread_like(n: int, seed: int) -> npt.NDArray[np.float32]:
    """384-d unit vectors with a common offset and a spectrum decaying as k^-0.5 (steeper than
    ``embedding_like``'s, so 384 centred bits rank them about as well as the real e5 vectors of
    opensearch-docs): at 8,000 rows a fixed pool of 400 Hamming candidates misses the float32 top
    10 as that corpus's 17,861 rows did (numpy about 0.93), a tenth of the rows holds it (0.98)."""
    return embedding_like(n, seed, decay=0.5)


def test_the_binary_pool_is_a_tenth_of_the_rows_within_its_bounds() -> None:
    assert binary_candidates(10, 620) == BINARY_MIN_CANDIDATES
    assert binary_candidates(100, 620) == 800  # 8 per asked result
    assert binary_candidates(10, 17_861) == 1786
    assert binary_candidates(10, 1_000_000) == BINARY_MAX_CANDIDATES == 4096  # sqlite-vec's largest k


@pytest.mark.parametrize("engine", ENGINES)
def test_binary_keeps_the_float32_top_10_of_a_large_index(open_store: Any, engine: str) -> None:
    rows = _spread_like(8000, 5)
    queries = _spread_like(40, 105)
    truth = np.argsort(-(queries @ rows.T), axis=1, kind="stable")[:, :10]
    centre = rows[:CENTRE_SAMPLE].mean(axis=0)  # what the index's centre is made from (decision 380)
    hamming = ((queries - centre) > 0)[:, None, :] != ((rows - centre) > 0)[None, :, :]
    order = np.argsort(hamming.sum(-1), axis=1, kind="stable")

    def recall(pool: int) -> float:
        top = [p[np.argsort(-(rows[p] @ q))[:10]] for q, p in zip(queries, order[:, :pool], strict=True)]
        return sum(len(set(t.tolist()) & set(b.tolist())) for t, b in zip(top, truth, strict=True)) / truth.size

    assert recall(BINARY_MIN_CANDIDATES) < 0.95  # the fixed pool before decision 430 misses
    store, _ = open_store(engine)
    _fill(store, "binary", rows)
    made, stored_centre = _centre(store)
    assert made >= CENTRE_SAMPLE and np.allclose(stored_centre, rows[:made].mean(axis=0), atol=1e-5)
    found = [[int(h.text.split()[1]) for h in store.semantic(q, 10, None)] for q in queries]
    assert sum(len(set(f) & set(t.tolist())) for f, t in zip(found, truth, strict=True)) / truth.size >= 0.95


@pytest.mark.parametrize("engine", ENGINES)
def test_the_binary_pool_follows_the_rows_written_since(open_store: Any, engine: str) -> None:
    """The row count the pool is taken from moves with every write (SQLite: counted again when the
    vector generation moves, in any process; PostgreSQL: the planner's estimate, pages now)."""
    store, where = open_store(engine)
    _fill(store, "binary", VECTORS[:1000])
    if isinstance(store, PostgresStore):
        store._rows("analyze vectors")  # statistics taken at 1,000 rows
        assert abs(store._vector_rows() - 1000) <= 50
    store.semantic(QUERIES[0], 10, None)  # SQLite: counted (and cached) at 1,000 rows
    other, _ = open_store(engine, where)  # another connection writes the rest
    _write(other, VECTORS[1000:], first_doc=1000 // PER_DOC)
    if engine == "postgresql":
        assert isinstance(store, PostgresStore)
        assert abs(store._vector_rows() - N) <= N * 0.05  # the old density times the pages now
    else:
        assert isinstance(store, SqliteStore)
        assert store._kept_markdown(store._conn()).count == N  # the rows the pool is taken from


# both: a scope is searched exactly, with the same scores ----------------------------------
@pytest.mark.parametrize("storage", ["int8", "binary"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_scoped_search_ranks_its_scope_exactly_with_the_same_scores(
    open_store: Any, engine: str, storage: str
) -> None:
    store, _ = open_store(engine)
    _fill(store, storage, VECTORS)
    scope = PathScope(("d003.md", "d007.md"))
    inside = np.r_[150:200, 350:400]
    for q in QUERIES[:10]:
        scores = _asymmetric(q, VECTORS[inside]) if storage == "int8" else VECTORS[inside] @ q
        expected = [int(inside[i]) for i in _top10(scores)]
        scoped = store.semantic(q, 10, scope)
        assert _ids(scoped) == expected
        unscoped = {int(h.text.split()[1]): h.distance for h in store.semantic(q, 50, None)}
        for h in scoped:
            i = int(h.text.split()[1])
            if i in unscoped:
                assert h.distance == pytest.approx(unscoped[i], abs=2e-5)


# the chunk API's sign-bit candidates (SQLite, above EXACT_ROWS rows) ------------------------
def test_chunk_api_sign_candidates_are_centred_too() -> None:
    """Above EXACT_ROWS rows the SQLite chunk API takes its candidates by sign bits (decisions 383, 395):
    centred on the rows' mean they find the exact top 10; raw signs of these vectors do not."""
    from local_vector_search_mcp.index.sqlite_chunks import EXACT_ROWS, _centred_signs, _signs, _top

    rows = _offset_vectors(EXACT_ROWS + 5000, 5)
    queries = _offset_vectors(30, 6)
    truth = np.argsort(-(queries @ rows.T), axis=1)[:, :10]

    def recall(bits: Any) -> float:
        found = [
            {i for i, _ in _top(rows, q, 10, None, bits)} & set(t.tolist()) for q, t in zip(queries, truth, strict=True)
        ]
        return sum(len(f) for f in found) / (10 * len(queries))

    assert recall((np.zeros(DIMS, np.float32), _signs(rows))) < 0.6  # raw signs
    assert recall(_centred_signs(rows)) >= 0.98
