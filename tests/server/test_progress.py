"""Long calls over both transports, as a real client sees them (decisions 500-504): progress
notifications when the call asked for them (and none otherwise), and a cancelled export that
really stops, leaves no file behind and leaves the server serving."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import psutil
import pytest
from conformance.client import Connection, connect
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .http_server import HEADERS, INIT, http_server, project

WRITES = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}
SERVER = [sys.executable, "-m", "local_vector_search_mcp"]


def book(root: Path, chapters: int, paragraphs: int) -> None:
    """An mdBook-style book: SUMMARY.md linking ``chapters`` chapters of prose, lists and code."""
    lines = ["# A book", ""]
    for i in range(chapters):
        lines.append(f"- [Chapter {i}](ch{i:03}.md)")
        body = [f"# Chapter {i}", ""]
        for j in range(paragraphs):
            body += [
                f"## Section {i}.{j}",
                "",
                f"Paragraph {j} of chapter {i} says something about borrowing and lifetimes, " * 3,
                "",
                "- one item\n- two items\n  - nested",
                "",
                '```rust\nfn main() {\n    println!("hello");\n}\n```',
                "",
            ]
        (root / f"ch{i:03}.md").write_text("\n".join(body), encoding="utf-8")
    (root / "SUMMARY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


Seen = list[tuple[float, float | None, str | None]]


def assert_progress(seen: Seen) -> None:
    """Two notifications at least (the first step and the last), progress strictly growing up to
    its total, every one with a message."""
    assert len(seen) >= 2, seen
    values = [p for p, _, _ in seen]
    assert all(a < b for a, b in itertools.pairwise(values)), values
    assert all(total is not None and p <= total for p, total, _ in seen), seen
    assert seen[-1][0] == seen[-1][1], seen[-1]
    messages = [m or "" for _, _, m in seen]
    assert messages[0].startswith("Reading chapter 1 of 12"), messages[0]
    assert all(messages), messages
    assert seen[-1][2] and seen[-1][2].startswith("Laid out "), seen[-1]


@asynccontextmanager
async def http_client(url: str) -> AsyncIterator[Connection]:
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=300)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield Connection(session)


@asynccontextmanager
async def client(transport: str, root: Path, tmp_path: Path) -> AsyncIterator[Connection]:
    if transport == "stdio":
        async with connect(SERVER, root, config=WRITES, args=["--verbose"]) as conn:
            yield conn
    else:
        with http_server(tmp_path, config=WRITES, root=root) as server:
            async with http_client(server.url) as conn:
                yield conn


async def export(conn: Connection, path: str, out: str, seen: Seen | None) -> Any:
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        assert seen is not None
        seen.append((progress, total, message))

    return await conn.session.call_tool(
        "kb_create_pdf_book",
        {"request": {"path": path, "outputPath": out}},
        progress_callback=on_progress if seen is not None else None,
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_export_reports_its_progress_to_a_client_that_asked(tmp_path: Path, transport: str) -> None:
    root = project(tmp_path, {})
    book(root, chapters=12, paragraphs=6)

    async def run() -> None:
        async with client(transport, root, tmp_path) as conn:
            seen: Seen = []
            result = await export(conn, "SUMMARY.md", "book.pdf", seen)
            assert not result.is_error, result.content
            assert_progress(seen)
            assert (root / "book.pdf").read_bytes().startswith(b"%PDF")

    anyio.run(run)


def test_a_call_without_a_progress_token_gets_no_notification_over_stdio(tmp_path: Path) -> None:
    """On the wire: the answer is the only line the call gets; with a token, notifications/progress
    lines carrying it come first."""
    root = project(tmp_path, {})
    book(root, chapters=12, paragraphs=2)
    config = tmp_path / "writes.yml"
    config.write_text(json.dumps(WRITES), encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1", "CLAUDE_PROJECT_DIR": str(root)}
    proc = subprocess.Popen(
        [*SERVER, "--config", str(config)],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    call = {"name": "kb_create_pdf_book", "arguments": {"request": {"path": "SUMMARY.md"}}}
    messages = [
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {**call, "_meta": {"progressToken": "t-3"}}},
    ]
    try:
        lines = []
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" in message:
                while True:
                    lines.append(json.loads(proc.stdout.readline()))
                    if lines[-1].get("id") == message["id"]:
                        break
    finally:
        proc.stdin.close()
        proc.wait(60)
    answer2 = next(i for i, m in enumerate(lines) if m.get("id") == 2)
    answer3 = next(i for i, m in enumerate(lines) if m.get("id") == 3)
    assert "error" not in lines[answer2] and not lines[answer2]["result"].get("isError")
    between = lines[answer2 + 1 : answer3]
    # nothing for call 2 (it is answered before call 3 is sent), only call 3's progress
    assert not [m for m in lines[: answer2 + 1] if m.get("method") == "notifications/progress"]
    assert len(between) >= 2 and all(m["method"] == "notifications/progress" for m in between), between
    assert {m["params"]["progressToken"] for m in between} == {"t-3"}


def test_a_call_without_a_progress_token_is_answered_with_plain_json_over_http(tmp_path: Path) -> None:
    """Decision 126 stays for every call that did not ask for progress; one that did is answered
    as an event stream: its notifications, then its result."""
    root = project(tmp_path, {})
    book(root, chapters=12, paragraphs=2)
    with http_server(tmp_path, config=WRITES, root=root) as server, httpx.Client(timeout=120) as http:
        opened = http.post(server.url, json=INIT, headers=HEADERS)
        session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        http.post(server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        call = {"name": "kb_create_pdf_book", "arguments": {"request": {"path": "SUMMARY.md"}}}
        plain = http.post(
            server.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, headers=session
        )
        assert plain.headers["content-type"].startswith("application/json")
        assert not plain.json()["result"].get("isError"), plain.json()

        with_token = {**call, "_meta": {"progressToken": 77}}
        streamed = http.post(
            server.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": with_token}, headers=session
        )
        assert streamed.headers["content-type"].startswith("text/event-stream")
        # nginx buffers a proxied answer unless told not to; the stream says so itself
        assert streamed.headers.get("x-accel-buffering") == "no"
        events = [
            json.loads(line[5:]) for line in streamed.text.splitlines() if line.startswith("data:") and line[5:].strip()
        ]
        assert events[-1]["id"] == 3 and not events[-1]["result"].get("isError")
        progress = events[:-1]
        assert len(progress) >= 2 and all(e["method"] == "notifications/progress" for e in progress), progress
        assert {e["params"]["progressToken"] for e in progress} == {77}
        values = [e["params"]["progress"] for e in progress]
        assert values == sorted(set(values))

        # A client that accepts JSON only still gets JSON, token or not: it could not read a stream.
        json_only = {**session, "accept": "application/json"}
        answer = http.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": with_token},
            headers=json_only,
        )
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["id"] == 4


def _server_process(root: Path) -> psutil.Process:
    for child in psutil.Process().children(recursive=True):
        try:
            if "local_vector_search_mcp" in " ".join(child.cmdline()) and Path(child.cwd()) == root:
                return child
        except psutil.Error:
            continue
    raise AssertionError("server process not found")


def _server_log(root: Path, tmp_path: Path) -> str:
    logs = [*root.parent.glob(f"{root.name}.server-*.log"), *tmp_path.glob("server-*.log")]
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_cancelled_export_stops_and_leaves_nothing_behind(tmp_path: Path, transport: str) -> None:
    root = project(tmp_path, {})
    book(root, chapters=80, paragraphs=20)  # tens of seconds of layout on a loaded machine

    async def run() -> None:
        async with client(transport, root, tmp_path) as conn:
            server = _server_process(root)
            laying_out = anyio.Event()
            seen: Seen = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))
                if (message or "").startswith("Laying out"):
                    laying_out.set()

            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await conn.session.call_tool(
                        "kb_create_pdf_book",
                        {"request": {"path": "SUMMARY.md", "outputPath": "out/book.pdf"}},
                        progress_callback=on_progress,
                    )

                tg.start_soon(call)
                with anyio.fail_after(120):
                    await laying_out.wait()
                tg.cancel_scope.cancel()  # the SDK's client sends notifications/cancelled

            with anyio.fail_after(60):
                while "kb_create_pdf_book cancelled by its client" not in _server_log(root, tmp_path):
                    await anyio.sleep(0.1)
            # The worker thread ended: the server idles (the export alone keeps a core busy).
            before = server.cpu_times()
            await anyio.sleep(1.0)
            after = server.cpu_times()
            assert (after.user + after.system) - (before.user + before.system) < 0.5
            # ... and it serves: nothing was written, the book can be exported again.
            status = await conn.call("kb_status", {})
            assert not status.is_error
            assert not (root / "out" / "book.pdf").exists()
            assert [p.name for p in root.rglob("*") if p.name.endswith(".tmp")] == []
            assert not seen[-1][2] or not seen[-1][2].startswith("Laid out")

    anyio.run(run)


class _SlowSession:
    """A session whose notifications take a while to leave (a busy stream)."""

    def __init__(self) -> None:
        self.sent: list[float] = []
        self.first = anyio.Event()

    async def report_progress(self, done: float, total: float | None, message: str | None) -> None:
        self.sent.append(done)
        self.first.set()
        await anyio.sleep(0.5)


def test_a_cancellation_while_a_notification_is_on_its_way_stops_the_tool_cleanly(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The cancellation arrives while the worker thread waits for the event loop to send its
    progress: the tool sees Cancelled at its next step, not the event loop's CancelledError
    (which no tool code expects: it escaped the tool and its log line)."""
    from types import SimpleNamespace

    from local_vector_search_mcp import progress
    from local_vector_search_mcp.server import app

    outcome: list[str] = []

    def tool(ws: object, name: str, arguments: object, call: progress.Call) -> str:
        try:
            with progress.running(call):
                for i in range(200):
                    progress.step(i + 1, 200, f"step {i + 1}", final=True)
            outcome.append("ran to its end")
        except progress.Cancelled:
            outcome.append("cancelled")
        except BaseException as exc:
            outcome.append(type(exc).__name__)
            raise
        return "done"

    monkeypatch.setattr(app, "call_result", tool)
    session = _SlowSession()
    ctx = SimpleNamespace(params={"_meta": {"progressToken": 1}}, request=None, session=session)

    async def run() -> None:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await app.run_tool(None, ctx, "kb_create_pdf_book", {}, anyio.CapacityLimiter(1))  # type: ignore[arg-type]

            tg.start_soon(call)
            await session.first.wait()
            await anyio.sleep(0.1)  # the thread is inside from_thread.run now
            tg.cancel_scope.cancel()

    anyio.run(run)
    assert outcome == ["cancelled"], outcome
    assert len(session.sent) < 5
