"""Whole exports read back with poppler: text order, page sizes, fonts, pictures, links, outline."""

from __future__ import annotations

import itertools
import re
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from shared_data import CORPORA

from local_vector_search_mcp.export.pdf import book, fonts
from local_vector_search_mcp.export.pdf.book import PART, _summary_links
from local_vector_search_mcp.markdown import parse_text

from . import poppler
from .conftest import export

pytestmark = poppler.needs_poppler

RUST = CORPORA / "rust-book"
VUE = CORPORA / "vue-docs-zh-cn"
needs_corpora = pytest.mark.skipif(not RUST.is_dir() or not VUE.is_dir(), reason="shared corpora not available")

SAMPLE = """---
title: My Book
author: Jane Doe
---

# Title

Para with *em* and **strong** and ~~strike~~ and `code` and [a link](#sub).

- item 1
  - nested a
  - [ ] task
1. one
2. two

> quote line
>
> second para

> [!WARNING]
> Alert text.

---

| left | right |
|------|------:|
| 1    | 2     |

```rust
fn main() {}
```

    indented code

## Sub

Last words.
"""

RUST_CHAPTERS = [
    ("Installation", "ch01-01-installation.md"),
    ("Hello, World!", "ch01-02-hello-world.md"),
    ("Publishing a Crate to Crates.io", "ch14-02-publishing-to-crates-io.md"),
    ("Operators and Symbols", "appendix-02-operators.md"),
]


def _rust_subset(root: Path) -> None:
    lines = ["# The Rust Subset", ""]
    for title, name in RUST_CHAPTERS:
        shutil.copy(RUST / name, root / name)
        lines.append(f"- [{title}]({name})")
    (root / "SUMMARY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copytree(RUST / "img", root / "img")


def test_every_element_kind_is_rendered_in_reading_order(kb: Path) -> None:
    (kb / "a.md").write_text(SAMPLE, encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "My Book",
            "Jane Doe",
            "Title",
            "Para with em and strong and strike and code and a link.",
            "item 1",
            "nested a",
            "task",
            "1. one",
            "2. two",
            "quote line",
            "second para",
            "Warning",
            "Alert text.",
            "left",
            "right",
            "fn main() {}",
            "indented code",
            "Sub",
            "Last words.",
        ],
    )
    assert "title:" not in text and "[!WARNING]" not in text and "```" not in text
    meta = poppler.info(pdf)
    assert meta["Title"] == "My Book" and meta["Author"] == "Jane Doe"


def test_same_input_gives_the_same_bytes(kb: Path) -> None:
    (kb / "a.md").write_text(SAMPLE, encoding="utf-8")
    first, _ = export(kb, "a.md", kb / "1.pdf")
    second, _ = export(kb, "a.md", kb / "2.pdf")
    assert first.read_bytes() == second.read_bytes()


@pytest.mark.parametrize(
    ("page_format", "size"),
    [
        ("a4", (595.3, 841.9)),
        ("a5", (419.5, 595.3)),
        ("a6", (297.6, 419.5)),
        ("b5", (498.9, 708.7)),
        ("letter", (612.0, 792.0)),
    ],
)
def test_page_formats(kb: Path, page_format: str, size: tuple[float, float]) -> None:
    (kb / "a.md").write_text(SAMPLE, encoding="utf-8")
    pdf, _ = export(kb, "a.md", page_format=page_format)
    width, height = poppler.page_size(pdf)
    assert abs(width - size[0]) < 1 and abs(height - size[1]) < 1


def test_styles_look_different(kb: Path) -> None:
    (kb / "a.md").write_text(SAMPLE, encoding="utf-8")
    faces = {}
    texts = {}
    for style in ("compact", "classic", "modern", "technical", "academic"):
        pdf, _ = export(kb, "a.md", kb / f"{style}.pdf", style=style)
        faces[style] = {f["name"].split("+")[-1] for f in poppler.fonts(pdf)}
        texts[style] = poppler.text(pdf)
    assert "DejaVuSerif" in faces["classic"] and "DejaVuSerif" in faces["academic"]
    assert "DejaVuSerif-Italic" in faces["classic"]  # a real italic, not the regular face under its name
    assert "DejaVuSerif" not in faces["compact"] and "DejaVuSans" in faces["modern"]
    # technical and academic number their headings
    assert "1.1  Sub" in texts["technical"].replace("\u00a0", " ") or "1.1 Sub" in texts["technical"]
    assert "1.1" not in texts["compact"]


