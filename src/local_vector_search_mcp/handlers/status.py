"""kb_status: configuration and index state. Never fails because the index is missing."""

from __future__ import annotations

from lvsm_contract.models import KbStatusResult

from ..index.service import IndexService
from ..workspace import Workspace


def kb_status(ws: Workspace) -> KbStatusResult:
    index = ws.service(IndexService)
    kb = ws.config.knowledge_base
    # The index area still reports its part of the status in wire JSON; validated into the
    # result model here, together with the fields this handler owns.
    return KbStatusResult.model_validate(
        {
            **index.status_fields(),
            "vectors": index.vector_status(),
            "allowWrites": kb.allow_writes,
            "watchFiles": kb.watch_files,
        }
    )
