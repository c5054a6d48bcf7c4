"""Lexical query building and snippets.

:func:`build_lexical_query` turns arbitrary user text into a structured query
(``index/query.py``) that each storage adapter renders in its own full-text
dialect: each whitespace-separated piece is a :class:`Term` (its internal
order kept: ``Rc::strong_count`` must match as written), and unspaced CJK runs
inside a piece are :class:`CjkRun` leaves that the adapter segments the same
way it segmented the indexed text (``index/cjk.py``). Pieces without a word
as the index's tokenizer sees one (``cjk.word_tokens``: FTS5's unicode61, which
also reads emoji newer than Unicode 6.1 or private-use characters as words) are
dropped, so user text never becomes query syntax. Stop words
(``stopwords.py``) are dropped when any other piece remains, on both the
query and the snippet side, so ``[the]`` is never highlighted for a reason.

Snippets highlight whole tokens as the index's tokenizer sees them, folded as it
folds them (``cafe`` lights up ``café``).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

from ..index.cjk import (
    CJK_CHARS,
    CJK_RUN,
    SIGN_PARTS,
    VARIATION_SELECTORS,
    bigrams,
    full_width_kana,
    word_spans,
    word_tokens,
)
from ..index.query import AllOf, AnyOf, CjkRun, LexicalLeaf, LexicalQuery, Phrase, Term
from ..index.stem import is_stemmable, stem
from .stopwords import (
    EVERY_QUERY,
    asks_in_chinese,
    cjk_phrasing,
    is_stop_word,
    query_language,
    query_stop_words,
    reads_as_question,
)

__all__ = ["ParsedQuery", "build_lexical_query", "composed", "highlight_terms", "make_snippet"]

_CJK = CJK_CHARS
_CJK_RUN = CJK_RUN
_SPLIT = re.compile(rf"([{_CJK}]+)")
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)  # word pieces as unicode61 splits them (approximately)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
# A variation selector on a CJK letter: the index reads the letter alone (``cjk.fold``, decision 1103)
_CJK_VARIANT = re.compile(f"(?<=[{_CJK}])[{VARIATION_SELECTORS}]+")
_VARIANT_AFTER = f"[{VARIATION_SELECTORS}]*+"


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """The searchable leaves of one user query, in order, without repeats
    (empty when nothing is searchable); ``terms`` are the plain strings used
    for snippet highlighting."""

    leaves: tuple[LexicalLeaf, ...]
    terms: tuple[str, ...]
    pairs: tuple[Phrase, ...] = ()
    stop_words: frozenset[str] = EVERY_QUERY  # the query's (stopwords.query_stop_words)

    def strict(self) -> AllOf:
        """Every leaf must match."""
        return AllOf(self.leaves)

    def loose(self, row_budget: int | None = None, keep_at_least: int = 2) -> AnyOf:
        """Any leaf may match (see :class:`AnyOf` for the row budget)."""
        return AnyOf(self.leaves, row_budget, keep_at_least)

    def ranked(self, row_budget: int | None = None, coverage: float = 0.0, by_rarity: bool = False) -> LexicalQuery:
        """What lexical search runs: any leaf may match and BM25 ranks, so every
        query word takes part in scoring (an AND first would put chunks that happen
        to hold every word of a long question above the ones about its topic).
        ``row_budget``, ``coverage`` and ``by_rarity``: the hints of :class:`AnyOf`."""
        if self.is_single_term and not self.pairs:
            return self.leaves[0]
        return AnyOf((*self.leaves, *self.pairs), row_budget, coverage=coverage, by_rarity=by_rarity)

    @property
    def word_count(self) -> int:
        """How many plain (non-CJK) terms the query has."""
        return sum(isinstance(leaf, Term) for leaf in self.leaves)

    def words(self) -> AnyOf | None:
        """The fallback when :meth:`ranked` finds too little: any word of a punctuated
        piece on its own (``title::SHA-512`` -> ``title``, ``SHA``, ``512``), so a
        query whose words exist in the index never returns nothing. ``None`` when
        no piece splits."""
        split = [
            Term(leaf.text[start:end], language=leaf.language)
            for leaf in self.leaves
            if isinstance(leaf, Term)
            for start, end, _ in word_spans(leaf.text)
        ]
        if len(split) <= sum(isinstance(leaf, Term) for leaf in self.leaves):
            return None
        content = [t for t in split if not is_stop_word(t.text, self.stop_words)] or split
        return AnyOf((*dict.fromkeys(content), *(leaf for leaf in self.leaves if not isinstance(leaf, Term))))

    @property
    def is_single_term(self) -> bool:
        """One leaf that cannot match partially: the loose query would add nothing."""
        return len(self.leaves) == 1 and isinstance(self.leaves[0], Term)


def composed(query: str) -> str:
    """``query`` with its decomposed letters composed (NFC), every other character as typed.

    macOS input and text copied from some applications write a letter as its base and a combining
    mark (``カ`` + U+3099 for ``ガ``) or Korean as conjoining jamo (``ᄀ ᅥ ᆷ`` for ``검``), and the
    index holds text as written, nearly always composed: the mark split a CJK bigram and the jamo
    were no syllable, so such a query found a wrong page or nothing (decision 1001). Only a letter
    followed by marks, by a vowel or final jamo, or by the parts of a two-part Indic vowel sign
    (Tamil ``ெ`` + ``ா`` for ``ொ``, ``cjk.SIGN_PARTS``, decision 1012) is composed: NFC also maps
    a lone character to another (a CJK compatibility ideograph, U+F900-U+FAFF, to its unified one; the ohm sign to
    omega), which would then miss the text written with it. Half-width katakana are written full-width
    (decision 1113)."""
    if query.isascii():
        return query
    query = full_width_kana(query)  # ``ｶﾞｲﾄﾞ`` as ``ガイド``, as the index reads it (decision 1113)
    if unicodedata.is_normalized("NFC", query):  # a C scan
        return query
    clusters: list[str] = []
    for ch in query:
        if clusters and (
            unicodedata.combining(ch) or "\u1160" <= ch <= "\u11ff" or clusters[-1][-1] + ch in SIGN_PARTS
        ):
            clusters[-1] += ch
        else:
            clusters.append(ch)
    return "".join(unicodedata.normalize("NFC", c) if len(c) > 1 else c for c in clusters)


def build_lexical_query(query: str) -> ParsedQuery:
    """The structured query for arbitrary user text (:func:`composed` first, a CJK letter's variation
    selector left out)."""
    query = composed(query)
    if not query.isascii():
        query = _CJK_VARIANT.sub("", query)
    found: list[tuple[LexicalLeaf, str, bool]] = []  # leaf, its text, whether it is a stop word
    pieces = [_ELISION.sub("", piece) for piece in _CONTROL.sub(" ", query).split()]
    stop = query_stop_words(pieces)
    language = query_language(pieces)
    asks = asks_in_chinese(query)  # Chinese fillers are phrasing only in a question
    for piece in pieces:
        for part in _SPLIT.split(piece):
            if not part:
                continue
            if _CJK_RUN.fullmatch(part):
                found += [(CjkRun(text), text, phrasing) for text, phrasing in cjk_phrasing(part, asks)]
            elif word_tokens(part):  # a word as the index sees one (decision 370)
                found.append((Term(part, language=language), part, is_stop_word(part, stop)))
    content = [f for f in found if not f[2]] or found
    leaves: dict[object, LexicalLeaf] = {}
    for leaf, _, _ in content:
        leaves.setdefault(_tokens_of(leaf), leaf)
    return ParsedQuery(
        tuple(leaves.values()), tuple(text for _, text, _ in content), _pairs(found, not reads_as_question(query)), stop
    )


# A French or Italian elided article, pronoun or preposition before a word (``l'index``,
# ``d'authentification``, ``qu'est``, ``dell'indice``): written glued to the word, it made the
# piece a two-word phrase (``d authentification``) that a text saying ``l'authentification`` or
# ``authentification`` never matched (decision 516). Only before two letters or more, so an
# identifier such as ``l'1`` or ``s'x'`` stays as written.
_ELISION = re.compile(r"^(?:[cdjlmnst]|qu|dell|dall|nell|sull|all|un|quest)['\u2019](?=[^\W\d_]{2})", re.IGNORECASE)


def _tokens_of(leaf: LexicalLeaf) -> object:
    """What tells two leaves apart: their tokens as the index folds them and the characters
    around and between them, so ``Rust rust`` or ``café Cafe`` are one leaf, as two equal pieces
    always were, while ``fields fields?`` stay two as before (decision 374)."""
    if isinstance(leaf, Term):
        spans = word_spans(leaf.text)
        ends = [0, *(end for _, end, _ in spans)]
        between = tuple(leaf.text[a:start] for a, (start, _, _) in zip(ends, spans, strict=False))
        return (tuple(token for _, _, token in spans), between, leaf.text[ends[-1] :])
    if isinstance(leaf, Phrase):
        return tuple(word_tokens(" ".join(leaf.words)))
    return leaf


_TRIM = "\"'()[]{}<>"  # quotes and brackets around a word
_CLAUSE_END = ".,;:?!"


def _pairs(found: list[tuple[LexicalLeaf, str, bool]], names: bool) -> tuple[Phrase, ...]:
    """Adjacent two-word phrases of the query (proximity boost): two plain words written next
    to each other, not punctuated inside, not across a clause break (``S3 bucket?`` ->
    ``"S3 bucket"``; ``file, bucket`` -> nothing), and neither a stop word, unless ``names`` (the
    query is not a question) and one word of the query is not a stop word: its stop words are then
    part of a name written as words (``search after`` for ``search_after``, ``if let syntax``), and
    the phrase is all that keeps them (decision 1003). In a query that is not a question, two
    content words with one or two stop words between them are a phrase of all of them as well
    (``point in time``, ``search after parameter``; decision 1019)."""
    out: list[Phrase] = []
    alone = names and sum(not stop for _, _, stop in found) == 1
    words = [_plain_word(leaf, text) for leaf, text, _ in found]
    for i, (a, b) in enumerate(pairwise(found)):
        if (a[2] or b[2]) and not alone:
            continue
        wa, wb = words[i], words[i + 1]
        if wa is not None and wb is not None and not _ends_clause(found[i][1]):
            out.append(Phrase((wa, wb)))
    if names and len(found) <= _BRIDGE_QUERY_WORDS:
        out += _bridged(found, words)
    kept: dict[object, Phrase] = {}
    for phrase in out:
        kept.setdefault(_tokens_of(phrase), phrase)
    return tuple(kept.values())


_BRIDGE_STOPS = 2  # stop words a name holds between two content words (``search as you type``)
# a query of more words is a sentence, whose stop words join no name: bridged phrases there cost
# paraphrases their rank (rust-book section nDCG 0.443 -> 0.431 with no limit)
_BRIDGE_QUERY_WORDS = 5


def _plain_word(leaf: LexicalLeaf, text: str) -> str | None:
    """``text`` without its quotes and brackets, when ``leaf`` is a plain word (else None)."""
    if not isinstance(leaf, Term):
        return None
    word = text.strip(_TRIM).rstrip(_CLAUSE_END)
    return word if _WORDS.fullmatch(word) else None


def _ends_clause(text: str) -> bool:
    return text.strip(_TRIM).endswith(tuple(_CLAUSE_END))


def _bridged(found: list[tuple[LexicalLeaf, str, bool]], words: list[str | None]) -> list[Phrase]:
    """The phrases of two content words and the one or two stop words between them."""
    out = []
    for i, (_, _, stop) in enumerate(found):
        if stop or words[i] is None:
            continue
        for j in range(i + 2, min(i + 2 + _BRIDGE_STOPS, len(found) - 1) + 1):
            between = found[i + 1 : j]
            if not all(s for _, _, s in between) or any(words[k] is None for k in range(i + 1, j + 1)):
                break
            if any(_ends_clause(found[k][1]) for k in range(i, j)):
                break
            if not found[j][2]:
                out.append(Phrase(tuple(w for w in words[i : j + 1] if w is not None)))
                break
    return out


# The combining marks (Unicode Mn, Mc, Me; the variation selectors are Mn) of planes 0 and 1 and the
# variation selectors supplement, as ranges of hex code points: Python's ``\w`` holds none of them,
# so a word in decomposed text (``e\u0301le\u0300ve``) or an Indic one (``हिन्दी``) read as several
# tokens. Written out, not scanned at import (131k code points: decision 1012); a test recomputes them
# from ``unicodedata``, so a Python whose Unicode assigns new marks fails it until they are written
# out again (``tests/search/test_text.py``). The Unicode version they were taken from:
_MARKS_UNICODE = "14.0.0"
_BMP_MARK_RANGES = (
    "0300-036F 0483-0489 0591-05BD 05BF 05C1-05C2 05C4-05C5 05C7 0610-061A 064B-065F 0670 06D6-06DC "
    "06DF-06E4 06E7-06E8 06EA-06ED 0711 0730-074A 07A6-07B0 07EB-07F3 07FD 0816-0819 081B-0823 0825-0827 "
    "0829-082D 0859-085B 0898-089F 08CA-08E1 08E3-0903 093A-093C 093E-094F 0951-0957 0962-0963 0981-0983 "
    "09BC 09BE-09C4 09C7-09C8 09CB-09CD 09D7 09E2-09E3 09FE 0A01-0A03 0A3C 0A3E-0A42 0A47-0A48 0A4B-0A4D "
    "0A51 0A70-0A71 0A75 0A81-0A83 0ABC 0ABE-0AC5 0AC7-0AC9 0ACB-0ACD 0AE2-0AE3 0AFA-0AFF 0B01-0B03 0B3C "
    "0B3E-0B44 0B47-0B48 0B4B-0B4D 0B55-0B57 0B62-0B63 0B82 0BBE-0BC2 0BC6-0BC8 0BCA-0BCD 0BD7 0C00-0C04 "
    "0C3C 0C3E-0C44 0C46-0C48 0C4A-0C4D 0C55-0C56 0C62-0C63 0C81-0C83 0CBC 0CBE-0CC4 0CC6-0CC8 0CCA-0CCD "
    "0CD5-0CD6 0CE2-0CE3 0D00-0D03 0D3B-0D3C 0D3E-0D44 0D46-0D48 0D4A-0D4D 0D57 0D62-0D63 0D81-0D83 0DCA "
    "0DCF-0DD4 0DD6 0DD8-0DDF 0DF2-0DF3 0E31 0E34-0E3A 0E47-0E4E 0EB1 0EB4-0EBC 0EC8-0ECD 0F18-0F19 0F35 "
    "0F37 0F39 0F3E-0F3F 0F71-0F84 0F86-0F87 0F8D-0F97 0F99-0FBC 0FC6 102B-103E 1056-1059 105E-1060 "
    "1062-1064 1067-106D 1071-1074 1082-108D 108F 109A-109D 135D-135F 1712-1715 1732-1734 1752-1753 "
    "1772-1773 17B4-17D3 17DD 180B-180D 180F 1885-1886 18A9 1920-192B 1930-193B 1A17-1A1B 1A55-1A5E "
    "1A60-1A7C 1A7F 1AB0-1ACE 1B00-1B04 1B34-1B44 1B6B-1B73 1B80-1B82 1BA1-1BAD 1BE6-1BF3 1C24-1C37 "
    "1CD0-1CD2 1CD4-1CE8 1CED 1CF4 1CF7-1CF9 1DC0-1DFF 20D0-20F0 2CEF-2CF1 2D7F 2DE0-2DFF 302A-302F "
    "3099-309A A66F-A672 A674-A67D A69E-A69F A6F0-A6F1 A802 A806 A80B A823-A827 A82C A880-A881 A8B4-A8C5 "
    "A8E0-A8F1 A8FF A926-A92D A947-A953 A980-A983 A9B3-A9C0 A9E5 AA29-AA36 AA43 AA4C-AA4D AA7B-AA7D AAB0 "
    "AAB2-AAB4 AAB7-AAB8 AABE-AABF AAC1 AAEB-AAEF AAF5-AAF6 ABE3-ABEA ABEC-ABED FB1E FE00-FE0F FE20-FE2F"
)
_OTHER_MARK_RANGES = (
    "101FD 102E0 10376-1037A 10A01-10A03 10A05-10A06 10A0C-10A0F 10A38-10A3A 10A3F 10AE5-10AE6 10D24-10D27 "
    "10EAB-10EAC 10F46-10F50 10F82-10F85 11000-11002 11038-11046 11070 11073-11074 1107F-11082 110B0-110BA "
    "110C2 11100-11102 11127-11134 11145-11146 11173 11180-11182 111B3-111C0 111C9-111CC 111CE-111CF "
    "1122C-11237 1123E 112DF-112EA 11300-11303 1133B-1133C 1133E-11344 11347-11348 1134B-1134D 11357 "
    "11362-11363 11366-1136C 11370-11374 11435-11446 1145E 114B0-114C3 115AF-115B5 115B8-115C0 115DC-115DD "
    "11630-11640 116AB-116B7 1171D-1172B 1182C-1183A 11930-11935 11937-11938 1193B-1193E 11940 11942-11943 "
    "119D1-119D7 119DA-119E0 119E4 11A01-11A0A 11A33-11A39 11A3B-11A3E 11A47 11A51-11A5B 11A8A-11A99 "
    "11C2F-11C36 11C38-11C3F 11C92-11CA7 11CA9-11CB6 11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 "
    "11D8A-11D8E 11D90-11D91 11D93-11D97 11EF3-11EF6 16AF0-16AF4 16B30-16B36 16F4F 16F51-16F87 16F8F-16F92 "
    "16FE4 16FF0-16FF1 1BC9D-1BC9E 1CF00-1CF2D 1CF30-1CF46 1D165-1D169 1D16D-1D172 1D17B-1D182 1D185-1D18B "
    "1D1AA-1D1AD 1D242-1D244 1DA00-1DA36 1DA3B-1DA6C 1DA75 1DA84 1DA9B-1DA9F 1DAA1-1DAAF 1E000-1E006 "
    "1E008-1E018 1E01B-1E021 1E023-1E024 1E026-1E02A 1E130-1E136 1E2AE 1E2EC-1E2EF 1E8D0-1E8D6 1E944-1E94A "
    "E0100-E01EF"
)


def _marks(ranges: str) -> str:
    """``ranges`` (``0300-036F 0483``) as a character-class body."""
    return "".join("-".join(re.escape(chr(int(code, 16))) for code in item.split("-")) for item in ranges.split())


# The plane-0 class is a bitmap to ``re``, a lookup; a class holding other characters is a list of
# ranges it tries one by one (reading the tokens took twice as long with one class for all).
_BMP_MARKS, _OTHER_MARKS = _marks(_BMP_MARK_RANGES), _marks(_OTHER_MARK_RANGES)
_A_MARK = rf"(?:[{_BMP_MARKS}]|(?=[^\x00-\uffff])[{_OTHER_MARKS}])"
# The tokens a snippet window counts: a CJK character, or a run of letters and digits, either with
# the marks written on it, so that no cut falls between a letter and its accent (``e`` + U+0301) or
# a Thai letter and its vowel; a CJK run comes as one match (with its marks), spread by _Tokens.
_SEGMENT = re.compile(rf"([{_CJK}](?:[{_CJK}]++|{_A_MARK}++)*+)|[^\W_]++(?:{_A_MARK}++[^\W_]*+)*+", re.UNICODE)
# Where such a token starts: whether any is left before or after a cut
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_]", re.UNICODE)
_MARK = re.compile(_A_MARK)
# What goes on a character without a space between: a mark or variation selector, an emoji skin
# tone, both sides of a zero-width joiner (``👩‍💻``), and the vowel and final jamo of a Hangul
# syllable written decomposed (letters, not marks, decision 1105). A cut never falls before one.
_JOINED = re.compile(rf"{_A_MARK}|[\u200d\U0001f3fb-\U0001f3ff\u1160-\u11ff\uff9e\uff9f]")
_ZWJ = "\u200d"


def highlight_terms(terms: tuple[str, ...]) -> list[str]:
    """The tokens of the query terms as the index folds them (``word_tokens``; CJK as whole runs
    and their bigrams). A stop word split out of a punctuated term (the ``a`` of
    ``[ValidateSet('a','b')]``) lights up only when nothing else would (decision 371)."""
    out: list[str] = []
    words: list[str] = []
    for term in terms:
        if _CJK_RUN.fullmatch(term):
            out.append(term)
            if len(term) > 2:
                out.extend(bigrams(term))
        else:
            words.extend(word_tokens(term))
    out.extend([w for w in words if not is_stop_word(w)] or words)
    # longest first so a regex alternation prefers whole words/runs
    return sorted(set(out), key=len, reverse=True)


# A character that is neither ASCII, nor a space, nor CJK.
_OTHER = rf"[^\x00-\x7f\s{_CJK}]"
# From one such character to the end of its word: the pattern starts with a single character
# class, which re scans for in C (a pattern starting with a run or a lookbehind is tried at
# every position)
_OTHER_ON = re.compile(rf"{_OTHER}(?:[A-Za-z0-9]|{_OTHER})*+")
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


Span = tuple[int, int]


@lru_cache(maxsize=4096)
def _word_tokens_of(word: str) -> tuple[tuple[int, int, str], ...]:
    return tuple(word_spans(word))


@lru_cache(maxsize=4096)
def _joins(ch: str) -> bool:
    """Whether a non-ASCII character continues a word for the index: unicode61 says so (letters,
    digits, marks, characters newer than Unicode 6.1, ...), and it is not CJK (the index sets
    CJK runs apart, ``cjk.cjk_index_text``)."""
    return not _CJK_RUN.match(ch) and len(word_tokens(f"a{ch}a")) == 1


@dataclass(frozen=True, slots=True)
class _Highlighter:
    """What lights up for one query: its words (as the index folds them), any English word
    sharing the stem of one of them (``edits`` -> ``edit``, ``editing``), as lexical search
    matched them, and its CJK pieces anywhere inside a CJK run."""

    alternation: str  # stems as prefixes, then the ASCII words, longest first
    folded: re.Pattern[str] | None  # the alternation, for lower-cased text (None: not all literals are [a-z0-9])
    cjk: re.Pattern[str] | None  # the CJK pieces, longest first
    exact: frozenset[str]
    stems: frozenset[str]
    prefixes: tuple[str, ...]  # every word sharing a stem starts with one of these
    keys: frozenset[str]  # the query words' keys (_word_keys): every lit ASCII word's is one of them
    # the lit tokens of each word holding another character met so far (other_spans)
    known: dict[str, tuple[Span, ...]] = field(default_factory=dict, compare=False, repr=False)

    def lit(self, token: str) -> bool:
        """Whether a folded (lower-cased) word token matched for a reason."""
        if token in self.exact:
            return True
        if token.isascii() and not token.startswith(self.prefixes):  # the cheap test first
            return False
        # a Russian stem is not always a prefix of its word (``ёлка`` -> ``елк``): no such test there
        return is_stemmable(token) and stem(token) in self.stems

    def ascii_spans(self, flat: str) -> Iterator[Span]:
        """The lit ASCII words of ``flat``, in order: the matches of :attr:`pattern` that are whole
        tokens matched for a reason (:meth:`lit`).

        :attr:`alternation` ignoring case matches ASCII letters and digits, which in Python's
        ``re`` also takes ``İ ı ſ K`` for ``i i s k``. Scanning ``flat.lower()`` with
        :attr:`folded` (its literals are all ``[a-z0-9]``) finds the same matches about five
        times faster, when lower-casing keeps every offset (only ``İ`` grows) and neither ``ı``
        nor ``ſ``, which ``lower()`` leaves alone, is there; otherwise ``flat`` is scanned with
        the alternation ignoring case (decision 390), compiled only then: compiling it costs
        about four times the plain one, most of a new query's highlighter (decision 1097)."""
        lowered = flat.lower()
        if self.folded is not None and len(lowered) == len(flat) and "\u0131" not in flat and "\u017f" not in flat:
            matches = self.folded.finditer(lowered)
        else:
            matches = _ignoring_case(self.alternation).finditer(flat)
        n = len(flat)
        for m in matches:
            a, b = m.span()
            # whole tokens only, as unicode61 sees them: a word must not touch another letter or
            # digit (``i`` never lights up inside ``pointer``); rejecting the longest candidate at
            # a position loses nothing, a shorter one there ends inside the same word
            # (_continues inlined: this runs for every match of a long text)
            before, after = flat[a - 1] if a else " ", flat[b] if b < n else " "
            if before in _ASCII_ALNUM or after in _ASCII_ALNUM:
                continue
            if (not before.isascii() and _joins(before)) or (not after.isascii() and _joins(after)):
                continue
            if b - a == 1 and _contraction_end(flat, a):
                continue
            if self.lit(m.group().lower()):
                yield a, b

    def other_spans(self, flat: str) -> list[Span]:
        """The lit words of ``flat`` that hold another character, found by unicode61 itself (its
        folding: ``cafe`` lights up ``café``; its word characters: ``🤖``), and the CJK pieces
        inside CJK runs; in order.

        The words holding an :data:`_OTHER` character are the longest runs of ASCII letters,
        digits and such characters holding at least one: what the oracle's
        ``(?<![A-Za-z0-9])[A-Za-z0-9]*+OTHER(?:[A-Za-z0-9]|OTHER)*+`` finds, here about three
        times faster on mostly-ASCII text, each found from its first such character on, then
        widened back over the letters and digits before it; and which tokens of a word light up
        is worked out once per query (decision 390)."""
        if flat.isascii():
            return []
        found: list[Span] = []
        known = self.known
        if len(known) > _KNOWN_WORDS:
            known.clear()
        for m in _OTHER_ON.finditer(flat):
            at, end = m.span()
            while at > 0 and flat[at - 1] in _ASCII_ALNUM:
                at -= 1
            word = flat[at:end]
            spans = known.get(word)
            if spans is None:
                spans = known[word] = tuple(
                    (a, b)
                    for a, b, token in _word_tokens_of(word)
                    if self.lit(token) and not (b - a == 1 and _contraction_end(word, a))
                )
            if spans:
                found += [(at + a, at + b) for a, b in spans]
        if self.cjk is not None:
            found += [m.span() for m in self.cjk.finditer(flat)]
        return sorted(found)