def test_a_link_list_document_is_a_book_and_prose_is_not() -> None:
    book = parse_text("# Book\n\n[Preface](p.md)\n\n- [One](one.md)\n  - [One A](sub/a.md)\n- [Draft]()\n")
    assert _summary_links(book) == [
        ("Preface", "p.md", 0, False),
        ("One", "one.md", 0, True),
        ("One A", "sub/a.md", 1, True),
        ("Draft", "", 0, True),
    ]
    assert _summary_links(parse_text("# Notes\n\nSee [one](one.md) for details.\n")) is None
    assert _summary_links(parse_text("- [Site](https://example.com)\n")) is None
    assert _summary_links(parse_text("- [One](one.md)\n\n```\ncode\n```\n")) is None


def test_part_titles_between_chapters_are_printed(kb: Path) -> None:
    """mdBook's SUMMARY.md names parts with headings between the chapter lists; they were skipped,
    so the part titles were missing from the book (decision 474)."""
    (kb / "SUMMARY.md").write_text(
        "# Summary\n\n[Intro](intro.md)\n\n# Part *One*\n\n- [Alpha](alpha.md)\n\n---\n\n"
        "# Part Two\n\n- [Beta](beta.md)\n",
        encoding="utf-8",
    )
    for name in ("intro", "alpha", "beta"):
        (kb / f"{name}.md").write_text(f"# {name.title()} chapter\n\n{name}-text\n", encoding="utf-8")
    assert [entry for entry in _summary_links(parse_text((kb / "SUMMARY.md").read_text())) or [] if not entry[1]] == [
        ("Part One", "", PART, False),
        ("Part Two", "", PART, False),
    ]
    pdf, warnings = export(kb, "SUMMARY.md", style="academic")
    assert warnings == []
    poppler.in_order(poppler.text(pdf, 2), ["Intro chapter", "Part One", "1 Alpha chapter", "Part Two", "2 Beta"])
    body = poppler.text(pdf, 3, int(poppler.info(pdf)["Pages"]))
    poppler.in_order(body, ["intro-text", "Part One", "alpha-text", "Part Two", "beta-text"])
    assert "1 Part" not in body and "Part One\n" in body  # part titles are not numbered


def test_reference_style_entries_make_a_book_too() -> None:
    """A table of contents written with reference links was taken for prose: the export printed the
    list of titles and no chapter, without a warning (decision 474)."""
    book = parse_text("# Book\n\n- [One][1]\n- [Two]\n- [Three](three.md)\n\n[1]: one.md\n[two]: sub/two.md\n")
    assert _summary_links(book) == [
        ("One", "one.md", 0, True),
        ("Two", "sub/two.md", 0, True),
        ("Three", "three.md", 0, True),
    ]


def test_book_chapters_links_outline_and_placeholders(kb: Path) -> None:
    (kb / "SUMMARY.md").write_text(
        "# Handbook\n\n- [First](one.md)\n  - [Second](two.md)\n- [Gone](missing.md)\n", encoding="utf-8"
    )
    (kb / "one.md").write_text(
        "# First chapter\n\nSee [the second](two.md#deep-part) and ![pic](nope.png).\n\n"
        "![remote](https://example.com/x.png)\n",
        encoding="utf-8",
    )
    (kb / "two.md").write_text("## Second chapter\n\n### Deep part\n\nBody.\n", encoding="utf-8")
    pdf, warnings = export(kb, "SUMMARY.md")
    text = poppler.text(pdf)
    poppler.in_order(text, ["Handbook", "Contents", "First chapter", "Second chapter", "Deep part", "Gone"])
    poppler.in_order(text.split("Contents", 1)[1], ["First chapter", "Body.", "Chapter not available"])
    assert "Image not available" in text
    assert len(warnings) == 3, warnings
    assert any("nope.png" in w for w in warnings)
    assert any("https://example.com/x.png" in w and "never fetched" in w for w in warnings)
    assert any("missing.md" in w for w in warnings)
    data = pdf.read_bytes()
    assert b"/Outlines" in data and b"/Link" in data and b"/Dest" in data


@pytest.mark.parametrize(("word", "count"), [("headword ", 3000), ("H", 20000)])
def test_a_heading_taller_than_the_page_is_split_not_an_error(kb: Path, word: str, count: int) -> None:
    """reportlab splits a paragraph taller than the frame by making its parts with the paragraph's
    own class, whose constructor did not take those arguments: the export failed with TypeError
    (INTERNAL_ERROR). And a heading's word longer than the line was not broken (the heading's
    ``<a name>`` anchor stops reportlab from splitting it): all but its first 27 characters ran
    off the page (decision 474)."""
    (kb / "a.md").write_text(f"# {word * count}\n\nafter-text\n\n## Next\n\nlast-text\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md", page_format="a6")
    assert warnings == []
    flat = poppler.flat(pdf)
    assert flat.count(word.strip()) == count
    poppler.in_order(flat, ["after-text", "Next", "last-text"])
    # one outline entry per heading: the split heading's first part carries its own
    assert len(re.findall(rb"/Dest \[[^\]]*\][^(]*/Title", pdf.read_bytes())) == 2


