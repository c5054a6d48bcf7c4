"""A forced rebuild seen by a team over Streamable HTTP (decisions 1072, 1073).

An operator restarts the team's server with embeddings on an index built without them; the index
is then incompatible and one agent starts the forced rebuild while the others keep working. The
embedding endpoint (``tests/embedding_endpoint.py``) holds the rebuild's vector phase open until
the test has looked, so what the agents see while vectors are made does not depend on timing.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
from conformance.client import Connection
from embedding_endpoint import endpoint_server

from .http_server import http_server, project
from .test_http_clients import sdk_client

FILES = {f"notes/n{i}.md": f"# Note {i}\n\nA wombat fact number {i}.\n\n## More\n\nFiller {i}.\n" for i in range(12)}


async def _status(conn: Connection) -> dict[str, Any]:
    return (await conn.call("kb_status", {})).structured  # type: ignore[no-any-return]


async def _idle(conn: Connection) -> dict[str, Any]:
    with anyio.fail_after(120):
        while (status := await _status(conn))["indexing"]["isRunning"] or status["synchronization"]:
            await anyio.sleep(0.1)
        return status


def test_search_answers_once_a_forced_rebuild_has_indexed_every_file(tmp_path: Path) -> None:
    root = project(tmp_path, FILES)
    lexical = {"embedding": {"provider": "none"}, "knowledgeBase": {"allowWrites": True}}

    async def build_lexically() -> None:
        with http_server(tmp_path, config=lexical, root=root) as server:
            async with sdk_client(server.url) as conn:
                assert (await conn.call("kb_reindex", {"request": {}})).structured["started"]
                assert (await _idle(conn))["project"]["documents"] == len(FILES)

    anyio.run(build_lexically)

    held, release = threading.Event(), threading.Event()

    def hold_the_vectors(inputs: list[str]) -> None:
        if any("wombat" in text for text in inputs):  # the notes' chunks, not the dimension probe
            held.set()
            release.wait(60)

    with endpoint_server() as endpoint:
        endpoint.before_answer = hold_the_vectors
        embedding = {"provider": "openai-compatible", "endpoint": endpoint.url, "model": "m", "batchSize": 4}
        config = {"embedding": embedding, "knowledgeBase": {"allowWrites": True}}

        async def rebuild() -> None:
            with http_server(tmp_path, config=config, root=root) as server:
                async with sdk_client(server.url) as one, sdk_client(server.url) as two:
                    assert not (await _status(one))["compatibility"]["isCompatible"]
                    started = (await one.call("kb_reindex", {"request": {"scope": "all", "force": True}})).structured
                    # the agent that asked is told at once that the index is being thrown away
                    assert started["started"] is True
                    assert started["current"]["isDestructiveRebuild"] is True, started
                    try:
                        # every file is indexed again; the endpoint holds the first vectors
                        assert await anyio.to_thread.run_sync(held.wait, 60), "no vector was asked for"
                        status = await _status(two)
                        current = status["indexing"]["current"]
                        assert current is not None and current["processedFiles"] == current["totalFiles"]
                        assert status["project"]["documents"] == len(FILES)
                        assert current["isDestructiveRebuild"] is False  # nothing is being thrown away now
                        # so searching goes on while the vectors are made (decision 80) ...
                        found = await two.call("kb_search", {"request": {"query": "wombat", "mode": "lexical"}})
                        assert not found.is_error, found.texts
                        assert len(found.structured["results"]) == 10
                        hybrid = await two.call("kb_search", {"request": {"query": "fact number"}})  # no held text
                        assert not hybrid.is_error, hybrid.texts
                        assert "do not have vectors yet" in (hybrid.structured["warning"] or "")
                        # ... and an edit made meanwhile is found without waiting for them
                        created = {"path": "late.md", "markdown": "# Late\n\nA quokka arrived.\n"}
                        assert not (await two.call("kb_create", {"request": created})).is_error
                        with anyio.fail_after(30):
                            while not (
                                await two.call("kb_search", {"request": {"query": "quokka", "mode": "lexical"}})
                            ).structured["results"]:
                                await anyio.sleep(0.05)
                    finally:
                        release.set()
                    status = await _idle(one)
                    assert status["indexing"]["last"]["outcome"] == "succeeded", status["indexing"]["last"]
                    assert status["compatibility"]["isCompatible"] is True
                    assert status["vectors"]["pendingChunks"] == 0
                    # forced again, the index it built is compatible: nothing is thrown away
                    again = (await two.call("kb_reindex", {"request": {"force": True}})).structured
                    assert again["started"] is True and again["current"]["isDestructiveRebuild"] is False
                    assert (await _idle(two))["project"]["documents"] == len(FILES) + 1

        anyio.run(rebuild)
