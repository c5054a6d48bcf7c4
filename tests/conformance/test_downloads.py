"""kb_save_image with an OpenAI file reference, against a real HTTPS server on loopback.

The server's certificate is self-signed and trusted through ``SSL_CERT_FILE`` only; loopback is
reachable only through ``downloads.allowedHosts``. Without that allowance, and for every other
refusal, nothing is contacted or written, and the signed URL never reaches the server's log.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from https_fixture import Reply, TlsServer, make_certificate, tls_server
from PIL import Image

from .client import connect, server_command
from .runner import tree

pytestmark = pytest.mark.conformance

SECRET = "sig=SIGNED-SECRET-0123456789"


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (1, 2, 3)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsServer]:
    cert, key = make_certificate(tmp_path_factory.mktemp("tls"))
    with tls_server(cert, key) as server:
        yield server


def file_ref(url: str, **extra: Any) -> dict[str, Any]:
    return {"file": {"download_url": url, "file_id": "file-1", **extra}}


async def session(
    request: pytest.FixtureRequest,
    tmp: Path,
    server: TlsServer,
    allowed: list[str] | None,
    calls: list[dict[str, Any]],
    downloads: dict[str, Any] | None = None,
) -> list[Any]:
    workspace = tmp / "ws"
    workspace.mkdir(parents=True)
    config: dict[str, Any] = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}
    if allowed is not None:
        config["downloads"] = {"allowedHosts": allowed, **(downloads or {})}
    command = server_command(request.config.getoption("--server"))
    results = []
    async with connect(command, workspace, config, extra_env={"SSL_CERT_FILE": str(server.cert)}) as conn:
        for arguments in calls:
            results.append(await conn.call("kb_save_image", arguments))
    return results


def test_save_through_the_allowance_and_every_refusal(
    https: TlsServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    image = png()
    https.routes.update(
        {
            "/upload": Reply(body=image, headers={"Content-Type": "image/png"}),
            "/hop": Reply(302, headers={"Location": "/upload"}),
            "/to-http": Reply(302, headers={"Location": f"http://127.0.0.1:{https.port}/upload"}),
            "/page": Reply(body=b"<!doctype html><p>not an image</p>"),
            "/huge": Reply(headers={"Content-Length": str(26_214_401)}, chunks=[image]),
            "/gone": Reply(404, b"gone"),
        }
    )
    https.requests.clear()
    calls = [
        file_ref(https.url(f"/upload?{SECRET}"), mime_type="image/png", file_name="Quarterly chart.png"),
        {**file_ref(https.url("/hop")), "targetPath": "docs/img/chart.png", "altText": "chart"},
        file_ref(https.url(f"/to-http?{SECRET}")),
        file_ref(https.url(f"/page?{SECRET}")),
        file_ref(https.url(f"/huge?{SECRET}")),
        file_ref(https.url(f"/gone?{SECRET}")),
        file_ref(https.url("/upload"), mime_type="image/gif"),
        {**file_ref(https.url("/upload")), "targetPath": "docs/img/chart.png"},
        file_ref(https.url("/upload", host="localhost")),  # not in the allowance
    ]
    results = anyio.run(session, request, tmp_path, https, ["127.0.0.1"], calls)
    first, second, *refusals = results
    assert not first.is_error, first.texts
    assert first.structured["path"] == "images/Quarterly chart.png"
    assert first.structured["markdown"] == "![](<images/Quarterly chart.png>)"
    assert first.structured["sha256"] == __import__("hashlib").sha256(image).hexdigest()
    assert not second.is_error and second.structured["path"] == "docs/img/chart.png"
    workspace = tmp_path / "ws"
    assert (workspace / "images/Quarterly chart.png").read_bytes() == image
    assert (workspace / "docs/img/chart.png").read_bytes() == image
    codes = [r.error["code"] for r in refusals]
    assert codes == [
        "INVALID_ARGUMENT",  # redirect to http
        "UNSUPPORTED_FORMAT",  # not an image
        "INVALID_ARGUMENT",  # larger than 25 MiB
        "INVALID_ARGUMENT",  # HTTP 404
        "INVALID_ARGUMENT",  # declared image/gif, bytes are PNG
        "ALREADY_EXISTS",  # explicit targetPath taken
        "INVALID_ARGUMENT",  # localhost is not allowed
    ]
    for result in refusals:
        assert SECRET not in result.error["message"] and "/upload" not in result.error["message"]
    assert tree(workspace) == ["docs", "docs/img", "docs/img/chart.png", "images", "images/Quarterly chart.png"]
    assert https.requests[0].headers["host"] == f"127.0.0.1:{https.port}"
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("*.log"))
    assert SECRET not in logs


def test_without_the_allowance_loopback_is_never_contacted(
    https: TlsServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    https.routes["/upload"] = Reply(body=png())
    https.requests.clear()
    calls = [
        file_ref(https.url(f"/upload?{SECRET}")),
        file_ref(https.url("/upload", host="localhost")),
        file_ref(f"https://user:pw@127.0.0.1:{https.port}/upload"),
        file_ref(f"http://127.0.0.1:{https.port}/upload"),
        {"data": base64.b64encode(png()).decode(), "fileName": "inline"},
    ]
    results = anyio.run(session, request, tmp_path, https, None, calls)
    assert [r.error["code"] for r in results[:4]] == ["INVALID_ARGUMENT"] * 4
    assert "loopback" in results[0].error["message"] and "allowedHosts" in results[0].error["message"]
    assert https.requests == []
    assert not results[4].is_error  # inline data needs no network at all
    assert tree(tmp_path / "ws") == ["images", "images/inline.png"]


def test_a_slow_but_live_server_is_cut_by_the_total_time_a_stalled_one_by_the_wait_both_configurable(
    https: TlsServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Decision 509: a download over a slow link is bounded by `downloads.timeoutSeconds` (total)
    and a server that stops sending by `downloads.readTimeoutSeconds`; each refusal names its key,
    and a user on a slow link can raise the total without waiting longer on a dead server."""
    image = png() + bytes(30_000)

    def trickle(_: object) -> Reply:  # about 2 s, never a pause of more than 0.25 s
        return Reply(chunks=_paced([image[i : i + 4000] for i in range(0, len(image), 4000)], 0.25))

    def stall(_: object) -> Reply:  # half the file, then 3 s of nothing
        return Reply(chunks=_paced([image[:20_000], image[20_000:]], 3.0))

    https.routes.update({"/trickle": trickle, "/stall": stall})
    short = {"timeoutSeconds": 1, "readTimeoutSeconds": 1}
    slow_ok = {"timeoutSeconds": 30, "readTimeoutSeconds": 1}
    first = anyio.run(session, request, tmp_path / "a", https, ["127.0.0.1"], [file_ref(https.url("/trickle"))], short)
    assert first[0].error["code"] == "INVALID_ARGUMENT"
    assert "longer than 1 seconds (downloads.timeoutSeconds)" in first[0].error["message"]
    calls = [file_ref(https.url("/trickle")), file_ref(https.url("/stall"))]
    saved, stalled = anyio.run(session, request, tmp_path / "b", https, ["127.0.0.1"], calls, slow_ok)
    assert not saved.is_error, saved.texts
    assert (tmp_path / "b" / "ws" / saved.structured["path"]).read_bytes() == image
    assert stalled.error["code"] == "INVALID_ARGUMENT"
    assert "nothing received for 1 s, downloads.readTimeoutSeconds" in stalled.error["message"]
    assert tree(tmp_path / "a" / "ws") == []
    assert tree(tmp_path / "b" / "ws") == ["images", f"{saved.structured['path']}"]


def _paced(chunks: list[bytes], pause: float) -> Iterator[bytes]:
    for i, chunk in enumerate(chunks):
        if i:
            time.sleep(pause)
        yield chunk
