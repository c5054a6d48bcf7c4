"""MCP wiring: tools/list from the generated registry, tools/call through :func:`dispatch.invoke`.

Protocol traffic is on stdout only; logs go to stderr. Handlers are synchronous
engine code and run in worker threads so a slow call never blocks the session. Each kind of
call has its own limit of worker threads (:class:`Lanes`, spec/decisions.md 211), so cheap
reads are not queued behind query embeddings, and the reply is built in that thread too.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import signal
import time
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from anyio.abc import TaskStatus
from lvsm_contract.content import BlobResource, ContentBlock, ContentResult, ImageBlock, TextBlock
from lvsm_contract.registry import BY_NAME
from mcp.server.lowlevel import Server
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

from .. import __version__, progress
from ..dispatch import available_tools, invoke
from ..errors import KbError
from ..workspace import Workspace
from . import heap
from .answer_form import accepts_stream
from .handshake import explain_requests_before_initialize
from .params import explain_invalid_params
from .warmup import Warmup

log = logging.getLogger("local_vector_search_mcp")

INSTRUCTIONS = (
    "Local knowledge base over this project's Markdown. Find documents with kb_search or kb_list_files, "
    "read focused slices with kb_read (it returns semantic pointers with hashes), and edit by pointer "
    "with kb_patch: an edit whose target changed since you read it is refused with CONFLICT; re-read and retry."
)


def _json_text(payload: Any) -> str:
    """The result as indented JSON (the reference's form), by pydantic-core's encoder: the same text
    as ``json.dumps(payload, ensure_ascii=False, indent=2)`` but for how a float below 1e-4 is
    spelled, at a seventh of the CPU (``indent`` sends the stdlib to its pure-Python encoder)."""
    return pydantic_core.to_json(payload, indent=2).decode("utf-8")


def _block(block: ContentBlock) -> types.TextContent | types.ImageContent | types.EmbeddedResource:
    match block:
        case TextBlock(text=text):
            return types.TextContent(type="text", text=text)
        case ImageBlock(data=data, mime_type=mime_type):
            return types.ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)
        case BlobResource(uri=uri, mime_type=mime_type, data=data):
            blob = types.BlobResourceContents(uri=uri, mime_type=mime_type, blob=base64.b64encode(data).decode("ascii"))
            return types.EmbeddedResource(type="resource", resource=blob)


def content_result(result: ContentResult) -> types.CallToolResult:
    """A content-only tool's blocks, without structuredContent (its spec has no outputSchema)."""
    return types.CallToolResult(content=[_block(b) for b in result.blocks])


def error_result(error: KbError) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(error.to_wire(), ensure_ascii=False))],
        is_error=True,
    )


# Read-only tools that are not cheap: they embed the query or scan every vector ...
_SEARCH_TOOLS = frozenset({"search_knowledge", "search_vectors"})
# ... or read, hash and encode up to 25 MiB, or convert an image.
_BULK_READS = frozenset({"kb_download_file", "kb_load_image"})


