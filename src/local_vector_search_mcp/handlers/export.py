"""kb_create_pdf_book: a document or a book of chapters as a PDF, written atomically.

The PDF is written into a staging file beside the target as reportlab saves it, then renamed
over the target (decision 660): its bytes are never all in memory, and the target is either
the old file or the whole new one. A staging note (``writer.StagingNote``) covers the minutes
a large book takes: a process killed meanwhile leaves a hidden ``.<name>.<hex>.tmp`` that the
next start removes, with any folder the export created.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from lvsm_contract.models import KbCreatePdfBookRequest, KbCreatePdfBookResult

from .. import progress
from ..assets.formats import MAX_BYTES as MAX_DOWNLOAD_BYTES
from ..assets.store import CreatedFolders, os_error
from ..errors import InvalidArgument, InvalidPath
from ..export.pdf import MAX_BOOK_BYTES, BookOptions, render_book
from ..markdown import parse_document
from ..sourcefile import read_source
from ..workspace import Workspace
from ..writer import StagingNote, is_read_only, read_only_refusal, replace_with_staged, temp_path


def kb_create_pdf_book(ws: Workspace, request: KbCreatePdfBookRequest) -> KbCreatePdfBookResult:
    ws.require_writes()
    rel, path = ws.guard.resolve(request.path, markdown=True)
    wanted = request.output_path if request.output_path is not None else rel[: -len(".md")] + ".pdf"
    out_rel, out = ws.guard.resolve(wanted, field="outputPath")
    if not out_rel.lower().endswith(".pdf"):
        raise InvalidPath(f"outputPath {out_rel!r} must end in .pdf.")
    if out.is_dir():
        raise InvalidArgument(f"outputPath {out_rel!r} is an existing folder; name a .pdf file.")
    if os.path.lexists(out) and not out.is_file():  # only an earlier export is replaced (decision 703)
        raise InvalidArgument(
            f"outputPath {out_rel!r} is not a regular file (a pipe, socket or device); name another .pdf file."
        )
    if is_read_only(out):  # said before the layout, which can take minutes; the writer checks again
        raise read_only_refusal(out_rel, "it was not replaced", ", or name another outputPath")
    raw = read_source(path, rel)  # a FIFO, link or folder is refused, never waited on; capped at 8 MiB
    if len(raw) > MAX_BOOK_BYTES:
        raise InvalidArgument(
            f"Document {rel!r} is larger than {MAX_BOOK_BYTES // (1024 * 1024)} MiB; export it in parts."
        )
    doc = parse_document(raw)
    options = BookOptions(request.page_format, request.style, request.profile, ws.config.export.pdf.cjk_font)
    folders = CreatedFolders(ws)
    staged: Path | None = None
    note: StagingNote | None = None
    try:
        folders.ensure(posixpath.dirname(out_rel))  # before the staging file, which sits beside the target
        staged = temp_path(out)
        note = StagingNote(ws, staged, folders.created, what="PDF export")  # a kill from here on is cleaned up
        with _staging_file(staged, out_rel) as file:
            warnings = render_book(ws.guard, rel, doc, file, options)
            size = _finish(file, out_rel)
        progress.check()  # cancelled while the last page was laid out: the PDF is not wanted any more
        replace_with_staged(ws, out_rel, out, staged)
    except BaseException:  # a refusal, a failure, a cancellation: the old target stays, no litter
        if staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(staged)
        folders.undo()
        raise
    finally:
        if note is not None:
            note.close()
    if size > MAX_DOWNLOAD_BYTES:
        # said now, not only when kb_download_file refuses it after the client waited for the export
        smaller = (
            "export its chapters or parts separately"
            if request.profile == "screen"
            else "export it with profile screen (or in parts)"
        )
        warnings.append(
            f"The PDF is {size / 2**20:.1f} MiB, over the {MAX_DOWNLOAD_BYTES // 2**20} MiB kb_download_file "
            f"returns: {smaller} to fetch it through the tool; the file itself is complete."
        )
    return KbCreatePdfBookResult(path=out_rel, bytes=size, warnings=warnings)


class _Output:
    """The staging file as reportlab writes into it: a failed write is the writer's refusal
    (no space, a read-only folder), told apart from any other failure of the layout."""

    def __init__(self, file: BinaryIO, rel: str) -> None:
        self._file = file
        self._rel = rel

    def write(self, data: bytes) -> int:
        try:
            return self._file.write(data)
        except OSError as exc:
            raise os_error(exc, self._rel, "write") from None

    def fileno(self) -> int:
        return self._file.fileno()

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError as exc:
            raise os_error(exc, self._rel, "write") from None


@contextlib.contextmanager
def _staging_file(staged: Path, rel: str) -> Iterator[_Output]:
    try:
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise os_error(exc, rel, "write") from None
    file = os.fdopen(fd, "wb")
    try:
        yield _Output(file, rel)
    except BaseException:
        # Closing flushes what is still buffered; after a refused write (a full disk) that fails
        # again, and its OSError replaced the typed refusal (decision 1030). The file goes anyway.
        with contextlib.suppress(OSError):
            file.close()
        raise
    try:
        file.close()
    except OSError as exc:
        raise os_error(exc, rel, "write") from None


def _finish(file: _Output, rel: str) -> int:
    """Make the written PDF durable before it replaces anything; its size."""
    file.flush()
    try:
        os.fsync(file.fileno())
        return os.fstat(file.fileno()).st_size
    except OSError as exc:
        raise os_error(exc, rel, "write") from None
