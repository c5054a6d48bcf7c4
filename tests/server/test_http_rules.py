"""Every HTTP status rule, checked with raw httpx against a real server process.

Each test fails when its rule is removed: the same request without the offending part succeeds.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.server.http import TOKEN_ENV, _bind, http_options

from .http_server import HEADERS, INIT, http_server

TOKEN = "team-token-0123456789abcdef"


def post(url: str, body: object = INIT, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(url, content=content, headers={**HEADERS, **headers}, timeout=30)


def test_bearer_token_is_required_and_compared(tmp_path: Path) -> None:
    with http_server(tmp_path, env={TOKEN_ENV: TOKEN}) as server:
        missing = post(server.url)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        assert missing.json()["error"]["message"].startswith("Missing or wrong bearer token")
        assert post(server.url, authorization=f"Bearer {TOKEN[:-1]}").status_code == 401
        assert post(server.url, authorization=f"Bearer {TOKEN}0").status_code == 401
        assert post(server.url, authorization=f"Basic {TOKEN}").status_code == 401
        # Every method and path is behind the token, not only POST /mcp.
        assert httpx.get(server.url, headers={"accept": "text/event-stream"}).status_code == 401
        assert httpx.get(server.url.replace("/mcp", "/other")).status_code == 401
        ok = post(server.url, authorization=f"Bearer {TOKEN}")
        assert ok.status_code == 200, ok.text
        assert "mcp-session-id" in ok.headers
    assert TOKEN not in server.log.read_text()  # never logged


def test_token_file_from_the_configuration(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    with http_server(tmp_path, config={"server": {"tokenFile": str(token_file)}}) as server:
        assert post(server.url).status_code == 401
        assert post(server.url, authorization=f"Bearer {TOKEN}").status_code == 200


def test_host_header_must_name_this_server(tmp_path: Path) -> None:
    with http_server(tmp_path, config={"server": {"allowedHosts": ["kb.example.com"]}}) as server:
        rebinding = post(server.url, host=f"evil.example:{server.port}")
        assert rebinding.status_code == 421
        assert "server.allowedHosts" in rebinding.json()["error"]["message"]
        assert post(server.url, host=f"127.0.0.1:{server.port + 1}").status_code == 421
        assert post(server.url, host=f"localhost:{server.port}").status_code == 200
        assert post(server.url, host="kb.example.com").status_code == 200  # behind a reverse proxy


def test_origin_must_be_loopback_or_configured(tmp_path: Path) -> None:
    with http_server(tmp_path, config={"server": {"allowedOrigins": ["https://ide.example.com"]}}) as server:
        assert post(server.url, origin="http://evil.example").status_code == 403
        assert post(server.url, origin="null").status_code == 403
        assert post(server.url, origin="http://localhost:6274").status_code == 200
        assert post(server.url, origin="https://ide.example.com").status_code == 200


def test_no_cors_headers_unless_configured(tmp_path: Path) -> None:
    with http_server(tmp_path) as server:
        response = post(server.url, origin="http://localhost:5173")
        assert response.status_code == 200
        assert "access-control-allow-origin" not in response.headers
    cors = {"server": {"corsOrigins": ["https://ide.example.com"]}}
    with http_server(tmp_path, config=cors) as server:
        preflight = httpx.options(
            server.url,
            headers={
                "origin": "https://ide.example.com",
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type, mcp-session-id",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://ide.example.com"
        response = post(server.url, origin="https://ide.example.com")
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "https://ide.example.com"
        assert "mcp-session-id" in response.headers["access-control-expose-headers"].lower()


def test_cors_origins_in_any_accepted_spelling_get_cors_headers(tmp_path: Path) -> None:
    """The guard accepted these spellings after normalising them (decision 99) but the CORS
    middleware compared the browser's serialised origin with the raw strings, so the preflight
    got 400 and the browser never sent the request (decision 1031)."""
    spellings = ["https://ide.example.com/", "https://Other.Example.com", "https://third.example.com:443"]
    with http_server(tmp_path, config={"server": {"corsOrigins": spellings}}) as server:
        for origin in ("https://ide.example.com", "https://other.example.com", "https://third.example.com"):
            preflight = httpx.options(
                server.url,
                headers={
                    "origin": origin,
                    "access-control-request-method": "POST",
                    "access-control-request-headers": "content-type, mcp-session-id",
                },
            )
            assert preflight.status_code == 200, (origin, preflight.text)
            assert preflight.headers["access-control-allow-origin"] == origin
            response = post(server.url, origin=origin)
            assert response.status_code == 200 and response.headers["access-control-allow-origin"] == origin


def _padded_init(size: int) -> bytes:
    body = json.dumps({**INIT, "params": {**INIT["params"], "pad": ""}}).encode()  # type: ignore[dict-item]
    return body.replace(b'"pad": ""', b'"pad": "' + b"x" * (size - len(body)) + b'"')


def test_request_bodies_over_the_limit_get_413(tmp_path: Path) -> None:
    with http_server(tmp_path, config={"server": {"maxRequestBytes": 4096}}) as server:
        assert post(server.url, _padded_init(4000)).status_code == 200
        assert post(server.url, _padded_init(5000)).status_code == 413

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts what arrives
            body = _padded_init(5000)
            for i in range(0, len(body), 1000):
                yield body[i : i + 1000]

        chunked = httpx.post(server.url, content=chunks(), headers=HEADERS)
        assert chunked.status_code == 413


def test_the_default_limit_is_4_mib(tmp_path: Path) -> None:
    with http_server(tmp_path) as server:
        assert post(server.url, _padded_init(4 * 1024 * 1024 - 64)).status_code == 200
        assert post(server.url, _padded_init(4 * 1024 * 1024 + 64)).status_code == 413


def test_an_announced_huge_body_is_refused_before_it_arrives(tmp_path: Path) -> None:
    with http_server(tmp_path) as server, socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        # 1 GiB announced, 10 bytes sent: the answer must come without waiting for the rest.
        sock.sendall(
            (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nContent-Length: {1 << 30}\r\n\r\n0123456789"
            ).encode()
        )
        assert sock.recv(200).startswith(b"HTTP/1.1 413")


def test_malformed_json_is_a_parse_error_and_other_sessions_carry_on(tmp_path: Path) -> None:
    with http_server(tmp_path) as server:
        opened = post(server.url)
        session = opened.headers["mcp-session-id"]
        headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **headers)
        for bad in (b"{not json", b'{"jsonrpc": "2.0", "id": 2, "method": ', b"\xff\xfe"):
            refused = post(server.url, bad)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == -32700
            assert post(server.url, bad, **headers).status_code == 400  # inside the session, too
        listed = post(server.url, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, **headers)
        assert listed.status_code == 200
        assert '"kb_search"' in listed.text


def test_the_transports_own_refusals_are_json_rpc_errors_like_stdio(tmp_path: Path) -> None:
    """A wrong Content-Type and a body over the limit were plain text, an invalid message a
    -32602 with a pydantic dump; stdio answers -32600 (decisions 289, 364)."""
    with http_server(tmp_path, config={"server": {"maxRequestBytes": 4096}}) as server:
        opened = post(server.url)
        headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **headers)
        call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
        for content_type in ("text/plain", None):
            sent = {**HEADERS, **headers}
            sent.pop("content-type", None)
            if content_type:
                sent["content-type"] = content_type
            refused = httpx.post(server.url, content=call, headers=sent)
            assert refused.status_code == 400 and refused.headers["content-type"] == "application/json"
            error = refused.json()["error"]
            assert error["code"] == -32600 and "Content-Type must be application/json" in error["message"]
        big = post(server.url, _padded_init(5000), **headers)
        assert big.status_code == 413 and big.json()["error"]["code"] == -32600
        assert "4096 bytes (server.maxRequestBytes)" in big.json()["error"]["message"]
        for bad in ([{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}], [], {"hello": 1}, "x", 5):
            refused = post(server.url, bad, **headers)
            assert refused.status_code == 400, bad
            assert refused.json() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": refused.json()["error"]["message"]},
            }
            assert refused.json()["error"]["message"].startswith("Invalid Request: "), refused.text
        deep = b'{"k": ' * 250 + b"1" + b"}" * 250  # valid JSON, deeper than the parser goes (decision 366)
        refused = post(
            server.url, b'{"jsonrpc": "2.0", "id": 5, "method": "x", "params": {"m": ' + deep + b"}}", **headers
        )
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32600
        assert "deeper than the JSON parser's limit" in refused.json()["error"]["message"]
        listed = post(server.url, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, **headers)
        assert listed.status_code == 200 and '"kb_search"' in listed.text


def test_binding_a_non_loopback_address_without_a_token_exits_1(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert out.returncode == 1
    assert "Refusing to listen on 0.0.0.0" in out.stderr
    assert "LOCAL_VECTOR_SEARCH_MCP_TOKEN" in out.stderr


def test_a_bracketed_ipv6_host_is_bound_as_the_address_it_names(tmp_path: Path) -> None:
    """`--host [::1]`, as URLs write it, passed the loopback check and then failed to bind with
    "Name or service not known" (decision 753)."""
    for given in ("[::1]", " ::1 "):
        settings = load_settings(
            CliOptions(project_root=str(tmp_path), embedding_provider="none", transport="http", host=given, port=0),
            environ={},
        )
        options = http_options(settings, {})
        assert options.host == "::1"
        with contextlib.closing(_bind(options.host, 0)) as sock:
            assert sock.getsockname()[0] == "::1"


def test_a_stateless_server_refuses_get_and_delete_with_405(tmp_path: Path) -> None:
    """In stateless mode the SDK answered a GET with an event stream nothing can ever write to,
    and held it and its connection for as long as the client waited (ten minutes in the audit);
    MCP lets a server without such a stream answer 405 (decision 758)."""
    with http_server(tmp_path, config={"server": {"stateless": True}, "embedding": {"provider": "none"}}) as server:
        for method in ("GET", "DELETE"):
            refused = httpx.request(method, server.url, headers={"accept": "text/event-stream"}, timeout=10)
            assert refused.status_code == 405 and refused.headers["allow"] == "POST", (method, refused.text)
            assert "stateless (server.stateless)" in refused.json()["error"]["message"]
        listed = post(server.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert listed.status_code == 200 and '"kb_search"' in listed.text


def test_a_get_with_last_event_id_opens_a_fresh_stream(tmp_path: Path) -> None:
    """This server keeps no event history, so there is nothing to resume: the SDK's transport
    returned without answering and uvicorn sent a plain-text 500 ("ASGI callable returned without
    starting response"), logged with status 0. MCP lets such a server ignore Last-Event-ID
    (decision 1031)."""
    with http_server(tmp_path) as server:
        opened = post(server.url)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        assert post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **session).status_code == 202
        resume = {**session, "accept": "text/event-stream", "last-event-id": "0"}
        with httpx.stream("GET", server.url, headers=resume, timeout=10) as stream:
            assert stream.status_code == 200, stream.read()
            assert stream.headers["content-type"].startswith("text/event-stream")
        assert post(server.url, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, **session).status_code == 200
    log = server.log.read_text()
    assert "without starting response" not in log and " GET /mcp 200 " in log, log


def test_a_taken_port_exits_1_with_a_message(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "local_vector_search_mcp", "--transport", "http", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
            timeout=60,
        )
    assert out.returncode == 1
    assert f"Cannot listen on 127.0.0.1:{port}" in out.stderr


def test_one_log_line_per_request_without_arguments(tmp_path: Path) -> None:
    with http_server(tmp_path) as server:
        opened = post(server.url)
        headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "kb_search", "arguments": {"request": {"query": "secret-query-words"}}},
        }
        assert post(server.url, call, **headers).status_code == 200
    log = server.log.read_text()
    lines = [line for line in log.splitlines() if " POST /mcp " in line]
    assert len(lines) == 2, log
    assert " POST /mcp 200 " in lines[1]
    assert "secret-query-words" not in log


def test_an_unsupported_protocol_version_header_is_named(tmp_path: Path) -> None:
    """The transport's rule: 400 for an MCP-Protocol-Version the server does not speak. The SDK
    gave its 2026-07-28 entry every unknown value, which answered "params._meta must be an object
    carrying the required ... envelope keys", inside a session too (decision 476)."""
    with http_server(tmp_path) as server:
        opened = post(server.url)
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, **session)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        for version in ("1999-01-01", "", "2025-6-18", "latest"):
            for headers in ({}, session):
                refused = post(server.url, listing, **headers, **{"mcp-protocol-version": version})
                assert refused.status_code == 400, refused.text
                error = refused.json()["error"]
                assert error["code"] == -32600, error
                assert error["message"].startswith(f"Unsupported MCP-Protocol-Version {version!r}"), error
                assert "2025-06-18" in error["message"]
        for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
            served = post(server.url, listing, **session, **{"mcp-protocol-version": version})
            assert served.status_code == 200 and '"kb_search"' in served.text, (version, served.text)
        assert post(server.url, listing, **session).status_code == 200  # absent: 2025-03-26 assumed