def lane_of(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> str:
    """Which worker-thread limit a call waits for: ``light`` (a read without model or network:
    kb_read, kb_list_files, kb_status, lexical kb_search...), ``search`` (a read that embeds the
    query or scans the vectors) or ``other`` (writes, exports, whole-file downloads, images, reindexing)."""
    spec = BY_NAME.get(name)
    if spec is None or not spec.annotations["readOnlyHint"] or spec.annotations["openWorldHint"]:
        return "other"
    if name in _BULK_READS:
        return "other"
    if name in _SEARCH_TOOLS:
        return "search"
    if name == "kb_search":
        request = (arguments or {}).get("request")
        mode = request.get("mode") if isinstance(request, dict) else None
        if mode is None:
            mode = ws.config.search.default_mode
        mode = str(getattr(mode, "value", mode)).lower()
        return "light" if mode == "lexical" or ws.config.embedding.provider == "none" else "search"
    return "light"


class Lanes:
    """Worker-thread limits per kind of call (decision 211): on a few cores a lexical search
    waits for at most ``LIGHT - 1`` other cheap reads and ``SEARCH`` query embeddings, not for
    every hybrid search in flight. ``other`` keeps anyio's default limiter (40 threads): a long
    PDF export or download never takes a slot a search needs, and writes queue on the
    per-file and index locks anyway. The limiters are made on first use, inside the event loop."""

    LIGHT = 8
    SEARCH = 2

    def __init__(self) -> None:
        self._limiters: dict[str, anyio.CapacityLimiter] = {}

    def limiter(self, lane: str) -> anyio.CapacityLimiter:
        if lane not in self._limiters:
            if lane == "other":
                self._limiters[lane] = anyio.to_thread.current_default_thread_limiter()
            else:
                self._limiters[lane] = anyio.CapacityLimiter(self.LIGHT if lane == "light" else self.SEARCH)
        return self._limiters[lane]


SHUTDOWN_MESSAGE = (
    "The server is shutting down and stopped this call before it finished; nothing of it was written. "
    "Call it again once the server is back."
)


def call_result(
    ws: Workspace, name: str, arguments: dict[str, Any] | None, call: progress.Call
) -> types.CallToolResult:
    """Run a tool and build its reply (JSON text and all), in the calling worker thread: the
    event loop, which every session's I/O goes through, only sends it. ``call`` carries the
    client's progress token and cancellation to the tool's code (decision 500)."""
    heap.call_started()
    try:
        return _result_of(ws, name, arguments, call)
    finally:
        # a session's first calls import the handlers, the parser, the index: what they leave is
        # frozen, so the collector's full passes stop walking it at every later call (decision
        # 950), once the reply is out and no call is running (decision 975), not inside this call
        heap.call_ended()


def _result_of(ws: Workspace, name: str, arguments: dict[str, Any] | None, call: progress.Call) -> types.CallToolResult:
    try:
        with progress.running(call):
            result = invoke(ws, name, arguments)
    except progress.Cancelled:
        stopped = time.monotonic() - (call.cancelled_at or time.monotonic())
        if not call.by_client:  # the server is stopping: this answer is sent (decision 752)
            log.info("%s stopped by the server's shutdown: it stopped %.2f s later", name, stopped)
            return error_result(KbError(SHUTDOWN_MESSAGE))
        log.info("%s cancelled by its client: it stopped %.2f s later", name, stopped)
        # Never sent: the SDK answers no request its client cancelled.
        return error_result(KbError("The call was cancelled."))
    except KbError as exc:
        return error_result(exc)
    except Exception:
        log.exception("tool %s failed", name)
        return error_result(KbError("Internal error; see the server log."))
    if isinstance(result, ContentResult):
        return content_result(result)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_json_text(result))],
        structured_content=result,
    )


