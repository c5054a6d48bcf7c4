"""MCP wiring: tools/list from the generated registry, tools/call through :func:`dispatch.invoke`.

Protocol traffic is on stdout only; logs go to stderr. Handlers are synchronous
engine code and run in worker threads so a slow call never blocks the session.
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import anyio
import mcp_types as types
from lvsm_contract.content import BlobResource, ContentBlock, ContentResult, ImageBlock, TextBlock
from mcp.server.lowlevel import Server

from .. import __version__
from ..dispatch import available_tools, invoke
from ..errors import KbError
from ..workspace import Workspace

log = logging.getLogger("local_vector_search_mcp")

INSTRUCTIONS = (
    "Local knowledge base over this project's Markdown. Find documents with kb_search or kb_list_files, "
    "read focused slices with kb_read (it returns semantic pointers with hashes), and edit by pointer "
    "with kb_patch: an edit whose target changed since you read it is refused with CONFLICT; re-read and retry."
)


def _json_text(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2)


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


def build_server(ws: Workspace) -> Server[Any]:
    tools = available_tools(ws.config.server.toolsets)

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
        try:
            result = await anyio.to_thread.run_sync(invoke, ws, params.name, params.arguments)
        except KbError as exc:
            return error_result(exc)
        except Exception:
            log.exception("tool %s failed", params.name)
            return error_result(KbError("Internal error; see the server log."))
        if isinstance(result, ContentResult):
            return content_result(result)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_json_text(result))],
            structured_content=result,
        )

    return Server(
        ws.config.server.name,
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve(ws: Workspace) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(ws)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(ws: Workspace) -> None:
    """Serve MCP over stdio until stdin closes."""
    if ws.config.knowledge_base.watch_files:
        # The watcher only queues paths; nothing is indexed or loaded until a change arrives.
        try:
            ws.indexing.start_watching()
        except Exception as exc:  # the server still serves; kb_status shows the watcher error
            log.warning("file watching could not start: %s", exc)
    try:
        anyio.run(_serve, ws)
    finally:
        ws.close()