_KNOWN_WORDS = 512  # per query (a search meets a few hundred); 256 cached queries stay within ~15 MB
_FOLDED_LITERAL = re.compile(r"[a-z0-9]*")  # what a lower-cased text can match case-sensitively


@lru_cache(maxsize=256)
def _highlighter(words: tuple[str, ...]) -> _Highlighter:
    # plain alternation: cheap to compile (a character class with the CJK ranges inside
    # per-word lookarounds took ~70 ms to compile); boundaries are checked by ascii_spans. Stems
    # first, each as ``stem[a-z]*`` (a Snowball stem ending in ``i`` stands for ``y``: ``happi``
    # -> ``happ[a-z]*``), so a whole inflected word is tried before a shorter literal inside
    # it; then the words themselves, longest first.
    plain = [w for w in words if not _CJK_RUN.fullmatch(w)]
    pieces = [w for w in words if _CJK_RUN.fullmatch(w)]
    stems = {stem(w) for w in plain if is_stemmable(w)}
    prefixes = sorted({s[:-1] if s.endswith("i") else s for s in stems}, key=len, reverse=True)
    ascii_prefixes = [p for p in prefixes if p.isascii()]  # other words are found by other_spans
    parts = [re.escape(p) + "[a-z]*" for p in ascii_prefixes] + [re.escape(w) for w in plain if w.isascii()]
    literals = [*ascii_prefixes, *(w for w in plain if w.isascii())]
    alternation = "|".join(parts) or "(?!)"
    return _Highlighter(
        alternation,
        re.compile(alternation) if all(_FOLDED_LITERAL.fullmatch(w) for w in literals) else None,
        re.compile("|".join(map(_as_written, pieces))) if pieces else None,
        frozenset(plain),
        frozenset(stems),
        tuple(prefixes),
        frozenset(k for w in words for k in _word_keys(w)),
    )


