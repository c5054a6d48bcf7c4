"""HTTP/1.1 with a deadline for receiving each request (decision 477).

uvicorn times out nothing while a request arrives: its keep-alive timer runs only between a
response and the next request's first byte, and no timer at all runs on a fresh connection
(uvicorn issue 157, "--timeout-request-start", is still open). A client that opens a connection
and sends nothing, stops halfway through its headers, or sends its body a byte a second held a
socket forever; enough of them (a few hundred at a 1024-descriptor limit) and the server could
accept nobody else, and could open no file for anyone's tool call, until they left.

This protocol closes a connection that sends no byte within the keep-alive time (as an idle
kept-alive one is closed, decision 213) and one whose request, headers and body, is not received
in full within :data:`RECEIPT_SECONDS` of its first byte. Once a request has arrived, a call that
runs for minutes is never cut.

The answer is timed the other way round (decision 478): uvicorn hands a whole answer to the
socket's buffer at once, so a client that stopped reading (a hung process that keeps its socket)
held all of it (about 32 MB for a kb_download_file of 20 MiB) for as long as it stayed connected. A
connection whose buffered answer has not shrunk by :data:`SEND_MIN_PROGRESS` in
:data:`SEND_STALL_SECONDS` is closed; a slow reader keeps its connection.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    import fcntl
    import termios
except ImportError:  # Windows: the send queue is not looked at
    pass

__all__ = ["RECEIPT_SECONDS", "DeadlineH11Protocol"]

log = logging.getLogger("local_vector_search_mcp.http")

# Enough for a body of server.maxRequestBytes' default (4 MiB) at about 0.5 Mbit/s, or 25 MiB at
# about 3.5 Mbit/s; a reverse proxy in front buffers the body and sends it at once.
RECEIPT_SECONDS = 60.0

# As nginx's send_timeout: the time between two reads by the client, not for the whole answer.
SEND_STALL_SECONDS = 60.0
# What counts as a read in that time. A client that reads nothing still takes the last few KiB
# its socket's receive buffer has room for, after the check began: that is no reader (measured:
# 2 KiB, which kept 3 of 5 such connections for a second minute).
SEND_MIN_PROGRESS = 64 * 1024

_RECEIVING = (h11.IDLE, h11.SEND_BODY)


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with the connection closed when a request takes too long to arrive
    or its answer is not read."""

    receipt_seconds = RECEIPT_SECONDS
    send_stall_seconds = SEND_STALL_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        # A fresh connection waits for its first byte no longer than an idle kept-alive one.
        self._arm(self.timeout_keep_alive, "no request")

    def data_received(self, data: bytes) -> None:
        receiving = self.conn.their_state in _RECEIVING
        if receiving and (self._deadline is None or self._waiting_for_first_byte):
            self._arm(self.receipt_seconds, "request not received in full")
        super().data_received(data)
        self._disarm_when_received()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # A pipelined request may already be partly buffered; otherwise uvicorn's keep-alive
        # timer now watches the idle connection.
        if self.conn.their_state in _RECEIVING and self.conn.trailing_data[0]:
            self._arm(self.receipt_seconds, "request not received in full")
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._stop_watching_writes()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._stall is None:
            self._watch_writes(self._unsent())

    def resume_writing(self) -> None:
        self._stop_watching_writes()
        super().resume_writing()

    def _watch_writes(self, buffered: int) -> None:
        self._stall = self.loop.call_later(self.send_stall_seconds, self._check_writes, buffered)

    def _check_writes(self, buffered: int) -> None:
        self._stall = None
        # A closing transport still waits for its buffer to drain (uvicorn's keep-alive timer runs
        # from when the answer was handed over, not sent): it is checked all the same.
        if not self.flow.write_paused:
            return
        now = self._unsent()
        if now <= buffered - SEND_MIN_PROGRESS:  # the client read: a slow reader, not a gone one
            self._watch_writes(now)
            return
        client: Any = self.client or ("-", 0)
        log.info("%s closed: answer not read for %g s (%d bytes waiting)", client[0], self.send_stall_seconds, now)
        self.transport.abort()  # close() would wait for the buffer to drain, which is what never happens

    def _unsent(self) -> int:
        """Bytes of the answer the client has not taken yet: those still in our buffer and, where
        the system tells (Linux), those in the socket's send queue. The kernel's queue holds a few
        MiB on its own, and a slow reader empties it for many seconds before our buffer shrinks."""
        buffered = self.transport.get_write_buffer_size()
        sock = self.transport.get_extra_info("socket")
        try:
            queued = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]
        except (OSError, AttributeError, ValueError, NameError):
            queued = 0  # not Linux: our buffer alone
        return int(buffered) + int(queued)

    def _stop_watching_writes(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _disarm_when_received(self) -> None:
        # Still receiving after an early answer (a 413 or 401 sent before the body ended) stays
        # timed: uvicorn's keep-alive timer is reset by every byte and would never fire.
        if self.conn.their_state not in _RECEIVING:
            self._disarm()

    def _arm(self, seconds: float, reason: str) -> None:
        self._disarm()
        self._waiting_for_first_byte = reason == "no request"
        self._deadline = self.loop.call_later(seconds, self._expired, reason, seconds)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self, reason: str, seconds: float) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        client: Any = self.client or ("-", 0)
        log.info("%s closed: %s within %g s", client[0], reason, seconds)
        self.transport.close()
