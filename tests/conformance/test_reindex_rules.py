"""Full reindex, chunking and the manifest, rule by rule over MCP (notes §8, §9.1, §9.2; H108).

Every expectation is computed from the notes, not from our code. The embedding tests run the
server against a real OpenAI-compatible endpoint in this process (``tests/embedding_endpoint.py``),
which records every input it is sent: the notes' embedding text (§8.1) is what reaches it, and
the chunks are read back from it.
"""

from __future__ import annotations

import socket
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from embedding_endpoint import Endpoint, endpoint_server, handler_for

from .client import Connection, connect, engine_storage, server_command

pytestmark = pytest.mark.conformance


def _workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text, encoding="utf-8")
    return ws


async def _finished(conn: Connection, timeout: float = 120) -> dict[str, Any]:
    """kb_status once the reindex this test started has ended and nothing else is queued."""
    with anyio.fail_after(timeout):
        while True:
            status: dict[str, Any] = (await conn.call("kb_status", {})).structured
            vectors = status.get("vectors") or {}
            idle = not status["indexing"]["isRunning"] and not vectors.get("isRunning")
            if (
                idle
                and status["indexing"]["last"] is not None
                and not (status["synchronization"] or {}).get("pendingFiles")
                and not (status["synchronization"] or {}).get("comparing")
            ):
                return status
            await anyio.sleep(0.1)


def _config(engine_section: dict[str, Any] | None, **sections: Any) -> dict[str, Any]:
    config = dict(sections)
    if engine_section is not None:
        config["storage"] = engine_section
    return config


@pytest.mark.parametrize("first_call", ["kb_reindex", "kb_status"])
@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_reindex_after_a_restart_counts_what_changed_while_no_server_ran(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str, first_call: str
) -> None:
    """Notes §9.2: a `changed` reindex deletes the documents whose file is gone or now excluded,
    indexes the new and changed files and skips the others, and ReindexResponse counts each.
    Here the changes were made while no server ran (a file removed, one edited, one added, and a
    folder excluded by the new configuration), and the reindex is the new server's first call, or
    follows a kb_status and the time any start-up work takes. Was: the server's own start-up
    catch-up (decision 205) had applied them first, so the reindex answered 0 indexed, 0 deleted,
    3 skipped."""
    storage, env = engine_storage(engine, request)
    ws = _workspace(
        tmp_path,
        {
            "a.md": "# A\n\nThe aardvark digs.\n",
            "b.md": "# B\n\nThe badger digs.\n",
            "c.md": "# C\n\nThe cat sleeps.\n",
            "drafts/d.md": "# D\n\nThe dodo is a draft.\n",
        },
    )
    command = server_command(request.config.getoption("--server"))

    async def run() -> None:
        async with connect(command, ws, _config(storage, embedding={"provider": "none"}), extra_env=env) as conn:
            await conn.call("kb_reindex", {})
            first = (await _finished(conn))["indexing"]["last"]["result"]
            assert (first["indexedFiles"], first["deletedFiles"]) == (4, 0)
        (ws / "a.md").unlink()
        (ws / "b.md").write_text("# B\n\nThe badger swims now.\n", encoding="utf-8")
        (ws / "e.md").write_text("# E\n\nAn echidna.\n", encoding="utf-8")
        later = _config(storage, embedding={"provider": "none"}, knowledgeBase={"exclude": ["drafts/**"]})
        async with connect(command, ws, later, extra_env=env) as conn:
            if first_call == "kb_status":
                await conn.call("kb_status", {})
                await anyio.sleep(3)  # whatever a server does by itself at start has had its time
            assert (await conn.call("kb_reindex", {})).structured["started"] is True
            status = await _finished(conn)
            assert status["indexing"]["last"]["outcome"] == "succeeded"
            result = status["indexing"]["last"]["result"]
            counts = {k: result[k] for k in ("scannedFiles", "indexedFiles", "skippedFiles", "deletedFiles")}
            assert counts == {"scannedFiles": 3, "indexedFiles": 2, "skippedFiles": 1, "deletedFiles": 2}
            assert result["chunksIndexed"] == 2
            assert status["project"]["documents"] == 3
            # the next reindex has nothing left to do
            await conn.call("kb_reindex", {})
            again = (await _finished(conn))["indexing"]["last"]["result"]
            assert (again["indexedFiles"], again["skippedFiles"], again["deletedFiles"]) == (0, 3, 0)

    anyio.run(run)


