"""kb_patch round trip on a ~1 MB document: read -> patch -> re-read.

Every figure is printed next to a same-run baseline (a plain parse of the same
text with ``parse_text``), so ratios stay comparable across machines. The
patch step re-parses the whole result for the structural validator and warms
the parse cache, so the re-read that follows is a cache hit.

Run: ``python bench/bench_patch.py`` (with ``src`` importable).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_markdown import best_of, report, synthetic

from local_vector_search_mcp.markdown import clear_cache, parse_document, parse_text, read_slice
from local_vector_search_mcp.markdown.patch import Op, patch_text


def main() -> None:
    text = synthetic(1_000_000)
    raw = text.encode("utf-8")
    print(f"document: {len(raw) / 1e6:.2f} MB")
    base = best_of(3, lambda: parse_text(text))

    def read() -> None:
        clear_cache()
        parse_document(raw)

    ours_read = best_of(3, read)
    report("read (parse, cold cache)", ours_read, base)
    doc = parse_document(raw)
    target = doc.elements[len(doc.elements) // 2]
    ops = [Op("insert_after", target.anchor, "An inserted paragraph.")]

    def patch() -> bytes:
        clear_cache()  # the validator's re-parse of the result is part of the cost
        new_text, _ = patch_text(doc, "bench.md", ops)
        data = new_text.encode("utf-8")
        parse_document(data)  # as the handler does (a cache hit: patch_text parsed it)
        return data

    ours_patch = best_of(3, patch)
    report("patch (plan + validate by full re-parse)", ours_patch, base)
    data = patch()

    def reread() -> None:
        read_slice(parse_document(data), "bench.md", None, 20, 12000)

    ours_reread = best_of(3, reread)
    report("re-read (cache hit) + first page", ours_reread, base)
    report("round trip read -> patch -> re-read", ours_read + ours_patch + ours_reread, base)


if __name__ == "__main__":
    main()
