"""The cyclic garbage collector, paused while a large document is parsed.

Parsing allocates an object per token and element and keeps nearly all of them:
nothing for the collector to find, yet each collection walks them again, and on
a large document the walks grow with it (a 2.6 MB file of 100,000 list items:
1.5 s to parse with the collector paused, 3.2 s with it running; 40,000 items
0.6 against 1.2 s). Reference counting still frees everything that is not a
cycle meanwhile; cycles made during the pause are collected once it ends.

The collector is the process's, so pauses of several threads are counted and
the last one to end restores it (only if it was running before the first).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused"]

_lock = threading.Lock()
_pauses = 0
_resume = False


@contextmanager
def paused() -> Iterator[None]:
    """Keep the cyclic collector off for the duration (re-entrant, thread-safe)."""
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()