def _set_manifest(database: str, values: dict[str, str | None]) -> None:
    """Write keys of the notes' ``index_manifest(key, value)`` table directly (None deletes)."""
    import apsw

    db = apsw.Connection(database)
    try:
        for key, value in values.items():
            if value is None:
                db.execute("delete from index_manifest where key = ?", (key,))
            else:
                db.execute("update index_manifest set value = ? where key = ?", (value, key))
    finally:
        db.close()


@pytest.mark.parametrize(
    "stored, problem",
    [
        ({"chunker_version": "5"}, "chunker_version: indexed '5', current '6'"),
        ({"schema_version": "4"}, "schema_version: indexed '4', current '5'"),
        ({"schema_version": None}, "schema_version: indexed <missing>, current '5'"),
    ],
    ids=["chunker v5", "schema v4", "no schema version"],
)
def test_an_index_of_an_older_chunker_or_schema_is_refused_in_the_versions_kb_status_reports(
    tmp_path: Path, request: pytest.FixtureRequest, stored: dict[str, str | None], problem: str
) -> None:
    """Notes §8.1-§8.2: v5 and v6 chunks differ, so a v5 index needs a forced rebuild, as does any
    older schema; each difference reads `<key>: indexed '<old>', current '<new>'` (or `indexed
    <missing>`), in the versions kb_status reports (`chunkerVersion: "6"`, `schemaVersion: "5"`).
    Was: `chunker_version: indexed '5', current '7'`, our internal revision (decision 630 keeps it
    in the manifest) beside a kb_status that says 6. SQLite only: the test edits the index file."""
    ws = _workspace(tmp_path, {"a.md": "# A\n\nThe aardvark digs.\n"})
    command = server_command(request.config.getoption("--server"))
    config = {"embedding": {"provider": "none"}}

    async def run() -> None:
        async with connect(command, ws, config) as conn:
            await conn.call("kb_reindex", {})
            database = (await _finished(conn))["databasePath"]
        _set_manifest(database, stored)
        async with connect(command, ws, config) as conn:
            status = (await conn.call("kb_status", {})).structured
            assert (status["chunkerVersion"], status["schemaVersion"]) == ("6", "5")
            assert status["compatibility"] == {"isCompatible": False, "problems": [problem]}
            refused = await conn.call("kb_search", {"request": {"query": "aardvark", "mode": "lexical"}})
            assert refused.error["code"] == "INDEX_NOT_READY"
            assert problem in refused.error["message"] and "force" in refused.error["message"]
            await conn.call("kb_reindex", {"request": {"force": True}})
            rebuilt = await _finished(conn)
            assert rebuilt["indexing"]["last"]["outcome"] == "succeeded"
            assert rebuilt["compatibility"] == {"isCompatible": True, "problems": []}
            found = await conn.call("kb_search", {"request": {"query": "aardvark", "mode": "lexical"}})
            assert [r["path"] for r in found.structured["results"]] == ["a.md"]

    anyio.run(run)


GUIDE = (
    "Intro   line.  \n\n# Guide\n\nP1 one.\n\nP2 two.\n\nP3 three.\n\nP4 four.\n\n"
    "## Deep\n\n- item a\n- item b\n  - nested c\n\n> quoted\n> more\n\n| x | y |\n| - | - |\n| 1 | 2 |\n\n"
    "## Bytes\n\n" + "ж" * 20 + "\n\n" + "ё" * 9 + "\n\nя\n\n```\n" + "x" * 70 + "\n```\n\nafter.\n"
)
# The chunks of chunker v6 (notes §8.1) with maxElements 3 and maxChunkBytes 60, worked out by hand:
# a new chunk per section, after 3 elements, or where the joined UTF-8 text would pass 60 bytes
# (40 + 2 + 18 = 60 stays one chunk); each element trimmed, joined by a blank line; a list item's
# own text once, a quote and a table whole; an oversized code block alone and never split.
GUIDE_CHUNKS = [
    (None, "Intro   line."),
    ("Guide", "P1 one.\n\nP2 two.\n\nP3 three."),
    ("Guide", "P4 four."),
    ("Guide > Deep", "- item a\n\n- item b\n\n- nested c"),
    ("Guide > Deep", "> quoted\n> more\n\n| x | y |\n| - | - |\n| 1 | 2 |"),
    ("Guide > Bytes", "ж" * 20 + "\n\n" + "ё" * 9),
    ("Guide > Bytes", "я"),
    ("Guide > Bytes", "```\n" + "x" * 70 + "\n```"),
    ("Guide > Bytes", "after."),
]


