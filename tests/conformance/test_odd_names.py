"""File names that are not valid UTF-8 (legal on Linux: a Latin-1 archive unpacked, a file copied
from an old system) must not break a tool for every other file (decision 284)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from .client import connect, server_command, write_files

pytestmark = pytest.mark.conformance

CONFIG = {"knowledgeBase": {"allowWrites": True, "watchFiles": True}, "embedding": {"provider": "none"}}
PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)


def test_names_that_are_not_utf8_are_left_out_and_named(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, {"a.md": "# A\n\nalpha wombat\n", "img/ok.png": PNG})
    raw = os.fsencode(ws)
    (Path(os.fsdecode(raw + b"/bad\xff.md"))).write_bytes(b"# Bad\n\nbad wombat\n")
    os.mkdir(raw + b"/dir\xfe")
    Path(os.fsdecode(raw + b"/dir\xfe/in.md")).write_bytes(b"# In\n\ninner wombat\n")
    Path(os.fsdecode(raw + b"/img/bad\xff.png")).write_bytes(PNG)

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, CONFIG) as conn:
            listed = await conn.call("kb_list_files", {})
            assert not listed.is_error, listed.texts
            assert [f["relativePath"] for f in listed.structured["files"]] == ["a.md", "img/ok.png"]
            skipped = {s["path"]: s["reason"] for s in listed.structured["skipped"]}
            assert set(skipped) == {"bad\\xff.md", "dir\\xfe", "img/bad\\xff.png"}
            assert all("UTF-8" in reason for reason in skipped.values())
            images = await conn.call("kb_list_images", {})
            assert not images.is_error, images.texts
            assert [i["path"] for i in images.structured["images"]] == ["img/ok.png"]
            read = await conn.call("kb_read", {"request": {"path": "bad\\xff.md"}})  # as shown; `\\` reads as `/`
            assert read.error["code"] == "NOT_FOUND"
            assert not (await conn.call("kb_reindex", {})).is_error
            for _ in range(300):
                status = await conn.call("kb_status", {})
                assert not status.is_error, status.texts
                if not status.structured["indexing"]["isRunning"]:
                    break
                await anyio.sleep(0.1)
            assert status.structured["indexing"]["last"]["outcome"] == "succeeded"
            assert status.structured["project"]["documents"] == 1
            # the watcher sees a new file with such a name and leaves it alone too: once a file
            # written after it is indexed, the watcher has had its events (in order) as well
            Path(os.fsdecode(raw + b"/new\xfd.md")).write_bytes(b"# New\n\nnew wombat\n")
            (ws / "later.md").write_text("# Later\n\nlater wombat\n", encoding="utf-8")
            with anyio.fail_after(60):
                while True:
                    found = await conn.call("kb_search", {"request": {"query": "wombat", "mode": "lexical"}})
                    paths = sorted(r["path"] for r in found.structured["results"])
                    if "later.md" in paths:
                        break
                    await anyio.sleep(0.1)
            assert paths == ["a.md", "later.md"]
            status = await conn.call("kb_status", {})
            assert not status.is_error, status.texts
            assert status.structured["project"]["documents"] == 2

    anyio.run(run)
