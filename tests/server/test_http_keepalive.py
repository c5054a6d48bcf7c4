"""An idle keep-alive connection outlives the clients' own idle limit (decision 213).

httpx (and so the mcp SDK's client) drops an idle pooled connection after 5 s; a server that
closes it after 5 s too races the client's next request, which then fails with a read error.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx

from .http_server import INIT, http_server

CLIENT_IDLE_LIMIT = 5.0  # httpx's default keepalive_expiry


def _request(sock: socket.socket, port: int) -> bytes:
    body = json.dumps(INIT).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock.sendall(head + body)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    headers, _, rest = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1]) for line in headers.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return headers


def test_an_idle_connection_is_still_open_after_the_clients_idle_limit(tmp_path: Path) -> None:
    assert httpx.Limits().keepalive_expiry == CLIENT_IDLE_LIMIT
    with http_server(tmp_path) as server, socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        assert _request(sock, server.port).startswith(b"HTTP/1.1 200")
        time.sleep(CLIENT_IDLE_LIMIT + 1)
        assert _request(sock, server.port).startswith(b"HTTP/1.1 200"), "the server closed the idle connection"
