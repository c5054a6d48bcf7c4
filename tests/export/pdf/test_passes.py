"""Layout passes of a book (decision 601): the contents start with their entries, so a book is
laid out in two passes, the first without drawing, and the PDF is the one three passes made."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from local_vector_search_mcp.export.pdf import book

from . import poppler
from .conftest import export

CHAPTERS = 30


def _book(root: Path) -> None:
    """A book whose contents take several pages, so numbering them moves every page after them."""
    lines = ["# Passes", ""]
    for n in range(1, CHAPTERS + 1):
        sections = "".join(
            f"## Section {n}.{s} of chapter {n}\n\n" + f"Text of section {s}, chapter {n}. " * (8 * s) + "\n\n"
            for s in range(1, 4)
        )
        table = f"| Key | Value |\n| --- | --- |\n| k{n} | a value of chapter {n} |\n\n"
        (root / f"ch{n}.md").write_text(f"# Chapter number {n}\n\nIntro {n}.\n\n{table}{sections}", encoding="utf-8")
        lines.append(f"- [Chapter number {n}](ch{n}.md)")
    (root / "SUMMARY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


class _Passes:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        build = book._Template.build

        def counted(template: Any, *args: Any, **kwargs: Any) -> None:
            self.count += 1
            build(template, *args, **kwargs)

        monkeypatch.setattr(book._Template, "build", counted)


def test_a_book_takes_two_passes_and_its_contents_name_the_right_pages(
    kb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _book(kb)
    passes = _Passes(monkeypatch)
    pdf, warnings = export(kb, "SUMMARY.md")
    assert warnings == []
    assert passes.count == 2
    pages = int(poppler.info(pdf)["Pages"])
    contents = poppler.text(pdf, 2, 6)
    checked = 0
    for n in range(1, CHAPTERS + 1):
        for title in (f"Chapter number {n}", f"Section {n}.2 of chapter {n}"):
            found = re.search(re.escape(title) + r"(?!\d)[\s.]*?(\d+)\s", contents)
            assert found is not None, title
            page = int(found.group(1))
            assert 2 < page <= pages
            assert title in poppler.text(pdf, page, page), (title, page)
            checked += 1
    assert checked == 2 * CHAPTERS


def test_the_pdf_is_the_one_an_empty_contents_made_in_three_passes(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _book(kb)
    now, _ = export(kb, "SUMMARY.md", kb / "now.pdf")
    passes = _Passes(monkeypatch)
    # as before decision 601: the contents start empty and every pass draws
    monkeypatch.setattr(book, "contents_entries", lambda *args: [])
    monkeypatch.setattr(book._Frame, "draws", True)
    monkeypatch.setattr(book._Frame, "add", book.Frame._add)
    monkeypatch.setattr(book._Frame, "_add", book.Frame._add)
    before, _ = export(kb, "SUMMARY.md", kb / "before.pdf")
    assert passes.count == 3
    assert now.read_bytes() == before.read_bytes()


def test_a_first_pass_that_drew_nothing_is_never_the_last(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Contents that start with their final page numbers are settled after the first pass, which
    drew no block: a second pass draws them (the PDF was blank pages with footers)."""
    _book(kb)
    found: list[tuple[int, str, int, str]] = []
    entry = book._toc_entry

    def recorded(*args: Any) -> tuple[int, str, int, str]:
        found.append(entry(*args))
        return found[-1]

    monkeypatch.setattr(book, "_toc_entry", recorded)
    first, _ = export(kb, "SUMMARY.md", kb / "first.pdf")
    settled = [e for e in found if e[2]][-(len(found) // 3) :]  # the last pass's notifications
    monkeypatch.setattr(book, "contents_entries", lambda *args: list(settled))
    passes = _Passes(monkeypatch)
    second, _ = export(kb, "SUMMARY.md", kb / "second.pdf")
    assert passes.count == 2
    assert second.read_bytes() == first.read_bytes()
    assert "Section 30.3 of chapter 30" in poppler.text(second)


def test_a_placed_paragraph_lets_go_of_its_lines(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each pass wraps a paragraph again, so the lines of a placed one are dropped (decision 604):
    kept to the end, they were about 2/5 of a pass's memory."""
    _book(kb)
    placed: list[Any] = []
    after = book._Template.afterFlowable

    def recorded(template: Any, flowable: Any) -> None:
        after(template, flowable)
        placed.append(flowable)

    monkeypatch.setattr(book._Template, "afterFlowable", recorded)
    pdf, _ = export(kb, "SUMMARY.md")
    paragraphs = [f for f in placed if isinstance(f, book.Paragraph)]
    assert len(paragraphs) > 4 * CHAPTERS
    tables = [f for f in placed if isinstance(f, book.Table) and not isinstance(f, book.TableOfContents)]
    assert len(tables) >= CHAPTERS
    cells = [cell for table in tables for row in table._cellvalues for cell in row]
    flat = [each for cell in cells for each in (cell if isinstance(cell, (list, tuple)) else [cell])]
    in_cells = [each for each in flat if isinstance(each, book.Paragraph)]
    assert len(in_cells) >= 4 * CHAPTERS  # a header and a row of two cells in each chapter
    paragraphs += in_cells
    assert not any(hasattr(p, "blPara") for p in paragraphs)
    assert "Section 30.3 of chapter 30" in poppler.text(pdf)


def test_the_contents_let_go_of_their_table_once_placed(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """reportlab's contents keep the table of one paragraph per entry they lay out until the end of
    the export (decision 662): placed, it is dropped; the PDF is the one reportlab's own makes."""
    _book(kb)
    held: list[object] = []
    after = book._Template.afterFlowable

    def recorded(template: Any, flowable: Any) -> None:
        after(template, flowable)
        if isinstance(flowable, book.AnchorFlowable) and flowable._name == "c0":  # the first chapter's start
            contents = next(f for f in template._indexingFlowables if isinstance(f, book.TableOfContents))
            held.append(contents._table)

    monkeypatch.setattr(book._Template, "afterFlowable", recorded)
    ours, _ = export(kb, "SUMMARY.md", kb / "ours.pdf")
    assert held == [None, None]  # in both passes, the contents spread over several pages
    monkeypatch.setattr(book, "_Contents", book.TableOfContents)
    held.clear()
    theirs, _ = export(kb, "SUMMARY.md", kb / "theirs.pdf")
    assert len(held) == 2 and all(table is not None for table in held)
    assert ours.read_bytes() == theirs.read_bytes()
    assert int(poppler.info(ours)["Pages"]) > 6


def test_no_split_piece_is_held_to_the_end_of_the_export(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """reportlab's undo note for a postponed block held every remainder of a long table (the
    contents over many pages, each remainder with every row after it) until the PDF was saved
    (decision 664): at the save no piece of a split table is alive."""
    import gc
    import weakref

    from reportlab.platypus.tables import Table

    _book(kb)
    pieces: weakref.WeakSet[Any] = weakref.WeakSet()
    monkeypatch.setattr(Table, "onSplit", lambda self, piece, byRow=1: pieces.add(piece))
    alive: list[int] = []
    save = book.BookCanvas.save

    def counted(canvas: Any) -> None:
        gc.collect()
        alive.append(len(pieces))
        save(canvas)

    monkeypatch.setattr(book.BookCanvas, "save", counted)
    pdf, _ = export(kb, "SUMMARY.md")
    assert alive == [0]
    assert int(poppler.info(pdf)["Pages"]) > 6 and "Section 30.3 of chapter 30" in poppler.text(pdf)
