"""An HTTP server told to stop while a call runs longer than its grace period (decision 752).

The server runs in this process (uvicorn on a loopback port, the project's own uvicorn subclass)
with a short grace period; the tool stands for a long PDF export: it steps through its work until
it is stopped, as the export does between blocks.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from local_vector_search_mcp import progress
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.server import app as server_app
from local_vector_search_mcp.server import http
from local_vector_search_mcp.workspace import Workspace

from .test_http_clients import sdk_client


def test_a_call_outlasting_the_grace_period_is_answered_that_the_server_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A call still running when uvicorn's graceful shutdown ran out was cancelled by uvicorn: the
    client got a bare HTTP 500 ("Server returned an error response") and the log a traceback, while
    the tool went on in its thread. Now the call is stopped at its next step before the grace ends
    and answered with an error that says why."""
    (tmp_path / "a.md").write_text("# A\n\nAlpha.\n")
    settings = load_settings(
        CliOptions(project_root=str(tmp_path), embedding_provider="none", transport="http", port=0), environ={}
    )
    ws = Workspace(settings)
    monkeypatch.setattr(http, "GRACEFUL_SHUTDOWN_SECONDS", 3)
    monkeypatch.setattr(http, "STOP_CALLS_BEFORE_END_SECONDS", 2)
    entered = anyio.Event()
    stopped_after: list[float] = []
    real_invoke = server_app.invoke

    def invoke(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> Any:
        if name != "kb_status":
            return real_invoke(ws, name, arguments)
        anyio.from_thread.run_sync(entered.set)
        start = time.monotonic()
        try:
            for piece in range(600):  # a minute of work, a step every 0.1 s
                progress.step(piece, 600)
                time.sleep(0.1)
        finally:
            stopped_after.append(time.monotonic() - start)
        return real_invoke(ws, name, arguments)

    monkeypatch.setattr(server_app, "invoke", invoke)
    sock = http._bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    in_flight: set[progress.Call] = set()
    app, manager = http.build_app(ws, http.http_options(settings, {}), port, in_flight)
    server = http._make_server(http.uvicorn_config(app), manager, in_flight)
    url = f"http://127.0.0.1:{port}/mcp"
    answers: list[Any] = []

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(30):
                while not server.started:
                    await anyio.sleep(0.05)
                async with sdk_client(url) as client:

                    async def long_call() -> None:
                        answers.append(await client.call("kb_status", {}))

                    async with anyio.create_task_group() as calls:
                        calls.start_soon(long_call)
                        await entered.wait()
                        server.should_exit = True  # what SIGTERM does
                    assert not in_flight

    try:
        with caplog.at_level("INFO", logger="local_vector_search_mcp"):
            anyio.run(run)
    finally:
        sock.close()
        ws.close()
    assert len(answers) == 1 and answers[0].is_error, answers
    assert '"INTERNAL_ERROR"' in answers[0].texts[0] and "shutting down" in answers[0].texts[0], answers[0].texts
    assert stopped_after and stopped_after[0] < 2.5, stopped_after  # at its next step, not after a minute
    assert "stopped by the server's shutdown" in caplog.text
    assert "cancelled by its client" not in caplog.text
