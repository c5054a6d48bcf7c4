"""Fonts: TrueType faces found through fontconfig, registered once per process.

reportlab embeds TrueType fonts as subsets but has no automatic fallback, and it
cannot read CFF-outline fonts (Noto CJK OTF). So every face here is TrueType,
and :meth:`FontSet.markup` wraps runs a face cannot draw in ``<font>`` tags
naming a CJK face that can, or else any installed TrueType face fontconfig lists
as drawing the character (Devanagari, Thai, emoji: decision 1161); characters no
face covers are collected so the export can warn instead of printing boxes
silently (spec/decisions.md).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import shutil
import subprocess
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import reportlab
from reportlab.lib.fonts import addMapping
from reportlab.pdfbase import pdfmetrics, ttfonts
from reportlab.pdfbase.ttfonts import TTFError, TTFont
from reportlab.platypus import paraparser

__all__ = ["Family", "FontSet", "font_set", "xml_escape"]

# Preferred faces per role, as fontconfig patterns; the first one found wins.
_FAMILIES: dict[str, tuple[str, ...]] = {
    "sans": ("DejaVu Sans", "Liberation Sans", "FreeSans"),
    "serif": ("DejaVu Serif", "Liberation Serif", "FreeSerif"),
    "mono": ("DejaVu Sans Mono", "Liberation Mono", "FreeMono"),
}
_STYLES = {
    "regular": "Book,Regular",
    "bold": "Bold",
    "italic": "Oblique,Italic",
    "bolditalic": "Bold Oblique,Bold Italic",
}
# CJK faces known to be TrueType; anything else fontconfig lists for Chinese is tried after them.
_CJK_PREFERRED = ("WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Droid Sans Fallback", "AR PL UMing CN")
_VERA = Path(reportlab.__file__).parent / "fonts"
_VERA_FILES = {"regular": "Vera.ttf", "bold": "VeraBd.ttf", "italic": "VeraIt.ttf", "bolditalic": "VeraBI.ttf"}


def _to_unicode_cmap(fontname: str, subset: list[int]) -> str:
    """reportlab's ToUnicode CMap of a subset, with each character written as UTF-16BE.

    reportlab writes the code point as plain hex (``<1F600>`` for U+1F600), which PDF readers take
    for the 16-bit U+1F60: an emoji or any other character beyond the Basic Multilingual
    Plane that a face draws was copied, searched and extracted as another character. The CMap
    format asks for UTF-16BE, a surrogate pair there (decision 471).
    """
    lines = [
        "/CIDInit /ProcSet findresource begin",
        "12 dict begin",
        "begincmap",
        "/CIDSystemInfo",
        f"<< /Registry ({fontname})",
        f"/Ordering ({fontname})",
        "/Supplement 0",
        ">> def",
        f"/CMapName /{fontname} def",
        "/CMapType 2 def",
        "1 begincodespacerange",
        f"<00> <{len(subset) - 1:02X}>",
        "endcodespacerange",
        f"{len(subset)} beginbfchar",
        *(f"<{i:02X}> <{_utf16(code)}>" for i, code in enumerate(subset)),
        "endbfchar",
        "endcmap",
        "CMapName currentdict /CMap defineresource pop",
        "end",
        "end",
    ]
    return "\n".join(lines)


def _utf16(code: int) -> str:
    return chr(code).encode("utf-16-be", "surrogatepass").hex().upper()


# reportlab looks the function up in its module each time it writes a subset font.
ttfonts.makeToUnicodeCMap = _to_unicode_cmap


_start_font = paraparser.ParaParser.start_font


def _start_font_keeping_weight(self: paraparser.ParaParser, attr: dict[str, str]) -> None:
    """``<font face=...>`` naming one of this module's faces keeps the bold and italic of the text
    around it. reportlab's parser takes them from the face's own name, so a run set in a fallback
    face inside ``<b>`` (a Devanagari word in a bold heading) was drawn regular though its family
    has a bold face (decision 1161); the family's mappings then pick the face."""
    outer = self._stack[-1]
    _start_font(self, attr)
    inner = self._stack[-1]
    if str(getattr(inner, "fontName", "")).startswith("lvsm-"):
        inner.bold, inner.italic = outer.bold, outer.italic


