"""MCP over Streamable HTTP: one process, many clients, one knowledge base.

The endpoint is ``http://<host>:<port>/mcp``, served by the mcp SDK's own session manager
with the same :class:`~mcp.server.lowlevel.Server` as stdio (so the same tools, dispatcher
and error envelope). Every session shares the one :class:`Workspace`: one index, one sync
queue, one watcher; tool calls run in worker threads (:mod:`.app`), so a slow export never
stalls another session's search.

Security by default (spec/decisions.md): the guard in :mod:`.guard` checks Host, Origin and
the bearer token; the SDK refuses bodies over ``server.maxRequestBytes`` (413) and malformed
JSON (400). Binding a non-loopback address without a token refuses to start.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import stat
import sys
import threading
from collections.abc import AsyncIterator, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import progress
from ..config import ConfigError, Settings
from ..hostnames import normalize_origin
from ..workspace import Workspace
from .answer_form import JSON_ANSWERS, AnswerForm
from .deadline import DeadlineH11Protocol
from .guard import ENDPOINT, HostRule, OriginRule, RequestGuard, is_loopback_host
from .unknown_session import UnknownSessionHint

__all__ = ["TOKEN_ENV", "HttpOptions", "build_app", "http_options", "serve_http", "uvicorn_config"]

log = logging.getLogger("local_vector_search_mcp.http")

TOKEN_ENV = "LOCAL_VECTOR_SEARCH_MCP_TOKEN"
MIN_TOKEN_LENGTH = 16
# Long enough for an in-flight PDF export or reindex batch to finish after SIGTERM.
GRACEFUL_SHUTDOWN_SECONDS = 30
# A call still running this long before the grace period ends is stopped at its next step and
# answered with an error saying so; uvicorn would cancel its request at the end, the client
# getting a bare 500 and the log a traceback (decision 752).
STOP_CALLS_BEFORE_END_SECONDS = 5
# An idle keep-alive connection stays open this long (uvicorn's default is 5 s). Clients drop
# idle connections after their own limit (httpx and the mcp SDK: 5 s, Node: 4-5 s, a reverse
# proxy: typically 60 s); the server must wait longer, or a request sent on a connection the
# server is closing at that moment fails with a read error (decision 213).
KEEP_ALIVE_SECONDS = 75


@dataclass(frozen=True)
class HttpOptions:
    host: str
    port: int
    token: str | None
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    cors_origins: tuple[str, ...]
    max_request_bytes: int
    stateless: bool


def _read_token(settings: Settings, environ: Mapping[str, str]) -> str | None:
    token = environ.get(TOKEN_ENV)
    source = f"${TOKEN_ENV}"
    if token is None or not token.strip():
        name = settings.config.server.token_file
        if not name:
            return None
        path = Path(name) if Path(name).is_absolute() else settings.project_root / name
        source = f"server.tokenFile {path}"
        try:
            token = path.read_text(encoding="utf-8")
            mode = path.stat().st_mode
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{source} could not be read: {exc}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            log.warning("%s is readable by other users; chmod 600 it.", source)
    token = token.strip()
    if len(token) < MIN_TOKEN_LENGTH or not all(_is_token_character(c) for c in token):
        raise ConfigError(
            f"The bearer token from {source} must be at least {MIN_TOKEN_LENGTH} visible ASCII characters: "
            "letters, digits and punctuation, no spaces and no accented or other non-ASCII letters (an HTTP "
            "header carries ASCII; clients cannot send the rest). Make one with "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`."
        )
    return token


def _is_token_character(c: str) -> bool:
    """Visible ASCII (``!`` to ``~``): what every client sends in a header byte for byte. A
    non-ASCII token was accepted and then matched nothing: httpx refuses to send it, curl sends
    its UTF-8 bytes, which the guard reads as Latin-1 (decision 1031). RFC 6750's stricter
    ``b64token`` alphabet would refuse tokens with punctuation such as ``!`` or ``#`` that work."""
    return "!" <= c <= "~"


