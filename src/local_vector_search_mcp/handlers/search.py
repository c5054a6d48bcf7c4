"""kb_search handler: thin over IndexService.search (contract §2.3)."""

from __future__ import annotations

from typing import Any

from ..index.service import IndexService

__all__ = ["kb_search"]


def _get(request: Any, *names: str) -> Any:
    for name in names:
        if isinstance(request, dict):
            if name in request:
                return request[name]
        elif hasattr(request, name):
            return getattr(request, name)
    return None


def kb_search(ws: Any, request: Any) -> dict[str, Any]:
    result: dict[str, Any] = ws.service(IndexService).search(
        query=_get(request, "query"),
        mode=_get(request, "mode"),
        top_k=_get(request, "top_k", "topK"),
        include_globs=_get(request, "include_globs", "includeGlobs"),
        exclude_globs=_get(request, "exclude_globs", "excludeGlobs"),
    )
    return result
