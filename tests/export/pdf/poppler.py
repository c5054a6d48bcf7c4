"""What poppler reads back from a PDF: the independent check of every export test; and the marks
of the tests that need poppler or a CJK font (``tools/system-deps.sh`` installs both)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

from PIL import Image
from system import needs

from local_vector_search_mcp.export.pdf.fonts import font_set

needs_poppler = needs(shutil.which("pdftotext") is not None, "poppler-utils is not installed")
needs_cjk_font = needs(font_set().cjk is not None, "no TrueType CJK font is installed (fonts-wqy-microhei)")
# A letter of each script the sans face lacks that tools/system-deps.sh installs a face for, and an emoji
SCRIPTS = {"Devanagari": "न", "Bengali": "ব", "Thai": "ท", "emoji": "\U0001f44d"}


def _installed_face_draws(ch: str) -> bool:
    """Whether fontconfig lists a TrueType face that has ``ch`` (asked apart from the export's code)."""
    if shutil.which("fc-list") is None:
        return False
    out = subprocess.run(
        ["fc-list", f":charset={ord(ch):x}:fontformat=TrueType", "file"], capture_output=True, text=True, check=False
    ).stdout
    return bool(out.strip())


needs_script_fonts = needs(
    all(_installed_face_draws(ch) for ch in SCRIPTS.values()),
    "no TrueType face for Devanagari, Bengali, Thai or emoji is installed (fonts-noto-ui-core, fonts-symbola)",
)


def _run(*args: str) -> str:
    return subprocess.run(args, capture_output=True, text=True, check=True, timeout=120).stdout


def colours(pdf: Path, page: int = 1) -> set[tuple[int, int, int]]:
    """The colours of a page drawn at 30 dpi: a filled area (a box's background, a highlight)
    shows in its own colour."""
    args = ("pdftoppm", "-r", "30", "-f", str(page), "-l", str(page), "-png", str(pdf))
    png = subprocess.run(args, capture_output=True, check=True, timeout=120).stdout
    with Image.open(io.BytesIO(png)) as image:
        return {colour for _, colour in image.convert("RGB").getcolors(1 << 20) or []}


def area(pdf: Path, colour: tuple[int, int, int], page: int = 1, dpi: int = 72) -> int:
    """How many pixels of a page drawn at ``dpi`` are exactly ``colour``: a filled box counts all
    its pixels, anti-aliased text in that grey a handful."""
    args = ("pdftoppm", "-r", str(dpi), "-f", str(page), "-l", str(page), "-png", str(pdf))
    png = subprocess.run(args, capture_output=True, check=True, timeout=120).stdout
    with Image.open(io.BytesIO(png)) as image:
        return dict((c, n) for n, c in image.convert("RGB").getcolors(1 << 20) or []).get(colour, 0)


def text(pdf: Path, *pages: int) -> str:
    span = ["-f", str(pages[0]), "-l", str(pages[-1])] if pages else []
    return _run("pdftotext", *span, str(pdf), "-")


def layout(pdf: Path) -> str:
    """The text with its layout kept (columns show indentation)."""
    return _run("pdftotext", "-layout", str(pdf), "-")


def flat(pdf: Path) -> str:
    """The text with all white space removed (line breaks fall anywhere in CJK)."""
    return re.sub(r"\s+", "", text(pdf))


def info(pdf: Path) -> dict[str, str]:
    out = {}
    for line in _run("pdfinfo", str(pdf)).splitlines():
        key, _, value = line.partition(":")
        out[key.strip()] = value.strip()
    return out


def page_size(pdf: Path) -> tuple[float, float]:
    match = re.match(r"([\d.]+) x ([\d.]+) pts", info(pdf)["Page size"])
    assert match is not None
    return float(match.group(1)), float(match.group(2))


def fonts(pdf: Path) -> list[dict[str, str]]:
    """Rows of ``pdffonts``: name, type, emb."""
    rows = []
    for line in _run("pdffonts", str(pdf)).splitlines()[2:]:
        parts = line.split()
        # name type... encoding emb sub uni object ID: read from the right
        rows.append({"name": parts[0], "emb": parts[-5], "sub": parts[-4], "type": " ".join(parts[1:-6])})
    return rows


def images(pdf: Path) -> list[dict[str, str]]:
    """Rows of ``pdfimages -list`` (type ``image`` only, not soft masks)."""
    lines = _run("pdfimages", "-list", str(pdf)).splitlines()[2:]
    keys = [
        "page",
        "num",
        "type",
        "width",
        "height",
        "color",
        "comp",
        "bpc",
        "enc",
        "interp",
        "object",
        "id",
        "x-ppi",
        "y-ppi",
        "size",
        "ratio",
    ]
    rows = [dict(zip(keys, line.split(), strict=False)) for line in lines]
    return [r for r in rows if r.get("type") == "image"]


def in_order(haystack: str, needles: list[str]) -> None:
    """Every needle occurs, each after the previous one."""
    pos = 0
    for needle in needles:
        found = haystack.find(needle, pos)
        assert found >= 0, f"{needle!r} missing or out of order after position {pos}"
        pos = found + len(needle)
