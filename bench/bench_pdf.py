"""PDF export of the whole rust book (its SUMMARY.md orders the chapters), once per profile.

Goal (issue 13): under 30 s on one core for the whole book at `standard`. Reports CPU seconds
(the stable figure on a shared machine), wall seconds, pages and bytes per profile, and writes
``results/bench_pdf.json`` for the summary table of docs/performance.md.
"""

from __future__ import annotations

import io
import json
import re
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from shared_data import CORPORA  # noqa: E402

from local_vector_search_mcp.export.pdf import BookOptions, render_book  # noqa: E402
from local_vector_search_mcp.markdown import parse_document  # noqa: E402
from local_vector_search_mcp.paths import PathGuard  # noqa: E402

GOAL_S = 30.0
BOOK = CORPORA / "rust-book"


def _pages(data: bytes) -> int:
    return len(re.findall(rb"/Type /Page\b(?!s)", data))


def main() -> int:
    if not (BOOK / "SUMMARY.md").is_file():
        print("pdf: rust-book corpus not found; skipped")
        return 0
    guard = PathGuard(BOOK, BOOK / ".lvsm-bench" / "index.db")
    markdown = sum(p.stat().st_size for p in BOOK.glob("*.md"))
    results = {}
    for profile in ("screen", "standard", "print"):
        buffer = io.BytesIO()
        wall, cpu = time.perf_counter(), time.process_time()
        doc = parse_document((BOOK / "SUMMARY.md").read_bytes())
        warnings = render_book(guard, "SUMMARY.md", doc, buffer, BookOptions(profile=profile))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        data = buffer.getvalue()
        results[profile] = {
            "cpu_s": round(cpu, 2),
            "wall_s": round(wall, 2),
            "pages": _pages(data),
            "bytes": len(data),
            "warnings": len(warnings),
        }
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for profile, r in results.items():
        print(
            f"pdf rust-book a5 compact {profile:<8} {r['cpu_s']:5.1f} CPU-s ({r['wall_s']:.1f} s wall) "
            f"{r['pages']} pages {r['bytes'] / 1e6:.2f} MB, {r['warnings']} warnings (SVG figures, missing glyphs)"
        )
    std = results["standard"]
    shrink = results["screen"]["bytes"] / results["print"]["bytes"]
    print(
        f"pdf: {markdown / 1e6:.2f} MB of Markdown; standard {std['cpu_s']:.1f} CPU-s "
        f"(goal < {GOAL_S:.0f} s on one core) ratio {std['cpu_s'] / GOAL_S:.2f} of the goal; "
        f"screen/print bytes {shrink:.2f}; peak RSS {peak:.0f} MiB"
    )
    (HERE / "results" / "bench_pdf.json").write_text(json.dumps(results | {"peak_rss_mib": round(peak)}, indent=1))
    return 0 if std["cpu_s"] < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
