"""Inline Markdown -> reportlab markup."""

from __future__ import annotations

from pathlib import Path

from local_vector_search_mcp.export.pdf.fonts import font_set
from local_vector_search_mcp.export.pdf.inline import InlineRenderer

from . import poppler
from .conftest import export
from .poppler import needs_cjk_font, needs_poppler

YELLOW = "#fff3a3"  # Obsidian's highlight


def _renderer() -> InlineRenderer:
    return InlineRenderer(font_set(), lambda href: "#c1" if ".md" in href else (href or None), "#123456")


def test_emphasis_code_strike_and_escaping() -> None:
    r = _renderer()
    out = r.render("*a* **b** ~~c~~ `x<y>` & <br> d", r.fonts.sans)
    assert out.markup.startswith("<i>a</i> <b>b</b> <strike>c</strike> <font face=")
    assert "x&lt;y&gt;</font>" in out.markup and "&amp;" in out.markup and "<br/>" in out.markup


def test_links_internal_external_and_dropped() -> None:
    r = _renderer()
    out = r.render("[in](b.md#x) [out](https://x.org/?a=1&b=2) [none]()", r.fonts.sans)
    assert '<a href="#c1" color="#123456">in</a>' in out.markup
    assert '<a href="https://x.org/?a=1&amp;b=2" color="#123456">out</a>' in out.markup
    assert out.markup.endswith(" none")


def test_reference_links_use_the_env() -> None:
    r = _renderer()
    from local_vector_search_mcp.export.pdf.inline import MD

    env: dict[str, object] = {}
    MD.parse("[ref]: https://example.org\n", env)
    assert "https://example.org" in r.render("see [it][ref]", r.fonts.sans, env).markup


def test_images_are_returned_not_inlined() -> None:
    r = _renderer()
    only = r.render("![alt *t*](a.png)", r.fonts.sans)
    assert only.only_images and only.images[0].src == "a.png" and only.images[0].alt == "alt t"
    mixed = r.render("text ![x](b.png)", r.fonts.sans)
    assert not mixed.only_images and mixed.markup == "text"


@needs_cjk_font
def test_cjk_runs_get_the_fallback_face() -> None:
    r = _renderer()
    fonts = r.fonts
    assert fonts.cjk is not None
    out = r.render("Vue 使用 **模板**", fonts.sans)
    assert f'<font face="{fonts.cjk.regular}">使用</font>' in out.markup
    assert fonts.missing == set()
    assert r.plain("**a** `b` [c](d)") == "a b c"


def test_inline_html_images_are_pictures_too() -> None:
    r = _renderer()
    out = r.render('<img src="img/a.png" alt="A &amp; B" class="x"> caption', r.fonts.sans)
    assert out.images[0].src == "img/a.png" and out.images[0].alt == "A & B"


def test_obsidian_highlights_are_marked_where_obsidian_marks_them() -> None:
    """Decision 1009: ``==highlighted==`` printed its markers. A pair of ``==`` with no blank just
    inside is a highlight (a background on the span); ``a == b`` in prose, and code, are text."""
    r = _renderer()
    span = f'<span backColor="{YELLOW}">'
    assert r.render("Some ==highlighted== words.", r.fonts.sans).markup == f"Some {span}highlighted</span> words."
    assert r.render("==*em*==", r.fonts.sans).markup == f"{span}<i>em</i></span>"
    for text in ("a == b and c == d", "== spaced ==", "x === y ===", "==unclosed"):
        assert r.render(text, r.fonts.sans).markup == text
    assert "<span" not in r.render("`==code==`", r.fonts.sans).markup
    assert r.plain("Some ==highlighted== words.") == "Some highlighted words."


