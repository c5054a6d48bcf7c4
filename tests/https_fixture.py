"""A real HTTPS server on loopback with a self-signed certificate, for download tests.

The certificate is made with the ``openssl`` command line (present on every CI image we
use; .ci/run installs it otherwise) and names ``localhost``, ``127.0.0.1`` and
``rebind.test``. Point ``SSL_CERT_FILE`` at :attr:`TlsServer.cert` to trust it.

Routes map a path to a response or to a callable building one, so a test can serve an
image, a redirect chain, an oversize body, a slow body ...
"""

from __future__ import annotations

import ssl
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Iterable[bytes] | None = None
    """Sent with chunked transfer encoding (no Content-Length), one write each (a generator may pace them)."""


Route = Reply | Callable[["Request"], Reply]


@dataclass
class Request:
    path: str
    headers: dict[str, str]


def make_certificate(
    folder: Path, names: tuple[str, ...] = ("localhost", "rebind.test"), ip: str = "127.0.0.1"
) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    san = ",".join([*(f"DNS:{n}" for n in names), f"IP:{ip}"] if ip else [f"DNS:{n}" for n in names])
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={names[0]}", "-addext", f"subjectAltName={san}",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


class TlsServer:
    def __init__(self, cert: Path, key: Path) -> None:
        self.cert = cert
        self.routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                request = Request(self.path, {k.lower(): v for k, v in self.headers.items()})
                server.requests.append(request)
                route = server.routes.get(self.path.split("?", 1)[0], Reply(404, b"missing"))
                reply = route(request) if callable(route) else route
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.chunks is not None:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    try:
                        for chunk in reply.chunks:
                            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                            self.wfile.flush()
                        self.wfile.write(b"0\r\n\r\n")
                    except OSError:
                        pass  # the client hung up, as a capped download should
                    return
                if "Content-Length" not in reply.headers:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                with suppress(OSError):
                    self.wfile.write(reply.body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"

    def start(self) -> TlsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def tls_server(cert: Path, key: Path) -> Iterator[TlsServer]:
    server = TlsServer(cert, key).start()
    try:
        yield server
    finally:
        server.stop()
