"""The HTTP front door: every request passes these checks before the MCP transport sees it.

In order, each answered with a JSON-RPC error body and no further reading of the request:

1. ``Host`` must name this server (the bound address or a loopback name, on the bound port) or a
   configured allowed host, else **421**. A page on ``evil.example`` whose name an attacker
   re-points at 127.0.0.1 (DNS rebinding) still sends ``Host: evil.example``.
2. An ``Origin`` header, when present, must be a loopback origin or a configured one, else **403**:
   browsers always send it on cross-site requests, other clients never need it.
3. With a token configured, ``Authorization: Bearer <token>`` must match it, compared in constant
   time, else **401**.
4. On ``/mcp``, an ``MCP-Protocol-Version`` header, when present, must name a version this
   server speaks, else **400** (the transport's rule; decision 476).

The body limit (413) and malformed JSON (400) are the SDK transport's, configured by
:mod:`.http`; the guard gives the transport's plain-text refusals a JSON-RPC body too
(decision 364), and answers a request whose id was lost, which the transport accepts with 202
as a notification, with Invalid Request (decision 475). Each request is logged once, at info
level, with its method, path, status and duration, never its arguments or document text; a
request whose client hung up before its body arrived is logged with 499, not the transport's
500 (decision 677), and a Content-Type is read in any case (``Application/JSON``). A GET's
``Last-Event-ID`` is dropped when the transport keeps no event history, so the GET opens a fresh
stream (decision 1031).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..hostnames import normalize_origin, split_host
from .drain import TOO_DEEP, is_request_without_id, request_without_id_reply

__all__ = ["HostRule", "OriginRule", "RequestGuard", "bearer_matches", "is_loopback_host"]

log = logging.getLogger("local_vector_search_mcp.http")

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def is_loopback_host(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # any other name may resolve to a public address


@dataclass(frozen=True)
class HostRule:
    """Which ``Host`` header values name this server.

    The bound address and the loopback names count on the bound port only; a configured
    ``name`` counts on any port (a reverse proxy forwards its own public name, usually without
    a port), ``name:port`` on that port.
    """

    port: int
    names: frozenset[str]
    any_port: frozenset[str]
    exact: frozenset[tuple[str, int]]

    @classmethod
    def build(cls, bound_host: str, port: int, allowed: Iterable[str]) -> HostRule:
        names = set(LOOPBACK_NAMES)
        bound = bound_host.strip().strip("[]").lower()
        if bound not in _WILDCARDS:
            names.add(bound)
        any_port: set[str] = set()
        exact: set[tuple[str, int]] = set()
        for entry in allowed:
            parsed = split_host(entry, None)
            if parsed is None:
                continue  # rejected earlier by the configuration check
            name, entry_port = parsed
            if entry_port is None:
                any_port.add(name)
            else:
                exact.add((name, entry_port))
        return cls(port, frozenset(names), frozenset(any_port), frozenset(exact))

    def allows(self, header: str | None) -> bool:
        if not header:
            return False
        parsed = split_host(header, 80)
        if parsed is None:
            return False
        name, port = parsed
        return (name in self.names and port == self.port) or name in self.any_port or (name, port) in self.exact


@dataclass(frozen=True)
class OriginRule:
    """Loopback origins (any port, http or https) and configured ones (exact) are accepted."""

    allowed: frozenset[str]

    @classmethod
    def build(cls, allowed: Iterable[str]) -> OriginRule:
        return cls(frozenset(o for o in (normalize_origin(a) for a in allowed) if o))

    def allows(self, header: str | None) -> bool:
        if header is None:
            return True  # not a browser, or a same-origin GET: nothing to protect against
        origin = normalize_origin(header)
        if origin is None:
            return False  # includes the opaque origin "null" (sandboxed frames, file:// pages)
        host = urlsplit(origin).hostname or ""
        if host.endswith(".") and not host.endswith(".."):
            host = host[:-1]  # as for Host: `http://localhost.:3000` is the same page's origin
        return host in LOOPBACK_NAMES or origin in self.allowed


def bearer_matches(header: str | None, token: str) -> bool:
    """``Authorization: Bearer <token>``, compared in constant time (no early exit on a prefix)."""
    if not header:
        return False
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), token.encode("utf-8"))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


ENDPOINT = "/mcp"
# Logged for a request whose client hung up before it was read (nginx's "client closed request").
CLIENT_GONE = 499


def _media_type_lowered(scope: Scope) -> Scope:
    """``scope`` with its Content-Type's media type in lower case: the transport compares it as
    written, and refused ``Application/JSON`` with 415, but media types are case-insensitive
    (RFC 9110 section 8.3.1; decision 677). Parameters (``charset=UTF-8``) are left as sent."""
    headers = scope["headers"]
    for i, (key, value) in enumerate(headers):
        if key == b"content-type":
            media, sep, rest = value.partition(b";")
            if media != media.lower():
                headers = [*headers[:i], (key, media.lower() + sep + rest), *headers[i + 1 :]]
                return {**scope, "headers": headers}
            break
    return scope


def _without_last_event_id(scope: Scope) -> Scope:
    """``scope`` without a ``Last-Event-ID`` header: a server that keeps no event history may
    ignore it and open a fresh stream (MCP, Streamable HTTP, resumability). The SDK's transport,
    given one and no event store, returned without answering: a plain-text 500 from uvicorn
    (decision 1031)."""
    headers = [(key, value) for key, value in scope["headers"] if key != b"last-event-id"]
    return scope if len(headers) == len(scope["headers"]) else {**scope, "headers": headers}


SUPPORTED_PROTOCOL_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)


async def _send_error(send: Send, held: list[Message], limit: int | None) -> None:
    """Send an error answer the transport made, its body in JSON-RPC form when it was not."""
    start, body = held[0], b"".join(m.get("body", b"") for m in held[1:])
    headers = [(k, v) for k, v in start.get("headers", [])]
    content_type = next((v.decode("latin-1").lower() for k, v in headers if k.lower() == b"content-type"), "")
    replaced = _jsonrpc_error(start["status"], body, content_type, limit)
    if replaced is not None:
        body = replaced
        drop = {b"content-type", b"content-length"}
        headers = [(k, v) for k, v in headers if k.lower() not in drop]
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_held(send: Send, held: list[Message]) -> None:
    for message in held:
        await send(message)


def _request_without_id(body: bytes) -> str | None:
    """The Invalid Request message for a POST the transport accepted (202) as a notification
    although it is a request whose id was lost (decision 475), else ``None``: stdio answers it,
    and over HTTP the client would wait for an answer no stream ever carries."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or not is_request_without_id(message):
        return None
    return request_without_id_reply(str(message["method"])).error.message