def test_a_content_type_in_any_case_is_json(tmp_path: Path) -> None:
    """Media types are case-insensitive (RFC 9110 8.3.1); the transport refused ``Application/Json``
    with 415 (decision 677)."""
    with http_server(tmp_path) as server:
        for content_type in ("Application/Json", "APPLICATION/JSON; charset=UTF-8"):
            answer = post(server.url, **{"content-type": content_type})
            assert answer.status_code == 200, (content_type, answer.text)
        assert post(server.url, **{"content-type": "text/plain"}).status_code in (400, 415)  # still refused


def test_a_client_that_hangs_up_mid_body_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """Decision 677: the transport logged ERROR with a ClientDisconnect traceback and the request
    line said 500, for something no server can prevent."""
    with http_server(tmp_path) as server:
        opened = post(server.url)
        host, port = server.url.split("//")[1].split("/")[0].rsplit(":", 1)
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nmcp-session-id: {opened.headers['mcp-session-id']}\r\n"
            "mcp-protocol-version: 2025-06-18\r\nContent-Length: 1000\r\n\r\n"
        )
        with socket.create_connection((host, int(port))) as hanging:
            hanging.sendall(head.encode() + b'{"jsonrpc":"2.0","id":2,"method":"ping"}')  # 1000 promised
        for _ in range(100):  # the request line is written once the transport gave up on the body
            if " POST /mcp 499 " in server.log.read_text():
                break
            time.sleep(0.05)
        assert post(server.url).status_code == 200  # the server carries on
    log = server.log.read_text()
    assert " POST /mcp 499 " in log, log
    assert "Traceback" not in log and "ClientDisconnect" not in log and " 500 " not in log, log
