"""File watching with watchdog: debounced paths into the sync queue.

Only ``.md`` paths inside the root that match include/exclude (and are not in
a hidden folder such as ``.git`` or the index folder) are queued; a rename
queues the old and the new path; a moved or deleted folder queues every
indexed path under it and every Markdown file now under its new name. A path
is scheduled once no new event arrived for 400 ms (checked every 150 ms).
Watcher errors are reported as the pseudo-path ``<watcher>``; the server
keeps running. When the kernel's event queue overflowed (events were lost),
``on_lost_events`` runs once the watcher is quiet again: the service compares
every file with the index, as at start (decision 322). ``on_idle`` runs at each
tick while no path waits, also when the watcher could not start: the service
compares every file with the index now and then (decision 655).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..sourcefile import unlisted_folder
from .sync import WATCHER_PATH, SyncQueue

__all__ = ["DEBOUNCE_SECONDS", "LOST_EVENTS_LOGGER", "MarkdownWatcher"]

log = logging.getLogger(__name__)
DEBOUNCE_SECONDS = 0.4
TICK_SECONDS = 0.15
_OVERFLOWED = "lost events (kernel queue overflow)"  # what the log says before its compare (and 981's restart)
MAX_RESTARTS = 3  # dead observers replaced within a minute before the watcher gives up and says so
BULK_HOLD_SECONDS = 5.0  # the longest a burst of many paths is held for its end (decision 741)
# A folder tree made at once (`mkdir -p a/b/c`, a checkout, an unzip) is registered twice by
# watchdog's inotify observer: the walk of the new folder `a` adds `b` and `c`, then the create
# events of `b` and `c` add them again, under the same callback id. It overwrites the callback
# with itself (nothing is lost or doubled) and says so in a RuntimeWarning whose text holds the
# repr of every watch of the tree: on stderr (the server's log) and in test runs, many KB of it.
_REREGISTERED = r"Callback with id .* already exists for watch"

# watchdog says so only in its log: "Inotify queue overflowed; filesystem events were lost"
LOST_EVENTS_LOGGER = "watchdog.observers.inotify_c"


# watchdog's inotify emitter logs an ERROR when it reads an event after its observer began
# stopping ("queue_events() called when the thread is inactive"): a race inside its own shutdown
# (the event is dropped with the watch, as stopping means), which showed in a server's log as an
# error and failed a test that asserts a clean log
EMITTER_LOGGER = "watchdog.observers.inotify"


class _StoppingRace(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "called when the thread is inactive" not in str(record.msg)


_STOPPING_RACE = _StoppingRace()


class _LostEvents(logging.Handler):
    """Hears watchdog's warning that the kernel dropped events (its only signal of it)."""

    def __init__(self, on_lost: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self.on_lost = on_lost

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in str(record.msg).lower():
            self.on_lost()


class MarkdownWatcher:
    def __init__(
        self,
        root: Path,
        queue: SyncQueue,
        path_filter: Callable[[str], bool],
        indexed_under: Callable[[str], Iterable[str]],
        debounce: float = DEBOUNCE_SECONDS,
        on_lost_events: Callable[[], None] | None = None,
        bulk_limit: int | None = None,
        on_many: Callable[[int], bool] | None = None,
        on_idle: Callable[[], None] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self._prefix = os.path.join(str(self.root), "")
        self.queue = queue
        self.path_filter = path_filter
        self.indexed_under = indexed_under  # the indexed paths under a folder prefix ("a/")
        self.debounce = debounce
        self._pending: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._observer: Any = None
        self._ticker: threading.Thread | None = None
        self.on_lost_events = on_lost_events
        # More paths than this settling at once (a folder of notes renamed, a checkout, an unzip)
        # go to ``on_many`` (one reindex: parallel parsing) instead of one targeted sync each, as at
        # start; it answers False when it could not start one, and they are synced (decision 741)
        self.bulk_limit = bulk_limit
        self.on_many = on_many
        self.on_idle = on_idle
        self._lost_at: float | None = None
        self._last_event = 0.0
        self._lost_listener = _LostEvents(self._events_lost)
        self._restarts: list[float] = []  # when a dead observer was replaced (decision 981)
        self._observer_lock = threading.Lock()  # the observer swapped by a restart, taken by stop()
        self._lost_reason = _OVERFLOWED
        queue.waiting = self.waiting  # kb_status counts what waits for its debounce (decision 740)

    def waiting(self) -> list[str]:
        """The paths heard but not yet queued (waiting until no event came for the debounce time)."""
        with self._lock:
            return list(self._pending)

    def _observe(self) -> Any:
        """A started watchdog observer of the root, reporting to :meth:`_on_event`."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                try:
                    watcher._on_event(event)
                except Exception as exc:  # pragma: no cover - defensive
                    watcher.queue.report_error(WATCHER_PATH, f"watcher event failed: {watcher.queue.describe(exc)}")

        observer = Observer()  # watchdog's inotify observer starts its reader thread here
        try:
            observer.schedule(Handler(), str(self.root), recursive=True)
            observer.daemon = True
            observer.start()
        except BaseException:
            with contextlib.suppress(Exception):  # its reader thread and descriptor, not leaked
                observer.stop()
                observer.join(timeout=1)
            raise
        return observer

    def _watching(self) -> bool:
        """Whether the observer and every thread it reads events through still run. watchdog's
        inotify reader thread can die on its own (7.1: a KeyError in ``_remove_watch_internally``
        when a watched file is swapped for a folder and back) while the observer's threads live
        on, and then no event ever came again (decision 981)."""
        observer = self._observer
        # watchdog's inotify observer reads every watch through one thread of its own (``_inotify_fd``)
        threads = [observer, getattr(observer, "_inotify_fd", None), *getattr(observer, "emitters", ())]
        return all(thread.is_alive() for thread in threads if thread is not None)

    def _restart(self) -> bool:
        """Replace an observer a thread of which died, and compare every file (events were lost
        meanwhile); False after ``MAX_RESTARTS`` within a minute (something keeps killing it)."""
        now = time.monotonic()
        self._restarts = [t for t in self._restarts if now - t < 60.0] + [now]
        if len(self._restarts) > MAX_RESTARTS:
            return False
        log.warning("the file watcher stopped unexpectedly; restarting it and comparing the files with the index")
        with self._observer_lock:  # stop() must never miss an observer (it takes it under this lock)
            if self._stop.is_set():
                return True
            old = self._observer
        try:
            old.stop()
            old.join(timeout=1)
        except Exception:  # pragma: no cover - a dead thread's observer may not stop cleanly
            pass
        try:
            new = self._observe()
        except Exception as exc:
            log.warning("file watcher could not restart: %s", exc)
            return False
        with self._observer_lock:
            if self._stop.is_set():  # stopped while the new one was started: it goes too
                new.stop()
                new.join(timeout=5)
                return True
            self._observer = new
        self._events_lost(restarted=True)  # compared once the tree is quiet, as after a queue overflow
        return True

    def start(self) -> None:
        try:
            logging.getLogger(LOST_EVENTS_LOGGER).addHandler(self._lost_listener)
            logging.getLogger(EMITTER_LOGGER).addFilter(_STOPPING_RACE)  # a logger keeps a filter once
            warnings.filterwarnings("ignore", _REREGISTERED, RuntimeWarning, r"watchdog\.observers\.inotify")
            self._observer = self._observe()
        except Exception as exc:
            log.warning("file watcher could not start: %s", exc)
            self.queue.report_error(WATCHER_PATH, f"file watcher could not start: {self.queue.describe(exc)}")
            if self.on_idle is None:
                return
            # no events will come, but the periodic compare still finds what changed (decision 655)
        self._ticker = threading.Thread(target=self._tick, name="kb-watch-debounce", daemon=True)
        self._ticker.start()

    def stop(self) -> None:
        with self._observer_lock:
            self._stop.set()
            observer = self._observer
        logging.getLogger(LOST_EVENTS_LOGGER).removeHandler(self._lost_listener)
        if observer is not None:
            try:
                observer.stop()
                observer.join(timeout=5)
            except Exception:  # pragma: no cover
                pass

    def _rel(self, raw: Any) -> str | None:
        if not raw:
            return None
        path = os.fsdecode(raw)
        if path.startswith(self._prefix):  # watchdog reports paths under the root it watches: no
            text = path[len(self._prefix) :].replace(os.sep, "/")  # syscall needed (decision 321)
            if any(part.startswith(".") or part in ("", "..") for part in text.split("/")):
                return None
            return text
        try:
            rel = Path(path).resolve().relative_to(self.root) if not Path(path).is_symlink() else None
        except (ValueError, OSError):
            rel = None
        if rel is None:
            try:
                rel = Path(os.path.abspath(path)).relative_to(self.root)
            except ValueError:
                return None
        text = rel.as_posix()
        if text in (".", "") or any(part.startswith(".") for part in text.split("/")):
            return None
        return text

    def _on_event(self, event: Any) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [self._rel(event.src_path), self._rel(getattr(event, "dest_path", None))]
        found: set[str] = set()
        for rel in paths:
            if rel is None:
                continue
            if event.is_directory:
                if event.event_type not in ("created", "moved", "deleted") and not self.queue.has_error(f"{rel}/"):
                    # a folder "modified" (a file in it came or went, whose own event follows) is not
                    # walked: that walk per event made a checkout quadratic (decision 321); a folder
                    # reported unlistable is, since a permission change is how it becomes listable
                    continue
                if event.event_type in ("moved", "deleted"):
                    prefix = rel + "/"
                    found.update(self.indexed_under(prefix))  # a lookup, not every document (decision 351)
                    # what failed under it is gone with it: files are synced again (their errors
                    # go), unlistable folders forgotten (decision 323)
                    for failed in self.queue.errors_under(prefix):
                        if failed.endswith("/"):
                            self.queue.clear_error(failed)
                        else:
                            found.add(failed)
                full = self.root / rel
                if full.is_dir():
                    self.queue.clear_error(f"{rel}/")  # listed again below, or reported again
                    for dirpath, dirnames, filenames in os.walk(full, onerror=self._unlisted):
                        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                        for name in filenames:
                            sub = Path(dirpath, name).relative_to(self.root).as_posix()
                            found.add(sub)
            else:
                found.add(rel)
        now = time.monotonic()
        with self._lock:
            self._last_event = now
            for rel in found:
                if rel.lower().endswith(".md") and self.path_filter(rel):
                    self._pending[rel] = now

    def _events_lost(self, restarted: bool = False) -> None:
        with self._lock:
            self._lost_at = time.monotonic()
            self._lost_reason = "was restarted" if restarted else _OVERFLOWED

    def _after_lost_events(self, now: float) -> None:
        """Once no event arrived for the debounce time after an overflow, compare the files."""
        with self._lock:
            lost = self._lost_at
            if lost is None or now - max(lost, self._last_event) < self.debounce:
                return
            self._lost_at = None
        log.warning("the file watcher %s; comparing the files with the index", self._lost_reason)
        if self.on_lost_events is not None:
            try:
                self.on_lost_events()
            except Exception as exc:  # pragma: no cover - defensive
                text = self.queue.describe(exc)
                self.queue.report_error(WATCHER_PATH, f"could not re-check the files after lost events: {text}")

    def _idle(self, now: float) -> None:
        """Run ``on_idle`` while no path waits and no event came for the debounce time."""
        if self.on_idle is None:
            return
        with self._lock:
            if self._pending or now - self._last_event < self.debounce:
                return
        try:
            self.on_idle()
        except Exception as exc:  # pragma: no cover - defensive
            text = self.queue.describe(exc)
            self.queue.report_error(WATCHER_PATH, f"could not compare the files with the index: {text}")

    def _unlisted(self, exc: OSError) -> None:
        """A folder that appeared but cannot be listed: its files cannot be queued; say so."""
        if exc.filename is None or isinstance(exc, FileNotFoundError):
            return
        try:
            rel = Path(os.fsdecode(exc.filename)).relative_to(self.root).as_posix()
        except ValueError:
            return
        self.queue.report_error(f"{rel}/", f"{unlisted_folder(exc)}; its files are not indexed")

    def _settled(self, now: float) -> list[str]:
        """(Under the lock.) The paths quiet for the debounce time. While more than ``bulk_limit``
        wait, a burst (watchdog reports a moved folder's files one event each, over seconds) is
        let go whole once no event came for the debounce time, so it reaches one reindex rather
        than slices of syncs; a burst that never pauses is let go after ``BULK_HOLD_SECONDS``."""
        if self.on_many is not None and self.bulk_limit is not None and len(self._pending) > self.bulk_limit:
            oldest = min(self._pending.values())
            if now - self._last_event < self.debounce and now - oldest < BULK_HOLD_SECONDS:
                return []
            return list(self._pending)
        return [p for p, t in self._pending.items() if now - t >= self.debounce]

    def _reindexed(self, count: int) -> bool:
        """(Under the lock.) Whether ``count`` settled paths went to one reindex instead of syncs.
        A reindex started now lists the tree after their events, so it sees them; one already
        running may have listed it before, so then ``on_many`` answers False."""
        if self.on_many is None or self.bulk_limit is None or count <= self.bulk_limit:
            return False
        try:
            return self.on_many(count)
        except Exception as exc:  # pragma: no cover - defensive: sync them instead
            log.warning("could not start a reindex for %d changed files: %s", count, exc)
            return False

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            now = time.monotonic()
            with self._lock:
                ready = self._settled(now)
                if ready and not self._reindexed(len(ready)):
                    # queued before it leaves the pending set: a path is never in neither (one
                    # that looked at both in between saw nothing to wait for)
                    self.queue.schedule(sorted(ready))
                for p in ready:
                    del self._pending[p]
            self._after_lost_events(now)
            self._idle(now)
            if self._observer is not None and not self._stop.is_set() and not self._watching() and not self._restart():
                self.queue.report_error(WATCHER_PATH, "file watcher stopped unexpectedly")
                # no events from here, but the periodic compare still finds what changed (decision 655),
                # as when the watcher could not start
                with self._observer_lock:
                    dead, self._observer = self._observer, None
                with contextlib.suppress(Exception):
                    dead.stop()
                if self.on_idle is None:
                    return
