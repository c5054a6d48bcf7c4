"""How long the running embedding pass still needs, from the pace kb_status has seen it keep.

A new user turning hybrid search on for a large folder sees thousands of pending chunks and no
idea whether that is minutes or hours (decision 804). The estimate is the pending count over the
pace of the pass since the first kb_status call that saw it run: no hook in the pass, no clock in
the store, and an honest ``None`` until the pass has been watched for a while.
"""

from __future__ import annotations

import threading

__all__ = ["MIN_WATCHED_SECONDS", "PassRate"]

MIN_WATCHED_SECONDS = 5.0  # a pace over a shorter stretch (one batch, a model loading) says little


class PassRate:
    """The pace of the running pass, as successive status calls see it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._origin: tuple[float, int] | None = None  # (monotonic time, embedded count) first seen running

    def eta_seconds(self, running: bool, embedded: int, pending: int, now: float) -> int | None:
        """Seconds until ``pending`` reaches 0 at the pace seen since this pass was first seen,
        or ``None``: no pass runs, nothing waits, or it has not been watched long enough."""
        with self._lock:
            if not running:
                self._origin = None
                return None
            if self._origin is None or embedded < self._origin[1]:  # first seen, or a rebuild restarted the count
                self._origin = (now, embedded)
            since, embedded_then = self._origin
        watched, done = now - since, embedded - embedded_then
        if pending <= 0 or watched < MIN_WATCHED_SECONDS or done <= 0:
            return None
        return round(pending * watched / done)
