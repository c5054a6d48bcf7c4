"""The unknown-session hint as ASGI middleware over a stand-in for the SDK (decision 1094)."""

from __future__ import annotations

import json

import anyio
import pytest

from local_vector_search_mcp.server.unknown_session import SESSION_NOT_FOUND, UnknownSessionHint


def _app(status: int, parts: list[bytes]):  # type: ignore[no-untyped-def]
    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        length = sum(len(p) for p in parts)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(length).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        for i, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": i < len(parts) - 1})

    return app


def _run(app) -> list[dict]:  # type: ignore[no-untyped-def]
    sent: list[dict] = []

    async def receive():  # type: ignore[no-untyped-def]
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):  # type: ignore[no-untyped-def]
        sent.append(message)

    anyio.run(UnknownSessionHint(app), {"type": "http"}, receive, send)
    return sent


def _body(sent: list[dict]) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


SDK_404 = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}'


@pytest.mark.parametrize("parts", [[SDK_404], [SDK_404[:20], SDK_404[20:]]])
def test_the_sdk_unknown_session_answer_says_the_cause_and_the_fix(parts: list[bytes]) -> None:
    sent = _run(_app(404, parts))
    answer = json.loads(_body(sent))
    assert answer == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": SESSION_NOT_FOUND}}
    headers = dict(sent[0]["headers"])
    assert sent[0]["status"] == 404 and int(headers[b"content-length"]) == len(_body(sent))
    assert headers[b"content-type"] == b"application/json"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Something else"}}'),
        (404, b"Not Found"),
        (200, SDK_404),  # only a 404 is the unknown-session answer
        (400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: x"}}'),
    ],
)
def test_every_other_answer_passes_byte_for_byte(status: int, body: bytes) -> None:
    sent = _run(_app(status, [body[:5], body[5:]]))
    assert sent[0]["status"] == status
    assert _body(sent) == body
    assert int(dict(sent[0]["headers"])[b"content-length"]) == len(body)
