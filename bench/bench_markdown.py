"""Benchmark of the Markdown engine; every figure is printed next to a baseline
measured in the same run (plain ``MarkdownIt("commonmark").parse`` of the same
text), so ratios stay comparable across machines.

Run: ``python bench/bench_markdown.py`` (with ``src`` importable).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from markdown_it import MarkdownIt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from local_vector_search_mcp.markdown import clear_cache, parse_document, read_slice

CORPORA = Path("/work/shared/corpora")
BASELINE = MarkdownIt("commonmark").enable("table")


def best_of(runs: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def synthetic(size: int) -> str:
    """Realistic mixed Markdown (sections, lists, tables, quotes, code) of ~``size`` bytes."""
    unit = (
        "## Section {n}\n\nSome paragraph text with *emphasis*, `code` and a [link](http://x/{n}).\n"
        "Second line of the paragraph, 中文内容.\n\n"
        "- item one\n- item two\n  - nested {n}\n    continued\n- item three\n\n"
        "| Col A | Col B |\n|:------|------:|\n| {n} | value |\n| x | y |\n\n"
        "> quoted {n}\n> - quoted list\n\n```py\nprint({n})\n```\n\n"
    )
    parts, total, n = ["# Synthetic\n\n"], 0, 0
    while total < size:
        block = unit.format(n=n)
        parts.append(block)
        total += len(block.encode())
        n += 1
    return "".join(parts)


def report(label: str, ours: float, base: float, extra: str = "") -> None:
    print(f"{label:<48} ours {ours * 1000:9.1f} ms   baseline {base * 1000:9.1f} ms   ratio {ours / base:5.2f}{extra}")


def main() -> None:
    files = sorted(CORPORA.rglob("*.md")) if CORPORA.is_dir() else []
    if files:
        raws = [f.read_bytes() for f in files]
        mb = sum(len(r) for r in raws) / 1e6

        def ours() -> None:
            clear_cache()
            for raw in raws:
                parse_document(raw)

        def base() -> None:
            for raw in raws:
                BASELINE.parse(raw.decode("utf-8"))

        t, b = best_of(3, ours), best_of(3, base)
        report(f"corpora: {len(files)} files, {mb:.2f} MB", t, b, f"   {mb / t:.2f} MB/s")

        corpus_text = "\n\n".join(r.decode("utf-8") for r in raws).encode()
        real_mb = corpus_text[: corpus_text.rfind(b"\n", 0, 1_000_000)]

        def parse_real() -> None:
            clear_cache()
            parse_document(real_mb)

        t, b = best_of(3, parse_real), best_of(3, lambda: BASELINE.parse(real_mb.decode()))
        report("corpora concatenated 1 MB, cold (goal < 500 ms)", t, b)

    one_mb = synthetic(1_000_000).encode()

    def parse_1mb() -> None:
        clear_cache()
        parse_document(one_mb)

    t, b = best_of(3, parse_1mb), best_of(3, lambda: BASELINE.parse(one_mb.decode()))
    report("dense synthetic 1 MB, cold parse", t, b)

    no_tables = synthetic(1_000_000).replace("| Col A | Col B |\n|:------|------:|\n", "").encode()

    def parse_plain() -> None:
        clear_cache()
        parse_document(no_tables)

    t, b = best_of(3, parse_plain), best_of(3, lambda: BASELINE.parse(no_tables.decode()))
    report("dense synthetic 1 MB, no tables, cold", t, b)

    five_mb = synthetic(5_000_000).encode()
    doc = parse_document(five_mb)
    middle = doc.elements[len(doc.elements) // 2].anchor

    def page() -> None:
        read_slice(parse_document(five_mb), "big.md", middle, 20, 12_000)

    t = best_of(5, page)
    # Baseline: a plain parse of one 12 kB page's worth of Markdown.
    chunk = five_mb[:12_000].decode("utf-8", "ignore")
    b = best_of(5, lambda: BASELINE.parse(chunk))
    report("5 MB file: read_slice 20 elements, warm cache", t, b, f"   ({len(doc.elements)} elements)")


if __name__ == "__main__":
    main()
