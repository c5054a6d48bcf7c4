"""SQLite against PostgreSQL side by side, in one run, on the shared corpora (issue 14, Performance).

Per corpus (rust-book, vue-docs-zh-cn):

* **cold lexical index**: ``--reindex --force`` with ``--embedding-provider none`` from the CLI,
  a fresh index on each engine (wall time and the CLI's CPU-seconds; PostgreSQL's own CPU is
  not in the latter, its backend runs in another process);
* **hybrid search over MCP (stdio)**: one server per engine over the same vector-enabled index
  (the bundled model's vectors, as ``bench_search.py`` caches them in ``bench/.cache``; copied to
  PostgreSQL with ``index copy``, so nothing is embedded twice), every eval query through
  ``kb_search`` mode hybrid, two rounds, engines alternating query by query (the load of the
  shared machine falls on both alike); p50 / p95 per engine;
* **index size**: the SQLite file (+ WAL) against the schema's tables and indexes on PostgreSQL,
  lexical-only and vector-enabled.

PostgreSQL runs from ``tests/pg_server.py`` (PostgreSQL 18 + pgvector 0.8, fsync off). Writes
``results/engines.json`` and ``results/bench_engines.summary.json``.
Run: ``.venv/bin/python bench/bench_engines.py``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import evalkit  # noqa: E402
from pg_server import PgServer  # noqa: E402

RESULTS = HERE / "results"
CACHE = HERE / ".cache"
SERVER = [sys.executable, "-m", "local_vector_search_mcp"]
ROUNDS = 2


def pct(samples: list[float], q: float) -> float:
    return sorted(samples)[max(0, round(len(samples) * q) - 1)]


def cli(args: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU-seconds of one CLI run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([*SERVER, *args], cwd=cwd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr[-800:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pg_config(path: Path, url: str, schema: str, provider: str) -> Path:
    path.write_text(
        json.dumps(
            {"storage": {"backend": "postgresql", "url": url, "schema": schema}, "embedding": {"provider": provider}}
        ),
        "utf-8",
    )
    return path


def sqlite_bytes(db: Path) -> int:
    return sum(os.path.getsize(p) for p in (db, Path(f"{db}-wal")) if p.exists())


def pg_bytes(url: str, schema: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            b"select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c"
            b" join pg_namespace n on n.oid = c.relnamespace where n.nspname = %s and c.relkind = 'r'",
            (schema,),
        ).fetchone()
    return int(row[0]) if row else 0


def vector_index(corpus: str, root: Path) -> Path:
    """bench_search.py's cached vector-enabled index of ``corpus`` (built when missing)."""
    import bench_search

    svc, _ = bench_search.vector_service(corpus, root)
    svc.store.close()
    return CACHE / f"{corpus}-local.db"


async def ready(session: ClientSession) -> None:
    with anyio.fail_after(900):
        while True:
            status = (await session.call_tool("kb_status", {})).structured_content or {}
            if not status["indexing"]["isRunning"] and not (status.get("vectors") or {}).get("pending"):
                if not status["compatibility"]["isCompatible"]:
                    raise SystemExit(f"index not compatible: {status['compatibility']}")
                return
            await anyio.sleep(0.5)