def _embedding_texts(path: str, chunks: list[tuple[str | None, str]], heading_context: bool = True) -> list[str]:
    """The notes' embedding text v1: `Path: <path>\\n`, `Heading: <headingPath>\\n` when enabled and
    present, a blank line, the chunk text."""
    return [
        f"Path: {path}\n" + (f"Heading: {heading}\n" if heading and heading_context else "") + "\n" + text
        for heading, text in chunks
    ]


def _sent(endpoint: Any, since: int = 0) -> list[str]:
    """The passages the server sent (a request of its own, such as a size probe, is no passage)."""
    return [text for batch in endpoint.requests[since:] for text in batch if text.startswith("Path: ")]


def test_chunks_and_their_embedding_text_reach_the_endpoint_as_the_notes_define_them(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Notes §8.1 (chunker v6 and embedding text v1), §9.1 (POST <endpoint>/embeddings with the
    bearer key and {model, input}, at most batchSize inputs; both queries scoped before topK),
    §18.4 / decision 92 (`scope: all` re-parses every file and re-embeds no unchanged text),
    §8.2 (force on a compatible index is no rebuild: unchanged files are skipped; on an
    incompatible one it rebuilds and re-embeds)."""
    ws = _workspace(tmp_path, {"guide.md": GUIDE, "zeta.md": "Plain note.\n"})
    command = server_command(request.config.getoption("--server"))
    with endpoint_server() as endpoint:
        embedding = {
            "provider": "openai-compatible",
            "endpoint": endpoint.url,
            "model": "m",
            "apiKey": "k-123",
            "batchSize": 4,
        }
        chunking = {"maxElements": 3, "maxChunkBytes": 60}
        config = {"embedding": embedding, "chunking": chunking}
        expected = [*_embedding_texts("guide.md", GUIDE_CHUNKS), "Path: zeta.md\n\nPlain note."]

        async def run() -> None:
            async with connect(command, ws, config) as conn:
                await conn.call("kb_reindex", {})
                status = await _finished(conn)
                assert status["indexing"]["last"]["result"]["chunksIndexed"] == len(expected)
                assert sorted(_sent(endpoint)) == sorted(expected)
                assert status["vectors"]["embeddedChunks"] == len(expected)
                assert set(endpoint.paths) == {"/v1/embeddings"}
                assert set(endpoint.authorizations) == {"Bearer k-123"} and set(endpoint.models) == {"m"}
                assert max(len(batch) for batch in endpoint.requests) <= 4
                # both queries keep to the scope before they take topK (notes §9.1)
                for mode in ("semantic", "lexical"):
                    arguments = {"query": "P1 one note", "mode": mode, "topK": 1}
                    everywhere = await conn.call("kb_search", {"request": arguments})
                    assert everywhere.structured["results"][0]["path"] == "guide.md"
                    scoped = await conn.call("kb_search", {"request": {**arguments, "includeGlobs": ["zeta.md"]}})
                    assert [r["path"] for r in scoped.structured["results"]] == ["zeta.md"]

                before = len(endpoint.requests)
                await conn.call("kb_reindex", {"request": {"scope": "all"}})
                result = (await _finished(conn))["indexing"]["last"]["result"]
                assert (result["indexedFiles"], result["skippedFiles"]) == (2, 0)
                assert _sent(endpoint, before) == []  # same model, same texts: the vectors are kept

                started = (await conn.call("kb_reindex", {"request": {"force": True}})).structured
                assert started["current"]["isDestructiveRebuild"] is False
                status = await _finished(conn)
                result = status["indexing"]["last"]["result"]
                assert (result["indexedFiles"], result["skippedFiles"], result["deletedFiles"]) == (0, 2, 0)
                assert _sent(endpoint, before) == [] and status["project"]["chunks"] == len(expected)

            without_headings = {**config, "chunking": {**chunking, "includeHeadingContext": False}}
            async with connect(command, ws, without_headings) as conn:
                problems = (await conn.call("kb_status", {})).structured["compatibility"]["problems"]
                assert problems == ["chunking_include_heading_context: indexed 'true', current 'false'"]
                before = len(endpoint.requests)
                await conn.call("kb_reindex", {"request": {"force": True}})
                status = await _finished(conn)
                assert status["indexing"]["last"]["outcome"] == "succeeded"
                rebuilt = _embedding_texts("guide.md", GUIDE_CHUNKS, heading_context=False)
                assert sorted(_sent(endpoint, before)) == sorted([*rebuilt, "Path: zeta.md\n\nPlain note."])

        anyio.run(run)


@pytest.mark.parametrize("malformed", ["count", "duplicate", "range", "empty", "nodata"])
def test_an_embedding_answer_that_breaks_the_strict_checks_is_a_provider_failure(
    tmp_path: Path, request: pytest.FixtureRequest, malformed: str
) -> None:
    """Notes §9.1: the embedding client checks the answer (item count, index range, duplicates,
    non-empty vectors, a `data` list) and fails as the provider; notes §9.2: a provider failure
    stops the reindex cleanly with a `warning`, marks the path dirty, and the files stay
    searchable lexically. No vector of such an answer is stored."""
    ws = _workspace(tmp_path, {"a.md": "# A\n\nAlpha one.\n\n## B\n\nBeta two.\n\n## C\n\nGamma three.\n"})
    command = server_command(request.config.getoption("--server"))
    with endpoint_server() as endpoint:
        embedding = {"provider": "openai-compatible", "endpoint": endpoint.url, "model": "m", "dimensions": 64}

        async def run() -> None:
            async with connect(command, ws, {"embedding": embedding}) as conn:
                endpoint.malformed = malformed
                await conn.call("kb_reindex", {})
                status = await _finished(conn)
                last = status["indexing"]["last"]
                assert last["outcome"] == "succeeded"
                assert last["result"]["indexedFiles"] == 1 and last["result"]["chunksIndexed"] == 3
                assert "Embedding" in last["result"]["warning"] and "lexically" in last["result"]["warning"]
                assert status["vectors"]["embeddedChunks"] == 0 and status["vectors"]["pendingChunks"] == 3
                assert status["synchronization"]["paths"] == ["a.md"]
                found = await conn.call("kb_search", {"request": {"query": "gamma", "mode": "lexical"}})
                assert [r["path"] for r in found.structured["results"]] == ["a.md"]

        anyio.run(run)


def test_a_running_reindex_reports_its_progress_and_never_blocks_reading(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Notes §9.2: while a reindex runs, kb_status `indexing.current` reports `processedFiles`,
    `totalFiles` and `currentPath` (`isDestructiveRebuild` false when nothing is reset), and
    reads, outlines and file listings are never blocked by it; `indexing.last` then has the
    notes' shape, with `current` null and `isRunning` false."""
    filler = "Words to index, and more words to keep the reindex busy for a while. " * 30
    files = {f"f{i // 100}/n{i:03}.md": f"# Note {i}\n\n{filler}{i}\n" for i in range(400)}
    files["guide.md"] = "# Guide\n\nRead me while the index is built.\n\n## Part\n\nMore.\n"
    ws = _workspace(tmp_path, files)
    command = server_command(request.config.getoption("--server"))

    async def run() -> None:
        async with connect(command, ws, {"embedding": {"provider": "none"}}) as conn:
            assert (await conn.call("kb_reindex", {"request": {"scope": "all"}})).structured["started"] is True
            seen: list[dict[str, Any]] = []
            reads_while_running = 0
            with anyio.fail_after(180):
                while True:
                    status = (await conn.call("kb_status", {})).structured
                    if not status["indexing"]["isRunning"]:
                        break
                    seen.append(status["indexing"]["current"])
                    read = await conn.call("kb_read", {"request": {"path": "guide.md"}})
                    outline = await conn.call("kb_outline", {"request": {"path": "guide.md"}})
                    listed = await conn.call("kb_list_files", {"request": {"pathPrefix": "f0"}})
                    assert not (read.is_error or outline.is_error or listed.is_error)
                    assert len(listed.structured["files"]) == 100
                    if (await conn.call("kb_status", {})).structured["indexing"]["isRunning"]:
                        reads_while_running += 1
            assert reads_while_running >= 1, "the reindex ended before a read could be made during it"
            for current in seen:
                assert set(current) >= {"scope", "force", "startedAtUtc", "processedFiles", "totalFiles"}
                assert current["scope"] == "all" and current["isDestructiveRebuild"] is False
                if current["totalFiles"] is not None:
                    assert current["totalFiles"] == 401 and 0 <= current["processedFiles"] <= 401
            counted = [c for c in seen if c["totalFiles"] is not None and c["currentPath"] is not None]
            assert counted and all(c["currentPath"] in files for c in counted)
            assert [c["processedFiles"] for c in counted] == sorted(c["processedFiles"] for c in counted)
            last = status["indexing"]
            assert last["current"] is None
            assert set(last["last"]) == {
                "scope",
                "force",
                "startedAtUtc",
                "completedAtUtc",
                "outcome",
                "result",
                "error",
            }
            assert last["last"]["outcome"] == "succeeded" and last["last"]["error"] is None
            assert last["last"]["result"]["indexedFiles"] == 401

    anyio.run(run)


def test_a_provider_down_during_a_reindex_leaves_every_file_searchable_and_vectors_follow_it(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Notes §9.2: with the embedding provider unavailable the reindex stops its embedding
    cleanly and says so in `warning`; what it indexed stays searchable lexically. Decision 135:
    the vectors are added once the provider answers, without another kb_reindex."""
    reserved = socket.socket()  # bound, not listening: connections are refused until it listens
    reserved.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{reserved.getsockname()[1]}/v1"
    endpoint = Endpoint(dims=16)
    server = ThreadingHTTPServer(reserved.getsockname(), handler_for(endpoint), bind_and_activate=False)
    server.socket.close()
    server.socket = reserved
    ws = _workspace(tmp_path, {"a.md": "# A\n\nApples grow on trees.\n", "b.md": "# B\n\nPears too.\n"})
    command = server_command(request.config.getoption("--server"))
    config = {"embedding": {"provider": "openai-compatible", "endpoint": url, "model": "m", "timeoutSeconds": 5}}
    serving: list[bool] = []

    async def run() -> None:
        async with connect(command, ws, config) as conn:
            await conn.call("kb_reindex", {})
            status = await _finished(conn)
            last = status["indexing"]["last"]
            assert last["outcome"] == "succeeded" and last["error"] is None
            assert last["result"]["indexedFiles"] == 2 and last["result"]["warning"]
            assert status["vectors"]["embeddedChunks"] == 0 and status["vectors"]["lastError"]
            found = await conn.call("kb_search", {"request": {"query": "apples", "mode": "lexical"}})
            assert [r["path"] for r in found.structured["results"]] == ["a.md"]
            server.server_activate()  # the provider comes up
            threading.Thread(target=server.serve_forever, daemon=True).start()
            serving.append(True)
            with anyio.fail_after(60):
                while (await conn.call("kb_status", {})).structured["vectors"]["embeddedChunks"] < 2:
                    await anyio.sleep(0.2)
            best = await conn.call("kb_search", {"request": {"query": "apples grow on trees", "mode": "semantic"}})
            assert best.structured["results"][0]["path"] == "a.md"

    try:
        anyio.run(run)
    finally:
        if serving:
            server.shutdown()
        reserved.close()
