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

__all__ = ["EmbeddingTurn", "IndexActivity", "LastReindex"]


class EmbeddingTurn:
    """The one embedding pass at a time, taken in turn (decision 978).

    A lock whose blocking callers are served in the order they came, and which tells its holder
    that someone waits (:attr:`wanted`). The background pass gives way between batches when a
    caller waits (a reindex's embedding, ``index_note``); with a plain lock it kept the lock while
    edits streamed in, and a reindex waited minutes for it. A non-blocking ``acquire`` (a
    background pass being started) never jumps the queue either.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._issued = 0  # tickets given to blocking callers (and to a non-blocking one that got in)
        self._serving = 0  # the ticket whose turn it is
        self._held = False

    def acquire(self, blocking: bool = True) -> bool:
        with self._cond:
            if not blocking and (self._held or self._issued != self._serving):
                return False
            ticket = self._issued
            self._issued += 1
            while self._held or ticket != self._serving:
                self._cond.wait()
            self._held = True
            return True

    def release(self) -> None:
        with self._cond:
            if not self._held:  # as threading.Lock: a stray release would hand the next caller's turn away
                raise RuntimeError("release of an embedding turn not held")
            self._held = False
            self._serving += 1
            self._cond.notify_all()

    def locked(self) -> bool:
        return self._held

    @property
    def wanted(self) -> bool:
        """Whether a caller waits for the turn now held."""
        return self._issued > self._serving + 1

    def __enter__(self) -> EmbeddingTurn:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


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
        self.embedding = EmbeddingTurn()  # held by the one embedding pass at a time
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