@lru_cache(maxsize=64)
def _ignoring_case(alternation: str) -> re.Pattern[str]:
    return re.compile(alternation, re.IGNORECASE)


def _as_written(piece: str) -> str:
    """A CJK piece of the query as a pattern that also matches its kana and Hangul written decomposed
    (a kana and its voiced mark, a syllable's jamo), its katakana written half-width and its letters
    with a variation selector, as the index reads them (``cjk.fold``, decisions 1102, 1103, 1113), so
    such a page lights its whole letters, never a base without its mark or its selector."""
    out: list[str] = []
    for ch in piece:
        apart = unicodedata.normalize("NFD", ch) if "\u3041" <= ch <= "\u30ff" or "\uac00" <= ch <= "\ud7a3" else ch
        half = _HALF_WIDTH_OF.get(apart) if "\u30a1" <= ch <= "\u30ff" else None
        forms = [re.escape(f) for f in dict.fromkeys((ch, apart, half)) if f]
        out.append((forms[0] if len(forms) == 1 else f"(?:{'|'.join(forms)})") + _VARIANT_AFTER)
    return "".join(out)


# A full-width katakana (decomposed) as written half-width, ``カ`` + U+3099 as ``ｶﾞ``: a page written so
# lights its whole letters for a query written either way (decision 1113)
_HALF_WIDTH_OF = {
    unicodedata.normalize("NFD", base + mark): half + half_mark
    for base, half in ((full_width_kana(chr(c)), chr(c)) for c in range(0xFF66, 0xFF9E))
    for mark, half_mark in (("", ""), ("\u3099", "\uff9e"), ("\u309a", "\uff9f"))
    if mark == "" or len(unicodedata.normalize("NFC", base + mark)) == 1
}


