"""Fonts: what a PDF reader extracts is what was written."""

from __future__ import annotations

from pathlib import Path

import pytest
from reportlab.pdfbase import pdfmetrics

from local_vector_search_mcp.export.pdf.fonts import _to_unicode_cmap, font_set

from . import poppler
from .conftest import export

# Characters beyond the Basic Multilingual Plane that common text faces draw (DejaVu Sans has
# the emoticons block, Math Alphanumerics live in DejaVu Serif and many others).
ASTRAL = "\U0001f600\U0001f642\U0001d400\U0001d49c"


def test_the_to_unicode_map_writes_utf16() -> None:
    cmap = _to_unicode_cmap("F", [0, 0x41, 0x1F600])
    assert "<00> <0000>" in cmap and "<01> <0041>" in cmap and "<02> <D83DDE00>" in cmap
    assert "<00> <02>" in cmap and "3 beginbfchar" in cmap


@poppler.needs_poppler
def test_characters_beyond_the_bmp_are_extracted_as_written(kb: Path) -> None:
    """reportlab's ToUnicode map wrote U+1F600 as ``<1F600>``, which readers take as U+1F60: an
    emoji in an export was copied and found as a Greek letter (decision 471)."""
    drawn = [ch for ch in ASTRAL if font_set().sans.covers(ch)]
    if not drawn:
        pytest.skip("the text face draws none of the test characters")
    (kb / "a.md").write_text(f"# Faces\n\nsmile {' '.join(drawn)} done\n", encoding="utf-8")
    pdf, _ = export(kb, "a.md")
    assert f"smile {' '.join(drawn)} done" in poppler.text(pdf)


@poppler.needs_poppler
def test_a_serif_export_draws_in_the_sans_face_what_the_serif_face_lacks(kb: Path) -> None:
    """Decision 1140: the serif and monospace faces fell back to the CJK face only, so an academic or
    classic export printed Hebrew, Arabic and symbols such as ⚠ as boxes, and its warning named
    them missing, while the sans face the export had loaded could draw them."""
    fonts = font_set()
    lacking = [ch for ch in "שלוםمرحبا⚠" if not fonts.serif.covers(ch) and fonts.sans.covers(ch)]
    if not lacking:
        pytest.skip("the serif face draws these characters, or the sans face does not")
    word = "".join(lacking)
    (kb / "a.md").write_text(f"# T\n\nSerif text {word} here, and `code {word}`.\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md", style="academic")
    assert not any("could not be rendered" in w for w in warnings)
    assert all(ch in poppler.flat(pdf) for ch in lacking)


def _embedded(pdf: Path) -> set[str]:
    """The base names of the fonts embedded in ``pdf`` (pdffonts, subset prefix removed)."""
    rows = poppler._run("pdffonts", str(pdf)).splitlines()[2:]
    assert all(row.split()[-4] == "yes" for row in rows), rows  # every face is a subset
    return {row.split()[0].split("+", 1)[-1] for row in rows}


def _face_name(face: str) -> str:
    name = pdfmetrics.getFont(face).face.name
    return name.decode() if isinstance(name, bytes) else str(name)


@poppler.needs_poppler
@poppler.needs_script_fonts
def test_scripts_and_emoji_no_text_face_has_are_drawn_in_an_installed_face(kb: Path) -> None:
    """Decision 1161: Devanagari, Bengali, Thai and emoji were boxes (the rust book's "नमस्ते", its
    title page's 🚨) named in a warning, while fonts-noto-ui-core and fonts-symbola draw them. Any
    installed TrueType face fontconfig lists for a character is now a fallback, its bold face set
    in bold text; the characters are extracted as written."""
    words = {"Devanagari": "नमस्ते", "Bengali": "বাংলা", "Thai": "สวัสดี", "emoji": "\U0001f44d\U0001f6a8"}
    (kb / "a.md").write_text(
        f"# Hello {words['Devanagari']}\n\n"
        + "".join(f"{script}: “{word}”, **bold {word}**.\n\n" for script, word in words.items())
        + f"```text\n['{words['Devanagari'][0]}', '{words['Thai'][0]}']\n```\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    for script, word in words.items():
        assert f"{script}: “{word}”, bold {word}." in text, (script, text)
    embedded = _embedded(pdf)
    fs = font_set()
    for script, ch in poppler.SCRIPTS.items():
        family = fs.face_of(ch, fs.sans)
        assert family is not None and family is not fs.sans, script
        assert _face_name(family.regular) in embedded, (script, embedded)
        if family.bold != family.regular:  # the heading and the bold words are set in the bold face
            assert _face_name(family.bold) in embedded, (script, embedded)
