"""Protocol-level promises: the tool list matches the generated schemas, errors have one shape."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from .client import connect, server_command

pytestmark = pytest.mark.conformance

SCHEMAS = Path(__file__).resolve().parents[2] / "generated" / "lvsm_contract" / "schemas"


def _command(request: pytest.FixtureRequest) -> list[str]:
    return server_command(request.config.getoption("--server"))


def test_tools_list_matches_generated_schemas(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def run() -> None:
        async with connect(_command(request), tmp_path) as conn:
            tools = await conn.list_tools()
        names = [t.name for t in tools]
        assert len(names) == len(set(names))
        assert {"kb_status", "kb_list_files"} <= set(names)
        for tool in tools:
            expected_in = json.loads((SCHEMAS / f"{tool.name}.input.json").read_text(encoding="utf-8"))
            assert tool.input_schema == expected_in, tool.name
            out_file = SCHEMAS / f"{tool.name}.output.json"
            if out_file.exists():
                assert tool.output_schema == json.loads(out_file.read_text(encoding="utf-8")), tool.name
            else:
                assert tool.output_schema is None, tool.name
            assert tool.description and tool.annotations is not None
            # The Claude and OpenAI APIs refuse these at the root, and Claude Code then drops the tool.
            assert not {"oneOf", "anyOf", "allOf", "not", "if"} & set(tool.input_schema), tool.name
            assert tool.input_schema.get("type") == "object", tool.name

    anyio.run(run)


def test_image_and_download_tools_are_listed_as_specified(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def run() -> None:
        async with connect(_command(request), tmp_path) as conn:
            tools = {t.name: t for t in await conn.list_tools()}
        for name in ("kb_save_image", "kb_list_images", "kb_load_image", "kb_delete_image", "kb_move_image"):
            assert name in tools, name
        assert "kb_download_file" in tools
        save = tools["kb_save_image"]
        assert (save.meta or {}).get("openai/fileParams") == ["file"]
        assert {"file", "data"} <= set(save.input_schema["properties"])
        assert "required" not in save.input_schema  # exactly one of file / data: checked by the server
        assert save.annotations.open_world_hint is True
        assert tools["kb_load_image"].output_schema is None and tools["kb_download_file"].output_schema is None
        assert tools["kb_delete_image"].annotations.destructive_hint is True

    anyio.run(run)


def test_unknown_arguments_give_the_error_envelope(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def run() -> None:
        async with connect(_command(request), tmp_path) as conn:
            result = await conn.call("kb_status", {"unexpected": 1})
            assert result.error["code"] == "INVALID_ARGUMENT"
            result = await conn.call("kb_list_files", {"request": {"includeGlob": 5}})
            assert result.error["code"] == "INVALID_ARGUMENT"
            result = await conn.call("kb_list_files", {"request": "not an object"})
            assert result.error["code"] == "INVALID_ARGUMENT"

    anyio.run(run)


def test_success_has_structured_content_and_the_same_json_text(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def run() -> None:
        async with connect(_command(request), tmp_path) as conn:
            result = await conn.call("kb_status", {})
            assert not result.is_error
            assert len(result.texts) == 1
            assert json.loads(result.texts[0]) == result.structured
            assert result.structured["indexMode"] in ("lexical", "vector-enabled")

    anyio.run(run)


CHUNK_TOOLS = [
    "index_note",
    "upsert_vector",
    "search_vectors",
    "search_knowledge",
    "get_chunk",
    "list_chunks",
    "update_chunk",
    "delete_chunk",
]


def test_chunk_tools_are_listed_only_when_enabled(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def run() -> None:
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        async with connect(_command(request), tmp_path / "a") as conn:
            default = [t.name for t in await conn.list_tools()]
        config = {"server": {"toolsets": ["kb", "chunks"]}}
        async with connect(_command(request), tmp_path / "b", config) as conn:
            enabled = {t.name: t for t in await conn.list_tools()}
        assert not set(CHUNK_TOOLS) & set(default)
        assert set(default) < set(enabled)
        assert [n for n in enabled if n in CHUNK_TOOLS] == CHUNK_TOOLS
        for name in CHUNK_TOOLS:  # flat, camelCase arguments as NoteHarbor names them
            schema = enabled[name].input_schema
            assert "request" not in schema.get("properties", {}), name
        assert {"sourcePath", "chunkIndex", "content", "embedding", "metadata", "collection", "id"} == set(
            enabled["upsert_vector"].input_schema["properties"]
        )
        assert enabled["delete_chunk"].annotations.destructive_hint is True

    anyio.run(run)
