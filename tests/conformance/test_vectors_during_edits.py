"""An agent edits a note while the server embeds it, over MCP (decision 801).

The server embeds through an OpenAI-compatible endpoint in this process (``tests/embedding_endpoint.py``)
that holds the request carrying the note's first text until the agent's kb_patch is indexed: the
pass then gets the vector of the text the note no longer holds, and must not store it on the new one.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from embedding_endpoint import endpoint_server

from .client import Connection, connect, engine_storage, server_command

pytestmark = pytest.mark.conformance


async def _settled(conn: Connection) -> dict[str, Any]:
    with anyio.fail_after(60):
        while True:
            status: dict[str, Any] = (await conn.call("kb_status", {})).structured
            vectors = status["vectors"] or {}
            if not status["synchronization"] and not vectors.get("isRunning") and not vectors.get("pendingChunks"):
                return status
            await anyio.sleep(0.1)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_note_patched_while_its_first_text_is_embedded_is_found_by_its_new_text(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    storage, env = engine_storage(engine, request)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "garden.md").write_text("# Garden\n\nTomatoes need sun and water.\n", encoding="utf-8")
    command = server_command(request.config.getoption("--server"))
    held, release = threading.Event(), threading.Event()

    def hold_the_first_text(inputs: list[str]) -> None:
        if any("Plums" in text for text in inputs) and not held.is_set():
            held.set()
            release.wait(30)  # the agent's edit lands while this answer is on its way

    with endpoint_server() as endpoint:
        endpoint.before_answer = hold_the_first_text
        embedding = {"provider": "openai-compatible", "endpoint": endpoint.url, "model": "m", "batchSize": 4}
        config: dict[str, Any] = {"knowledgeBase": {"allowWrites": True}, "embedding": embedding}
        if storage is not None:
            config["storage"] = storage

        async def run() -> None:
            async with connect(command, ws, config, extra_env=env) as conn:
                await conn.call("kb_reindex", {"request": {}})
                await _settled(conn)
                created = await conn.call(
                    "kb_create", {"request": {"path": "orchard.md", "markdown": "# Orchard\n\nPlums and figs.\n"}}
                )
                assert not created.is_error
                # the pass is embedding "Plums and figs"
                assert await anyio.to_thread.run_sync(held.wait, 30), "the note's text never reached the endpoint"
                found = await conn.call("kb_search", {"request": {"query": "plums", "mode": "lexical"}})
                pointer = found.structured["results"][0]["pointer"]
                patch = {"kind": "replace", "pointer": pointer, "markdown": "Kiwis and melons."}
                patched = await conn.call("kb_patch", {"request": {"path": "orchard.md", "operations": [patch]}})
                assert not patched.is_error
                with anyio.fail_after(30):  # the new text is indexed before the old text's vector arrives
                    while not (
                        await conn.call("kb_search", {"request": {"query": "kiwis", "mode": "lexical"}})
                    ).structured["results"]:
                        await anyio.sleep(0.05)
                release.set()
                status = await _settled(conn)
                assert status["vectors"]["embeddedChunks"] == status["project"]["chunks"]
                best = (
                    await conn.call("kb_search", {"request": {"query": "kiwis and melons", "mode": "semantic"}})
                ).structured["results"][0]
                # was (SQLite): the patched paragraph kept the vector of "Plums and figs"
                assert best["path"] == "orchard.md" and best["score"] > 0.9
                assert any("Kiwis and melons" in text for batch in endpoint.requests for text in batch)

        try:
            anyio.run(run)
        finally:
            release.set()
