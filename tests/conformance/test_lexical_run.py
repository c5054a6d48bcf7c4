"""An index built with the local model, served by a server without embeddings (decision 630).

Three servers in turn on one index: the first builds it with the bundled model, the second runs
with ``embedding.provider: none`` (searches it lexically, refuses semantic search, writes a note),
the third runs with the model again and embeds only what the second changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .client import Connection, connect, engine_storage, server_command

pytestmark = pytest.mark.conformance

FILES = {
    "garden.md": "# Garden\n\nTomatoes need sun and water.\n\n## Pests\n\nAphids eat the leaves.\n",
    "kitchen.md": "# Kitchen\n\nBread rises in a warm oven.\n",
}


async def _status_until(conn: Connection, done: Any) -> dict[str, Any]:
    with anyio.fail_after(180):
        while True:
            status: dict[str, Any] = (await conn.call("kb_status", {})).structured
            if done(status):
                return status
            await anyio.sleep(0.2)


def _settled(status: dict[str, Any]) -> bool:
    vectors = status["vectors"] or {}
    return not status["indexing"]["isRunning"] and not vectors.get("isRunning") and not vectors.get("pendingChunks")


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_server_without_embeddings_uses_the_models_index_and_leaves_its_edits_to_the_model(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    storage, env = engine_storage(engine, request)
    base: dict[str, Any] = {"knowledgeBase": {"allowWrites": True}}
    if storage is not None:
        base["storage"] = storage
    with_model = {**base, "embedding": {"provider": "local"}}
    without = {**base, "embedding": {"provider": "none"}}
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, text in FILES.items():
        (ws / name).write_text(text, encoding="utf-8")
    command = server_command(request.config.getoption("--server"))

    async def run() -> None:
        async with connect(command, ws, with_model, extra_env=env) as model:
            await model.call("kb_reindex", {"request": {}})
            built = await _status_until(model, lambda s: s["indexing"]["last"] is not None and _settled(s))
            chunks = built["project"]["chunks"]
            assert built["vectors"]["embeddedChunks"] == chunks
        async with connect(command, ws, without, extra_env=env) as lexical:
            status = (await lexical.call("kb_status", {})).structured
            assert status["compatibility"] == {"isCompatible": True, "problems": []}
            found = await lexical.call("kb_search", {"request": {"query": "tomatoes", "mode": "hybrid"}})
            assert not found.is_error, found.texts
            assert found.structured["results"][0]["path"] == "garden.md"
            assert found.structured["results"][0]["searchMode"] == "lexical"
            assert "only lexical search ran" in found.structured["warning"]
            semantic = await lexical.call("kb_search", {"request": {"query": "tomatoes", "mode": "semantic"}})
            assert semantic.error["code"] == "INDEX_NOT_READY"
            made = await lexical.call(
                "kb_create", {"request": {"path": "shed.md", "markdown": "# Shed\n\nThe rake hangs by the door.\n"}}
            )
            assert not made.is_error, made.texts
            waiting = await _status_until(
                lexical,
                lambda s: (
                    not s["synchronization"]
                    or not (s["synchronization"]["pendingFiles"] or s["synchronization"].get("comparing"))
                ),
            )
            assert waiting["vectors"]["pendingChunks"] == 1
            assert waiting["vectors"]["embeddedChunks"] == chunks
            hit = await lexical.call("kb_search", {"request": {"query": "rake", "mode": "lexical"}})
            assert [r["path"] for r in hit.structured["results"]] == ["shed.md"]
        async with connect(command, ws, with_model, extra_env=env) as model:
            await model.call("kb_search", {"request": {"query": "rake", "mode": "hybrid"}})  # starts the pass
            done = await _status_until(model, _settled)
            assert done["vectors"]["embeddedChunks"] == chunks + 1
            near = await model.call("kb_search", {"request": {"query": "where is the rake", "mode": "semantic"}})
            assert near.structured["results"][0]["path"] == "shed.md"

    anyio.run(run)
