"""A cold lexical index on PostgreSQL and SQLite, several source trees in one run (decision 680).

For each shared set and each tree (``--trees name=/path/to/checkout,...``: a detached worktree of
main beside this one, say), each engine in a fresh process whose ``PYTHONPATH`` is that tree's
``src`` and ``generated`` (imports excluded from the timers), ``ROUNDS`` rounds with the trees and
engines alternating: the wall time of ``reindex`` of an empty index with the default parse
workers, this process's and its workers' CPU-seconds, the PostgreSQL server's (every process of
it, from ``/proc``, as ``bench_pg_scale.py``), and on PostgreSQL a digest of every stored row
that does not depend on ids or the clock (documents, chunks with their ``tsv`` as text, links,
document metadata), which must be equal across the trees.

PostgreSQL runs from ``tests/pg_server.py`` (fsync off). The machine is shared: read the ratios
within one run, with the load printed beside.

Run: ``.venv/bin/python bench/bench_pg_cold.py --trees before=/tmp/main,after=. [--sets
opensearch-docs,rust-book] [--rounds 2] [--engines postgresql,sqlite]``
"""

from __future__ import annotations

import hashlib
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

ROUNDS = 2


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _writer_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


_DIGEST_QUERIES = (
    "select path, source_hash, size, mtime_ns, properties::text from documents order by path",
    "select d.path, c.ordinal, c.pointer, c.anchor, c.text, c.heading_path, c.embedding_text_hash, c.tsv::text,"
    " c.ntok, c.nstem from chunks c join documents d on d.id = c.doc_id order by d.path, c.ordinal",
    "select d.path, l.ordinal, l.kind, l.destination, l.text, l.anchor from links l"
    " join documents d on d.id = l.doc_id order by d.path, l.ordinal",
    "select d.path, m.tags, m.aliases, m.headings, m.block_ids, m.tag_keys from doc_meta m"
    " join documents d on d.id = m.doc_id order by d.path",
    "select lexeme, ndoc from term_stats order by lexeme",
)


def child(engine: str, root: Path, url: str, postmaster: int) -> dict[str, Any]:
    import uuid

    from bench_pg_scale import server_cpu
    from common import bench_service

    work = Path(tempfile.mkdtemp(prefix="lvsm-pgcold-"))
    overrides: dict[str, Any] = {}
    if engine == "postgresql":
        schema = "s_" + uuid.uuid4().hex[:12]
        overrides = {"storage__backend": "postgresql", "storage__url": url, "storage__schema": schema}
    svc = bench_service(root, work / "index.db", **overrides)
    pg = (lambda: server_cpu(postmaster)) if engine == "postgresql" else (lambda: 0.0)
    out: dict[str, Any] = {"load": os.getloadavg()[0]}
    c0, w0, s0, t0 = _cpu(), _writer_cpu(), pg(), time.perf_counter()
    first = svc.reindex()
    out.update(wall_s=time.perf_counter() - t0, cpu_s=_cpu() - c0, server_cpu_s=pg() - s0)
    out["writer_cpu_s"] = _writer_cpu() - w0
    out.update(files=first["indexedFiles"], chunks=first["chunksIndexed"], load_after=os.getloadavg()[0])
    if engine == "postgresql":
        digest = hashlib.sha256()
        for query in _DIGEST_QUERIES:
            for row in svc.store._rows(query):
                digest.update(repr(row).encode())
        out["digest"] = digest.hexdigest()[:16]
        svc.store._rows(f"drop schema {schema} cascade")
    svc.store.close()
    shutil.rmtree(work, ignore_errors=True)
    return out


def run_child(tree: Path, engine: str, root: Path, url: str, postmaster: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}:{tree / 'generated'}", "OMP_NUM_THREADS": "1"}
    args = [sys.executable, str(Path(__file__).resolve()), "--child", engine, str(root), url, str(postmaster)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=3600, env=env)
    if proc.returncode:
        raise SystemExit(f"{engine} with {tree} failed: {proc.stderr.strip()[-1500:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    import evalkit
    from pg_server import PgServer

    args = sys.argv[1:]

    def option(name: str, default: str) -> str:
        return args[args.index(name) + 1] if name in args else default

    trees = {k: Path(v).resolve() for k, v in (t.split("=", 1) for t in option("--trees", "this=.").split(","))}
    sets = {**evalkit.LARGE, **evalkit.CORPORA}
    wanted = option("--sets", "opensearch-docs,rust-book").split(",")
    engines = option("--engines", "postgresql,sqlite").split(",")
    rounds = int(option("--rounds", str(ROUNDS)))
    server = PgServer()
    server.start()
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    report: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-pg-cold-") as tmp:
            for corpus in wanted:
                root = Path(tmp) / corpus
                shutil.copytree(sets[corpus], root)
                runs: dict[str, list[dict[str, Any]]] = {}
                for r in range(rounds):
                    order = list(trees.items()) if r % 2 == 0 else list(reversed(trees.items()))
                    for name, tree in order:
                        for engine in engines if r % 2 == 0 else list(reversed(engines)):
                            result = run_child(tree, engine, root, server.url, postmaster)
                            runs.setdefault(f"{name} {engine}", []).append(result)
                            print(f"{corpus} {name:>8} {engine:<10} {_line(result)}", file=sys.stderr, flush=True)
                report[corpus] = runs
                print(f"== {corpus}")
                for key, results in runs.items():
                    walls = [x["wall_s"] for x in results]
                    digests = sorted({x.get("digest", "-") for x in results})
                    listed = ", ".join(f"{w:.2f}" for w in walls)
                    print(
                        f"{key:<22} wall median {statistics.median(walls):6.2f} s (runs {listed})"
                        f" CPU {statistics.median(x['cpu_s'] for x in results):6.2f}"
                        f" writer {statistics.median(x['writer_cpu_s'] for x in results):5.2f}"
                        f" server {statistics.median(x['server_cpu_s'] for x in results):5.2f}"
                        f" load {min(x['load'] for x in results):.1f}-{max(x['load_after'] for x in results):.1f}"
                        f" rows {','.join(digests)}"
                    )
    finally:
        server.stop()
    out = HERE / "results" / "pg_cold.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    return 0


def _line(r: dict[str, Any]) -> str:
    return (
        f"wall {r['wall_s']:6.2f} s CPU {r['cpu_s']:6.2f} writer {r['writer_cpu_s']:5.2f}"
        f" server {r['server_cpu_s']:5.2f}"
        f" files {r['files']} chunks {r['chunks']} load {r['load']:.1f}-{r['load_after']:.1f} {r.get('digest', '')}"
    )


if __name__ == "__main__":
    if "--child" in sys.argv:
        at = sys.argv.index("--child")
        engine, root, url, postmaster = sys.argv[at + 1 : at + 5]
        print(json.dumps(child(engine, Path(root), url, int(postmaster))))
    else:
        sys.exit(main())
