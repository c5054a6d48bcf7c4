"""PDF export of one large book: wall time, CPU seconds, pages, layout passes and peak RSS.

Not part of ``make bench`` (an opensearch-docs book runs for minutes). One book per process, so
the peak RSS is that book's (the interpreter, fonts and reportlab included: about 75 MiB before
any book). Books:

- ``rust``: the rust book through its SUMMARY.md (1.2 MB of Markdown);
- ``opensearch:<collection>[,<collection>...]`` or ``opensearch:all``: those collections of
  ../shared/corpora/opensearch-docs copied to ``bench/.cache/pdf-<name>/`` with a SUMMARY.md
  listing every file in path order, one chapter each.

    OMP_NUM_THREADS=1 .venv/bin/python bench/pdf_scale.py rust
    OMP_NUM_THREADS=1 .venv/bin/python bench/pdf_scale.py opensearch:_api-reference
    .venv/bin/python bench/pdf_scale.py rust --profile /tmp/rust.prof   # cProfile (about 2x slower)
    .venv/bin/python bench/pdf_scale.py rust --tracemalloc              # where the memory is

Figures of the runs so far are in spec/decisions.md (H68).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from reportlab.platypus.doctemplate import BaseDocTemplate  # noqa: E402
from shared_data import CORPORA  # noqa: E402

from local_vector_search_mcp.export.pdf import BookOptions, render_book  # noqa: E402
from local_vector_search_mcp.markdown import parse_document  # noqa: E402
from local_vector_search_mcp.paths import PathGuard  # noqa: E402

OPENSEARCH = CORPORA / "opensearch-docs"


def _book(spec: str) -> Path:
    """The folder holding the book's SUMMARY.md."""
    if spec == "rust":
        return CORPORA / "rust-book"
    if not spec.startswith("opensearch:"):
        raise SystemExit(f"unknown book {spec!r}: rust or opensearch:<collection>,...|all")
    names = spec.split(":", 1)[1]
    collections = sorted(p.name for p in OPENSEARCH.glob("_*") if p.is_dir()) if names == "all" else names.split(",")
    target = HERE / ".cache" / ("pdf-opensearch-" + re.sub(r"[^\w.-]+", "_", names))
    if not (target / "SUMMARY.md").is_file():
        shutil.rmtree(target, ignore_errors=True)
        lines = ["# OpenSearch documentation", ""]
        for name in collections:
            for path in sorted((OPENSEARCH / name).rglob("*.md")):
                rel = path.relative_to(OPENSEARCH).as_posix()
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target / rel)
                lines.append(f"- [{rel}]({rel})")
        (target / "SUMMARY.md").write_text("\n".join(lines) + "\n", "utf-8")
    return target


class _Passes:
    """Counts reportlab's layout passes (each is one ``BaseDocTemplate.build``)."""

    def __init__(self) -> None:
        self.count = 0
        build = BaseDocTemplate.build

        def counted(template: BaseDocTemplate, *args: object, **kwargs: object) -> object:
            self.count += 1
            return build(template, *args, **kwargs)

        BaseDocTemplate.build = counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("book", help="rust, opensearch:<collection>[,...] or opensearch:all")
    parser.add_argument("--profile-options", default="standard", dest="pdf_profile")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the export here")
    parser.add_argument("--tracemalloc", action="store_true", help="print the largest allocations at the peak")
    parser.add_argument("--out", type=Path, help="keep the PDF here")
    args = parser.parse_args()
    folder = _book(args.book)
    if not (folder / "SUMMARY.md").is_file():
        print(f"pdf: {folder} not found; skipped")
        return 0
    markdown = sum(p.stat().st_size for p in folder.rglob("*.md"))
    guard = PathGuard(folder, folder / ".lvsm-bench" / "index.db")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start(1)
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
    passes = _Passes()
    # into a file, as kb_create_pdf_book writes it (decision 660): the PDF is never whole in memory
    (HERE / ".cache").mkdir(exist_ok=True)
    handle, name = tempfile.mkstemp(suffix=".pdf", dir=HERE / ".cache")
    os.close(handle)
    out = args.out or Path(name)
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    doc = parse_document((folder / "SUMMARY.md").read_bytes())
    with out.open("wb") as file:
        warnings = render_book(guard, "SUMMARY.md", doc, file, BookOptions(profile=args.pdf_profile))
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(str(args.profile))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    data = out.read_bytes()
    Path(name).unlink()
    pages = len(re.findall(rb"/Type /Page\b(?!s)", data))
    result = {
        "book": args.book,
        "markdown_mb": round(markdown / 1e6, 2),
        "cpu_s": round(cpu, 1),
        "wall_s": round(wall, 1),
        "pages": pages,
        "passes": passes.count,
        "pdf_mb": round(len(data) / 1e6, 2),
        "warnings": len(warnings),
        "peak_rss_mib": round(peak),
        "rss_before_mib": round(before),
    }
    print(
        f"pdf {args.book}: {result['markdown_mb']} MB of Markdown, {cpu:.1f} CPU-s ({wall:.1f} s wall), "
        f"{pages} pages in {passes.count} passes, {result['pdf_mb']} MB PDF, "
        f"peak RSS {peak:.0f} MiB ({before:.0f} before the export)"
    )
    print(json.dumps(result))
    if args.tracemalloc:
        import tracemalloc

        current, top = tracemalloc.get_traced_memory()
        print(f"tracemalloc: {current / 2**20:.0f} MiB held at the end, {top / 2**20:.0f} MiB at the peak")
        for stat in tracemalloc.take_snapshot().statistics("lineno")[:25]:
            print(" ", stat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
