"""Vector storage choices on both engines: recall@10 against exact float32 and bytes per vector.

Issue 14, item 3: ``embedding.vectorStorage`` float32 / float16 / int8 / binary on SQLite
(sqlite-vec; float16 is refused there, decision 171) and PostgreSQL (pgvector; decision 170).
Every choice is filled through the adapter (``replace_document`` with the vectors) and searched
through ``semantic``, the call hybrid and semantic search make; the same-run baseline is an exact
float32 scan in numpy. Bytes per vector are measured on disk: SQLite's ``dbstat`` over the vector
tables (vec0's shadow tables, and the float32 re-rank table of binary), PostgreSQL's
``pg_total_relation_size('vectors')`` (table, HNSW index and primary key) with the table's and the
index's shares apart.

Vector sets:
* the real chunks of rust-book and vue-docs-zh-cn embedded by the bundled model (the index
  ``bench_search.py`` caches in ``bench/.cache``; built here when missing, reused there), with
  their eval queries embedded as queries; opensearch-docs (17,861 chunks, 50 queries) too when
  its cached index exists (``bench_search.py`` builds it, about 11 minutes: never here);
* 10,000 synthetic clustered 384-d vectors (``bench_scale.Corpus``) with 100 queries.

Same-run references in numpy: what int8 and binary found before (int8, decision 425: codes of
the fixed scale 1/127, 40 candidates by the quantized query re-scored with the float query as 381
shipped them; binary, decision 380: raw sign bits, 400 Hamming candidates re-ranked exactly).

Writes ``results/storage.json`` and ``results/bench_storage.summary.json``.
Run: ``.venv/bin/python bench/bench_storage.py``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import evalkit  # noqa: E402
from bench_scale import Corpus, tune  # noqa: E402
from pg_server import PgServer  # noqa: E402

from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord, IndexStore  # noqa: E402
from local_vector_search_mcp.index.postgres import PostgresStore  # noqa: E402
from local_vector_search_mcp.index.quantized import INT8_MIN_CANDIDATES  # noqa: E402
from local_vector_search_mcp.index.sqlite import SqliteStore  # noqa: E402

RESULTS = HERE / "results"
STORAGES = {"sqlite": ("float32", "int8", "binary"), "postgresql": ("float32", "float16", "int8", "binary")}
SYNTHETIC = 10_000
PER_DOC = 50


def real_sets() -> dict[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]:
    """(chunk vectors, query vectors) of each dev corpus, from bench_search's cached index."""
    import bench_search

    out = {}
    corpora = dict(evalkit.CORPORA)
    corpora.update({c: r for c, r in evalkit.LARGE.items() if (bench_search.CACHE / f"{c}-local.db").exists()})
    for corpus, root in corpora.items():
        svc, _ = bench_search.vector_service(corpus, root)
        rows = list(svc.store._conn().execute("SELECT embedding FROM chunk_vectors ORDER BY chunk_id"))
        chunks = np.vstack([np.frombuffer(r[0], dtype=np.float32) for r in rows])
        emb = svc.embedder()
        queries = np.vstack([emb.embed_query(q.text) for q in evalkit.load_queries(corpus)]).astype(np.float32)
        svc.store.close()
        out[corpus] = (chunks, queries)
    return out


def synthetic_set() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    corpus = Corpus()
    return corpus.vectors(0, SYNTHETIC), corpus.vectors(0, 100, salt=1)


def fill(store: IndexStore, storage: str, vectors: npt.NDArray[np.float32]) -> float:
    store.ensure_schema(vectors.shape[1], storage)
    t0 = time.perf_counter()
    for start in range(0, len(vectors), PER_DOC):
        chunks = [
            ChunkRecord(i - start, f"p{i}", f"a{i}", str(i), None, f"h{i}", vectors[i])
            for i in range(start, min(start + PER_DOC, len(vectors)))
        ]
        store.replace_document(DocumentRecord(f"d{start:07d}.md", "0" * 64, 1, 1, "2026-12-01T00:00:00Z"), chunks)
    return time.perf_counter() - t0


def sqlite_bytes(store: SqliteStore) -> dict[str, int]:
    rows = store._conn().execute("SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE 'chunk_vectors%' GROUP BY name")
    sizes = {name: int(size) for name, size in rows}
    return {"total": sum(sizes.values()), "exact_rerank_table": sizes.get("chunk_vectors_exact", 0)}


def postgres_bytes(store: PostgresStore) -> dict[str, int]:
    row = store._rows(
        "select pg_total_relation_size('vectors'), pg_relation_size('vectors')"
        " + coalesce(pg_relation_size(reltoastrelid), 0), pg_relation_size('vectors_hnsw')"
        " from pg_class where oid = 'vectors'::regclass"
    )[0]
    return {"total": int(row[0]), "table": int(row[1]), "hnsw": int(row[2])}


