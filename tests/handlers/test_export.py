"""kb_create_pdf_book through the dispatcher: check order, atomic replacement, nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

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
