"""kb_create_pdf_book through the dispatcher: check order, atomic replacement, nothing left behind."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import BinaryIO

import pytest

from local_vector_search_mcp import progress
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.export import pdf as pdf_engine
from local_vector_search_mcp.handlers import export as handler
from local_vector_search_mcp.workspace import Workspace


def _workspace(root: Path, tmp_path: Path, writes: bool = True) -> Workspace:
    options = CliOptions(
        root=str(root), storage_path=str(tmp_path / "idx" / "index.db"), embedding_provider="none", allow_writes=writes
    )
    return Workspace(load_settings(options, cwd=tmp_path, environ={}))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / "docs" / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    return kb


def _call(ws: Workspace, **request: str) -> dict[str, object]:
    return invoke(ws, "kb_create_pdf_book", {"request": request})


def _code(ws: Workspace, **request: str) -> str:
    with pytest.raises(KbError) as info:
        _call(ws, **request)
    return info.value.code


def test_default_output_path_and_result(root: Path, tmp_path: Path) -> None:
    result = _call(_workspace(root, tmp_path), path="docs/a.md")
    assert result["path"] == "docs/a.pdf" and result["warnings"] == []
    data = (root / "docs" / "a.pdf").read_bytes()
    assert data.startswith(b"%PDF-") and result["bytes"] == len(data)


def test_writes_disabled_refuses_before_any_work(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> list[str]:
        raise AssertionError("rendered although writes are disabled")

    monkeypatch.setattr(handler, "render_book", boom)
    ws = _workspace(root, tmp_path, writes=False)
    assert _code(ws, path="docs/a.md") == "PERMISSION_DENIED"
    assert _code(ws, path="missing.md") == "PERMISSION_DENIED"  # does not reveal existence
    assert not (root / "docs" / "a.pdf").exists()


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"path": "docs/a.md", "outputPath": "docs/a.txt"}, "INVALID_PATH"),
        ({"path": "docs/a.md", "outputPath": "../a.pdf"}, "INVALID_PATH"),
        ({"path": "docs/a.txt"}, "INVALID_PATH"),
        ({"path": "missing.md"}, "NOT_FOUND"),
        ({"path": "docs/a.md", "outputPath": "docs/folder.pdf"}, "INVALID_ARGUMENT"),
        ({"path": "docs/a.md", "style": "fancy"}, "INVALID_ARGUMENT"),
        ({"path": "docs/a.md", "pageFormat": "a3"}, "INVALID_ARGUMENT"),
    ],
)
def test_refusals(root: Path, tmp_path: Path, request_: dict[str, str], code: str) -> None:
    (root / "docs" / "folder.pdf").mkdir()
    assert _code(_workspace(root, tmp_path), **request_) == code


def test_an_output_path_that_is_a_fifo_is_refused_not_replaced(root: Path, tmp_path: Path) -> None:
    """Decision 703: an existing folder was refused, but a FIFO (socket, device) at outputPath was
    replaced by the PDF; only a regular file, an earlier export, is replaced."""
    import os
    import stat

    os.mkfifo(root / "docs" / "pipe.pdf")
    assert _code(_workspace(root, tmp_path), path="docs/a.md", outputPath="docs/pipe.pdf") == "INVALID_ARGUMENT"
    assert stat.S_ISFIFO(os.lstat(root / "docs" / "pipe.pdf").st_mode)
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["a.md", "pipe.pdf"]


def test_not_utf8_is_unsupported_format(root: Path, tmp_path: Path) -> None:
    (root / "bad.md").write_bytes(b"# \xff\xfe\n")
    assert _code(_workspace(root, tmp_path), path="bad.md") == "UNSUPPORTED_FORMAT"


def test_failure_keeps_the_old_pdf_and_leaves_no_litter(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(root, tmp_path)
    _call(ws, path="docs/a.md")
    before = (root / "docs" / "a.pdf").read_bytes()
    listing = sorted(p.name for p in (root / "docs").iterdir())

    def fail(*args: object, **kwargs: object) -> list[str]:
        raise MemoryError("layout blew up")

    monkeypatch.setattr(handler, "render_book", fail)
    with pytest.raises(MemoryError):
        handler.kb_create_pdf_book(ws, handler.KbCreatePdfBookRequest(path="docs/a.md"))
    assert (root / "docs" / "a.pdf").read_bytes() == before
    assert sorted(p.name for p in (root / "docs").iterdir()) == listing


def test_an_existing_pdf_is_replaced(root: Path, tmp_path: Path) -> None:
    (root / "docs" / "a.pdf").write_bytes(b"old")
    result = _call(_workspace(root, tmp_path), path="docs/a.md", outputPath="docs/a.pdf", profile="screen")
    assert (root / "docs" / "a.pdf").read_bytes()[:5] == b"%PDF-"
    assert result["bytes"] == (root / "docs" / "a.pdf").stat().st_size
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["a.md", "a.pdf"]


def test_output_into_a_new_folder(root: Path, tmp_path: Path) -> None:
    result = _call(_workspace(root, tmp_path), path="docs/a.md", outputPath="exports/2024/A.PDF")
    assert result["path"] == "exports/2024/A.PDF"
    assert (root / "exports" / "2024" / "A.PDF").is_file()


def test_a_book_too_large_is_refused(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handler, "MAX_BOOK_BYTES", 10)
    assert _code(_workspace(root, tmp_path), path="docs/a.md") == "INVALID_ARGUMENT"
    assert pdf_engine.MAX_BOOK_BYTES > 10


def test_a_fifo_is_refused_not_waited_on_and_a_bad_chapter_is_a_placeholder(root: Path, tmp_path: Path) -> None:
    import os

    os.mkfifo(root / "docs" / "pipe.md")  # opening it for reading without O_NONBLOCK blocks forever
    (root / "docs" / "huge.md").write_bytes(b"# Huge\n\n" + b"word " * (9 * 1024 * 1024 // 5))
    (root / "docs" / "latin1.md").write_bytes("# Caf\u00e9\n".encode("latin-1"))
    (root / "docs" / "SUMMARY.md").write_text(
        "# Book\n\n- [A](a.md)\n- [Pipe](pipe.md)\n- [Huge](huge.md)\n- [Latin](latin1.md)\n", encoding="utf-8"
    )
    ws = _workspace(root, tmp_path)
    assert _code(ws, path="docs/pipe.md") == "UNSUPPORTED_FORMAT"
    assert _code(ws, path="docs/huge.md") == "UNSUPPORTED_FORMAT"  # the 8 MiB document cap, as kb_read
    result = _call(ws, path="docs/SUMMARY.md")
    warnings = "\n".join(result["warnings"])  # type: ignore[arg-type]
    assert "docs/pipe.md" in warnings and "not a regular file" in warnings
    assert "docs/huge.md" in warnings and "MiB" in warnings
    assert "docs/latin1.md" in warnings and "UTF-8" in warnings
    assert (root / "docs" / "SUMMARY.pdf").read_bytes().startswith(b"%PDF-")


@pytest.mark.parametrize(("profile", "advice"), [("standard", "profile screen"), ("screen", "chapters or parts")])
def test_a_pdf_over_the_download_cap_says_so(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str, advice: str
) -> None:
    """A print export of a photo book (31 MB from 20 photos) succeeded silently and only the later
    kb_download_file said it was too large to fetch (decision 474)."""
    monkeypatch.setattr(handler, "MAX_DOWNLOAD_BYTES", 1000)
    result = _call(_workspace(root, tmp_path), path="docs/a.md", profile=profile)
    warnings = result["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1
    assert "kb_download_file returns" in warnings[0] and advice in warnings[0]
    assert (root / "docs" / "a.pdf").stat().st_size == result["bytes"]


# ---------------------------------------------------------------- the staging file (decision 660)


def _litter(ws: Workspace, root: Path) -> list[str]:
    """Hidden temporary files under the root and staging notes left in the state folder."""
    notes = ws.state_dir / "staging"
    found = [p.relative_to(root).as_posix() for p in root.rglob(".*.tmp")]
    return found + [f"note {p.name}" for p in (notes.iterdir() if notes.is_dir() else [])]


def test_the_pdf_is_written_beside_the_target_and_renamed_over_it_on_success(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(root, tmp_path)
    target = root / "docs" / "a.pdf"
    target.write_bytes(b"old")
    target.chmod(0o640)
    inode = target.stat().st_ino
    seen: dict[str, object] = {}
    real = handler.render_book

    def watched(guard: object, rel: str, doc: object, out: object, options: object) -> list[str]:
        warnings = real(guard, rel, doc, out, options)  # type: ignore[arg-type]
        # the PDF is complete in its staging file, noted for recovery; the target still the old file
        staged = [p for p in (root / "docs").iterdir() if p.name.startswith(".a.pdf.") and p.name.endswith(".tmp")]
        seen["staged"] = len(staged)
        seen["notes"] = [n.read_text("utf-8") for n in (ws.state_dir / "staging").iterdir()]
        seen["target"] = target.read_bytes()
        return warnings

    monkeypatch.setattr(handler, "render_book", watched)
    result = _call(ws, path="docs/a.md")
    assert seen["staged"] == 1 and seen["target"] == b"old"
    assert len(seen["notes"]) == 1 and '"what": "PDF export"' in seen["notes"][0]  # type: ignore[arg-type,index]
    data = target.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF") and result["bytes"] == len(data)
    assert target.stat().st_ino != inode  # renamed over, not rewritten in place
    assert target.stat().st_mode & 0o777 == 0o640  # the old file's permissions kept
    assert _litter(ws, root) == []


def test_a_failure_while_the_pdf_is_written_keeps_the_old_pdf_and_the_new_folders_go(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(root, tmp_path)
    _call(ws, path="docs/a.md", outputPath="docs/a.pdf")
    before = (root / "docs" / "a.pdf").read_bytes()

    def half(guard: object, rel: str, doc: object, out: BinaryIO, options: object) -> list[str]:
        out.write(before[: len(before) // 2])  # reportlab had begun writing the PDF
        raise MemoryError("killed by the allocator")

    monkeypatch.setattr(handler, "render_book", half)
    for output in ("docs/a.pdf", "new/deeper/a.pdf"):
        with pytest.raises(MemoryError):
            handler.kb_create_pdf_book(ws, handler.KbCreatePdfBookRequest(path="docs/a.md", output_path=output))
        assert (root / "docs" / "a.pdf").read_bytes() == before
        assert not (root / "new").exists()  # the folders the export made are removed again
        assert _litter(ws, root) == []


def test_a_cancelled_export_leaves_the_old_pdf_and_nothing_else(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(root, tmp_path)
    chapters = [f"- [C{n}](c{n}.md)" for n in range(6)]
    for n in range(6):
        (root / "docs" / f"c{n}.md").write_text(f"# C{n}\n\n" + "A sentence of text. " * 400 + "\n", "utf-8")
    (root / "docs" / "book.md").write_text("# Book\n\n" + "\n".join(chapters) + "\n", "utf-8")
    (root / "docs" / "book.pdf").write_bytes(b"the old book")

    # cancelled in the middle of the second layout pass, as a client's notifications/cancelled does
    def send(done: float, total: float | None, message: str | None) -> None:
        if message and "pass 2 of 2" in message:
            seen.append(message)
            call.cancel()

    seen: list[str] = []
    call = progress.Call(send, interval=0)
    with progress.running(call), pytest.raises(progress.Cancelled):
        handler.kb_create_pdf_book(ws, handler.KbCreatePdfBookRequest(path="docs/book.md"))
    assert seen and (root / "docs" / "book.pdf").read_bytes() == b"the old book"
    assert _litter(ws, root) == []

    # cancelled once the PDF was saved, before it replaced the target: not wanted any more
    real = handler.render_book
    late = progress.Call()

    def then_cancelled(*args: object) -> list[str]:
        warnings = real(*args)  # type: ignore[arg-type]
        late.cancel()
        return warnings

    monkeypatch.setattr(handler, "render_book", then_cancelled)
    with progress.running(late), pytest.raises(progress.Cancelled):
        handler.kb_create_pdf_book(ws, handler.KbCreatePdfBookRequest(path="docs/book.md"))
    assert (root / "docs" / "book.pdf").read_bytes() == b"the old book"
    assert _litter(ws, root) == []


def test_a_full_disk_is_a_permission_refusal_naming_the_pdf(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    ws = _workspace(root, tmp_path)
    (root / "docs" / "a.pdf").write_bytes(b"old")

    class Full:
        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def flush(self) -> None:
            pass

    real = handler._Output.__init__

    def on_a_full_disk(self: handler._Output, file: object, rel: str) -> None:
        real(self, Full(), rel)  # type: ignore[arg-type]

    monkeypatch.setattr(handler._Output, "__init__", on_a_full_disk)
    with pytest.raises(KbError) as info:
        _call(ws, path="docs/a.md")
    assert info.value.code == "PERMISSION_DENIED" and "No space left to write 'docs/a.pdf'" in info.value.message
    assert (root / "docs" / "a.pdf").read_bytes() == b"old"
    assert _litter(ws, root) == []


def test_a_full_disk_under_a_buffered_pdf_is_a_permission_refusal(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 1030: the refused flush left the PDF's bytes buffered, closing the file flushed them
    again, and that second ENOSPC replaced the refusal (INTERNAL_ERROR). The test above fails every
    write before anything is buffered, which never showed it."""
    import errno
    import io

    ws = _workspace(root, tmp_path)
    (root / "docs" / "a.pdf").write_bytes(b"old")
    disks: list[io.RawIOBase] = []

    class FullDisk(io.FileIO):
        def write(self, data: object) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    real = handler.os.fdopen

    def fdopen(fd: int, mode: str = "r", *args: object, **kwargs: object) -> object:
        if mode != "wb" or not os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
            return real(fd, mode, *args, **kwargs)  # type: ignore[call-overload]
        disks.append(FullDisk(fd, "wb"))
        return io.BufferedWriter(disks[-1])  # the whole small PDF is buffered until the flush

    monkeypatch.setattr(handler.os, "fdopen", fdopen)
    with pytest.raises(KbError) as info:
        _call(ws, path="docs/a.md")
    assert info.value.code == "PERMISSION_DENIED" and "No space left to write 'docs/a.pdf'" in info.value.message
    assert (root / "docs" / "a.pdf").read_bytes() == b"old"
    assert _litter(ws, root) == [] and disks and disks[0].closed


