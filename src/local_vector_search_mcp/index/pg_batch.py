"""A PostgreSQL write batch: documents sent one after another without waiting (decision 680).

Each document is still its own transaction (its advisory lock, the term counts' lock, its rows,
its commit), as without a batch; what the batch changes is that the writer does not wait for
the server's answer to one document before it sends the next. They go down one pipeline on a
session of the batch's own, and the batch waits once, at :meth:`PipelinedBatch.flush` (the
indexer flushes after 64 files or 50 ms, as SQLite's batch commits, decision 250). A cold index
of opensearch-docs waited about 16 ms a document for three round trips, most of it for a core to
run the server's backend and then the writer again on a loaded machine.

A failure anywhere in a window (a document's statement refused, the session lost) leaves the
documents before it committed, the failing one rolled back and, since a pipeline skips the rest
until its sync, the ones after it unwritten. The batch then drops its session and writes every
document of the window again, one at a time and waiting for each, as without a batch: the
committed ones are replaced by the same rows, one that fails again keeps its previous revision
and takes no other with it, and the first such error is raised once the others are written. An
error of the server itself (a lost session: a restart) is tried once more on a new session, then
raised at once, the rest of the window left for the next pass (the others would wait for it too).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, suppress
from dataclasses import dataclass
from typing import Any

import psycopg


@dataclass(slots=True)
class Sent:
    """A document whose transaction is in the pipeline: how to send it again (``redo``)."""

    path: str
    redo: Callable[[], object]


class PipelinedBatch:
    """The :class:`~.port.WriteBatch` of :class:`~.postgres.PostgresStore`.

    ``connect`` opens the batch's session (kept across windows, dropped after a failure);
    ``hold`` (the indexer's writer gate) is held from a window's first document to its flush, so
    other writers of this process keep the order of their writes with the batch's, as on SQLite.
    ``set_active`` tells the store whether to route this thread's document writes here (not while
    a window is written again)."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        hold: AbstractContextManager[Any] | None,
        set_active: Callable[[PipelinedBatch | None], None],
    ) -> None:
        self._connect = connect
        self._hold = hold
        self._set_active = set_active
        self._conn: psycopg.Connection[Any] | None = None
        self._pipeline: psycopg.Pipeline | None = None
        self._in_pipeline = ExitStack()
        self._sent: list[Sent] = []
        self._release = ExitStack()
        self.since = 0.0
        # whether the ``vectors`` table exists, asked once per window (``None``: not yet)
        self.vectors: bool | None = None

    @property
    def files(self) -> int:
        return len(self._sent)

    @property
    def age(self) -> float:
        return time.monotonic() - self.since if self._sent else 0.0

    def holds(self, path: str) -> bool:
        """Whether a document at ``path`` is sent and not yet confirmed."""
        return any(s.path == path for s in self._sent)

    def send(
        self, path: str, statements: Callable[[psycopg.Connection[Any]], object], redo: Callable[[], object]
    ) -> None:
        """Send one document's transaction: ``statements`` queues its statements on the batch's
        session, between this batch's ``begin`` and ``commit``; ``redo`` writes it alone."""
        conn = self._session()  # a refused connection raises here, with nothing sent
        if not self._sent:
            with ExitStack() as held:
                if self._hold is not None:
                    held.enter_context(self._hold)
                self._release = held.pop_all()
            self.since = time.monotonic()
        self._sent.append(Sent(path, redo))
        try:
            conn.execute(b"begin")
            statements(conn)
            conn.execute(b"commit")
        except psycopg.Error:
            self._recover()

    def flush(self) -> None:
        """Wait for every sent document's commit; after a failure, write the window again one by one
        (the first document that fails again raises its error)."""
        if not self._sent:
            self.vectors = None
            return
        try:
            if self._pipeline is not None:
                self._pipeline.sync()
        except psycopg.Error:
            self._recover()
        else:
            self._done()

    def close(self) -> None:
        """Flush, then end the session (the batch's context exits)."""
        try:
            self.flush()
            self._publish_counts()
        finally:
            self._drop()

    def _publish_counts(self) -> None:
        """Have the server count this session's row changes in ``pg_stat_all_tables`` now.

        A backend reports them at most once a second, and at exit only after the client has
        closed: the pass's next step, whether to analyze (``PostgresStore._analyze_due``, decision
        567), read the view on another session and could miss a whole pass's rewrites."""
        conn = self._conn
        if conn is None or conn.closed or conn.info.server_version < 150000:
            return
        with suppress(psycopg.Error):  # statistics only: a failure here loses no write
            conn.execute(b"select pg_stat_force_next_flush()")
            if self._pipeline is not None:
                self._pipeline.sync()  # the server flushes as it goes idle, before it answers

    def _session(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            conn = self._connect()
            self._pipeline = self._in_pipeline.enter_context(conn.pipeline())
            self._conn = conn
        return self._conn

    def _recover(self) -> None:
        """Drop the session (the server rolls back its open transaction), then write the window
        again, waiting for each document."""
        self._drop()
        sent, self._sent = self._sent, []
        self._set_active(None)
        failed: psycopg.Error | None = None
        try:
            for each in sent:
                for attempt in (1, 2):
                    try:
                        each.redo()
                        break
                    except psycopg.OperationalError:
                        # the server, not the document (a restart ends every session): once more on
                        # a new session, as the store's calls retry (decision 499), else the pass
                        # stops here and the rest of the window waits for the next pass
                        if attempt == 2:
                            raise
                    except psycopg.Error as exc:
                        failed = failed or exc  # this document's own: the others are written first
                        break
        finally:
            self._set_active(self)
            self._done()
        if failed is not None:
            raise failed

    def _done(self) -> None:
        self._sent.clear()
        self.vectors = None
        self._release.close()

    def _drop(self) -> None:
        """End the session. After a failure it is closed first: nothing more is sent, and the
        pipeline's exit (a sync on a closed session) fails, which is expected."""
        conn, self._conn, self._pipeline = self._conn, None, None
        if conn is not None:
            if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                conn.close()
            with suppress(psycopg.Error):
                self._in_pipeline.close()
            conn.close()
