"""Small reindex passes on PostgreSQL, with and without a write batch (decision 720).

A pass over fewer files than parse workers pay for (decision 190) parses in process. This bench
indexes a copy of a shared set once (``--set``, default opensearch-docs) on the test server
(``tests/pg_server.py``, fsync off), then for each pass size (``--sizes``, default 1,10,50,300)
and round changes that many files (a line appended to each) and times ``reindex`` ("changed") in
process with the in-process write batch off and on, alternating which goes first: the wall, this
process's CPU-seconds and the server's (every process of it, from ``/proc``). Size 300 also runs
as the default pass does (parse workers and their batch). The machine is shared: read the ratios
within one run, with the load printed beside.

Run: ``.venv/bin/python bench/bench_pg_small_pass.py [--set opensearch-docs] [--sizes 1,10,50,300]
[--rounds 5]``
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def main() -> int:
    import evalkit
    from bench_pg_scale import server_cpu
    from common import bench_service
    from pg_server import PgServer

    from local_vector_search_mcp.index import indexer

    args = sys.argv[1:]

    def option(name: str, default: str) -> str:
        return args[args.index(name) + 1] if name in args else default

    corpus = option("--set", "opensearch-docs")
    sizes = [int(n) for n in option("--sizes", "1,10,50,300").split(",")]
    rounds = int(option("--rounds", "5"))
    sets = {**evalkit.LARGE, **evalkit.CORPORA}
    server = PgServer()
    server.start()
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    in_process = indexer.plan_workers
    modes: dict[str, tuple[int, Any]] = {
        "no batch": (10**9, lambda configured, files: 0),
        "batch": (1, lambda configured, files: 0),
        "workers": (10**9, in_process),  # the default pass: workers from 300 files, their batch
    }
    runs: dict[tuple[int, str], list[dict[str, float]]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-pg-small-") as tmp:
            root = Path(tmp) / corpus
            shutil.copytree(sets[corpus], root)
            files = sorted(p for p in root.rglob("*.md"))
            svc = bench_service(
                root,
                Path(tmp) / "index.db",
                storage__backend="postgresql",
                storage__url=server.url,
                storage__schema="s_" + uuid.uuid4().hex[:12],
            )
            t0 = time.perf_counter()
            svc.reindex()
            print(f"{corpus}: {len(files)} files indexed in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            rng = random.Random(7)
            for r in range(rounds):
                for size in sizes:
                    names = ["no batch", "batch"] + (["workers"] if size >= 300 else [])
                    for mode in names if r % 2 == 0 else list(reversed(names)):
                        for path in rng.sample(files, size):
                            with path.open("a", encoding="utf-8") as f:
                                f.write(f"\n\nEdited in round {r}, {mode}, {size}.\n")
                        indexer.IN_PROCESS_BATCH_FILES, indexer.plan_workers = modes[mode]
                        load = os.getloadavg()[0]
                        c0, s0, t0 = _cpu(), server_cpu(postmaster), time.perf_counter()
                        result = svc.reindex()
                        wall = time.perf_counter() - t0
                        done = {"wall": wall, "cpu": _cpu() - c0, "server": server_cpu(postmaster) - s0, "load": load}
                        assert result["indexedFiles"] == size, result
                        runs.setdefault((size, mode), []).append(done)
                        print(
                            f"round {r} {size:>4} files {mode:<9} wall {wall * 1000:8.1f} ms"
                            f" CPU {done['cpu'] * 1000:7.1f} server {done['server'] * 1000:7.1f} load {load:.1f}",
                            file=sys.stderr,
                            flush=True,
                        )
            svc.store.close()
    finally:
        server.stop()
    print(f"== {corpus}, {rounds} rounds, median per pass (wall / this process's CPU / server CPU, ms)")
    for (size, mode), results in sorted(runs.items()):
        loads = [x["load"] for x in results]
        print(
            f"{size:>4} files {mode:<9} wall {statistics.median(x['wall'] for x in results) * 1000:8.1f}"
            f" (runs {', '.join(str(round(x['wall'] * 1000)) for x in results)})"
            f" CPU {statistics.median(x['cpu'] for x in results) * 1000:7.1f}"
            f" server {statistics.median(x['server'] for x in results) * 1000:7.1f}"
            f" load {min(loads):.1f}-{max(loads):.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
