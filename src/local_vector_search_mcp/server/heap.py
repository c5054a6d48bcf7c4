"""The server's long-lived objects, kept out of the cyclic collector's full passes (decisions 950, 975).

A serving process holds about 110,000 tracked objects that live as long as it does: the modules,
functions and classes it imported, the contract's pydantic models, the SDK. CPython's full
(generation 2) collection walks every one of them each time enough new objects survived, and
whatever call was running waited for it: on the 1,758-file bench tree 70-100 ms, several times a
minute under edits, which was the whole gap between an edit's p50 (~10 ms) and its p95 (~100-200
ms). After a call during which modules were imported (a session's first calls import the handlers,
the parser and the index on first use) the garbage is collected once and what is left is frozen
(``gc.freeze``): full passes then walk only what was made since, a tenth of it.

That settling is itself a full pass (60-90 ms once per batch of imports), so it is not run inside
the call that imported (decision 975): :func:`call_ended` only notes that one is due, and a thread
runs it once no call has been running for :data:`QUIET_S` (the reply is out by then, and the agent
is reading it), or, when calls overlap without a pause, :data:`PATIENCE_S` after it became due (a
server that is never idle still gets its heap frozen; that call then waits for it, as before).

Frozen objects are still freed by reference counting; a frozen cycle that later becomes garbage is
not collected, so the freezes are few (one per batch of new imports, a handful per process) and each
follows a full collection. Freezing is process-wide and never undone here.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time

__all__ = ["PATIENCE_S", "QUIET_S", "call_ended", "call_started", "settle_after_imports", "wait"]

log = logging.getLogger("local_vector_search_mcp")

QUIET_S = 0.05  # no call running for this long: the last reply was sent
PATIENCE_S = 1.0  # a settling due this long runs even while calls overlap

_lock = threading.Lock()
_modules_seen = 0

_idle = threading.Condition()
_running = 0  # calls between call_started and call_ended
_last_end = 0.0  # when the last call ended (clock())
_due_since: float | None = None  # when a settling became due; None when none is waiting
_settler: threading.Thread | None = None


def clock() -> float:
    return time.monotonic()


def settle_after_imports() -> bool:
    """When modules were imported since the last time (or ever), collect the garbage and freeze
    every object that is left; return whether it did. Cheap otherwise (one length compared), and a
    call that finds another thread settling does not wait for it."""
    global _modules_seen
    if len(sys.modules) == _modules_seen or not _lock.acquire(blocking=False):
        return False
    try:
        imported = len(sys.modules)
        if imported == _modules_seen:
            return False
        gc.collect()
        gc.freeze()
        _modules_seen = imported
        return True
    finally:
        _lock.release()


def call_started() -> None:
    """A tool call began running (in its worker thread): a due settling waits for it to end."""
    global _running
    with _idle:
        _running += 1


def call_ended() -> None:
    """A tool call is done (its reply goes out next): when it imported modules, a settling is due,
    run by its own thread once the server is idle (or out of patience)."""
    global _running, _last_end, _due_since, _settler
    with _idle:
        _running = max(0, _running - 1)
        _last_end = clock()
        if _due_since is None and len(sys.modules) != _modules_seen:
            _due_since = _last_end
            _settler = threading.Thread(target=_settle_when_idle, name="lvsm-heap-settle", daemon=True)
            _settler.start()
        _idle.notify_all()


def wait(timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for a due settling to be done; whether none is left waiting."""
    with _idle:
        return _idle.wait_for(lambda: _due_since is None, timeout)


def _settle_when_idle() -> None:
    global _due_since, _settler
    try:
        with _idle:
            while True:
                now = clock()
                due = now if _due_since is None else _due_since  # only this thread clears it
                patience_left = due + PATIENCE_S - now
                quiet_left = _last_end + QUIET_S - now if _running == 0 else patience_left
                if patience_left <= 0 or quiet_left <= 0:
                    break
                # woken early by every call that ends; never sleeps past the nearer deadline
                _idle.wait(min(quiet_left, patience_left, QUIET_S))
        settle_after_imports()
    except Exception:  # the heap stays as it was: slower full passes, nothing wrong
        log.exception("settling the heap after the imports failed")
    finally:
        with _idle:
            _due_since = None
            _settler = None
            _idle.notify_all()
