"""The snippet path as it stood at 06ef3a4 (session 7: best window, decisions 375-379; tokenizer-exact
highlighting, decisions 370-374), frozen as the oracle of ``test_snippet_oracle.py``: the faster
``search/text.py`` must give the same snippet, character for character, for any text and query
(decision 390). Not imported by the package; do not edit except to follow a deliberate change
of the snippet rules (then change both, and say so in ``spec/decisions.md``)."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from local_vector_search_mcp.index.cjk import CJK_CHARS, CJK_RUN, bigrams, word_spans, word_tokens
from local_vector_search_mcp.index.stem import is_stemmable, stem
from local_vector_search_mcp.search.stopwords import is_stop_word

_CJK = CJK_CHARS
_CJK_RUN = CJK_RUN


# Combining marks go with the character before them in a token and at a cut (decision 1002). Those
# of plane 0 and the others apart: ``re`` looks the first up in a bitmap, tries the second range by
# range (one class for all made this oracle three times slower).
def _marks(codes: range) -> str:
    return "".join(re.escape(chr(c)) for c in codes if unicodedata.category(chr(c))[0] == "M")


_PLANE_0, _OTHERS = _marks(range(0x10000)), _marks(range(0x10000, 0x20000)) + _marks(range(0xE0100, 0xE01F0))
_M = rf"(?:[{_PLANE_0}]|(?=[^\x00-\uffff])[{_OTHERS}])"
_TOKEN = re.compile(rf"[{_CJK}]{_M}*+|[^\W_]++(?:{_M}++[^\W_]*+)*+", re.UNICODE)
# marks, skin tones, zero-width joiners, the vowel and final jamo of a syllable (decision 1105)
_JOINED = re.compile(rf"{_M}|[\u200d\U0001f3fb-\U0001f3ff\u1160-\u11ff\uff9e\uff9f]")  # 1105, 1113


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
            word = m.group()
            found += [
                (at + a, at + b)
                for a, b, token in _word_tokens_of(word)
                if self.lit(token)
                and not (b - a == 1 and a >= 2 and word[a - 1] in "'\u2019" and word[a - 2].isalpha())
            ]
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
        re.compile("|".join(map(_written, pieces))) if pieces else None,
        frozenset(plain),
        frozenset(stems),
        tuple(prefixes),
    )


def _written(piece: str) -> str:
    """A CJK piece, each of its kana and Hangul syllables also as written decomposed, each katakana
    also as written half-width (NFKC's inverse: ``ガ`` as ``ｶﾞ``), each letter with the variation
    selectors written on it (decisions 1102, 1103, 1113)."""
    halves = {unicodedata.normalize("NFKC", chr(c)): chr(c) for c in range(0xFF66, 0xFFA0)}
    out = ""
    for ch in piece:
        forms = [ch]
        apart = unicodedata.normalize("NFD", ch)
        if apart != ch and ("\u3041" <= ch <= "\u30ff" or "\uac00" <= ch <= "\ud7a3"):
            forms.append(apart)
        if "\u30a1" <= ch <= "\u30ff" and all(p in halves for p in apart):
            forms.append("".join(halves[p] for p in apart))
        out += f"(?:{'|'.join(map(re.escape, forms))})" if len(forms) > 1 else re.escape(ch)
        out += "[\ufe00-\ufe0f\U000e0100-\U000e01ef]*"
    return out


def _whole(m: re.Match[str]) -> bool:
    """Whole tokens only, as unicode61 sees them: a spaced-script word must not
    touch another letter or digit (``i`` never lights up inside ``pointer``);
    CJK pieces match anywhere inside a CJK run (they have no word boundaries).
    Rejecting the longest candidate at a position loses nothing: a shorter
    one there ends inside the same word."""
    if _CJK_RUN.match(m.group()):
        return True
    text, start, end = m.string, m.start(), m.end()
    if end - start == 1 and start >= 2 and text[start - 1] in "'\u2019" and text[start - 2].isalpha():
        return False  # the end of a contraction or a possessive: no word to a reader (decision 794)
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
    budget = max(width, 1) * 16  # characters (decision 1002)
    wholes = _whole_terms(flat, terms)
    best, tokens = _best_at(flat, hits, wholes, width)
    # decision 1020: the windows at every hit starting in the best stretch of `budget` characters
    # of the whole text win with more different words
    every = sorted({*light.ascii_spans(flat), *others})
    # only a text longer than a chunk's usual size (decision 1035)
    if tokens and len(flat) > _SNIPPET_FAR_CHARS and set(every) != set(hits):

        def stretch(h: Span) -> int:
            keys = {k for a, b in every if h[0] <= a < h[0] + budget for k in _word_keys(flat[a:b])}
            return len(keys | {k for a, _, k in wholes if h[0] <= a < h[0] + budget})

        at = max(every, key=lambda h: (stretch(h), -h[0]))
        if at != first and stretch(at) > -best[0]:
            far, far_tokens = _best_at(flat, [h for h in every if at[0] <= h[0] < at[0] + budget], wholes, width)
            if far_tokens and far[0] < best[0]:
                best, tokens = far, far_tokens
    _, lo, hi, anchor = best
    # outer tokens dropped, the one farther from the anchor first, until the span fits the budget
    while hi - lo > 1:
        first_char, last_char = min(tokens[lo].start(), anchor[0]), max(tokens[hi - 1].end(), anchor[1])
        if last_char - first_char <= budget:
            break
        if last_char - anchor[1] >= anchor[0] - first_char:
            hi -= 1
        else:
            lo += 1
    start = min(tokens[lo].start(), anchor[0]) if tokens else 0
    end = max(tokens[hi - 1].end(), anchor[1]) if tokens else len(flat)
    # only punctuation cut off, and the whole fits: no cut (no "...")
    if _TOKEN.search(flat, 0, start) is None and end <= budget:
        start = 0
    while start > 0 and (_JOINED.match(flat, start) or flat[start - 1] == "\u200d"):
        start -= 1
    end = _end(flat, start, end, budget)
    spans = sorted({*light.ascii_spans(flat, start, end), *(s for s in others if start <= s[0] < end)})
    body: list[str] = []
    at = start
    for a, b in spans:
        if a < at or b > end:  # overlapping an earlier span, or outside the window
            continue
        if light.cjk is not None:  # on over the query's CJK pieces that overlap it (decision 792)
            while b < len(flat) and light.cjk.fullmatch(flat, b - 1, b + 1):
                b += 1
            if b > end:  # past the window's last token: the window ends with the word
                end = _end(flat, start, b, budget)
        body += [flat[at:a], "[", flat[a:b], "]"]
        at = b
    body.append(flat[at:end])
    return ("..." if start > 0 else "") + "".join(body) + ("..." if end < len(flat) else "")


def _best_at(flat: str, hits: list[Span], wholes: list[tuple[int, int, str]], width: int) -> tuple[Window, list]:
    """The best window at ``hits`` and the tokens it indexes."""
    lo_char = max(0, hits[0][0] - _SNIPPET_CONTEXT_CHARS)
    if lo_char:
        space = flat.find(" ", lo_char, hits[0][0])
        lo_char = space + 1 if space >= 0 else hits[0][0]
    hi_char = hits[-1][1] + _SNIPPET_CONTEXT_CHARS
    tokens = list(_TOKEN.finditer(flat, lo_char, hi_char))
    ends = [t.end() for t in tokens]

    def window(hit: Span) -> Window:
        """(-different words, lo, hi, anchor) of the window around ``hit``: the smallest wins."""
        idx = min(bisect_right(ends, hit[0]), max(0, len(tokens) - 1))  # the first token ending after it
        lo = max(0, idx - width // 4)
        hi = min(len(tokens), lo + width)
        lo = max(0, min(lo, hi - width))
        first_char, last_char = (tokens[lo].start(), tokens[hi - 1].end()) if tokens else (0, len(flat))
        inside = {k for a, b in hits if first_char <= a and b <= last_char for k in _word_keys(flat[a:b])}
        # a query term of several words matched whole counts as one more word (decision 1020)
        inside |= {k for a, b, k in wholes if first_char <= a and b <= last_char and lo_char <= a and b <= hi_char}
        return (-len(inside), lo, hi, hit)

    return min(map(window, hits)), tokens


Window = tuple[int, int, int, Span]


def _whole_terms(flat: str, terms: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """Where a query term of several words occurs as written, its words in order with only
    non-word characters between, touching no other letter or digit; and its key (decision 1020)."""
    found = set()
    for term in terms:
        pieces = [term[a:b] for a, b, _ in word_spans(term)]
        if len(pieces) > 1 and not _CJK_RUN.search(term):
            key = "\x00" + "\x00".join(p.lower() for p in pieces)
            pattern = r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, pieces)) + r"(?![^\W_])"
            found |= {(*m.span(), key) for m in re.finditer(pattern, flat, re.IGNORECASE)}
    return sorted(found)


_SNIPPET_CONTEXT_CHARS = 300
_SNIPPET_SPAN_CHARS = 600  # how far after the first match other anchors are tried
_SNIPPET_MAX_HITS = 16
_SNIPPET_FAR_CHARS = 4096  # a longer text is read whole for its best stretch (decisions 1020, 1035)


def _end(flat: str, start: int, end: int, budget: int) -> int:
    if _TOKEN.search(flat, end) is None and len(flat) - start <= budget:
        return len(flat)
    while end < len(flat) and (_JOINED.match(flat, end) or flat[end - 1] == "\u200d"):
        end += 1
    return end


def _word_keys(word: str) -> list[str]:
    """Matches of one query word count once in a window: ``edit`` and ``editing`` are one word; a
    CJK stretch counts the bigrams it holds (decision 1002)."""
    if _CJK_RUN.fullmatch(word):
        return bigrams(word)
    token = word.lower()
    return [stem(token) if is_stemmable(token) else token]


def _head(flat: str) -> str:
    if len(flat) <= 240:
        return flat
    end = _end(flat, 0, 240, -1)  # the cut keeps a mark with its letter
    return flat[:end] + ("..." if end < len(flat) else "")
