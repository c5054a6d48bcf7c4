"""The link graph of every file of the shared corpora, read two ways, must be equal (decision 1040).

``compare`` (the default): each file's ``extract_links`` and ``graph_links`` with the simple-run
reader (``markdown/simple_runs.py``) and with markdown-it's inline parser alone (the reader
switched off), in one process; prints how many runs each way read and every file that differs.

``dump FILE``: the same results, one line per file (``repr``), for a comparison of two source
trees (another commit in a detached worktree, same venv)::

    PYTHONPATH=../base/src:generated .venv/bin/python bench/links_equal.py dump /tmp/old.txt
    PYTHONPATH=src:generated .venv/bin/python bench/links_equal.py dump /tmp/new.txt
    cmp /tmp/old.txt /tmp/new.txt
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from shared_data import CORPORA  # noqa: E402

from local_vector_search_mcp.markdown import links, parse_document  # noqa: E402
from local_vector_search_mcp.markdown.model import Document  # noqa: E402

SETS = ("rust-book", "vue-docs-zh-cn", "opensearch-docs")


def documents() -> Iterator[tuple[Path, Document]]:
    for name in SETS:
        for path in sorted((CORPORA / name).rglob("*.md")):
            yield path, parse_document(path.read_bytes())


def graph(doc: Document) -> str:
    found = links.extract_links(doc)
    return f"{found!r}\t{links.graph_links(doc, found.links)!r}"


def compare() -> int:
    real = links.read_simple
    counts = {"simple": 0, "markdown-it": 0}

    def counted(*args: object) -> object:
        read = real(*args)  # type: ignore[arg-type]
        counts["markdown-it" if read is None else "simple"] += 1
        return read

    files = differ = 0
    for path, doc in documents():
        files += 1
        links.read_simple = counted  # type: ignore[assignment]
        ours = graph(doc)
        links.read_simple = lambda *args: None  # type: ignore[assignment]
        theirs = graph(doc)
        links.read_simple = real
        if ours != theirs:
            differ += 1
            print(f"DIFFERS: {path}")
    simple, parsed = counts["simple"], counts["markdown-it"]
    print(f"{files} files, {differ} differ; runs read simply {simple}, by markdown-it {parsed}")
    return 1 if differ or not files else 0


def dump(target: Path) -> int:
    with target.open("w", encoding="utf-8") as out:
        for path, doc in documents():
            out.write(f"{path.relative_to(CORPORA)}\t{graph(doc)}\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        sys.exit(dump(Path(sys.argv[2])))
    sys.exit(compare())
