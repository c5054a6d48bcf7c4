"""Real editors' save patterns against a real stdio server that watches the files (H49), then a
kill, changes made while no server runs, and the next start's catch-up: search and kb_status
agree with the disk throughout (spec/decisions.md 460-463). Waits are bounded polls.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

from test_stdio import RawServer

from local_vector_search_mcp.cli import main as cli_main

WAIT_SECONDS = 60.0
FIXED_MTIME_NS = 1_000_000_000 * 10**9  # an archive's or a `cp -p` source's old mtime


def _start(root: Path) -> RawServer:
    server = RawServer(root, "--project-root", str(root.parent), "--watch-files")
    init = server.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "editors", "version": "0"}},
    )
    assert "result" in server.response(init)
    server.notify("notifications/initialized")
    return server


def _found(server: RawServer, query: str) -> list[str]:
    found = server.structured("kb_search", {"request": {"query": query, "mode": "lexical"}})
    return sorted({hit["path"] for hit in found["results"]})


def _agrees(server: RawServer, expected: dict[str, list[str]]) -> list[str]:
    """What differs from ``expected`` (query -> paths), and any failure or unreadable file kb_status names."""
    problems = [f"{q}: {got}" for q, want in expected.items() if (got := _found(server, q)) != want]
    status = server.structured("kb_status", {})
    if status["synchronization"] is not None:
        problems.append(f"synchronization {status['synchronization']}")
    if status["project"]["unreadableFiles"]:
        problems.append(f"unreadable {status['project']['unreadable']}")
    return problems


def _eventually(server: RawServer, expected: dict[str, list[str]]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while problems := _agrees(server, expected):
        assert time.monotonic() < deadline, problems
        time.sleep(0.2)


def _copy_keeping_mtime(text: str, source: Path, target: Path) -> None:
    """`cp -p` from a file carrying an old, fixed mtime."""
    source.write_text(text, encoding="utf-8")
    os.utime(source, ns=(FIXED_MTIME_NS, FIXED_MTIME_NS))
    shutil.copy2(source, target)


def test_editor_saves_then_a_restart_agree_with_the_disk(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha words\n", "utf-8")
    (root / "b.md").write_text("# B\n\nbravo words\n", "utf-8")
    (root / "same.md").write_text("# S\n\nrelease111 notes\n", "utf-8")
    source = tmp_path / "release.md"
    assert (
        cli_main(["--root", str(root), "--project-root", str(tmp_path), "--embedding-provider", "none", "--reindex"])
        == 0
    )
    first = _start(root)
    try:
        _eventually(first, {"alpha": ["a.md"]})
        # vim: probe file, the original renamed to a backup, the new text written, the backup removed
        (root / "4913").write_text("", "utf-8")
        (root / "4913").unlink()
        (root / "a.md").rename(root / "a.md~")
        (root / "a.md").write_text("# A\n\nalphaprime words\n", "utf-8")
        (root / "a.md~").unlink()
        # emacs: autosave and a lock link to a target that does not exist (kept while editing)
        (root / "#b.md#").write_text("# B\n\nautosaved words\n", "utf-8")
        os.symlink("user@host.4242:1700000000", root / ".#b.md")
        # JetBrains: temporary file, the original kept aside, the temporary renamed in, the old removed
        (root / "b.md___jb_tmp___").write_text("# B\n\nbravoprime words\n", "utf-8")
        (root / "b.md").rename(root / "b.md___jb_old___")
        (root / "b.md___jb_tmp___").rename(root / "b.md")
        (root / "b.md___jb_old___").unlink()
        (root / "._b.md").write_bytes(b"\x00\x05\x16\x07applejunk\x00")  # macOS metadata beside it
        _copy_keeping_mtime("# S\n\nrelease112 notes\n", source, root / "same.md")
        _eventually(
            first,
            {"alphaprime": ["a.md"], "alpha": [], "bravoprime": ["b.md"], "autosaved": [], "release112": ["same.md"]},
        )
    finally:
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(10)
    # while no server runs: the same size, the same old mtime, other words; the lock still there
    _copy_keeping_mtime("# S\n\nrelease113 notes\n", source, root / "same.md")
    second = _start(root)
    try:
        # before: the lock failed its sync at start (and was named unreadable), and this copy
        # stayed unindexed (its size and mtime were the indexed ones)
        _eventually(second, {"release113": ["same.md"], "release112": [], "bravoprime": ["b.md"], "applejunk": []})
        (root / ".#b.md").unlink()
        (root / "#b.md#").unlink()
        (root / "._b.md").unlink()
        _eventually(second, {"bravoprime": ["b.md"], "applejunk": []})
        status = second.structured("kb_status", {})
        assert status["project"]["documents"] == 3, status["project"]
    finally:
        second.close()
