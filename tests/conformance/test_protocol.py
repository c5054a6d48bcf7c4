"""Protocol-level promises: the tool list matches the generated schemas, errors have one shape."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest

from .client import connect, server_command, start_http_server, stop_http_server, transport

pytestmark = pytest.mark.conformance

HTTP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
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


def test_the_server_announces_the_configured_name(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Contract 10.2: `server.name` (default `local-vector-search-mcp`) is the name the server
    gives in its initialize answer, the one clients show. (A project extension: the SERVER under
    test may not read our configuration file, so only our own server is held to it.)"""
    names: list[str] = []

    async def run() -> None:
        for config in (None, {"server": {"name": "team-notes"}, "embedding": {"provider": "none"}}):
            async with connect(_command(request), tmp_path, config) as conn:
                info = conn.session.server_info
                assert info is not None
                names.append(info.name)

    anyio.run(run)
    if request.config.getoption("--server"):
        return
    assert names == ["local-vector-search-mcp", "team-notes"]


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


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


class RawClient:
    """One initialized session spoken in raw JSON-RPC over the transport under test: each
    :meth:`send` returns the replies the message got (stdio: the lines up to the answer of a
    ``ping`` sent after it; HTTP: the POST's status and body)."""

    def __init__(self, command: list[str], workspace: Path, errlog: IO[str]) -> None:
        env = {"CLAUDE_PROJECT_DIR": str(workspace), "OMP_NUM_THREADS": "1", "PATH": os.environ.get("PATH", "")}
        self.http = transport() == "http"
        self.next_id = 1000
        if self.http:
            self.proc, self.url = start_http_server(command, workspace, env, errlog)
            self.client = httpx.Client(timeout=60)
            opened = self.client.post(self.url, json=INITIALIZE, headers=HTTP_HEADERS)
            self.headers = {
                **HTTP_HEADERS,
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
        else:
            self.proc = subprocess.Popen(
                command, cwd=workspace, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog
            )
            assert self._exchange(json.dumps(INITIALIZE).encode(), 1)[-1]["result"]
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def _exchange(self, line: bytes, answer_id: int) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        replies = []
        while True:
            raw = self.proc.stdout.readline()
            assert raw, "the server closed stdout"
            replies.append(json.loads(raw))  # stdout carries JSON-RPC only
            if replies[-1].get("id") == answer_id:
                return replies

    def send(self, line: bytes) -> tuple[int, list[dict[str, Any]]]:
        """(HTTP status or 0 on stdio, the replies to ``line``)."""
        if self.http:
            response = self.client.post(self.url, content=line, headers=self.headers)
            return response.status_code, [response.json()] if response.content else []
        self.next_id += 1
        ping = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": "ping"}).encode()
        self.proc.stdin.write(line + b"\n")  # type: ignore[union-attr]
        return 0, self._exchange(ping, self.next_id)[:-1]

    def close(self) -> None:
        if self.http:
            self.client.close()
            stop_http_server(self.proc)
        else:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(30)


@pytest.fixture
def raw(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[RawClient]:
    workspace = tmp_path / "kb"
    workspace.mkdir()
    (workspace / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    with open(tmp_path / "server.log", "w") as errlog:
        client = RawClient(_command(request), workspace, errlog)
        try:
            yield client
        finally:
            client.close()


@pytest.mark.parametrize("request_id", ["null", "1.5", "7.0", "true", "{}", "[1]", "1e400"])
def test_a_request_with_an_unusable_id_is_an_invalid_request(raw: RawClient, request_id: str) -> None:
    """MCP requests carry a string or integer id (never null). The SDK read such a request as a
    notification, dropped it, and the client waited forever: over HTTP after a 202 (decision 475)."""
    for method in ("ping", "tools/list", "tools/call"):
        status, replies = raw.send(f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "{method}"}}'.encode())
        assert status in (0, 400), (status, replies)
        assert len(replies) == 1, replies
        assert replies[0]["id"] is None and replies[0]["error"]["code"] == -32600, replies
        assert "needs an id that is a string or an integer" in replies[0]["error"]["message"]
    # A notification is still taken without an answer, and the session carries on.
    assert raw.send(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}')[1] == []
    status, replies = raw.send(b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}')
    assert replies and '"kb_search"' in json.dumps(replies[-1])


@pytest.mark.parametrize("request_id", ["{}", "[1]", "null", "1.5", '"never-sent"', "424242"])
def test_a_cancellation_of_any_id_leaves_the_session_serving(raw: RawClient, request_id: str) -> None:
    """`notifications/cancelled` names a request the client sent; one naming an object or an
    array while a call was in flight took the stdio server down (unhashable in the end-of-input
    bookkeeping, exit 1); one naming anything else unknown is ignored (decision 479)."""
    call = b'{"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": {"name": "kb_status", "arguments": {}}}'
    for params in (f'{{"requestId": {request_id}}}', "{}", "[]"):
        cancel = f'{{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {params}}}'.encode()
        if raw.http:
            raw.send(call)
            status, replies = raw.send(cancel)
            assert status in (202, 400), (params, status, replies)
        else:  # one write: the cancellation is read while the call still runs
            status, replies = raw.send(call + b"\n" + cancel)
        assert all("error" in r or r.get("id") == 50 for r in replies), (params, replies)
    status, replies = raw.send(b'{"jsonrpc": "2.0", "id": 6, "method": "tools/list"}')
    assert replies and '"kb_search"' in json.dumps(replies[-1])


def test_a_message_nested_without_end_is_refused_and_the_session_serves(raw: RawClient) -> None:
    """JSON nested 100,000 levels deep is well formed but no parser should follow it: the stdio
    server died of its own recursion limit (exit 1) instead of answering (decision 750)."""
    deep = b"[" * 100_000 + b"]" * 100_000
    call = b'{"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": {"name": "kb_search", "arguments": '
    status, replies = raw.send(call + b'{"request": ' + deep + b"}}}")
    assert status in (0, 400), (status, replies)
    assert len(replies) == 1 and replies[0]["error"]["code"] in (-32600, -32700), replies
    status, replies = raw.send(b'{"jsonrpc": "2.0", "id": 61, "method": "tools/list"}')
    assert replies and '"kb_search"' in json.dumps(replies[-1])


@pytest.mark.parametrize(
    ("params", "field"),
    [('"arguments": "x", "name": "kb_status"', "arguments"), ('"name": 5', "name"), (None, "params")],
)
def test_params_that_do_not_fit_the_method_are_named(raw: RawClient, params: str | None, field: str) -> None:
    """`tools/call` with arguments that are a string, a name that is a number or no params at all
    was answered -32602 "Invalid request parameters" with empty data: nothing to go on. The code
    stays; the message names the field (decision 757)."""
    body = '{"jsonrpc": "2.0", "id": 70, "method": "tools/call"' + (f', "params": {{{params}}}' if params else "") + "}"
    status, replies = raw.send(body.encode())
    assert status in (0, 200), (status, replies)
    error = replies[-1]["error"]
    assert error["code"] == -32602 and f"{field}: " in error["message"], error
    assert "'tools/call'" in error["message"], error


def test_a_request_before_initialize_is_told_so(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Before `initialize` only `ping` is served. The SDK refused anything else with -32602
    "Invalid request parameters", sending the client's author to look at the params; the code
    stays, the message names the cause (decision 509). Over HTTP no session exists before
    `initialize`, and the transport says so itself."""
    if transport() == "http":
        pytest.skip("stdio only: over HTTP a request without a session is refused by the transport")
    workspace = tmp_path / "kb"
    workspace.mkdir()
    env = {"CLAUDE_PROJECT_DIR": str(workspace), "OMP_NUM_THREADS": "1", "PATH": os.environ.get("PATH", "")}
    tool_call = {"name": "kb_status", "arguments": {}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": tool_call},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {**INITIALIZE, "id": 4},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "kb_status", "arguments": [1]}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
    ]
    with open(tmp_path / "server.log", "w") as errlog:
        done = subprocess.run(
            _command(request),
            cwd=workspace,
            env=env,
            input="".join(json.dumps(line) + "\n" for line in lines).encode(),
            stdout=subprocess.PIPE,
            stderr=errlog,
            timeout=120,
            check=True,
        )
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    for early, method in ((1, "tools/list"), (2, "tools/call")):
        error = replies[early]["error"]
        assert error["code"] == -32602
        assert f"Request '{method}' arrived before initialization: send 'initialize' first" in error["message"]
    assert replies[3]["result"] == {} and "result" in replies[4] and "result" in replies[6]
    assert replies[5]["error"] == {  # params that do not fit, named (decision 757)
        "code": -32602,
        "message": "Invalid params for 'tools/call': params.arguments: Input should be a valid dictionary.",
    }


def test_nan_infinity_and_booleans_for_numbers_are_refused_in_chunk_tools(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """JSON has no NaN or Infinity, but the SDK's parser reads them: `metadata: {"x": Infinity}`
    was stored as null, and a metadata filter on NaN matched every chunk without the field
    (decision 731); an embedding `[true, false]` was stored as (1, 0) (decision 730). Sent as raw
    JSON-RPC: the SDK's client would write such floats as null."""
    workspace = tmp_path / "kb"
    workspace.mkdir()
    (workspace / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    config = tmp_path / "config.yml"
    config.write_text("embedding: {provider: none}\nserver: {toolsets: [kb, chunks]}\n", encoding="utf-8")

    def call(client: RawClient, ident: int, name: str, arguments: str) -> dict[str, Any]:
        params = f'{{"name": "{name}", "arguments": {arguments}}}'
        line = f'{{"jsonrpc": "2.0", "id": {ident}, "method": "tools/call", "params": {params}}}'
        # stdio: read up to this call's own answer (a ping sent after it may be answered first)
        sent = client.send(line.encode())[1] if client.http else client._exchange(line.encode(), ident)
        replies = [r for r in sent if r.get("id") == ident]
        assert len(replies) == 1, replies
        result: dict[str, Any] = replies[0]["result"]
        return result

    def error(result: dict[str, Any]) -> dict[str, Any]:
        assert result.get("isError") is True, result
        payload: dict[str, Any] = json.loads(result["content"][0]["text"])
        return payload

    with open(tmp_path / "server.log", "w") as errlog:
        client = RawClient([*_command(request), "--config", str(config)], workspace, errlog)
        try:
            upsert = '{"id": "e", "sourcePath": "s", "chunkIndex": 0, "content": "c", "embedding": [1, 0]%s}'
            for ident, extra, where in [
                (10, ', "metadata": {"x": Infinity}', "metadata.x"),
                (11, ', "metadata": {"y": [NaN]}', "metadata.y.0"),
            ]:
                refused = error(call(client, ident, "upsert_vector", upsert % extra))
                assert refused["code"] == "INVALID_ARGUMENT" and f"{where}: not a finite number" in refused["message"]
            assert error(call(client, 12, "get_chunk", '{"id": "e"}'))["code"] == "NOT_FOUND"  # nothing stored
            refused = error(call(client, 13, "upsert_vector", upsert.replace("[1, 0]", "[true, false]") % ""))
            assert (
                refused["code"] == "INVALID_ARGUMENT"
                and "embedding.0: Input should be a valid number" in refused["message"]
            )
            assert call(client, 14, "upsert_vector", upsert % ', "metadata": {"x": 1e308}')["structuredContent"][
                "created"
            ]
            refused = error(
                call(client, 15, "search_vectors", '{"embedding": [1, 0], "filter": {"metadata": {"k": NaN}}}')
            )
            assert (
                refused["code"] == "INVALID_ARGUMENT" and "filter.metadata.k: not a finite number" in refused["message"]
            )
            found = call(client, 16, "search_vectors", '{"embedding": [1, 0], "filter": {"metadata": {"k": null}}}')
            assert [hit["id"] for hit in found["structuredContent"]["results"]] == ["e"]
        finally:
            client.close()
