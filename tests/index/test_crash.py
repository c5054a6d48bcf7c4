"""Kill a process in the middle of a reindex; the index must stay usable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from kb_fakes import client

CHILD = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[3])
    from kb_fakes import make_workspace
    from local_vector_search_mcp.index.indexer import Indexer
    from pathlib import Path

    original = Indexer.store_prepared
    def slow(self, *a, **k):
        n = original(self, *a, **k)
        print("indexed", flush=True)
        time.sleep(0.05)
        return n
    Indexer.store_prepared = slow
    if sys.argv[4] == "workers":  # parse workers, and so write batches (decision 250)
        from local_vector_search_mcp.index import parallel
        parallel.MIN_PARALLEL_FILES = 0
    make_workspace(Path(sys.argv[1]), storage=Path(sys.argv[2])).indexing.reindex("all")
    print("done", flush=True)
    """
)


@pytest.mark.parametrize("parse", ["in-process", "workers"])
def test_kill_mid_reindex_leaves_a_usable_index(tmp_path: Path, parse: str) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(200):
        (root / f"doc{i:03}.md").write_text(f"# Doc {i}\n\nalpha beta gamma {i}\n\n" + "filler " * 200, "utf-8")
    storage = tmp_path / "index.db"
    client(root, storage=storage).reindex()
    for i in range(200):  # change every file so the next run rewrites them all
        (root / f"doc{i:03}.md").write_text(f"# Doc {i}\n\ndelta epsilon {i}\n", "utf-8")
    helpers = str(Path(__file__).parents[1])  # kb_fakes.py
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), str(storage), helpers, parse],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    seen = 0
    while seen < 20:
        line = proc.stdout.readline()
        assert line, "child ended early"
        seen += line.startswith("indexed")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)

    svc = client(root, storage=storage)
    status = svc.status_fields()
    assert status["compatibility"]["isCompatible"] and status["project"]["documents"] == 200
    # every document is either the old or the new revision, never half of each
    old = {r["path"] for r in svc.search(query="alpha", mode="lexical", top_k=50)["results"]}
    new = {r["path"] for r in svc.search(query="delta", mode="lexical", top_k=50)["results"]}
    assert new and not (old & new)
    start = time.perf_counter()
    result = svc.reindex()
    assert result["indexedFiles"] + result["skippedFiles"] == 200 and result["indexedFiles"] < 200
    assert time.perf_counter() - start < 30
    assert len(svc.search(query="delta", mode="lexical", top_k=50)["results"]) == 50
    assert svc.search(query="alpha", mode="lexical")["results"] == []


# ----------------------------------------------------------------------------- PostgreSQL: two servers
# The reindexing server: the real CLI server, its indexer slowed down so the kill lands mid-pass.
SLOW_SERVER = textwrap.dedent(
    """
    import sys, time
    from local_vector_search_mcp.index.indexer import Indexer
    original = Indexer.store_prepared
    def slow(self, *a, **k):
        n = original(self, *a, **k)
        time.sleep(0.03)
        return n
    Indexer.store_prepared = slow
    from local_vector_search_mcp.cli import run
    run()
    """
)
FILES = 150


def _rpc(proc: subprocess.Popen[bytes], message: dict[str, object]) -> dict[str, object] | None:
    """One JSON-RPC message over the server's stdio (newline-delimited); a request's answer."""
    import json

    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        reply = json.loads(proc.stdout.readline())
        if reply.get("id") == message["id"]:
            return reply  # type: ignore[no-any-return]


