"""Streamable HTTP: plain JSON answers, except for a call that asked for progress (decision 502).

A POST is answered with plain JSON (decision 126), which carries the result and nothing else:
the SDK drops every message about the request before its result, so progress notifications had
no way to the client. A POST whose request carries ``params._meta.progressToken`` (and whose
client accepts ``text/event-stream``, as MCP requires of every client) is answered as an SSE
stream instead: the notifications, then the result, on that request's own stream.

The SDK decides the form per transport (``json_response``), not per request. It only ever asks
``if json_response`` (``bool()`` of the value): :data:`JSON_ANSWERS` answers that question for
the POST being handled, from a context variable :class:`AnswerForm` sets in that request's task
(JSON, and once the body has been read, SSE if it asked for progress: the transport reads the
body before it picks the form). Outside a POST's own task it reads as "SSE": the SDK's task that
routes outgoing messages to their streams then routes a notification about a request to that
request's stream rather than dropping it; only requests answered as SSE are sent any. The value
names the task that set it because a task started from a POST's task (the session's server task,
started by the opening POST) inherits its context variables.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import cast

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["JSON_ANSWERS", "AnswerForm", "accepts_stream", "asks_progress"]

# (the task handling the POST, whether its answer is plain JSON)
_ANSWER_JSON: ContextVar[tuple[int, bool] | None] = ContextVar("lvsm_answer_json", default=None)


def _set(json_answer: bool) -> None:
    _ANSWER_JSON.set((anyio.get_current_task().id, json_answer))


class _JsonAnswers:
    """``bool()`` is whether the POST this task handles is answered with plain JSON."""

    def __bool__(self) -> bool:
        value = _ANSWER_JSON.get()
        return value is not None and value[0] == anyio.get_current_task().id and value[1]

    def __repr__(self) -> str:
        return "JSON_ANSWERS (JSON, or SSE for a call that asked for progress)"


JSON_ANSWERS = cast(bool, _JsonAnswers())
"""What to pass as the SDK's ``json_response``."""


def accepts_stream(accept: str | None) -> bool:
    """Whether an ``Accept`` header takes an event stream. A client that accepts JSON only is
    answered with JSON, token or not, and must be sent no notification: in JSON mode the
    transport would take the first message about the request for its answer."""
    return accept is not None and "text/event-stream" in accept.lower()


def asks_progress(body: bytes) -> bool:
    """Whether a POST body is one JSON-RPC request whose ``params._meta`` holds a progress token
    (a string or an integer, as the SDK reads it)."""
    if b"progressToken" not in body:  # most bodies: no parse
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    match message:
        case {"id": str() | int(), "params": {"_meta": {"progressToken": str() | int() as token}}}:
            return not isinstance(token, bool)
    return False


class AnswerForm:
    """ASGI middleware: sets the answer form of each POST to ``/mcp`` from its body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        _set(True)
        accept = b",".join(v for k, v in scope["headers"] if k == b"accept")
        if not accepts_stream(accept.decode("latin-1")):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def receive_reading() -> Message:
            # Awaited by the transport in this very task, so the variable set here is the one
            # it reads after the body.
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    _set(not asks_progress(b"".join(chunks)))
            return message

        await self.app(scope, receive_reading, send)
