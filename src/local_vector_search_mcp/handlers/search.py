"""kb_search handler: thin over IndexService.search (contract §2.3).

The dispatcher validates the arguments with the generated request model, so
the handler only maps its fields.
"""

from __future__ import annotations

from typing import Any

from ..index.service import IndexService
from ..workspace import Workspace

__all__ = ["kb_search"]


def kb_search(ws: Workspace, request: Any) -> dict[str, Any]:
    result: dict[str, Any] = ws.service(IndexService).search(
        query=request.query,
        mode=request.mode,
        top_k=request.top_k,
        include_globs=request.include_globs,
        exclude_globs=request.exclude_globs,
    )
    return result