def _chunk_rows(url: str, schema: str) -> list[tuple[str, int, str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            f'select d.path, c.ordinal, md5(c.text) from "{schema}".chunks c join "{schema}".documents d'
            " on d.id = c.doc_id order by 1, 2"
        ).fetchall()


def test_killing_a_postgresql_server_mid_reindex_while_another_searches_and_edits(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Issue 14, done-when 2: server A reindexes, server B searches and edits the same knowledge
    base; A is killed (SIGKILL) mid-pass. B keeps working and can take the reindex lock; A
    restarted catches up; the index then holds exactly the chunks a clean index of the final
    files holds (none lost, none twice)."""
    import json

    import anyio
    from conformance.client import connect
    from pg_server import PgServer

    server: PgServer = request.getfixturevalue("pg_server")
    schema = server.fresh_schema()
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(FILES):
        sections = "".join(f"## Part {j}\n\nlemur {i} section {j} " + "filler " * 40 + "\n\n" for j in range(4))
        (ws / f"doc{i:03}.md").write_text(f"# Doc {i}\n\n{sections}", "utf-8")
    config = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}
    config["storage"] = {"backend": "postgresql", "schema": schema}
    config_path = tmp_path / "config.yml"
    config_path.write_text(json.dumps(config), "utf-8")
    env = {"LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL": server.url}
    command = [sys.executable, "-m", "local_vector_search_mcp"]

    async def wait_idle(conn: object) -> dict:  # type: ignore[type-arg]
        with anyio.fail_after(120):
            while True:
                status = (await conn.call("kb_status", {})).structured  # type: ignore[attr-defined]
                if not status["indexing"]["isRunning"]:
                    return status  # type: ignore[no-any-return]
                await anyio.sleep(0.1)

    async def run() -> None:
        async with connect(command, ws, config, extra_env=env) as b:
            await b.call("kb_reindex", {"request": {"scope": "all"}})
            assert (await wait_idle(b))["indexing"]["last"]["outcome"] == "succeeded"
            for i in range(FILES):  # every file changes: the next pass rewrites them all
                path = ws / f"doc{i:03}.md"
                path.write_text(path.read_text("utf-8") + "\nplatypus marker\n", "utf-8")
            a = subprocess.Popen(
                [sys.executable, "-c", SLOW_SERVER, "--config", str(config_path)],
                cwd=ws,
                env={**os.environ, **env, "CLAUDE_PROJECT_DIR": str(ws)},
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            try:
                init = {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                }
                assert "result" in (_rpc(a, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}) or {})
                _rpc(a, {"jsonrpc": "2.0", "method": "notifications/initialized"})
                call = {"name": "kb_reindex", "arguments": {"request": {"scope": "all"}}}
                reply = _rpc(a, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}) or {}
                assert reply["result"]["structuredContent"]["started"] is True, reply  # type: ignore[index]
                rewritten = 0
                with anyio.fail_after(60):
                    while rewritten < FILES // 5:  # B searches and edits while A's pass runs
                        found = await b.call("kb_search", {"request": {"query": "platypus", "mode": "lexical"}})
                        assert not found.is_error
                        rewritten = len(_marker_rows(server.url, schema))
                    created = await b.call(
                        "kb_create", {"request": {"path": "during.md", "markdown": "# During\n\nA wombat note.\n"}}
                    )
                    assert not created.is_error
                assert rewritten < FILES, "the pass ended before the kill: slow the server down"
                os.kill(a.pid, signal.SIGKILL)  # mid-pass
                a.wait(30)
            finally:
                a.kill()
                a.wait(30)
            # the index A left is usable: B searches and edits on
            found = await b.call("kb_search", {"request": {"query": "lemur", "mode": "lexical"}})
            assert not found.is_error and found.structured["results"]
            assert not (
                await b.call("kb_create", {"request": {"path": "after.md", "markdown": "# After\n\nA quokka note.\n"}})
            ).is_error
            await wait_idle(b)
            # A restarted takes the reindex lock its dead predecessor held and finishes the work
            async with connect(command, ws, config, extra_env=env) as a2:
                await a2.call("kb_reindex", {})
                status = await wait_idle(a2)
                assert status["indexing"]["last"]["outcome"] == "succeeded", status["indexing"]
                assert status["indexing"]["last"]["result"]["indexedFiles"] > 0  # the files the kill left behind
                for conn in (a2, b):
                    assert (await conn.call("kb_status", {})).structured["project"]["documents"] == FILES + 2
                    for query, path in (("wombat", "during.md"), ("quokka", "after.md")):
                        found = await conn.call("kb_search", {"request": {"query": query, "mode": "lexical"}})
                        assert [r["path"] for r in found.structured["results"]] == [path]

    anyio.run(run)
    # no chunk lost or duplicated: exactly the rows a clean index of the final files holds
    from kb_fakes import make_workspace

    reference_schema = server.fresh_schema()
    reference = make_workspace(
        ws, storage__backend="postgresql", storage__url=server.url, storage__schema=reference_schema
    )
    reference.indexing.reindex("all", False)
    reference.close()
    rows = _chunk_rows(server.url, schema)
    assert rows == _chunk_rows(server.url, reference_schema)
    assert len(rows) == len(set(rows)) and len({(p, o) for p, o, _ in rows}) == len(rows)


def _marker_rows(url: str, schema: str) -> list[tuple[str]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            f'select distinct d.path from "{schema}".chunks c join "{schema}".documents d on d.id = c.doc_id'
            " where c.text like '%platypus%'"
        ).fetchall()
