"""Run every benchmark (``make bench``): each ``bench/bench_*.py`` in its own
process, in turn, with ``OMP_NUM_THREADS=1``. Each prints its ratios against
same-run baselines; the output is also kept in ``bench/results/<name>.txt``.
``bench_search.py`` runs last and writes docs/performance.md, quoting the
other benches' output. Extra arguments go to bench_search.py (``--quick``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def main() -> int:
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    benches = sorted(HERE.glob("bench_*.py"), key=lambda p: (p.name == "bench_search.py", p.name))
    RESULTS.mkdir(exist_ok=True)
    failed = []
    for bench in benches:
        args = sys.argv[1:] if bench.name == "bench_search.py" else []
        print(f"== {bench.name}", flush=True)
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, str(bench), *args], stdout=subprocess.PIPE, text=True, env=env)
        sys.stdout.write(proc.stdout)
        (RESULTS / f"{bench.stem}.txt").write_text(proc.stdout, "utf-8")
        print(f"== {bench.name}: exit {proc.returncode}, {time.perf_counter() - started:.0f} s", flush=True)
        if proc.returncode:
            failed.append(bench.name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
