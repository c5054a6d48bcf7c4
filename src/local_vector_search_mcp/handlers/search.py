"""kb_search handler: thin over the workspace's SearchService (contract §2.3).

The dispatcher validates the arguments with the generated request model, so
the handler only maps its fields and turns the engine's dataclasses into the
wire result.
"""

from __future__ import annotations

from typing import Any

from ..search.engine import READ_HINT_MAX_BYTES, READ_HINT_MAX_ELEMENTS, SearchItem
from ..workspace import Workspace

__all__ = ["kb_search"]


def kb_search(ws: Workspace, request: Any) -> dict[str, Any]:
    outcome = ws.search.search(
        query=request.query,
        mode=request.mode,
        top_k=request.top_k,
        include_globs=request.include_globs,
        exclude_globs=request.exclude_globs,
    )
    return {"results": [_item(item) for item in outcome.items], "warning": outcome.warning}


def _item(item: SearchItem) -> dict[str, Any]:
    return {
        "path": item.path,
        "pointer": item.pointer,
        "fullPointer": f"{item.path}::{item.pointer}",
        "score": item.score,
        "searchMode": item.search_mode,
        "headingPath": item.heading_path,
        "snippet": item.snippet,
        "readHint": {
            "path": item.path,
            "pointer": item.pointer,
            "maxElements": READ_HINT_MAX_ELEMENTS,
            "maxBytes": READ_HINT_MAX_BYTES,
        },
        "indexedSourceHash": item.indexed_source_hash,
    }