def test_front_matter_structures_are_not_printed_as_python_text(kb: Path) -> None:
    """The title page printed ``str()`` of whatever the front matter held: nested YAML aliases (nine
    levels of nine, a few hundred bytes) expand to billions of characters that way, and the export
    ran out of memory. Three levels here print 729 "lol"s as a Python list; now only scalars and
    lists of scalars are used, cut at 200 characters (decision 474)."""
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for name, prev in (("b", "a"), ("c", "b")):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    long_title = "word " * 400
    (kb / "a.md").write_text(
        "---\n" + "\n".join(levels) + f"\nsubtitle: *c\nauthor: [Ann, [nested], Bob, {{x: 1}}]\n"
        f"title: {long_title}\n---\n\n# Body\n\ntext\n",
        encoding="utf-8",
    )
    pdf, _ = export(kb, "a.md")
    text = poppler.text(pdf)
    assert "lol" not in text and "[" not in text and "nested" not in text
    assert "Ann, Bob" in text and poppler.info(pdf)["Author"] == "Ann, Bob"
    assert text.count("word") <= 40 and "\u2026" in text


def test_a_chapter_without_a_heading_takes_its_title_from_the_table_of_contents(kb: Path) -> None:
    """A chapter that starts with prose (or is empty, or only front matter) had no entry in the
    contents or the outline, and an empty one was a blank page (decision 474)."""
    (kb / "SUMMARY.md").write_text(
        "# Book\n\n- [Introduction](intro.md)\n- [Later](later.md)\n- [Blank](blank.md)\n", encoding="utf-8"
    )
    (kb / "intro.md").write_text("intro-text without a heading\n", encoding="utf-8")
    (kb / "later.md").write_text("# Later chapter\n\nlater-text\n", encoding="utf-8")
    (kb / "blank.md").write_text("---\ntitle: x\n---\n", encoding="utf-8")
    pdf, warnings = export(kb, "SUMMARY.md")
    assert warnings == []
    contents = poppler.text(pdf, 2)
    poppler.in_order(contents, ["Introduction", "Later chapter", "Blank"])
    body = poppler.text(pdf, 3, int(poppler.info(pdf)["Pages"]))
    poppler.in_order(body, ["Introduction", "intro-text", "Later chapter", "later-text", "Blank"])
    assert body.count("Introduction") == 1  # a chapter with a heading gets no second one


@needs_corpora
def test_rust_book_subset(tmp_path: Path) -> None:
    root = tmp_path / "rust"
    root.mkdir()
    _rust_subset(root)
    sizes = {}
    for profile in ("screen", "standard", "print"):
        pdf, warnings = export(root, "SUMMARY.md", root / f"{profile}.pdf", profile=profile)
        assert warnings == []  # its SVG figures are drawn too (decision 1155)
        sizes[profile] = pdf.stat().st_size
        images = poppler.images(pdf)
        assert len(images) >= 4
        ppi = {"screen": 96, "standard": 150, "print": 300}[profile]
        # pictures bigger than the profile needs are downsampled to its resolution
        assert all(int(img["x-ppi"]) <= ppi + 2 for img in images), images
        assert any(abs(int(img["x-ppi"]) - ppi) <= 2 for img in images), images
    assert sizes["screen"] < sizes["standard"] < sizes["print"]
    assert sizes["screen"] < 0.8 * sizes["print"]
    pdf = root / "standard.pdf"
    assert poppler.page_size(pdf) == pytest.approx((419.5, 595.3), abs=1)
    assert int(poppler.info(pdf)["Pages"]) > 15
    rows = poppler.fonts(pdf)
    assert rows and all(r["emb"] == "yes" for r in rows), rows
    text = poppler.text(pdf)
    poppler.in_order(text, ["The Rust Subset", "Contents"] + [t for t, _ in RUST_CHAPTERS])
    body = text.split("Operators and Symbols", 1)[1]  # past the table of contents
    poppler.in_order(body, ["Installation", "rustup", "Hello, World!", "fn main()", "Crates.io", "Table B-1"])
    assert "Chapter not available" not in text


@needs_corpora
@poppler.needs_cjk_font
def test_chinese_document(kb: Path) -> None:
    source = VUE / "guide" / "essentials" / "template-syntax.md"
    (kb / "guide").mkdir()
    shutil.copy(source, kb / "guide" / "t.md")
    pdf, warnings = export(kb, "guide/t.md", style="classic")
    assert not [w for w in warnings if "could not be rendered" in w], warnings
    flat = poppler.flat(pdf)
    assert "模板语法" in flat
    assert "Vue使用一种基于HTML的模板语法，使我们能够声明式地将其组件实例的数据绑定到呈现的DOM上。" in flat
    assert "{#template-syntax}" not in flat  # custom heading ids are anchors, not text
    names = {f["name"].split("+")[-1]: f for f in poppler.fonts(pdf)}
    assert any(n.startswith("WenQuanYi") for n in names), names
    assert all(f["emb"] == "yes" for f in names.values())


