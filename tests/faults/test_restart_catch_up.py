"""A server killed (kill -9) with work outstanding: the next start catches up (issue 10 item 3).

Two ways to leave the index behind the files, each with a real process killed outright:

* files edited, created and deleted outside the server while it did not watch (or was down);
* an edit made through a tool whose targeted re-index had not run yet: another process holds
  the index database, so the server's sync waits on it when the server is killed.

The next server compares every file's size and mtime with the index in the background at start
(decision 205) and re-indexes what differs; nothing else has to be run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from test_index_database import HOLDER
from test_stdio import RawServer

from local_vector_search_mcp.cli import main as cli_main

CATCH_UP_SECONDS = 60.0


def _start(root: Path, *options: str) -> RawServer:
    server = RawServer(root, "--project-root", str(root.parent), "--no-watch-files", *options)
    init = server.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "restart", "version": "0"}},
    )
    assert "result" in server.response(init)
    server.notify("notifications/initialized")
    return server


def _kill(server: RawServer) -> None:
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(10)


def _found(server: RawServer, query: str) -> list[str]:
    found = server.structured("kb_search", {"request": {"query": query, "mode": "lexical"}})
    return [hit["path"] for hit in found["results"]]


def _eventually(server: RawServer, query: str, expected: list[str]) -> None:
    deadline = time.monotonic() + CATCH_UP_SECONDS
    while (found := _found(server, query)) != expected:
        assert time.monotonic() < deadline, (query, found)
        time.sleep(0.2)


def _args(root: Path, *rest: str) -> list[str]:
    return ["--root", str(root), "--project-root", str(root.parent), "--embedding-provider", "none", *rest]


def _kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(20):
        (root / f"doc{i}.md").write_text(f"# Doc {i}\n\nfiller {i}\n", "utf-8")
    (root / "a.md").write_text("# A\n\nalpha words\n", "utf-8")
    (root / "gone.md").write_text("# Gone\n\nwalrus words\n", "utf-8")
    assert cli_main(_args(root, "--reindex")) == 0
    return root


def test_files_changed_while_no_server_watched_are_indexed_at_the_next_start(tmp_path: Path) -> None:
    root = _kb(tmp_path)
    first = _start(root)
    try:
        assert _found(first, "alpha") == ["a.md"]
        (root / "a.md").write_text("# A\n\nzebra words now\n", "utf-8")  # behind the server's back
        (root / "new.md").write_text("# New\n\nquagga words\n", "utf-8")
        (root / "gone.md").unlink()
    finally:
        _kill(first)
    second = _start(root)  # was: the index stayed behind until someone ran --reindex
    try:
        _eventually(second, "zebra", ["a.md"])
        _eventually(second, "quagga", ["new.md"])
        _eventually(second, "walrus", [])
        assert _found(second, "alpha") == []
        status = second.structured("kb_status", {})
        assert status["project"]["documents"] == 22 and status["indexing"]["last"] is None  # targeted, not a reindex
    finally:
        second.close()


def test_an_edit_whose_sync_had_not_run_when_the_server_was_killed_is_indexed_at_the_next_start(
    tmp_path: Path, capsys: Any
) -> None:
    root = _kb(tmp_path)
    capsys.readouterr()
    assert cli_main(_args(root, "--status")) == 0
    database = json.loads(capsys.readouterr().out)["databasePath"]
    first = _start(root, "--allow-writes")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, database], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        created = first.structured("kb_create", {"request": {"path": "yak.md", "markdown": "# Yak\n\nyak words\n"}})
        assert created["path"] == "yak.md" and (root / "yak.md").exists()
        time.sleep(0.5)  # the sync has started and now waits for the database (30 s busy timeout)
        status = first.structured("kb_status", {})  # readers are not blocked (WAL)
        assert status["synchronization"]["paths"] == ["yak.md"]
        _kill(first)  # with the sync queue still holding yak.md
    finally:
        if first.proc.poll() is None:
            _kill(first)
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
    second = _start(root)
    try:
        _eventually(second, "yak", ["yak.md"])
    finally:
        second.close()
    assert not os.path.exists(root / ".yak.md.tmp")


def _workspace(root: Path) -> Any:
    from local_vector_search_mcp.config import CliOptions, load_settings
    from local_vector_search_mcp.workspace import Workspace

    options = CliOptions(root=str(root), embedding_provider="none", watch_files=False, allow_writes=True)
    return Workspace(load_settings(options, cwd=root.parent, environ={}))


def test_a_graceful_shutdown_drains_the_queue_it_holds(tmp_path: Path) -> None:
    from local_vector_search_mcp import dispatch

    root = _kb(tmp_path)
    ws = _workspace(root)
    dispatch.invoke(ws, "kb_create", {"request": {"path": "ox.md", "markdown": "# Ox\n\nox words\n"}})
    ws.close()  # what the server does on stdin EOF / SIGTERM: the queued sync finishes first
    ws = _workspace(root)
    try:
        assert ws.indexing.indexer.changed_paths() == []  # nothing left for a catch-up
        assert [h["path"] for h in dispatch.invoke(ws, "kb_search", {"request": {"query": "ox"}})["results"]] == [
            "ox.md"
        ]
    finally:
        ws.close()


def test_many_changes_at_start_run_one_reindex_and_none_without_an_index(tmp_path: Path) -> None:
    from local_vector_search_mcp.index import indexing

    root = _kb(tmp_path)
    for i in range(20):
        (root / f"doc{i}.md").write_text(f"# Doc {i}\n\nchanged {i}\n", "utf-8")
    ws = _workspace(root)
    try:
        assert len(ws.indexing.indexer.changed_paths()) == 20
        indexing.CATCH_UP_SYNC_LIMIT, saved = 10, indexing.CATCH_UP_SYNC_LIMIT
        try:
            ws.start_serving()
            ws.catch_up_once()
            ws.indexing.wait_catch_up(30)
        finally:
            indexing.CATCH_UP_SYNC_LIMIT = saved
        ws.indexing.wait_reindex(60)
        last = ws.activity.last
        assert last is not None and last.outcome == "succeeded" and last.result.indexed_files == 20
        assert ws.indexing.indexer.changed_paths() == []
    finally:
        ws.close()
    fresh = tmp_path / "other" / "kb"  # another project: its own (missing) index
    fresh.mkdir(parents=True)
    (fresh / "a.md").write_text("# A\n", "utf-8")
    ws = _workspace(fresh)
    try:
        assert ws.indexing.indexer.changed_paths() is None  # no index: nothing to compare, nothing created
        ws.start_serving()
        ws.catch_up_once()
        ws.indexing.wait_catch_up(30)
        assert not ws.store.exists() and ws.indexing.sync.status() is None
    finally:
        ws.close()
