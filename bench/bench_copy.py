"""``index copy`` (issue 14 item 5): moving an index between engines instead of rebuilding it.

The source is rust-book indexed into SQLite with 384-dimensional vectors (a deterministic
stand-in embedder: a copy moves stored bytes, their values cost nothing more). Same-run baseline:
what rebuilding on the other engine would have to redo, the bundled local model embedding these
chunks, measured on an evenly spaced sample of them (CPU-s per chunk x chunks). Measured: the
copy SQLite -> PostgreSQL and PostgreSQL -> SQLite (wall and client CPU) and its verification.

Goal (ours): copy plus verification at least 10x faster than re-embedding the chunks.
Writes ``results/bench_copy.summary.json`` for docs/performance.md.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parent / "tests"))

from kb_fakes import HashEmbedder, make_workspace  # noqa: E402
from pg_server import PgServer  # noqa: E402
from shared_data import CORPORA  # noqa: E402

from local_vector_search_mcp.embeddings import make_embedder  # noqa: E402
from local_vector_search_mcp.index.copy import copy_index, verify_copy  # noqa: E402
from local_vector_search_mcp.index.postgres import PostgresStore  # noqa: E402
from local_vector_search_mcp.index.sqlite import SqliteStore  # noqa: E402

CORPUS = CORPORA / "rust-book"
SAMPLE = 48  # chunks embedded with the local model for the baseline
GOAL = 10.0


def _timed(fn):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def backend_cpu(store: PostgresStore) -> float:
    """CPU seconds of this thread's PostgreSQL backend (the server's share of the work)."""
    (pid,) = store._conn().execute(b"select pg_backend_pid()").fetchone() or (0,)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    RESULTS.mkdir(exist_ok=True)
    load = os.getloadavg()[0]
    server = PgServer()
    server.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-copy-") as tmp:
            work = Path(tmp)
            ws = make_workspace(CORPUS, "local", storage=work / "source.db", embedder=HashEmbedder(384))
            ws.indexing.reindex("all", False)
            ws.indexing.wait_vectors(600)
            ws.close()
            source = SqliteStore(work / "source.db")
            chunks = source.counts().chunks
            texts = [c.text for d in source.export_documents(None, 10_000) for c in d.chunks]
            sample = texts[:: max(1, len(texts) // SAMPLE)][:SAMPLE]
            embedder = make_embedder(ws.config.embedding)
            assert embedder is not None
            embedder.embed_passages(sample[:2])  # load the model outside the measurement
            _, _, embed_cpu = _timed(lambda: embedder.embed_passages(sample))
            reembed_cpu = embed_cpu / len(sample) * chunks

            target = PostgresStore(server.url, server.fresh_schema())
            target.ensure_schema(None, "float32")  # opens this thread's connection: its backend is measured
            server0 = backend_cpu(target)
            result, to_pg_wall, to_pg_cpu = _timed(lambda: copy_index(source, target, force=True))
            server1 = backend_cpu(target)
            verified, verify_wall, verify_cpu = _timed(lambda: verify_copy(source, target, result))
            server2 = backend_cpu(target)
            back = SqliteStore(work / "back.db")
            result_back, back_wall, back_cpu = _timed(lambda: copy_index(target, back))
            verified_back = verify_copy(target, back, result_back)
            for store in (source, target, back):
                store.close()
    finally:
        server.stop()
    ok = not verified["mismatches"] and not verified_back["mismatches"]
    copy_cpu = to_pg_cpu + (server1 - server0) + verify_cpu + (server2 - server1)
    ratio = reembed_cpu / copy_cpu
    figures = {
        "chunks": chunks,
        "documents": result.documents,
        "load": round(load, 2),
        "reembed_cpu_s_estimate": round(reembed_cpu, 1),
        "embed_cpu_ms_per_chunk": round(embed_cpu / len(sample) * 1000, 1),
        "copy_to_postgresql_wall_s": round(to_pg_wall, 2),
        "copy_to_postgresql_client_cpu_s": round(to_pg_cpu, 2),
        "copy_to_postgresql_server_cpu_s": round(server1 - server0, 2),
        "verify_wall_s": round(verify_wall, 2),
        "verify_cpu_s": round(verify_cpu + server2 - server1, 2),
        "copy_and_verify_cpu_s": round(copy_cpu, 2),
        "copy_back_to_sqlite_wall_s": round(back_wall, 2),
        "copy_back_to_sqlite_client_cpu_s": round(back_cpu, 2),
        "verified": ok,
        "ratio": round(ratio, 1),
    }
    print(json.dumps(figures, indent=1))
    rows = [
        [
            f"index copy: rust-book SQLite -> PostgreSQL with verification >= {GOAL:.0f}x faster than re-embedding",
            f"{chunks} chunks, 384-d: copy + verify {copy_cpu:.1f} CPU-s, client and PostgreSQL backend "
            f"({to_pg_wall:.1f} + {verify_wall:.1f} s wall); back to SQLite {back_wall:.1f} s; re-embedding "
            f"with the bundled model ~{reembed_cpu:.0f} CPU-s ({figures['embed_cpu_ms_per_chunk']} ms per "
            f"chunk, {len(sample)} sampled); x{ratio:.0f}; every row and vector verified: {ok} (load {load:.1f})",
            ok and ratio >= GOAL,
        ]
    ]
    (RESULTS / "bench_copy.summary.json").write_text(json.dumps(rows) + "\n", "utf-8")
    for goal, value, met in rows:
        print(f"{'met' if met else 'NOT MET'}: {goal}: {value}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
