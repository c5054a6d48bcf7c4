"""Two agents, two server processes, one workspace: optimistic concurrency as a tested promise.

Stdio clients each start their own server, so concurrent agents on one project
are concurrent processes. Same element at once: exactly one wins, the other
gets CONFLICT and the file holds exactly the winner's edit. Different
elements: both succeed. Many interleaved edits: none is lost.
"""

from __future__ import annotations

import re
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

from .client import Connection, connect, server_command, write_files

pytestmark = pytest.mark.conformance

CONFIG = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}


def _command(request: pytest.FixtureRequest) -> list[str]:
    return server_command(request.config.getoption("--server"))


async def _anchors(conn: Connection, path: str) -> dict[str, str]:
    result = await conn.call("kb_read", {"request": {"path": path, "maxElements": 100}})
    assert not result.is_error, result.texts
    return {e["pointer"].split("~")[0]: e["pointer"] for e in result.structured["elements"]}


async def _replace(conn: Connection, path: str, anchor: str, text: str) -> Any:
    return await conn.call(
        "kb_patch",
        {"request": {"path": path, "operations": [{"kind": "replace_element", "pointer": anchor, "markdown": text}]}},
    )


async def _two(command: list[str], ws: Path, stack: AsyncExitStack) -> tuple[Connection, Connection]:
    a = await stack.enter_async_context(connect(command, ws, CONFIG))
    if "kb_patch" not in {t.name for t in await a.list_tools()}:
        pytest.skip("the server under test does not list kb_patch")
    b = await stack.enter_async_context(connect(command, ws, CONFIG))
    return a, b


def test_same_element_exactly_one_wins(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, {"doc.md": "# Doc\n\nOriginal paragraph.\n\nUntouched.\n"})

    async def run() -> None:
        async with AsyncExitStack() as stack:
            a, b = await _two(_command(request), ws, stack)
            anchor = (await _anchors(a, "doc.md"))["1.p1"]
            assert anchor == (await _anchors(b, "doc.md"))["1.p1"]
            results: dict[str, Any] = {}

            async def edit(name: str, conn: Connection) -> None:
                results[name] = await _replace(conn, "doc.md", anchor, f"Edited by {name}.")

            async with anyio.create_task_group() as tg:
                tg.start_soon(edit, "alpha", a)
                tg.start_soon(edit, "beta", b)
        winners = [n for n, r in results.items() if not r.is_error]
        losers = [n for n, r in results.items() if r.is_error]
        assert len(winners) == 1 and len(losers) == 1, {n: r.texts for n, r in results.items()}
        assert results[losers[0]].error["code"] == "CONFLICT"
        assert (ws / "doc.md").read_text() == f"# Doc\n\nEdited by {winners[0]}.\n\nUntouched.\n"

    anyio.run(run)


def test_different_elements_both_succeed(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, {"doc.md": "# Doc\n\nFirst.\n\nSecond.\n"})

    async def run() -> None:
        async with AsyncExitStack() as stack:
            a, b = await _two(_command(request), ws, stack)
            anchors = await _anchors(a, "doc.md")
            results = []

            async def edit(conn: Connection, logical: str, text: str) -> None:
                results.append(await _replace(conn, "doc.md", anchors[logical], text))

            async with anyio.create_task_group() as tg:
                tg.start_soon(edit, a, "1.p1", "First, edited by alpha.")
                tg.start_soon(edit, b, "1.p2", "Second, edited by beta.")
        assert all(not r.is_error for r in results), [r.texts for r in results]
        assert (ws / "doc.md").read_text() == "# Doc\n\nFirst, edited by alpha.\n\nSecond, edited by beta.\n"

    anyio.run(run)


def test_interleaved_edits_lose_nothing(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    paragraphs = 12
    ws = tmp_path / "ws"
    ws.mkdir()
    body = "\n\n".join(f"Paragraph {i} original." for i in range(1, paragraphs + 1))
    write_files(ws, {"doc.md": f"# Doc\n\n{body}\n"})
    refused = {"count": 0}

    async def agent(conn: Connection, mine: list[int], tag: str) -> None:
        for i in mine:
            while True:  # an agent that is refused re-reads and retries, as the contract tells it to
                anchor = (await _anchors(conn, "doc.md"))[f"1.p{i}"]
                result = await _replace(conn, "doc.md", anchor, f"Paragraph {i} edited by {tag}.")
                if not result.is_error:
                    break
                assert result.error["code"] == "CONFLICT", result.texts
                refused["count"] += 1

    async def run() -> None:
        async with AsyncExitStack() as stack:
            a, b = await _two(_command(request), ws, stack)
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent, a, list(range(1, paragraphs + 1, 2)), "alpha")
                tg.start_soon(agent, b, list(range(2, paragraphs + 1, 2)), "beta")

    anyio.run(run)
    text = (ws / "doc.md").read_text()
    found = re.findall(r"Paragraph (\d+) edited by (\w+)\.", text)
    assert sorted(int(i) for i, _ in found) == list(range(1, paragraphs + 1)), text
    assert all((int(i) % 2 == 1) == (tag == "alpha") for i, tag in found)
    assert "original" not in text


def test_parallel_edits_of_one_client_all_land(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """One client (or many HTTP clients of one server) sends ten edits of ten different paragraphs
    of one document at once: every one succeeds (decision 282), none is refused as "kept changing"."""
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, {"doc.md": "# Doc\n\n" + "".join(f"Paragraph {i}.\n\n" for i in range(10))})

    async def run() -> None:
        async with connect(_command(request), ws, CONFIG) as conn:
            anchors = await _anchors(conn, "doc.md")
            results: dict[int, Any] = {}

            async def edit(i: int) -> None:
                results[i] = await _replace(conn, "doc.md", anchors[f"1.p{i + 1}"], f"Paragraph {i}, edited.")

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(edit, i)
        assert all(not r.is_error for r in results.values()), {i: r.texts for i, r in results.items() if r.is_error}
        assert (ws / "doc.md").read_text() == "# Doc\n\n" + "".join(f"Paragraph {i}, edited.\n\n" for i in range(10))

    anyio.run(run)
