"""Many writers on one knowledge base, as separate processes (task H46, decisions 445-449).

Two stdio servers started by two agents, an HTTP server and a CLI ``call`` on one project are
separate processes; the in-process lock of decision 282 does not order them. These tests start
real processes that edit one document at once and check the promise of optimistic concurrency:
edits of different elements all land, none is lost, no byte outside them changes.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from kb_fakes import make_workspace

_EDITOR = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from local_vector_search_mcp.config import CliOptions, load_settings
    from local_vector_search_mcp.errors import KbError
    from local_vector_search_mcp.workspace import Workspace
    from local_vector_search_mcp.writer import mutate

    root, me, rounds, go = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=root.parent, environ={}))
    target = root / "doc.md"
    while not go.exists():  # every process starts editing at the same moment
        time.sleep(0.005)
    for k in range(rounds):
        def plan(raw: bytes) -> bytes:
            time.sleep(0.02)  # planning takes a while: parsing, resolving anchors, validating
            old = next(line for line in raw.split(b"\\n") if line.startswith(b"owner %d:" % me))
            return raw.replace(old, b"owner %d: edit %d" % (me, k))
        try:
            mutate(ws, "doc.md", target, plan)
        except KbError as exc:
            print(f"{type(exc).__name__}: {exc}", flush=True)
            sys.exit(1)
    """
)


def test_edits_of_different_elements_from_several_processes_all_land(tmp_path: Path) -> None:
    """Four processes edit their own line of one file eight times each while the others do the
    same. Each re-planned on the other processes' writes, three times at most, and then gave up
    with CONFLICT "kept changing" (nearly every process did) although nobody touched its line.
    With the project's per-file edit lock (decision 445) they wait for each other instead."""
    root = tmp_path / "kb"
    root.mkdir()
    processes, rounds = 4, 8
    head, tail = b"---\ntitle: shared\n---\n\n# Shared\n\n<!-- kept -->\n", b"\n| a |\n|---|\n| 1 |\n"
    body = b"".join(b"\nowner %d: start\n" % i for i in range(processes))
    (root / "doc.md").write_bytes(head + body + tail)
    go = tmp_path / "go"
    editors = [
        subprocess.Popen(
            [sys.executable, "-c", _EDITOR, str(root), str(i), str(rounds), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(processes)
    ]
    go.touch()
    outputs = [editor.communicate(timeout=100)[0] for editor in editors]
    assert [editor.returncode for editor in editors] == [0] * processes, outputs
    expected = b"".join(b"\nowner %d: edit %d\n" % (i, rounds - 1) for i in range(processes))
    assert (root / "doc.md").read_bytes() == head + expected + tail


def test_a_sync_that_stores_after_another_servers_newer_one_indexes_the_disk_again(tmp_path: Path) -> None:
    """Two servers of one index (two workspaces here) each sync their own edit of one file. A's
    sync read revision two; before it stored it, B wrote revision three and stored it. A then stored
    revision two over it: both syncs said "indexed", the index held a revision the disk no longer
    had, and without a watcher nothing synced the path again (decision 447)."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "x.md").write_text("# X\n\nrevision one\n")
    a, b = make_workspace(kb), make_workspace(kb)
    a.indexing.reindex("all")
    (kb / "x.md").write_text("# X\n\nrevision two\n")  # A's edit
    indexer = a.indexing.indexer
    store = indexer.store_prepared
    calls = []

    def b_stores_first(prepared: Any) -> int:
        if not calls:
            (kb / "x.md").write_text("# X\n\nrevision three\n")  # B's edit and its sync
            assert b.indexing.indexer.reconcile("x.md") == "indexed"
        calls.append(prepared.source_hash)
        return store(prepared)

    indexer.store_prepared = b_stores_first  # type: ignore[method-assign]
    assert indexer.reconcile("x.md") == "indexed"
    on_disk = hashlib.sha256((kb / "x.md").read_bytes()).hexdigest()
    assert a.store.document_states_of(["x.md"])["x.md"].source_hash == on_disk
    assert calls[-1] == on_disk and len(calls) == 2
