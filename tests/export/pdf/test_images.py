"""Pictures: path rules, placeholders, downsampling per profile."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from local_vector_search_mcp.export.pdf import images as images_module
from local_vector_search_mcp.export.pdf.images import ImageStore, Missing, Picture
from local_vector_search_mcp.export.pdf.styles import PROFILES
from local_vector_search_mcp.paths import PathGuard

from . import poppler
from .conftest import export


def _store(root: Path, profile: str = "standard") -> ImageStore:
    return ImageStore(PathGuard(root, root / ".lvsm" / "index.db"), PROFILES[profile])


def _photo(path: Path, size: tuple[int, int], fmt: str = "JPEG", **save: object) -> None:
    img = Image.linear_gradient("L").resize(size).convert("RGB")
    img.save(path, fmt, **save)


@pytest.mark.parametrize(
    ("src", "reason"),
    [
        ("https://example.com/a.png", "never fetched"),
        ("//cdn.example.com/a.png", "never fetched"),
        ("/abs/a.png", "never fetched"),
        ("data:image/png;base64,AAAA", "never fetched"),
        ("../outside.png", "outside"),
        ("missing.png", "does not exist"),
        ("pic.svg", "the SVG has no size"),
        ("notes.txt", "not a supported picture format"),
        ("broken.png", "cannot be decoded"),
    ],
)
def test_placeholders(tmp_path: Path, src: str, reason: str) -> None:
    (tmp_path / "pic.svg").write_text("<svg/>")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    loaded = _store(tmp_path).load(src, "chapter.md", 300, 400)
    assert isinstance(loaded, Missing) and reason in loaded.reason


def test_symlinked_picture_is_refused(tmp_path: Path) -> None:
    outside = tmp_path.parent / "secret.png"
    _photo(outside, (10, 10), "PNG")
    (tmp_path / "link.png").symlink_to(outside)
    loaded = _store(tmp_path).load("link.png", "a.md", 300, 400)
    assert isinstance(loaded, Missing) and "not permitted" in loaded.reason


def test_small_pictures_are_embedded_unchanged(tmp_path: Path) -> None:
    _photo(tmp_path / "small.jpg", (100, 80))
    loaded = _store(tmp_path).load("small.jpg", "a.md", 300, 400)
    assert isinstance(loaded, Picture) and loaded.source == str(tmp_path / "small.jpg")
    assert loaded.width == pytest.approx(75) and loaded.height == pytest.approx(60)  # 96 DPI


@pytest.mark.parametrize(("profile", "dpi"), [("screen", 96), ("standard", 150), ("print", 300)])
def test_large_pictures_are_downsampled_to_the_profile(tmp_path: Path, profile: str, dpi: int) -> None:
    _photo(tmp_path / "big.jpg", (4000, 2000), dpi=(300, 300))
    loaded = _store(tmp_path, profile).load("big.jpg", "a.md", 288, 400)  # 4 inches wide at most
    assert isinstance(loaded, Picture) and isinstance(loaded.source, io.BytesIO)
    assert loaded.width == pytest.approx(288)
    with Image.open(loaded.source) as out:
        assert out.width == 4 * dpi and out.format == "JPEG"


def test_transparency_stays_png_and_icc_travels(tmp_path: Path) -> None:
    img = Image.new("RGBA", (3000, 1000), (255, 0, 0, 0))
    img.save(tmp_path / "alpha.png", icc_profile=b"\0" * 16)
    loaded = _store(tmp_path, "screen").load("alpha.png", "a.md", 200, 400)
    assert isinstance(loaded, Picture) and isinstance(loaded.source, io.BytesIO)
    with Image.open(loaded.source) as out:
        assert out.format == "PNG" and out.mode == "RGBA" and out.info.get("icc_profile") == b"\0" * 16


def test_too_many_pixels_is_a_placeholder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images_module, "MAX_PIXELS", 10_000)
    _photo(tmp_path / "huge.png", (200, 200), "PNG")
    loaded = _store(tmp_path).load("huge.png", "a.md", 300, 400)
    assert isinstance(loaded, Missing) and "million pixels" in loaded.reason


def test_a_decompression_bomb_is_named_by_its_pixels(tmp_path: Path) -> None:
    """900 million pixels in a few kilobytes: Pillow refuses to open it, which read "cannot be
    decoded" although the picture is valid (decision 365)."""
    Image.new("1", (30000, 30000)).save(tmp_path / "bomb.png")
    loaded = _store(tmp_path).load("bomb.png", "a.md", 300, 400)
    assert isinstance(loaded, Missing) and loaded.reason == "the picture has more than 40 million pixels"


