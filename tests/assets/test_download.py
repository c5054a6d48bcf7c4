"""The secure fetch against a real HTTPS server on loopback (self-signed, trusted via SSL_CERT_FILE).

Loopback is refused unless the host is in ``downloads.allowedHosts``; these tests reach the
server through exactly that allowance, and prove every refusal leaves no file behind.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from https_fixture import Reply, TlsServer

from local_vector_search_mcp import progress
from local_vector_search_mcp.assets.download import DownloadPolicy, address_problem, fetch_to_file
from local_vector_search_mcp.errors import InvalidArgument, KbError, UnsupportedFormat

from .conftest import image_bytes

PNG = image_bytes("PNG")
SECRET = "sig=TOPSECRET-signature"


def allow(*hosts: str, **limits: float | int) -> DownloadPolicy:
    return DownloadPolicy.from_hosts(hosts, **limits)


def refused(url: str, dest: Path, policy: DownloadPolicy, **kwargs: object) -> str:
    with pytest.raises(KbError) as info:
        fetch_to_file(url, dest, policy, **kwargs)  # type: ignore[arg-type]
    assert not dest.exists(), "a refused download must leave nothing behind"
    assert SECRET not in info.value.message and "/img" not in info.value.message
    return info.value.message


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("169.254.169.254", "link-local"),
        ("198.18.0.1", "benchmarking"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "reserved"),
        ("192.0.2.1", "not publicly routable"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("fe80::1%eth0", "link-local"),
        ("fec0::1", "site-local"),
        ("fd12:3456::1", "private"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:7f00:1::1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("2001:db8::1", "not publicly routable"),
        ("8.8.8.8", None),
        ("93.184.216.34", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_every_unsafe_address_class_is_named(address: str, problem: str | None) -> None:
    assert address_problem(address) == problem


def test_downloads_through_the_allowance(server: TlsServer, tmp_path: Path) -> None:
    server.routes["/img.png"] = Reply(body=PNG, headers={"Content-Type": "image/png"})
    got = fetch_to_file(server.url(f"/img.png?{SECRET}"), tmp_path / "x.tmp", allow("127.0.0.1"))
    assert (tmp_path / "x.tmp").read_bytes() == PNG
    assert got.size == len(PNG) and got.head == PNG[:12]
    assert server.requests[0].headers["host"] == f"127.0.0.1:{server.port}"


def test_connects_to_the_checked_address_with_the_name_as_sni_and_host(
    server: TlsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: one lookup, and the socket goes to the address that lookup returned."""
    server.routes["/img.png"] = Reply(body=PNG)
    lookups: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    real = socket.getaddrinfo

    def no_dns(host: object, *args: object, **kwargs: object) -> object:
        assert host == "127.0.0.1", f"a second DNS lookup of {host!r} happened"
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    fetch_to_file(server.url("/img.png", "rebind.test"), tmp_path / "x.tmp", allow("rebind.test"), resolver=resolver)
    assert lookups == ["rebind.test"]
    assert server.requests[0].headers["host"] == f"rebind.test:{server.port}"
    assert (tmp_path / "x.tmp").read_bytes() == PNG


def test_tls_hostname_checking_still_holds(server: TlsServer, tmp_path: Path) -> None:
    server.routes["/img.png"] = Reply(body=PNG)
    message = refused(
        server.url("/img.png", "other.test"),
        tmp_path / "x.tmp",
        allow("other.test"),
        resolver=lambda host, port: ["127.0.0.1"],
    )
    assert "certificate" in message
    assert server.requests == []


