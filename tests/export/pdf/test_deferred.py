"""A book's chapters are made when the layout reaches them and dropped once placed (H70): the
PDF and the warnings are those of a story made whole beforehand, and the blocks of the chapters
already placed are no longer held."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from local_vector_search_mcp import progress
from local_vector_search_mcp.export.pdf import book

from . import poppler
from .conftest import export

pytestmark = poppler.needs_poppler


def _picture(path: Path) -> None:
    """A photo larger than any profile needs, so it is re-encoded (shared bytes in memory)."""
    img = Image.new("RGB", (1600, 1200))
    img.putdata([((x * 7) % 256, (y * 3) % 256, (x ^ y) % 256) for y in range(1200) for x in range(1600)])
    img.save(path, "JPEG", quality=80)


def _book(root: Path) -> None:
    """Part titles, nested chapters (no page break between them), a missing chapter, one without
    a heading, one listed twice, one ending with a heading (kept with the next chapter's first
    block), tables, footnotes, the same picture in two chapters and pictures that are missing."""
    _picture(root / "photo.jpg")
    summary = [
        "# Deferred",
        "",
        "[Foreword](fore.md)",
        "",
        "# Part one",
        "",
        "- [Alpha](a.md)",
        "  - [Alpha nested](an.md)",
        "  - [Ends with a heading](end.md)",
        "  - [Starts plainly](plain.md)",
        "- [Gone](missing.md)",
        "",
        "# Part two",
        "",
        "- [Beta](b.md)",
        "  - [Alpha again](a.md)",
        "- [Gamma](g.md)",
    ]
    (root / "SUMMARY.md").write_text("\n".join(summary) + "\n", encoding="utf-8")
    (root / "fore.md").write_text("# Foreword\n\nWhy this book.[^1]\n\n[^1]: A note.\n", encoding="utf-8")
    text = "Words of the chapter that fill lines. " * 30
    (root / "a.md").write_text(
        f"# Alpha\n\n{text}\n\n![photo](photo.jpg)\n\n## Alpha table\n\n| k | v |\n| - | - |\n| 1 | one |\n\n"
        f"![gone](nope.png)\n\n{text}\n",
        encoding="utf-8",
    )
    (root / "an.md").write_text(f"## Nested\n\n{text}\n\n### Deeper\n\n- item\n- item two\n", encoding="utf-8")
    (root / "end.md").write_text(f"# Ending\n\n{text}\n\n## The last heading\n", encoding="utf-8")
    (root / "plain.md").write_text(f"No heading here. {text}\n", encoding="utf-8")
    (root / "b.md").write_text(
        f"# Beta\n\n> quoted {text}\n\n![photo again](photo.jpg)\n\n![also gone](gone.gif)\n\n"
        "```\ncode line\n```\n\n[to alpha](a.md#alpha-table)\n",
        encoding="utf-8",
    )
    (root / "g.md").write_text(f"# Gamma\n\n{text}\n\n" * 3, encoding="utf-8")


def _made_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The story as it was before H70: every chapter's blocks made before the layout, once."""
    story = book._Book.story

    def whole(self: Any, doc: Any, parts: Any) -> Any:
        flowables, info, title_page = story(self, doc, parts)
        made: list[Any] = []
        for f in flowables:
            made += self.make(f.index, 1) if isinstance(f, book._Deferred) else [f]
        self.headings = []  # the contents' entries come from the story's headings, as before
        return made, info, title_page

    monkeypatch.setattr(book._Book, "story", whole)


@pytest.mark.parametrize("keep", [0, book.KEEP_FOR_NEXT_PASS])  # every chapter made again, or none
@pytest.mark.parametrize("style", ["compact", "technical"])  # technical numbers the headings
def test_the_pdf_and_warnings_are_those_of_a_story_made_whole(
    kb: Path, monkeypatch: pytest.MonkeyPatch, style: str, keep: int
) -> None:
    _book(kb)
    monkeypatch.setattr(book, "KEEP_FOR_NEXT_PASS", keep)
    monkeypatch.setattr(book, "MAX_WARNINGS", 2)  # the third is counted: once, not once per pass
    now, now_warnings = export(kb, "SUMMARY.md", kb / "now.pdf", style=style)
    _made_whole(monkeypatch)
    before, before_warnings = export(kb, "SUMMARY.md", kb / "before.pdf", style=style)
    assert now.read_bytes() == before.read_bytes()
    assert now_warnings == before_warnings
    assert [w.split(" ")[1] for w in now_warnings] == ["'nope.png'", "missing.md", "and"], now_warnings
    assert now_warnings[-1] == "... and 1 more warnings."
    text = poppler.text(now)
    poppler.in_order(
        text.split("Gamma", 1)[1],  # past the contents
        ["Why this book", "Part one", "Alpha table", "Deeper", "The last heading", "No heading here", "Gone"],
    )
    assert len(poppler.images(now)) == 2


