"""The one lock under which first calls import what they need.

Handler modules and the index services are imported on first use, so starting a server stays
fast; the first calls of a session (an HTTP server's clients, a reindex beside an edit) then import
in several threads at once. CPython's per-module import locks deadlock (``_DeadlockError``) when
one thread initialises a package whose ``__init__`` imports a submodule while another thread
imports that submodule by name: markdown-it-py is such a package (a reindex and an edit started
together hit it on ``markdown_it.common.utils``). Under this lock those imports run one at a time;
once a module is imported nothing waits for it.
"""

from __future__ import annotations

import threading

__all__ = ["IMPORT_LOCK"]

IMPORT_LOCK = threading.RLock()
