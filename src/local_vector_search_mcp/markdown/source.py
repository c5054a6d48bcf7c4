"""Decoding a Markdown file and mapping line numbers to string offsets.

markdown-it only reports ``[first_line, end_line)`` per block and normalises
CRLF/CR to LF internally without changing the line count. ``LineIndex`` treats
``\\r\\n``, ``\\r`` and ``\\n`` each as one break, so its line numbers agree with
the parser's while offsets stay in the original (un-normalised) text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from operator import add

from local_vector_search_mcp.errors import UnsupportedFormat

__all__ = ["BOM", "LineIndex", "decode_markdown", "detect_eol", "split_lines"]

BOM = b"\xef\xbb\xbf"
_BREAK_RE = re.compile(r"\r\n|\r|\n")


def decode_markdown(raw: bytes) -> tuple[str, bool]:
    """Return ``(text, had_bom)``; the BOM is not part of the text."""
    bom = raw.startswith(BOM)
    body = raw[len(BOM) :] if bom else raw
    try:
        return body.decode("utf-8", "strict"), bom
    except UnicodeDecodeError as exc:
        raise UnsupportedFormat(_not_utf8(body, exc.start)) from None


# Byte order marks of the encodings Windows tools write Markdown in besides UTF-8 (PowerShell 5's
# `>` and Out-File write UTF-16 LE with its mark): UTF-32's come first, they begin like UTF-16's.
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _not_utf8(body: bytes, at: int) -> str:
    """Why the file cannot be read; a file that announces its encoding gets it named (decision 924),
    any other the first byte that is not UTF-8 and its line (decision 1121), ``at`` its offset."""
    for mark, encoding in _OTHER_BOMS:
        if body.startswith(mark):
            return (
                f"The file is not valid UTF-8 text: it starts with a {encoding} byte order mark ({encoding} "
                "text, as some Windows tools write it); only UTF-8 Markdown can be read or edited. Save it as UTF-8."
            )
    line = body.count(b"\n", 0, at) + 1
    return (
        f"The file is not valid UTF-8 text (byte 0x{body[at]:02X} on line {line} is not); only UTF-8 Markdown "
        "can be read or edited. Save it as UTF-8."
    )


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as the element model reads them (decision 55): CRLF, CR and LF end a
    line. ``str.splitlines`` also breaks at U+2028, VT, FF, U+0085 and the file separators, which
    Markdown reads as ordinary characters (decision 923)."""
    return _BREAK_RE.split(text)


def detect_eol(text: str) -> str:
    """The document EOL: CRLF if the file contains any CRLF (§4.7), else CR when lone CRs outnumber
    LFs (a classic Mac file, decision 506), else LF. New lines take it, so an edit never mixes
    ``\n`` into a file whose lines end in ``\r``."""
    if "\r\n" in text:
        return "\r\n"
    if "\r" in text and text.count("\r") > text.count("\n"):
        return "\r"  # no CRLF, so every CR here is a line break of its own
    return "\n"


@dataclass(frozen=True, slots=True)
class LineIndex:
    """Line ``i`` is ``text[starts[i]:ends[i]]``; ``ends`` excludes the break."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    length: int

    @classmethod
    def build(cls, text: str) -> LineIndex:
        if "\r" not in text:  # the usual case: one split and C-level sums instead of a loop per line
            lengths = list(map(len, text.split("\n")))
            line_starts = [0, *accumulate(map((1).__add__, lengths[:-1]))]
            return cls(tuple(line_starts), tuple(map(add, line_starts, lengths)), len(text))
        starts = [0]
        ends: list[int] = []
        for match in _BREAK_RE.finditer(text):
            ends.append(match.start())
            starts.append(match.end())
        ends.append(len(text))
        return cls(tuple(starts), tuple(ends), len(text))

    @property
    def count(self) -> int:
        return len(self.starts)

    def line_of(self, offset: int) -> int:
        """Index of the line containing ``offset`` (a break belongs to its line)."""
        return max(0, bisect_right(self.starts, offset) - 1)

    def line_start(self, offset: int) -> int:
        return self.starts[self.line_of(offset)]

    def line_end(self, offset: int) -> int:
        return self.ends[self.line_of(offset)]

    def start_of(self, line: int) -> int:
        """Start offset of ``line``; past the last line this is the text length."""
        return self.starts[line] if line < len(self.starts) else self.length
