"""kb_status: configuration and index state. Never fails because the index is missing."""

from __future__ import annotations

from typing import Any

from ..index.service import IndexService
from ..workspace import Workspace


def kb_status(ws: Workspace) -> dict[str, Any]:
    index = ws.service(IndexService)
    status = index.status_fields()
    status["vectors"] = index.vector_status()
    status["allowWrites"] = ws.config.knowledge_base.allow_writes
    status["watchFiles"] = ws.config.knowledge_base.watch_files
    return status
