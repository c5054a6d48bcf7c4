"""A request whose params do not fit its method is told which field is wrong.

The SDK validates each request's params against the method's model and answers a mismatch with
-32602 "Invalid request parameters" and empty data: `tools/call` with `arguments: "x"`, a `name`
that is a number or no params at all all read the same, and a client author has nothing to go
on. The code stays (JSON-RPC's Invalid params); the message names each field and what it should
be, never the value given (it may be a secret). Decision 757.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError

__all__ = ["explain_invalid_params"]

_SHOWN = 3  # a handful of fields is enough to fix the request; the rest only makes it longer


async def explain_invalid_params(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: the SDK's params refusal with the fields that failed."""
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in error['loc']) or 'params'}: {error['msg']}"
            for error in exc.errors(include_url=False, include_input=False)[:_SHOWN]
        ]
        more = f" (and {exc.error_count() - _SHOWN} more)" if exc.error_count() > _SHOWN else ""
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"Invalid params for '{ctx.method}': {'; '.join(problems)}{more}.",
        ) from None