@needs_poppler
def test_a_highlight_is_printed_on_obsidians_yellow(kb: Path) -> None:
    (kb / "a.md").write_text("# H\n\nSome ==highlighted== words, and a == b.\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    assert "Some highlighted words, and a == b." in poppler.text(pdf)
    assert tuple(int(YELLOW[i : i + 2], 16) for i in (1, 3, 5)) in poppler.colours(pdf)


def test_inline_html_formatting_tags_are_kept_well_nested() -> None:
    """Decision 1137: `<sub>`, `<sup>`, `<kbd>` and their kind were dropped with their look; and
    HTML that crosses Markdown's emphasis must still be markup reportlab can parse."""
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph

    r = _renderer()
    assert r.render("H<sub>2</sub>O x<sup>2</sup>", r.fonts.sans).markup == "H<sub>2</sub>O x<super>2</super>"
    assert r.render("<kbd>Ctrl</kbd>", r.fonts.sans).markup == f'<font face="{r.fonts.mono.regular}">Ctrl</font>'
    assert r.render("<b><i>x</b></i> y", r.fonts.sans).markup == "<b><i>x</i></b> y"
    assert r.render('a <sup class="badge" data-text="3.5+" /> <span>b</span>', r.fonts.sans).markup == "a  b"
    for crossing in ("*a<sup>b*</sup>c", "<sup>*a</sup>*b", "<u>open", "</sup>stray", "[<sub>1</sub>](x.md) **<b>y**"):
        Paragraph(r.render(crossing, r.fonts.sans).markup, ParagraphStyle("p"))  # parses


@needs_poppler
def test_subscripts_and_superscripts_are_lowered_and_raised(kb: Path) -> None:
    """Decision 1137: `x<sup>2</sup>` was printed "x2", the same size on the same line."""
    import re
    import subprocess

    (kb / "a.md").write_text("Water is H<sub>2</sub>O and area x<sup>2</sup> here.\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    page = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    words = [
        (w, float(top), float(bottom))
        for top, bottom, w in re.findall(r'yMin="([\d.]+)".*?yMax="([\d.]+)">([^<]*)<', page)
    ]
    top = {w: t for w, t, _ in words}
    twos = [t for w, t, _ in words if w == "2"]
    assert len(twos) == 2  # each a word of its own, one below the line, one above
    assert max(twos) > top["H"] and min(twos) < top["x"]


def test_a_kramdown_span_attribute_list_after_a_link_or_picture_is_applied_not_printed() -> None:
    """Decision 1142: opensearch-docs writes `[page](url){:target='_blank'}` and
    `![x](a.png){: width="700" }` (99 pages); the PDF printed "page{:target='_blank'}" and the
    list as a line of its own, and drew the picture at its full size."""
    r = _renderer()
    out = r.render("the [page](https://x.org){:target='\\_blank'} and `code`{: .x} {: .y}", r.fonts.sans)
    assert "{:target" not in out.markup and "page</a> and" in out.markup
    assert out.markup.endswith("{: .x} {: .y}")  # elsewhere it is text, as written
    pixels = r.render('![a](a.png){: width="700" }', r.fonts.sans)
    assert pixels.markup == "" and pixels.only_images and pixels.images[0].size == (525.0, None)
    share = r.render('![a](a.png){: width="50%" } after', r.fonts.sans)
    assert share.images[0].share == 0.5 and share.markup == "after"


@needs_poppler
def test_a_picture_sized_by_a_kramdown_attribute_list_is_drawn_at_that_size(kb: Path) -> None:
    """Decision 1142: the width a kramdown attribute list gives a picture bounds it, as an <img>'s."""
    from PIL import Image

    Image.new("RGB", (1200, 600), "red").save(kb / "wide.png")
    (kb / "a.md").write_text('Intro.\n\n![wide](wide.png){: width="200" }\n\nOutro.\n', encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    assert "{:" not in poppler.text(pdf)
    [picture] = poppler.images(pdf)
    drawn = int(picture["width"]) / float(picture["x-ppi"]) * 72
    assert abs(drawn - 150) < 2  # 200 CSS pixels; the frame's width before


@needs_cjk_font
def test_a_ruby_reading_is_printed_in_brackets_after_its_base(kb: Path) -> None:
    """Decision 1185: `<ruby>漢字<rt>かんじ</rt></ruby>` printed `漢字かんじ`, the reading run into the
    word; it is bracketed as a browser without ruby shows a page that writes `<rp>`, and a ruby
    that writes its own `<rp>` parentheses keeps them alone."""
    (kb / "r.md").write_text(
        "<ruby>漢字<rt>かんじ</rt></ruby>の読み方と、<ruby>東京<rp>(</rp><rt>とうきょう</rt><rp>)</rp></ruby>の例。\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "r.md")
    assert warnings == []
    assert "漢字（かんじ）の読み方と、東京(とうきょう)の例。" in poppler.flat(pdf)
