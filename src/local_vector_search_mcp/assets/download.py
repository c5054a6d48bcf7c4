"""The secure HTTPS fetch behind kb_save_image (contract §11.7).

Hostile URLs are the threat: an agent can be talked into passing any URL, so a download
must not become a way to reach this machine or its network (SSRF), nor to fill the disk.

* HTTPS only, no user-info, no ``localhost`` names; GET only, no cookies, no proxies.
* The host is resolved once and **every** address checked (loopback, private, link-local,
  CGNAT, benchmark, multicast, reserved, unspecified; IPv4-mapped, 6to4 and NAT64 IPv6 are
  unwrapped first). The connection then goes to a checked address literally: the request
  URL carries the IP, the original name travels as ``Host`` and as the TLS ``sni_hostname``
  (a public httpcore extension), so the certificate is still verified against the name and
  no second DNS lookup can rebind it.
* Redirects (301/302/303/307/308) are followed by hand, at most five, each target checked
  the same way; ``http://`` is never followed.
* The body streams into a file created with ``O_EXCL``; the 25 MiB cap is enforced on the
  declared ``Content-Length`` and again on the bytes received, plus connect/read timeouts
  and an overall deadline. The file is removed on every failure.
* ``downloads.allowedHosts`` lifts the private-address refusal for the listed names or IP
  literals only (matched against the URL's host, never against resolved addresses);
  everything else still applies.
* URLs are signed secrets: messages name at most the host, never the URL, its path or
  query, and httpx's own request log is silenced.

Certificates are checked against the system trust store, or only ``SSL_CERT_FILE`` when
that is set.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from .. import progress
from ..errors import InvalidArgument
from .formats import MAX_BYTES, SIGNATURE_BYTES

__all__ = [
    "DownloadPolicy",
    "Downloaded",
    "Resolver",
    "address_problem",
    "fetch_to_file",
    "system_resolver",
    "trust_context",
]

# httpx logs every request line (with the signed query) at INFO: never let it reach a log.
for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).setLevel(logging.WARNING)

Resolver = Callable[[str, int], list[str]]
"""``(host, port) -> addresses``; swapped in tests to prove there is exactly one lookup."""

_REDIRECTS = {301, 302, 303, 307, 308}
_CHUNK = 64 * 1024

_BLOCKED: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(net), why)
    for net, why in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("fc00::/7", "private"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


@dataclass(frozen=True)
class DownloadPolicy:
    allowed_hosts: frozenset[str] = frozenset()
    """Lowercase host names and normalised IP literals whose private addresses are allowed."""
    max_bytes: int = MAX_BYTES
    max_redirects: int = 5
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    deadline: float = 120.0
    """Seconds for the whole download, redirects included (a server dribbling bytes cannot hold it)."""

    @classmethod
    def from_hosts(cls, hosts: Iterable[str], **kwargs: float | int) -> DownloadPolicy:
        return cls(allowed_hosts=frozenset(_host_key(h) for h in hosts), **kwargs)  # type: ignore[arg-type]

    def allows(self, host: str) -> bool:
        return _host_key(host) in self.allowed_hosts


@dataclass(frozen=True)
class Downloaded:
    size: int
    sha256: str
    head: bytes = field(repr=False)
    """The first :data:`SIGNATURE_BYTES` bytes (fewer for a tiny body)."""


def _host_key(host: str) -> str:
    host = host.strip().strip("[]").rstrip(".").lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def _refused(why: str) -> InvalidArgument:
    return InvalidArgument(f"The download was refused: {why}. Ask the user for another file.")


def _check_deadline(policy: DownloadPolicy, started: float) -> None:
    """Refuse a download that has run longer than its total time (``downloads.timeoutSeconds``)."""
    if time.monotonic() - started > policy.deadline:
        raise _refused(f"the download took longer than {policy.deadline:g} seconds (downloads.timeoutSeconds)")


def address_problem(address: str) -> str | None:
    """Why ``address`` must not be contacted (``"loopback"``, ...), or None for a public address."""
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv6 form that carries an IPv4 address reaches that IPv4 address.
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is None and ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            return address_problem(str(inner))
    for net, why in _BLOCKED:
        if ip.version == net.version and ip in net:
            return why
    if not ip.is_global:
        return "not publicly routable"
    return None


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def trust_context() -> ssl.SSLContext:
    """The system trust store, or only the bundle named by ``SSL_CERT_FILE`` when that is set."""
    cafile = os.environ.get("SSL_CERT_FILE") or None
    context = ssl.create_default_context(cafile=cafile)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context  # check_hostname and CERT_REQUIRED are the defaults


@dataclass(frozen=True)
class _Target:
    url: httpx.URL
    host: str
    port: int
    addresses: list[str]


def _check_target(url: httpx.URL, policy: DownloadPolicy, resolver: Resolver) -> _Target:
    if url.scheme != "https":
        raise _refused("only https:// URLs are downloaded")
    if url.userinfo:
        raise _refused("URLs with user names or passwords are not accepted")
    host = url.raw_host.decode("ascii").rstrip(".").lower()  # IDNA-encoded: what DNS, SNI and Host carry
    if not host:
        raise _refused("the URL has no host")
    port = url.port or 443
    allowed = policy.allows(host)
    if not allowed and (host == "localhost" or host.endswith(".localhost")):
        raise _refused(f"host {host!r} is this machine")
    try:
        literal = str(ipaddress.ip_address(host))
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        try:
            addresses = resolver(host, port)
        except (OSError, UnicodeError):
            raise _refused(f"host {host!r} could not be resolved") from None
        if not addresses:
            raise _refused(f"host {host!r} has no address")
    if not allowed:
        for address in addresses:
            problem = address_problem(address)
            if problem:
                article = "an" if problem[0] in "aeiou" else "a"
                raise _refused(
                    f"host {host!r} has {article} {problem} address; list it in downloads.allowedHosts to allow it"
                )
    return _Target(url=url, host=host, port=port, addresses=addresses)


def _pinned_url(target: _Target, address: str) -> httpx.URL:
    return target.url.copy_with(host=address.split("%", 1)[0])


def _host_header(target: _Target) -> str:
    name = f"[{target.host}]" if ":" in target.host else target.host
    return name if target.port == 443 else f"{name}:{target.port}"


class _Sink:
    """The create-new file a body streams into, hashed and measured on the way."""

    def __init__(self, fd: int, policy: DownloadPolicy, on_head: Callable[[bytes], None] | None) -> None:
        self._file = os.fdopen(fd, "wb")
        self._policy = policy
        self._on_head = on_head
        self._digest = hashlib.sha256()
        self.size = 0
        self.head = b""

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self._policy.max_bytes:
            raise _refused(f"the file is larger than {self._policy.max_bytes} bytes")
        if len(self.head) < SIGNATURE_BYTES:
            self.head += chunk[: SIGNATURE_BYTES - len(self.head)]
            if len(self.head) >= SIGNATURE_BYTES and self._on_head is not None:
                self._on_head(self.head)
        self._digest.update(chunk)
        self._file.write(chunk)

    def finish(self) -> Downloaded:
        if self.size == 0:
            raise _refused("the server sent an empty file")
        if len(self.head) < SIGNATURE_BYTES and self._on_head is not None:
            self._on_head(self.head)
        self._file.flush()
        os.fsync(self._file.fileno())
        return Downloaded(size=self.size, sha256=self._digest.hexdigest(), head=self.head)

    def close(self) -> None:
        self._file.close()


def fetch_to_file(
    url: str,
    dest: Path,
    policy: DownloadPolicy,
    *,
    resolver: Resolver = system_resolver,
    on_head: Callable[[bytes], None] | None = None,
) -> Downloaded:
    """Download ``url`` into the new file ``dest`` (which must not exist) and describe it.

    ``on_head`` sees the first :data:`SIGNATURE_BYTES` bytes as soon as they arrive and may
    raise to stop a download that is plainly not what was asked for. Any failure removes
    ``dest`` and raises a :class:`~local_vector_search_mcp.errors.KbError` without the URL.
    """
    try:
        current = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise _refused("the URL is not a valid absolute https:// URL") from None
    # Checked before the file exists, so a refused URL leaves nothing behind at all.
    target = _check_target(current, policy, resolver)
    started = time.monotonic()
    timeout = httpx.Timeout(policy.read_timeout, connect=policy.connect_timeout)
    sink = _Sink(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), policy, on_head)
    try:
        with httpx.Client(
            verify=trust_context(), trust_env=False, follow_redirects=False, timeout=timeout, http2=False
        ) as client:
            for hop in range(policy.max_redirects + 1):
                if hop:
                    target = _check_target(current, policy, resolver)
                _check_deadline(policy, started)  # slow redirect chains count too
                location = _fetch_once(client, target, sink, policy, started)
                if location is None:
                    return sink.finish()
                try:
                    current = target.url.join(location)
                except (httpx.InvalidURL, ValueError):
                    raise _refused("a redirect pointed at an invalid URL") from None
            raise _refused(f"more than {policy.max_redirects} redirects")
    except BaseException:
        sink.close()
        with contextlib.suppress(OSError):
            os.unlink(dest)
        raise
    finally:
        sink.close()


def _is_certificate_error(exc: BaseException) -> bool:
    text = str(exc).upper()
    return "CERTIFICATE" in text or "HOSTNAME" in text or "IP ADDRESS MISMATCH" in text


def _fetch_once(
    client: httpx.Client, target: _Target, sink: _Sink, policy: DownloadPolicy, started: float
) -> str | None:
    """One request; returns the redirect's ``Location``, or None once the body is written. An
    address that refuses or does not answer the connection gives way to the next one (a host
    whose IPv6 route is dead is reached over IPv4, decision 509), within the total time."""
    timed_out = False
    for address in target.addresses:
        _check_deadline(policy, started)
        try:
            with client.stream(
                "GET",
                _pinned_url(target, address),
                headers={"Host": _host_header(target), "Accept": "image/*", "Accept-Encoding": "identity"},
                extensions={"sni_hostname": target.host},
            ) as response:
                return _consume(response, sink, policy, started)
        except httpx.ConnectError as exc:
            if _is_certificate_error(exc):
                raise _refused(f"the certificate of {target.host!r} could not be verified") from None
            continue  # the next checked address; never a new lookup
        except httpx.ConnectTimeout:
            timed_out = True
            continue
        except httpx.TimeoutException:
            raise _refused(
                f"the server did not answer in time (nothing received for {policy.read_timeout:g} s, "
                "downloads.readTimeoutSeconds)"
            ) from None
        except httpx.HTTPError as exc:
            raise _refused(f"the transfer failed ({type(exc).__name__})") from None
    if timed_out:
        raise _refused(f"the server did not answer in time (no connection within {policy.connect_timeout:g} s)")
    raise _refused(f"could not connect to {target.host!r}")


def _consume(response: httpx.Response, sink: _Sink, policy: DownloadPolicy, started: float) -> str | None:
    status = response.status_code
    if status in _REDIRECTS:
        location: str = response.headers.get("location", "")
        if not location:
            raise _refused(f"HTTP {status} redirect without a Location")
        return location
    if not 200 <= status < 300:
        raise _refused(f"the server answered HTTP {status}")
    declared = response.headers.get("content-length", "").strip()
    total = int(declared) if declared.isdigit() else None
    if total is not None and total > policy.max_bytes:
        raise _refused(f"the file is larger than {policy.max_bytes} bytes")
    of = f" of {total:,}" if total else ""
    try:
        with _hang_up_when_due(response, started + policy.deadline):
            for chunk in response.iter_bytes(_CHUNK):
                _check_deadline(policy, started)
                sink.write(chunk)
                # the call's progress, or Cancelled when its client gave up: the file is removed (decision
                # 503); the text is made only for a notification that is sent, not for every block
                progress.step(sink.size, total, lambda: f"Downloaded {sink.size:,}{of} bytes", final=sink.size == total)
    except httpx.HTTPError:
        progress.check()  # the read ended because the cancel hung up: Cancelled, not a failed transfer
        _check_deadline(policy, started)  # or because the total time ran out (decision 689)
        raise
    return None


# How often a download blocked on a silent server looks whether its call was cancelled.
_CANCEL_POLL_S = 0.1


@contextlib.contextmanager
def _hang_up_when_due(response: httpx.Response, deadline: float) -> Iterator[None]:
    """Hang up on the server when the current call is cancelled, or at ``deadline`` (monotonic),
    even while a read waits for bytes: the cancel was only seen between blocks, so a server that
    went silent kept a cancelled save (and its staged file) for up to ``readTimeoutSeconds``
    (decision 678); and httpx hands over 64 KiB blocks, so one trickling a byte at a time passed
    ``timeoutSeconds`` by as long as 64 Ki bytes took (a 109-byte file sent a byte each 0.1 s
    answered after 11 s under a 2 s limit, decision 689). Shutting the socket down wakes the
    blocked read, which then fails; the caller turns that into Cancelled or the timeout."""
    call = progress.current()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(_CANCEL_POLL_S):
            if (call is not None and call.cancelled.is_set()) or time.monotonic() > deadline:
                stream = response.extensions.get("network_stream")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                return

    watcher = threading.Thread(target=watch, name="download-cancel", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
