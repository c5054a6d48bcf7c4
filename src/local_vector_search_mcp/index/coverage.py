"""Coverage: how many of a question's words a candidate chunk holds (decision 220).

A long OR query ranks by summed BM25, so a chunk holding one rare word of a
question (``exists`` in the heading ``Index Exists API``) can outrank the
section holding most of the words the question is about. For questions, a
store may rescore its best candidates as ``bm25 * coverage ** exponent``
(:class:`~.query.AnyOf` ``coverage``), where coverage is the share of the
query's words the chunk holds, each exactly or by English stem (``stem.py``),
heading path included. BM25 keeps deciding between chunks that cover as much.

A task described in other words than the documentation's (``get rid of old
logs without a cron job``) holds common words beside the few that name its
topic; there a chunk holding ``old``, ``logs`` and ``job`` would cover more
than the one holding ``cron``. So a query may ask for the share by rarity
(``AnyOf.by_rarity``, decision 1070): each word then counts by its idf in the
index, ``ln(1 + N / (1 + n))`` for a word ``n`` of the ``N`` chunks hold.

Matching is textual, over the chunk text the store already holds: a word's
stem (or the word, when it is not stemmable) is first looked for as a plain
substring of the lower-cased text (most misses end there), then confirmed on
a whole token whose exact form or stem is the word's. Words are the index's
folded tokens (``cjk.word_tokens``), and a text holding accented Latin letters
is compared by its folded tokens too, so ``creme`` counts ``Crème`` as FTS5
matched it (decision 372), as is one holding a letter ``cjk.fold`` rewrites (decision 1001).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from .cjk import FOLDED_CHARS, FOLDS, word_tokens
from .query import AnyOf, LexicalQuery, Term
from .stem import is_stemmable, stem

__all__ = [
    "COVERAGE_DEPTH",
    "CoverageWords",
    "Frequencies",
    "coverage",
    "coverage_words",
    "rarity_weights",
    "rerank",
    "rescore",
    "wants_coverage",
]

COVERAGE_DEPTH = 100  # the best rows a coverage query rescores (decision 220)
R = TypeVar("R")

# Latin letters with a diacritic, combining marks and the letters cjk.fold rewrites (decision 1001): a
# text holding one is compared by its folded tokens
_ACCENTED = re.compile(f"[\u00c0-\u024f\u1e00-\u1eff\u0300-\u036f{FOLDED_CHARS}]")
_ACCENTED_CODES = (*range(0xC0, 0x250), *range(0x1E00, 0x1F00), *range(0x300, 0x370), *FOLDS)
# 1 at the first UTF-8 byte of each of them: a text whose bytes hold none of those bytes holds none
# of those characters, which one C pass over the bytes tells (7 us for a 2 KB chunk; the class
# scanned over its characters takes 17)
_LEAD_BYTES = frozenset(chr(c).encode()[0] for c in _ACCENTED_CODES)
_ACCENT_LEADS = bytes(int(i in _LEAD_BYTES) for i in range(256))  # a bytes.translate table
# the characters whose lower case holds an ASCII letter (İ -> i + U+0307, the Kelvin sign -> k)
_LOWERS_TO_ASCII = ("\u0130", "\u212a")


@dataclass(frozen=True, slots=True)
class _Word:
    token: str  # lower-cased
    stem: str  # its stem, or the token when it is not stemmable
    pattern: re.Pattern[str]  # the stem's stable prefix and the rest of its token (a literal first: fast)
    # whether a text may hold the token without its stem (Snowball's "tri" for "try"): else a text
    # without the stem holds neither
    probe_token: bool
    ascii: bool  # token and stem are ASCII: a text is compared on its A-Z folded alone


CoverageWords = tuple[tuple[_Word, ...], ...]  # per query term: the tokens it is made of (all must be found)
# (the chunks holding each token, absent ones left out; the chunks in the index) for given tokens
Frequencies = Callable[[Sequence[str]], tuple[Mapping[str, int], int]]


@lru_cache(maxsize=1024)
def _word(token: str) -> _Word:
    s = stem(token) if is_stemmable(token) else token
    prefix = s[:-1] if is_stemmable(token) and s.endswith("i") else s  # Snowball's "happi" stands for "happy"
    pattern = re.compile(re.escape(prefix) + r"[^\W_]*")
    return _Word(token, s, pattern, not token.startswith(s), token.isascii() and s.isascii())


def coverage_words(query: AnyOf) -> CoverageWords:
    """The words coverage counts: the plain :class:`~.query.Term` children of ``query``
    (phrases and CJK runs are left out), each as its unicode61 tokens."""
    out: list[tuple[_Word, ...]] = []
    for child in query.children:
        if isinstance(child, Term):
            tokens = tuple(dict.fromkeys(word_tokens(child.text)))
            if tokens:
                out.append(tuple(_word(t) for t in tokens))
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=1 << 16)
def _token_stem(token: str) -> str:
    return stem(token) if is_stemmable(token) else ""


def _holds(word: _Word, lowered: str) -> bool:
    if word.stem not in lowered and (not word.probe_token or word.token not in lowered):
        return False
    for m in word.pattern.finditer(lowered):
        start = m.start()
        if start and (lowered[start - 1].isalnum() or lowered[start - 1] == "_"):
            continue  # inside a token, not at its start
        token = m.group()
        if token == word.token or _token_stem(token) == word.stem:
            return True
    return False


def _accented(text: str, raw: bytes | None) -> bool:
    if raw is None:
        raw = text.encode("utf-8", "surrogatepass")
    return b"\x01" in raw.translate(_ACCENT_LEADS) and _ACCENTED.search(text) is not None


def rarity_weights(words: CoverageWords, frequencies: Frequencies) -> tuple[float, ...]:
    """Each term's weight in a share by rarity: the idf of its tokens, summed."""
    counts, total = frequencies([w.token for term in words for w in term])
    return tuple(sum(math.log1p(total / (1 + counts.get(w.token, 0))) for w in term) for term in words)


