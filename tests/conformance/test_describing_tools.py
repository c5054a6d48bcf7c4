"""The tools that describe the knowledge base (kb_status, kb_outline, kb_links, kb_list_files),
checked black-box over the real protocol where a scenario cannot say it (an order between two
answers' values)."""

from __future__ import annotations

import json
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
            if not status["indexing"]["isRunning"] and (
                sync is None or not (sync["pendingFiles"] or sync.get("comparing"))
            ):
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


def test_a_20000_heading_outline_comes_in_bounded_pages(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Decision 771: one answer held every heading (3.3 MB for 20,000). Over the protocol each page
    now stays near 150 kB, and following ``nextPointer`` gives every heading once, in order."""
    ws = tmp_path / "ws"
    ws.mkdir()
    levels = [1, 2, 3, 2]
    (ws / "big.md").write_text(
        "".join(f"{'#' * levels[i % 4]} Section {i}\n\nText.\n\n" for i in range(20_000)), encoding="utf-8"
    )

    def flat(nodes: list[dict[str, Any]]) -> list[str]:
        return [t for n in nodes for t in (n["title"], *flat(n["children"]))]

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, {}) as conn:
            titles: list[str] = []
            pointer: str | None = "document"
            while pointer is not None:
                page = await conn.call("kb_outline", {"request": {"path": "big.md", "pointer": pointer}})
                assert not page.is_error, page.texts
                assert len(json.dumps(page.structured)) < 200_000
                titles += flat(page.structured["headings"])
                pointer = page.structured["nextPointer"]
            assert titles == [f"Section {i}" for i in range(20_000)]

    anyio.run(run)


@pytest.mark.slow  # 1,200 files indexed: about 30 s on an idle machine
def test_kb_links_over_the_protocol_pages_backlinks_and_checks_rendered_anchors(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Decisions 772 and 773 black-box: GitHub's numbered slugs and `{#id}` anchors are found, and
    a hub's 1,200 backlinks come in two pages joined by `nextOffset`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hub.md").write_text("# Hub\n\n## Setup\n\n## Setup\n\n## ref {#ref}\n", encoding="utf-8")
    (ws / "a.md").write_text("[x](hub.md#setup-1) [y](hub.md#ref) [z](hub.md#setup-2)\n", encoding="utf-8")
    for i in range(1200):
        (ws / f"n{i:04}.md").write_text(f"# N{i}\n\n[hub](hub.md)\n", encoding="utf-8")

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, {}) as conn:
            await conn.call("kb_reindex", {"request": {}})
            await _settled(conn)
            out = (await conn.call("kb_links", {"request": {"path": "a.md", "direction": "outgoing"}})).structured
            assert [(ln["fragment"], ln["fragmentFound"]) for ln in out["links"]] == [
                ("setup-1", True),
                ("ref", True),
                ("setup-2", False),
            ]
            first = (await conn.call("kb_links", {"request": {"path": "hub.md", "direction": "incoming"}})).structured
            assert len(first["links"]) == 1000 and first["truncated"] and first["nextOffset"] == 1000
            rest = await conn.call(
                "kb_links", {"request": {"path": "hub.md", "direction": "incoming", "offset": first["nextOffset"]}}
            )
            assert not rest.is_error, rest.texts
            assert rest.structured["nextOffset"] is None and not rest.structured["truncated"]
            sources = [ln["source"] for ln in first["links"] + rest.structured["links"]]
            assert sources == ["a.md"] * 3 + [f"n{i:04}.md" for i in range(1200)]

    anyio.run(run)


def test_kb_list_files_pages_a_large_tree_over_the_protocol(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Decision 774 black-box: 2,100 files come as 2000 + 100, joined by `nextCursor`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(2100):
        (ws / f"f{i:04}.txt").write_bytes(b"")

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, {}) as conn:
            first = (await conn.call("kb_list_files", {"request": {}})).structured
            assert len(first["files"]) == 2000 and first["nextCursor"] == "f1999.txt"
            rest = (await conn.call("kb_list_files", {"request": {"cursor": first["nextCursor"]}})).structured
            assert rest["nextCursor"] is None
            names = [f["relativePath"] for f in first["files"] + rest["files"]]
            assert names == [f"f{i:04}.txt" for i in range(2100)]

    anyio.run(run)