def before(vectors: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]) -> dict[str, float]:
    """recall@10 of int8 and binary as they scored before decisions 425 and 380 (numpy)."""
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]

    def codes(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The fixed scale 1/127 of decision 172, at unit length (cosine ignores the scale)."""
        c = np.clip(np.rint(np.clip(x, -1, 1) * 127), -127, 127).astype(np.float32)
        return c / np.maximum(np.linalg.norm(c, axis=-1, keepdims=True), 1e-12)

    stored = codes(vectors)
    symmetric, asymmetric = codes(queries) @ stored.T, queries @ stored.T
    bits, qbits = np.packbits(vectors > 0, axis=1), np.packbits(queries > 0, axis=1)
    int8_found = binary_found = 0
    for i, (q, best) in enumerate(zip(queries, truth, strict=True)):
        pool8 = np.argsort(-symmetric[i], kind="stable")[:INT8_MIN_CANDIDATES]  # 381: re-scored by the float query
        top8 = pool8[np.argsort(-asymmetric[i][pool8], kind="stable")[:10]]
        int8_found += len(set(top8.tolist()) & set(best.tolist()))
        hamming = np.unpackbits(bits ^ qbits[i], axis=1).sum(axis=1)
        pool = np.argsort(hamming, kind="stable")[:400]
        top = pool[np.argsort(-(vectors[pool] @ q), kind="stable")[:10]]
        binary_found += len(set(top.tolist()) & set(best.tolist()))
    n = 10 * len(queries)
    return {"int8": int8_found / n, "binary": binary_found / n}


def measure(
    store: IndexStore, storage: str, vectors: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]
) -> dict[str, Any]:
    fill_s = fill(store, storage, vectors)
    truth = np.argsort(-(queries @ vectors.T), axis=1)[:, :10]
    found, times = 0.0, []
    for q, best in zip(queries, truth, strict=True):
        t0 = time.perf_counter()
        hits = store.semantic(q, 10, None)
        times.append((time.perf_counter() - t0) * 1000)
        found += len({int(h.text) for h in hits} & set(best.tolist())) / 10
    sizes = sqlite_bytes(store) if isinstance(store, SqliteStore) else postgres_bytes(store)  # type: ignore[arg-type]
    n = len(vectors)
    return {
        "recall10": found / len(queries),
        "bytes_per_vector": sizes["total"] / n,
        "sizes": sizes,
        "fill_s": fill_s,
        "p50_ms": float(np.median(times)),
    }


def main() -> int:
    RESULTS.mkdir(exist_ok=True)
    sets = {**real_sets(), f"synthetic {SYNTHETIC // 1000}k": synthetic_set()}
    results: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    server = PgServer()
    server.start()
    try:
        tune(server)
        with tempfile.TemporaryDirectory(prefix="bench-storage-") as tmp:
            for name, (vectors, queries) in sets.items():
                results[name] = {
                    "vectors": len(vectors),
                    "queries": len(queries),
                    "dims": int(vectors.shape[1]),
                    "before": before(vectors, queries),
                }
                shown = ", ".join(f"{k} {v:.3f}" for k, v in results[name]["before"].items())
                print(f"{name:<16} before 425 / 380 (numpy): {shown}", flush=True)
                for engine, storages in STORAGES.items():
                    for storage in storages:
                        if engine == "sqlite":
                            store: IndexStore = SqliteStore(Path(tmp) / f"{name}-{storage}.db".replace(" ", "_"))
                        else:
                            store = PostgresStore(server.url, server.fresh_schema())
                        try:
                            r = measure(store, storage, vectors, queries)
                        finally:
                            if isinstance(store, PostgresStore):
                                store.reset(None, "float32")
                            store.close()
                        results[name][f"{engine} {storage}"] = r
                        print(
                            f"{name:<16} {engine:<10} {storage:<8} recall@10 {r['recall10']:.3f}  "
                            f"{r['bytes_per_vector']:7.0f} B/vector  p50 {r['p50_ms']:.1f} ms",
                            flush=True,
                        )
    finally:
        server.stop()
    results["load_after"] = os.getloadavg()[0]
    (RESULTS / "storage.json").write_text(json.dumps(results, indent=1) + "\n", "utf-8")
    report(results)
    return 0


def report(results: dict[str, Any]) -> None:
    print(table(results))
    print(f"load {results['load_before']:.1f} -> {results['load_after']:.1f}")
    (RESULTS / "bench_storage.summary.json").write_text(json.dumps(summary(results)) + "\n", "utf-8")


def table(results: dict[str, Any]) -> str:
    sets = [k for k, v in results.items() if isinstance(v, dict)]
    columns = [f"{e} {s}" for e, ss in STORAGES.items() for s in ss]
    lines = ["recall@10 vs exact float32 (numpy) / bytes per vector on disk (vectors + their index)", ""]
    lines.append(f"{'':<24}" + "".join(f"{c:>20}" for c in columns))
    for name in sets:
        r = results[name]
        lines.append(
            f"{name + ' (' + str(r['vectors']) + ')':<24}"
            + "".join(f"{r[c]['recall10']:>11.3f} {r[c]['bytes_per_vector']:>6.0f} B" for c in columns)
        )
    return "\n".join(lines)


def summary(results: dict[str, Any]) -> list[list[Any]]:
    rows = []
    sets = [k for k, v in results.items() if isinstance(v, dict)]
    for engine, storages in STORAGES.items():
        for storage in storages:
            key = f"{engine} {storage}"
            recalls = ", ".join(
                f"{name} {results[name][key]['recall10']:.3f}"
                + (
                    f" (before: {results[name]['before'][storage]:.3f})"
                    if storage in results[name].get("before", {})
                    else ""
                )
                for name in sets
            )
            size = results[sets[-1]][key]
            worst = min(results[name][key]["recall10"] for name in sets)
            rows.append(
                [
                    f"`vectorStorage: {storage}` on {engine}: recall@10 vs exact float32 >= 0.95 (the HNSW bar)",
                    f"{recalls}; {size['bytes_per_vector']:.0f} bytes per 384-d vector on disk (vectors + index)",
                    worst >= 0.95,
                ]
            )
    return rows


if __name__ == "__main__":
    if "--report" in sys.argv:  # re-print from results/storage.json
        report(json.loads((RESULTS / "storage.json").read_text("utf-8")))
        sys.exit(0)
    sys.exit(main())
