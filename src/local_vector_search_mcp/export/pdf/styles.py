"""Page formats, typographic styles and image profiles of the PDF export.

A :class:`Theme` is what makes the five styles look different: body and
heading faces, size and leading, justification, first-line indents, heading
numbering, rules and colours, and how code and quotes are set off.
"""

from __future__ import annotations

from dataclasses import dataclass

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY, TA_LEFT
from reportlab.lib.pagesizes import A4, A5, A6, B5, LETTER
from reportlab.lib.styles import ParagraphStyle

from .fonts import FontSet

__all__ = ["PAGE_FORMATS", "PROFILES", "THEMES", "Profile", "Sheet", "Theme", "sheet"]

PAGE_FORMATS: dict[str, tuple[float, float]] = {"a4": A4, "a5": A5, "a6": A6, "b5": B5, "letter": LETTER}


@dataclass(frozen=True)
class Profile:
    """Image resolution and JPEG quality of re-encoded pictures."""

    dpi: int
    jpeg_quality: int


PROFILES: dict[str, Profile] = {
    "screen": Profile(96, 65),
    "standard": Profile(150, 82),
    "print": Profile(300, 95),
}


@dataclass(frozen=True)
class Theme:
    body: str  # font role: sans | serif
    heading: str
    size: float  # body size at A4/letter; smaller pages scale it down
    leading: float  # line height / size
    justify: bool
    indent_first: bool  # first-line indent instead of space between paragraphs
    number_headings: bool
    heading_color: colors.Color
    accent: colors.Color
    heading_rule: bool  # a rule under level 1-2 headings
    heading_center: bool  # centred level 1 headings
    heading_scale: tuple[float, ...]  # size factor of levels 1-6
    code_bg: colors.Color
    code_border: bool
    margin: float  # page margin as a fraction of the page width
    footer: str  # left | center | right


_INK = colors.HexColor("#1a1a1a")
THEMES: dict[str, Theme] = {
    "compact": Theme(
        "sans",
        "sans",
        9.5,
        1.3,
        False,
        False,
        False,
        _INK,
        colors.HexColor("#555555"),
        False,
        False,
        (1.6, 1.35, 1.15, 1.05, 1.0, 1.0),
        colors.HexColor("#f3f3f3"),
        False,
        0.09,
        "center",
    ),
    "classic": Theme(
        "serif",
        "serif",
        11,
        1.45,
        True,
        True,
        False,
        _INK,
        colors.HexColor("#7a1f1f"),
        False,
        True,
        (1.9, 1.45, 1.2, 1.05, 1.0, 1.0),
        colors.HexColor("#f7f5ef"),
        False,
        0.14,
        "center",
    ),
    "modern": Theme(
        "sans",
        "sans",
        10.5,
        1.5,
        False,
        False,
        False,
        colors.HexColor("#0b4f8a"),
        colors.HexColor("#1f7ac4"),
        True,
        False,
        (2.0, 1.5, 1.25, 1.1, 1.0, 1.0),
        colors.HexColor("#eef4fa"),
        False,
        0.12,
        "right",
    ),
    "technical": Theme(
        "sans",
        "sans",
        10,
        1.4,
        False,
        False,
        True,
        colors.HexColor("#222222"),
        colors.HexColor("#b35c00"),
        True,
        False,
        (1.6, 1.35, 1.2, 1.05, 1.0, 1.0),
        colors.HexColor("#f4f4f4"),
        True,
        0.1,
        "right",
    ),
    "academic": Theme(
        "serif",
        "serif",
        11,
        1.5,
        True,
        True,
        True,
        _INK,
        colors.HexColor("#333333"),
        False,
        True,
        (1.5, 1.25, 1.1, 1.0, 1.0, 1.0),
        colors.HexColor("#f6f6f6"),
        True,
        0.15,
        "center",
    ),
}


@dataclass(frozen=True)
class Sheet:
    """The paragraph styles of one export (theme x page format x fonts)."""

    theme: Theme
    body: ParagraphStyle
    first: ParagraphStyle  # the paragraph after a heading: no first-line indent
    headings: tuple[ParagraphStyle, ...]
    code: ParagraphStyle
    small: ParagraphStyle
    cell: ParagraphStyle
    cell_head: ParagraphStyle
    title: ParagraphStyle
    subtitle: ParagraphStyle
    toc: tuple[ParagraphStyle, ...]
    code_chars_per_line: int
    frame_width: float
    frame_height: float
    margins: tuple[float, float, float, float]  # left, right, top, bottom


