"""Parsing and chunking on every core: worker processes, one writer.

markdown-it-py's tokenizer is most of a cold reindex and holds the GIL, so
threads cannot share it out; :class:`ParsePool` runs :func:`prepare.prepare`
in worker *processes* while the indexing process stays the only writer of the
store (it applies each file's records in its own transaction, as before).

* Workers are fresh interpreters (``python -c``, two pipes; not
  multiprocessing's ``spawn``, which runs the host's main module again in
  every child, and not ``fork``, which would copy open database connections
  and the locks of the server's threads). Nothing of the parent is inherited
  but the two pipes (stdin and stdout, the MCP channel, are ``/dev/null``), and
  a worker never opens the database. Each starts its own session (Linux
  shares CPU between sessions: decision 193). They run at the priority the
  caller asks (the server's background reindex runs them at nice +10, so
  searches keep their core).
* Outcomes are handed back **in task order** (the writer's order, so the index
  is the same, row for row, as an in-process pass); at most
  ``workers x WINDOW_PER_WORKER`` finished files wait for the writer, so memory
  stays bounded whatever the tree.
* A worker that dies (killed, out of memory, a crash in a C extension) is
  replaced; the file it was parsing is tried once more, and a file that ends
  two workers is reported as unreadable. A file still parsing after
  :data:`PARSE_TIMEOUT_SECONDS` (counted from when its worker was ready) is
  reported and its worker killed. Workers that
  cannot even start leave the rest of the pass to the indexing process.

Small passes stay in-process: starting a worker costs about 0.2 CPU-s
(interpreter and imports), more than parsing a few hundred files saves
(:func:`plan_workers`; spec/decisions.md 190).
"""

from __future__ import annotations

import contextlib
import heapq
import logging
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from types import TracebackType
from typing import Any

from .prepare import READY, ChunkSettings, Outcome, Task, Unreadable, prepare

__all__ = [
    "MAX_AUTO_WORKERS",
    "MIN_PARALLEL_FILES",
    "PARSE_TIMEOUT_SECONDS",
    "ParsePool",
    "available_cores",
    "plan_workers",
]

log = logging.getLogger(__name__)

MIN_PARALLEL_FILES = 300  # fewer files to parse: in-process (measured, decision 190)
MAX_AUTO_WORKERS = 8  # indexWorkers 0: every core, at most this many (the writer is one process)
PIPELINE_DEPTH = 2  # tasks queued per worker, so it never waits on the writer between two files
WINDOW_PER_WORKER = 8  # parsed files per worker that may wait for the writer (memory bound)
PARSE_TIMEOUT_SECONDS = 300.0  # one file; an 8 MiB document parses in well under a minute
START_FAILURES_ALLOWED = 2  # workers dying before they are ready: then the parent parses the rest
ATTEMPTS_PER_FILE = 2  # a file that ends this many workers is reported, not retried
IDLE_WAKE_SECONDS = 0.02  # longest wait for workers while the caller's idle hook holds something


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def plan_workers(configured: int, files: int) -> int:
    """Worker processes for a pass over ``files`` files to parse: 0 means in-process.

    ``configured`` is ``knowledgeBase.indexWorkers`` (0: every core up to
    :data:`MAX_AUTO_WORKERS`; 1: always in-process)."""
    if files < max(MIN_PARALLEL_FILES, 2):
        return 0
    count = configured if configured > 0 else min(available_cores(), MAX_AUTO_WORKERS)
    count = min(count, files)
    return count if count > 1 else 0


_BOOT = (
    "import sys; from local_vector_search_mcp.index.prepare import worker_main; "
    "worker_main(int(sys.argv[1]), int(sys.argv[2]))"
)


class _Worker:
    __slots__ = ("head_since", "inbox", "outbox", "process", "queue", "ready")

    def __init__(self, process: subprocess.Popen[bytes], outbox: Connection, inbox: Connection) -> None:
        self.process = process
        self.outbox = outbox  # tasks to the worker
        self.inbox = inbox  # outcomes from it; end of file when it dies
        self.queue: deque[int] = deque()  # task indexes sent, oldest (being parsed) first
        self.ready = False
        self.head_since = time.monotonic()

    def stop(self, kill: bool, timeout: float) -> None:
        if kill and self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.outbox.close()
        self.inbox.close()


def _child_environment() -> dict[str, str]:
    env = dict(os.environ)
    # the worker imports this package from wherever this process found it
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")  # one process per core already; no BLAS thread pools
    return env