def build_server(ws: Workspace, in_flight: set[progress.Call] | None = None) -> Server[Any]:
    """The MCP server of ``ws``; ``in_flight`` (when given) holds the calls running at any moment,
    so an HTTP server that is shutting down can stop the ones that outlast its grace period."""
    tools = available_tools(ws.config.server.toolsets)
    lanes = Lanes()
    running: set[progress.Call] = set() if in_flight is None else in_flight
    warmup = ws.service(Warmup)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        # the client reads the tools now and calls one later: import what calls need meanwhile
        warmup.start()
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    title=spec.title,
                    description=spec.description,
                    input_schema=spec.input_schema(),
                    output_schema=spec.output_schema(),
                    annotations=types.ToolAnnotations(
                        title=spec.title,
                        read_only_hint=spec.annotations["readOnlyHint"],
                        destructive_hint=spec.annotations["destructiveHint"],
                        idempotent_hint=spec.annotations["idempotentHint"],
                        open_world_hint=spec.annotations["openWorldHint"],
                    ),
                    meta=spec.meta,
                )
                for spec in tools
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        limiter = lanes.limiter(lane_of(ws, params.name, params.arguments))
        return await run_tool(ws, ctx, params.name, params.arguments, limiter, running)

    server = Server(
        ws.config.server.name,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(explain_requests_before_initialize)
    server.middleware.append(explain_invalid_params)
    return server


async def run_tool(
    ws: Workspace,
    ctx: Any,
    name: str,
    arguments: dict[str, Any] | None,
    limiter: anyio.CapacityLimiter,
    in_flight: set[progress.Call] | None = None,
) -> types.CallToolResult:
    """Run a tool in a worker thread under a :class:`progress.Call` (decision 500)."""
    wants_progress = progress_token_from_params(getattr(ctx, "params", None)) is not None
    http_request = getattr(ctx, "request", None)  # over HTTP: its POST (None over stdio)
    if wants_progress and http_request is not None:
        wants_progress = accepts_stream(http_request.headers.get("accept"))  # else a JSON answer
    call = progress.Call(_progress_sender(ctx) if wants_progress else None)
    # The SDK cancels this task when the client cancels the call, but a worker thread cannot be
    # interrupted: the wait for it is shielded (the thread keeps its lane's slot until it ends)
    # and the tool ran to its end, writing a PDF nobody waited for. The watcher turns the
    # cancellation into the flag the tool's code checks between pieces of its work; started
    # with start(), so a cancellation that comes at once still finds it inside its try.
    in_flight = set() if in_flight is None else in_flight
    in_flight.add(call)  # only the event loop's thread touches the set
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(_flag_on_cancel, call)
            result = await anyio.to_thread.run_sync(call_result, ws, name, arguments, call, limiter=limiter)
            tg.cancel_scope.cancel()
    finally:
        in_flight.discard(call)
    return result


async def _flag_on_cancel(call: progress.Call, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    try:
        task_status.started()
        await anyio.sleep_forever()
    finally:
        call.cancel()  # also when the call ended: nothing reads the flag any more


# A progress notification the transport has not taken within this time is dropped (a client that
# stopped reading its stream must not hold the tool's worker thread).
SEND_TIMEOUT_S = 5.0


def _progress_sender(ctx: Any) -> progress.Send:
    """Send a notification on the call's own channel (over HTTP its POST's SSE stream) from the
    worker thread, waiting for the event loop to take it: the tool cannot outrun its client. One
    not taken in time, or failed, ends the call's notifications: a client that stopped reading
    must not hold the tool for :data:`SEND_TIMEOUT_S` at every step."""
    gone = False

    async def notify(done: float, total: float | None, message: str | None) -> bool:
        # Shielded: anyio runs this in the cancel scope of the task waiting for the thread, and
        # the client's cancellation arriving meanwhile raised the event loop's CancelledError
        # in the worker thread, which no tool code expects (the next step raises Cancelled).
        with anyio.CancelScope(shield=True), anyio.move_on_after(SEND_TIMEOUT_S):
            await ctx.session.report_progress(done, total, message)
            return True
        return False

    def send(done: float, total: float | None, message: str | None) -> None:
        nonlocal gone
        if gone:
            return
        try:
            gone = not anyio.from_thread.run(notify, done, total, message)
        except Exception:  # the session or the event loop is gone: the work goes on without it
            gone = True
        if gone:
            log.info("progress notifications of this call stopped: the client did not take one")

    return send


async def _serve(ws: Workspace) -> None:
    from mcp.server.stdio import stdio_server

    from .drain import answer_before_eof

    server = build_server(ws)
    async with stdio_server() as (stdin, stdout), answer_before_eof(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(ws: Workspace) -> None:
    """Serve MCP over stdio until stdin closes (or Ctrl-C: exit 130)."""
    # Ctrl-C leaves at once from here on, also while the watcher starts: a KeyboardInterrupt
    # unwinding a half-started server is what the handler exists to avoid.
    previous = signal.signal(signal.SIGINT, _interrupted)
    try:
        # The watcher (when configured) starts now; the catch-up with an existing index (a stat per
        # file, in the background) starts with the first tool call.
        ws.start_serving()
        anyio.run(_serve, ws)
    finally:
        signal.signal(signal.SIGINT, previous)
        ws.close()


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C while serving stdio: leave at once, as a kill would.

    asyncio's own handler cancels the main task, and that waits for the thread blocked reading
    stdin: at an idle terminal the server hung until the next line. Leaving without closing is
    safe: every write is atomic, SQLite and PostgreSQL roll back what was not committed, and the
    next start cleans up a write cut short (decision 93).
    """
    # os.write, not sys.stderr: a signal arriving while the main thread writes to sys.stderr
    # would make this a reentrant call into its buffer, which raises instead of leaving
    with contextlib.suppress(OSError):
        os.write(2, b"local-vector-search-mcp: interrupted.\n")
    os._exit(130)
