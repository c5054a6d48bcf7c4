"""What indexing is doing right now, for the readers that must know.

The indexing side (``indexing.py``) writes it; search readiness and warnings
and ``kb_status`` read it. It lets search depend on the state of indexing
without depending on the indexing service.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from .indexer import Progress, ReindexResult, ReindexScope

__all__ = ["IndexActivity", "LastReindex"]


@dataclass(frozen=True, slots=True)
class LastReindex:
    """The outcome of the last asynchronous reindex (``kb_status.indexing.last``)."""

    scope: ReindexScope
    force: bool
    started_at_utc: str
    completed_at_utc: str
    outcome: Literal["succeeded", "failed", "cancelled"]
    result: ReindexResult | None
    error: str | None


class IndexActivity:
    def __init__(self) -> None:
        self.lock = threading.Lock()  # guards current/last together
        self.current: Progress | None = None  # the running reindex (files, then vectors)
        self.last: LastReindex | None = None
        self.embedding = threading.Lock()  # held by the one embedding pass at a time
        self.vector_error: str | None = None  # the last provider failure of a pass
        # a CLI call: the process ends with the call, so no background pass is started and the
        # warnings say what does embed the chunks instead (decision 631)
        self.one_shot = False

    @property
    def rebuild_in_progress(self) -> bool:
        current = self.current  # a forced rebuild drops every table first: nothing to search until it ends
        return current is not None and current.is_destructive_rebuild

    def vector_note(self) -> str:
        """Why some chunks have no vector yet (for search warnings)."""
        if self.current is not None or self.embedding.locked():
            return "they are being embedded in the background"
        if self.vector_error:
            return f"embedding failed: {self.vector_error}"
        if self.one_shot:
            return (
                "this command ends before they could be embedded: a server with the model embeds them in the "
                "background, --reindex at once"
            )
        return "a background pass will embed them"
