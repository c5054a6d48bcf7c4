"""A PDF export never fetches a remote picture (contract 12.1), not even from a host the server may
download from for kb_save_image: a live HTTP server on loopback, listed in ``downloads.allowedHosts``,
counts the requests it gets while a document and a book full of remote pictures are exported."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

from .client import connect, server_command

pytestmark = pytest.mark.conformance


@pytest.fixture
def web() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server answering every GET with a PNG signature; yields its base URL and the
    paths it was asked for."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the standard library's name
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()
            self.wfile.write(b"\x89PNG\r\n\x1a\n")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def test_remote_pictures_are_placeholders_and_never_requested(
    web: tuple[str, list[str]], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    base, asked = web
    ws = tmp_path / "ws"
    (ws / "book").mkdir(parents=True)
    https = base.replace("http://", "https://")
    (ws / "page.md").write_text(
        f"# Page\n\n![a]({base}/a.png)\n\n![b]({https}/b.png)\n\n![c](//127.0.0.1:{base.rsplit(':', 1)[1]}/c.png)\n\n"
        f'<img src="{base}/d.png" width="100">\n\n| pic |\n|---|\n| ![e]({base}/e.png) |\n\n'
        f"[f]: {base}/f.png\n\n![f][f]\n",
        encoding="utf-8",
    )
    (ws / "book" / "SUMMARY.md").write_text("# Book\n\n- [One](one.md)\n", encoding="utf-8")
    (ws / "book" / "one.md").write_text(f"# One\n\n![g]({base}/g.png)\n", encoding="utf-8")
    config = {
        "knowledgeBase": {"allowWrites": True},
        "embedding": {"provider": "none"},
        "downloads": {"allowedHosts": ["127.0.0.1"]},  # kb_save_image may download from here; an export may not
    }

    async def run() -> list[list[str]]:
        async with connect(server_command(request.config.getoption("--server")), ws, config) as conn:
            out = []
            for path in ("page.md", "book/SUMMARY.md"):
                result = await conn.call("kb_create_pdf_book", {"request": {"path": path}})
                assert not result.is_error, result.texts
                out.append(result.structured["warnings"])
            return out

    page, book = anyio.run(run)
    assert asked == []
    assert [w.split("'")[1] for w in page] == [
        f"{base}/a.png",
        f"{https}/b.png",
        f"//127.0.0.1:{base.rsplit(':', 1)[1]}/c.png",
        f"{base}/d.png",
        f"{base}/e.png",
        f"{base}/f.png",
    ]
    assert all(w.endswith("remote and absolute images are never fetched.") for w in page + book), page + book
    assert [w.split("'")[1] for w in book] == [f"{base}/g.png"]
    assert (ws / "page.pdf").read_bytes().startswith(b"%PDF-")
