"""Two server processes on one project share one index without corrupting it."""

from __future__ import annotations

import shutil
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest
from shared_data import CORPORA

from .client import Connection, connect, engine_storage, server_command

pytestmark = pytest.mark.conformance

CORPUS = CORPORA / "rust-book"
CONFIG = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}


async def _wait_idle(conn: Connection) -> dict:  # type: ignore[type-arg]
    with anyio.fail_after(120):
        while True:
            status = (await conn.call("kb_status", {})).structured
            if not status["indexing"]["isRunning"]:
                return status
            await anyio.sleep(0.2)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpora not available")
@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_concurrent_reindex_and_edits_keep_the_index_consistent(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """Two servers, one index: on PostgreSQL an advisory lock runs one reindex at a time and a
    per-document lock keeps concurrent rewrites of one file from colliding."""
    config: dict = dict(CONFIG)  # type: ignore[type-arg]
    storage, env = engine_storage(engine, request)
    if storage is not None:
        config["storage"] = storage
    ws = tmp_path / "ws"
    ws.mkdir()
    files = sorted(CORPUS.glob("ch0*.md"))[:40]
    for f in files:
        shutil.copy(f, ws / f.name)
    command = server_command(request.config.getoption("--server"))

    async def run() -> None:
        async with AsyncExitStack() as stack:
            a = await stack.enter_async_context(connect(command, ws, config, extra_env=env))
            b = await stack.enter_async_context(connect(command, ws, config, extra_env=env))
            async with anyio.create_task_group() as tg:
                tg.start_soon(a.call, "kb_reindex", {"request": {"scope": "all"}})
                tg.start_soon(b.call, "kb_reindex", {"request": {"scope": "all"}})
                tg.start_soon(
                    a.call, "kb_create", {"request": {"path": "extra.md", "markdown": "# Extra\n\nA quetzal note.\n"}}
                )
            for conn in (a, b):
                status = await _wait_idle(conn)
                assert status["indexing"]["last"]["outcome"] == "succeeded", status["indexing"]
            # b reindexes once more so it certainly sees extra.md, then both agree.
            await b.call("kb_reindex", {})
            status_b = await _wait_idle(b)
            status_a = (await a.call("kb_status", {})).structured
            assert status_a["project"]["documents"] == status_b["project"]["documents"] == len(files) + 1
            assert status_a["project"]["chunks"] == status_b["project"]["chunks"] > 0
            for conn in (a, b):
                found = await conn.call("kb_search", {"request": {"query": "quetzal", "mode": "lexical"}})
                assert [r["path"] for r in found.structured["results"]] == ["extra.md"]

    anyio.run(run)
    index = ws / ".local-vector-search-mcp" / "index.db"
    if index.exists():  # our layout; another implementation may keep its index elsewhere
        import apsw

        con = apsw.Connection(str(index))
        assert con.execute("pragma integrity_check").fetchall() == [("ok",)]
