"""kb_links on a big Obsidian vault (H53, decision 484): opensearch-docs with its site links made wikilinks.

The tree is a copy of ``../shared/corpora/opensearch-docs`` (1,758 files) whose Jekyll site links
(``]({{site.url}}{{site.baseurl}}/api-reference/cat/)``) become wikilinks as Obsidian writes them
in its "shortest path when possible" format (and its 631 site images ``![[name.png]]`` embeds of files
in ``attachments/``, a tenth of them missing): ``[[name#fragment|text]]`` when no other note has the
name, else the root path ``[[folder/name]]`` (the corpus has 200-odd ``index.md``), a tenth of those as
the shortest unique path suffix (``[[cat/index]]``), which Obsidian also resolves. Measured in process
(lexical index, one store): the whole-vault check's first call (the graph built from every stored
link), a warm call (kept graph, decision 300), the first call after one document changed (the graph
updated, decision 302: every wikilink is resolved again) and one page's links at depth 1 and 3.
CPU time of the calling thread (the machine is shared: wall time swung 2x between runs), best of
``ROUNDS``; the load average is printed beside.

Run: ``OMP_NUM_THREADS=1 .venv/bin/python bench/bench_vault.py``.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from bench_tools_scale import SITE_LINK, _permalinks  # noqa: E402
from common import bench_service, writable_copy  # noqa: E402
from shared_data import CORPORA  # noqa: E402

from local_vector_search_mcp.dispatch import invoke  # noqa: E402
from local_vector_search_mcp.handlers import links as handler  # noqa: E402

CORPUS = CORPORA / "opensearch-docs"
ROUNDS = 7
LINK = re.compile(r"\[([^\[\]\n]*)\]" + SITE_LINK.pattern[2:])
IMAGE = re.compile(r"!\[[^\]\n]*\]\(\{\{site\.url\}\}\{\{site\.baseurl\}\}(/images/[^)\s]+)\)")


def build(target: Path) -> int:
    writable_copy(CORPUS, target, ignore=shutil.ignore_patterns(".*"))
    sites = _permalinks(target)
    stems = {f: f.relative_to(target).as_posix()[:-3] for f in sites.values()}
    by_name: dict[str, int] = {}
    for stem in set(stems.values()):
        key = posixpath.basename(stem).casefold()
        by_name[key] = by_name.get(key, 0) + 1
    count = images = 0
    for f in sorted(target.rglob("*.md")):
        text = f.read_text("utf-8")

        def wikilink(m: re.Match[str]) -> str:
            nonlocal count
            dest = sites.get(m.group(2).rstrip("/") + "/")
            if dest is None:
                return m.group(0)
            count += 1
            stem = stems[dest]
            name = posixpath.basename(stem)
            if by_name[name.casefold()] > 1:
                parts = stem.split("/")
                name = "/".join(parts[-2:]) if count % 10 == 0 and len(parts) > 2 else stem
            label = m.group(1).replace("|", " ").replace("[", "").replace("]", "")
            fragment = (m.group(3) or "").replace("|", " ")
            return f"[[{name}{fragment}|{label}]]" if label else f"[[{name}{fragment}]]"

        new = LINK.sub(wikilink, text)

        def embed(m: re.Match[str]) -> str:
            nonlocal images
            name = posixpath.basename(m.group(1))
            images += 1
            if images % 10:  # a tenth missing
                attachment = target / "attachments" / name
                attachment.parent.mkdir(exist_ok=True)
                attachment.write_bytes(b"\x89PNG\r\n\x1a\n")
            return f"![[{name}]]"

        new = IMAGE.sub(embed, new)
        if new != text:
            f.write_text(new, "utf-8")
    return count


def best(call: Any, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        started = time.process_time()
        call()
        times.append((time.process_time() - started) * 1000)
    return min(times)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="lvsm-vault-"))
    try:
        root = work / "vault"
        wikilinks = build(root)
        kb = bench_service(root, work / "index.db")
        kb.reindex()

        def links(**request: Any) -> dict[str, Any]:
            return invoke(kb.ws, "kb_links", {"request": request})

        whole = links()

        def cold() -> None:
            handler._graphs.clear()
            links()

        first = best(cold)
        warm = best(lambda: links())
        page = "_api-reference/cat/index.md"
        depth1 = best(lambda: links(path=page))
        depth3 = best(lambda: links(path=page, depth=3))
        edited = root / "_about/index.md"
        original = edited.read_bytes()
        after_edit = []
        for i in range(ROUNDS):
            edited.write_bytes(original + f"\nEdit {i} [[cat/index]].\n".encode())
            kb.reindex()
            links()  # not timed: a reindex may change more than the one file on its first round
            edited.write_bytes(original + f"\nEdit {i} again.\n".encode())
            kb.reindex()
            started = time.process_time()
            links()
            after_edit.append((time.process_time() - started) * 1000)
        load = os.getloadavg()[0]
        print(f"opensearch-docs as a vault: {wikilinks} wikilinks, load {load:.1f}")
        print(
            f"  whole-vault check: {len(whole['missing'])} broken links (truncated {whole['truncated']}), "
            f"{len(whole['orphans'])} orphans, {len(whole['missingImages'])} missing embeds"
        )
        print(f"  CPU ms: first call (graph built) {first:.1f}, warm {warm:.2f}, after one edit {min(after_edit):.1f}")
        print(f"  CPU ms: one page's links depth 1 {depth1:.2f}, depth 3 {depth3:.2f}")
        kb.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
