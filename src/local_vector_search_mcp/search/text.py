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
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from ..index.cjk import CJK_CHARS, CJK_RUN, bigrams, word_spans, word_tokens
from ..index.query import AllOf, AnyOf, CjkRun, LexicalLeaf, LexicalQuery, Phrase, Term
from ..index.stem import is_stemmable, stem
from .stopwords import is_stop_word

__all__ = ["ParsedQuery", "build_lexical_query", "highlight_terms", "make_snippet"]

_CJK = CJK_CHARS
_CJK_RUN = CJK_RUN
_SPLIT = re.compile(rf"([{_CJK}]+)")
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)  # word pieces as unicode61 splits them (approximately)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """The searchable leaves of one user query, in order, without repeats
    (empty when nothing is searchable); ``terms`` are the plain strings used
    for snippet highlighting."""

    leaves: tuple[LexicalLeaf, ...]
    terms: tuple[str, ...]
    pairs: tuple[Phrase, ...] = ()

    def strict(self) -> AllOf:
        """Every leaf must match."""
        return AllOf(self.leaves)

    def loose(self, row_budget: int | None = None, keep_at_least: int = 2) -> AnyOf:
        """Any leaf may match (see :class:`AnyOf` for the row budget)."""
        return AnyOf(self.leaves, row_budget, keep_at_least)

    def ranked(self, row_budget: int | None = None, coverage: float = 0.0) -> LexicalQuery:
        """What lexical search runs: any leaf may match and BM25 ranks, so every
        query word takes part in scoring (an AND first would put chunks that happen
        to hold every word of a long question above the ones about its topic).
        ``row_budget`` and ``coverage``: the hints of :class:`AnyOf`."""
        if self.is_single_term:
            return self.leaves[0]
        return AnyOf((*self.leaves, *self.pairs), row_budget, coverage=coverage)

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
            Term(leaf.text[start:end])
            for leaf in self.leaves
            if isinstance(leaf, Term)
            for start, end, _ in word_spans(leaf.text)
        ]
        if len(split) <= sum(isinstance(leaf, Term) for leaf in self.leaves):
            return None
        content = [t for t in split if not is_stop_word(t.text)] or split
        return AnyOf((*dict.fromkeys(content), *(leaf for leaf in self.leaves if not isinstance(leaf, Term))))

    @property
    def is_single_term(self) -> bool:
        """One leaf that cannot match partially: the loose query would add nothing."""
        return len(self.leaves) == 1 and isinstance(self.leaves[0], Term)


def build_lexical_query(query: str) -> ParsedQuery:
    """The structured query for arbitrary user text."""
    found: list[tuple[LexicalLeaf, str, bool]] = []  # leaf, its text, whether it is a stop word
    for piece in _CONTROL.sub(" ", query).split():
        for part in _SPLIT.split(piece):
            if not part:
                continue
            if _CJK_RUN.fullmatch(part):
                found.append((CjkRun(part), part, False))
            elif word_tokens(part):  # a word as the index sees one (decision 370)
                found.append((Term(part), part, is_stop_word(part)))
    content = [f for f in found if not f[2]] or found
    leaves: dict[object, LexicalLeaf] = {}
    for leaf, _, _ in content:
        leaves.setdefault(_tokens_of(leaf), leaf)
    return ParsedQuery(tuple(leaves.values()), tuple(text for _, text, _ in content), _pairs(found))


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


def _pairs(found: list[tuple[LexicalLeaf, str, bool]]) -> tuple[Phrase, ...]:
    """Adjacent two-word phrases of the query (proximity boost): two plain words written next
    to each other, neither a stop word nor punctuated inside, not across a clause break
    (``S3 bucket?`` -> ``"S3 bucket"``; ``file, bucket`` -> nothing)."""
    out: list[Phrase] = []
    for (a, ta, stop_a), (b, tb, stop_b) in pairwise(found):
        if not isinstance(a, Term) or not isinstance(b, Term) or stop_a or stop_b:
            continue
        wa, wb = ta.strip(_TRIM), tb.strip(_TRIM).rstrip(_CLAUSE_END)
        if _WORDS.fullmatch(wa) and _WORDS.fullmatch(wb):
            out.append(Phrase((wa, wb)))
    kept: dict[object, Phrase] = {}
    for phrase in out:
        kept.setdefault(_tokens_of(phrase), phrase)
    return tuple(kept.values())


_TOKEN = re.compile(rf"[{_CJK}]|[^\W_]+", re.UNICODE)


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


# A character that is neither ASCII, nor a space, nor CJK; and a word holding one, from its start
# (the lookbehind and the possessive run keep the scan linear over long ASCII words).
_OTHER = rf"[^\x00-\x7f\s{_CJK}]"
_MIXED_WORD = re.compile(rf"(?<![A-Za-z0-9])[A-Za-z0-9]*+{_OTHER}(?:[A-Za-z0-9]|{_OTHER})*+")

Span = tuple[int, int]


@lru_cache(maxsize=4096)
def _joins(ch: str) -> bool:
    """Whether a non-ASCII character continues a word for the index: unicode61 says so (letters,
    digits, marks, characters newer than Unicode 6.1, ...), and it is not CJK (the index sets
    CJK runs apart, ``cjk.cjk_index_text``)."""
    return not _CJK_RUN.match(ch) and len(word_tokens(f"a{ch}a")) == 1


@lru_cache(maxsize=4096)
def _word_tokens_of(run: str) -> tuple[tuple[int, int, str], ...]:
    return tuple(word_spans(run))


@dataclass(frozen=True, slots=True)
class _Highlighter:
    """What lights up for one query: its words (as the index folds them), any English word
    sharing the stem of one of them (``edits`` -> ``edit``, ``editing``), as lexical search
    matched them, and its CJK pieces anywhere inside a CJK run."""

    pattern: re.Pattern[str]  # stems as prefixes, then the ASCII words, longest first
    cjk: re.Pattern[str] | None  # the CJK pieces, longest first
    exact: frozenset[str]
    stems: frozenset[str]
    prefixes: tuple[str, ...]  # every word sharing a stem starts with one of these

    def lit(self, token: str) -> bool:
        """Whether a folded (lower-cased) word token matched for a reason."""
        if token in self.exact:
            return True
        return token.startswith(self.prefixes) and is_stemmable(token) and stem(token) in self.stems

    def hit(self, m: re.Match[str]) -> bool:
        """Whether ``m`` (of :attr:`pattern`) is a whole ASCII token matched for a reason."""
        return _whole(m) and self.lit(m.group().lower())

    def ascii_spans(self, flat: str, start: int = 0, end: int | None = None) -> Iterator[Span]:
        """The lit ASCII words of ``flat[start:end]``, in order."""
        matches = self.pattern.finditer(flat, start, len(flat) if end is None else end)
        return (m.span() for m in matches if self.hit(m))

    def other_spans(self, flat: str) -> list[Span]:
        """The lit words of ``flat`` that hold another character, found by unicode61 itself (its
        folding: ``cafe`` lights up ``café``; its word characters: ``🤖``), and the CJK pieces
        inside CJK runs; in order."""
        if flat.isascii():
            return []
        found: list[Span] = []
        for m in _MIXED_WORD.finditer(flat):
            at = m.start()
            found += [(at + a, at + b) for a, b, token in _word_tokens_of(m.group()) if self.lit(token)]
        if self.cjk is not None:
            found += [m.span() for m in self.cjk.finditer(flat)]
        return sorted(found)


@lru_cache(maxsize=256)
def _highlighter(words: tuple[str, ...]) -> _Highlighter:
    # plain alternation: cheap to compile (a character class with the CJK ranges inside
    # per-word lookarounds took ~70 ms to compile); boundaries are checked by _whole. Stems
    # first, each as ``stem[a-z]*`` (a Snowball stem ending in ``i`` stands for ``y``: ``happi``
    # -> ``happ[a-z]*``), so a whole inflected word is tried before a shorter literal inside
    # it; then the words themselves, longest first.
    plain = [w for w in words if not _CJK_RUN.fullmatch(w)]
    pieces = [w for w in words if _CJK_RUN.fullmatch(w)]
    stems = {stem(w) for w in plain if is_stemmable(w)}
    prefixes = sorted({s[:-1] if s.endswith("i") else s for s in stems}, key=len, reverse=True)
    parts = [re.escape(p) + "[a-z]*" for p in prefixes] + [re.escape(w) for w in plain if w.isascii()]
    return _Highlighter(
        re.compile("|".join(parts) or "(?!)", re.IGNORECASE),
        re.compile("|".join(map(re.escape, pieces))) if pieces else None,
        frozenset(plain),
        frozenset(stems),
        tuple(prefixes),
    )


def _whole(m: re.Match[str]) -> bool:
    """Whole tokens only, as unicode61 sees them: a spaced-script word must not
    touch another letter or digit (``i`` never lights up inside ``pointer``);
    CJK pieces match anywhere inside a CJK run (they have no word boundaries).
    Rejecting the longest candidate at a position loses nothing: a shorter
    one there ends inside the same word."""
    if _CJK_RUN.match(m.group()):
        return True
    text, start, end = m.string, m.start(), m.end()
    return not ((start > 0 and _continues(text[start - 1])) or (end < len(text) and _continues(text[end])))


def _continues(ch: str) -> bool:
    return ch.isalnum() if ch.isascii() else _joins(ch)


def make_snippet(text: str, terms: tuple[str, ...], width: int = 16) -> str:
    """A short excerpt where the query's words meet, matches wrapped in ``[``...``]``.

    About ``width`` tokens (a CJK character counts as one); ``...`` marks cuts. Of the
    windows that start a little before one of the first matches, the one holding the most
    different matched words wins, the earliest on a tie (always the first match's window
    showed "carries [two] hashes" where the next line read "When [two] [agents] [change]").
    Only whole tokens are highlighted, compared as the index folds them (case and
    accents: ``cafe`` lights up ``Café``): the query's words and the English words
    sharing one's stem (``stem.py``), never stop words. Without any match, the
    first 240 characters of the text (+ ``...``).
    """
    flat = " ".join(text.split())
    words = highlight_terms(terms)
    if not words:
        return _head(flat)
    light = _highlighter(tuple(words))
    others = light.other_spans(flat)
    first = min(filter(None, (next(light.ascii_spans(flat), None), others[0] if others else None)), default=None)
    if first is None:
        return _head(flat)
    # the candidate anchors: the matches a few lines on from the first (a whole 4 KB chunk's scan
    # costs ~0.6 ms; the first match alone was the old rule)
    reach = first[0] + _SNIPPET_SPAN_CHARS
    later = sorted({*light.ascii_spans(flat, first[0], reach), *(o for o in others if first[0] <= o[0] < reach)})
    hits = [first, *[h for h in later if h != first][: _SNIPPET_MAX_HITS - 1]]
    # tokenise only around them (chunks run to 4 KB; snippets to ~16 tokens)
    lo_char = max(0, first[0] - _SNIPPET_CONTEXT_CHARS)
    if lo_char:
        space = flat.find(" ", lo_char, first[0])
        lo_char = space + 1 if space >= 0 else first[0]
    tokens = list(_TOKEN.finditer(flat, lo_char, hits[-1][1] + _SNIPPET_CONTEXT_CHARS))
    ends = [t.end() for t in tokens]

    def window(hit: Span) -> tuple[int, int, int, Span]:
        """(-different words, lo, hi, anchor) of the window around ``hit``: the smallest wins."""
        idx = min(bisect_right(ends, hit[0]), max(0, len(tokens) - 1))  # the first token ending after it
        lo = max(0, idx - width // 4)
        hi = min(len(tokens), lo + width)
        lo = max(0, min(lo, hi - width))
        first_char, last_char = (tokens[lo].start(), tokens[hi - 1].end()) if tokens else (0, len(flat))
        inside = {_word_key(flat[a:b]) for a, b in hits if first_char <= a and b <= last_char}
        return (-len(inside), lo, hi, hit)

    _, lo, hi, anchor = min(map(window, hits))
    start = min(tokens[lo].start(), anchor[0]) if tokens else 0
    end = max(tokens[hi - 1].end(), anchor[1]) if tokens else len(flat)
    if _TOKEN.search(flat, 0, start) is None:  # only punctuation cut off: no cut (no "...")
        start = 0
    if _TOKEN.search(flat, end) is None:
        end = len(flat)
    spans = sorted({*light.ascii_spans(flat, start, end), *(s for s in others if start <= s[0] < end)})
    body: list[str] = []
    at = start
    for a, b in spans:
        if a < at or b > end:  # overlapping an earlier span, or outside the window
            continue
        body += [flat[at:a], "[", flat[a:b], "]"]
        at = b
    body.append(flat[at:end])
    return ("..." if start > 0 else "") + "".join(body) + ("..." if end < len(flat) else "")


_SNIPPET_CONTEXT_CHARS = 300
_SNIPPET_SPAN_CHARS = 600  # how far after the first match other anchors are tried
_SNIPPET_MAX_HITS = 16


def _word_key(word: str) -> str:
    """Matches of one query word count once in a window: ``edit`` and ``editing`` are one word."""
    token = word.lower()
    return stem(token) if is_stemmable(token) else token


def _head(flat: str) -> str:
    return flat if len(flat) <= 240 else flat[:240] + "..."
