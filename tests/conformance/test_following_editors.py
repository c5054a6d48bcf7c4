"""Edits made by other programs, as an agent sees them through the protocol (H95, decisions 740-749)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from .client import Connection, connect, server_command, write_files

pytestmark = pytest.mark.conformance

CONFIG = {"knowledgeBase": {"watchFiles": True}, "embedding": {"provider": "none"}}


async def _paths(conn: Connection, query: str) -> list[str]:
    found = await conn.call("kb_search", {"request": {"query": query, "mode": "lexical"}})
    assert not found.is_error, found.texts
    return sorted(r["path"] for r in found.structured["results"])


def _settled(status: dict) -> bool:  # type: ignore[type-arg]
    return status["synchronization"] is None and not status["indexing"]["isRunning"]


async def _built(conn: Connection) -> None:
    """Until the first reindex is over: kb_reindex returns at once, and a search of an index still
    empty while it runs is refused with INDEX_NOT_READY (CI met it on a loaded machine)."""
    while not _settled((await conn.call("kb_status", {})).structured):
        await anyio.sleep(0.05)


def test_status_says_a_change_is_pending_until_search_has_it(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """An agent that saves a file with its own tools and polls kb_status until `synchronization`
    is null must then find the new text, not the old one (decision 740). Before, a change the
    watcher held for its 0.4 s debounce was not counted: status said null and search still
    returned the old text. The pause after each save only lets the watcher hear it (inotify
    delivers in milliseconds); the polls are bounded."""
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, {"a.md": "# A\n\nword0 text\n"})

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, CONFIG) as conn:
            assert not (await conn.call("kb_reindex", {"request": {"scope": "all"}})).is_error
            with anyio.fail_after(60):
                await _built(conn)
                while await _paths(conn, "word0") != ["a.md"]:
                    await anyio.sleep(0.1)
            for n in range(1, 4):
                (ws / "a.md").write_text(f"# A\n\nword{n} text\n", encoding="utf-8")
                await anyio.sleep(0.15)
                with anyio.fail_after(30):
                    while not _settled((await conn.call("kb_status", {})).structured):
                        await anyio.sleep(0.02)
                assert await _paths(conn, f"word{n}") == ["a.md"], f"save {n}: status null, new text not found"
                assert await _paths(conn, f"word{n - 1}") == [], f"save {n}: status null, old text still found"

    anyio.run(run)


def test_without_watch_files_a_running_server_does_not_follow_other_programs_and_the_next_start_does(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Contract 9.4: files are watched only with `knowledgeBase.watchFiles: true`. A server
    without it keeps answering from its index after another program saves a file (the watcher's
    debounce is 0.4 s; we wait well past it), and the next server start compares the files with
    the index and re-indexes what changed (decision 205)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, {"a.md": "# A\n\nThe first gecko.\n"})
    config = {"embedding": {"provider": "none"}}
    command = server_command(request.config.getoption("--server"))

    async def run() -> None:
        async with connect(command, ws, config) as conn:
            assert not (await conn.call("kb_reindex", {"request": {}})).is_error
            with anyio.fail_after(60):
                await _built(conn)
                while await _paths(conn, "gecko") != ["a.md"]:
                    await anyio.sleep(0.1)
            status = (await conn.call("kb_status", {})).structured
            assert status["watchFiles"] is False
            with anyio.fail_after(30):  # the start's catch-up (first call) has nothing left to do
                while not _settled((await conn.call("kb_status", {})).structured):
                    await anyio.sleep(0.05)
            write_files(ws, {"b.md": "# B\n\nA salamander appears.\n"})
            await anyio.sleep(2.0)
            assert await _paths(conn, "salamander") == [], "a server without watchFiles followed a save"
        async with connect(command, ws, config) as conn:
            with anyio.fail_after(30):
                while await _paths(conn, "salamander") != ["b.md"]:
                    await anyio.sleep(0.1)

    anyio.run(run)
