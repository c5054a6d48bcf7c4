"""kb_search handler: thin over IndexService.search (contract §2.3).

The dispatcher validates the arguments with the generated request model, so
the handler only maps its fields.
"""

from __future__ import annotations

from lvsm_contract.models import KbSearchRequest, KbSearchResult

from ..index.service import IndexService
from ..workspace import Workspace

__all__ = ["kb_search"]


def kb_search(ws: Workspace, request: KbSearchRequest) -> KbSearchResult:
    result = ws.service(IndexService).search(
        query=request.query,
        mode=request.mode,
        top_k=request.top_k,
        include_globs=request.include_globs,
        exclude_globs=request.exclude_globs,
    )
    # The search engine still answers in wire JSON; validating it here keeps the promise of
    # the declared outputSchema until it returns its own result type.
    return KbSearchResult.model_validate(result)
