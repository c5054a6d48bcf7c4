"""Promises of the upstream contract that a scenario file cannot state: the published tool surface
(names, argument envelopes, enum order) and kb_reindex's single flight under load."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from .client import connect, engine_storage, server_command, transport
from .runner import run_scenario

pytestmark = pytest.mark.conformance

# Contract 1 and 2: these tools take one `request` object, the others flat arguments (kb_status none).
REQUEST_ENVELOPE = {
    "kb_reindex",
    "kb_search",
    "kb_read",
    "kb_patch",
    "kb_create",
    "kb_move",
    "kb_delete",
    "kb_list_files",
    "kb_outline",
    "kb_move_image",
    "kb_create_pdf_book",
    "kb_links",
}
FLAT = {
    "kb_edit_table": {"path", "pointer", "action"},
    "kb_save_image": {"file", "fileName", "altText", "targetPath"},
    "kb_list_images": {"cursor", "pageSize"},
    "kb_load_image": {"path"},
    "kb_delete_image": {"path"},
}
PATCH_KINDS = [
    "replace",
    "replace_element",
    "replace_subtree",
    "replace_section",
    "delete_section",
    "insert_before",
    "insert_after",
    "delete",
]
EDIT_TABLE_FIELDS = {
    "path",
    "pointer",
    "action",
    "updates",
    "rowIndex",
    "where",
    "column",
    "columnIndex",
    "values",
    "valuesByColumn",
    "beforeRowIndex",
    "beforeColumn",
    "beforeColumnIndex",
    "name",
    "newName",
    "defaultValue",
    "alignment",
}
EDIT_TABLE_EXTENSIONS = {"valueFormat"}  # ours: insert_row's cells as Markdown (decision 1027)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow local ``#/$defs/...`` references (the schemas keep their definitions at the root)."""
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def test_the_tool_list_keeps_the_reference_names_and_envelopes(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A client written against the reference calls the 19 tools by these names with these argument
    shapes; a renamed field or a changed envelope fails every such call (contract 1, 2, 2.5, 2.6)."""

    async def run() -> dict[str, Any]:
        async with connect(server_command(request.config.getoption("--server")), tmp_path) as conn:
            return {t.name: t for t in await conn.list_tools()}

    tools = anyio.run(run)
    assert set(tools) == REQUEST_ENVELOPE | set(FLAT) | {"kb_status", "kb_download_file"}

    status = tools["kb_status"].input_schema
    assert status["type"] == "object" and not status.get("properties") and not status.get("required")
    assert status["additionalProperties"] is False

    for name in REQUEST_ENVELOPE:
        schema = tools[name].input_schema
        assert set(schema["properties"]) == {"request"}, name
        assert schema["additionalProperties"] is False, name
    for name, fields in FLAT.items():
        assert fields <= set(tools[name].input_schema["properties"]), name
        assert "request" not in tools[name].input_schema["properties"], name

    patch = tools["kb_patch"].input_schema
    body = _resolve(patch, patch["properties"]["request"])
    assert set(body["required"]) == {"path", "operations"}
    assert "expectedSourceHash" not in body["properties"]  # the reference's test asserts its absence
    assert body["properties"]["operations"]["type"] == "array"
    operation = _resolve(patch, body["properties"]["operations"]["items"])
    assert _resolve(patch, operation["properties"]["kind"])["enum"] == PATCH_KINDS

    table = tools["kb_edit_table"].input_schema
    assert set(table["properties"]) == EDIT_TABLE_FIELDS | EDIT_TABLE_EXTENSIONS
    assert set(table["required"]) == {"path", "pointer", "action"}

    search = tools["kb_search"].input_schema
    search_body = _resolve(search, search["properties"]["request"])
    assert {"query", "mode", "topK", "includeGlobs", "excludeGlobs"} <= set(search_body["properties"])
    assert not {"limit", "pathPrefix", "path"} & set(search_body["properties"])

    read = tools["kb_read"].input_schema
    read_body = _resolve(read, read["properties"]["request"])
    assert {"path", "pointer", "maxElements", "maxBytes"} <= set(read_body["properties"])
    move = tools["kb_move"].input_schema
    assert {"sourcePath", "targetPath", "expectedSourceHash"} <= set(
        _resolve(move, move["properties"]["request"])["required"]
    )
    move_image = tools["kb_move_image"].input_schema
    assert {"sourcePath", "targetPath", "expectedSha256"} <= set(
        _resolve(move_image, move_image["properties"]["request"])["properties"]
    )

    # Structured tools publish an output schema; kb_load_image answers with content blocks only.
    assert tools["kb_load_image"].output_schema is None
    for name in REQUEST_ENVELOPE | {"kb_status", "kb_edit_table", "kb_save_image", "kb_list_images"}:
        assert tools[name].output_schema is not None, name


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_a_reindex_asked_for_while_one_runs_is_not_started(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """Contract 2.2: single flight, no queueing, no parameter change. The second call answers
    `started: false` with the running operation unchanged (its scope, force and start time), and
    the run that finishes is the first one."""
    filler = "Some words to index and count, again and again. " * 40
    files = {f"d{i // 100}/n{i}.md": f"# Note {i}\n\n{filler}\n" for i in range(1500)}
    scenario: dict[str, Any] = {
        "config": {"embedding": {"provider": "none"}},
        "files": files,
        "steps": [
            {
                "call": "kb_reindex",
                "arguments": {"request": {"scope": "all"}},
                "expect": {"structured": {"started": True}, "save": {"started": "current.startedAtUtc"}},
            },
            {
                "call": "kb_reindex",
                "arguments": {"request": {"scope": "changed", "force": True}},
                "expect": {
                    "structured": {
                        "started": False,
                        "current": {"scope": "all", "force": False, "startedAtUtc": "${started}"},
                    }
                },
            },
            {
                "call": "kb_status",
                "arguments": {},
                "until": 300,
                "expect": {
                    "structured": {
                        "indexing": {
                            "isRunning": False,
                            "last": {
                                "scope": "all",
                                "force": False,
                                "startedAtUtc": "${started}",
                                "outcome": "succeeded",
                                "result": {"indexedFiles": 1500},
                            },
                        },
                        "project": {"documents": 1500},
                    }
                },
            },
        ],
    }
    command = server_command(request.config.getoption("--server"))
    storage, env = engine_storage(engine, request)
    anyio.run(run_scenario, command, scenario, tmp_path, storage, env)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_an_index_built_with_other_settings_is_refused_until_a_forced_rebuild(
    tmp_path: Path, request: pytest.FixtureRequest, engine: str
) -> None:
    """Contract 8.2: a changed chunking setting makes the index incompatible. kb_status names each
    difference as `<key>: indexed '<old>', current '<new>'`; search refuses with INDEX_NOT_READY
    and says how to rebuild; kb_reindex without force fails (in kb_status) and deletes nothing;
    with force it rebuilds and search works again."""
    command = server_command(request.config.getoption("--server"))
    base: dict[str, Any] = {"embedding": {"provider": "none"}}
    storage, env = engine_storage(engine, request)
    if storage is not None:
        base["storage"] = storage
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"n{i}.md").write_text(f"# N{i}\n\nA wombat note number {i}.\n", encoding="utf-8")
    filler = "Words that keep the forced rebuild busy for a moment. " * 20
    for i in range(600):  # enough work to watch the destructive rebuild run
        (ws / f"f{i // 100}" / f"f{i}.md").parent.mkdir(exist_ok=True)
        (ws / f"f{i // 100}" / f"f{i}.md").write_text(f"# F{i}\n\n{filler}{i}\n", encoding="utf-8")
    changed = {**base, "chunking": {"maxChunkBytes": 1000}}

    async def idle(conn: Any) -> dict[str, Any]:
        with anyio.fail_after(120):
            while True:
                status: dict[str, Any] = (await conn.call("kb_status", {})).structured
                if not status["indexing"]["isRunning"]:
                    return status
                await anyio.sleep(0.2)

    async def run() -> None:
        async with connect(command, ws, base, extra_env=env) as conn:
            await conn.call("kb_reindex", {})
            assert (await idle(conn))["project"]["documents"] == 603
        async with connect(command, ws, changed, extra_env=env) as conn:
            status = (await conn.call("kb_status", {})).structured
            assert status["compatibility"] == {
                "isCompatible": False,
                "problems": ["chunking_max_chunk_bytes: indexed '4096', current '1000'"],
            }
            refused = await conn.call("kb_search", {"request": {"query": "wombat", "mode": "lexical"}})
            assert refused.error["code"] == "INDEX_NOT_READY"
            assert "force" in refused.error["message"] and "chunking_max_chunk_bytes" in refused.error["message"]

            assert (await conn.call("kb_reindex", {})).structured["started"] is True
            status = await idle(conn)
            assert status["indexing"]["last"]["outcome"] == "failed"
            assert "force" in status["indexing"]["last"]["error"]
            assert status["project"]["documents"] == 603  # nothing deleted without force

            started = (await conn.call("kb_reindex", {"request": {"force": True}})).structured
            assert started["started"] is True and started["current"]["force"] is True
            # While the forced rebuild runs, search refuses with the reference's words (contract 2.3).
            refusals = []
            with anyio.fail_after(120):
                while (status := (await conn.call("kb_status", {})).structured)["indexing"]["isRunning"]:
                    if status["indexing"]["current"]["isDestructiveRebuild"]:
                        during = await conn.call("kb_search", {"request": {"query": "wombat", "mode": "lexical"}})
                        if during.is_error:
                            refusals.append(during.error)
                            break
                    await anyio.sleep(0.02)
            assert refusals, "the forced rebuild was never seen refusing a search"
            assert refusals[0]["code"] == "INDEX_NOT_READY"
            assert "rebuild in progress" in refusals[0]["message"] and "check kb_status" in refusals[0]["message"]
            status = await idle(conn)
            assert status["indexing"]["last"]["outcome"] == "succeeded"
            assert status["compatibility"] == {"isCompatible": True, "problems": []}
            found = (await conn.call("kb_search", {"request": {"query": "wombat", "mode": "lexical"}})).structured
            assert len(found["results"]) == 3

    anyio.run(run)


@pytest.mark.skipif(transport() != "stdio", reason="the stdio lifecycle")
def test_stdio_is_silent_until_asked_and_a_closed_stdin_ends_the_server_with_0(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Contract 1: stdout carries protocol traffic only, nothing before the first request; the
    process exits with code 0 when stdin is closed, before or after a session."""
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    command = server_command(request.config.getoption("--server"))
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path), "PATH": os.environ.get("PATH", "")}

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            command, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )

    idle = start()
    time.sleep(3)  # long enough to start up and print, if it were going to
    assert idle.stdin is not None and idle.stdout is not None
    idle.stdin.close()
    assert idle.wait(60) == 0
    assert idle.stdout.read() == b""

    served = start()
    assert served.stdin is not None and served.stdout is not None
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    served.stdin.write(json.dumps(hello).encode() + b"\n")
    served.stdin.flush()
    answer = json.loads(served.stdout.readline())
    assert answer["id"] == 1 and "result" in answer
    served.stdin.close()
    assert served.wait(60) == 0
    assert all(json.loads(line) for line in served.stdout.read().splitlines())  # JSON-RPC only