async def hybrid(servers: dict[str, list[str]], cwd: Path, queries: list[str]) -> dict[str, dict[str, float]]:
    """Every query on every engine's server, engines alternating, ``ROUNDS`` times."""
    from contextlib import AsyncExitStack

    times: dict[str, list[float]] = {name: [] for name in servers}
    errors = dict.fromkeys(servers, 0)
    async with AsyncExitStack() as stack:
        sessions = {}
        for name, args in servers.items():
            params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], env=dict(os.environ), cwd=cwd)
            errlog = stack.enter_context(open(cwd / f"{name}-server.log", "w"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await ready(session)
            await session.call_tool(
                "kb_search", {"request": {"query": queries[0], "mode": "hybrid"}}
            )  # loads the model
            sessions[name] = session
        for round_ in range(ROUNDS):
            # each round's own trailing dots: the server keeps recent query vectors (decision 659),
            # and a repeated question would be timed without its embedding (trailing spaces no
            # longer differ: the query's whitespace is collapsed before embedding, decision 1008)
            for q in (f"{query} {'.' * (round_ + 1)}" for query in queries):
                for name, session in sessions.items():
                    t0 = time.perf_counter()
                    result = await session.call_tool("kb_search", {"request": {"query": q, "mode": "hybrid"}})
                    times[name].append((time.perf_counter() - t0) * 1000)
                    found = (result.structured_content or {}).get("results") or []
                    if result.is_error or not found or found[0]["searchMode"] != "hybrid":  # an error or a fallback
                        errors[name] += 1
    return {
        name: {"p50_ms": statistics.median(t), "p95_ms": pct(t, 0.95), "calls": len(t), "errors": errors[name]}
        for name, t in times.items()
    }


def run_corpus(corpus: str, root: Path, server: PgServer, tmp: Path) -> dict[str, Any]:
    work = tmp / corpus
    work.mkdir()
    out: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    # cold lexical index, SQLite then PostgreSQL
    lex_db = work / "lexical.db"
    wall, cpu = cli(["--root", str(root), "--storage-path", str(lex_db), "--embedding-provider", "none",
                     "--reindex", "--force"], work)  # fmt: skip
    out["sqlite"] = {"lexical_index_wall_s": wall, "lexical_index_cpu_s": cpu, "lexical_bytes": sqlite_bytes(lex_db)}
    schema = server.fresh_schema()
    config = pg_config(work / "pg-lexical.json", server.url, schema, "none")
    wall, cpu = cli(["--root", str(root), "--config", str(config), "--reindex", "--force"], work)
    out["postgresql"] = {
        "lexical_index_wall_s": wall,
        "lexical_index_cpu_s": cpu,
        "lexical_bytes": pg_bytes(server.url, schema),
    }
    # the same vector-enabled index on both engines
    db = work / "hybrid.db"
    shutil.copy(vector_index(corpus, root), db)
    vschema = server.fresh_schema()
    wall, _ = cli(["--root", str(root), "--storage-path", str(db), "index", "copy", "--to",
                   f"{server.url}#{vschema}"], work)  # fmt: skip
    out["postgresql"]["copy_from_sqlite_s"] = wall
    out["sqlite"]["hybrid_bytes"] = sqlite_bytes(db)
    out["postgresql"]["hybrid_bytes"] = pg_bytes(server.url, vschema)
    vconfig = pg_config(work / "pg-hybrid.json", server.url, vschema, "local")
    queries = [q.text for q in evalkit.load_queries(corpus)]
    latency = anyio.run(
        hybrid,
        {
            "sqlite": ["--root", str(root), "--storage-path", str(db), "--embedding-provider", "local"],
            "postgresql": ["--root", str(root), "--config", str(vconfig)],
        },
        work,
        queries,
    )
    for name, figures in latency.items():
        out[name].update({f"hybrid_{k}": v for k, v in figures.items()})
    out["load_after"] = os.getloadavg()[0]
    return out


def main() -> int:
    RESULTS.mkdir(exist_ok=True)
    results: dict[str, Any] = {}
    server = PgServer()
    server.start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-engines-") as tmp:
            for corpus, root in evalkit.CORPORA.items():
                results[corpus] = run_corpus(corpus, root, server, Path(tmp))
                print(f"{corpus}: {json.dumps(results[corpus])}", flush=True)
    finally:
        server.stop()
    (RESULTS / "engines.json").write_text(json.dumps(results, indent=1) + "\n", "utf-8")
    print()
    print(f"{'corpus':<16} {'engine':<11} {'cold lexical':>14} {'hybrid p50/p95 (MCP)':>22} {'lexical index':>14} "
          f"{'hybrid index':>13}")  # fmt: skip
    for corpus, r in results.items():
        for engine in ("sqlite", "postgresql"):
            e = r[engine]
            print(
                f"{corpus:<16} {engine:<11} {e['lexical_index_wall_s']:>6.1f} s {e['lexical_index_cpu_s']:>4.1f} cpu"
                f" {e['hybrid_p50_ms']:>10.1f} / {e['hybrid_p95_ms']:>6.1f} ms"
                f" {e['lexical_bytes'] / 1e6:>11.1f} MB {e['hybrid_bytes'] / 1e6:>10.1f} MB"
            )
        print(f"{'':<16} load {r['load_before']:.1f} -> {r['load_after']:.1f}")
    rows = []
    for corpus, r in results.items():
        sq, pg = r["sqlite"], r["postgresql"]
        rows.append(
            [
                f"{corpus}: SQLite vs PostgreSQL side by side (cold lexical index, hybrid p50/p95 over MCP, size)",
                f"cold lexical {sq['lexical_index_wall_s']:.1f} s vs {pg['lexical_index_wall_s']:.1f} s; hybrid "
                f"{sq['hybrid_p50_ms']:.0f}/{sq['hybrid_p95_ms']:.0f} vs {pg['hybrid_p50_ms']:.0f}/"
                f"{pg['hybrid_p95_ms']:.0f} ms; index {sq['hybrid_bytes'] / 1e6:.1f} vs "
                f"{pg['hybrid_bytes'] / 1e6:.1f} MB "
                f"(load {r['load_before']:.1f})",
                sq["hybrid_errors"] == 0 and pg["hybrid_errors"] == 0,
            ]
        )
    (RESULTS / "bench_engines.summary.json").write_text(json.dumps(rows) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
