"""A request sent before ``initialize`` is told so.

MCP's lifecycle has the client send ``initialize``, wait for its answer and then send
``notifications/initialized``; before that only ``ping`` is served. The SDK refuses any other
request with -32602 "Invalid request parameters" and empty data (its pinned answer), which sends
a client author looking for a fault in the request's params. The code is kept (clients may key on
it); the message says what happened (spec/decisions.md 509).
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

__all__ = ["explain_requests_before_initialize"]

_SDK_MESSAGE = "Invalid request parameters"


async def explain_requests_before_initialize(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: the SDK's pre-initialize refusal with a message naming the cause."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        error = exc.error
        # Only the handshake gate raises this exact MCPError (params that fail validation reach
        # the middleware as a pydantic ValidationError), and only while no initialize was accepted.
        if (
            ctx.request_id is not None
            and error.code == INVALID_PARAMS
            and error.message == _SDK_MESSAGE
            and not error.data
            and ctx.session.client_params is None
        ):
            raise MCPError(
                code=INVALID_PARAMS,
                message=(
                    f"Request '{ctx.method}' arrived before initialization: send 'initialize' first and "
                    "wait for its answer, then 'notifications/initialized'; only 'ping' is served before it."
                ),
            ) from None
        raise
