"""Vectors come once the embedding provider answers, however the index was made while it was down
(decision 1089): by a reindex of an earlier server run, or by the first edit of a knowledge base
never indexed (decision 1088). Black-box over the real protocol, with a real OpenAI-compatible
endpoint on loopback (``tests/embedding_endpoint.py``) started only after the index exists: a
scenario cannot start a provider between two steps."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from embedding_endpoint import Endpoint, handler_for

from .client import Connection, connect, engine_storage, server_command

pytestmark = pytest.mark.conformance


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _provider(port: int) -> Iterator[Endpoint]:
    """The provider starts answering on ``port`` (the server was configured with it all along)."""
    endpoint = Endpoint(64)
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(endpoint))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()


async def _vectors(conn: Connection, done: bool, seconds: float = 60) -> dict[str, Any]:
    """kb_status.vectors once it is ``done`` (nothing pending, no pass running) or, with ``done``
    false, once no reindex or pass runs and the chunks wait; fails after ``seconds``."""
    with anyio.fail_after(seconds):
        while True:
            status: dict[str, Any] = (await conn.call("kb_status", {})).structured
            vectors = status["vectors"]
            idle = not status["indexing"]["isRunning"] and status["synchronization"] is None
            if idle and not vectors["isRunning"] and (not vectors["pendingChunks"]) == done:
                return vectors
            await anyio.sleep(0.2)


def _config(port: int, storage: dict[str, Any] | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "knowledgeBase": {"allowWrites": True},
        "embedding": {
            "provider": "openai-compatible",
            "endpoint": f"http://127.0.0.1:{port}/v1",
            "model": "m",
            "timeoutSeconds": 2,
        },
    }
    if storage is not None:
        config["storage"] = storage
    return config


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# Apples\n\nRed apples grow on trees.\n", encoding="utf-8")
    (ws / "b.md").write_text("# Pears\n\nPears ripen in autumn.\n", encoding="utf-8")
    return ws


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_restart_embeds_the_index_a_reindex_built_while_the_provider_was_down(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """The reindex stores every chunk lexically and no vector table yet; the next server start with
    the provider answering found no chunk marked pending and embedded nothing: kb_status kept them
    pending and semantic search said "vectors are added once it answers" until a kb_reindex."""
    storage, env = engine_storage(engine, request)
    port = _free_port()
    config = _config(port, storage)
    ws = _workspace(tmp_path)
    command = server_command(request.config.getoption("--server"))

    async def down() -> None:
        async with connect(command, ws, config, extra_env=env) as conn:
            await conn.call("kb_reindex", {"request": {}})
            vectors = await _vectors(conn, done=False)
            assert vectors["pendingChunks"] == 2 and vectors["lastError"], vectors

    async def up() -> None:
        async with connect(command, ws, config, extra_env=env) as conn:
            vectors = await _vectors(conn, done=True)
            assert vectors["embeddedChunks"] == 2 and vectors["lastError"] is None, vectors
            found = await conn.call("kb_search", {"request": {"query": "fruit on trees", "mode": "semantic"}})
            assert not found.is_error, found.texts

    anyio.run(down)
    with _provider(port):
        anyio.run(up)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_the_first_edit_made_while_the_provider_was_down_gets_its_vectors_once_it_answers(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """The first edit of a never-indexed base indexes it lexically (decisions 1086, 1088); the
    chunks its sync stored were not marked pending (no vector table yet), so no pass was started
    and none retried: the provider coming back in the same session changed nothing."""
    storage, env = engine_storage(engine, request)
    port = _free_port()
    config = _config(port, storage)
    ws = _workspace(tmp_path)
    command = server_command(request.config.getoption("--server"))

    async def run() -> None:
        async with connect(command, ws, config, extra_env=env) as conn:
            made = await conn.call(
                "kb_create", {"request": {"path": "c.md", "markdown": "# Plums\n\nPlums are sweet.\n"}}
            )
            assert not made.is_error, made.texts
            vectors = await _vectors(conn, done=False)
            assert vectors["pendingChunks"] == 3, vectors
            with _provider(port):
                vectors = await _vectors(conn, done=True)
                assert vectors["embeddedChunks"] == 3, vectors

    anyio.run(run)