def _continues(ch: str) -> bool:
    return ch.isalnum() if ch.isascii() else _joins(ch)


def _contraction_end(flat: str, at: int) -> bool:
    """Whether the one-letter word at ``at`` ends a contraction or a possessive (``don’t``,
    ``Let’s``, ``it's``): unicode61 splits it off at the apostrophe, so a query's ``T`` or
    `` `s` `` matches it, but to a reader it is no word of its own and it never lights up
    (decision 794)."""
    return at >= 2 and flat[at - 1] in "'\u2019" and flat[at - 2].isalpha()


def make_snippet(text: str, terms: tuple[str, ...], width: int = 16) -> str:
    """A short excerpt where the query's words meet, matches wrapped in ``[``...``]``.

    About ``width`` tokens (a CJK character counts as one); ``...`` marks cuts. Of the
    windows that start a little before one of the first matches, the one holding the most
    different matched words wins, the earliest on a tie (always the first match's window
    showed "carries [two] hashes" where the next line read "When [two] [agents] [change]").
    A query term of several words matched whole (``FST_ERR_PLUGIN_TIMEOUT``, ``Rc::strong_count``)
    counts as one more word. A long text's best place may lie far from its first match (a 21 KB
    table whose first rows share ``FST_ERR``): the whole text's matches are read, and the windows
    at the stretch of ``width`` x 16 characters holding the most different words are tried too,
    winning only with more words (decision 1020; :func:`_best_place`).
    Only whole tokens are highlighted, compared as the index folds them (case and
    accents: ``cafe`` lights up ``Café``): the query's words and the English words
    sharing one's stem (``stem.py``), never stop words. Without any match, the
    first 240 characters of the text (+ ``...``).

    A snippet spans at most ``width`` x 16 characters but for a lit word longer than that: a window
    whose tokens lie further apart (a box-drawing tree, a row of emoji between words) drops its
    outer tokens, and punctuation between the window and the text's start or end is shown whole
    only when it fits too. No cut separates a character from the marks written on it, an emoji
    from its skin tone, or the parts of a ``👩‍💻`` (decision 1002).

    Each lit word is found once (:class:`_LitAscii` scans the text once, only as far as needed)
    and each candidate window counts precomputed word keys; the answer is the one of the oracle
    ``tests/search/snippet_oracle.py``, which re-scans the text for every step (decision 390).
    """
    flat = " ".join(text.split())
    words = _snippet_words(terms)
    if not words:
        return _head(flat)
    light = _highlighter(words)
    others = light.other_spans(flat)
    ascii_lit = _LitAscii(light, flat)
    first = min(filter(None, (ascii_lit.first(), others[0] if others else None)), default=None)
    if first is None:
        return _head(flat)
    budget = max(width, 1) * _CHARS_PER_TOKEN
    wholes = _whole_terms(flat, _term_patterns(terms))
    found = _best_place(flat, first, ascii_lit, others, wholes, width, budget)
    start, end = (0, len(flat)) if found is None else found
    start = _cut_start(flat, start, end, budget)
    end = _cut_end(flat, start, end, budget)
    spans = sorted({*ascii_lit.within(start, end), *(s for s in others if start <= s[0] < end)})
    body: list[str] = []
    at = start
    for a, b in spans:
        if a < at or b > end:  # overlapping an earlier span, or outside the window
            continue
        if light.cjk is not None:  # on over the query's CJK pieces that overlap it (decision 792)
            while b < len(flat) and light.cjk.fullmatch(flat, b - 1, b + 1):
                b += 1
            if b > end:  # past the window's last token: the window ends with the word
                end = _cut_end(flat, start, b, budget)
        body += [flat[at:a], "[", flat[a:b], "]"]
        at = b
    body.append(flat[at:end])
    return ("..." if start > 0 else "") + "".join(body) + ("..." if end < len(flat) else "")


