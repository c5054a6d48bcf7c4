"""Real MCP clients over Streamable HTTP: the SDK's client, several at once, against one server process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from conformance.client import Connection, connect, start_http_server
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from local_vector_search_mcp.server.http import TOKEN_ENV

from .http_server import HEADERS, INIT, http_server, project

TOKEN = "team-token-0123456789abcdef"
WRITES = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}


@asynccontextmanager
async def sdk_client(url: str, token: str | None = None) -> AsyncIterator[Connection]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield Connection(session)


def _dump(tools: list[Any]) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def test_two_clients_share_one_knowledge_base_and_see_what_stdio_sees(tmp_path: Path) -> None:
    files = {"doc.md": "# One\n\nA.\n\nB.\n", "notes/b.md": "# Beta\n\nBorrowing rules.\n"}
    root = project(tmp_path, files)

    async def run() -> None:
        async with connect([sys.executable, "-m", "local_vector_search_mcp"], root) as stdio:
            stdio_tools = _dump(await stdio.list_tools())
        with http_server(tmp_path, config=WRITES, env={TOKEN_ENV: TOKEN}, root=root) as server:
            async with sdk_client(server.url, TOKEN) as one, sdk_client(server.url, TOKEN) as two:
                assert _dump(await one.list_tools()) == stdio_tools
                assert _dump(await two.list_tools()) == stdio_tools

                # The same error envelope as stdio: one text block holding {code, message}.
                assert (await one.call("kb_status", {"unexpected": 1})).error["code"] == "INVALID_ARGUMENT"
                refused = await two.call("kb_read", {"request": {"path": "../outside.md"}})
                assert refused.error["code"] == "INVALID_PATH"

                reindexed = await one.call("kb_reindex", {"request": {"scope": "all"}})
                assert not reindexed.is_error, reindexed.texts
                with anyio.fail_after(60):
                    while (await two.call("kb_status", {})).structured["indexing"]["isRunning"]:
                        await anyio.sleep(0.1)

                # Both read the same element, both try to replace it: the per-file compare-and-swap
                # lets exactly one win, as between two stdio processes.
                read = await one.call("kb_read", {"request": {"path": "doc.md"}})
                pointer = read.structured["elements"][1]["pointer"]

                async def patch(conn: Connection, text: str, out: list[Any]) -> None:
                    op = {"kind": "replace_element", "pointer": pointer, "markdown": text}
                    out.append(await conn.call("kb_patch", {"request": {"path": "doc.md", "operations": [op]}}))

                results: list[Any] = []
                async with anyio.create_task_group() as tg:
                    tg.start_soon(patch, one, "From one.", results)
                    tg.start_soon(patch, two, "From two.", results)
                assert sorted(r.is_error for r in results) == [False, True]
                assert [r.error["code"] for r in results if r.is_error] == ["CONFLICT"]
                text = (root / "doc.md").read_text()
                assert ("From one." in text) != ("From two." in text)

                # One index: what one session wrote, the other finds at once.
                winner = "one" if "From one." in text else "two"
                found = await two.call("kb_search", {"request": {"query": f"From {winner}", "mode": "lexical"}})
                assert [hit["path"] for hit in found.structured["results"]][:1] == ["doc.md"], found.structured

    anyio.run(run)


def test_stateless_mode_serves_the_sdk_client(tmp_path: Path) -> None:
    async def run() -> None:
        with http_server(tmp_path, config={"server": {"stateless": True}}) as server:
            async with sdk_client(server.url) as conn:
                listed = await conn.call("kb_list_files", {})
                assert [f["relativePath"] for f in listed.structured["files"]] == ["a.md"]
            # No session id is handed out, and none is needed.
            opened = httpx.post(server.url, content=json.dumps(INIT), headers=HEADERS)
            assert opened.status_code == 200
            assert "mcp-session-id" not in opened.headers

    anyio.run(run)


def test_a_closed_session_is_forgotten(tmp_path: Path) -> None:
    with http_server(tmp_path) as server:
        session = httpx.post(server.url, content=json.dumps(INIT), headers=HEADERS).headers["mcp-session-id"]
        headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        assert httpx.delete(server.url, headers=headers).status_code == 200
        listed = httpx.post(
            server.url, content=json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), headers=headers
        )
        assert listed.status_code == 404


def test_sigterm_and_sigint_stop_cleanly_with_clients_connected(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = {"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "local_vector_search_mcp", "--project-root", str(root)]

    async def run(sig: signal.Signals) -> None:
        log = tmp_path / f"{sig.name}.log"
        with open(log, "w") as errlog:
            proc, url = start_http_server([*command, "--config", str(tmp_path / "c.yml")], root, env, errlog)
            try:
                async with AsyncExitStack() as stack:
                    conn = await stack.enter_async_context(sdk_client(url))
                    assert not (await conn.call("kb_reindex", {})).is_error
                    await anyio.sleep(0.5)  # the client's notification stream (GET) is open by now
                    proc.send_signal(sig)
                    code = await anyio.to_thread.run_sync(lambda: proc.wait(25))
                    assert code == 0, log.read_text()
            finally:
                if proc.poll() is None:
                    proc.kill()
        assert "Traceback" not in log.read_text()

    (tmp_path / "c.yml").write_text("embedding: {provider: none}\n")
    anyio.run(run, signal.SIGTERM)
    anyio.run(run, signal.SIGINT)
    # The index the server left behind is whole and usable.
    status = subprocess.run(
        [*command, "--embedding-provider", "none", "--status"], capture_output=True, text=True, env=env, timeout=60
    )
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["project"]["documents"] == 1
    search = subprocess.run(
        [*command, "--embedding-provider", "none", "call", "kb_search", "--query", "borrowing", "--mode", "lexical"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert [hit["path"] for hit in json.loads(search.stdout)["results"]] == ["a.md"], search.stderr


def test_a_session_the_server_does_not_know_is_refused_with_the_cause_and_the_fix(tmp_path: Path) -> None:
    """Decision 1094: a request with an Mcp-Session-Id the server holds no session for (closed by
    DELETE, or opened before a restart) keeps the SDK's 404 and JSON-RPC error, and its message,
    which read only "Session not found", now says why and to send initialize without the header."""
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    with http_server(tmp_path) as server:
        opened = httpx.post(server.url, json=INIT, headers=HEADERS)
        session = opened.headers["mcp-session-id"]
        closed = httpx.delete(server.url, headers={**HEADERS, "mcp-session-id": session})
        assert closed.status_code == 200
        for sid in (session, "no-such-session"):
            answer = httpx.post(server.url, json=listing, headers={**HEADERS, "mcp-session-id": sid})
            assert answer.status_code == 404
            assert int(answer.headers["content-length"]) == len(answer.content)
            error = answer.json()["error"]
            assert error["code"] == -32600
            assert error["message"].startswith("Session not found: this server holds no session")
            assert "send initialize without an Mcp-Session-Id header" in error["message"]
        # a new session is then opened as the message says
        reopened = httpx.post(server.url, json=INIT, headers=HEADERS)
        assert reopened.status_code == 200 and reopened.headers["mcp-session-id"] != session


def test_any_other_path_says_where_the_endpoint_is(tmp_path: Path) -> None:
    """Decision 556: GET / (the printed address without /mcp, opened in a browser) answered a bare
    "Not Found"; it now names the endpoint. A closed session's 404 on /mcp is the SDK's, with a hint
    (decision 1094, the test above)."""
    with http_server(tmp_path) as server:
        base = server.url.rsplit("/mcp", 1)[0]
        for path in ("/", "/sse", "/mcp/extra"):
            answer = httpx.get(base + path)
            assert answer.status_code == 404
            assert "speaks MCP (Streamable HTTP) at /mcp only" in answer.text, path
