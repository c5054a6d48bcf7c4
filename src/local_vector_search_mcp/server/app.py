"""MCP wiring: tools/list from the generated registry, tools/call through :func:`dispatch.invoke`.

Protocol traffic is on stdout only; logs go to stderr. Handlers are synchronous
engine code and run in worker threads so a slow call never blocks the session. Each kind of
call has its own limit of worker threads (:class:`Lanes`, spec/decisions.md 211), so cheap
reads are not queued behind query embeddings, and the reply is built in that thread too.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import sys
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from lvsm_contract.content import BlobResource, ContentBlock, ContentResult, ImageBlock, TextBlock
from lvsm_contract.registry import BY_NAME
from mcp.server.lowlevel import Server

from .. import __version__
from ..dispatch import available_tools, invoke
from ..errors import KbError
from ..workspace import Workspace
from .handshake import explain_requests_before_initialize

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


def call_result(ws: Workspace, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run a tool and build its reply (JSON text and all), in the calling worker thread: the
    event loop, which every session's I/O goes through, only sends it."""
    try:
        result = invoke(ws, name, arguments)
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


def build_server(ws: Workspace) -> Server[Any]:
    tools = available_tools(ws.config.server.toolsets)
    lanes = Lanes()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
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
        return await anyio.to_thread.run_sync(call_result, ws, params.name, params.arguments, limiter=limiter)

    server = Server(
        ws.config.server.name,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(explain_requests_before_initialize)
    return server


async def _serve(ws: Workspace) -> None:
    from mcp.server.stdio import stdio_server

    from .drain import answer_before_eof

    server = build_server(ws)
    async with stdio_server() as (stdin, stdout), answer_before_eof(stdin, stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(ws: Workspace) -> None:
    """Serve MCP over stdio until stdin closes (or Ctrl-C: exit 130)."""
    # The watcher (when configured) starts now; the catch-up with an existing index (a stat per
    # file, in the background) starts with the first tool call.
    ws.start_serving()
    previous = signal.signal(signal.SIGINT, _interrupted)
    try:
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
    sys.stderr.write("local-vector-search-mcp: interrupted.\n")
    sys.stderr.flush()
    os._exit(130)
