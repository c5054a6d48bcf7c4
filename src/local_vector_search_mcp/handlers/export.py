"""kb_create_pdf_book: a document or a book of chapters as a PDF, written atomically."""

from __future__ import annotations

import io

from lvsm_contract.models import KbCreatePdfBookRequest, KbCreatePdfBookResult

from .. import progress
from ..assets.formats import MAX_BYTES as MAX_DOWNLOAD_BYTES
from ..errors import InvalidArgument, InvalidPath
from ..export.pdf import MAX_BOOK_BYTES, BookOptions, render_book
from ..markdown import parse_document
from ..sourcefile import read_source
from ..workspace import Workspace
from ..writer import replace_file


def kb_create_pdf_book(ws: Workspace, request: KbCreatePdfBookRequest) -> KbCreatePdfBookResult:
    ws.require_writes()
    rel, path = ws.guard.resolve(request.path, markdown=True)
    wanted = request.output_path if request.output_path is not None else rel[: -len(".md")] + ".pdf"
    out_rel, out = ws.guard.resolve(wanted, field="outputPath")
    if not out_rel.lower().endswith(".pdf"):
        raise InvalidPath(f"outputPath {out_rel!r} must end in .pdf.")
    if out.is_dir():
        raise InvalidArgument(f"outputPath {out_rel!r} is an existing folder; name a .pdf file.")
    raw = read_source(path, rel)  # a FIFO, link or folder is refused, never waited on; capped at 8 MiB
    if len(raw) > MAX_BOOK_BYTES:
        raise InvalidArgument(
            f"Document {rel!r} is larger than {MAX_BOOK_BYTES // (1024 * 1024)} MiB; export it in parts."
        )
    doc = parse_document(raw)
    options = BookOptions(request.page_format, request.style, request.profile, ws.config.export.pdf.cjk_font)
    # reportlab holds the whole PDF in memory until it is saved anyway; the bytes
    # then go through the atomic writer like every other file the server writes.
    buffer = io.BytesIO()
    warnings = render_book(ws.guard, rel, doc, buffer, options)
    data = buffer.getvalue()
    progress.check()  # cancelled while the last page was laid out: the PDF is not wanted any more
    replace_file(ws, out_rel, out, data)
    if len(data) > MAX_DOWNLOAD_BYTES:
        # said now, not only when kb_download_file refuses it after the client waited for the export
        smaller = (
            "export its chapters or parts separately"
            if request.profile == "screen"
            else "export it with profile screen (or in parts)"
        )
        warnings.append(
            f"The PDF is {len(data) / 2**20:.1f} MiB, over the {MAX_DOWNLOAD_BYTES // 2**20} MiB kb_download_file "
            f"returns: {smaller} to fetch it through the tool; the file itself is complete."
        )
    return KbCreatePdfBookResult(path=out_rel, bytes=len(data), warnings=warnings)
