"""The canvas a book is drawn on: the same PDF as reportlab's, with less of it held in memory.

reportlab's canvas keeps every page of a layout pass until ``save()``, each page's content
stream as the drawing operators' text, compressed only when the PDF is formatted; ``save()``
then formats every object into a list of byte strings, joins them into one and gives the file
that (decision 605: "the PDF being written"). For a book of 8,579 pages that is about 50 MiB of
page text, then the PDF twice over (decision 661).

:class:`BookCanvas` changes two things, neither the bytes:

- a page's content stream is encoded (zlib, then ASCII85 as reportlab's ``useA85`` setting asks)
  when the page ends, by the very filters ``PDFPage.check_format`` would apply at save, and the
  page keeps the encoded stream in its ``Contents``; the stream's ``/Filter`` names the filters
  applied, in the same order;
- ``save()`` writes each object to the file as it is formatted (:class:`_Streamed`), where
  reportlab's ``PDFDocument.format`` collected them for one write. :func:`_write_pdf` is that
  method with its output collector swapped (reportlab 5.1): the objects, the cross-reference
  table and the trailer are formatted by reportlab's own code, in the same order.

Tests compare the bytes with those of reportlab's own canvas
(``tests/export/pdf/test_canvas.py``), so a reportlab whose formatting changes fails them.
"""

from __future__ import annotations

from typing import Any, Protocol

import reportlab
from reportlab import rl_config
from reportlab.pdfbase import pdfdoc
from reportlab.pdfgen.canvas import Canvas

__all__ = ["BookCanvas", "PdfSink"]


class PdfSink(Protocol):
    """Where a book's PDF goes: a file opened for binary writing (or anything with its ``write``)."""

    def write(self, data: bytes, /) -> object: ...


# The reportlab release whose save and page encoding this module repeats. Under any other (the
# dependency range admits 4.2 to 5.x) the canvas is reportlab's own, unchanged: the book is the
# same PDF, only held in memory to the save as before decision 661.
STREAMS = reportlab.Version.startswith("5.1.")


class BookCanvas(Canvas):  # type: ignore[misc]  # reportlab ships no type hints
    """reportlab's canvas, its pages compressed as they end and its PDF streamed out at save."""

    def showPage(self) -> None:
        super().showPage()
        if STREAMS:
            _seal(self._doc.Pages.pages[-1])

    def save(self) -> None:
        if not STREAMS:
            super().save()
            return
        if len(self._code):  # as Canvas.save: a page begun and not shown is shown
            self.showPage()
        doc = self._doc
        if getattr(doc, "_savedToFile", False):
            raise RuntimeError("a canvas is saved once")
        doc._savedToFile = True
        _write_pdf(doc, self, self._filename)


class _Encoded:
    """A stream filter already applied: it names itself in the stream's ``/Filter`` and leaves
    the content as it is."""

    def __init__(self, pdfname: str) -> None:
        self.pdfname = pdfname

    def encode(self, content: bytes) -> bytes:
        return content


def _seal(page: Any) -> None:
    """Encode a finished page's content stream now rather than at save (same bytes).

    ``PDFPage.check_format`` makes ``Contents`` from ``stream`` only when it has none: it gets
    the stream it would have made, already encoded, and the text is let go.
    """
    if page.Override_default_compilation or page.Contents or not page.stream or not page.compression:
        return  # check_format makes this page's stream itself, as before
    filters = [pdfdoc.PDFBase85Encode, pdfdoc.PDFZCompress] if rl_config.useA85 else [pdfdoc.PDFZCompress]
    content = page.stream
    for applied in reversed(filters):  # PDFStream.format applies them last first
        content = applied.encode(content)
    stream = pdfdoc.PDFStream(content=content, filters=[_Encoded(f.pdfname) for f in filters])
    stream.__Comment__ = "page stream"
    page.Contents = stream
    page.stream = None


class _Streamed(pdfdoc.PDFFile):  # type: ignore[misc]  # reportlab ships no type hints
    """reportlab's output collector, writing each piece to ``sink`` instead of keeping it."""

    def __init__(self, sink: PdfSink, pdf_version: Any) -> None:
        super().__init__(pdf_version)  # adds the header to ``strings``
        header: list[bytes] = self.strings
        for piece in header:
            sink.write(piece)
        self.strings: list[bytes] = []
        self.write = sink.write

    def format(self, document: Any) -> bytes:
        return b""  # every piece is written already


def _write_pdf(doc: Any, canvas: Canvas, sink: PdfSink) -> None:
    """``PDFDocument.SaveToFile`` for a file object: ``GetPDFData`` then ``format``, streamed."""
    if getattr(doc, "_digiSigs", None):  # reportlab signs the collected file: never asked of a book
        raise RuntimeError("BookCanvas cannot write a signed PDF")
    # GetPDFData
    for fnt in doc.delayedFonts:
        fnt.addObjects(doc)
    doc.info.invariant = doc.invariant
    doc.info.digest(doc.signature)
    doc.Reference(doc.Catalog)
    doc.Reference(doc.info)
    doc.Outlines.prepare(doc, canvas)
    if doc.Outlines.ready < 0:
        doc.Catalog.Outlines = None
    # format
    doc.encrypt.prepare(doc)
    cat = doc.Catalog
    info = doc.info
    doc.Reference(cat)
    doc.Reference(info)
    encryptref = None
    encryptinfo = doc.encrypt.info()
    if encryptinfo:
        encryptref = doc.Reference(encryptinfo)
    counter = 0
    ids = []
    numbertoid = doc.numberToId
    idToOb = doc.idToObject
    idToOf = doc.idToOffset
    out = _Streamed(sink, doc._pdfVersion)
    while True:  # objects may be added while others are formatted: numbered as they come
        counter += 1
        if counter not in numbertoid:
            break
        oid = numbertoid[counter]
        obj = idToOb[oid]
        formatted = pdfdoc.PDFIndirectObject(oid, obj).format(doc)
        if not rl_config.invariant and rl_config.pdfComments:
            out.add(f"% {oid!a}: class {type(obj).__name__[:50]} \n")
        idToOf[oid] = out.add(formatted)
        ids.append(oid)
    count = len(numbertoid)
    if counter - 1 != count:
        raise ValueError(f"counter {counter} doesn't match number to id dictionary {count}")
    xref = pdfdoc.PDFCrossReferenceTable()
    xref.addsection(0, ids)
    xrefoffset = out.add(xref.format(doc))
    trailer = pdfdoc.PDFTrailer(
        startxref=xrefoffset,
        Size=count + 1,
        Root=doc.Reference(cat),
        Info=doc.Reference(info),
        Encrypt=encryptref,
        ID=doc.ID(),
    )
    out.add(trailer.format(doc))
