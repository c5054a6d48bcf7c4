"""The HTTP front door's rules, one table each (the HTTP tests prove they are wired in)."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest
from starlette.types import Message, Receive, Scope, Send

from local_vector_search_mcp.config import CliOptions, ConfigError, Settings, load_settings
from local_vector_search_mcp.server.guard import HostRule, OriginRule, RequestGuard, bearer_matches, is_loopback_host
from local_vector_search_mcp.server.http import TOKEN_ENV, http_options

TOKEN = "s3cret-token-0123456789"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("myhost.lan", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("127.0.0.1:8081", True),
        ("localhost:8081", True),
        ("LOCALHOST:8081", True),
        ("[::1]:8081", True),
        ("kb.example.com", True),  # configured without a port: any port
        ("kb.example.com:443", True),
        ("docs.internal:9000", True),  # configured with its port
        ("docs.internal:9001", False),
        ("docs.internal", False),
        ("127.0.0.1:9999", False),  # a loopback name on another port is another server
        ("localhost", False),  # no port means 80
        ("evil.example:8081", False),  # DNS rebinding: the attacker's name
        ("evil.example", False),
        ("LOCALHOST.:8081", True),  # the fully qualified form of a loopback name (decision 619)
        ("kb.example.com.", True),
        ("evil.example.:8081", False),
        ("localhost..:8081", False),
        (".:8081", False),
        ("::1", False),  # malformed: a bare IPv6 address
        ("localhost:notaport", False),
        ("", False),
        (None, False),
    ],
)
def test_host_rule(header: str | None, allowed: bool) -> None:
    rule = HostRule.build("127.0.0.1", 8081, ["kb.example.com", "docs.internal:9000"])
    assert rule.allows(header) is allowed


def test_host_rule_names_a_specific_bound_address_but_not_a_wildcard() -> None:
    assert HostRule.build("192.168.1.20", 8081, []).allows("192.168.1.20:8081")
    wildcard = HostRule.build("0.0.0.0", 8081, [])
    assert not wildcard.allows("0.0.0.0:8081")
    assert wildcard.allows("localhost:8081")


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        (None, True),  # not a browser
        ("http://localhost:6274", True),  # the Inspector's web UI
        ("http://localhost.:6274", True),  # its fully qualified form (decision 619)
        ("http://evil.example.:6274", False),
        ("http://127.0.0.1", True),
        ("https://[::1]:3000", True),
        ("https://ide.example.com", True),
        ("https://IDE.example.com:443", True),  # default port and case normalised
        ("https://ide.example.com:8443", False),
        ("http://ide.example.com", False),  # another scheme is another origin
        ("http://evil.example", False),
        ("null", False),  # sandboxed frames and file:// pages
        ("http://localhost.evil.example", False),
        ("", False),
    ],
)
def test_origin_rule(header: str | None, allowed: bool) -> None:
    assert OriginRule.build(["https://ide.example.com"]).allows(header) is allowed


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        (f"Bearer {TOKEN}", True),
        (f"bearer {TOKEN}", True),
        (f"Bearer {TOKEN}x", False),
        (f"Bearer {TOKEN[:-1]}", False),
        (f"Basic {TOKEN}", False),
        (TOKEN, False),
        ("Bearer ", False),
        ("", False),
        (None, False),
    ],
)
def test_bearer(header: str | None, ok: bool) -> None:
    assert bearer_matches(header, TOKEN) is ok


def _settings(tmp_path: Path, **server: object) -> Settings:
    import yaml

    config = tmp_path / "c.yml"
    config.write_text(yaml.safe_dump({"server": {"transport": "http", **server}}))
    return load_settings(CliOptions(config=str(config), project_root=str(tmp_path)), environ={})


def test_token_from_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(f"  file-{TOKEN}\n")
    settings = _settings(tmp_path, tokenFile="token")
    assert http_options(settings, {}).token == f"file-{TOKEN}"
    assert http_options(settings, {TOKEN_ENV: TOKEN}).token == TOKEN
    assert http_options(settings, {TOKEN_ENV: " "}).token == f"file-{TOKEN}"


@pytest.mark.parametrize(
    "token",
    [
        "short",
        "has space inside-0123456789",
        "ctrl\x01-0123456789abcdef",
        "nbsp\xa0inside-0123456789",
        # Accepted once, then never matched: httpx cannot send it, curl's UTF-8 bytes are read as
        # Latin-1 (decision 1031).
        "pässwörd-für-das-team-2024",
        "token-\u2603-0123456789abcdef",
    ],
)
def test_weak_or_malformed_tokens_refuse_to_start(tmp_path: Path, token: str) -> None:
    with pytest.raises(ConfigError, match="at least 16 visible ASCII characters") as refused:
        http_options(_settings(tmp_path), {TOKEN_ENV: token})
    assert token not in str(refused.value)


def test_a_token_of_any_visible_ascii_starts(tmp_path: Path) -> None:
    token = "!#$%&'*+-.^_`|~0123456789azAZ/=\"<>"
    assert http_options(_settings(tmp_path), {TOKEN_ENV: token}).token == token
    assert bearer_matches(f"Bearer {token}", token)


def test_a_request_the_application_never_answers_is_logged_500(caplog: pytest.LogCaptureFixture) -> None:
    """The SDK's transport once returned without starting a response (a GET with Last-Event-ID);
    uvicorn answered 500 and the guard's line said status 0 (decision 1031)."""

    async def silent(scope: Scope, receive: Receive, send: Send) -> None:
        return None

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        raise AssertionError(f"nothing should be sent: {message}")

    guard = RequestGuard(silent, hosts=HostRule.build("127.0.0.1", 8081, []), origins=OriginRule.build([]), token=None)
    scope = {"type": "http", "method": "GET", "path": "/mcp", "headers": [(b"host", b"127.0.0.1:8081")]}
    with caplog.at_level(logging.INFO, logger="local_vector_search_mcp.http"):
        anyio.run(guard, scope, receive, send)
    assert [r.getMessage().split()[3] for r in caplog.records] == ["500"], caplog.text


def test_a_missing_token_file_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="could not be read"):
        http_options(_settings(tmp_path, tokenFile="nope"), {})


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "myhost.lan"])
def test_non_loopback_without_token_refuses_to_start(tmp_path: Path, host: str) -> None:
    with pytest.raises(ConfigError, match="needs a bearer token"):
        http_options(_settings(tmp_path, host=host), {})
    assert http_options(_settings(tmp_path, host=host), {TOKEN_ENV: TOKEN}).token == TOKEN


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("allowedOrigins", ["ide.example.com"], "must be an origin"),
        ("corsOrigins", ["https://ide.example.com/path"], "must be an origin"),
        ("allowedHosts", ["http://kb.example.com/"], "must be a host name"),
        ("transport", "carrier-pigeon", "transport"),
        ("port", 70000, "port"),
        ("maxRequestBytes", 10, "maxRequestBytes"),
    ],
)
def test_invalid_server_keys(tmp_path: Path, key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _settings(tmp_path, **{key: value})


def test_a_host_header_whose_port_is_not_ascii_digits_is_refused() -> None:
    # `²` is a digit to str.isdigit but not to int(): the guard raised, and uvicorn answered 500
    rule = HostRule.build("127.0.0.1", 8765, [])
    assert rule.allows(b"localhost:\xb2".decode("latin-1")) is False
    assert rule.allows("localhost:8765") is True
