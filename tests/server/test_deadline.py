"""Slow and silent HTTP clients are let go (server/deadline.py, decision 477).

uvicorn runs in a thread with :class:`DeadlineH11Protocol` and short limits; raw sockets play the
clients. Without the protocol, each of these connections stays open for as long as its client
keeps it.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from local_vector_search_mcp.server import http
from local_vector_search_mcp.server.deadline import DeadlineH11Protocol

KEEP_ALIVE = 1.0
RECEIPT = 1.0
STALL = 1.0
BIG = 12 * 1024 * 1024  # far more than the sockets' buffers hold (4 MiB at most here)
SLOW_CALL = 2.5  # longer than both: a call this long is still answered


class ShortDeadlines(DeadlineH11Protocol):
    receipt_seconds = RECEIPT
    send_stall_seconds = STALL


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] == "/slow":
        await asyncio.sleep(SLOW_CALL)
    answer = b"x" * BIG if scope["path"] == "/big" else b"got %d" % len(body)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(answer))]})
    await send({"type": "http.response.body", "body": answer})


@pytest.fixture
def port() -> Iterator[int]:
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, http=ShortDeadlines, lifespan="off", log_level="warning", timeout_keep_alive=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield server.servers[0].sockets[0].getsockname()[1]
    server.should_exit = True
    thread.join(10)


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def closed_by_server(sock: socket.socket, within: float, trickle: bytes = b"") -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds while the client sends
    ``trickle`` a byte every 0.2 s."""
    deadline = time.monotonic() + within
    sock.settimeout(0.2)
    sent = 0
    while time.monotonic() < deadline:
        try:
            if sock.recv(4096) == b"":
                return True
        except TimeoutError:
            pass
        except ConnectionResetError:
            return True
        if sent < len(trickle):
            try:
                sock.send(trickle[sent : sent + 1])
            except OSError:
                return True
            sent += 1
    return False


def answer(sock: socket.socket, body: bytes) -> bytes:
    """The response up to and including ``body`` (its headers and body may come in several reads)."""
    sock.settimeout(SLOW_CALL + 5)
    received = b""
    while not received.endswith(body):
        chunk = sock.recv(4096)
        assert chunk, received
        received += chunk
    return received


HEAD = b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 40\r\n\r\n"


def test_a_connection_that_sends_nothing_is_closed(port: int) -> None:
    with connect(port) as sock:
        assert closed_by_server(sock, KEEP_ALIVE + 3)


def test_headers_sent_a_byte_at_a_time_are_cut_off(port: int) -> None:
    with connect(port) as sock:
        # 0.2 s a byte: the headers would take 10 s; every byte restarts uvicorn's keep-alive timer.
        assert closed_by_server(sock, RECEIPT + 3, trickle=HEAD)


def test_a_body_sent_a_byte_at_a_time_is_cut_off(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(HEAD)
        assert closed_by_server(sock, RECEIPT + 3, trickle=b"x" * 40)


def test_a_body_still_arriving_after_an_early_answer_is_cut_off(port: int) -> None:
    with connect(port) as sock:
        sock.sendall(b"GET /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\nabc")
        assert closed_by_server(sock, RECEIPT + 3, trickle=b"x" * 100)


def test_requests_received_in_time_are_served_however_long_they_run(port: int) -> None:
    with connect(port) as sock:
        for path in (b"/slow", b"/x", b"/slow"):  # one kept-alive connection, answers after the limits
            sock.sendall(b"POST " + path + b" HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
            assert answer(sock, b"got 5").startswith(b"HTTP/1.1 200")
            time.sleep(KEEP_ALIVE / 2)  # idle, but within the keep-alive time
        # A body that trickles in but arrives in full within the limit is served too.
        sock.sendall(HEAD)
        for _ in range(4):
            sock.sendall(b"x" * 10)
            time.sleep(RECEIPT / 8)
        assert answer(sock, b"got 40").startswith(b"HTTP/1.1 200")


def _read_all(sock: socket.socket, slow_for: float = 0.0) -> int:
    """Bytes read until the server ends the connection or the whole answer is in; for the first
    ``slow_for`` seconds at about 250 kB/s."""
    sock.settimeout(10)
    slow_until = time.monotonic() + slow_for
    total = 0
    while total < BIG:
        slow = time.monotonic() < slow_until
        try:
            chunk = sock.recv(16384 if slow else 1 << 20)
        except ConnectionResetError:
            break
        if not chunk:
            break
        total += len(chunk)
        if slow:
            time.sleep(0.06)
    return total


def _small_receive_buffer(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    sock.connect(("127.0.0.1", port))
    return sock


def test_an_answer_nobody_reads_is_dropped(port: int) -> None:
    with _small_receive_buffer(port) as sock:
        sock.sendall(b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
        time.sleep(STALL + 3)  # the client reads nothing
        assert _read_all(sock) < BIG  # the server gave up and closed


def test_a_slow_reader_gets_the_whole_answer(port: int) -> None:
    with _small_receive_buffer(port) as sock:
        sock.sendall(b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
        # Far slower than the server writes, for several stall times: the kernel's send queue (up
        # to 4 MiB) empties for seconds before the server's own buffer shrinks at all.
        assert _read_all(sock, slow_for=4 * STALL) >= BIG


def test_the_http_server_uses_the_protocol() -> None:
    config = http.uvicorn_config(app)
    assert config.http is DeadlineH11Protocol
    assert config.timeout_keep_alive == http.KEEP_ALIVE_SECONDS  # the wait for a first byte, too
