"""What a server's start-up catch-up changed, for the next full reindex to report (H108, decision 870).

The catch-up (decision 205) is the cheap half of a ``changed`` reindex, run by the server itself
at its first tool call: it brings in what changed while no server ran, one targeted sync per
path. The notes' reindex (§9.2) has no such step, so a client that restarts a server after files
changed and then runs kb_reindex expects ReindexResponse to count those changes; done by the
catch-up first, they read as skipped. This ledger keeps what the catch-up's syncs did until the
next full reindex takes it: documents it (re)indexed are indexed again and counted by that pass,
documents it deleted are counted as its deletions. A catch-up path whose sync finds a reindex
running is left to that reindex, which brings every file in line and counts it anyway.
"""

from __future__ import annotations

import threading
from typing import Literal

__all__ = ["CatchUpLedger", "Credit"]

Credit = Literal["indexed", "deleted"]


class CatchUpLedger:
    """Paths queued by the start-up catch-up, and what their syncs did (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: set[str] = set()
        self._done: dict[str, Credit] = {}

    def queue(self, paths: list[str]) -> None:
        with self._lock:
            self._queued.update(paths)

    def claim(self, path: str) -> bool:
        """Whether ``path``'s sync is the catch-up's (it is then no longer queued)."""
        with self._lock:
            if path in self._queued:
                self._queued.discard(path)
                return True
            return False

    def record(self, path: str, outcome: str, was_indexed: bool) -> None:
        """What the catch-up's sync of ``path`` did: ``indexed``, ``unchanged`` or ``deleted``
        (a deletion counts only for a path that had an index entry)."""
        with self._lock:
            if outcome == "indexed":
                self._done[path] = "indexed"
            elif outcome == "deleted" and was_indexed:
                self._done[path] = "deleted"

    def take(self) -> dict[str, Credit]:
        """What the catch-up did since the last full reindex took it (then forgotten)."""
        with self._lock:
            done, self._done = self._done, {}
            return done