def _many(kb: Path, chapters: int) -> int:
    """A book of ``chapters`` chapters of the same size; returns a chapter's size in bytes."""
    lines = ["# Many", ""]
    for n in range(chapters):
        body = "".join(f"Paragraph {p} of chapter {n:02}. " * 12 + "\n\n" for p in range(20))
        text = f"# Chapter {n:02}\n\n{body}| a | b |\n| - | - |\n| 1 | 2 |\n"
        (kb / f"c{n}.md").write_text(text, encoding="utf-8")
        lines.append(f"- [Chapter {n}](c{n}.md)")
    (kb / "SUMMARY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(text.encode())


def test_the_second_pass_places_the_kept_chapters_blocks_again(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within ``KEEP_FOR_NEXT_PASS`` the first chapters' blocks are made once and placed in both
    passes (decision 606); the chapters beyond it are made again, as decision 620 makes them all."""
    size = _many(kb, 8)
    monkeypatch.setattr(book, "KEEP_FOR_NEXT_PASS", 3 * size)
    made: dict[int, list[list[Any]]] = {}
    make = book._Book.make

    def tracked(self: Any, index: int, pass_no: int) -> list[Any]:
        blocks: list[Any] = make(self, index, pass_no)
        made.setdefault(index, []).append(list(blocks))
        return blocks

    monkeypatch.setattr(book._Book, "make", tracked)
    pdf, warnings = export(kb, "SUMMARY.md")
    assert warnings == []
    chapters = sorted(made)
    assert len(chapters) == 8 and all(len(made[i]) == 2 for i in chapters)  # two passes, each part placed
    same = [all(a is b for a, b in zip(*made[i], strict=True)) for i in chapters]
    assert same == [True] * 3 + [False] * 5
    assert "Paragraph 19 of chapter 07" in poppler.text(pdf)


def test_the_blocks_of_placed_chapters_are_not_held(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When a chapter is made, no block of the chapters placed before the previous one is alive:
    made whole, every chapter's blocks were held through both passes (1.4 GiB for opensearch-docs)."""
    chapters = 24
    _many(kb, chapters)
    monkeypatch.setattr(book, "KEEP_FOR_NEXT_PASS", 0)  # none kept for the second pass (decision 606)
    made: list[list[weakref.ref[Any]]] = []
    alive: list[int] = []
    make = book._Book.make

    def tracked(self: Any, index: int, pass_no: int) -> list[Any]:
        if pass_no == 1 and len(made) > 2:
            gc.collect()
            alive.append(sum(1 for refs in made[:-2] for ref in refs if ref() is not None))
        blocks: list[Any] = make(self, index, pass_no)
        if pass_no == 1:
            made.append([weakref.ref(b) for b in blocks])
        return blocks

    monkeypatch.setattr(book._Book, "make", tracked)
    pdf, warnings = export(kb, "SUMMARY.md")
    assert warnings == []
    assert len(made) == chapters and sum(map(len, made)) > 20 * chapters
    assert len(alive) == chapters - 3
    assert alive == [0] * len(alive)
    assert f"Paragraph 19 of chapter {chapters - 1:02}" in poppler.text(pdf)


def test_a_book_reports_progress_through_its_chapters(kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress grows through each pass as the chapters are placed, to its total (decision 501)."""
    _book(kb)
    seen: list[tuple[float, float | None, str]] = []

    def step(done: float, total: float | None = None, message: Any = None, *, final: bool = False) -> None:
        seen.append((done, total, message() if callable(message) else message or ""))

    monkeypatch.setattr(progress, "step", step)
    export(kb, "SUMMARY.md")
    values = [done for done, _, _ in seen]
    assert values == sorted(values)
    assert seen[-1][0] == seen[-1][1] and seen[-1][2].startswith("Laid out")
    laying = [(done, message) for done, _, message in seen if message.startswith("Laying out (pass 1")]
    # the first pass moves through the chapters, not only at its start and its end
    chapters = {message.rsplit("chapter ", 1)[-1] for _, message in laying}
    assert len(chapters) >= 5, chapters
    assert len({done for done, _ in laying}) >= 5