def _scale(page_width: float) -> float:
    # A5 is ~0.7 of A4's width, A6 ~0.5: shrink type, but less than the page.
    return min(1.0, 0.55 + 0.45 * page_width / float(A4[0]))


def sheet(theme_name: str, page_format: str, fonts: FontSet) -> Sheet:
    theme = THEMES[theme_name]
    width, height = PAGE_FORMATS[page_format]
    size = round(theme.size * _scale(width) * 2) / 2
    lead = size * theme.leading
    body_font = fonts.family(theme.body)
    head_font = fonts.family(theme.heading)
    mono = fonts.mono
    align = TA_JUSTIFY if theme.justify else TA_LEFT
    body = ParagraphStyle(
        "body",
        fontName=body_font.regular,
        fontSize=size,
        leading=lead,
        alignment=align,
        firstLineIndent=size * 1.5 if theme.indent_first else 0,
        spaceAfter=0 if theme.indent_first else size * 0.6,
        textColor=_INK,
        linkUnderline=False,
        bulletFontName=body_font.regular,
        bulletFontSize=size,
    )
    first = ParagraphStyle("first", parent=body, firstLineIndent=0)
    headings = []
    for level, factor in enumerate(theme.heading_scale, start=1):
        hsize = round(size * factor * 2) / 2
        headings.append(
            ParagraphStyle(
                f"h{level}",
                parent=body,
                fontName=head_font.bold if level < 6 or theme.body != "serif" else head_font.faces["italic"],
                fontSize=hsize,
                leading=hsize * 1.25,
                alignment=TA_CENTER if theme.heading_center and level == 1 else TA_LEFT,
                firstLineIndent=0,
                spaceBefore=size * (2.2 if level == 1 else 1.4 if level == 2 else 1.0),
                spaceAfter=size * (0.9 if level <= 2 else 0.5),
                textColor=theme.heading_color if level <= 3 else _INK,
                keepWithNext=True,
            )
        )
    code_size = max(5.5, size - 1.5)
    code = ParagraphStyle(
        "code",
        fontName=mono.regular,
        bulletFontName=mono.regular,
        fontSize=code_size,
        leading=code_size * 1.3,
        textColor=_INK,
    )
    small = ParagraphStyle(
        "small",
        parent=body,
        fontSize=size - 1,
        leading=(size - 1) * 1.3,
        firstLineIndent=0,
        alignment=TA_LEFT,
        textColor=colors.HexColor("#444444"),
        spaceAfter=size * 0.5,
    )
    cell = ParagraphStyle(
        "cell",
        parent=body,
        fontSize=size - 1,
        leading=(size - 1) * 1.25,
        firstLineIndent=0,
        alignment=TA_LEFT,
        spaceAfter=0,
    )
    cell_head = ParagraphStyle("cell_head", parent=cell, fontName=body_font.bold)
    title = ParagraphStyle(
        "title",
        parent=body,
        fontName=head_font.bold,
        fontSize=size * 2.6,
        leading=size * 3.1,
        alignment=TA_CENTER,
        textColor=theme.heading_color,
        firstLineIndent=0,
        spaceAfter=size * 2,
    )
    subtitle = ParagraphStyle(
        "subtitle",
        parent=body,
        fontSize=size * 1.3,
        leading=size * 1.7,
        alignment=TA_CENTER,
        firstLineIndent=0,
    )
    toc = tuple(
        ParagraphStyle(
            f"toc{level}",
            parent=body,
            fontName=body_font.bold if level == 0 else body_font.regular,
            fontSize=size - (0 if level == 0 else 0.5),
            leftIndent=size * 1.4 * level,
            firstLineIndent=0,
            spaceBefore=size * 0.4 if level == 0 else 0,
            spaceAfter=size * 0.15,
            alignment=TA_LEFT,
        )
        for level in range(6)
    )
    margin = width * theme.margin
    margins = (margin, margin, margin * 0.9, margin * 1.1)
    frame_width = width - margins[0] - margins[1]
    frame_height = height - margins[2] - margins[3]
    # DejaVu Sans Mono advances 0.602 em; keep a little slack for the padding.
    chars = max(20, int((frame_width - 2 * 6) / (code_size * 0.602)))
    return Sheet(
        theme,
        body,
        first,
        tuple(headings),
        code,
        small,
        cell,
        cell_head,
        title,
        subtitle,
        toc,
        chars,
        frame_width,
        frame_height,
        margins,
    )
