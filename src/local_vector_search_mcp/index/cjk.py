"""CJK segmentation shared by every storage adapter's index and query sides.

Full-text tokenizers that split on spaces (FTS5 ``unicode61``, PostgreSQL's
``simple`` configuration) read an unbroken run of Chinese or Japanese as one
token, so ``学习`` inside ``机器学习很有趣`` could never match. Korean is spaced,
but between words only: a particle or ending is written glued to its noun
(``검색을``, ``검색합니다``, ``전문검색은``), so a whole-word token never met the
noun alone; Hangul syllables are therefore segmented the same way (decision 517,
as Lucene's CJK bigrams do). Thai, Lao, Khmer and Myanmar are written without
spaces between words too, and unicode61 cut them at every combining vowel or tone
mark instead (``ติดตั้ง`` -> ``ต``, ``ดต``, ``ง``), so a word matched only where
its pieces happened to line up; their runs are segmented the same way, on their
letters: the marks are dropped first, as unicode61 drops Latin accents (decision
519). Adapters rewrite
CJK runs before their tokenizer sees them, the same way on both sides:

* indexed text: each run becomes its overlapping character bigrams plus its
  last character on its own (``机器学习`` -> ``机器 器学 学习 习``);
* a query run (:class:`~.query.CjkRun`): its bigrams; a single character
  matches every bigram that starts with it (a prefix) and the run-final one.

Latin text is untouched. The engine never bigrams anything: it hands runs to
the adapter as :class:`~.query.CjkRun` leaves.

A few letters unicode61 reads otherwise than a reader are rewritten one character for
one before it sees them, on both sides (:func:`fold`, decision 1001): the vowel signs,
virama and other marks of the Indic scripts (Devanagari to Sinhala), which it takes
for separators (``खोज`` -> ``ख``, ``ज``), become private-use stand-ins, which it
joins into words; accented Greek letters become their base letter (it folds Latin
accents only); full-width Latin letters and digits become ASCII. One for one, so a
token's offsets in the rewritten text are its offsets in the text as written.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

__all__ = [
    "CJK_CHARS",
    "CJK_RUN",
    "DECOMPOSED_MARKS",
    "FOLDED_CHARS",
    "FOLDS",
    "HALF_WIDTH_KANA",
    "SIGNS",
    "SIGN_PARTS",
    "SYMBOL_LETTERS",
    "VARIATION_SELECTORS",
    "bare",
    "bigrams",
    "cjk_index_text",
    "fold",
    "full_width_kana",
    "index_terms",
    "index_tokens",
    "word_spans",
    "word_tokens",
]

# Han (incl. ext. A and compatibility), Hiragana, Katakana (+ phonetic ext.,
# half-width), Hangul syllables, and the letters of the CJK symbols block, written inside words
# (``様々``, ``〆切``, ``二〇二四年``; Hangzhou numerals, kana repeat marks; decision 1103); its
# punctuation and symbols excluded, and the conjoining Hangul jamo too (decomposed text; a pair of
# jamo is not a syllable: ``fold`` composes them).
SYMBOL_LETTERS = "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
_CJK_LETTERS = (
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff"
    "\uff66-\uff9f\U00020000-\U0002fa1f" + SYMBOL_LETTERS
)


def _code_points(blocks: list[tuple[int, int]], categories: tuple[str, ...]) -> list[int]:
    """The code points of ``blocks`` in ``categories``."""
    return [c for lo, hi in blocks for c in range(lo, hi + 1) if unicodedata.category(chr(c)) in categories]


def _class_body(code_points: Iterable[int]) -> str:
    return "".join(re.escape(chr(c)) for c in code_points)


def _chars_of(blocks: list[tuple[int, int]], categories: tuple[str, ...]) -> str:
    """The characters of ``blocks`` in ``categories``, as a character-class body."""
    return _class_body(_code_points(blocks, categories))


# Thai, Lao, Myanmar, Khmer: their letters and the marks written on them (not digits or punctuation)
_SEA_BLOCKS = [(0x0E00, 0x0E7F), (0x0E80, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF)]
_SEA_CHARS = _chars_of(_SEA_BLOCKS, ("Lo", "Lm", "Mn", "Mc"))
_SEA_MARK = re.compile(f"[{_chars_of(_SEA_BLOCKS, ('Mn', 'Mc'))}]+")
# Every character of the runs segmented here (a character-class body): CJK and the unspaced scripts.
CJK_CHARS = _CJK_LETTERS + _SEA_CHARS
CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # a unicode61 token (approximately)

# Indic scripts (Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam,
# Sinhala) are spaced, and their vowel signs carry meaning (खोज "search", खाज "itch"), so their marks
# are kept, not dropped as 519 drops Thai ones: each becomes a character of the Supplementary
# Private Use Area-B (U+10xxxx for U+0xxxx), which unicode61 joins into words (decision 370) and
# which no text is expected to hold (icon fonts use the BMP's and plane 15's private-use areas).
_INDIC_BLOCKS = [(0x0900, 0x0DFF)]
_MARK_STAND_IN = 0x100000
_INDIC_MARKS = {c: _MARK_STAND_IN + c for c in _code_points(_INDIC_BLOCKS, ("Mn", "Mc"))}
# Precomposed Greek letters with an accent, breathing or iota subscript -> the base letter (the first
# character of their NFD), as unicode61 folds Latin accents (``ά`` -> ``α``; ``ς`` it folds itself).
_GREEK_BLOCKS = [(0x0370, 0x03FF), (0x1F00, 0x1FFF)]
_GREEK_BASES = {
    c: ord(base)
    for c in _code_points(_GREEK_BLOCKS, ("Lu", "Ll", "Lt"))
    if (base := unicodedata.normalize("NFD", chr(c))[0]) != chr(c) and "\u0370" <= base <= "\u03ff"
}
# Full-width letters and digits -> ASCII; full-width punctuation is a separator either way, and is
# left out so that the full-width commas and brackets of every Chinese text cost no rewrite.
_FULL_WIDTH = {c: c - 0xFEE0 for c in [*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B)]}
_FOLDS = {**_INDIC_MARKS, **_GREEK_BASES, **_FULL_WIDTH}
# Vowel signs written as two code points that both have combining class 0 (Bengali ো = ে + া, Tamil
# ொ = ெ + ா, Kannada, Malayalam, Oriya, Sinhala; and Tamil's letter ஔ = ஒ + ௗ), as many keyboards
# type them: each part would get its own stand-in, another token than the composed sign's. Such a
# sequence (its NFD, or its one-level decomposition when that differs: Sinhala ෝ, Kannada ೋ) becomes
# the composed sign's stand-in followed by U+0301 for each further part, one character for one,
# which unicode61 drops inside a word (decision 1012). Built from the block's NFC compositions; a
# sign whose second part is a mark of class > 0 (Telugu ై, Sinhala ේ, a nukta letter) is composed
# on the query side only (``search.text.composed``).


def _two_part_signs(blocks: list[tuple[int, int]]) -> dict[str, str]:
    """Each way of typing such a sign as parts -> what :func:`fold` writes for it."""
    signs: dict[str, str] = {}
    for c in range(blocks[0][0], blocks[-1][1] + 1):
        nfd = unicodedata.normalize("NFD", chr(c))
        if len(nfd) > 1 and not unicodedata.combining(nfd[0]) and not unicodedata.combining(nfd[1]):
            one = "".join(chr(int(h, 16)) for h in unicodedata.decomposition(chr(c)).split())
            for parts in {nfd, one}:
                if unicodedata.normalize("NFC", parts) == chr(c):
                    signs[parts] = chr(_FOLDS.get(c, c)) + "\u0301" * (len(parts) - 1)
    return signs


_SIGNS = _two_part_signs(_INDIC_BLOCKS)
SIGNS: Mapping[str, str] = MappingProxyType(_SIGNS)
_SIGN = re.compile("|".join(re.escape(parts) for parts in sorted(_SIGNS, key=len, reverse=True)))
# Two adjacent code points of such a sequence: where ``composed`` joins a character to the one before
SIGN_PARTS = frozenset(parts[i : i + 2] for parts in _SIGNS for i in range(len(parts) - 1))
FOLDS: Mapping[int, int] = MappingProxyType(_FOLDS)  # code point -> the one it is rewritten to
FOLDED_CHARS = _class_body(sorted(_FOLDS))  # the characters :func:`fold` rewrites (a class body)
# A kana written as its base and the combining voiced or semi-voiced mark (U+3099, U+309A), or a Hangul
# syllable written as its conjoining jamo (leading consonant, vowel, optional final), as macOS writes
# file names and text copied from them: the mark was a separator to unicode61 and split a bigram, and
# the jamo were no syllable, so such a page was found by no query, a composed one or (composed by
# ``search.text.composed``) a decomposed one. Such a sequence becomes its composed letter followed by
# U+0301 for each further code point, one character for one as a two-part Indic sign (decision 1012):
# unicode61 drops the U+0301 inside a word, and :func:`cjk_index_text` before it cuts a run into
# bigrams (decision 1102). A sequence NFC leaves apart (``ア`` + U+3099) stays as written.
DECOMPOSED_MARKS = "\u3099\u309a\u1161-\u1175"  # what such a sequence holds (a class body)
_DECOMPOSED = re.compile("[\u3041-\u30ff][\u3099\u309a]|[\u1100-\u1112][\u1161-\u1175][\u11a8-\u11c2]?")
_FILLER = "\u0301"
_FILLED = re.compile(f"(?<=[{_CJK_LETTERS}]){_FILLER}+")
# A variation selector on a CJK letter (U+FE00-U+FE0F, and the ideographic ones U+E0100-U+E01EF with
# which Japanese names are written: ``葛󠄀飾区``) picks a glyph, not another letter, but unicode61 took it
# for a separator, which cut the word and its run (``葛飾区`` found only ``飾区``). It becomes U+0301
# too, one for one: dropped inside a word and before the bigrams, as a composed letter's (decision 1103).
VARIATION_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"  # a class body
_VARIANT = re.compile(f"(?<=[{_CJK_LETTERS}{_FILLER}])[{VARIATION_SELECTORS}]+")
# Half-width katakana (U+FF66-U+FF9D, the prolonged sound mark U+FF70 among them) are their
# full-width letters (NFKC, one for one), and the half-width voiced marks U+FF9E-U+FF9F the combining
# ones, which the kana rule above then composes (``ｶﾞｲﾄﾞ`` -> ``ガ\u0301イド\u0301``): ``ｶﾀｶﾅ`` and
# ``カタカナ`` were different bigrams, so a page written in one form was found by no query in the other
# (decision 1113).
HALF_WIDTH_KANA = "\uff66-\uff9f"  # a class body
_HALF_KANA = {c: ord(unicodedata.normalize("NFKC", chr(c))) for c in range(0xFF66, 0xFFA0)}
_HALF_KANA_ON = re.compile(f"[{HALF_WIDTH_KANA}]")
_FOLDED = re.compile(f"[{FOLDED_CHARS}{DECOMPOSED_MARKS}{VARIATION_SELECTORS}{HALF_WIDTH_KANA}]")
# a character that either rewrite changes: the one scan a text without any pays
_REWRITTEN = re.compile(f"[{CJK_CHARS}{FOLDED_CHARS}{DECOMPOSED_MARKS}]")


def _composed(m: re.Match[str]) -> str:
    parts = m.group()
    one = unicodedata.normalize("NFC", parts)
    return one + _FILLER * (len(parts) - 1) if len(one) == 1 else parts


def full_width_kana(text: str) -> str:
    """``text`` with its half-width katakana as full-width ones and their voiced marks as the combining
    ones (left apart: :func:`fold` and the query's ``composed`` compose them), one for one (decision 1113)."""
    return text.translate(_HALF_KANA) if _HALF_KANA_ON.search(text) else text


def fold(text: str) -> str:
    """``text`` with the letters unicode61 would misread rewritten, one character for one: Indic
    marks to their private-use stand-ins, accented Greek letters to their base letter, full-width
    letters and digits to ASCII (decision 1001), a two-part vowel sign typed as its parts to the
    composed sign's stand-in and U+0301s (decision 1012), a kana and its voiced mark or a Hangul syllable's
    jamo to the composed letter and U+0301s (decision 1102), a variation selector on a CJK letter to
    U+0301 (decision 1103), half-width katakana to full-width ones (decision 1113). What the index
    holds of those letters, and what a query must be written as
    to meet it (``fts5.quote_phrase``)."""
    if text.isascii() or not _FOLDED.search(text):
        return text
    text = full_width_kana(text)  # before the kana rule, which composes their voiced marks
    if _SIGN.search(text):  # a two-part vowel sign typed as its parts (decision 1012)
        text = _SIGN.sub(lambda m: _SIGNS[m.group()], text)
    if _DECOMPOSED.search(text):  # kana or Hangul written decomposed (decision 1102)
        text = _DECOMPOSED.sub(_composed, text)
    if _VARIANT.search(text):  # a glyph variant of a CJK letter (decision 1103)
        text = _VARIANT.sub(lambda m: _FILLER * len(m.group()), text)
    return text.translate(_FOLDS)


def bare(run: str) -> str:
    """A run's letters: the combining marks of Thai, Lao, Myanmar and Khmer dropped (CJK runs
    have none)."""
    return _SEA_MARK.sub("", run) if not run.isascii() and _SEA_MARK.search(run) else run


def bigrams(run: str) -> list[str]:
    """Overlapping letter pairs of a run (:func:`bare`; the letter itself when there is one, none
    when there is none)."""
    return _pairs(bare(run))


def _pairs(letters: str) -> list[str]:
    if len(letters) <= 1:
        return [letters] if letters else []
    return [letters[i : i + 2] for i in range(len(letters) - 1)]


def _segmented(run: str) -> str:
    letters = bare(run)  # once: bigrams() would bare the letters again, on every run indexed
    return " " + " ".join([*_pairs(letters), letters[-1]]) + " " if letters else " "


def cjk_index_text(text: str) -> str:
    """Text as handed to a space-splitting tokenizer: :func:`fold`-ed, runs replaced by bigrams +
    final letter (the U+0301s after a letter :func:`fold` composed left out: they would cut its run)."""
    if text.isascii() or not _REWRITTEN.search(text):  # isascii: a C scan, no regex (decision 273)
        return text
    text = fold(text)
    if _FILLER in text:
        text = _FILLED.sub("", text)
    return CJK_RUN.sub(lambda m: _segmented(m.group()), text) if CJK_RUN.search(text) else text


_LOCAL = threading.local()


def _unicode61(data: bytes, offsets: bool) -> Any:
    """This thread's FTS5 ``unicode61 remove_diacritics 2`` tokenizer (apsw, in-memory) run on
    ``data``. apsw is imported on first use: a parse worker that derives PostgreSQL's lexemes
    (decision 566) loads it only when a chunk holds non-ASCII text."""
    tokenizer = getattr(_LOCAL, "tokenizer", None)
    if tokenizer is None:
        import apsw  # an extension module whose initialisation imports no submodule of its own

        _LOCAL.connection = apsw.Connection(":memory:")
        tokenizer = _LOCAL.tokenizer = _LOCAL.connection.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
        _LOCAL.document = apsw.FTS5_TOKENIZE_DOCUMENT
    return tokenizer(data, _LOCAL.document, None, include_offsets=offsets, include_colocated=False)


def index_tokens(text: str) -> list[str]:
    """The tokens of ``cjk_index_text(text)`` exactly as the SQLite adapter's FTS5 tokenizer makes
    them (``unicode61 remove_diacritics 2``, run through apsw): lower-cased, Latin diacritics
    folded (``café`` -> ``cafe``), combining marks inside a word dropped, the letters of
    :func:`fold` rewritten. What an adapter without
    FTS5 indexes and queries (PostgreSQL, decision 311), so both engines see the same words."""
    if not text:
        return []
    prepared = cjk_index_text(text)
    if prepared.isascii():  # the common case: unicode61 splits ASCII at every non-alphanumeric
        return [t.lower() for t in _WORD.findall(prepared)]
    tokens: list[str] = _unicode61(prepared.encode("utf-8"), False)
    return tokens


def index_terms(text: str) -> set[str]:
    """The distinct :func:`index_tokens` of ``text``: the terms FTS5's vocabulary counts a row
    under (SQLite's term counts, decision 650). ASCII text is lower-cased once, not per token
    (the same tokens: lower-casing keeps ASCII letters and digits what they were)."""
    if not text:
        return set()
    prepared = cjk_index_text(text)
    if prepared.isascii():
        return set(_WORD.findall(prepared.lower()))
    return set(_unicode61(prepared.encode("utf-8"), False))


def word_tokens(text: str) -> list[str]:
    """unicode61's tokens of ``text`` :func:`fold`-ed, without the CJK rewrite (a CJK run is one
    token): what the index makes of a spaced-script word, so the query side agrees with it on what
    is a word and how it folds. unicode61 joins more than letters and digits into words: marks,
    private-use characters and every character Unicode 6.1 had not assigned (``🤖``, a skin-tone
    modifier) are word characters to it, and a few recent letters are not (decision 370). An
    Indic token holds the private-use stand-ins of its marks: compare it, never show it (the
    text at its :func:`word_spans` is what was written)."""
    if not text:
        return []
    text = fold(text)
    if text.isascii():
        return [t.lower() for t in _WORD.findall(text)]
    tokens: list[str] = _unicode61(text.encode("utf-8"), False)
    return tokens


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` of each of :func:`word_tokens`, ``start``/``end`` in characters of
    ``text`` as written (:func:`fold` keeps every offset)."""
    text = fold(text)
    if text.isascii():
        return [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(text)]
    data = text.encode("utf-8")
    found: list[tuple[int, int, str]] = _unicode61(data, True)
    out: list[tuple[int, int, str]] = []
    chars = 0
    at = 0  # byte offset counted up to ``chars``
    for start, end, token in found:  # offsets grow: decode only the bytes since the last one
        chars += len(data[at:start].decode("utf-8"))
        length = len(data[start:end].decode("utf-8"))
        out.append((chars, chars + length, token))
        chars += length
        at = end
    return out
