"""Fixtures of the asset tests: a workspace with writes on, tiny images, the HTTPS server."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from https_fixture import TlsServer, make_certificate, tls_server
from PIL import Image

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.workspace import Workspace


def make_ws(tmp_path: Path, *, writes: bool = True, allowed_hosts: list[str] | None = None) -> Workspace:
    root = tmp_path / "kb"
    root.mkdir(exist_ok=True)
    options = CliOptions(root=str(root), embedding_provider="none", allow_writes=writes)
    settings = load_settings(options, cwd=tmp_path, environ={})
    return Workspace(settings)


def image_bytes(fmt: str = "PNG", size: tuple[int, int] = (3, 2), frames: int = 1) -> bytes:
    out = io.BytesIO()
    images = [Image.new("RGB", size, (40 * i % 256, 100, 200)) for i in range(frames)]
    if frames > 1:
        images[0].save(out, format=fmt, save_all=True, append_images=images[1:], duration=50, loop=0)
    else:
        images[0].save(out, format=fmt)
    return out.getvalue()


def tree(root: Path) -> list[str]:
    """Every path under ``root`` (files and folders), to prove nothing was left behind."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return make_ws(tmp_path)


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def server(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[TlsServer]:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    with tls_server(*certificate) as running:
        yield running