# A query term matched whole: its span and what it counts as in a window (one more word)
Whole = tuple[int, int, str]


def _best_place(
    flat: str, first: Span, ascii_lit: _LitAscii, others: list[Span], wholes: list[Whole], width: int, budget: int
) -> tuple[int, int] | None:
    """Where the snippet runs (:func:`_best_window`): at the first match's anchors, unless the
    windows at the anchors of the whole text's best stretch hold more different words.

    Only the first match's neighbourhood was read (chunks of about 4 KB were assumed; decision
    873 keeps a table whole, so chunks of 20-100 KB exist), so a table whose first rows share
    the query's common parts showed them, never the row that matched. The rest of the text is
    read only when the first best window holds fewer words than any could (:func:`_most_words`);
    the best stretch is found by one pass over the hits (:func:`_best_stretch`), and a second
    region is tokenised only when some hit lies past the first anchors and the stretch holds more
    words than the first best window."""
    near = _anchors(first, ascii_lit.within(first[0], first[0] + _SNIPPET_SPAN_CHARS), others)
    best = _best_window(flat, near, wholes, width, budget)
    if best is None or len(flat) <= _SNIPPET_FAR_CHARS or best[0] >= _most_words(flat, ascii_lit.light, others, wholes):
        return None if best is None else best[1]
    hits = sorted({*ascii_lit.all(), *others})
    if len(hits) == len(near):  # every hit is a first anchor
        return best[1]
    at, words = _best_stretch(flat, hits, wholes, budget)
    if at == first or words <= best[0]:
        return best[1]
    # every hit starting in the stretch is an anchor: its words may lie at its far end
    far = _best_window(flat, [h for h in hits if at[0] <= h[0] < at[0] + budget], wholes, width, budget)
    return far[1] if far is not None and far[0] > best[0] else best[1]