@pytest.mark.parametrize("output", ["docs/a.pdf", "exports/2024/a.pdf"])
def test_an_export_killed_mid_layout_leaves_nothing_after_the_next_start(tmp_path: Path, output: str) -> None:
    """kill -9 while a book is laid out: the old PDF stays whole, and the next start removes the
    staging file and the folders the export made (decision 660)."""
    import signal
    import subprocess
    import sys
    import time

    from local_vector_search_mcp.cli import main as cli_main

    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    # long enough to be laid out for several seconds after its staging file appears
    (root / "docs" / "a.md").write_text("# A\n\n" + "Words of a long document, page after page. " * 10_000, "utf-8")
    (root / "docs" / "a.pdf").write_bytes(b"%PDF- the old export")
    args = ["--root", str(root), "--project-root", str(tmp_path), "--embedding-provider", "none", "--allow-writes"]
    request = {"path": "docs/a.md", "outputPath": output}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "local_vector_search_mcp",
            *args,
            "call",
            "kb_create_pdf_book",
            "--json",
            json.dumps(request),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    name = Path(output).name
    try:
        deadline = time.monotonic() + 120
        while not list(root.rglob(f".{name}.*.tmp")):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the export never began"
            time.sleep(0.02)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    staged = list(root.rglob(f".{name}.*.tmp"))
    assert len(staged) == 1 and staged[0].parent == root / Path(output).parent  # what the crash leaves
    assert (root / "docs" / "a.pdf").read_bytes() == b"%PDF- the old export"

    assert cli_main([*args, "--status"]) == 0  # any start cleans up
    assert not list(root.rglob("*.tmp"))
    assert (root / "docs" / "a.pdf").read_bytes() == b"%PDF- the old export"
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["docs", "docs/a.md", "docs/a.pdf"]
    assert not list((tmp_path / ".local-vector-search-mcp" / "staging").iterdir())


def test_a_pdf_written_over_a_group_writable_one_keeps_its_mode_whatever_the_umask(root: Path, tmp_path: Path) -> None:
    # the umask took the group's write bit off (0664 -> 0644), as it did for documents (decision 1047)
    ws = _workspace(root, tmp_path)
    target = root / "docs" / "a.pdf"
    target.write_bytes(b"old")
    target.chmod(0o664)
    previous = os.umask(0o022)
    try:
        _call(ws, path="docs/a.md")
    finally:
        os.umask(previous)
    assert target.read_bytes().startswith(b"%PDF-")
    assert target.stat().st_mode & 0o777 == 0o664