def http_options(settings: Settings, environ: Mapping[str, str] | None = None) -> HttpOptions:
    """Resolve the HTTP settings and the token; :class:`ConfigError` when the server must not start."""
    server = settings.config.server
    # `[::1]` as URLs write it: the loopback check took it, and the bind then failed ("Name or
    # service not known"); the printed URL puts the brackets back (decision 753).
    host = server.host.strip()
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    token = _read_token(settings, os.environ if environ is None else environ)
    if token is None and not is_loopback_host(host):
        raise ConfigError(
            f"Refusing to listen on {host}: anything but a loopback address needs a bearer token. "
            f"Set {TOKEN_ENV} (or server.tokenFile), and put a TLS reverse proxy in front for other machines."
        )
    return HttpOptions(
        host=host,
        port=server.port,
        token=token,
        allowed_hosts=tuple(server.allowed_hosts),
        allowed_origins=tuple(server.allowed_origins),
        cors_origins=tuple(server.cors_origins),
        max_request_bytes=server.max_request_bytes,
        stateless=server.stateless,
    )


def build_app(
    ws: Workspace, options: HttpOptions, port: int, in_flight: set[progress.Call] | None = None
) -> tuple[Any, Any]:
    """The ASGI application for ``port`` (the bound one) and its SDK session manager; ``in_flight``
    collects the tool calls running at any moment."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.cors import CORSMiddleware
    from starlette.routing import Route

    from .app import build_server

    manager = StreamableHTTPSessionManager(
        app=build_server(ws, in_flight),
        stateless=options.stateless,
        # A POST is answered with plain JSON, not a one-event SSE stream: it costs a third less
        # server CPU per call, and proxies need no unbuffering for it. A call that asked for
        # progress is answered as SSE, its notifications before its result (decision 502).
        json_response=JSON_ANSWERS,
        # Host and Origin are checked by our guard, with our rules (allowed hosts on any port,
        # loopback origins); the SDK still checks Content-Type and refuses big bodies.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=options.max_request_bytes,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with manager.run():
            yield

    middleware = []
    if options.cors_origins:
        # Outermost, so a browser's preflight (which carries no Authorization) gets its answer.
        middleware.append(
            Middleware(
                CORSMiddleware,
                # Starlette compares the browser's Origin as sent, which is always the serialised
                # form (lower case, no default port, no trailing slash); the configuration accepts
                # any spelling the guard normalises (decision 1031).
                allow_origins=_cors_allowed(options.cors_origins),
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=[
                    "Authorization",
                    "Content-Type",
                    "Mcp-Session-Id",
                    "Mcp-Protocol-Version",
                    "Last-Event-ID",
                ],
                expose_headers=["Mcp-Session-Id"],
            )
        )
    middleware.append(
        Middleware(
            RequestGuard,
            hosts=HostRule.build(options.host, port, options.allowed_hosts),
            origins=OriginRule.build(options.allowed_origins + options.cors_origins),
            token=options.token,
            body_limit=options.max_request_bytes,
            stateless=options.stateless,
            replays_events=manager.event_store is not None,
        )
    )
    _quiet_client_disconnects()
    app = Starlette(
        routes=[Route(ENDPOINT, endpoint=AnswerForm(UnknownSessionHint(StreamableHTTPASGIApp(manager))))],
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={404: _elsewhere},
    )
    return app, manager


def _cors_allowed(origins: tuple[str, ...]) -> list[str]:
    """The configured CORS origins as a browser spells them, once each."""
    return sorted({o for o in (normalize_origin(origin) for origin in origins) if o})


class _NotClientDisconnect(logging.Filter):
    """Drops the transport's "Error handling POST request" record when its cause is the client
    hanging up mid-body: a traceback at ERROR for something no server can prevent (decision 677).
    The request's own line still says what happened (status 499)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from starlette.requests import ClientDisconnect

        return not (record.exc_info and isinstance(record.exc_info[1], ClientDisconnect))