@pytest.fixture
def no_cjk_font(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A machine without any CJK font: fontconfig finds none (the faces are cached per process),
    nor any other face to fall back on (decision 1161)."""
    monkeypatch.setattr(fonts, "_fc_list_cjk", lambda: [])
    monkeypatch.setattr(fonts, "_fallback", lambda ch: None)
    real_match = fonts._fc_match
    monkeypatch.setattr(
        fonts, "_fc_match", lambda pattern: None if pattern in fonts._CJK_PREFERRED else real_match(pattern)
    )
    fonts._families.cache_clear()
    yield
    fonts._families.cache_clear()


def test_without_a_cjk_font_the_warning_names_the_characters(kb: Path, no_cjk_font: None) -> None:
    (kb / "a.md").write_text("# 中文\n\nLatin and 漢字 mixed.\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert len(warnings) == 1 and "could not be rendered" in warnings[0] and "fonts-wqy-microhei" in warnings[0]
    assert all(ch in warnings[0] for ch in "中文漢字")
    assert "Latin and" in poppler.text(pdf)
    _, configured = export(kb, "a.md", cjk_font=str(kb / "no-such-font.ttf"))
    assert configured[0] == warnings[0]
    assert "export.pdf.cjkFont" in configured[1] and "no other CJK font was found" in configured[1]


@poppler.needs_cjk_font
@pytest.mark.parametrize("configured", ["no-such-font.ttf", "No Such Family"])
def test_a_configured_cjk_font_that_is_not_found_gives_way_to_the_installed_one(kb: Path, configured: str) -> None:
    """Decision 689: a cjkFont naming a missing file or an unknown family was the only font tried,
    so the Chinese text was left out (and blamed on no installed font) although WenQuanYi was there."""
    (kb / "a.md").write_text("# 中文\n\nLatin and 漢字 mixed.\n", encoding="utf-8")
    fonts._families.cache_clear()
    pdf, warnings = export(kb, "a.md", cjk_font=str(kb / configured) if configured.endswith(".ttf") else configured)
    assert not [w for w in warnings if "could not be rendered" in w], warnings
    assert len(warnings) == 1 and "was not found or cannot be used" in warnings[0]
    assert "an installed CJK font was used instead" in warnings[0]
    assert "漢字" in poppler.flat(pdf)
    (kb / "b.md").write_text("# Latin only\n\nNothing wide here.\n", encoding="utf-8")
    assert export(kb, "b.md", cjk_font=configured)[1] == []  # said only when it mattered


def test_right_to_left_text_is_reported_not_silently_mirrored(kb: Path) -> None:
    """reportlab sets Hebrew and Arabic left to right, so the PDF shows them reversed (decision 365)."""
    (kb / "rtl.md").write_text("# שלום\n\nעולם and مرحبا.\n", encoding="utf-8")
    (kb / "ltr.md").write_text("# Ünïcödé\n\nΕλληνικά, русский, 中文.\n", encoding="utf-8")
    _, warnings = export(kb, "rtl.md")
    assert [w for w in warnings if w.startswith("Right-to-left text (Hebrew, Arabic, ...) is set left to right")]
    _, warnings = export(kb, "ltr.md")
    assert not [w for w in warnings if "Right-to-left" in w], warnings


@poppler.needs_cjk_font
def test_letters_written_decomposed_and_variation_selectors_are_drawn_as_the_letters(kb: Path) -> None:
    """Decision 1104: reportlab draws one glyph per character. Korean written as conjoining jamo (as
    macOS writes names) came out as boxes, named in the warnings; a kana's voiced mark U+3099 beside
    it (``カ ゛``); the ideographic variation selector of ``葛󠄀飾区`` as a box no warning named; and a
    lone right-to-left mark warned of right-to-left text."""
    nfd = unicodedata.normalize
    text = f"# {nfd('NFD', '한국어 안내')}\n\n{nfd('NFD', '컴포넌트를 등록합니다')}, {nfd('NFD', 'ガイドブック')}, "
    text += "葛\U000e0100飾区, 彅\ufe00剛, mark\u200fhere, \uf900.\n"
    (kb / "a.md").write_text(text, encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    flat = poppler.flat(pdf)
    for word in ("한국어안내", "컴포넌트를등록합니다", "ガイドブック", "葛飾区", "彅剛", "\uf900"):
        assert word in flat, (word, flat)  # a compatibility ideograph stays itself


@poppler.needs_cjk_font
def test_with_a_cjk_font_a_missing_emoji_is_not_blamed_on_it(kb: Path) -> None:
    # a character no installed face draws (an emoji face draws 🎉 since decision 1161)
    fs = fonts.font_set()
    lacking = [ch for ch in "\U0001fae8\U0001f9cc\U0001fa80\U000f0041" if fs.face_of(ch, fs.sans) is None]
    if not lacking:
        pytest.skip("an installed face draws every test character")
    (kb / "a.md").write_text(f"# E\n\nParty {lacking[0]} time 中文.\n", encoding="utf-8")
    _, warnings = export(kb, "a.md")
    assert len(warnings) == 1 and warnings[0].endswith(f"no installed font has them: {lacking[0]}"), warnings


@poppler.needs_cjk_font
def test_cjk_mixed_with_latin_on_one_line(kb: Path) -> None:
    (kb / "a.md").write_text("日本語の文と English words と한국어 text.\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    assert "日本語の文とEnglishwordsと한국어text." in poppler.flat(pdf)


def test_list_chapters_are_numbered_and_prefix_chapters_are_not(kb: Path) -> None:
    (kb / "SUMMARY.md").write_text("# B\n\n[Foreword](f.md)\n\n- [Alpha](a.md)\n", encoding="utf-8")
    (kb / "f.md").write_text("# Foreword\n\nWords.\n", encoding="utf-8")
    (kb / "a.md").write_text("# Alpha\n\n## Beta\n", encoding="utf-8")
    pdf, _ = export(kb, "SUMMARY.md", style="technical")
    body = poppler.text(pdf).split("Contents", 1)[1]
    assert "1 Foreword" not in body and "1.1" not in body.split("Alpha")[0]
    poppler.in_order(" ".join(body.split()), ["Foreword", "Words.", "1 Alpha", "1.1 Beta"])


def test_an_obsidian_map_of_wikilinks_is_a_book_with_linked_chapters(kb: Path) -> None:
    """An Obsidian "map of content" lists its chapters as ``[[Note]]`` links: it was exported as one
    page of bracketed names, and ``[[Other#Part]]`` between chapters linked nowhere (decision 764).
    Its wikilinks now name chapters as Obsidian finds them (by name anywhere, ``|alias`` as title)."""
    (kb / "notes" / "deep").mkdir(parents=True)
    (kb / "Map.md").write_text(
        "# Field guide\n\n- [[Birds|All about birds]]\n  - [[notes/deep/Owls]]\n- [[Nowhere]]\n", encoding="utf-8"
    )
    (kb / "notes" / "Birds.md").write_text("# Birds\n\nSee [[Owls#Barn owl|barn owls]].\n", encoding="utf-8")
    (kb / "notes" / "deep" / "Owls.md").write_text("# Owls\n\n## Barn owl\n\nWhite.\n", encoding="utf-8")
    pdf, warnings = export(kb, "Map.md")
    text = poppler.text(pdf)
    assert "[[" not in text
    poppler.in_order(text, ["Field guide", "Contents", "Birds", "Owls", "Barn owl", "Nowhere"])
    poppler.in_order(
        text.split("Contents", 1)[1], ["Birds", "See barn owls.", "Owls", "White.", "Chapter not available"]
    )
    assert warnings == ["Chapter Nowhere.md ('Nowhere') was replaced by a placeholder: the file does not exist."]
    # the chapter's [[link]] is a link, as the same text written as a Markdown link is
    links = len(re.findall(rb"/Subtype\s*/Link", pdf.read_bytes()))
    (kb / "notes" / "Birds.md").write_text("# Birds\n\nSee barn owls.\n", encoding="utf-8")
    unlinked, _ = export(kb, "Map.md", kb / "unlinked.pdf")
    assert links == len(re.findall(rb"/Subtype\s*/Link", unlinked.read_bytes())) + 1


@pytest.mark.parametrize("text", ["", "\n\n", "---\ntitle: Draft\n---\n"])
def test_a_document_with_nothing_to_print_is_said_not_a_silent_blank_page(kb: Path, text: str) -> None:
    (kb / "empty.md").write_text(text, encoding="utf-8")
    _, warnings = export(kb, "empty.md")
    assert warnings == ["empty.md has no content to print (it is empty or holds front matter only)."]


def test_toml_front_matter_gives_the_title_page_and_is_never_printed(kb: Path) -> None:
    """Decision 1026: a Hugo page's ``+++`` front matter was printed as body text and gave no title
    page; it is read as YAML front matter is. The same page with ``---`` prints the same text."""
    body = "\n\n# Heading\n\nBody text.\n"
    toml = '+++\r\ntitle = "Hugo page"\r\nauthor = ["Ann", "Bob"]\r\ndraft = true\r\n+++' + body
    (kb / "toml.md").write_bytes(b"\xef\xbb\xbf" + toml.encode())  # a BOM and CRLF fences too
    (kb / "yaml.md").write_text("---\ntitle: Hugo page\nauthor: [Ann, Bob]\ndraft: true\n---" + body, "utf-8")
    pdf, warnings = export(kb, "toml.md")
    assert warnings == []
    text = poppler.text(pdf)
    assert "draft" not in text and "+++" not in text
    poppler.in_order(text, ["Hugo page", "Ann, Bob", "\f", "Heading", "Body text."])
    assert (poppler.info(pdf)["Title"], poppler.info(pdf)["Author"]) == ("Hugo page", "Ann, Bob")
    assert text == poppler.text(export(kb, "yaml.md")[0])


_LINK = re.compile(rb"/Dest \[ (\d+) 0 R /XYZ [\d.]+ ([\d.]+) 0 \] /Rect \[ [\d.]+ ([\d.]+)")
_OUTLINE = re.compile(rb"/Dest \[ (\d+) 0 R /XYZ [\d.]+ ([\d.]+) 0 \][^(]*/Title \(([^)]*)\)")


def test_backslash_paths_encoded_fragments_and_relative_autolinks_link_their_chapter(kb: Path) -> None:
    """A page written on Windows links ``sub\\two.md``, a fragment is written ``#part%20two``, and
    ``<sub/two.md>`` is an autolink kb_links counts (decision 901): the book printed the autolink as
    text and left the backslash link and its chapter out (decisions 910-912). Each now reaches the
    chapter or heading kb_links says it reaches: the link annotations on the sentence's line go to
    the outline's destinations of "Two" and "Part two"."""
    (kb / "sub").mkdir()
    (kb / "SUMMARY.md").write_text("# Book\n\n- [One](one.md)\n- [Two](sub\\two.md)\n", encoding="utf-8")
    (kb / "one.md").write_text(
        "# One\n\nSee <sub/two.md>, [win](sub\\two.md#part%20two) and [enc](sub/two.md#Part%20Two).\n",
        encoding="utf-8",
    )
    (kb / "sub" / "two.md").write_text("# Two\n\n## Part two\n\nBody.\n", encoding="utf-8")
    pdf, warnings = export(kb, "SUMMARY.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(text.split("Contents", 1)[1], ["One", "See sub/two.md, win and enc.", "Two", "Part two", "Body."])
    data = pdf.read_bytes()
    outline = {title.decode(): (page, y) for page, y, title in _OUTLINE.findall(data)}
    by_line: dict[bytes, list[tuple[bytes, bytes]]] = {}
    for page, y, line in _LINK.findall(data):
        by_line.setdefault(line, []).append((page, y))
    sentence = [links for links in by_line.values() if len(links) == 3]
    assert sentence == [[outline["Two"], outline["Part two"], outline["Part two"]]]


@pytest.mark.parametrize("eol", ["\r", "\r\n", "mixed"])
def test_line_endings_print_as_the_same_document(kb: Path, eol: str) -> None:
    """Decision 922: the layout split element text at LF, so a file whose lines end in a lone CR
    printed its fenced code as nothing and lost its front matter title (and one page, the title
    page); the same file with LF, CRLF or mixed endings is now the same PDF text."""
    source = (
        "---\ntitle: Classic Mac notes\n---\n# Mac\n\nFirst paragraph\nwrapped.\n\n"
        "```py\nprint('kept')\nmore()\n```\n\n"
        "    indented code\n\n> quoted\n> lines\n\n- one\n  - nested\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    lines = source.split("\n")
    breaks = {"mixed": ["\r", "\n", "\r\n"]}.get(eol, [eol])
    odd = "".join(line + breaks[k % len(breaks)] for k, line in enumerate(lines[:-1])) + lines[-1]
    (kb / "lf.md").write_text(source, encoding="utf-8", newline="")
    (kb / "odd.md").write_text(odd, encoding="utf-8", newline="")
    lf, _ = export(kb, "lf.md")
    other, _ = export(kb, "odd.md")
    printed = poppler.layout(other)
    assert "print('kept')" in printed and "more()" in printed and "Classic Mac notes" in printed
    assert printed == poppler.layout(lf)


def test_obsidian_comments_are_left_out_of_the_pdf(kb: Path) -> None:
    """Decision 1009: Obsidian shows nothing between two ``%%`` (decision 507), but the PDF printed
    them, so a private remark went out in the file meant to be shared, with ``warnings: []``. The
    export now leaves out the spans the link graph leaves out: inline, on lines of their own (the
    paragraph around them stays one) and across blocks; a ``%%`` in code is code."""
    (kb / "Note.md").write_text(
        "---\ntitle: Plan %%draft%%\n---\n# Note\n\n"
        "Public text. %%private inline remark%% and more.\n\n"
        "%%\nPrivate block: salary 90k, see [[HR]]\n\n- a private item\n%%\n\n"
        "First line\n%%a private line%%\nsecond line.\n\n"
        "Code `a %% b` stays, %%cut%% as does\n\n```\nx %% y\n```\n\nEnd.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "Note.md")
    assert warnings == []
    text = " ".join(poppler.text(pdf).split())
    assert "private" not in text.lower() and "salary" not in text and "HR" not in text and "cut" not in text
    poppler.in_order(
        text,
        [
            "Plan %%draft%%",  # the front matter is YAML, no note text (507)
            "Public text. and more.",
            "First line second line.",
            "Code a %% b stays, as does",
            "x %% y",
            "End.",
        ],
    )


def test_an_unclosed_obsidian_comment_hides_nothing_and_says_where(kb: Path) -> None:
    """Obsidian hides a note's rest after a ``%%`` no other closes; the PDF prints it and says so
    (decision 1010): such a ``%%`` is more often a format string in a page that was never a note
    (opensearch-docs lost a third of a page) than a private tail."""
    (kb / "a.md").write_text('# A\n\nKept.\n\n| format |\n|---|\n| `%%` and "%%Y" |\n\nAlso kept.\n', encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    text = poppler.text(pdf)
    assert "Kept." in text and "Also kept." in text and "%%Y" in text
    assert warnings == [
        "a.md: the %% on line 7 opens an Obsidian comment that no other %% closes; the rest of the note is "
        "printed, though Obsidian hides it. Close it to hide it, or write it as code (`%%`)."
    ]
    (kb / "b.md").write_text("# B\n\nNothing follows it %%\n", encoding="utf-8")
    assert export(kb, "b.md")[1] == []  # it hides nothing


def test_obsidian_block_ids_are_not_printed(kb: Path) -> None:
    """Decision 1009: ``^budget42`` names a block for ``[[Note#^budget42]]`` and Obsidian does not
    show it; the PDF printed it. A block id where the link graph finds one (a line's end, after a
    blank, outside code) is left out; ``x^2``, a footnote and ``^id`` in code or front matter stay."""
    (kb / "Note.md").write_text(
        "---\ntitle: Plan ^v2\n---\n# Note\n\nBudget is 40k. ^budget42\n\n- an item ^item-1\n- x^2\n\n"
        "| a |\n|---|\n| 1 |\n\n^table-id\n\nNoted[^1].\n\n[^1]: a note\n\n```\nkept ^in-code\n```\n\n"
        "See [[Note#^budget42]].\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "Note.md")
    assert warnings == []
    text = " ".join(poppler.text(pdf).split())
    assert "^budget42" not in text and "item-1" not in text and "table-id" not in text
    poppler.in_order(
        text,
        ["Plan ^v2", "Budget is 40k.", "an item", "x^2", "Noted1", "1 a note", "kept ^in-code", "See Note > budget42."],
    )


def test_the_contents_page_is_headed_in_the_chapters_language(kb: Path) -> None:
    # decision 1109: a Chinese book's contents page was headed "Contents"
    assert book.contents_title(["模板语法", "响应式基础", "Vue 组件"]) == "目录"
    assert book.contents_title(["ガイド", "はじめに"]) == "目次"
    assert book.contents_title(["설치", "시작하기"]) == "목차"
    assert book.contents_title(["Getting started", "The API 参考"]) == "Contents"
    assert book.contents_title([]) == "Contents"
    (kb / "SUMMARY.md").write_text("# 手册\n\n- [第一章](one.md)\n- [第二章](two.md)\n", encoding="utf-8")
    (kb / "one.md").write_text("# 模板语法\n\n正文。\n", encoding="utf-8")
    (kb / "two.md").write_text("# 响应式基础\n\n正文。\n", encoding="utf-8")
    pdf, _warnings = export(kb, "SUMMARY.md")
    flat = poppler.flat(pdf)
    assert "目录" in flat and "Contents" not in flat
    poppler.in_order(poppler.text(pdf), ["手册", "目录", "模板语法", "响应式基础"])


@poppler.needs_cjk_font
def test_a_japanese_line_neither_starts_with_a_closing_mark_nor_ends_with_an_opening_one(kb: Path) -> None:
    """Decision 1183: reportlab hung one letter that cannot start a line and broke anywhere else,
    so a line started with `ー` or a small kana after a hung one (`ニュ` | `ース`) and `「` ended
    lines. Each paragraph is shifted by one letter more than the last, so a break falls on every
    letter of the repeated sentence."""
    from local_vector_search_mcp.export.pdf.kinsoku import CANNOT_END, CANNOT_START

    sentence = "ニュースの「注意」をちょっと読む、コンポーネント（自動修正）。"
    paragraphs = ["漢" * k + sentence * 6 for k in range(len(sentence))]
    # Latin words put the paragraph in runs of two fonts, which reportlab wraps another way
    paragraphs += ["漢" * k + ("ESLint" + sentence) * 5 for k in range(len(sentence))]
    (kb / "j.md").write_text("# 禁則\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    pdf, warnings = export(kb, "j.md")
    assert not warnings, warnings
    lines = [line.strip() for line in poppler.text(pdf).splitlines() if line.strip()]
    starts = {p[:4] for p in paragraphs}
    bad = [
        (before, line)
        for before, line in itertools.pairwise(lines)
        if (line[0] in CANNOT_START and line[:4] not in starts) or before[-1] in CANNOT_END
    ]
    assert not bad, bad
    flat = poppler.flat(pdf)
    assert all(p in flat for p in paragraphs)  # no letter lost or doubled at a moved break


def test_an_obsidian_note_embed_prints_the_note_heading_or_block_it_embeds(kb: Path) -> None:
    """Decision 1199: ``![[Note]]`` printed only ``Note`` (762 left transclusion out), so a vault's
    note that embeds a quote, a recipe's section or a whole note lost that text in its PDF. An embed
    alone on its line now prints what Obsidian shows, framed as a quote (whose headings stay out of
    the bookmarks): the note without its front matter, a heading's section up to the next heading
    of its level, or the block a ``^id`` marks; found as a ``[[link]]`` is, its own embeds read in
    turn, its relative links made from the printing note's folder. One that finds nothing, or
    embeds the note that embeds it, is its name and a warning."""
    (kb / "Areas").mkdir()
    (kb / "Quotes.md").write_text(
        "# Quotes\n\nWe waste a lot of it. ^seneca\n\n> The impediment to action advances action.\n\n^aurelius\n",
        encoding="utf-8",
    )
    (kb / "Café Menu.md").write_text(
        "# Café Menu\n\n## Espresso drinks\n\n- Cortado\n- Flat white ^flat\n\n## Pastries\n\nCroissants.\n",
        encoding="utf-8",
    )
    (kb / "Areas" / "Sleep.md").write_text(
        "---\ntags: [health]\nsecret: front matter value\n---\n# Sleep\n\nAim for eight hours.\n\n"
        "![Moon](../pics/moon%20phase.png) drawn from its own folder.\n\n"
        "![[Quotes#^aurelius]]\n\n![[Host]]\n",
        encoding="utf-8",
    )
    (kb / "Host.md").write_text(
        "# Host\n\nOpening line.\n\n![[Quotes#^seneca]]\n![[café menu#Espresso drinks]]\n\n![[Sleep]]\n\n"
        "Inline ![[Quotes]] stays a name.\n\n```\n![[Quotes]]\n```\n\n![[Nowhere]]\n\n![[Café Menu#Nope]]\n\n"
        "Closing line.\n",
        encoding="utf-8",
    )
    (kb / "pics").mkdir()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(kb / "pics" / "moon phase.png")
    pdf, warnings = export(kb, "Host.md")
    text = poppler.text(pdf)
    assert len(poppler.images(pdf)) == 1  # the embedded note's picture, its link made from the host's folder
    poppler.in_order(
        text,
        [
            "Opening line.",
            "We waste a lot of it.",
            "Espresso drinks",
            "Cortado",
            "Flat white",
            "Sleep",
            "Aim for eight hours.",
            "The impediment to action advances action.",
            "Host",  # Sleep's embed of the note embedding it: its name
            "Inline Quotes stays a name.",
            "![[Quotes]]",  # code is code
            "Nowhere",
            "Café Menu > Nope",
            "Closing line.",
        ],
    )
    assert "Croissants" not in text and "Pastries" not in text  # the next section is not embedded
    assert "front matter value" not in text and "^seneca" not in text
    assert warnings == [
        "Areas/Sleep.md: the embed of 'Host' is printed as its name: it embeds the note that embeds it.",
        "Host.md: the embed of 'Nowhere' is printed as its name: no note of that name exists.",
        "Host.md: the embed of 'Café Menu#Nope' is printed as its name: Café Menu.md has no such heading or block.",
    ]
    raw = pdf.read_bytes()  # the bookmarks: the host's heading, none of the embedded ones
    assert b"/Title (Host)" in raw and b"/Title (Espresso drinks)" not in raw and b"/Title (Sleep)" not in raw


def test_a_note_embed_with_a_backslash_between_folders_finds_the_note(kb: Path) -> None:
    """Decision 1199: a `\\` separates folders in a wikilink's name as `/` does (H112); only a
    trailing one, before a table's escaped `|`, is no part of the name."""
    (kb / "notes").mkdir()
    (kb / "notes" / "Owl.md").write_text("# Owl\n\nBarn owls are white.\n", encoding="utf-8")
    (kb / "Host.md").write_text("# Host\n\n![[notes\\Owl]]\n\n![[Owl\\|the owl]]\n", encoding="utf-8")
    pdf, warnings = export(kb, "Host.md")
    assert warnings == []
    assert poppler.text(pdf).count("Barn owls are white.") == 2