def _anchors(first: Span, later: list[Span], others: list[Span]) -> list[Span]:
    """``first`` and the hits after it within :data:`_SNIPPET_SPAN_CHARS` (``later``, and those of
    ``others`` there), at most :data:`_SNIPPET_MAX_HITS` in all, in order."""
    reach = first[0] + _SNIPPET_SPAN_CHARS
    found = sorted({*later, *(o for o in others if first[0] <= o[0] < reach)})
    return [first, *[h for h in found if h != first][: _SNIPPET_MAX_HITS - 1]]


def _most_words(flat: str, light: _Highlighter, others: list[Span], wholes: list[Whole]) -> int:
    """How many different words a window of ``flat`` could hold at most: the query's (a lit ASCII
    word's key is a query word's, :meth:`_Highlighter.lit`), those of the other lit words (an
    accented one, ``Café``, counts apart from ``cafe``) and the whole terms found. A window
    holding that many is the best there is, and the rest of the text is not read."""
    keys = {*light.keys, *(k for _, _, k in wholes)}
    for a, b in others:
        keys.update(_word_keys(flat[a:b]))
    return len(keys)


def _best_stretch(flat: str, hits: list[Span], wholes: list[Whole], budget: int) -> tuple[Span, int]:
    """The hit starting the stretch of ``budget`` characters whose hits and whole terms (by where
    they start) hold the most different words, the earliest on a tie, and that count: one
    sliding pass, each key counted in and out once (a 21 KB table: ~500 hits)."""
    keys = [_word_keys(flat[a:b]) for a, b in hits]
    counts: dict[str, int] = {}

    def count(ks: tuple[str, ...], by: int) -> None:
        for k in ks:
            n = counts[k] = counts.get(k, 0) + by
            if not n:
                del counts[k]

    best, best_words = hits[0], -1
    left = right = whole_left = whole_right = 0
    for hit in hits:
        start, end = hit[0], hit[0] + budget
        while right < len(hits) and hits[right][0] < end:
            count(keys[right], 1)
            right += 1
        while whole_right < len(wholes) and wholes[whole_right][0] < end:
            count(wholes[whole_right][2:], 1)
            whole_right += 1
        while hits[left][0] < start:
            count(keys[left], -1)
            left += 1
        while whole_left < whole_right and wholes[whole_left][0] < start:
            count(wholes[whole_left][2:], -1)
            whole_left += 1
        if len(counts) > best_words:
            best, best_words = hit, len(counts)
    return best, best_words


