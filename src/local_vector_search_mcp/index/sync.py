"""Targeted synchronisation: the consumer of the per-path re-index queue.

Edits (and the file watcher) call :meth:`SyncQueue.schedule` with
root-relative paths (a move schedules both). A background worker reconciles
one path at a time; a path already queued is not queued twice. Each schedule
bumps the path's generation, and a completion only clears the path if no newer
change arrived meanwhile. A failure keeps the path dirty with its error (shown
by ``kb_status.synchronization``: pending while a retry is scheduled, else in
``failed``, decision 782) and does not stop later items; scheduling the path
again retries it. A failure ``retryable`` accepts (a database that was busy, an
I/O error: not a file that cannot be read) is retried on its own after 1, 4, 15 and 60 s
(decision 326), so a transient one clears without another edit. The failure's text is what
``describe`` makes of the exception (the service's: in the product's words, decision 350).
The log warns once per failure: a path failing again with the same text logs at debug level.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WATCHER_PATH", "SyncQueue", "SyncState"]

log = logging.getLogger(__name__)
WATCHER_PATH = "<watcher>"
RETRY_DELAYS = (1.0, 4.0, 15.0, 60.0)


@dataclass(frozen=True, slots=True)
class SyncState:
    pending_files: int  # still to be processed: not the failed paths (decision 782)
    paths: list[str]  # pending and failed
    last_error: str | None
    failed: dict[str, str] = field(default_factory=dict)  # path -> reason: nothing retries it by itself


def _plain(exc: Exception) -> str:
    return getattr(exc, "message", None) or str(exc) or type(exc).__name__


class SyncQueue:
    def __init__(
        self,
        reconcile: Callable[[str], Any],
        retryable: Callable[[Exception], bool] = lambda exc: False,
        retry_delays: tuple[float, ...] = RETRY_DELAYS,
        describe: Callable[[Exception], str] | None = None,
    ) -> None:
        self._reconcile = reconcile
        self.describe: Callable[[Exception], str] = describe or _plain
        self._retryable = retryable
        self._retry_delays = retry_delays
        self._attempts: dict[str, int] = {}
        self._retrying: set[str] = set()  # failed, with a retry timer still to fire: pending
        self._timers: list[threading.Timer] = []
        self._cond = threading.Condition()
        self._queue: OrderedDict[str, None] = OrderedDict()
        self._generation: dict[str, int] = {}
        self._errors: dict[str, str] = {}
        self._counter = 0
        self._busy: str | None = None
        self._last_error: str | None = None
        self._stopped = False
        self._thread: threading.Thread | None = None
        # The paths the file watcher heard but holds for its debounce (set by the watcher): pending
        # to whoever asks, or kb_status said "nothing pending" for 0.4 s after each external save
        # while search still returned the old text (decision 740).
        self.waiting: Callable[[], Iterable[str]] = lambda: ()

    def schedule(self, paths: Iterable[str]) -> None:
        with self._cond:
            for path in paths:
                self._counter += 1
                self._generation[path] = self._counter
                self._queue[path] = None  # no-op when already queued
            self._ensure_thread()
            self._cond.notify_all()

    def report_error(self, path: str, message: str) -> None:
        """Mark a pseudo-path (e.g. ``<watcher>``) dirty with an error."""
        with self._cond:
            self._errors[path] = message
            self._last_error = f"{path}: {message}"

    def retry_failed(self, wanted: Callable[[str], bool]) -> None:
        """Queue again the failed file paths ``wanted`` accepts (not pseudo-paths nor folders)."""
        with self._cond:
            failed = [p for p in self._errors if not p.endswith("/") and not p.startswith("<") and wanted(p)]
        if failed:
            self.schedule(sorted(failed))

    def errors_under(self, prefix: str) -> list[str]:
        """The failed paths (files and ``folder/`` pseudo-paths) under the folder ``prefix`` (``a/``)."""
        with self._cond:
            return sorted(p for p in self._errors if p.startswith(prefix))

    def failed(self) -> list[str]:
        """The failed paths nothing retries by itself (neither queued, running nor awaiting a retry)."""
        state = self.status()
        return [] if state is None else sorted(state.failed)

    def has_error(self, path: str) -> bool:
        with self._cond:
            return path in self._errors

    def clear_error(self, path: str) -> None:
        with self._cond:
            self._errors.pop(path, None)

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stopped = False
            self._thread = threading.Thread(target=self._run, name="kb-sync", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                path, _ = self._queue.popitem(last=False)
                generation = self._generation.get(path, 0)
                self._busy = path
            failure: Exception | None = None
            try:
                self._reconcile(path)
            except Exception as exc:  # keep going with later paths
                failure = exc
            with self._cond:
                self._busy = None
                if failure is not None:
                    error = self.describe(failure)
                    # a path failing again the same way (each watcher event on a file that stays
                    # unreadable) is already in kb_status: warn once per failure, not per event;
                    # logged under the lock so a waiter that sees the failure sees its warning too.
                    # The log keeps the real text (with the machine's paths) for the operator.
                    repeated = self._errors.get(path) == error
                    (log.debug if repeated else log.warning)(
                        "targeted re-index failed for one path: %s", _plain(failure)
                    )
                    self._errors[path] = error
                    self._last_error = f"{path}: {error}"
                    if self._retryable(failure):
                        self._retry_later(path)
                else:
                    self._errors.pop(path, None)
                    self._attempts.pop(path, None)
                    self._retrying.discard(path)
                if failure is None and self._generation.get(path) == generation and path not in self._queue:
                    self._generation.pop(path, None)
                self._cond.notify_all()

    def _retry_later(self, path: str) -> None:
        """(Under the lock.) Queue a transient failure again after the next delay, if any is left."""
        attempt = self._attempts.get(path, 0)
        if self._stopped or attempt >= len(self._retry_delays):
            return
        self._attempts[path] = attempt + 1
        self._retrying.add(path)
        self._timers = [t for t in self._timers if t.is_alive()]
        timer = threading.Timer(self._retry_delays[attempt], self._retry, args=(path,))
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _retry(self, path: str) -> None:
        with self._cond:
            self._retrying.discard(path)
            if self._stopped or path not in self._errors:
                return  # synced meanwhile (an edit, a reindex)
            self.schedule([path])  # under the lock (re-entrant): never seen as neither pending nor retrying

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is queued or running (tests, CLI)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and self._busy is None, timeout)

    def pending(self) -> list[str]:
        # Asked before the lock, and before the queue is read: the watcher takes its own lock and
        # then this one (no inversion), and queues a path before it leaves its debounce set, so a
        # path in transit is seen in one or the other, never in neither.
        waiting = set(self.waiting())
        with self._cond:
            paths = set(self._queue) | set(self._errors) | waiting
            if self._busy:
                paths.add(self._busy)
            return sorted(paths)

    def status(self) -> SyncState | None:
        """What is queued or failed; ``None`` when nothing is (``kb_status.synchronization``)."""
        waiting = set(self.waiting())  # before the lock and the queue, as in pending()
        with self._cond:
            paths = set(self._queue) | set(self._errors) | waiting
            if self._busy:
                paths.add(self._busy)
            if not paths and not self._errors:
                return None
            # A failure nothing will retry is reported apart: counted as pending, it kept an agent
            # that waits for the index to settle waiting for ever (decision 782).
            pending = set(self._queue) | waiting | (self._retrying & set(self._errors))
            if self._busy:
                pending.add(self._busy)
            failed = {p: e for p, e in sorted(self._errors.items()) if p not in pending}
            return SyncState(len(pending), sorted(paths), self._last_error if self._errors else None, failed)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            for timer in self._timers:
                timer.cancel()
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)