paraparser.ParaParser.start_font = _start_font_keeping_weight


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _fc_match(pattern: str) -> Path | None:
    """The file fontconfig picks for ``family[:style=S]``, only if family and style really match."""
    if shutil.which("fc-match") is None:
        return None
    try:
        out = subprocess.run(
            ["fc-match", "-f", "%{family}\t%{style}\t%{file}", pattern],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    family, style, file = [*out.split("\t"), "", ""][:3]
    wanted_family, _, wanted_style = pattern.partition(":style=")
    # fontconfig substitutes silently: another family, or the regular face for a missing italic
    if not file or wanted_family.lower() not in family.lower():
        return None
    if wanted_style and wanted_style.lower() not in style.lower():
        return None
    return Path(file)


def _fc_list_cjk() -> list[Path]:
    if shutil.which("fc-list") is None:
        return []
    try:
        out = subprocess.run(
            ["fc-list", ":lang=zh-cn", "file"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    files = sorted({line.split(":")[0].strip() for line in out.splitlines() if line.strip()})
    return [Path(f) for f in files if f.lower().endswith((".ttf", ".ttc"))]


def _load(name: str, path: Path) -> TTFont | None:
    try:
        return TTFont(name, str(path), subfontIndex=0) if path.suffix.lower() == ".ttc" else TTFont(name, str(path))
    except (TTFError, OSError, ValueError):
        return None  # CFF outlines, unreadable file: try the next candidate


@dataclass(frozen=True)
class Family:
    """A registered family: ``name`` resolves ``<b>``/``<i>`` to its four faces."""

    name: str
    faces: dict[str, str]
    coverage: frozenset[int] | dict[int, int]

    @property
    def regular(self) -> str:
        return self.faces["regular"]

    @property
    def bold(self) -> str:
        return self.faces["bold"]

    def covers(self, ch: str) -> bool:
        return ord(ch) in self.coverage


def _register_family(role: str, files: dict[str, Path]) -> Family | None:
    faces: dict[str, str] = {}
    by_path: dict[Path, str] = {}
    for style in _STYLES:
        path = files.get(style) or files.get("bold" if style == "bolditalic" and "bold" in files else "regular")
        if path is None:
            return None
        name = by_path.get(path, f"lvsm-{role}-{style}")
        if name not in pdfmetrics.getRegisteredFontNames():
            font = _load(name, path)
            if font is None:
                return None
            pdfmetrics.registerFont(font)
        by_path[path] = name
        faces[style] = name
    coverage: dict[int, int] = pdfmetrics.getFont(faces["regular"]).face.charToGlyph
    family = f"lvsm-{role}"
    pdfmetrics.registerFontFamily(
        family, normal=faces["regular"], bold=faces["bold"], italic=faces["italic"], boldItalic=faces["bolditalic"]
    )
    for name in faces.values():  # <b> inside a run already in a face of this family
        addMapping(name, 0, 0, faces["regular"])
        addMapping(name, 1, 0, faces["bold"])
        addMapping(name, 0, 1, faces["italic"])
        addMapping(name, 1, 1, faces["bolditalic"])
    return Family(family, faces, coverage)


def _find_family(role: str) -> Family:
    for pattern in _FAMILIES[role]:
        files: dict[str, Path] = {}
        for style, names in _STYLES.items():
            for style_name in names.split(","):
                path = _fc_match(f"{pattern}:style={style_name}")
                if path is not None:
                    files.setdefault(style, path)
                    break
        if "regular" in files:
            family = _register_family(role, files)
            if family is not None:
                return family
    # reportlab ships Bitstream Vera: always there, Latin only.
    vera = {style: _VERA / name for style, name in _VERA_FILES.items()}
    family = _register_family(f"{role}-vera", vera)
    assert family is not None, "reportlab's bundled Vera fonts are missing"
    return family


def _find_cjk(configured: str | None) -> tuple[Family | None, bool]:
    """The CJK family, and whether a configured ``export.pdf.cjkFont`` was found and used. One that
    is not (a missing file, an unknown family) falls back to the automatic search, as with none
    configured; the export says so (decision 689): it used to leave the text out while an installed
    CJK font could draw it."""
    chosen: list[Path] = []
    if configured:
        path = Path(configured)
        if path.suffix.lower() in (".ttf", ".ttc") and path.is_file():
            chosen.append(path)
        else:
            found = _fc_match(configured)
            if found is not None:
                chosen.append(found)
    if chosen and (family := _register_family("cjk0", dict.fromkeys(_STYLES, chosen[0]))) is not None:
        return family, True
    automatic: list[Path] = []
    for pattern in _CJK_PREFERRED:
        found = _fc_match(pattern)
        if found is not None:
            automatic.append(found)
    automatic += _fc_list_cjk()
    for i, path in enumerate(dict.fromkeys(automatic), start=1):
        family = _register_family(f"cjk{i}", dict.fromkeys(_STYLES, path))
        if family is not None:
            return family, False
    return None, False


# A character none of the families above draws is looked up in every installed face, in the order
# fontconfig ranks them for sans-serif text (decision 1161): a script face (Noto Sans Devanagari UI,
# Thai UI, ...), a symbol face for emoji (Symbola). Only TrueType outlines (reportlab reads no CFF)
# and no colour-bitmap emoji face, whose glyphs reportlab draws as nothing.
_FC_FORMAT = "%{file}\t%{index}\t%{fontformat}\t%{color}\t%{family}\t%{style}\t%{charset}\n"
_NOT_REGULAR = re.compile(r"bold|italic|oblique|condensed|light|thin|black|heavy|semi|medium|narrow", re.I)
_NOT_ITALIC = re.compile(r"italic|oblique|condensed", re.I)


@dataclass(frozen=True)
class _Candidate:
    """An installed face as fontconfig lists it: its file, family, and code point ranges."""

    path: Path
    family: str
    style: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def covers(self, code: int) -> bool:
        i = bisect.bisect_right(self.starts, code) - 1
        return i >= 0 and code <= self.ends[i]


def _parse_charset(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    starts: list[int] = []
    ends: list[int] = []
    for item in text.split():
        first, _, last = item.partition("-")
        try:
            starts.append(int(first, 16))
            ends.append(int(last or first, 16))
        except ValueError:
            continue
    return tuple(starts), tuple(ends)


@functools.cache
def _fallback_candidates() -> tuple[_Candidate, ...]:
    """Every installed TrueType face, as fontconfig sorts them for sans-serif text. Run once per
    process, and only when some character needs it (one ``fc-match`` call, about 10 ms)."""
    if shutil.which("fc-match") is None:
        return ()
    try:
        out = subprocess.run(
            ["fc-match", "-a", "-f", _FC_FORMAT, "sans-serif"], capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    found: list[_Candidate] = []
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) != 7:
            continue
        file, index, fontformat, color, family, style, charset = parts
        if fontformat != "TrueType" or color == "True" or index not in ("", "0"):
            continue
        if not file.lower().endswith((".ttf", ".ttc")):
            continue
        starts, ends = _parse_charset(charset)
        found.append(_Candidate(Path(file), family.split(",")[0], style.split(",")[0], starts, ends))
    return tuple(found)


_fallback_families: dict[Path, Family | None] = {}
_fallback_of: dict[str, Family | None] = {}


def _fallback(ch: str) -> Family | None:
    """The installed face that draws ``ch`` when none of the export's families does (with its bold
    face when the family has one), registered on first use; None when no installed face has it."""
    if ch in _fallback_of:
        return _fallback_of[ch]
    code = ord(ch)
    chosen: Family | None = None
    for family in _fallback_families.values():
        if family is not None and family.covers(ch):
            chosen = family
            break
    else:
        candidates = _fallback_candidates()
        for cand in candidates:
            if _NOT_REGULAR.search(cand.style) or not cand.covers(code) or cand.path in _fallback_families:
                continue
            files = {"regular": cand.path}
            bold = next(
                (
                    c.path
                    for c in candidates
                    if c.family == cand.family and "bold" in c.style.lower() and not _NOT_ITALIC.search(c.style)
                ),
                None,
            )
            if bold is not None:
                files["bold"] = bold
            family = _register_family(f"fb{len(_fallback_families)}", files)
            _fallback_families[cand.path] = family
            if family is not None and family.covers(ch):
                chosen = family
                break
    _fallback_of[ch] = chosen
    return chosen


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


# reportlab draws one glyph per character, side by side: it places no mark on its letter, joins no
# jamo into a syllable and looks up no variation sequence. A letter written decomposed (macOS: a kana
# and its voiced mark U+3099, a Hangul syllable as its conjoining jamo, a Latin letter and its accent)
# came out as a letter with its mark beside it, or as boxes (no CJK face draws conjoining jamo); a
# variation selector (the ideographic ones with which Japanese names are written: 葛󠄀) as a box no
# warning named (decision 1104).
_SELECTOR = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")


def _drawn(text: str) -> str:
    """``text`` as it is drawn: each letter followed by combining marks or by the vowel and final
    jamo of its syllable composed where NFC makes them one character (only there: NFC also maps a
    lone character to another, a CJK compatibility ideograph to its unified one, whose glyph may
    differ), and variation selectors left out (the base letter is drawn, as a font without the
    variant shows it)."""
    if text.isascii():
        return text
    if _SELECTOR.search(text):
        text = _SELECTOR.sub("", text)
    if unicodedata.is_normalized("NFC", text):
        return text
    clusters: list[str] = []
    for ch in text:
        if clusters and (unicodedata.combining(ch) or "\u1160" <= ch <= "\u11ff"):
            clusters[-1] += ch
        else:
            clusters.append(ch)
    return "".join(unicodedata.normalize("NFC", c) if len(c) > 1 else c for c in clusters)


@dataclass
class FontSet:
    """The families of one export and the characters none of them could draw."""

    sans: Family
    serif: Family
    mono: Family
    cjk: Family | None
    missing: set[str] = field(default_factory=set)
    unused_cjk_font: str | None = None  # export.pdf.cjkFont when it was not found or could not be used
    cjk_set: bool = False  # some text was set in the CJK family
    right_to_left: bool = False  # a Hebrew, Arabic, ... letter was set (left to right: decision 365)

    def family(self, role: str) -> Family:
        return {"sans": self.sans, "serif": self.serif, "mono": self.mono}[role]

    def face_of(self, ch: str, base: Family) -> Family | None:
        """The family that draws ``ch`` in text set in ``base``: ``base``, else the sans family, else
        the CJK one, else any installed face that has it (1161); None when none has it. The serif
        and monospace faces lack scripts and symbols the sans face has (Hebrew, Arabic, ⚠ in DejaVu
        Serif): a classic or academic export printed them as boxes and named them missing while the
        sans face could draw them (1140)."""
        if base.covers(ch) or ch in "\n\t":
            return base
        if base is not self.sans and self.sans.covers(ch):
            return self.sans
        if self.cjk is not None and self.cjk.covers(ch):
            return self.cjk
        return _fallback(ch)

    def markup(self, text: str, base: Family) -> str:
        """``text`` escaped for a reportlab paragraph set in ``base``, with fallback runs, as drawn
        (:func:`_drawn`)."""
        if text.isascii():
            return xml_escape(text)
        text = _drawn(text)
        out: list[str] = []
        run: list[str] = []
        face: Family = base
        for ch in text:
            found = self.face_of(ch, base)
            if found is None and unicodedata.category(ch) not in ("Cf", "Mn", "Zs", "Cc"):
                self.missing.add(ch)
            found = found or base
            if found is not face and run:
                out.append(self._run("".join(run), face, base))
                run = []
            face = found
            # a letter: a right-to-left mark (U+200F, Cf) alone reverses nothing (decision 1104)
            if (
                not self.right_to_left
                and unicodedata.bidirectional(ch) in ("R", "AL")
                and unicodedata.category(ch) != "Cf"
            ):
                self.right_to_left = True
            run.append(ch)
        if run:
            out.append(self._run("".join(run), face, base))
        return "".join(out)

    def _run(self, text: str, face: Family, base: Family) -> str:
        escaped = xml_escape(text)
        if face is base:
            return escaped
        if face is self.cjk:
            self.cjk_set = True
        return f'<font face="{face.regular}">{escaped}</font>'

    def width(self, text: str, base: Family, face: str, size: float) -> float:
        """``text``'s width as ``markup`` sets it in ``face`` of ``base``: each run ``base`` cannot
        draw in the CJK face. Measured in ``face`` alone, ``中文`` took the width of two missing
        glyphs, half its own, and a table column sized by it wrapped one character a line (1056)."""
        text = _drawn(text)
        if text.isascii():
            return string_width(text, face, size)
        runs = itertools.groupby(text, lambda ch: self.face_of(ch, base) or base)
        return sum(string_width("".join(run), face if family is base else family.regular, size) for family, run in runs)

    def needs_cjk_wrap(self, text: str) -> bool:
        """True when ``text`` has wide characters (line breaks between any two of them)."""
        return not text.isascii() and any(_wide(ch) for ch in text)

    def drawable(self, chars: Iterable[str], base: Family) -> bool:
        return all(self.face_of(ch, base) is not None for ch in chars)


@functools.cache
def _families(cjk_font: str | None) -> tuple[Family, Family, Family, tuple[Family | None, bool]]:
    return _find_family("sans"), _find_family("serif"), _find_family("mono"), _find_cjk(cjk_font)


def font_set(cjk_font: str | None = None) -> FontSet:
    """The fonts of a new export (faces are looked up and registered once per process)."""
    sans, serif, mono, (cjk, configured_used) = _families(cjk_font)
    return FontSet(sans, serif, mono, cjk, unused_cjk_font=cjk_font if cjk_font and not configured_used else None)


def string_width(text: str, face: str, size: float) -> float:
    """``text``'s width in one registered face; an estimate when the face cannot measure it."""
    try:
        return float(pdfmetrics.stringWidth(text, face, size))
    except (KeyError, ValueError):
        return len(text) * size * 0.55
