"""Snippets: the cost of ``make_snippet`` and of a lexical search, against the session-7 snippet path.

Decision 390 made the snippet path cheaper without changing a character of its output. The
same-run baseline is that previous implementation, kept as the test oracle
(``tests/search/snippet_oracle.py``). For rust-book, vue-docs-zh-cn and opensearch-docs (a
lexical index each, built in a temporary folder), every labelled query's top 10 lexical results
are searched through the engine, and the text and query terms of each result are kept. Then:

1. equality: the snippet of every kept (text, terms) pair, by both implementations;
2. CPU per snippet over all the pairs, both implementations, in alternating rounds (median of
   the rounds), each query's highlighter cached as a search has it;
3. CPU per lexical search (``KbClient.search``, top 10) p50 / p95, every query run with either
   snippet path in turn, alternating which goes first, on the same index in the same process,
   so the load falls on both alike.

Goals: every snippet equal; snippets at most 0.8x the old path's CPU on each corpus. Writes
``results/bench_snippets.summary.json`` (rows of docs/performance.md); prints the figures.
Run: ``.venv/bin/python bench/bench_snippets.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "search"))

import evalkit  # noqa: E402
import snippet_oracle  # noqa: E402
from common import bench_service  # noqa: E402

import local_vector_search_mcp.search.engine as engine  # noqa: E402
from local_vector_search_mcp.search import text  # noqa: E402

RESULTS = HERE / "results"
CORPORA = ("rust-book", "vue-docs-zh-cn", "opensearch-docs")
ROUNDS = 7  # snippet timing rounds
SEARCH_ROUNDS = 5  # lexical search rounds
GOAL_RATIO = 0.8

Snippet = Callable[..., str]
IMPLS: dict[str, Snippet] = {"before": snippet_oracle.make_snippet, "after": text.make_snippet}


def measure(corpus: str) -> dict[str, Any]:
    root = {**evalkit.CORPORA, **evalkit.LARGE}[corpus]
    svc = bench_service(root, Path(tempfile.mkdtemp(prefix="bench-snippets-")) / "index.db")
    svc.reindex()
    queries = [q.text for q in evalkit.load_queries(corpus)]

    pairs: list[tuple[str, tuple[str, ...]]] = []

    def record(body: str, terms: tuple[str, ...]) -> str:
        pairs.append((body, terms))
        return text.make_snippet(body, terms)

    engine.make_snippet = record
    for q in queries:
        svc.search(query=q, mode="lexical", top_k=10)
    differ = sum(snippet_oracle.make_snippet(b, t) != text.make_snippet(b, t) for b, t in pairs)

    per_snippet: dict[str, list[float]] = {name: [] for name in IMPLS}
    for r in range(ROUNDS):
        for name in list(IMPLS)[:: 1 if r % 2 else -1]:
            fn = IMPLS[name]
            started = time.process_time()
            for body, terms in pairs:
                fn(body, terms)
            per_snippet[name].append((time.process_time() - started) / len(pairs) * 1000)

    per_search: dict[str, list[float]] = {name: [] for name in IMPLS}
    for fn in IMPLS.values():  # warm both paths' caches
        engine.make_snippet = fn
        for q in queries:
            svc.search(query=q, mode="lexical", top_k=10)
    for r in range(SEARCH_ROUNDS):
        for i, q in enumerate(queries):
            for name in list(IMPLS)[:: 1 if (i + r) % 2 else -1]:
                engine.make_snippet = IMPLS[name]
                started = time.process_time()
                svc.search(query=q, mode="lexical", top_k=10)
                per_search[name].append((time.process_time() - started) * 1000)
    engine.make_snippet = text.make_snippet
    svc.shutdown()

    def pct(xs: list[float], q: float) -> float:
        return sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]

    return {
        "pairs": len(pairs),
        "differ": differ,
        "snippet_ms": {name: statistics.median(xs) for name, xs in per_snippet.items()},
        "search_ms": {name: {"p50": pct(xs, 0.5), "p95": pct(xs, 0.95)} for name, xs in per_search.items()},
        "searches": len(per_search["after"]),
    }


def main() -> int:
    load_before = os.getloadavg()[0]
    found = {corpus: measure(corpus) for corpus in CORPORA}
    load = f"load {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores"
    for corpus, r in found.items():
        s, q = r["snippet_ms"], r["search_ms"]
        print(
            f"{corpus}: {r['pairs']} snippets, {r['differ']} differ; CPU per snippet {s['before']:.3f} -> "
            f"{s['after']:.3f} ms ({s['after'] / s['before']:.2f}x); lexical search CPU p50 "
            f"{q['before']['p50']:.2f} -> {q['after']['p50']:.2f} ms, p95 {q['before']['p95']:.2f} -> "
            f"{q['after']['p95']:.2f} ms ({r['searches']} searches each)"
        )
    print(load)
    pairs = sum(r["pairs"] for r in found.values())
    differ = sum(r["differ"] for r in found.values())
    ratios = {c: r["snippet_ms"]["after"] / r["snippet_ms"]["before"] for c, r in found.items()}
    rows = [
        [
            "Snippets equal to the session-7 path's on every query x top-10 lexical hit (3 corpora)",
            f"{pairs - differ} of {pairs} equal",
            differ == 0,
        ],
        [
            f"Snippet CPU <= {GOAL_RATIO}x the session-7 path's (same run)",
            "; ".join(
                f"{c} {r['snippet_ms']['before']:.3f} -> {r['snippet_ms']['after']:.3f} ms ({ratios[c]:.2f}x)"
                for c, r in found.items()
            )
            + f"; {load}",
            all(x <= GOAL_RATIO for x in ratios.values()),
        ],
        [
            "Lexical search CPU p50 / p95 with the session-7 snippet path -> now (reported; same process)",
            "; ".join(
                f"{c} {r['search_ms']['before']['p50']:.1f} / {r['search_ms']['before']['p95']:.1f} -> "
                f"{r['search_ms']['after']['p50']:.1f} / {r['search_ms']['after']['p95']:.1f} ms"
                for c, r in found.items()
            ),
            True,
        ],
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_snippets.summary.json").write_text(json.dumps(rows) + "\n", "utf-8")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
