"""Wide tables: split into parts of consecutive columns that fit the page, never a reportlab error."""

from __future__ import annotations

import time
from pathlib import Path

from local_vector_search_mcp.export.pdf.flowables import (
    BROKEN_WORD_SHARE,
    KEY_COLUMN_SHARE,
    break_long_words,
    column_groups,
    fit_widths,
)

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


def test_long_words_are_capped_so_that_a_few_columns_fit() -> None:
    """Decision 1135: the widest columns give way down to a shared cap when the cap stays readable."""
    capped = break_long_words([170.0, 50.0, 80.0, 170.0], 340.0)
    assert capped == [105.0, 50.0, 80.0, 105.0] and abs(sum(capped) - 340.0) < 1e-6
    assert break_long_words([30.0, 40.0], 400.0) == [30.0, 40.0]  # fits: unchanged
    many = [100.0] * 12  # each would get 340 / 12, under the readable share: left for the parts
    assert 340.0 * BROKEN_WORD_SHARE > 340.0 / 12 and break_long_words(many, 340.0) == many


@needs_poppler
def test_a_two_column_table_of_long_words_stays_one_table(kb: Path) -> None:
    """Decision 1135: opensearch-docs' `Setting | Description` tables (a dotted setting name, a
    path in the description) were printed as two one-column tables, "Columns 1-1 of 2" then
    "Columns 2-2 of 2", each description pages away from the setting it describes."""
    rows = "".join(
        f"| `opensearch_security.session.keepalive_number_{i}` | Uses the file "
        f"`/usr/share/opensearch-dashboards-1.0.0/config/my-client-certificate-{i}.pem` row-{i} |\n"
        for i in range(3)
    )
    (kb / "t.md").write_text(f"Setting | Description\n:--- | :---\n{rows}", encoding="utf-8")
    pdf, warnings = export(kb, "t.md")
    assert warnings == []
    assert "Columns" not in text(pdf)
    lines = layout(pdf).splitlines()  # each setting begins on the line where its description begins
    assert sum("opensearch_security" in line and "Uses the file" in line for line in lines) == 3
    assert all(f"row-{i}" in text(pdf) for i in range(3))


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


@needs_poppler
def test_a_picture_column_is_wide_enough_for_the_picture_and_its_placeholder(kb: Path) -> None:
    """Decision 1136: a cell holding only a picture measured no width, so beside a long description
    its column was a sliver: the rust book's Ferris placeholders broke every word between letters
    ("av ailable", "questi on") and a picture there was drawn a few points wide."""
    from PIL import Image

    from . import poppler

    Image.new("RGB", (400, 300), "red").save(kb / "shot.png")
    long = "This code does not compile, and this cell goes on to describe at length why it does not"
    (kb / "a.md").write_text(
        f'| F | Meaning |\n|---|---|\n| <img src="gone.svg" alt="Ferris with a question mark"/> | {long} |\n'
        f'| <img src="shot.png" alt="shot"/> | {long} |\n',
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert len(warnings) == 1 and "gone.svg" in warnings[0]
    words = text(pdf).split()
    assert {"available:", "Ferris", "question", "mark"} <= set(words)  # each word whole
    [picture] = poppler.images(pdf)
    assert int(picture["width"]) / float(picture["x-ppi"]) * 72 > 50  # drawn 99 pt wide (5 before)


@needs_poppler
def test_an_html_table_is_printed_as_a_table(kb: Path) -> None:
    """Decision 1143: an HTML `<table>` (pip's survey results, foundation-sites, vue, axios) was
    printed as its text run together: "I am a Python software user Number of responses I agree 50
    I disagree 4 ...". Its rows and cells now make a table like a GFM one, a first row of `<th>`
    its header, inline HTML in cells kept (`<strong>`); text around the table in the same HTML
    block stays, and a table holding another is still its text."""
    (kb / "a.md").write_text(
        "Before.\n\n<p>Lead-in text.</p>\n<table>\n  <thead>\n    <tr>\n     <th>I am a user</th>\n"
        "     <th>Number of responses</th>\n    </tr>\n  </thead>\n  <tbody>\n"
        "    <tr>\n      <td>I agree</td>\n      <td>50</td>\n    </tr>\n"
        "    <tr><td>I disagree<td>4</tr>\n"
        "    <tr>\n      <td><strong>Grand Total</strong></td>\n      <td><strong>140</strong></td>\n    </tr>\n"
        "  </tbody>\n</table>\n<p>Trailing text.</p>\n\n"
        "<table><tr><td>outer <table><tr><td>inner</td></tr></table></td></tr></table>\n\nAfter.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    lines = [" ".join(line.split()) for line in layout(pdf).splitlines() if line.strip()]
    for row in ("I am a user Number of responses", "I agree 50", "I disagree 4", "Grand Total 140"):
        assert row in lines, row  # a row a line, each cell in its column
    flat = " ".join(text(pdf).split())
    from . import poppler

    poppler.in_order(flat, ["Before.", "Lead-in text.", "I am a user", "Grand Total", "Trailing text.", "outer inner"])
    assert any("Bold" in row["name"] for row in poppler.fonts(pdf))  # the header and <strong>
