"""The tools that describe the knowledge base (kb_status, kb_outline, kb_links, kb_list_files),
checked black-box over the real protocol where a scenario cannot say it (an order between two
answers' values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .client import Connection, connect, engine_storage, server_command

pytestmark = pytest.mark.conformance


async def _settled(conn: Connection) -> dict[str, Any]:
    with anyio.fail_after(120):
        while True:
            status: dict[str, Any] = (await conn.call("kb_status", {})).structured
            sync = status["synchronization"]
            if not status["indexing"]["isRunning"] and (sync is None or not sync["pendingFiles"]):
                return status
            await anyio.sleep(0.1)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_last_indexed_does_not_move_back_when_the_newest_document_is_deleted(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """Decision 770: it was the newest remaining document's time, so deleting the newest document
    made the index look older than it was, and a client polling for a change saw none."""
    storage, env = engine_storage(engine, request)
    config: dict[str, Any] = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}
    if storage is not None:
        config["storage"] = storage
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "old.md").write_text("# Old\n\nThe first note.\n", encoding="utf-8")

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, config, extra_env=env) as conn:
            await conn.call("kb_reindex", {"request": {}})
            first = (await _settled(conn))["project"]
            assert first["documents"] == 1 and first["lastIndexedAtUtc"] is not None
            await anyio.sleep(0.01)  # the next stamp is a later millisecond
            made = await conn.call("kb_create", {"request": {"path": "new.md", "markdown": "# New\n\nA second one.\n"}})
            assert not made.is_error, made.texts
            second = (await _settled(conn))["project"]
            assert second["documents"] == 2 and second["lastIndexedAtUtc"] > first["lastIndexedAtUtc"]
            gone = await conn.call(
                "kb_delete", {"request": {"path": "new.md", "expectedSourceHash": made.structured["sourceHash"]}}
            )
            assert not gone.is_error, gone.texts
            third = (await _settled(conn))["project"]
            assert third["documents"] == 1
            assert third["lastIndexedAtUtc"] >= second["lastIndexedAtUtc"]

    anyio.run(run)