async def _refuse(send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})


INVALID_REQUEST = -32600
# The transport's own refusals, in JSON-RPC's words (decision 364): the SDK answers these two
# with a plain-text body and a bare message, and an invalid message with -32602 and a pydantic
# dump, where stdio answers -32600 (decision 289).
_PLAIN_REFUSALS = {
    400: "Invalid Request: the Content-Type must be application/json (one JSON-RPC 2.0 message).",
    413: "Request body too large: at most {limit} bytes (server.maxRequestBytes).",
}
_NOT_A_MESSAGE = (
    "Invalid Request: the body is JSON but not one JSON-RPC 2.0 request, notification or response object"
    " (batches are not supported)."
)


def _jsonrpc_error(status: int, body: bytes, content_type: str, limit: int | None) -> bytes | None:
    """The JSON-RPC error body to send instead of the transport's own error ``body``, or ``None``
    to pass it on unchanged."""
    if not content_type.startswith("application/json"):
        message = _PLAIN_REFUSALS.get(status)
        if message is None:
            return None
        text = message.format(limit=limit if limit is not None else "the configured number of")
        return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": text}}).encode()
    if status != 400 or not (b"Validation error" in body or b"recursion limit" in body):
        return None
    try:
        payload = json.loads(body)
        error = payload["error"]
        text = str(error.get("message", ""))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if text.startswith("Validation error"):
        message = _NOT_A_MESSAGE
    elif "recursion limit" in text:  # valid JSON, only deeper than pydantic's parser goes (decision 366)
        message = TOO_DEEP
    else:
        return None
    error = {"code": INVALID_REQUEST, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": payload.get("id"), "error": error}).encode()


class RequestGuard:
    """ASGI middleware applying the checks above to every HTTP request (lifespan passes through),
    and giving the transport's own error answers a JSON-RPC body (:func:`_jsonrpc_error`)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: HostRule,
        origins: OriginRule,
        token: str | None,
        body_limit: int | None = None,
        stateless: bool = False,
        replays_events: bool = False,
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = origins
        self.token = token
        self.body_limit = body_limit
        self.stateless = stateless
        self.replays_events = replays_events  # the transport has an event store to resume a stream from

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        held: list[Message] = []  # an error answer's (or a 202's) start and body, until its body is complete
        watched = scope["path"] == ENDPOINT
        body: list[bytes] = []  # a POST's body as the transport read it, for the check of a 202
        body_size = 0

        gone = False  # the client hung up before its request was read (decision 677)

        async def receive_watching() -> Message:
            nonlocal body_size, gone
            message = await receive()
            gone = gone or message["type"] == "http.disconnect"
            if message["type"] == "http.request" and (self.body_limit is None or body_size <= self.body_limit):
                chunk = message.get("body", b"")
                body_size += len(chunk)
                body.append(chunk)  # the same bytes the transport holds: no copy
            return message

        async def send_watching(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if watched and (status >= 400 or status == 202):
                    held.append(message)
                    return
            elif held:
                held.append(message)
                if message.get("more_body", False):
                    return
                if status == 202:
                    reply = _request_without_id(b"".join(body))
                    if reply is None:
                        await _send_held(send, held)
                    else:
                        status = 400
                        await _refuse(send, 400, reply)
                else:
                    await _send_error(send, held, self.body_limit)
                held.clear()
                return
            await send(message)

        try:
            refusal = self._check(scope)
            if refusal is None:
                if watched:
                    scope = _media_type_lowered(scope)
                    if scope["method"] == "GET" and not self.replays_events:
                        scope = _without_last_event_id(scope)
                await self.app(scope, receive_watching if watched else receive, send_watching)
            else:
                code, message, extra = refusal
                await _refuse(send_watching, code, message, extra)
        finally:
            session = (_header(scope, b"mcp-session-id") or "-")[:8]
            client = scope.get("client") or ("-", 0)
            log.info(
                "%s %s %s %d %.1fms session=%s",
                client[0],
                scope["method"],
                scope["path"],
                _logged_status(status, gone),
                (time.perf_counter() - started) * 1000,
                session,
            )

    def _check(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        host = _header(scope, b"host")
        if not self.hosts.allows(host):
            return (
                421,
                f"Host {host!r} does not name this server; add it to server.allowedHosts if it should.",
                [],
            )
        origin = _header(scope, b"origin")
        if not self.origins.allows(origin):
            return 403, f"Origin {origin!r} is not allowed; add it to server.allowedOrigins if it should be.", []
        if self.token is not None and not bearer_matches(_header(scope, b"authorization"), self.token):
            challenge = [(b"www-authenticate", b'Bearer realm="local-vector-search-mcp"')]
            return 401, "Missing or wrong bearer token (Authorization: Bearer <token>).", challenge
        if scope["path"] != ENDPOINT:
            return None
        if self.stateless and scope["method"] in ("GET", "DELETE"):
            # The SDK's stateless transport opened a GET stream that nothing can ever write to
            # and held it (and its connection) until the client or the server gave up; MCP lets
            # a server without such a stream answer 405 (decision 758).
            message = (
                f"{scope['method']} is not served: this server is stateless (server.stateless), it keeps no "
                "session and sends nothing outside the answer to a POST."
            )
            return 405, message, [(b"allow", b"POST")]
        return _unsupported_version(_header(scope, b"mcp-protocol-version"))


def _logged_status(status: int, gone: bool) -> int:
    """The status to log: 499 when the client left before an error answer (nobody was answered:
    not a server error), 500 when the application started no answer at all (0; uvicorn then sends
    its own 500, or the exception's traceback follows this line)."""
    status = status or 500
    return CLIENT_GONE if gone and status >= 500 else status


def _unsupported_version(header: str | None) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
    """400 for an ``MCP-Protocol-Version`` this server does not speak (decision 476), as the
    Streamable HTTP transport requires. The SDK hands every version it does not know from the
    initialize handshake to its 2026-07-28 entry, which answered "params._meta must be an object
    carrying the required ... envelope keys": a client that sent a typo or an empty header was
    told to change its message, not the header."""
    if header is None or header in SUPPORTED_PROTOCOL_VERSIONS:
        return None  # absent: the transport assumes 2025-03-26
    shown = header if len(header) <= 40 else header[:40] + "..."
    message = (
        f"Unsupported MCP-Protocol-Version {shown!r}: this server speaks {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}; "
        "send the version the initialize answer named."
    )
    return 400, message, []
