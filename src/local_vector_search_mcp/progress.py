"""Progress and cancellation of the tool call a worker thread is running (decisions 500-504).

The MCP server runs each tool call in a worker thread under a :class:`Call`: it carries the
client's wish for progress (a ``progressToken``) and the client's cancellation. Engine code that
can run for more than a few seconds calls :func:`step` between pieces of its work (chapters,
pages, blocks of bytes): it sends a progress notification when the client asked for one, at
most a few per second and only when the count moved forward, and raises :class:`Cancelled` once
the client cancelled, so the work stops at the next piece rather than running to its end.

Without a call (the ``call`` CLI, the background reindex, tests of the engine) :func:`step` and
:func:`check` cost one context-variable lookup and do nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["INTERVAL_S", "Call", "Cancelled", "Message", "check", "current", "running", "step"]

# At most this many notifications a second per call: enough for a bar that moves, few enough
# that a 300-page export does not send more messages than it draws pages.
INTERVAL_S = 0.25

Send = Callable[[float, float | None, str | None], None]
Message = str | Callable[[], str] | None
"""A notification's text, or a function making it: called only for a notification that is sent
(a layout steps once per block, and most steps send nothing)."""


class Cancelled(Exception):
    """The client cancelled the call: stop, leaving nothing half done."""


class Call:
    """One tool call's progress channel and cancellation flag.

    ``send`` delivers a notification (it blocks the worker thread until the event loop took it);
    ``None`` when the client passed no progress token. ``cancelled`` is set by the server when
    the client sends ``notifications/cancelled`` for the call.
    """

    def __init__(self, send: Send | None = None, *, interval: float = INTERVAL_S) -> None:
        self.send = send
        self.cancelled = threading.Event()
        self.cancelled_at: float | None = None
        self.by_client = True  # False when the server stopped it (an HTTP server shutting down)
        self.interval = interval
        self._sent_at = float("-inf")
        self._progress = float("-inf")

    def cancel(self, *, by_client: bool = True) -> None:
        if not self.cancelled.is_set():
            self.cancelled_at = time.monotonic()
            self.by_client = by_client
            self.cancelled.set()

    def report(self, progress: float, total: float | None, message: Message, *, final: bool = False) -> None:
        if self.cancelled.is_set():
            raise Cancelled
        if self.send is None or progress <= self._progress:
            return  # no token, or not forward: MCP wants each notification's progress larger
        now = time.monotonic()
        if not final and now - self._sent_at < self.interval:
            return
        self._sent_at, self._progress = now, progress
        self.send(progress, total, message() if callable(message) else message)


_current: ContextVar[Call | None] = ContextVar("lvsm_call", default=None)


@contextmanager
def running(call: Call) -> Iterator[Call]:
    """Make ``call`` the one :func:`step` and :func:`check` see in this thread."""
    token = _current.set(call)
    try:
        yield call
    finally:
        _current.reset(token)


def step(progress: float, total: float | None = None, message: Message = None, *, final: bool = False) -> None:
    """Say how far the current call got (``progress`` of ``total``, when known), or raise
    :class:`Cancelled` when its client cancelled it. ``final`` sends it even within the interval
    (the last count of a phase, so a client sees it reach its total)."""
    call = _current.get()
    if call is not None:
        call.report(progress, total, message, final=final)


def current() -> Call | None:
    """The call running in this thread, if any: for work that must watch its cancellation from
    another thread (a download blocked on a silent server, decision 678)."""
    return _current.get()


def check() -> None:
    """Raise :class:`Cancelled` when the current call's client cancelled it."""
    call = _current.get()
    if call is not None and call.cancelled.is_set():
        raise Cancelled
