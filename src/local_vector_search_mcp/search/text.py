"""Lexical query building and snippets.

:func:`build_lexical_query` turns arbitrary user text into a structured query
(``index/query.py``) that each storage adapter renders in its own full-text
dialect: each whitespace-separated piece is a :class:`Term` (its internal
order kept: ``Rc::strong_count`` must match as written), and unspaced CJK runs
inside a piece are :class:`CjkRun` leaves that the adapter segments the same
way it segmented the indexed text (``index/cjk.py``). Pieces without a letter
or digit are dropped, so user text never becomes query syntax. Stop words
(``stopwords.py``) are dropped when any other piece remains, on both the
query and the snippet side, so ``[the]`` is never highlighted for a reason.

Snippets highlight whole tokens as a unicode61-like tokenizer sees them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from ..index.cjk import CJK_CHARS, CJK_RUN, bigrams
from ..index.query import AllOf, AnyOf, CjkRun, LexicalLeaf, LexicalQuery, Phrase, Term
from ..index.stem import is_stemmable, stem
from .stopwords import is_stop_word

__all__ = ["ParsedQuery", "build_lexical_query", "highlight_terms", "make_snippet"]

_CJK = CJK_CHARS
_CJK_RUN = CJK_RUN
_WORDISH = re.compile(r"[^\W_]", re.UNICODE)  # a letter or digit
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
        split = [Term(w) for leaf in self.leaves if isinstance(leaf, Term) for w in _WORDS.findall(leaf.text)]
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
            elif _WORDISH.search(part):
                found.append((Term(part), part, is_stop_word(part)))
    content = [f for f in found if not f[2]] or found
    return ParsedQuery(
        tuple(dict.fromkeys(leaf for leaf, _, _ in content)),
        tuple(text for _, text, _ in content),
        _pairs(found),
    )


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
    return tuple(dict.fromkeys(out))


_TOKEN = re.compile(rf"[{_CJK}]|[^\W_]+", re.UNICODE)


def highlight_terms(terms: tuple[str, ...]) -> list[str]:
    """Lower-cased word tokens of the query terms (CJK as whole runs)."""
    out: list[str] = []
    for term in terms:
        if _CJK_RUN.fullmatch(term):
            out.append(term)
            if len(term) > 2:
                out.extend(bigrams(term))
        else:
            out.extend(t.lower() for t in re.findall(r"[^\W_]+", term))
    # longest first so a regex alternation prefers whole words/runs
    return sorted(set(out), key=len, reverse=True)


# A letter or digit that is not CJK: what makes a Latin/Cyrillic/... word go on.
_WORD_CHAR = re.compile(rf"(?![{_CJK}])[^\W_]")


@dataclass(frozen=True, slots=True)
class _Highlighter:
    """What lights up for one query: its words exactly, and any English word sharing the stem
    of one of them (``edits`` -> ``edit``, ``editing``), as lexical search matched them."""

    pattern: re.Pattern[str]
    exact: frozenset[str]
    stems: frozenset[str]

    def hit(self, m: re.Match[str]) -> bool:
        """Whether ``m`` is a whole token matched for a reason."""
        if not _whole(m):
            return False
        token = m.group().lower()
        if token in self.exact or _CJK_RUN.match(token):
            return True
        return is_stemmable(token) and stem(token) in self.stems


@lru_cache(maxsize=256)
def _highlighter(words: tuple[str, ...]) -> _Highlighter:
    # plain alternation: cheap to compile (a character class with the CJK ranges inside
    # per-word lookarounds took ~70 ms to compile); boundaries are checked by _whole. Stems
    # first, each as ``stem[a-z]*`` (a Snowball stem ending in ``i`` stands for ``y``: ``happi``
    # -> ``happ[a-z]*``), so a whole inflected word is tried before a shorter literal inside
    # it; then the words themselves, longest first.
    stems = {stem(w) for w in words if is_stemmable(w)}
    prefixes = sorted({s[:-1] if s.endswith("i") else s for s in stems}, key=len, reverse=True)
    parts = [re.escape(p) + "[a-z]*" for p in prefixes] + [re.escape(w) for w in words]
    return _Highlighter(re.compile("|".join(parts), re.IGNORECASE), frozenset(words), frozenset(stems))


def _whole(m: re.Match[str]) -> bool:
    """Whole tokens only, as unicode61 sees them: a spaced-script word must not
    touch another letter or digit (``i`` never lights up inside ``pointer``);
    CJK pieces match anywhere inside a CJK run (they have no word boundaries).
    Rejecting the longest candidate at a position loses nothing: a shorter
    one there ends inside the same word."""
    if _CJK_RUN.match(m.group()):
        return True
    text, start, end = m.string, m.start(), m.end()
    touches_before = start > 0 and _WORD_CHAR.match(text, start - 1) is not None
    touches_after = end < len(text) and _WORD_CHAR.match(text, end) is not None
    return not (touches_before or touches_after)


def make_snippet(text: str, terms: tuple[str, ...], width: int = 16) -> str:
    """A short excerpt around the first match, matches wrapped in ``[``...``]``.

    About ``width`` tokens (a CJK character counts as one); ``...`` marks cuts.
    Only whole tokens are highlighted: the query's words and the English words
    sharing one's stem (``stem.py``), never stop words. Without any match, the first 240
    characters of the text (+ ``...``).
    """
    flat = " ".join(text.split())
    words = highlight_terms(terms)
    if not words:
        return _head(flat)
    light = _highlighter(tuple(words))
    pattern = light.pattern
    first = next((m for m in pattern.finditer(flat) if light.hit(m)), None)
    if first is None:
        return _head(flat)
    # tokenise only a window around the first match (chunks run to 4 KB; snippets to ~16 tokens)
    lo_char = max(0, first.start() - _SNIPPET_CONTEXT_CHARS)
    if lo_char:
        space = flat.find(" ", lo_char, first.start())
        lo_char = space + 1 if space >= 0 else first.start()
    tokens = list(_TOKEN.finditer(flat, lo_char, first.end() + 3 * _SNIPPET_CONTEXT_CHARS))
    idx = next((i for i, t in enumerate(tokens) if t.end() > first.start()), 0)
    lo = max(0, idx - width // 4)
    hi = min(len(tokens), lo + width)
    lo = max(0, min(lo, hi - width))
    start = tokens[lo].start() if tokens else 0
    end = tokens[hi - 1].end() if tokens else len(flat)
    body = pattern.sub(lambda m: f"[{m.group()}]" if light.hit(m) else m.group(), flat[start:end])
    return ("..." if start > 0 else "") + body + ("..." if end < len(flat) else "")


_SNIPPET_CONTEXT_CHARS = 300


def _head(flat: str) -> str:
    return flat if len(flat) <= 240 else flat[:240] + "..."
