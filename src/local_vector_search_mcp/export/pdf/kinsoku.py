"""Line breaking of CJK paragraphs by the Japanese and Chinese rules (kinsoku shori, decision 1183).

reportlab's CJK wrap (``wordWrap="CJK"``) breaks after any letter that fills the line and keeps
one rule: a letter that cannot start a line is hung in the margin, one only. So a line started
with the prolonged sound mark or a small kana after a hung letter (``ニュ`` | ``ース``,
``ちょ`` | ``っと``), and an opening bracket ended a line (``「`` | ``注意」``). Here the break moves
back, a few letters at most, until the next line starts with a letter that may start one and this
line ends with one that may end one; a comma or full stop that overflows is hung as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reportlab.lib.textsplit import ALL_CANNOT_END, ALL_CANNOT_START, getCharWidths
from reportlab.platypus import Paragraph as _Paragraph
from reportlab.platypus import paragraph as _rl

# JIS X 4051's closing brackets, middle dots, full stops and small kana, with the full-width and
# half-width forms reportlab's list leaves out
CANNOT_START = frozenset(
    ALL_CANNOT_START
    + "，．？！：；”’〉》｝〙〗〟｠»〜～ゕゖㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿ々〻"
    + "\uff61\uff63\uff64\uff65\uff70\uff67\uff68\uff69\uff6a\uff6b\uff6c\uff6d\uff6e\uff6f\uff9e\uff9f"
)
CANNOT_END = frozenset(ALL_CANNOT_END + "“‘〘〖〝｟«\uff62")
HANGING = frozenset("、。，．,.")  # may hang in the margin when they overflow (burasage)
_MOST_BACK = 4  # a break moves back at most this many letters; past that the line stays as it was


def _width(u: Any, max_width: float) -> float:
    w = u.width
    if hasattr(w, "normalizedValue"):
        w._normalizer = max_width
        w = w.normalizedValue(max_width)
    return float(w)


def _break_at(letters: Sequence[str], start: int, i: int) -> int:
    """Where the next line starts when ``letters[i - 1]`` overflowed the line begun at ``start``."""
    if i - 1 <= start:
        return i  # a line holds one letter at least
    if letters[i - 1] in HANGING and (i == len(letters) or letters[i] not in CANNOT_START):
        return i  # hung in the margin
    at = i - 1
    while at > start + 1 and i - at <= _MOST_BACK and (letters[at] in CANNOT_START or letters[at - 1] in CANNOT_END):
        at -= 1
    if letters[at] in CANNOT_START or letters[at - 1] in CANNOT_END:
        # no place within reach: reportlab's rule (hang one letter that cannot start a line)
        return i if letters[i - 1] in CANNOT_START else i - 1
    return at


def split(frags: list[Any], max_widths: list[float], calc_bounds: bool, encoding: str = "utf8") -> Any:
    """reportlab's ``cjkFragSplit`` with the break placed by :func:`_break_at`."""
    letters: list[Any] = []
    for f in frags:
        text = f.text.decode(encoding) if isinstance(f.text, bytes) else f.text
        if text:
            letters.extend(_rl.cjkU(t, f, encoding) for t in text)
        else:
            letters.append(_rl.cjkU(text, f, encoding))
    lines: list[Any] = []
    i = start = 0
    used = 0.0
    max_width = max_widths[0]
    while i < len(letters):
        u = letters[i]
        i += 1
        used += _width(u, max_width)
        line_break = hasattr(u.frag, "lineBreak")
        if (used > max_width + _rl._FUZZ and used > 0) or line_break:
            if not line_break:
                at = _latin_break(letters, start, i) if ord(u or " ") < 0x3000 else None
                at = _break_at(letters, start, i) if at is None else at
                used -= sum(_width(letters[k], max_width) for k in range(at, i))
                i = at
            lines.append(
                _rl.makeCJKParaLine(letters[start:i], max_width, used, max_width - used, line_break, calc_bounds)
            )
            max_width = max_widths[min(len(lines), len(max_widths) - 1)]
            start = i
            used = 0.0
    if used > 0:
        lines.append(_rl.makeCJKParaLine(letters[start:], max_width, used, max_width - used, False, calc_bounds))
    return _rl.ParaLines(kind=1, lines=lines)


def split_text(text: str, widths: list[float], max_widths: list[float]) -> list[list[Any]]:
    """reportlab's ``dumbSplit`` (one run of one font: ``[extraSpace, text]`` per line) with the
    break placed by :func:`_break_at`; the letters' widths are summed, not made objects of."""
    lines: list[list[Any]] = []
    i = start = 0
    used = 0.0
    max_width = max_widths[0]
    while i < len(text):
        used += widths[i]
        i += 1
        if used > max_width + _rl._FUZZ and used > 0:
            at = _latin_break(text, start, i) if ord(text[i - 1]) < 0x3000 else None
            at = _break_at(text, start, i) if at is None else at
            used -= sum(widths[at:i])
            i = at
            lines.append([max_width - used, text[start:i].strip()])
            max_width = max_widths[min(len(lines), len(max_widths) - 1)]
            start = i
            used = 0.0
    if used > 0:
        lines.append([max_width - used, text[start:].strip()])
    return lines


def _latin_break(letters: Sequence[str], start: int, i: int) -> int | None:
    """Inside a Latin word that overflowed: after the last space or CJK letter in the line's second
    half, as reportlab does; ``None`` when there is none."""
    for j in range(i - 1, (start + i) >> 1, -1):
        uj = letters[j]
        if (uj and _rl.category(uj) == "Zs") or ord(uj or " ") >= 0x3000:
            return j + 1 if j + 1 < i else None
    return None


class Paragraph(_Paragraph):  # type: ignore[misc]  # reportlab ships no type hints
    """A paragraph whose CJK wrap keeps the line-start and line-end rules (see the module)."""

    def breakLinesCJK(self, maxWidths: Any) -> Any:
        if not isinstance(maxWidths, (list, tuple)):
            maxWidths = [maxWidths]
        frags = self.frags
        if not frags or self.style.endDots or (hasattr(self, "blPara") and getattr(self, "_splitpara", 0)):
            return super().breakLinesCJK(maxWidths)
        self.height = 0
        _rl._handleBulletWidth(self.bulletText, self.style, maxWidths)
        f = frags[0]
        if len(frags) == 1 and not hasattr(f, "cbDefn"):  # reportlab's shortcut: one run of one font
            text = f.text if hasattr(f, "text") else "".join(getattr(f, "words", []))
            widths = getCharWidths(text, f.fontName, f.fontSize)
            lines = [(space, [line]) for space, line in split_text(text, widths, list(maxWidths))]
            return f.clone(kind=0, lines=lines, ascent=f.fontSize, descent=-0.2 * f.fontSize)
        auto = getattr(self, "autoLeading", getattr(self.style, "autoLeading", ""))
        return split(frags, list(maxWidths), auto not in ("", "off"))
