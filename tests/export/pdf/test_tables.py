"""Wide tables: split into parts of consecutive columns that fit the page, never a reportlab error."""

from __future__ import annotations

import time
from pathlib import Path

from local_vector_search_mcp.export.pdf.flowables import KEY_COLUMN_SHARE, column_groups, fit_widths

from .conftest import export
from .poppler import layout, needs_cjk_font, needs_poppler, text


def _table(columns: int, rows: int, header: str = "c{}", cell: str = "v{}") -> bytes:
    line = lambda cells: "| " + " | ".join(cells) + " |\n"  # noqa: E731
    out = line(header.format(i) for i in range(columns)) + "|" + "---|" * columns + "\n"
    for r in range(rows):
        out += line(cell.format(f"{r}.{i}") for i in range(columns))
    return out.encode()


def test_a_table_that_fits_stays_one_group() -> None:
    assert column_groups([30.0, 40.0, 50.0], 400.0) == [[0, 1, 2]]


def test_groups_fit_the_width_and_repeat_a_narrow_first_column() -> None:
    minimum = [20.0] + [60.0] * 30
    groups = column_groups(minimum, 300.0)
    assert all(g[0] == 0 for g in groups)
    assert sorted({c for g in groups for c in g}) == list(range(31))  # every column is printed
    assert [c for g in groups for c in g[1:]] == list(range(1, 31))  # once, in order (the key aside)
    assert all(sum(minimum[c] for c in g) <= 300.0 for g in groups)


def test_a_wide_first_column_is_not_repeated() -> None:
    minimum = [300.0 * KEY_COLUMN_SHARE + 1] + [60.0] * 10
    groups = column_groups(minimum, 300.0)
    assert [c for g in groups for c in g] == list(range(11)) and groups[1][0] != 0


def test_widths_never_fall_below_the_minimum_when_the_minimums_fit() -> None:
    widths = fit_widths([500.0, 20.0, 300.0], [50.0, 20.0, 40.0], 200.0)
    assert abs(sum(widths) - 200.0) < 1e-6
    assert all(w >= m for w, m in zip(widths, [50.0, 20.0, 40.0], strict=True))


@needs_poppler
def test_a_300_column_table_is_printed_in_parts_with_every_column(kb: Path) -> None:
    (kb / "wide.md").write_bytes(_table(300, 2))
    pdf, warnings = export(kb, "wide.md")
    assert warnings == []
    words = text(pdf).split()
    assert all(f"c{i}" in words for i in range(300)) and "v1.299" in words
    assert "Columns 1\u2013" in text(pdf, 1) and "column 1 repeated" in text(pdf, 1)


@needs_poppler
def test_long_headers_are_split_rather_than_squeezed_into_slivers(kb: Path) -> None:
    (kb / "t.md").write_bytes(_table(12, 3, header="a_long_column_name_{}"))
    pdf, _ = export(kb, "t.md")
    words = text(pdf).split()
    assert all(f"a_long_column_name_{i}" in words for i in range(12))  # each header whole, not broken


def test_a_5000_column_table_finishes_in_bounded_time(kb: Path) -> None:
    (kb / "huge.md").write_bytes(_table(5000, 1))
    started = time.process_time()
    pdf, warnings = export(kb, "huge.md")
    assert pdf.read_bytes().startswith(b"%PDF-") and warnings == []
    assert time.process_time() - started < 60  # a hang guard: about 3 CPU seconds here


def test_a_table_over_the_cell_cap_is_printed_as_text_with_a_warning(kb: Path) -> None:
    (kb / "big.md").write_bytes(_table(5, 5000))
    pdf, warnings = export(kb, "big.md")
    assert len(warnings) == 1 and "printed as its Markdown text" in warnings[0]
    assert pdf.read_bytes().startswith(b"%PDF-")


@needs_poppler
def test_pictures_in_cells_are_drawn_or_replaced_by_placeholders(kb: Path) -> None:
    """Pictures in a table cell (icons, a screenshot beside its description) were dropped without a
    warning: only the cell's text was kept (decision 474)."""
    from PIL import Image

    from . import poppler

    Image.new("RGB", (400, 300), "red").save(kb / "shot.png")
    (kb / "a.md").write_text(
        "# T\n\n| view | what |\n|---|---|\n| ![shot](shot.png) | shown-row |\n"
        "| before ![gone](gone.png) | gone-row |\n| ![a](shot.png) ![b](shot.png) | two-row |\n\nafter\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md", page_format="a6")
    assert warnings == ["Image 'gone.png' in a.md was replaced by a placeholder: the file does not exist."]
    flat = " ".join(text(pdf).split())
    poppler.in_order(flat, ["shown-row", "before", "gone-row", "two-row", "after"])
    assert "Image not available: gone" in flat
    assert len(poppler.images(pdf)) == 3


@needs_poppler
@needs_cjk_font
def test_a_short_cjk_cell_beside_a_long_one_keeps_its_characters_on_one_line(kb: Path) -> None:
    """Decision 1056: a table's columns were sized by measuring CJK text in the body face, which
    lacks it, so `中文` counted as two narrow missing glyphs and its column was left too narrow for
    it: beside a line-long cell it was printed one character a line, and so was a CJK header."""
    long = "This cell goes on for a whole line and more, describing something at length so that it wraps"
    (kb / "t.md").write_text(
        f"| a | b |\n|---|---|\n| {long} | 中文 |\n\n"
        f"| 说明 | 语言 | c |\n|---|---|---|\n| {long} | 日本語 | `代码` |\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "t.md")
    assert warnings == []
    lines = layout(pdf).splitlines()
    assert all(any(word in line for line in lines) for word in ("中文", "说明", "语言", "日本語", "代码"))
