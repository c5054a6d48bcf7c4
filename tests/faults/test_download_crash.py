"""A save killed mid-download (kill -9 while the body streams) leaves nothing after the next start.

The lock is not held while waiting on the network, so the writer's intent note cannot cover a
download; a per-save note in the state folder does (spec/decisions.md 202). Meanwhile the hidden
staging file is never listed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from https_fixture import Reply, TlsServer, make_certificate, tls_server

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.assets.store import CreatedFolders, staging_path
from local_vector_search_mcp.cli import main as cli_main
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.workspace import Workspace
from local_vector_search_mcp.writer import StagingNote, recover_staging

PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 100_000  # over one read (64 KiB)


class _Stalled:
    """A chunked body that sends its first chunk and then waits (until the test ends)."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def __iter__(self) -> Iterator[bytes]:
        yield PNG_HEAD
        self.release.wait(60)


@pytest.fixture
def stalled(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[TlsServer]:
    cert, key = make_certificate(tmp_path_factory.mktemp("tls"))
    release = threading.Event()
    with tls_server(cert, key) as server:
        server.routes["/slow.png"] = Reply(headers={"Content-Type": "image/png"}, chunks=_Stalled(release))  # type: ignore[arg-type]
        yield server
        release.set()


def _staged(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob(".upload.*.tmp"))


def test_a_save_killed_mid_download_leaves_nothing_after_the_next_start(tmp_path: Path, stalled: TlsServer) -> None:
    root, project = tmp_path / "kb", tmp_path
    root.mkdir()
    (root / "note.md").write_text("# Note\n", "utf-8")
    config = tmp_path / "config.yml"
    config.write_text(yaml.safe_dump({"downloads": {"allowedHosts": ["127.0.0.1"]}}), "utf-8")
    args = ["--root", str(root), "--project-root", str(project), "--config", str(config)]
    args += ["--embedding-provider", "none", "--allow-writes"]
    request = {"file": {"download_url": stalled.url("/slow.png"), "file_id": "f"}, "targetPath": "new/deep/x.png"}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "local_vector_search_mcp",
            *args,
            "call",
            "kb_save_image",
            "--json",
            json.dumps(request),
        ],
        env={**os.environ, "SSL_CERT_FILE": str(stalled.cert)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (_staged(root) and _staged(root)[0].stat().st_size > 0):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the download never started"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    litter = _staged(root)
    assert len(litter) == 1 and litter[0].parent == root / "new" / "deep"  # what a crash leaves

    # Until the next start, the staging file is hidden from every listing.
    ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=project, environ={}))
    listed = [f["relativePath"] for f in dispatch.invoke(ws, "kb_list_files", {"request": {}})["files"]]
    assert listed == ["note.md"]
    assert dispatch.invoke(ws, "kb_list_images", {})["images"] == []
    ws.close()

    # Any start (here a status call) cleans it up: the staging file and the folders the save created.
    assert cli_main([*args, "--status"]) == 0
    assert not _staged(root) and not (root / "new").exists()
    assert sorted(p.name for p in root.iterdir()) == ["note.md"]
    assert not list((project / ".local-vector-search-mcp" / "staging").iterdir())


def test_a_save_still_in_flight_in_another_process_is_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=tmp_path, environ={}))
    folders = CreatedFolders(ws)
    folder = folders.ensure("a/b")
    staged = staging_path(folder)
    staged.write_bytes(PNG_HEAD)
    note = StagingNote(ws, staged, folders.created)  # its flock is held: a live save
    other = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=tmp_path, environ={}))
    # flock is per open file description: a second open (as another process would) cannot take it
    assert recover_staging(other) == []
    assert staged.exists()
    note.close()
    staged.unlink()
    assert recover_staging(other) == []  # the save ended and cleaned up itself: nothing to do


def test_only_a_staging_name_is_ever_removed(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "keep").mkdir(parents=True)
    (root / "keep" / "mine.png").write_bytes(PNG_HEAD)
    ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=tmp_path, environ={}))
    notes = ws.state_dir / "staging"
    notes.mkdir(parents=True)
    # A forged or damaged note names a user's file and a folder that is not empty.
    (notes / "0123456789ab.json").write_text(json.dumps({"tmp": "keep/mine.png", "folders": ["keep"]}), "utf-8")
    (notes / "ba9876543210.json").write_text(json.dumps({"tmp": "../outside.tmp"}), "utf-8")
    (notes / "cdcdcdcdcdcd.json").write_bytes(b'{"tmp": "kee')  # torn
    assert recover_staging(ws) == []
    assert (root / "keep" / "mine.png").read_bytes() == PNG_HEAD
    assert not list(notes.iterdir())


def test_a_note_refused_for_a_full_disk_leaves_no_file_and_no_open_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 1030: every image save or PDF export refused for a full disk kept the empty note
    open and flock-ed for the life of the server (decision 202: a save's end removes its note)."""
    import errno

    from local_vector_search_mcp import writer

    root = tmp_path / "kb"
    root.mkdir()
    ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=tmp_path, environ={}))
    (ws.state_dir / "staging").mkdir(parents=True)
    open_before = len(os.listdir("/proc/self/fd"))

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patched:
        patched.setattr(writer.os, "write", full)
        note = StagingNote(ws, staging_path(root), [])  # the save goes on without it
    assert len(os.listdir("/proc/self/fd")) == open_before
    assert not list((ws.state_dir / "staging").iterdir())
    note.close()  # as the save's end calls it: nothing left to do
