"""The stdio server keeps serving whatever arrives on its input.

Raw JSON-RPC lines are written to a real server process: garbage (not JSON,
not UTF-8, JSON that is not a request), unknown methods, a 50 MB line, calls
cancelled while they run. After each, the server must still answer
``tools/list`` and ``tools/call``, and it never writes anything but JSON-RPC
to stdout.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TIMEOUT = 60.0


class RawServer:
    def __init__(self, root: Path, *options: str) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "local_vector_search_mcp",
                "--root",
                str(root),
                "--embedding-provider",
                "none",
                *options,
            ],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()
        self.next_id = 100

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw if raw.endswith(b"\n") else raw + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params or {}}).encode())

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        self.next_id += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}).encode())
        return self.next_id

    def response(self, request_id: int) -> dict[str, Any]:
        """The response to ``request_id``; every line read on the way must be JSON-RPC."""
        while True:
            try:
                line = self.lines.get(timeout=TIMEOUT)
            except queue.Empty:
                tail = b"".join(self.stderr)[-2000:]
                raise AssertionError(f"no response to {request_id}; stderr: {tail!r}") from None
            assert line, f"server exited; stderr: {b''.join(self.stderr)[-2000:]!r}"
            message = json.loads(line)  # stdout carries JSON-RPC only
            assert message.get("jsonrpc") == "2.0", message
            if message.get("id") == request_id:
                return dict(message)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.response(self.request("tools/call", {"name": name, "arguments": arguments}))

    def structured(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A call that must succeed: its structured content."""
        result = self.call(name, arguments)["result"]
        assert not result.get("isError"), result
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    def still_serving(self) -> None:
        tools = self.response(self.request("tools/list"))["result"]["tools"]
        assert any(tool["name"] == "kb_status" for tool in tools)
        status = self.call("kb_status", {})["result"]
        assert not status.get("isError"), status
        assert self.proc.poll() is None

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    (tmp_path / "a.md").write_text("# A\n\nalpha beta\n", "utf-8")
    s = RawServer(tmp_path)
    init = s.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "0"}},
    )
    assert "result" in s.response(init)
    s.notify("notifications/initialized")
    yield s
    s.close()


GARBAGE = [
    b"this is not json",
    b"{",
    b"[]",
    b"[1, 2, 3]",
    b"null",
    b'"a string"',
    b"\xff\xfe\x00 not utf-8 \xc3\x28",
    b'{"jsonrpc": "2.0"}',
    b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": {"nested": true}, "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": 5, "method": 42}',
    b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": "not an object"}',
    b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": 12, "arguments": []}}',
    b'{"jsonrpc": "2.0", "method": "notifications/unknown", "params": {}}',
    b"\x00" * 100,
    b"   ",
]


def test_garbage_lines_leave_the_server_serving(server: RawServer) -> None:
    for line in GARBAGE:
        server.send(line)
        server.still_serving()


def _next_line(server: RawServer) -> dict[str, Any]:
    try:
        line = server.lines.get(timeout=10)
    except queue.Empty:
        raise AssertionError("no reply to the malformed line") from None
    assert line, f"server exited; stderr: {b''.join(server.stderr)[-2000:]!r}"
    message: dict[str, Any] = json.loads(line)
    return message


@pytest.mark.parametrize(
    ("line", "code", "reply_id"),
    [
        (b"this is not json", -32700, None),
        (b"{", -32700, None),
        (b'{"jsonrpc": "2.0"}', -32600, None),
        (b"[1, 2, 3]", -32600, None),
        (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": "not an object"}', -32600, 6),
        (b'{"jsonrpc": "2.0", "id": "s7", "method": 42}', -32600, "s7"),
        # valid JSON that pydantic's parser refuses: a lone surrogate in a string
        (
            b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "kb_search", '
            b'"arguments": {"request": {"query": "\\ud800"}}}}',
            -32600,
            8,
        ),
    ],
)
def test_a_malformed_line_gets_a_json_rpc_error(server: RawServer, line: bytes, code: int, reply_id: Any) -> None:
    """JSON-RPC 2.0: a line that is not JSON is answered with a Parse error (-32700), JSON that is
    not a valid message with Invalid Request (-32600), with the request's id when it has a usable
    one, else null (decision 289). Before, the SDK dropped such lines and the client waited."""
    server.send(line)
    reply = _next_line(server)
    assert reply["jsonrpc"] == "2.0" and reply["id"] == reply_id, reply
    assert reply["error"]["code"] == code, reply
    server.still_serving()


def test_a_too_deeply_nested_message_is_named_as_such(server: RawServer) -> None:
    """Valid JSON deeper than pydantic's parser takes (200 levels) was answered "holds text that
    is not valid Unicode" (decision 366)."""
    deep = b'{"k": ' * 250 + b"1" + b"}" * 250
    server.send(
        b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "upsert_vector", '
        b'"arguments": {"metadata": ' + deep + b"}}}"
    )
    reply = _next_line(server)
    assert reply["id"] == 9 and reply["error"]["code"] == -32600, reply
    assert "deeper than the JSON parser's limit" in reply["error"]["message"], reply
    server.still_serving()


def test_a_message_deeper_than_python_s_own_parser_leaves_the_server_serving(server: RawServer) -> None:
    """Past pydantic's limit the drain re-reads the line with Python's parser to find its id; at
    thousands of levels that raised RecursionError, which ended the server (exit 1, a traceback
    on stderr) with every reply still owed (decision 750)."""
    for depth in (1_100, 100_000):
        server.send(
            b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "kb_search", '
            b'"arguments": {"request": ' + b"[" * depth + b"]" * depth + b"}}}"
        )
        reply = _next_line(server)
        assert reply["id"] is None and reply["error"]["code"] == -32600, reply
        assert "deeper than the JSON parser's limit" in reply["error"]["message"], reply
    server.still_serving()


def test_unknown_methods_get_an_error_and_the_server_keeps_serving(server: RawServer) -> None:
    for method in ("nope", "tools/nope", "resources/read", "prompts/get", ""):
        reply = server.response(server.request(method, {"x": 1}))
        assert "error" in reply and reply["error"]["code"] < 0, reply
    assert server.call("kb_nope", {})["result"]["isError"]
    server.still_serving()


def test_a_50_mb_line_is_answered_or_refused_and_the_server_keeps_serving(server: RawServer) -> None:
    server.next_id += 1
    request_id = server.next_id
    query = "x" * (50 * 1024 * 1024)
    server.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "kb_search", "arguments": {"request": {"query": query}}},
            }
        ).encode()
    )
    del query
    reply = server.response(request_id)
    assert reply["result"]["isError"]
    assert json.loads(reply["result"]["content"][0]["text"])["code"] == "INVALID_ARGUMENT"
    server.still_serving()


def test_cancelled_requests_leave_the_server_serving(server: RawServer) -> None:
    ids = []
    for _ in range(5):
        request_id = server.request("tools/call", {"name": "kb_reindex", "arguments": {"request": {"scope": "all"}}})
        server.notify("notifications/cancelled", {"requestId": request_id, "reason": "changed my mind"})
        ids.append(request_id)
    search = server.request("tools/call", {"name": "kb_read", "arguments": {"request": {"path": "a.md"}}})
    server.notify("notifications/cancelled", {"requestId": search})
    server.notify("notifications/cancelled", {"requestId": 99999})  # never sent
    server.notify("notifications/cancelled", {"requestId": "garbage"})
    server.still_serving()
