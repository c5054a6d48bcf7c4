"""Worker-thread lanes (decision 211): cheap reads are not queued behind query embeddings, and the
search lane holds at most ``Lanes.SEARCH`` calls at once. Also the reply's JSON text (decision 212)."""

from __future__ import annotations

import json
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


@pytest.fixture
def local_ws(tmp_path: Path) -> Any:
    """A workspace with the default (local) embedding provider; nothing loads the model here."""
    ws = Workspace(load_settings(CliOptions(project_root=str(tmp_path)), environ={}))
    yield ws
    ws.close()


@pytest.mark.parametrize(
    ("name", "arguments", "lane"),
    [
        ("kb_search", {"request": {"query": "x", "mode": "lexical"}}, "light"),
        ("kb_search", {"request": {"query": "x", "mode": "LEXICAL"}}, "light"),
        ("kb_search", {"request": {"query": "x", "mode": "hybrid"}}, "search"),
        ("kb_search", {"request": {"query": "x", "mode": "semantic"}}, "search"),
        ("kb_search", {"request": {"query": "x"}}, "search"),  # the default mode is hybrid
        ("kb_search", {"request": "not an object"}, "search"),  # refused in the thread, not here
        ("search_knowledge", {"query": "x"}, "search"),
        ("search_vectors", {}, "search"),
        ("kb_read", {"request": {"path": "a.md"}}, "light"),
        ("kb_list_files", {}, "light"),
        ("kb_status", {}, "light"),
        ("kb_outline", {}, "light"),
        ("kb_patch", {}, "other"),
        ("kb_reindex", {}, "other"),
        ("kb_create_pdf_book", {}, "other"),
        ("kb_download_file", {}, "other"),
        ("kb_load_image", {}, "other"),
        ("no_such_tool", None, "other"),
    ],
)
def test_lane_of(local_ws: Workspace, name: str, arguments: dict[str, Any] | None, lane: str) -> None:
    assert server_app.lane_of(local_ws, name, arguments) == lane


def test_without_embeddings_every_search_is_light(tmp_path: Path) -> None:
    ws = Workspace(load_settings(CliOptions(project_root=str(tmp_path), embedding_provider="none"), environ={}))
    try:
        assert server_app.lane_of(ws, "kb_search", {"request": {"query": "x", "mode": "hybrid"}}) == "light"
    finally:
        ws.close()


def test_a_light_call_passes_a_full_search_lane(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two "searches" (kb_status, routed to the search lane) block in their handler; with one search
    slot the second one waits for the lane without a thread, and kb_list_files is answered meanwhile."""
    (tmp_path / "a.md").write_text("# A\n\nAlpha.\n")
    settings = load_settings(
        CliOptions(project_root=str(tmp_path), embedding_provider="none", transport="http", port=0), environ={}
    )
    ws = Workspace(settings)
    options = http.http_options(settings, {})
    release = threading.Event()
    started: list[str] = []
    real_invoke = server_app.invoke
    real_lane_of = server_app.lane_of

    def lane_of(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> str:
        return "search" if name == "kb_status" else real_lane_of(ws, name, arguments)

    def invoke(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> Any:
        if name == "kb_status":
            started.append(name)
            release.wait(timeout=20)
        return real_invoke(ws, name, arguments)

    limiters: dict[str, anyio.CapacityLimiter] = {}
    real_limiter = server_app.Lanes.limiter

    def limiter(self: server_app.Lanes, lane: str) -> anyio.CapacityLimiter:
        limiters[lane] = real_limiter(self, lane)
        return limiters[lane]

    monkeypatch.setattr(server_app, "invoke", invoke)
    monkeypatch.setattr(server_app, "lane_of", lane_of)
    monkeypatch.setattr(server_app.Lanes, "SEARCH", 1)
    monkeypatch.setattr(server_app.Lanes, "limiter", limiter)
    sock = http._bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    app, _manager = http.build_app(ws, options, port)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning", ws="none", http="h11"))
    url = f"http://127.0.0.1:{port}/mcp"
    seen: dict[str, Any] = {}

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(30):
                while not server.started:
                    await anyio.sleep(0.05)
                async with sdk_client(url) as one, sdk_client(url) as two, sdk_client(url) as light:
                    done = anyio.Event()
                    answers: list[bool] = []

                    async def search(conn: Any) -> None:
                        answers.append(not (await conn.call("kb_status", {})).is_error)
                        if len(answers) == 2:
                            done.set()

                    tg.start_soon(search, one)
                    tg.start_soon(search, two)
                    # both reach the server: one holds the only search slot, the other waits for it
                    while not (started and "search" in limiters and limiters["search"].statistics().tasks_waiting):
                        await anyio.sleep(0.02)
                    listed = await light.call("kb_list_files", {})
                    seen["started_when_light_answered"] = list(started)
                    seen["files"] = [f["relativePath"] for f in listed.structured["files"]]
                    release.set()
                    await done.wait()
                    seen["answers"] = answers
            server.should_exit = True

    try:
        anyio.run(run)
    finally:
        release.set()
        sock.close()
        ws.close()
    assert seen["files"] == ["a.md"]
    assert seen["started_when_light_answered"] == ["kb_status"]  # the second search waited for the lane
    assert seen["answers"] == [True, True]
    assert started == ["kb_status", "kb_status"]


@pytest.mark.parametrize(
    "payload",
    [
        {"items": [{"path": "a.md", "score": 0.8125, "title": "Ça — 日本語", "lines": [1, 2], "x": None}], "e": []},
        {"nested": {"deep": [{"k": True}, {"k": False}], "empty": {}}, "big": 2**70, "neg": -3.5},
    ],
)
def test_json_text_is_the_indented_json_of_the_result(payload: dict[str, Any]) -> None:
    text = server_app._json_text(payload)
    assert text == json.dumps(payload, ensure_ascii=False, indent=2)
    assert json.loads(text) == payload
