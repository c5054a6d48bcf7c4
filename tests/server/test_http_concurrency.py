"""Blocking engine work runs off the event loop: a slow call in one session never stalls another's.

The server runs in this process (uvicorn on a loopback port) with the dispatcher wrapped so that
one tool blocks its thread until another session's call has been answered. If tool calls ran on
the event loop, that answer could never come: the slow call gives up after a while and the test
sees the order reversed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.server import app as server_app
from local_vector_search_mcp.server import http
from local_vector_search_mcp.workspace import Workspace

from .test_http_clients import sdk_client


def test_a_slow_call_does_not_stall_other_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.md").write_text("# A\n\nAlpha.\n")
    settings = load_settings(
        CliOptions(project_root=str(tmp_path), embedding_provider="none", transport="http", port=0), environ={}
    )
    ws = Workspace(settings)
    options = http.http_options(settings, {})
    fast_answered, slow_entered = threading.Event(), threading.Event()
    order: list[str] = []
    real_invoke = server_app.invoke

    def invoke(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        if name == "kb_status":  # the "slow PDF export": blocks its thread until the other call is done
            slow_entered.set()
            fast_answered.wait(timeout=10)
            order.append("slow")
        return real_invoke(ws, name, arguments)

    monkeypatch.setattr(server_app, "invoke", invoke)
    sock = http._bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    app, _manager = http.build_app(ws, options, port)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning", ws="none", http="h11"))
    url = f"http://127.0.0.1:{port}/mcp"

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(30):
                while not server.started:
                    await anyio.sleep(0.05)
                async with sdk_client(url) as slow, sdk_client(url) as fast:
                    slow_done = anyio.Event()

                    async def slow_call() -> None:
                        assert not (await slow.call("kb_status", {})).is_error
                        slow_done.set()

                    tg.start_soon(slow_call)
                    while not slow_entered.is_set():  # the slow call holds its thread first
                        await anyio.sleep(0.02)
                    listed = await fast.call("kb_list_files", {})
                    order.append("fast")
                    fast_answered.set()
                    assert [f["relativePath"] for f in listed.structured["files"]] == ["a.md"]
                    await slow_done.wait()
            server.should_exit = True

    try:
        anyio.run(run)
    finally:
        sock.close()
        ws.close()
    assert order == ["fast", "slow"]
