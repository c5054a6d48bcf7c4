"""The server's long-lived objects, kept out of the cyclic collector's full passes (decision 950).

A serving process holds about 110,000 tracked objects that live as long as it does: the modules,
functions and classes it imported, the contract's pydantic models, the SDK. CPython's full
(generation 2) collection walks every one of them each time enough new objects survived, and
whatever call was running waited for it: on the 1,758-file bench tree 70-100 ms, several times a
minute under edits, which was the whole gap between an edit's p50 (~10 ms) and its p95 (~100-200
ms). After a call during which modules were imported (a session's first calls import the handlers,
the parser and the index on first use) the garbage is collected once and what is left is frozen
(``gc.freeze``): full passes then walk only what was made since, a tenth of it.

Frozen objects are still freed by reference counting; a frozen cycle that later becomes garbage is
not collected, so the freezes are few (one per batch of new imports, a handful per process) and each
follows a full collection. Freezing is process-wide and never undone here.
"""

from __future__ import annotations

import gc
import sys
import threading

__all__ = ["settle_after_imports"]

_lock = threading.Lock()
_modules_seen = 0


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
