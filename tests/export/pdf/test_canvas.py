"""The canvas a book is drawn on (decision 661): reportlab's PDF byte for byte, with each page's
content encoded as the page ends and the file written object by object at save."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from reportlab.pdfgen.canvas import Canvas

from local_vector_search_mcp.export.pdf import BookOptions, book, canvas, render_book
from local_vector_search_mcp.markdown import parse_document
from local_vector_search_mcp.paths import PathGuard

from .test_deferred import _book


class _Writes:
    """A sink that keeps what it is given, write by write."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.pieces.append(bytes(data))
        return len(data)


def _render(root: Path, rel: str, sink: Any, **options: str) -> list[str]:
    guard = PathGuard(root, root / ".lvsm" / "index.db")
    return render_book(guard, rel, parse_document((root / rel).read_bytes()), sink, BookOptions(**options))  # type: ignore[arg-type]


@pytest.mark.parametrize("style", ["compact", "technical"])
@pytest.mark.parametrize("rel", ["SUMMARY.md", "a.md"])  # a book in two passes, a document in one
def test_the_pdf_is_the_one_reportlabs_own_canvas_makes(
    kb: Path, monkeypatch: pytest.MonkeyPatch, style: str, rel: str
) -> None:
    _book(kb)
    ours = _Writes()
    warnings = _render(kb, rel, ours, style=style)
    monkeypatch.setattr(book, "BookCanvas", Canvas)
    theirs = io.BytesIO()
    assert _render(kb, rel, theirs, style=style) == warnings
    assert b"".join(ours.pieces) == theirs.getvalue()
    assert theirs.getvalue().count(b"/Type /Page\n") >= (3 if rel == "SUMMARY.md" else 1)


def test_another_reportlab_release_gets_reportlabs_own_save(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The save repeats reportlab 5.1's code: under another release the canvas is reportlab's own
    (pages kept as text, the PDF written in one piece), so the book is still the same PDF."""
    _book(kb)
    assert canvas.STREAMS  # the release the project installs is the one copied
    streamed = _Writes()
    _render(kb, "SUMMARY.md", streamed)
    monkeypatch.setattr(canvas, "STREAMS", False)
    whole = _Writes()
    _render(kb, "SUMMARY.md", whole)
    assert b"".join(whole.pieces) == b"".join(streamed.pieces)
    assert len(whole.pieces) == 1 < len(streamed.pieces)


def test_a_page_lets_go_of_its_text_when_it_ends(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _book(kb)
    at_save: list[tuple[object, object]] = []
    save = canvas.BookCanvas.save

    def inspected(self: Any) -> None:
        at_save.extend((page.stream, page.Contents) for page in self._doc.Pages.pages)
        save(self)

    monkeypatch.setattr(canvas.BookCanvas, "save", inspected)
    _render(kb, "SUMMARY.md", io.BytesIO())
    assert len(at_save) > 3
    assert all(stream is None for stream, _ in at_save)  # the operators' text is gone
    # each page's stream is there already encoded (zlib, then ASCII85 ending in ``~>``)
    encoded = [c.content for _, c in at_save]  # type: ignore[attr-defined]
    assert all(isinstance(e, str) and e.endswith("~>") for e in encoded)


def test_the_pdf_is_written_object_by_object(kb: Path) -> None:
    _book(kb)
    sink = _Writes()
    _render(kb, "SUMMARY.md", sink)
    whole = b"".join(sink.pieces)
    assert whole.startswith(b"%PDF-") and whole.rstrip().endswith(b"%%EOF")
    # one write per object, plus the header, the cross-reference table and the trailer
    assert len(sink.pieces) == whole.count(b"\nendobj\n") + 3 > 20
    assert all(piece.count(b"\nendobj\n") <= 1 for piece in sink.pieces)
