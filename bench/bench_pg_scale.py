"""SQLite and PostgreSQL side by side at scale, in one run: indexing, reindexing and lexical search.

For each shared set (opensearch-docs, 1,758 files, first; then rust-book and vue-docs-zh-cn),
each engine in a fresh process (imports excluded from the timers; the engines alternate), on its
own copy of the tree (the edits below change files):

* **cold lexical index**: ``reindex`` of an empty index with the default parse workers: wall
  time, this process's and its workers' CPU-seconds, and PostgreSQL's own CPU-seconds (every
  process of the server, from ``/proc``: the backends do the GIN inserts and the ranking);
* **no-op reindex**: the median of ``REPEATS`` reindexes that find nothing to do (after one
  that settles the entries recorded racily clean, decision 401);
* **one-file-edit reindex**: the median of ``REPEATS`` reindexes after a line is appended to
  one file (a different file each time);
* **lexical search**: every labelled query through ``kb_search`` mode lexical (the handlers, in
  process), ``ROUNDS`` rounds after a warm-up (on PostgreSQL after a ``vacuum (analyze)``, what
  autovacuum does within a minute of the writes, so its work is not timed as the searches'):
  wall p50 / p95 and nDCG@10 (file and section, ``evalkit.py``); the parent counts the queries
  whose top 10 differ between the engines.

PostgreSQL runs from ``tests/pg_server.py`` (PostgreSQL 18 + pgvector, fsync off), the server
the tests start. The machine is shared: read the ratios in one run, with the load printed
beside. Writes ``results/pg_scale.json``.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python bench/bench_pg_scale.py [--sets opensearch-docs]
[--profile DIR]`` (``--profile``: cProfile of each PostgreSQL child's cold index and search
into ``DIR``, with the timings then inflated by the profiler).
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

os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import evalkit  # noqa: E402

RESULTS = HERE / "results"
REPEATS = 5  # no-op and one-file-edit reindexes, median
ROUNDS = 2  # lexical search: every labelled query this many times
ENGINES = ("sqlite", "postgresql")


def pct(samples: list[float], q: float) -> float:
    return sorted(samples)[max(0, round(len(samples) * q) - 1)]


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def server_cpu(postmaster: int) -> float:
    """CPU-seconds of a PostgreSQL server so far: the postmaster, its ended children (its
    ``cutime``/``cstime``) and its living ones (backends, autovacuum, writers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        pid, ppid = int(entry.name), int(fields[1])
        if pid == postmaster or ppid == postmaster:
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / tick


# child ---------------------------------------------------------------------------
def child(engine: str, corpus: str, root: Path, url: str, postmaster: int, profile: str | None) -> dict[str, Any]:
    import uuid

    from common import bench_service

    work = Path(tempfile.mkdtemp(prefix="lvsm-pgscale-"))
    overrides: dict[str, Any] = {}
    if engine == "postgresql":
        schema = "s_" + uuid.uuid4().hex[:12]
        overrides = {"storage__backend": "postgresql", "storage__url": url, "storage__schema": schema}
    svc = bench_service(root, work / "index.db", knowledge_base__allow_writes=True, **overrides)
    pg = (lambda: server_cpu(postmaster)) if engine == "postgresql" else (lambda: 0.0)
    profiler = None
    if profile and engine == "postgresql":
        import cProfile

        profiler = cProfile.Profile()
    out: dict[str, Any] = {"engine": engine, "corpus": corpus, "load": os.getloadavg()[0]}
    c0, s0, t0 = _cpu(), pg(), time.perf_counter()
    if profiler:
        profiler.enable()
    first = svc.reindex()
    if profiler:
        profiler.disable()
        profiler.dump_stats(str(Path(profile or ".") / f"{corpus}-cold-index.prof"))
    out["cold"] = {
        "wall_s": time.perf_counter() - t0,
        "cpu_s": _cpu() - c0,
        "server_cpu_s": pg() - s0,
        "files": first["scannedFiles"],
        "chunks": first["chunksIndexed"],
    }
    svc.reindex()  # settles the entries stored racily clean (re-read once, decision 401)
    noop, noop_server = [], []
    for _ in range(REPEATS):
        s0, t0 = pg(), time.perf_counter()
        again = svc.reindex()
        noop.append(time.perf_counter() - t0)
        noop_server.append(pg() - s0)
        assert again["indexedFiles"] == 0, again
    files = sorted(root.rglob("*.md"))
    refresh = _timed_refresh(svc.store)
    edit, edit_server = [], []
    for i in range(REPEATS):
        target = files[(i + 1) * len(files) // (REPEATS + 2)]
        with open(target, "a", encoding="utf-8") as f:
            f.write(f"\n\nAn edit, number {i}, with the word benchedit{i}.\n")
        s0, t0 = pg(), time.perf_counter()
        changed = svc.reindex()
        edit.append(time.perf_counter() - t0)
        edit_server.append(pg() - s0)
        assert changed["indexedFiles"] == 1, changed
    edit_refresh = list(refresh)
    refresh.clear()
    from local_vector_search_mcp.dispatch import invoke

    patch = []
    for i in range(REPEATS):  # kb_patch: the edit and its sync (the refresh included), as an agent waits for it
        target = files[(i + 1) * len(files) // (REPEATS + 2) + 1].relative_to(root).as_posix()
        operation = {"kind": "insert_after", "pointer": "document", "markdown": f"A patch with benchpatch{i}."}
        t0 = time.perf_counter()
        invoke(svc.ws, "kb_patch", {"request": {"path": target, "operations": [operation]}})
        patch.append(time.perf_counter() - t0)
    out["noop"] = {"median_s": statistics.median(noop), "server_cpu_s": statistics.median(noop_server)}
    out["edit"] = {
        "median_s": statistics.median(edit),
        "server_cpu_s": statistics.median(edit_server),
        "refresh_s": statistics.median(edit_refresh),
    }
    out["patch"] = {"median_s": statistics.median(patch), "refresh_s": statistics.median(refresh) if refresh else 0.0}
    if engine == "postgresql":  # what autovacuum does within a minute of the writes above
        svc.store._rows("vacuum (analyze) chunks, documents, term_stats")
    queries = evalkit.load_queries(corpus)

    def search(text: str) -> list[tuple[str, str | None]]:
        return [(r["path"], r["headingPath"]) for r in svc.search(query=text, mode="lexical", top_k=10)["results"]]

    for q in queries[:5]:
        search(q.text)  # warm
    times: list[float] = []
    hits: dict[str, list[tuple[str, str | None]]] = {}
    c0, s0 = _cpu(), pg()
    if profiler:
        profiler = __import__("cProfile").Profile()
        profiler.enable()
    for _ in range(ROUNDS):
        for q in queries:
            t0 = time.perf_counter()
            found = search(q.text)
            times.append((time.perf_counter() - t0) * 1000)
            hits.setdefault(q.id, found)
    if profiler:
        profiler.disable()
        profiler.dump_stats(str(Path(profile or ".") / f"{corpus}-lexical-search.prof"))
    scores = [evalkit.score_query(q, hits[q.id]) for q in queries]
    out["lexical"] = {
        "p50_ms": statistics.median(times),
        "p95_ms": pct(times, 0.95),
        "calls": len(times),
        "cpu_ms_per_query": (_cpu() - c0) * 1000 / len(times),
        "server_cpu_ms_per_query": (pg() - s0) * 1000 / len(times),
        "ndcg_file": sum(s["ndcg_file"] for s in scores) / len(scores),
        "ndcg_section": sum(s["ndcg_section"] for s in scores) / len(scores),
        "hits": hits,
    }
    out["load_after"] = os.getloadavg()[0]
    svc.store.close()
    shutil.rmtree(work, ignore_errors=True)
    return out


def _timed_refresh(store: Any) -> list[float]:
    """The seconds of each ``refresh_term_stats`` call from now on (the term-count snapshot's share
    of an edit, decisions 570 and 610)."""
    seconds: list[float] = []
    inner = store.refresh_term_stats

    def timed() -> None:
        t0 = time.perf_counter()
        inner()
        seconds.append(time.perf_counter() - t0)

    store.refresh_term_stats = timed
    return seconds


# parent --------------------------------------------------------------------------
def run_child(engine: str, corpus: str, root: Path, url: str, postmaster: int, profile: str | None) -> dict[str, Any]:
    args = [sys.executable, str(Path(__file__).resolve()), "--child", engine, corpus, str(root), url, str(postmaster)]
    proc = subprocess.run([*args, profile or ""], capture_output=True, text=True, timeout=3600)
    if proc.returncode:
        raise SystemExit(f"{engine} on {corpus} failed: {proc.stderr.strip()[-1500:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    from pg_server import PgServer

    args = sys.argv[1:]
    sets = {**evalkit.LARGE, **evalkit.CORPORA}
    if "--sets" in args:
        wanted = args[args.index("--sets") + 1].split(",")
        sets = {k: v for k, v in sets.items() if k in wanted}
    profile = args[args.index("--profile") + 1] if "--profile" in args else None
    if profile:
        Path(profile).mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE)
    report: dict[str, Any] = {"commit": commit.stdout.strip(), "built": time.strftime("%Y-%m-%d %H:%M"), "sets": {}}
    server = PgServer()
    server.start()
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    try:
        with tempfile.TemporaryDirectory(prefix="bench-pg-scale-") as tmp:
            for corpus, source in sets.items():
                entry: dict[str, Any] = {}
                for engine in ENGINES:
                    root = Path(tmp) / engine / corpus
                    shutil.copytree(source, root)
                    print(f"{corpus}: {engine}", file=sys.stderr, flush=True)
                    entry[engine] = run_child(engine, corpus, root, server.url, postmaster, profile)
                a, b = (entry[e]["lexical"].pop("hits") for e in ENGINES)
                entry["top10_differ"] = sorted(qid for qid in a if a[qid] != b[qid])
                report["sets"][corpus] = entry
                print_set(corpus, entry)
    finally:
        server.stop()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pg_scale.json").write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    return 0


def print_set(corpus: str, entry: dict[str, Any]) -> None:
    sq = entry["sqlite"]
    print(f"== {corpus}: {sq['cold']['files']} files, {sq['cold']['chunks']} chunks")
    print(
        f"{'engine':<11} {'cold wall':>9} {'CPU':>6} {'PG CPU':>7} {'no-op':>8} {'edit':>8} {'edit PG':>8}"
        f" {'refresh':>8} {'kb_patch':>8}"
        f" {'lexical p50/p95':>16} {'CPU/q':>6} {'PG/q':>6} {'nDCG file/sect':>15} {'load':>9}"
    )
    for engine in ENGINES:
        e = entry[engine]
        c, lx = e["cold"], e["lexical"]
        print(
            f"{engine:<11} {c['wall_s']:>7.1f} s {c['cpu_s']:>6.1f} {c['server_cpu_s']:>7.1f}"
            f" {e['noop']['median_s'] * 1000:>6.0f}ms {e['edit']['median_s'] * 1000:>6.0f}ms"
            f" {e['edit']['server_cpu_s'] * 1000:>6.0f}ms"
            f" {e['edit']['refresh_s'] * 1000:>6.0f}ms {e['patch']['median_s'] * 1000:>6.0f}ms"
            f" {lx['p50_ms']:>7.1f}/{lx['p95_ms']:>6.1f}ms {lx['cpu_ms_per_query']:>6.1f}"
            f" {lx['server_cpu_ms_per_query']:>6.1f} {lx['ndcg_file']:>7.3f}/{lx['ndcg_section']:.3f}"
            f" {e['load']:>4.1f}-{e['load_after']:.1f}"
        )
    print(f"lexical top 10 differ between the engines on {len(entry['top10_differ'])} queries: {entry['top10_differ']}")


if __name__ == "__main__":
    if "--child" in sys.argv:
        at = sys.argv.index("--child")
        engine, corpus, root, url, postmaster, profile = sys.argv[at + 1 : at + 7]
        print(json.dumps(child(engine, corpus, Path(root), url, int(postmaster), profile or None)))
    else:
        sys.exit(main())
