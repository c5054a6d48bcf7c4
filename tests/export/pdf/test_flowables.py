"""The element renderer: code wrapping, indentation; lists and code read back with poppler."""

from __future__ import annotations

from pathlib import Path

from local_vector_search_mcp.export.pdf.flowables import _dedent, _wrap

from . import poppler
from .conftest import export


def test_code_lines_wrap_at_the_column_count_with_a_mark() -> None:
    assert _wrap("x" * 10, 10, "> ") == ["x" * 10]
    assert _wrap("x" * 25, 10, "> ") == ["x" * 10, "> " + "x" * 8, "> " + "x" * 7]


def test_wide_characters_take_two_columns() -> None:
    lines = _wrap("中" * 8, 10, "> ")
    assert lines[0] == "中" * 5 and lines[1] == "> " + "中" * 3


def test_indentation_counts_tabs_to_the_next_multiple_of_four() -> None:
    assert _dedent("\tpara", 2) == "  para"
    assert _dedent(" \t\tx", 4) == "    x"
    assert _dedent("      x", 4) == "  x"
    assert _dedent("\t- b", 4) == "- b"


@poppler.needs_poppler
def test_tab_indented_lists_and_code_keep_their_structure(kb: Path) -> None:
    """Obsidian and many hand-edited files indent nested lists with tabs. The list marker was only
    looked for after spaces, so a tab-indented item lost its bullet and printed "-b" as text, and a
    tab-indented continuation paragraph became code; an indented code line lost all its leading
    tabs, not only the block's own (decision 472)."""
    (kb / "a.md").write_text(
        "# T\n\n- a\n\t- b\n\t\t- c\n\n- q\n\n\tcontinued\n\nend\n\n\tcode\n\t\tdeeper\n", encoding="utf-8"
    )
    pdf, _ = export(kb, "a.md")
    text = poppler.text(pdf)
    poppler.in_order(text, ["\u2022 a", "\u25e6 b", "\u25aa c", "\u2022 q", "continued", "end"])
    assert "-b" not in text and "- b" not in text
    layout = poppler.layout(pdf).splitlines()
    column = {
        word: next(line.index(word) for line in layout if word in line) for word in ("q", "continued", "code", "deeper")
    }
    assert column["continued"] > column["q"]  # the item's paragraph, indented like its first line's text
    assert column["deeper"] > column["code"]  # the second tab is the code's own


@poppler.needs_poppler
def test_footnotes_are_printed_where_they_are_defined(kb: Path) -> None:
    """CommonMark reads ``[^1]: text`` as a link reference definition: a one-word footnote vanished
    from the PDF and ``[^1]`` became a link named "^1"; a longer one was printed raw as "[^2]: ..."
    (decision 473). GitHub, Obsidian, mdBook and VitePress all render footnotes."""
    (kb / "a.md").write_text(
        "# F\n\nClaim[^1] and another[^Two] and [^undefined].\n\n"
        "[^1]: single-word-note\n[^two]: a note of several words\n  with a lazy line\n\n"
        "- item[^3]\n\n  [^3]: in-a-list\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    text = " ".join(poppler.text(pdf).split())
    assert warnings == []
    poppler.in_order(text, ["Claim1 and another", "Two and [^undefined]", "1 single-word-note", "two a note of"])
    poppler.in_order(text, ["several words with a lazy line", "item3", "3 in-a-list"])
    assert "[^1]" not in text and "^1" not in text and "[^two]" not in text


_NOTE_PAPER, _CAUTION_PAPER, _TIP_PAPER = (0xEE, 0xF5, 0xFF), (0xFF, 0xEF, 0xEF), (0xEE, 0xFA, 0xF1)


@poppler.needs_poppler
def test_obsidian_callouts_are_drawn_like_alerts_with_their_titles(kb: Path) -> None:
    """Decision 1009: an Obsidian callout (``> [!info]- Folded``) was printed as a quote reading
    "[!info]- Folded info Info body.". It is now drawn as a GitHub alert is: its title (else its
    type's name) heading the box, in its type's colour (a type Obsidian knows by the nearest GitHub
    one, another as a note), the fold sign left out; GitHub's alerts are drawn as before."""
    (kb / "a.md").write_text(
        "# C\n\n> [!note] Obsidian *callout* title\n> Callout body line.\n\n"
        "> [!info]- Folded info\n> Info body.\n\n> [!tip]+ Open\n> Tip body.\n\n"
        "> [!custom-type]\n> Custom body.\n\n> [!NOTE]\n> GitHub body.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "Obsidian callout title\nCallout body line.",
            "Folded info\nInfo body.",
            "Open\nTip body.",
            "Custom-type\nCustom body.",
            "Note\nGitHub body.",
        ],
    )
    assert "[!" not in text and "]-" not in text and "]+" not in text
    colours = poppler.colours(pdf)
    assert _NOTE_PAPER in colours and _TIP_PAPER in colours and _CAUTION_PAPER not in colours
    (kb / "b.md").write_text("# D\n\n> [!danger]\n> Red body.\n", encoding="utf-8")
    danger, _ = export(kb, "b.md")
    assert "Danger\nRed body." in poppler.text(danger) and _CAUTION_PAPER in poppler.colours(danger)