def test_an_untrusted_certificate_is_refused(
    server: TlsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE")
    server.routes["/img.png"] = Reply(body=PNG)
    assert "certificate" in refused(server.url("/img.png"), tmp_path / "x.tmp", allow("127.0.0.1"))


def test_localhost_name_works_only_when_allowed(server: TlsServer, tmp_path: Path) -> None:
    server.routes["/img.png"] = Reply(body=PNG)
    assert "this machine" in refused(server.url("/img.png", "localhost"), tmp_path / "x.tmp", DownloadPolicy())
    # localhost may resolve to ::1 first, where nothing listens: the next checked address is tried.
    fetch_to_file(server.url("/img.png", "localhost"), tmp_path / "y.tmp", allow("localhost"))
    assert (tmp_path / "y.tmp").read_bytes() == PNG


@pytest.mark.parametrize(
    ("url", "resolved", "words"),
    [
        ("https://127.0.0.1/img.png", None, "loopback"),
        ("https://[::1]/img.png", None, "loopback"),
        ("https://[::ffff:127.0.0.1]/img.png", None, "loopback"),
        ("https://intranet.test/img.png", ["10.0.0.7"], "private"),
        ("https://cloud.test/img.png", ["169.254.169.254"], "link-local"),
        ("https://mixed.test/img.png", ["8.8.8.8", "192.168.0.10"], "private"),
        ("https://sub.localhost/img.png", ["8.8.8.8"], "this machine"),
        ("http://example.com/img.png", ["8.8.8.8"], "https://"),
        ("ftp://example.com/img.png", ["8.8.8.8"], "https://"),
        ("https://user:pw@example.com/img.png", ["8.8.8.8"], "user names"),
        ("https://user@example.com/img.png", ["8.8.8.8"], "user names"),
        ("not a url", ["8.8.8.8"], "https://"),
        ("https:///img.png", ["8.8.8.8"], "host"),
        ("https://0.0.0.0/img.png", None, "has an unspecified address"),  # not "a unspecified" (H111)
        ("https://10.0.0.1/img.png", None, "has a private address"),
    ],
)
def test_refusals_before_connecting(url: str, resolved: list[str] | None, words: str, tmp_path: Path) -> None:
    def resolver(host: str, port: int) -> list[str]:
        assert resolved is not None, "an IP literal must not be resolved"
        return resolved

    message = refused(f"{url}?{SECRET}", tmp_path / "x.tmp", DownloadPolicy(), resolver=resolver)
    assert words in message
    assert list(tmp_path.iterdir()) == []


def test_allowance_is_per_host_not_per_address(server: TlsServer, tmp_path: Path) -> None:
    server.routes["/img.png"] = Reply(body=PNG)
    # 127.0.0.1 is allowed as a literal, but a name resolving to it is not.
    message = refused(
        server.url("/img.png", "rebind.test"),
        tmp_path / "x.tmp",
        allow("127.0.0.1"),
        resolver=lambda host, port: ["127.0.0.1"],
    )
    assert "loopback" in message and "allowedHosts" in message


def test_redirects_are_followed_and_rechecked(server: TlsServer, tmp_path: Path) -> None:
    for n in range(5):
        server.routes[f"/r{n}"] = Reply(302, headers={"Location": f"/r{n + 1}" if n < 4 else "/img.png"})
    server.routes["/img.png"] = Reply(body=PNG)
    fetch_to_file(server.url("/r0"), tmp_path / "ok.tmp", allow("127.0.0.1"))
    assert (tmp_path / "ok.tmp").read_bytes() == PNG
    server.routes["/r-1"] = Reply(307, headers={"Location": "/r0"})
    assert "more than 5 redirects" in refused(server.url("/r-1"), tmp_path / "x.tmp", allow("127.0.0.1"))


@pytest.mark.parametrize(
    ("location", "words"),
    [
        ("http://127.0.0.1/img.png", "https://"),
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("https://u:p@127.0.0.1/img.png", "user names"),
        ("https://localhost/img.png", "this machine"),
    ],
)
def test_a_redirect_cannot_escape_the_rules(server: TlsServer, tmp_path: Path, location: str, words: str) -> None:
    server.routes["/start"] = Reply(301, headers={"Location": location})
    assert words in refused(server.url("/start"), tmp_path / "x.tmp", allow("127.0.0.1"))
    assert len(server.requests) == 1


def test_status_errors_and_empty_bodies(server: TlsServer, tmp_path: Path) -> None:
    server.routes["/gone"] = Reply(404, b"no")
    server.routes["/empty"] = Reply(200, b"")
    server.routes["/loop"] = Reply(302)  # no Location
    assert "HTTP 404" in refused(server.url("/gone"), tmp_path / "x.tmp", allow("127.0.0.1"))
    assert "empty" in refused(server.url("/empty"), tmp_path / "x.tmp", allow("127.0.0.1"))
    assert "Location" in refused(server.url("/loop"), tmp_path / "x.tmp", allow("127.0.0.1"))


def test_size_cap_on_declared_length_and_on_streamed_bytes(server: TlsServer, tmp_path: Path) -> None:
    policy = allow("127.0.0.1", max_bytes=1000)
    server.routes["/declared"] = Reply(body=PNG + b"\0" * 2000)
    server.routes["/streamed"] = Reply(chunks=[PNG, b"\0" * 600, b"\0" * 600])
    server.routes["/exact"] = Reply(body=PNG + b"\0" * (1000 - len(PNG)))
    assert "larger than 1000 bytes" in refused(server.url("/declared"), tmp_path / "x.tmp", policy)
    assert "larger than 1000 bytes" in refused(server.url("/streamed"), tmp_path / "x.tmp", policy)
    assert fetch_to_file(server.url("/exact"), tmp_path / "ok.tmp", policy).size == 1000


def test_the_25_mib_cap_is_the_default(server: TlsServer, tmp_path: Path) -> None:
    server.routes["/big"] = Reply(headers={"Content-Length": str(26_214_401)}, chunks=[PNG])
    assert "26214400" in refused(server.url("/big"), tmp_path / "x.tmp", allow("127.0.0.1"))


def test_a_slow_server_times_out(server: TlsServer, tmp_path: Path) -> None:
    def slow(request: object) -> Reply:
        time.sleep(1.5)
        return Reply(body=PNG)

    server.routes["/slow"] = slow
    assert "in time" in refused(server.url("/slow"), tmp_path / "x.tmp", allow("127.0.0.1", read_timeout=0.3))


def test_on_head_can_stop_a_non_image_early(server: TlsServer, tmp_path: Path) -> None:
    server.routes["/page"] = Reply(chunks=[b"<!doctype html><html>", b"x" * 100_000])

    def only_images(head: bytes) -> None:
        raise UnsupportedFormat("not an image")

    with pytest.raises(UnsupportedFormat):
        fetch_to_file(server.url("/page"), tmp_path / "x.tmp", allow("127.0.0.1"), on_head=only_images)
    assert not (tmp_path / "x.tmp").exists()


def test_an_existing_destination_is_never_overwritten(server: TlsServer, tmp_path: Path) -> None:
    (tmp_path / "x.tmp").write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        fetch_to_file(server.url("/img.png"), tmp_path / "x.tmp", allow("127.0.0.1"))
    assert (tmp_path / "x.tmp").read_bytes() == b"keep"


def test_signed_urls_never_reach_the_log(server: TlsServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server.routes["/img.png"] = Reply(body=PNG)
    server.routes["/gone"] = Reply(403)
    with caplog.at_level(logging.DEBUG):
        fetch_to_file(server.url(f"/img.png?{SECRET}"), tmp_path / "x.tmp", allow("127.0.0.1"))
        with pytest.raises(InvalidArgument):
            fetch_to_file(server.url(f"/gone?{SECRET}"), tmp_path / "y.tmp", allow("127.0.0.1"))
    assert SECRET not in caplog.text and "/img.png" not in caplog.text


@pytest.mark.parametrize("url", ["https://2130706433/x.png", "https://127.1/x.png", "https://0177.0.0.1/x.png"])
def test_numeric_host_spellings_resolve_to_the_address_they_mean(url: str, tmp_path: Path) -> None:
    """inet_aton forms are not IP literals to ``ipaddress``: the (system) lookup turns them into the
    address they mean, which is checked; httpx itself refuses the octal form as an invalid URL."""
    message = refused(url, tmp_path / "x.tmp", DownloadPolicy())
    assert "loopback" in message or "not a valid" in message


def test_international_names_are_resolved_and_sent_idna_encoded(tmp_path: Path) -> None:
    seen: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        seen.append(host)
        return ["10.0.0.1"]

    refused("https://bücher.example/x.png", tmp_path / "x.tmp", DownloadPolicy(), resolver=resolver)
    assert seen == ["xn--bcher-kva.example"]


def test_the_deadline_covers_redirect_chains(server: TlsServer, tmp_path: Path) -> None:
    def slow_hop(request: object) -> Reply:
        time.sleep(0.4)
        return Reply(302, headers={"Location": "/hop"})

    server.routes["/hop"] = slow_hop
    message = refused(server.url("/hop"), tmp_path / "x.tmp", allow("127.0.0.1", deadline=1.0))
    assert "longer than 1 seconds" in message


def test_the_deadline_stops_a_server_trickling_a_small_file(server: TlsServer, tmp_path: Path) -> None:
    """Decision 689: httpx hands over 64 KiB blocks, so the deadline was looked at only when the
    body ended: a 109-byte file sent a byte each 0.1 s answered after 11 s under a 2 s limit (one
    each 29 s would have kept the call for weeks). The download hangs up at the deadline."""

    def trickle() -> Iterator[bytes]:
        for byte in PNG:
            time.sleep(0.1)
            yield bytes([byte])

    server.routes["/trickle.png"] = Reply(chunks=trickle())
    started = time.monotonic()
    message = refused(server.url("/trickle.png"), tmp_path / "x.tmp", allow("127.0.0.1", deadline=1.0))
    assert "longer than 1 seconds" in message
    assert time.monotonic() - started < 2.5  # the file takes len(PNG) / 10 seconds


def test_an_address_that_does_not_answer_the_connection_gives_way_to_the_next(
    server: TlsServer, tmp_path: Path
) -> None:
    """Decision 509: a host whose first address never answers (a dead IPv6 route) is reached at
    its next one; a connect timeout used to end the download at the first address."""
    server.routes["/img.png"] = Reply(body=PNG)
    dead = socket.socket()  # a listener whose queue is full: connections to it hang unanswered
    dead.bind(("127.0.0.2", server.port))
    dead.listen(0)
    filler = socket.create_connection(("127.0.0.2", server.port))
    try:

        def resolver(host: str, port: int) -> list[str]:
            return ["127.0.0.2", "127.0.0.1"]

        policy = allow("rebind.test", connect_timeout=0.5)
        fetch_to_file(server.url("/img.png", "rebind.test"), tmp_path / "x.tmp", policy, resolver=resolver)
        assert (tmp_path / "x.tmp").read_bytes() == PNG

        def only_dead(host: str, port: int) -> list[str]:
            return ["127.0.0.2"]

        message = refused(server.url("/img.png", "rebind.test"), tmp_path / "y.tmp", policy, resolver=only_dead)
        assert "no connection within 0.5 s" in message
    finally:
        filler.close()
        dead.close()


def test_a_download_reports_its_bytes_and_stops_when_cancelled(server: TlsServer, tmp_path: Path) -> None:
    """Under a tool call (decision 503): bytes of the Content-Length as progress, and a call its
    client cancelled stops at the next block and removes the partial file."""
    body = PNG + b"\0" * (6 * 64 * 1024)
    server.routes["/big.png"] = Reply(body=body)
    seen: list[tuple[float, float | None, str | None]] = []
    call = progress.Call(lambda done, total, message: seen.append((done, total, message)), interval=0)
    with progress.running(call):
        fetch_to_file(server.url("/big.png"), tmp_path / "x.tmp", allow("127.0.0.1"))
    assert len(seen) >= 2 and [d for d, _, _ in seen] == sorted({d for d, _, _ in seen})
    assert seen[-1][:2] == (len(body), len(body))
    assert seen[-1][2] == f"Downloaded {len(body):,} of {len(body):,} bytes"

    cancelling = progress.Call(lambda done, total, message: cancelling.cancel(), interval=0)
    with progress.running(cancelling), pytest.raises(progress.Cancelled):
        fetch_to_file(server.url("/big.png"), tmp_path / "y.tmp", allow("127.0.0.1"))
    assert not (tmp_path / "y.tmp").exists()


def test_a_cancel_stops_a_download_the_server_went_silent_on(server: TlsServer, tmp_path: Path) -> None:
    """Decision 678: the cancel was seen only between blocks, so a server that sent its headers and
    a few bytes, then nothing, kept a cancelled download (and its partial file) until the read
    timeout. The download hangs up instead: Cancelled at once, nothing left."""
    release = threading.Event()

    def silent() -> Iterator[bytes]:
        yield PNG
        release.wait(20)  # goes quiet: no more bytes until the test ends
        yield b"\0" * 64

    server.routes["/stalled.png"] = Reply(chunks=silent())
    call = progress.Call()
    threading.Timer(0.5, call.cancel).start()
    started = time.monotonic()
    try:
        with progress.running(call), pytest.raises(progress.Cancelled):
            fetch_to_file(server.url("/stalled.png"), tmp_path / "x.tmp", allow("127.0.0.1", read_timeout=15))
    finally:
        release.set()
    assert time.monotonic() - started < 5  # the read timeout is 15 s
    assert not (tmp_path / "x.tmp").exists()