def test_relative_paths_resolve_against_the_chapter(tmp_path: Path) -> None:
    (tmp_path / "book" / "img").mkdir(parents=True)
    _photo(tmp_path / "book" / "img" / "a b.png", (20, 20), "PNG")
    loaded = _store(tmp_path).load("img/a%20b.png?x=1", "book/ch1.md", 300, 400)
    assert isinstance(loaded, Picture)
    assert isinstance(_store(tmp_path).load("../book/img/a b.png", "book/ch1.md", 300, 400), Picture)


@poppler.needs_poppler
@pytest.mark.parametrize("damage", ["truncated", "bad checksum"])
def test_a_damaged_small_png_is_a_placeholder_not_a_failed_export(kb: Path, damage: str) -> None:
    """A PNG small enough to embed unchanged was handed to reportlab undecoded, which decodes it only
    while drawing the page: a truncated file (an interrupted download, a partial sync) failed the whole
    export with INTERNAL_ERROR. It is now decoded up front and becomes a placeholder (decision 470)."""
    buffer = io.BytesIO()
    Image.effect_noise((120, 90), 40).convert("RGB").save(buffer, "PNG")
    data = bytearray(buffer.getvalue())
    if damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data[60] ^= 0xFF  # inside the first IDAT chunk, whose CRC then fails
    (kb / "broken.png").write_bytes(bytes(data))
    _photo(kb / "fine.png", (40, 30), "PNG")
    (kb / "a.md").write_text("# A\n\nbefore\n\n![damaged](broken.png)\n\n![fine](fine.png)\n\nafter\n")
    pdf, warnings = export(kb, "a.md")
    assert warnings == ["Image 'broken.png' in a.md was replaced by a placeholder: the picture cannot be decoded."]
    poppler.in_order(poppler.text(pdf), ["before", "Image not available: damaged", "after"])
    assert len(poppler.images(pdf)) == 1


@poppler.needs_poppler
def test_a_pasted_picture_is_a_placeholder_not_pages_of_base64(kb: Path) -> None:
    """Editors that paste screenshots as inline data write paragraphs of hundreds of kilobytes. Past
    20,000 characters a paragraph is set in pieces, which cut the data URI: the picture's base64 was
    printed as text (3,474 pages and two minutes for 8 MB), and a warning quoted all of it
    (decision 474). The data is now cut to its first characters before the document is laid out."""
    import base64
    import os

    data = base64.b64encode(os.urandom(60_000)).decode()
    (kb / "a.md").write_text(
        f"# A\n\nbefore ![shot](data:image/png;base64,{data}) after\n\n"
        f"<img src='data:image/jpeg;base64,{data}'>\n\nend\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == [
        f"Image '{f'data:image/{kind};base64,{data}'[:45]}\u2026' in a.md was replaced by a placeholder: "
        "remote and absolute images are never fetched."
        for kind in ("png", "jpeg")
    ]
    assert poppler.info(pdf)["Pages"] == "1"
    poppler.in_order(poppler.text(pdf), ["before", "Image not available: shot", "end"])


@poppler.needs_poppler
def test_pictures_and_links_with_a_scheme_markdown_it_distrusts_are_placeholders_not_source_text(kb: Path) -> None:
    """Decision 900. markdown-it's HTML safety filter refuses ``file:``, ``javascript:``,
    ``vbscript:`` and non-picture ``data:`` destinations, so ``![x](file:///etc/passwd)`` was no
    picture at all: it was printed as its Markdown source and listed in no warning, and
    ``[doc](file:///srv/doc.pdf)`` printed its brackets. Nothing is rendered as HTML here, and
    links and pictures pass their own checks (only web and mail links are clickable; nothing
    remote or absolute is fetched), so every destination is read as CommonMark writes it."""
    (kb / "a.md").write_text(
        "# A\n\nbefore ![secret](file:///etc/passwd) middle ![svg](data:image/svg+xml;base64,PHN2Zy8+) "
        "and [the doc](file:///srv/doc.pdf) or [click](javascript:alert(1)) after\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == [
        f"Image '{src}' in a.md was replaced by a placeholder: remote and absolute images are never fetched."
        for src in ("file:///etc/passwd", "data:image/svg+xml;base64,PHN2Zy8+")
    ]
    text = poppler.text(pdf)
    # the paragraph's text, then its pictures, as for every picture set in a line of text
    poppler.in_order(text, ["before middle and the doc or click after", "not available: secret", "not available: svg"])
    assert "](" not in text and "file:" not in text and "javascript" not in text
    raw = pdf.read_bytes()
    assert b"file:" not in raw and b"javascript" not in raw  # no link annotation to either


