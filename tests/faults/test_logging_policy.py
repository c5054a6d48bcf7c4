"""Logging policy: at debug level nothing logs document text, vectors, API keys, bearer tokens or signed URLs.

Every logger (ours, the MCP SDK's, httpx/httpcore's) is captured at DEBUG
while a knowledge base holding canary strings is indexed, embedded through a
real loopback provider (which also fails once, echoing the request in its
error body), searched, read, edited with bad and good requests. The formatted
records, tracebacks included, must not contain any canary.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.workspace import Workspace

DOCUMENT_CANARY = "PLUGHXYZZY"  # a word of the documents, never a log line
API_KEY = "sk-CANARYKEY0123456789"
VECTOR_CANARY = "0.123456789"
SIGNED = "X-Amz-Signature=CANARYSIG42"


class _Provider(BaseHTTPRequestHandler):
    calls = 0

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls += 1
        if type(self).calls == 2:  # one failure, its body echoing the request (texts included)
            self._send(500, body)
            return
        texts = json.loads(body)["input"]
        data = [{"index": i, "embedding": [0.123456789, 0.5, 0.25, 1.0]} for i in range(len(texts))]
        self._send(200, json.dumps({"data": data}).encode())

    def _send(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def debug_logs() -> Iterator[_Capture]:
    capture = _Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        yield capture
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)


def test_debug_logs_hold_no_document_text_vectors_keys_tokens_or_signed_urls(
    tmp_path: Path, debug_logs: _Capture
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(6):
        (root / f"d{i}.md").write_text(f"# Doc {i}\n\nThe {DOCUMENT_CANARY} paragraph {i}.\n", "utf-8")
    (root / "bad.md").write_bytes(f"# Bad \xff {DOCUMENT_CANARY}\n".encode("latin-1"))
    config = tmp_path / "config.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "embedding": {
                    "provider": "openai-compatible",
                    "endpoint": f"http://127.0.0.1:{server.server_port}/v1",
                    "apiKey": API_KEY,
                    "model": "m",
                    "batchSize": 2,
                },
                "knowledgeBase": {"allowWrites": True},
            }
        )
    )
    ws = Workspace(load_settings(CliOptions(config=str(config), root=str(root)), cwd=tmp_path, environ={}))
    try:
        ws.indexing.reindex("all")
        ws.indexing.reindex("all")  # the second pass after the provider's one failure
        for mode in ("lexical", "semantic", "hybrid"):
            dispatch.invoke(ws, "kb_search", {"request": {"query": DOCUMENT_CANARY, "mode": mode}})
        read = dispatch.invoke(ws, "kb_read", {"request": {"path": "d0.md"}})
        operation = {"kind": "insert_after", "pointer": "document", "markdown": f"More {DOCUMENT_CANARY}."}
        dispatch.invoke(ws, "kb_patch", {"request": {"path": "d0.md", "operations": [operation]}})
        hostile: list[Any] = [
            {"request": {"path": "d1.md", "operations": [{"kind": "replace", "pointer": "1~00", "markdown": "x"}]}},
            {"request": {"path": f"{DOCUMENT_CANARY}.txt", "operations": []}},
            {"request": {"path": "bad.md", "operations": [operation]}},
            {"request": {"path": "d2.md", "operations": [operation], "url": f"https://h/x?{SIGNED}"}},
        ]
        for arguments in hostile:
            with contextlib.suppress(KbError):
                dispatch.invoke(ws, "kb_patch", arguments)
        ws.indexing.sync.wait_idle(30)
        ws.indexing.wait_vectors(30)
        assert read["elements"]
    finally:
        ws.close()
        server.shutdown()
    text = "\n".join(debug_logs.lines)
    assert debug_logs.lines, "nothing was logged at all: the capture is broken"
    for canary in (DOCUMENT_CANARY, API_KEY, "Bearer", VECTOR_CANARY, "CANARYSIG42"):
        assert canary not in text, f"{canary!r} leaked into the logs:\n" + "\n".join(
            line for line in debug_logs.lines if canary in line
        )
