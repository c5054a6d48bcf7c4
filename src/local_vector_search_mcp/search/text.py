"""Lexical text processing shared by indexing and querying.

FTS5's ``unicode61`` tokenizer treats an unbroken run of Chinese or Japanese
as one token, so ``学习`` inside ``机器学习很有趣`` can never match. We keep
``unicode61`` (fast, good for every spaced script) and rewrite CJK runs on the
application side before they reach FTS5:

* index side: each run becomes its overlapping character bigrams plus its last
  character on its own (``机器学习`` -> ``机器 器学 学习 习``);
* query side: a run becomes its bigrams as separate terms (ranked by BM25, so a
  sentence-long Chinese question still finds documents sharing some words), and
  a single character becomes the prefix term ``"字"*``, which matches every
  bigram starting with it and the run-final character.

Latin text is untouched, so English ranking is exactly plain unicode61.

Query building never lets user text reach FTS5 syntax: every term is a quoted
string (``"`` doubled), and pieces without a letter or digit are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["LexicalQuery", "build_lexical_query", "cjk_index_text", "highlight_terms", "make_snippet"]

# Han (incl. ext. A and compatibility), Hiragana, Katakana (+ phonetic ext.,
# half-width), CJK symbols excluded. Hangul is spaced and left to unicode61.
_CJK = (
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORDISH = re.compile(r"[^\W_]", re.UNICODE)  # a letter or digit
_SPLIT = re.compile(rf"([{_CJK}]+)")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # a unicode61 token (approximately)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_index_text(text: str) -> str:
    """Text as handed to FTS5: CJK runs replaced by bigrams + final char."""
    if not _CJK_RUN.search(text):
        return text
    return _CJK_RUN.sub(lambda m: " " + " ".join([*_bigrams(m.group()), m.group()[-1]]) + " ", text)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


@dataclass(frozen=True)
class LexicalQuery:
    """FTS5 match expressions for one user query.

    ``strict`` requires every term (AND); ``loose`` any term (OR). Both are
    ``None`` when the query has nothing searchable. ``terms`` are the plain
    strings used for snippet highlighting.
    """

    strict: str | None
    loose: str | None
    terms: tuple[str, ...]
    parts: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def with_loose_budget(self, df: dict[str, int], budget: int, keep: int) -> LexicalQuery:
        """The same query whose OR part keeps only the rarest terms whose chunk
        counts add up to at most ``budget`` (at least ``keep`` terms stay).

        FTS5 computes BM25 for every row an OR query matches before it can
        sort, so the cost grows with the summed posting-list sizes; on a large
        index a question full of common words would score most of the index.
        ``df`` maps tokens to chunk counts; a phrase counts as its rarest
        token. The AND part is left whole (it matches few rows by nature).
        """
        if len(self.parts) <= keep:
            return self
        # a CJK single-character prefix term has no posting list of its own and can match
        # many: it counts as the whole budget
        rarity = sorted(
            (min((df.get(t, 0) for t in tokens), default=budget), i) for i, (_, tokens) in enumerate(self.parts)
        )
        kept: set[int] = set()
        total = 0
        for count, i in rarity:
            if len(kept) >= keep and total + count > budget:
                break
            kept.add(i)
            total += count
        if len(kept) == len(self.parts):
            return self
        loose = " OR ".join(term for i, (term, _) in enumerate(self.parts) if i in kept)
        return LexicalQuery(self.strict, loose, self.terms, self.parts)

    def tokens(self) -> list[str]:
        return sorted({t for _, tokens in self.parts for t in tokens})


def build_lexical_query(query: str) -> LexicalQuery:
    """Turn arbitrary user text into safe FTS5 expressions.

    Each whitespace-separated piece keeps its internal order as an FTS phrase
    (``Rc::strong_count`` -> ``"Rc::strong_count"``, which unicode61 reads as the
    phrase ``rc strong count``); CJK runs inside a piece become bigram terms.
    """
    fts_terms: list[tuple[str, tuple[str, ...]]] = []
    plain: list[str] = []
    for piece in _CONTROL.sub(" ", query).split():
        for part in _SPLIT.split(piece):
            if not part:
                continue
            if _CJK_RUN.fullmatch(part):
                plain.append(part)
                if len(part) == 1:
                    fts_terms.append((_quote(part) + "*", ()))  # prefix: no single posting list to look up
                else:
                    fts_terms.extend((_quote(b), (b,)) for b in _bigrams(part))
            elif _WORDISH.search(part):
                plain.append(part)
                fts_terms.append((_quote(part), tuple(t.lower() for t in _WORD.findall(part))))
    # de-duplicate while keeping order
    seen: set[str] = set()
    unique = [t for t in fts_terms if not (t[0] in seen or seen.add(t[0]))]  # type: ignore[func-returns-value]
    if not unique:
        return LexicalQuery(None, None, ())
    terms = [t for t, _ in unique]
    return LexicalQuery(" AND ".join(terms), " OR ".join(terms), tuple(plain), tuple(unique))


_TOKEN = re.compile(rf"[{_CJK}]|[^\W_]+", re.UNICODE)


def highlight_terms(terms: tuple[str, ...]) -> list[str]:
    """Lower-cased word tokens of the query terms (CJK as whole runs)."""
    out: list[str] = []
    for term in terms:
        if _CJK_RUN.fullmatch(term):
            out.append(term)
            if len(term) > 2:
                out.extend(_bigrams(term))
        else:
            out.extend(t.lower() for t in re.findall(r"[^\W_]+", term))
    # longest first so a regex alternation prefers whole words/runs
    return sorted(set(out), key=len, reverse=True)


# A letter or digit that is not CJK: what makes a Latin/Cyrillic/... word go on.
_WORD_CHAR = re.compile(rf"(?![{_CJK}])[^\W_]")


@lru_cache(maxsize=256)
def _highlight_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    # plain alternation, longest first: cheap to compile (a character class with the CJK ranges
    # inside per-word lookarounds took ~70 ms to compile); boundaries are checked by _whole
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)


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
    Only whole tokens are highlighted. Without any match, the first 240
    characters of the text (+ ``...``).
    """
    flat = " ".join(text.split())
    words = highlight_terms(terms)
    if not words:
        return _head(flat)
    pattern = _highlight_pattern(tuple(words))
    first = next((m for m in pattern.finditer(flat) if _whole(m)), None)
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
    body = pattern.sub(lambda m: f"[{m.group()}]" if _whole(m) else m.group(), flat[start:end])
    return ("..." if start > 0 else "") + body + ("..." if end < len(flat) else "")


_SNIPPET_CONTEXT_CHARS = 300


def _head(flat: str) -> str:
    return flat if len(flat) <= 240 else flat[:240] + "..."
