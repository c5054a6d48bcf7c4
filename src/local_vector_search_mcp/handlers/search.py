"""kb_search handler: thin over the workspace's SearchService (contract §2.3).

The dispatcher validates the arguments with the generated request model, so
the handler only maps its fields and turns the engine's dataclasses into the
wire result.
"""

from __future__ import annotations

from lvsm_contract.models import KbSearchRequest, KbSearchResult, SearchDuplicate, SearchReadHint, SearchResult

from ..search.engine import READ_HINT_MAX_BYTES, READ_HINT_MAX_ELEMENTS, SearchItem
from ..workspace import Workspace

__all__ = ["kb_search"]


def kb_search(ws: Workspace, request: KbSearchRequest) -> KbSearchResult:
    outcome = ws.search.search(
        query=request.query,
        mode=request.mode,
        top_k=request.top_k,
        include_globs=request.include_globs,
        exclude_globs=request.exclude_globs,
        tags=request.tags,
    )
    return KbSearchResult(results=[_result(item) for item in outcome.items], warning=outcome.warning)


def _result(item: SearchItem) -> SearchResult:
    return SearchResult(
        path=item.path,
        pointer=item.pointer,
        full_pointer=f"{item.path}::{item.pointer}",
        score=item.score,
        search_mode=item.search_mode,
        heading_path=item.heading_path,
        snippet=item.snippet,
        read_hint=SearchReadHint(
            path=item.path,
            pointer=item.pointer,
            max_elements=READ_HINT_MAX_ELEMENTS,
            max_bytes=READ_HINT_MAX_BYTES,
        ),
        indexed_source_hash=item.indexed_source_hash,
        also_in=[SearchDuplicate(path=path, pointer=pointer) for path, pointer in item.also_in],
    )
