"""Promises of the upstream contract that a scenario file cannot state: the published tool surface
(names, argument envelopes, enum order) and kb_reindex's single flight under load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from pg_server import PgServer

from .client import connect, server_command
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
    assert set(table["properties"]) == EDIT_TABLE_FIELDS
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
    if engine == "postgresql":
        server: PgServer = request.getfixturevalue("pg_server")
        storage = {"backend": "postgresql", "schema": server.fresh_schema()}
        env = {"LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL": server.url}
        anyio.run(run_scenario, command, scenario, tmp_path, storage, env)
    else:
        anyio.run(run_scenario, command, scenario, tmp_path)
