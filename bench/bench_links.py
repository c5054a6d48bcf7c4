"""The link graph's costs (issue 12).

Goals:
* the links table must not slow indexing measurably: a cold lexical index of both dev sets
  (rust-book, vue-docs-zh-cn) within 5% of the CPU of the same index with link extraction
  switched off, measured in the same run (rounds alternate; the median of the pairs' ratios). The figure
  docs/performance.md gave before the links table (2.13 MB per CPU-s) is printed beside it for
  history only: the pass has taken on stems, names and more since, so comparing with it judged
  the links table by everything else (decision 626);
* ``kb_links`` depth 3 (``both``) on rust-book under 20 ms warm (p95 over the documents with
  the most links);
* ``kb_move`` with ``updateLinks`` touching 100 documents under 1 s (a synthetic vault of 100
  linking documents among 400 others; the rewrite, the compare-and-swap and the writes).

Writes ``results/bench_links.summary.json`` for docs/performance.md.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from common import bench_service  # noqa: E402
from shared_data import CORPORA  # noqa: E402

from local_vector_search_mcp.dispatch import invoke  # noqa: E402
from local_vector_search_mcp.index import prepare as prepare_module  # noqa: E402
from local_vector_search_mcp.markdown import clear_cache  # noqa: E402
from local_vector_search_mcp.markdown.links import DocumentLinks, Link  # noqa: E402

SETS = ("rust-book", "vue-docs-zh-cn")
INDEX_GOAL = 1.05
BEFORE_MB_PER_CPU_S = 2.13  # history: docs/performance.md's cold index of both dev sets before the links table
LINKS_GOAL_MS = 20.0
MOVE_GOAL_S = 1.0
ROUNDS = 9  # after a discarded warm-up pass of each: imports and per-process caches fill once


def _no_links(doc: object, **options: object) -> DocumentLinks:
    return DocumentLinks((), (), (), (), ())


def _no_html(doc: object, links: Sequence[Link]) -> list[Link]:
    return list(links)


def cold_index_cpu(roots: list[Path], work: Path, extract: bool) -> float:
    """CPU seconds of a cold lexical index of ``roots`` (fresh index, parse cache cleared), parsed
    in this process (indexWorkers 1) so that switching extraction off reaches the parse."""
    real, real_graph = prepare_module.extract_links, prepare_module.graph_links
    prepare_module.extract_links = real if extract else _no_links  # type: ignore[assignment]
    # the graph's HTML pictures (decision 820) are the links table's cost too
    prepare_module.graph_links = real_graph if extract else _no_html  # type: ignore[assignment]
    try:
        total = 0.0
        for i, root in enumerate(roots):
            storage = work / f"index-{extract}-{i}-{time.monotonic_ns()}.db"
            kb = bench_service(root, storage, knowledgeBase__indexWorkers=1)
            clear_cache()
            started = time.process_time()
            kb.reindex()
            total += time.process_time() - started
            kb.shutdown()
            storage.unlink(missing_ok=True)
        return total
    finally:
        prepare_module.extract_links, prepare_module.graph_links = real, real_graph  # type: ignore[assignment]


def links_latency(work: Path) -> tuple[float, float, int]:
    root = CORPORA / "rust-book"
    kb = bench_service(root, work / "rust-links.db")
    kb.reindex()
    counts: dict[str, int] = {}
    for link in kb.store.links():
        counts[link.source] = counts.get(link.source, 0) + 1
    busiest = sorted(counts, key=lambda p: (-counts[p], p))[:10]
    request = {"direction": "both", "depth": 3}
    for path in busiest:  # warm
        invoke(kb.ws, "kb_links", {"request": {"path": path, **request}})
    times = []
    found = 0
    for _ in range(5):
        for path in busiest:
            started = time.perf_counter()
            result = invoke(kb.ws, "kb_links", {"request": {"path": path, **request}})
            times.append((time.perf_counter() - started) * 1000)
            found = max(found, len(result["links"]))
    kb.shutdown()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], found


def move_time(work: Path) -> tuple[float, int]:
    root = work / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "target.md").write_text("# Target\n\n## Part\n\nThe note everyone links to.\n", encoding="utf-8")
    for i in range(100):
        body = (
            f"# Linking {i}\n\nSee [[target]] and [the target](../target.md#part) and [[target#Part|part]].\n\n"
            + "Some text that does not link anywhere, repeated to make a real note. " * 20
            + "\n"
        )
        (root / "notes" / f"linking-{i:03}.md").write_text(body, encoding="utf-8")
    for i in range(400):
        (root / "notes" / f"other-{i:03}.md").write_text(
            f"# Other {i}\n\n" + "Unrelated words in an unrelated note. " * 30 + "\n", encoding="utf-8"
        )
    kb = bench_service(root, work / "vault.db", knowledge_base__allow_writes=True)
    kb.reindex()
    sha = hashlib.sha256((root / "target.md").read_bytes()).hexdigest()
    request = {
        "sourcePath": "target.md",
        "targetPath": "archive/renamed target.md",
        "expectedSourceHash": sha,
        "updateLinks": True,
    }
    started = time.perf_counter()
    result = invoke(kb.ws, "kb_move", {"request": request})
    elapsed = time.perf_counter() - started
    kb.shutdown()
    return elapsed, len(result["updatedPaths"])


def main() -> int:
    roots = [CORPORA / name for name in SETS if (CORPORA / name).is_dir()]
    if not roots:
        print("links: shared corpora not found; skipped")
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="lvsm-bench-links-") as tmp:
        work = Path(tmp)
        base, ours = [], []
        cold_index_cpu(roots, work, extract=False)  # warm-up: the first pass pays imports and fills caches
        cold_index_cpu(roots, work, extract=True)
        for _ in range(ROUNDS):  # alternate: the machine is shared
            base.append(cold_index_cpu(roots, work, extract=False))
            ours.append(cold_index_cpu(roots, work, extract=True))
        # the median of each round's pair: a pass's CPU moved by 10-20 % from one round to the next
        # on this host, as much as the whole effect, and a lucky pass on one side swung the ratio of
        # the two minimums from x1.06 to x1.19 between runs of one commit (decision 1040)
        ratio = statistics.median(o / b for o, b in zip(ours, base, strict=True))
        names = " + ".join(r.name for r in roots)
        mb = sum(f.stat().st_size for r in roots for f in r.rglob("*.md")) / 1e6
        speed = mb / min(ours)
        print(
            f"cold lexical index ({names}, {mb:.2f} MB)  with links {min(ours):.3f} CPU-s = {speed:.2f} MB per CPU-s "
            f"(before the links table: {BEFORE_MB_PER_CPU_S} MB per CPU-s)   "
            f"same run with extraction off {min(base):.3f} CPU-s: links cost x{ratio:.3f} "
            f"(median of {ROUNDS} alternated pairs; ratio of the minimums x{min(ours) / min(base):.3f})"
        )
        rows.append(
            [
                "links table: cold lexical index within 5% of the same run's pass with link extraction off",
                f"{speed:.2f} MB per CPU-s with links ({min(ours):.2f} CPU-s); same run without extraction "
                f"{min(base):.2f} CPU-s, so links cost x{ratio:.2f} (median of {ROUNDS} alternated pairs)",
                ratio <= INDEX_GOAL,
            ]
        )
        p50, p95, found = links_latency(work)
        print(f"kb_links depth 3 both, rust-book, 10 busiest documents  p50 {p50:.2f} ms  p95 {p95:.2f} ms")
        rows.append(
            [
                "kb_links depth 3 on rust-book < 20 ms warm",
                f"p50 {p50:.1f} ms, p95 {p95:.1f} ms (up to {found} links per walk)",
                p95 < LINKS_GOAL_MS,
            ]
        )
        elapsed, touched = move_time(work)
        print(f"kb_move updateLinks touching {touched} documents (500 in the vault)  {elapsed * 1000:.0f} ms")
        rows.append(
            [
                "kb_move with updateLinks touching 100 documents < 1 s",
                f"{elapsed:.2f} s ({touched} documents rewritten, 501 in the vault)",
                elapsed < MOVE_GOAL_S and touched == 100,
            ]
        )
        shutil.rmtree(work / "vault", ignore_errors=True)
    (HERE / "results" / "bench_links.summary.json").write_text(json.dumps(rows) + "\n", encoding="utf-8")
    return 0 if all(met for _, _, met in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
