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
