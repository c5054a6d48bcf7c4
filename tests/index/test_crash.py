"""Kill a process in the middle of a reindex; the index must stay usable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from kb_fakes import client

CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[3])
    from kb_fakes import make_workspace
    from local_vector_search_mcp.index.indexer import Indexer
    from pathlib import Path

    original = Indexer.store_prepared
    def slow(self, *a, **k):
        n = original(self, *a, **k)
        print("indexed", flush=True)
        time.sleep(0.05)
        return n
    Indexer.store_prepared = slow
    make_workspace(Path(sys.argv[1]), storage=Path(sys.argv[2])).indexing.reindex("all")
    print("done", flush=True)
    """
)


def test_kill_mid_reindex_leaves_a_usable_index(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(200):
        (root / f"doc{i:03}.md").write_text(f"# Doc {i}\n\nalpha beta gamma {i}\n\n" + "filler " * 200, "utf-8")
    storage = tmp_path / "index.db"
    client(root, storage=storage).reindex()
    for i in range(200):  # change every file so the next run rewrites them all
        (root / f"doc{i:03}.md").write_text(f"# Doc {i}\n\ndelta epsilon {i}\n", "utf-8")
    helpers = str(Path(__file__).parents[1])  # kb_fakes.py
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(storage), helpers],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seen = 0
    while seen < 20:
        line = proc.stdout.readline()
        assert line, "child ended early"
        seen += line.startswith("indexed")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)

    svc = client(root, storage=storage)
    status = svc.status_fields()
    assert status["compatibility"]["isCompatible"] and status["project"]["documents"] == 200
    # every document is either the old or the new revision, never half of each
    old = {r["path"] for r in svc.search(query="alpha", mode="lexical", top_k=50)["results"]}
    new = {r["path"] for r in svc.search(query="delta", mode="lexical", top_k=50)["results"]}
    assert new and not (old & new)
    start = time.perf_counter()
    result = svc.reindex()
    assert result["indexedFiles"] + result["skippedFiles"] == 200 and result["indexedFiles"] < 200
    assert time.perf_counter() - start < 30
    assert len(svc.search(query="delta", mode="lexical", top_k=50)["results"]) == 50
    assert svc.search(query="alpha", mode="lexical")["results"] == []
