"""Importing what a session's calls need while its client is still idle (decision 643).

A server starts bare (decision 543: the handlers, the contract's models and the index services are
imported on first use, so ``initialize`` answers fast). The first tool call then paid for all of
it: on opensearch-docs a server's first ``kb_search`` took 570-670 ms against 20-35 ms for the
next ones, nearly all of it imports, pydantic building the models, and the collection that
settles them (decision 950). A client lists the tools first and an agent's first call comes
seconds later, after its model has read them, so the imports are done then: once the first
``tools/list`` has been answered, a daemon thread imports every listed tool's handler module
and the index and search services' modules (under ``lazy_imports.IMPORT_LOCK``, as a call
would); the heap settles after it as after a call (decision 975).

What it does not do: open the index or start the catch-up (decision 205 keeps them for the
first call, so a server a client starts and never calls touches nothing), or import the PDF
export's reportlab (a third of the cost, for a call that takes seconds anyway). A call that
comes first imports what it needs itself and the warm-up finds it done; a server that stops
meanwhile ends the warm-up between two imports.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from . import heap

if TYPE_CHECKING:
    from ..workspace import Workspace

__all__ = ["COLD", "DELAY_S", "Warmup"]

log = logging.getLogger("local_vector_search_mcp")

# Tools whose modules stay unimported until called: their import is a large share of the whole
# (reportlab) and their calls are slow anyway.
COLD = frozenset({"kb_create_pdf_book"})
# After the first listing: its answer is on its way before anything competes with it (a client
# that closes stdin at once must still get it, decision 205).
DELAY_S = 0.3
# What the workspace imports when a call first needs the index, the search or the indexing
# (``workspace.py``), without building any of them: nothing is opened.
_SERVICES = (
    "local_vector_search_mcp.index.stores",
    "local_vector_search_mcp.index.owner",
    "local_vector_search_mcp.index.activity",
    "local_vector_search_mcp.index.indexing",
    "local_vector_search_mcp.search.service",
    "local_vector_search_mcp.embeddings",
)


class Warmup:
    """A workspace's warm-up (``ws.service(Warmup)``): :meth:`start` after a listing starts the
    thread once; the workspace's ``close`` stops it."""

    def __init__(self, ws: Workspace, delay: float = DELAY_S) -> None:
        from ..dispatch import available_tools

        self.tools = [spec.name for spec in available_tools(ws.config.server.toolsets) if spec.name not in COLD]
        backend = "postgres" if ws.config.storage.backend == "postgresql" else "sqlite"
        self.modules = [*_SERVICES, f"local_vector_search_mcp.index.{backend}"]
        self.delay = delay
        self.done = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="lvsm-warmup", daemon=True)
                self._thread.start()

    def close(self, timeout: float = 2.0) -> None:
        """The server stops: no further import starts; wait (bounded) for one under way."""
        self._stop.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def run(self) -> None:
        """Import now, in this thread (what the warm-up thread does after its delay); the heap
        settles after it in its own thread (decision 975)."""
        from .. import dispatch

        started = time.perf_counter()
        steps = [
            dispatch.import_models,
            *(lambda name=name: dispatch.import_handler(name) for name in self.tools),
            *(lambda module=module: dispatch.import_module(module) for module in self.modules),
        ]
        # counted as a call (decision 975): a settling waits for it, and what it imported is
        # settled by the heap's own thread once the server is idle
        heap.call_started()
        try:
            for step in steps:
                if self._stop.is_set():
                    return
                step()
        finally:
            heap.call_ended()
        self.done.set()
        log.debug("warm-up: %d tools imported in %.2f s", len(self.tools), time.perf_counter() - started)

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        try:
            self.run()
        except Exception:  # a call imports what it needs anyway; the warm-up only saves it the wait
            log.warning("warm-up failed; the first calls import what they need", exc_info=True)
