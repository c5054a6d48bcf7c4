"""Dry-run Notion push of the whole rust book: conversion to blocks, request planning, no network.

Goal (issue 16): under 5 s. Prints CPU and wall seconds, the blocks and requests a real push
would send, and the ratio to a same-run baseline (markdown-it parsing the same files, the floor
any conversion pays). Writes ``results/bench_notion.summary.json`` for docs/performance.md.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from shared_data import CORPORA  # noqa: E402

from local_vector_search_mcp.globs import GlobSet  # noqa: E402
from local_vector_search_mcp.notion.blocks import MD  # noqa: E402
from local_vector_search_mcp.notion.command import discover  # noqa: E402
from local_vector_search_mcp.notion.push import DryRunPort, Mapping, Pusher, PushReport  # noqa: E402

GOAL_S = 5.0
BOOK = CORPORA / "rust-book"


def main() -> int:
    if not BOOK.is_dir():
        print("notion: rust-book corpus not found; skipped")
        return 0
    paths = discover(BOOK, GlobSet(["**/*.md"], []))
    texts = [(p, (BOOK / p).read_bytes()) for p in paths]

    cpu, wall = time.process_time(), time.perf_counter()
    for _, raw in texts:
        MD.parse(raw.decode("utf-8"))
    base_cpu = time.process_time() - cpu

    with tempfile.TemporaryDirectory() as tmp:
        mapping = Mapping(Path(tmp) / "notion-pages.json", persist=False)
        port = DryRunPort(lambda _id: [])
        cpu, wall = time.process_time(), time.perf_counter()
        report = Pusher(port, mapping, "parent").push(texts, PushReport(dry_run=True), prune=True)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    requests = sum(port.calls.values())
    size = sum(len(raw) for _, raw in texts) / 1e6
    print(
        f"notion dry-run push rust-book: {len(texts)} documents ({size:.1f} MB), {report.blocks_sent} blocks, "
        f"{requests} requests planned {dict(sorted(port.calls.items()))}"
    )
    print(
        f"notion dry-run push rust-book: {cpu:.2f} CPU-s ({wall:.2f} s wall), goal < {GOAL_S:.0f} s; "
        f"{cpu / base_cpu:.1f}x markdown-it parsing alone ({base_cpu:.2f} CPU-s)"
    )
    rows = [
        [
            "dry-run Notion push of the rust book < 5 s",
            f"{cpu:.2f} CPU-s ({wall:.2f} s wall), {report.blocks_sent} blocks, {requests} requests planned",
            wall < GOAL_S,
        ]
    ]
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "bench_notion.summary.json").write_text(json.dumps(rows), "utf-8")
    return 0 if wall < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