def coverage(words: CoverageWords, text: str, weights: Sequence[float] | None = None) -> float:
    """The share of ``words`` (a term counts when all its tokens occur) that ``text`` holds;
    with ``weights`` (one per term), the share of their sum."""
    if not words:
        return 1.0
    ascii_text = text.isascii()
    if ascii_text or not all(w.ascii for term in words for w in term) or any(c in text for c in _LOWERS_TO_ASCII):
        lowered, raw = text.lower(), None
    else:
        # str.lower() walks a text holding one non-ASCII character (a curly quote) code point by
        # code point through Unicode's tables, 20 us for a 2 KB chunk; an ASCII word is compared
        # on A-Z only, which the bytes' lower() folds, round trip in half that. Other letters keep
        # their case, which neither a token's bounds nor its (ASCII) stem sees.
        raw = text.encode("utf-8", "surrogatepass")
        lowered = raw.lower().decode("utf-8", "surrogatepass")
    held = [_holds(term[0], lowered) if len(term) == 1 else all(_holds(w, lowered) for w in term) for term in words]
    if not all(held) and not ascii_text and _accented(text, raw):
        # only now: the accent class scanned a 4 KB chunk in 70 us, a third of a question's coverage
        folded = " ".join(word_tokens(text))
        held = [found or all(_holds(w, folded) for w in term) for found, term in zip(held, words, strict=True)]
    if weights is None:
        return sum(held) / len(words)
    return sum(w for w, found in zip(weights, held, strict=True) if found) / (sum(weights) or 1.0)


def rescore(scored: Sequence[tuple[int, float]], covered: Sequence[float], exponent: float) -> list[tuple[int, float]]:
    """The rows of ``scored`` (row id, bm25; lower is better) re-sorted by
    ``bm25 * covered[i] ** exponent`` (``covered[i]``: row i's coverage)."""
    out = [(rid, score * cov**exponent) for (rid, score), cov in zip(scored, covered, strict=True)]
    return sorted(out, key=lambda kv: (kv[1], kv[0]))


def wants_coverage(query: LexicalQuery) -> CoverageWords:
    """The words to count when ``query`` asks for coverage rescoring (empty otherwise)."""
    return coverage_words(query) if isinstance(query, AnyOf) and query.coverage > 0 else ()


def rerank(
    query: LexicalQuery,
    rows: Sequence[R],
    score: Callable[[R], float],
    text: Callable[[R], str],
    frequencies: Frequencies,
) -> list[R]:
    """``rows`` in a store's order (best first), the first :data:`COVERAGE_DEPTH` re-sorted by
    ``score(row) * share ** query.coverage`` (``score``: lower is better, e.g. FTS5's negative
    bm25 or a negated ``ts_rank``; ties keep the store's order), the rest after them unchanged.
    ``frequencies``: the store's chunk counts, read only for a share by rarity. Every adapter
    applies the hint through this one function."""
    words = wants_coverage(query)
    if not words or not rows:
        return list(rows)
    assert isinstance(query, AnyOf)
    top = rows[:COVERAGE_DEPTH]
    weights = rarity_weights(words, frequencies) if query.by_rarity else None
    shares = [coverage(words, text(row), weights) for row in top]
    order = rescore([(i, score(row)) for i, row in enumerate(top)], shares, query.coverage)
    return [top[i] for i, _ in order] + list(rows[COVERAGE_DEPTH:])