_DISCONNECTS = _NotClientDisconnect()


def _quiet_client_disconnects() -> None:
    logger = logging.getLogger("mcp.server.streamable_http")
    if _DISCONNECTS not in logger.filters:
        logger.addFilter(_DISCONNECTS)


async def _elsewhere(_request: Any, _exc: Exception) -> Any:
    """Any other path: a person who opens the printed address without /mcp, or a client configured
    with the bare host, reads where the endpoint is instead of "Not Found" (decision 556)."""
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(
        f"Not Found: this server speaks MCP (Streamable HTTP) at {ENDPOINT} only; point an MCP client there.\n",
        status_code=404,
    )


def _bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        raise ConfigError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.{_bind_advice(exc)}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _bind_advice(exc: OSError) -> str:
    """What to do next, for the refusals a first run meets."""
    if exc.errno == errno.EADDRINUSE:
        return (
            " Another program (perhaps another server) already listens there: stop it, or choose another"
            " port with --port (server.port), or --port 0 for a free one (the address is printed)."
        )
    if exc.errno == errno.EACCES:
        return " Ports below 1024 need privileges: choose a port from 1024 up with --port (server.port)."
    if exc.errno == errno.EADDRNOTAVAIL:
        return " That address is not one of this machine's: bind 127.0.0.1, 0.0.0.0 or one of its own addresses."
    return ""


def _url(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{ENDPOINT}"


def _make_server(config: Any, manager: Any, in_flight: set[progress.Call] | None = None) -> Any:
    import asyncio

    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, minus re-raising the signal after a graceful stop: we exit 0 once the
        workspace is closed. Open notification streams (GET) are closed first, so shutdown
        waits only for requests in flight."""

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            import signal

            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            log.info("shutting down: finishing requests in flight")
            if in_flight is not None:
                asyncio.get_running_loop().call_later(
                    GRACEFUL_SHUTDOWN_SECONDS - STOP_CALLS_BEFORE_END_SECONDS, _stop_calls, in_flight
                )
            # The SDK has no public "all sessions" view; without it we only wait longer.
            for transport in list(getattr(manager, "_server_instances", {}).values()):
                transport.close_standalone_sse_stream()
            await super().shutdown(sockets)

    return Server(config)


def _stop_calls(in_flight: set[progress.Call]) -> None:
    for call in list(in_flight):
        call.cancel(by_client=False)


def uvicorn_config(app: Any) -> Any:
    """How uvicorn serves ``app``: h11 with a deadline for receiving each request (decision 477)."""
    import uvicorn

    return uvicorn.Config(
        app,
        loop="asyncio",
        http=DeadlineH11Protocol,
        ws="none",
        lifespan="on",
        log_level="warning",
        access_log=False,  # the guard logs one line per request
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )


def serve_http(ws: Workspace, options: HttpOptions) -> None:
    """Serve MCP over Streamable HTTP until SIGTERM or SIGINT; then finish requests in flight and exit."""
    import anyio

    try:
        sock = _bind(options.host, options.port)
    except ConfigError:
        ws.close()
        raise
    port = int(sock.getsockname()[1])
    in_flight: set[progress.Call] = set()
    app, manager = build_app(ws, options, port, in_flight)
    config = uvicorn_config(app)
    server = _make_server(config, manager, in_flight)
    # The watcher (when configured) starts now; the catch-up with an existing index (a stat per
    # file, in the background) starts with the first tool call.
    ws.start_serving()
    mode = "stateless" if options.stateless else "sessions"
    auth = "bearer token required" if options.token else "no token (loopback only)"
    # Always on stderr, whatever the log level: the line tells scripts (and tests) the port.
    print(f"local-vector-search-mcp: serving MCP at {_url(options.host, port)} ({mode}; {auth})", file=sys.stderr)
    sys.stderr.flush()
    try:
        anyio.run(server.serve, [sock])
    finally:
        sock.close()
        ws.close()
        log.info("stopped")