def _best_window(
    flat: str, hits: list[Span], wholes: list[Whole], width: int, budget: int
) -> tuple[int, tuple[int, int]] | None:
    """The best window at ``hits`` (anchors, in order) and how many different words it holds:
    of the windows of ``width`` tokens starting a quarter of that before each hit, the one
    holding the most (a hit's keys, :func:`_word_keys`: a CJK hit holds a word per bigram; a
    query term matched whole inside it, one more), the earliest on a tie, as (its first
    character, its end), widened to hold its own hit and narrowed to ``budget`` characters
    (:func:`_within_budget`); ``None`` when there is no token at all."""
    keys = [_word_keys(flat[a:b]) for a, b in hits]  # once per hit, not once per hit and window
    # tokenise only around them (snippets run to ~16 tokens)
    lo_char = max(0, hits[0][0] - _SNIPPET_CONTEXT_CHARS)
    if lo_char:
        space = flat.find(" ", lo_char, hits[0][0])
        lo_char = space + 1 if space >= 0 else hits[0][0]
    hi_char = hits[-1][1] + _SNIPPET_CONTEXT_CHARS
    counted = [
        *zip(hits, keys, strict=True),
        *(((a, b), (k,)) for a, b, k in wholes if lo_char <= a and b <= hi_char),
    ]
    tokens = _Tokens(flat, lo_char, hi_char)
    starts, ends = tokens.starts, tokens.ends

    def window(hit: Span) -> tuple[int, int, int, Span]:
        """(-different words, lo, hi, anchor) of the window around ``hit``: the smallest wins."""
        tokens.read(past=hit[0])
        idx = bisect_right(ends, hit[0])  # the first token ending after it
        if tokens.done:
            idx = min(idx, max(0, len(ends) - 1))
        lo = max(0, idx - width // 4)
        tokens.read(lo + width if width > 0 else None)
        hi = min(len(ends), lo + width)
        lo = max(0, min(lo, hi - width))
        first_char, last_char = (starts[lo], ends[hi - 1]) if ends else (0, -1)
        inside = {k for (a, b), ks in counted if first_char <= a and b <= last_char for k in ks}
        return (-len(inside), lo, hi, hit)

    # A window's lo never falls as its anchor moves on: an earlier window wins every tie, and a
    # later one holds no hit before the first character of the last one tried. Once the hits from
    # there on hold no more different words than the best window, no later window can win.
    best = last = window(hits[0])
    for hit in hits[1:]:
        from_char = starts[last[1]] if ends else 0
        if len({k for (a, _), ks in counted if a >= from_char for k in ks}) <= -best[0]:
            break
        last = window(hit)
        best = min(best, last)
    if not ends:
        return None
    words, lo, hi, anchor = best
    lo, hi = _within_budget(starts, ends, lo, hi, anchor, budget)
    return -words, (min(starts[lo], anchor[0]), max(ends[hi - 1], anchor[1]))


@lru_cache(maxsize=256)
def _term_patterns(terms: tuple[str, ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    """For each query term of several words (``FST_ERR_PLUGIN_TIMEOUT``, ``Rc::strong_count``), a
    pattern of its words as written, in order, with only non-word characters between them
    (lexical search matched such a term as a phrase), and the key it counts as in a window."""
    found: dict[str, re.Pattern[str]] = {}
    for term in terms:
        pieces = [term[a:b] for a, b, _ in word_spans(term)]
        key = "\x00" + "\x00".join(p.lower() for p in pieces)
        if len(pieces) > 1 and not _CJK_RUN.search(term) and key not in found:
            found[key] = re.compile(r"[\W_]+".join(map(re.escape, pieces)), re.IGNORECASE)
    return tuple((pattern, key) for key, pattern in found.items())


def _whole_terms(flat: str, patterns: tuple[tuple[re.Pattern[str], str], ...]) -> list[Whole]:
    """Where each term of ``patterns`` occurs whole in ``flat`` (touching no other letter or
    digit), in order. Searched from each rejected start's next character, as a pattern with
    lookarounds would, but starting with a literal, which ``re`` finds without trying the
    lookarounds at every position."""
    found: list[Whole] = []
    n = len(flat)
    for pattern, key in patterns:
        at = 0
        while (m := pattern.search(flat, at)) is not None:
            a, b = m.span()
            if (a and flat[a - 1].isalnum()) or (b < n and flat[b].isalnum()):
                at = a + 1
            else:
                found.append((a, b, key))
                at = b
    return sorted(found)


def _within_budget(starts: list[int], ends: list[int], lo: int, hi: int, anchor: Span, budget: int) -> tuple[int, int]:
    """The tokens ``lo:hi`` less the outer ones, the one farther from ``anchor`` first, until they
    and the anchor span at most ``budget`` characters or one token is left: sixteen tokens of
    text read as ~100 characters, but symbols between them (a ``tree`` listing's lines, emoji,
    ``═══``) are no token, and the window ran over all of them."""
    while hi - lo > 1:
        first, last = min(starts[lo], anchor[0]), max(ends[hi - 1], anchor[1])
        if last - first <= budget:
            break
        if last - anchor[1] >= anchor[0] - first:
            hi -= 1
        else:
            lo += 1
    return lo, hi


# Unicode's stream-safe limit on a run of marks (UAX #15): a cut moves at most this far to keep a
# character whole, so 20,000 marks after a letter (or a chain of 5,000 joined emoji) cannot carry a
# snippet past its length bound (decision 1013).
_MOST_JOINED = 30


def _cut_start(flat: str, start: int, end: int, budget: int) -> int:
    """Where a snippet of ``flat[start:end]`` begins: at the text's start when only punctuation lies
    before and the whole still fits the budget (no ``...`` for a cut of no word, decision 371);
    else at ``start``, moved back onto the character that a mark or a joiner there belongs to."""
    if _TOKEN.search(flat, 0, start) is None and end <= budget:
        return 0
    stop = max(0, start - _MOST_JOINED)
    while start > stop and (_JOINED.match(flat, start) or flat[start - 1] == _ZWJ):
        start -= 1
    return start


def _cut_end(flat: str, start: int, end: int, budget: int) -> int:
    """Where a snippet of ``flat[start:end]`` ends: :func:`_cut_start`'s rule at the other end."""
    if _TOKEN.search(flat, end) is None and len(flat) - start <= budget:
        return len(flat)
    return _past_joined(flat, end)


def _past_joined(flat: str, end: int) -> int:
    """``end`` moved on past the marks, skin tones and joined characters that go with the one before
    (at most :data:`_MOST_JOINED` of them)."""
    stop = min(len(flat), end + _MOST_JOINED)
    while end < stop and (_JOINED.match(flat, end) or flat[end - 1] == _ZWJ):
        end += 1
    return end


@lru_cache(maxsize=256)
def _snippet_words(terms: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`highlight_terms` once per query, not once per result."""
    return tuple(highlight_terms(terms))


class _Tokens:
    """The tokens of ``flat[lo:hi]`` (a CJK character is one, a word or character takes the marks
    after it), read only as far as a window needs: the first of the lists of every token's
    ``starts`` and ``ends``.

    They are read by :data:`_SEGMENT`, where a run of CJK characters comes as one match, spread
    here into its characters (each with the marks after it): a CJK text has a token per
    character, and this reads many times fewer matches there."""

    __slots__ = ("_scan", "done", "ends", "starts")

    def __init__(self, flat: str, lo: int, hi: int) -> None:
        self._scan = _SEGMENT.finditer(flat, lo, hi)
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.done = False  # whether every token has been read

    def read(self, count: int | None = None, past: int | None = None) -> None:
        """Read until ``count`` tokens are known, or until one ends after ``past``, or (neither
        given) every token; or until there are no more."""
        starts, ends = self.starts, self.ends
        while not self.done:
            if (count is not None and len(ends) >= count) or (past is not None and ends and ends[-1] > past):
                return
            m = next(self._scan, None)
            if m is None:
                self.done = True
            elif m.lastindex:  # a CJK run
                a, b = m.span()
                if _MARK.search(m.string, a + 1, b) is None:
                    starts.extend(range(a, b))
                    ends.extend(range(a + 1, b + 1))
                else:  # a mark goes with the character before it (Thai vowels and tones)
                    run = [a, *(i for i in range(a + 1, b) if not _MARK.match(m.string, i))]
                    starts.extend(run)
                    ends.extend([*run[1:], b])
            else:
                a, b = m.span()
                starts.append(a)
                ends.append(b)


class _LitAscii:
    """The lit ASCII words of one text (:meth:`_Highlighter.ascii_spans`), found by one scan of
    the whole text that runs only as far as asked.

    Why one scan gives what a scan of ``flat[start:end]`` gave: the pattern matches only ASCII
    letters and digits and the four other characters that equal one of them ignoring case
    (``İ ı ſ K``), all of which continue a word (``_continues``), so a match is whole only when
    it is a whole run of such characters, and it is then the first match of a scan that reaches
    the run at its start. A scan from ``start`` (never inside a run: a run start or after a
    space or punctuation) to ``end`` meets every run inside ``[start, end)`` at its start and
    only cuts a run at ``end``, where nothing it matches is whole. So its lit words are this
    scan's that lie inside ``[start, end)``; the oracle test checks it (decision 390)."""

    __slots__ = ("_found", "_scan", "light", "spans")

    def __init__(self, light: _Highlighter, flat: str) -> None:
        self.light = light
        self.spans: list[Span] = []  # found so far, in order, not overlapping
        self._scan = light.ascii_spans(flat)
        self._found = True  # whether the scan may hold more

    def first(self) -> Span | None:
        if not self.spans:
            self._more()
        return self.spans[0] if self.spans else None

    def within(self, start: int, end: int) -> list[Span]:
        """The lit words inside ``flat[start:end]``."""
        while self._found and (not self.spans or self.spans[-1][1] <= end):
            self._more()
        return [s for s in self.spans if start <= s[0] and s[1] <= end]

    def all(self) -> list[Span]:
        """Every lit word of the text."""
        while self._found:
            self._more()
        return self.spans

    def _more(self) -> None:
        found = next(self._scan, None)
        if found is None:
            self._found = False
        else:
            self.spans.append(found)


_SNIPPET_CONTEXT_CHARS = 300
_SNIPPET_SPAN_CHARS = 600  # how far after the first match other anchors are tried
_SNIPPET_MAX_HITS = 16
# A text longer than this is read whole for its best stretch (decision 1020): a table or code block
# kept whole (873). A chunk of the usual size (maxChunkBytes 4096) keeps its first match's
# neighbourhood: reading it whole cost every search ~3 ms of its 50k-chunk p95 for a better snippet
# in 4 % of results (decision 1035).
_SNIPPET_FAR_CHARS = 4096
# A snippet's characters per token of its width: 256 for 16 tokens (the longest of the 1,191 snippets
# of the labelled sets' top-10 lexical hits ran to 236)
_CHARS_PER_TOKEN = 16
_HEAD_CHARS = 240


@lru_cache(maxsize=4096)
def _word_keys(word: str) -> tuple[str, ...]:
    """The query words a hit stands for, each counted once in a window: ``edit`` and ``editing``
    are one word; a CJK stretch is the bigrams it holds, as the index searches it, so the window
    holding ``東京都`` (two) beats an earlier one holding ``京都`` of ``京都大学`` (one) where each
    counted one and the earlier won."""
    if _CJK_RUN.fullmatch(word):
        return tuple(bigrams(word))
    token = word.lower()
    return (stem(token) if is_stemmable(token) else token,)


def _head(flat: str) -> str:
    end = _past_joined(flat, _HEAD_CHARS)
    return flat[:end] + ("..." if end < len(flat) else "")