@poppler.needs_poppler
def test_obsidian_embeds_are_pictures_found_as_obsidian_finds_them(kb: Path) -> None:
    """``![[pic.png|300]]`` printed as that text (decision 762): an Obsidian vault's pictures were
    missing from its PDF, without a warning. An embed of a picture is now drawn, found by its path
    from the root, else by its file name anywhere; its ``|width`` or ``|widthxheight`` (CSS pixels)
    bounds its size; ``[[Note|alias]]`` reads as its alias, ``[[Note#Part]]`` as ``Note > Part``."""
    (kb / "notes").mkdir()
    (kb / "attachments" / "deep").mkdir(parents=True)
    _photo(kb / "attachments" / "deep" / "wide.png", (400, 100), "PNG")
    _photo(kb / "attachments" / "tall pic.jpg", (60, 120))
    (kb / "notes" / "a.md").write_text(
        "# A\n\nbefore ![[wide.png|200]] middle ![[attachments/tall pic.jpg]] after\n\n"
        "See [[Other note|the other one]] and [[Other#Part]].\n\n![[gone.png]]\n\nend\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "notes/a.md")
    assert warnings == ["Image 'gone.png' in notes/a.md was replaced by a placeholder: the file does not exist."]
    text = poppler.text(pdf)
    assert "[[" not in text and "]]" not in text
    poppler.in_order(text, ["before", "middle", "after", "the other one", "Other > Part", "Image not available", "end"])
    rows = poppler.images(pdf)
    # |200 is 200 CSS pixels = 150 pt wide: the 400-pixel picture (300 pt at 96 ppi without the
    # bound) is drawn that wide, so it has more pixels than 150 DPI needs and is downsampled to 312
    assert sorted((r["width"], r["height"]) for r in rows) == [("312", "78"), ("60", "120")]
    wide = next(r for r in rows if r["width"] == "312")
    assert int(wide["x-ppi"]) == 150


@poppler.needs_poppler
def test_an_html_img_is_drawn_at_the_width_it_asks_for(kb: Path) -> None:
    """READMEs draw a logo with ``<img src="logo.png" width="120">`` and mdBook books a figure with
    ``style="width: 50%"``: the export drew every such picture as wide as the page (decision 763).
    Its width and height (CSS pixels, 0.75 pt each, or a share of the width) now bound it."""
    _photo(kb / "logo.png", (800, 400), "PNG")
    _photo(kb / "fig.png", (600, 300), "PNG")
    _photo(kb / "free.png", (900, 100), "PNG")
    (kb / "a.md").write_text(
        '# A\n\n<p align="center"><img src="logo.png" width="120" alt="Logo"></p>\n\n'
        'Inline <img src="fig.png" style="width: 50%;"> figure.\n\n<img src="free.png">\n',
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md", page_format="a4", profile="print")
    assert warnings == []
    rows = poppler.images(pdf)
    assert len(rows) == 3
    logo, fig, free = rows  # in document order
    # 120 CSS px = 90 pt = 1.25 in: 800 pixels there are 640 ppi, over print's 300, so resampled to 375
    assert (logo["width"], int(logo["x-ppi"])) == ("375", 300)
    # half of A4's text width (about 240 pt): 600 pixels are drawn at about 180 ppi, not 96
    assert fig["width"] == "600" and 170 <= int(fig["x-ppi"]) <= 200
    assert (free["width"], int(free["x-ppi"])) == ("900", int(free["x-ppi"])) and int(free["x-ppi"]) < 300
