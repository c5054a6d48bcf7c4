"""Streamable HTTP: the SDK's 404 for a session it does not know, with what to do about it.

A request carrying an ``Mcp-Session-Id`` the server holds no session for (the server restarted
since the session opened, the client or an idle sweep closed it, or it belongs to another
credential) is answered by the SDK with HTTP 404 and the JSON-RPC error "Session not found", as
MCP requires. A client that follows the specification opens a new session on that 404; a
person reading it in a client's log or in curl saw no cause and no next step (decision 1094).
:class:`UnknownSessionHint` keeps the status, the error code and the words "Session not found"
at the start of the message, and adds the causes and the fix. Every other answer passes
untouched, streamed as the SDK sends it.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SESSION_NOT_FOUND", "UnknownSessionHint"]

_SDK_MESSAGE = "Session not found"
SESSION_NOT_FOUND = (
    "Session not found: this server holds no session with this Mcp-Session-Id (it was closed, or the "
    "server restarted since it was opened). Open a new session: send initialize without an Mcp-Session-Id "
    "header (an MCP client that reconnects does this)."
)


def _hinted(body: bytes) -> bytes | None:
    """The SDK's unknown-session body with :data:`SESSION_NOT_FOUND` as its message, or None when
    ``body`` is another answer."""
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    match answer:
        case {"jsonrpc": "2.0", "error": {"message": str() as message} as error} if message == _SDK_MESSAGE:
            error["message"] = SESSION_NOT_FOUND
            return json.dumps(answer, separators=(",", ":")).encode()
    return None


class UnknownSessionHint:
    """ASGI middleware over the MCP endpoint: rewrites the message of the SDK's unknown-session
    404 (see the module docstring). Only a 404 is held back until its body is read; the SDK
    sends that answer as one JSON body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def sending(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] == 404:
                start = message
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            hinted = _hinted(body)
            if hinted is not None:
                body = hinted
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                start = {**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
            await send(start)
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, sending)