class ParsePool:
    """``workers`` parse processes over ``root``; :meth:`run` yields outcomes in task order.

    Use as a context manager: leaving it stops the workers (killing them when
    the pass failed or was cancelled)."""

    def __init__(self, root: Path, settings: ChunkSettings, workers: int, nice: int = 0) -> None:
        self.root = Path(root)
        self.settings = settings
        self.size = max(1, workers)
        self.nice = nice
        self._workers: list[_Worker] = []
        self._env: dict[str, str] | None = None
        self._start_failures = 0
        self._in_process = False
        # one poll set for the workers' pipes, rebuilt when the workers change: the writer waits
        # about 4,000 times a cold pass, and multiprocessing's wait builds a selector each time
        self._poll: Any = None
        self._polled: tuple[int, ...] = ()
        self.deaths = 0  # workers that died or were killed during the pass (tests, logs)

    # lifecycle ------------------------------------------------------------------
    def __enter__(self) -> ParsePool:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(kill=exc_type is not None)

    def close(self, kill: bool = False) -> None:
        workers, self._workers = self._workers, []
        if not kill:
            for w in workers:
                with contextlib.suppress(OSError, ValueError):
                    w.outbox.send(None)
        for w in workers:
            w.stop(kill, 0.0 if kill else 2.0)

    def _start_worker(self) -> bool:
        if not sys.executable:
            return self._cannot_start("no Python interpreter path")
        if self._env is None:
            self._env = _child_environment()
        from_parent, to_child = os.pipe()  # (read end, write end)
        from_child, to_parent = os.pipe()
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(from_parent), str(to_parent)],
                pass_fds=(from_parent, to_parent),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # stdout may be the MCP channel
                env=self._env,
                # Linux's autogroup scheduler shares the CPU between sessions: workers left in ours
                # would share one process's worth of it whenever anything else runs (decision 193)
                start_new_session=True,
            )
        except OSError as exc:  # no processes here (sandbox, limits): parse in-process
            for fd in (to_child, from_parent, from_child, to_parent):
                os.close(fd)
            return self._cannot_start(str(exc))
        os.close(from_parent)
        os.close(to_parent)
        outbox = Connection(to_child, readable=False)
        inbox = Connection(from_child, writable=False)
        worker = _Worker(process, outbox, inbox)
        with contextlib.suppress(OSError):  # it died at once: its closed pipe says so on the next wait
            outbox.send((str(self.root), self.settings, self.nice))
        self._workers.append(worker)
        return True

    def _cannot_start(self, why: str) -> bool:
        log.warning("parse worker could not start (%s); parsing in this process", why)
        self._start_failures = START_FAILURES_ALLOWED
        return False

    # the pass -------------------------------------------------------------------
    def run(
        self, tasks: Sequence[Task], cancel: threading.Event | None = None, idle: Callable[[], bool] | None = None
    ) -> Iterator[Outcome]:
        """Outcomes of ``tasks``, in order. Stops early only when ``cancel`` is set (the
        caller then leaves the context, which kills the workers).

        ``idle`` is called whenever the next outcome is not ready yet, before waiting for the
        workers; while it returns True (the caller holds something it wants to release soon:
        an open write batch) the wait is cut to :data:`IDLE_WAKE_SECONDS` and it is called again."""
        while len(self._workers) < min(self.size, len(tasks)) and self._start_failures < START_FAILURES_ALLOWED:
            if not self._start_worker():
                break
        pending = list(range(len(tasks)))  # a heap of task indexes not sent to any worker
        done: dict[int, Outcome] = {}
        attempts: dict[int, int] = {}
        window = self.size * WINDOW_PER_WORKER
        nxt = 0
        while nxt < len(tasks):
            if nxt in done:
                yield done.pop(nxt)
                nxt += 1
                continue
            if cancel is not None and cancel.is_set():
                return
            if not self._workers:
                self._go_in_process()
                heapq.heappop(pending)  # nxt: no worker holds it, so it is the smallest pending
                done[nxt] = prepare(self.root, tasks[nxt], self.settings)
                continue
            self._dispatch(tasks, pending, nxt + window, done, attempts)
            if nxt not in done:  # _dispatch may have taken finished outcomes off the pipes
                waiting = idle() if idle is not None else False
                self._collect(tasks, pending, done, attempts, IDLE_WAKE_SECONDS if waiting else 1.0)

    def _go_in_process(self) -> None:
        if not self._in_process:
            self._in_process = True
            log.warning("no parse worker is running; the rest of this reindex is parsed in this process")

    def _dispatch(
        self, tasks: Sequence[Task], pending: list[int], limit: int, done: dict[int, Outcome], attempts: dict[int, int]
    ) -> None:
        for w in list(self._workers):
            while len(w.queue) < PIPELINE_DEPTH and pending and pending[0] < limit:
                index = heapq.heappop(pending)
                try:
                    w.outbox.send(tasks[index])
                except (OSError, ValueError):
                    heapq.heappush(pending, index)
                    self._lost(w, tasks, pending, done, attempts)
                    break
                if not w.queue:
                    w.head_since = time.monotonic()
                w.queue.append(index)

    def _collect(
        self,
        tasks: Sequence[Task],
        pending: list[int],
        done: dict[int, Outcome],
        attempts: dict[int, int],
        longest: float = 1.0,
    ) -> None:
        now = time.monotonic()
        busy = [w for w in self._workers if w.queue]
        timeout = min((w.head_since + PARSE_TIMEOUT_SECONDS - now for w in busy), default=longest)
        # wake at least every second: a cancelled pass must not wait for a slow file
        for w in self._ready(min(longest, max(0.0, timeout))):
            if not self._receive(w, done):  # end of file: the worker is gone
                self._lost(w, tasks, pending, done, attempts)
        now = time.monotonic()
        for w in list(self._workers):
            if w.queue and now - w.head_since > PARSE_TIMEOUT_SECONDS:
                self._timed_out(w, tasks, pending, done, attempts)

    def _ready(self, seconds: float) -> list[_Worker]:
        """The workers whose pipe has something to read (an outcome, or its end), waiting up
        to ``seconds``; what multiprocessing's ``wait`` answers, with one poll set kept."""
        if not _POLL:
            by_inbox = {w.inbox: w for w in self._workers}
            return [by_inbox[inbox] for inbox in wait(list(by_inbox), timeout=seconds)]  # type: ignore[index]
        by_fd = {w.inbox.fileno(): w for w in self._workers}
        if self._poll is None or self._polled != tuple(by_fd):
            self._poll = select.poll()
            for fd in by_fd:
                self._poll.register(fd, select.POLLIN)  # a closed pipe reports POLLHUP as well
            self._polled = tuple(by_fd)
        return [by_fd[fd] for fd, _ in self._poll.poll(math.ceil(seconds * 1000))]

    def _timed_out(
        self, w: _Worker, tasks: Sequence[Task], pending: list[int], done: dict[int, Outcome], attempts: dict[int, int]
    ) -> None:
        index = w.queue[0]
        w.process.kill()
        w.process.wait(5)
        self._receive(w, done)  # it may have finished the file just before the kill
        if w.queue and w.queue[0] == index:
            w.queue.popleft()
            done[index] = Unreadable(
                tasks[index].path, f"Parsing took longer than {PARSE_TIMEOUT_SECONDS:.0f} s; the file was skipped."
            )
            log.warning("parse worker killed: %s took longer than %.0f s", tasks[index].path, PARSE_TIMEOUT_SECONDS)
        self._lost(w, tasks, pending, done, attempts, blame=False)

    def _receive(self, w: _Worker, done: dict[int, Outcome]) -> bool:
        """Take every message waiting on ``w``'s pipe; False when the pipe is closed."""
        try:
            while w.inbox.poll():
                message = w.inbox.recv()
                if isinstance(message, str) and message == READY:
                    w.ready = True
                    # the file at the head waited for the interpreter and imports, not for its
                    # parse: its clock starts now (a loaded machine boots a worker for seconds)
                    w.head_since = time.monotonic()
                    continue
                index = w.queue.popleft()
                done[index] = message
                w.head_since = time.monotonic()
        except (EOFError, OSError):
            return False
        return True

    def _lost(
        self,
        w: _Worker,
        tasks: Sequence[Task],
        pending: list[int],
        done: dict[int, Outcome],
        attempts: dict[int, int],
        blame: bool = True,
    ) -> None:
        """``w`` died or was killed: blame the file it was parsing, requeue the others, replace it."""
        self._receive(w, done)  # whatever it finished before dying still counts
        if w in self._workers:
            self._workers.remove(w)
        # its pipe broke; if it somehow runs on, it is of no use any more
        w.stop(kill=w.process.poll() is None, timeout=5)
        self.deaths += 1
        why = _exit_description(w.process.returncode)
        if blame and w.ready and w.queue:
            index = w.queue.popleft()
            attempts[index] = attempts.get(index, 0) + 1
            if attempts[index] >= ATTEMPTS_PER_FILE:
                done[index] = Unreadable(
                    tasks[index].path,
                    f"Parsing it ended the parse worker process {attempts[index]} times ({why}); the file was skipped.",
                )
                log.warning("parse worker died on %s (%s); file skipped", tasks[index].path, why)
            else:
                log.warning("parse worker died on %s (%s); trying it once more", tasks[index].path, why)
                heapq.heappush(pending, index)
        elif blame and not w.ready:
            self._start_failures += 1
            log.warning("parse worker died while starting (%s)", why)
        for index in w.queue:
            heapq.heappush(pending, index)
        w.queue.clear()
        if self._start_failures < START_FAILURES_ALLOWED:
            self._start_worker()


_POLL = hasattr(select, "poll")


def _exit_description(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"
