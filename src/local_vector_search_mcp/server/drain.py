"""Stdio: every request read before stdin closed gets its reply.

The SDK's dispatcher cancels the handlers still running when its read stream ends: it takes a
closed input as a caller that is gone. A client that writes its requests and then closes stdin
(a shell pipe, a one-shot script, an agent harness that half-closes) is still reading stdout, and
under load lost the replies it was owed (the install test caught it: `tools/list` unanswered).
These two pumps sit between the stdio transport and the server and hold the end of input back
until each request read so far has its reply on its way to stdout or was cancelled by the client,
for at most ``grace`` seconds. On the way in they also answer what the SDK reads and leaves
unanswered: a line that is no message (decision 289) and a request without a usable id (475).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

TOO_DEEP = (
    "Invalid Request: the message nests objects and arrays deeper than the JSON parser's limit "
    "(about 200 levels); send flatter arguments."
)
NOTIFICATIONS = "notifications/"
GRACE_S = 300.0  # longer than any tool call is expected to take; a hung one cannot hold exit forever
POLL_S = 0.01


def unreadable_line_reply(exc: Exception) -> JSONRPCError:
    """JSON-RPC 2.0's answer to a line that is not a message (decision 289): Parse error (-32700)
    when it is not JSON, Invalid Request (-32600) when it is JSON but no valid message (including
    JSON that pydantic's parser refuses, such as a lone surrogate), with the line's ``id`` when it
    has a usable one, else ``null``. The SDK only logs such lines, and the client waits forever."""
    code, message, raw = PARSE_ERROR, "Parse error: the line is not JSON.", None
    if isinstance(exc, ValidationError) and exc.errors():
        errors = exc.errors()
        first = errors[0]
        # the whole message is the input of an error about a missing member; a field's error has the field
        raw = next((e["input"] for e in errors if isinstance(e.get("input"), dict)), first.get("input"))
        if first["type"] == "json_invalid":
            too_deep = "recursion limit" in str(first.get("msg", ""))  # decision 366
            try:  # Python's parser takes what pydantic's refuses (lone surrogates)
                raw = json.loads(raw) if isinstance(raw, str | bytes) else None
            except ValueError:
                raw = None
            except RecursionError:  # deeper than Python's own parser goes: the pump died of it (decision 750)
                raw = {}
            if raw is not None:
                code, message = INVALID_REQUEST, "Invalid Request: the message holds text that is not valid Unicode."
                if too_deep:
                    message = TOO_DEEP
        else:
            code, message = INVALID_REQUEST, "Invalid Request: the line is JSON but not a JSON-RPC 2.0 message."
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def is_request_without_id(message: object) -> bool:
    """Whether a message read as a notification is a request whose id was lost (decision 475).

    MCP names every notification ``notifications/...``; any other method is a request and needs
    a string or integer id. The SDK reads a request whose id is null, a fraction, a boolean, an
    object or an array as a notification (its message models ignore unknown members), drops it
    as an unknown one, and the client waits forever for its answer."""
    if isinstance(message, JSONRPCNotification):
        return not message.method.startswith(NOTIFICATIONS)
    if isinstance(message, dict):  # a raw HTTP body (server/guard.py)
        method = message.get("method")
        return isinstance(method, str) and not method.startswith(NOTIFICATIONS)
    return False


def request_without_id_reply(method: str) -> JSONRPCError:
    """JSON-RPC 2.0's Invalid Request, id null: the request's own id is not one a reply can carry."""
    shown = method if len(method) <= 80 else method[:80] + "..."
    message = (
        f"Invalid Request: {shown!r} is a request and needs an id that is a string or an integer "
        "(not null, a fraction, a boolean, an object or an array); only notifications/* go without one."
    )
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=message))


@asynccontextmanager
async def answer_before_eof(
    read_stream: ObjectReceiveStream[SessionMessage | Exception],
    write_stream: ObjectSendStream[SessionMessage],
    grace: float = GRACE_S,
) -> AsyncIterator[tuple[ObjectReceiveStream[SessionMessage | Exception], ObjectSendStream[SessionMessage]]]:
    """The server's side of the streams: the same messages, with the end of input held back."""
    # Counted, not a set: a client that reuses an id still in flight gets each reply (the SDK
    # answers every one), and the first reply must not release the end of input for the rest.
    pending: Counter[Any] = Counter()
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)

    async def pump_in() -> None:
        async with to_server:
            async for item in read_stream:
                if isinstance(item, Exception):  # a line the SDK could not read as a message
                    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await write_stream.send(SessionMessage(unreadable_line_reply(item)))
                if isinstance(item, SessionMessage):
                    message = item.message
                    if is_request_without_id(message):
                        assert isinstance(message, JSONRPCNotification)
                        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                            await write_stream.send(SessionMessage(request_without_id_reply(message.method)))
                        continue  # the server would only drop it
                    if isinstance(message, JSONRPCRequest):
                        pending[message.id] += 1
                    elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
                        # A request the client cancelled is never answered (the protocol's rule).
                        # Only an id a request can have: an object or array here raised TypeError
                        # (unhashable) and took the whole server down (decision 479).
                        cancelled = (message.params or {}).get("requestId")
                        if isinstance(cancelled, int | str):
                            pending.pop(cancelled, None)
                try:
                    await to_server.send(item)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # the server stopped reading (it is shutting down): nothing left to hold
            with anyio.move_on_after(grace):
                while pending:
                    await anyio.sleep(POLL_S)

    async def pump_out() -> None:
        async with from_server, write_stream:
            async for item in from_server:
                try:
                    await write_stream.send(item)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # stdout is gone: no reply can reach the client any more
                message = item.message
                if isinstance(message, JSONRPCResponse | JSONRPCError):
                    if pending[message.id] > 1:
                        pending[message.id] -= 1
                    else:
                        pending.pop(message.id, None)

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_in)
        tg.start_soon(pump_out)
        yield server_reads, server_writes