@poppler.needs_poppler
def test_an_mdbook_listing_caption_holding_a_type_is_printed_whole(kb: Path) -> None:
    """Decision 1139: the `<Listing ... caption="Using `RefCell<T>` to ...">` tag was taken to end at
    the `>` of `RefCell<T>`: 26 of the rust book's captions were lost, "Listing 15-22:" printed
    alone and the caption's end (`` ` to mutate ... immutable"> ``) as a line of prose."""
    (kb / "a.md").write_text(
        'Before.\n\n<Listing number="15-22" file-name="src/lib.rs" caption="Using `RefCell<T>` to mutate '
        'an inner value">\n\nThe body.\n\n</Listing>\n\n<div title="a>b">visible div text</div>\n',
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    flat = " ".join(poppler.text(pdf).split())
    poppler.in_order(flat, ["Before.", "Listing 15-22: Using RefCell<T> to mutate an inner value", "The body."])
    assert '">' not in flat and "`" not in flat and 'b">' not in flat and "visible div text" in flat
    assert any("Mono" in row["name"] for row in poppler.fonts(pdf))  # the caption's code span


@poppler.needs_poppler
def test_a_box_starts_where_its_first_lines_fit(kb: Path) -> None:
    """Decision 1141: a code block's or a quote's box was begun wherever the page had room for its
    top padding: an empty grey sliver at the foot of a page and the code on the next, a three-line
    block split one and two, an alert's title alone at the foot of a page and its body on the
    next. Whatever comes before them (lines of prose, rows of a table), each box now starts on the
    page that holds its first lines, a short block whole."""
    code_bg = (0xF3, 0xF3, 0xF3)  # the compact style's code background
    for rows in range(2, 6):
        table = "| h |\n|---|\n" + "\n".join(f"| r{i} |" for i in range(rows))
        for lines in range(18, 26, 2):
            words = " ".join(f"w{i}" for i in range(lines * 13))
            (kb / "a.md").write_text(
                f"{words}\n\n- item\n\n{table}\n\n```\ncode-line-one\ncode-line-two\ncode-line-three\n```\n\n"
                "> [!NOTE] Heron title\n> heron-body first line\n",
                encoding="utf-8",
            )
            pdf, _ = export(kb, "a.md", page_format="a6")
            texts = [poppler.text(pdf, n) for n in range(1, int(poppler.info(pdf)["Pages"]) + 1)]
            code = next(n for n, t in enumerate(texts, 1) if "code-line-one" in t)
            assert "code-line-three" in texts[code - 1], (rows, lines)
            # the page before holds no box: anti-aliased text makes about 200 pixels of that grey,
            # an empty sliver of box about 900
            assert code == 1 or poppler.area(pdf, code_bg, code - 1) < 600, (rows, lines)
            title = next(n for n, t in enumerate(texts, 1) if "Heron title" in t)
            assert "heron-body" in texts[title - 1], (rows, lines)
