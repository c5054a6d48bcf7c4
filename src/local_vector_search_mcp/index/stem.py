"""English and Russian stemming shared by every storage adapter's index and query sides.

``echoing`` should meet ``echo`` and ``indexes`` should meet ``index``, but an
identifier must still win where it is written exactly. So stems do not
replace the exact tokens: an adapter indexes the exact tokens as before and,
beside them, the stem of every English or Russian word (a separate FTS5 table in SQLite;
lexemes marked with :data:`STEM_MARK` in PostgreSQL). A query word ``w`` with
stem ``s`` matches ``w`` exactly or ``s`` among the stems, the stems counting
a quarter of the exact tokens (``fts5.STEM_WEIGHT``): a chunk holding ``w``
itself scores in both (the exact-form boost), one holding only ``echoes`` or
``echo`` for ``echoing`` in the stems alone.

Only words of 3 to 40 ASCII letters (the Snowball English stemmer,
``snowballstemmer``) or of 3 to 40 letters of the Russian alphabet (the Snowball
Russian stemmer, which also reads ``ё`` as ``е``: ``ёлку`` meets ``елка``;
decision 518) are stemmed; tokens with digits, CJK and other scripts are left alone,
so ``sha512``, ``机器`` or ``v2`` never change. A word's script picks its stemmer:
a Cyrillic word is never English, and a Latin one is stemmed as English whatever
its language (German, French or Spanish words would need the language of each text;
decision 518 says why not yet). Identifiers written with
punctuation (``Rc::strong_count``) are matched as phrases of exact tokens and
never stemmed on the query side.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

__all__ = ["STEM_MARK", "is_stemmable", "stem", "stem_index_text", "stem_tokens"]

STEM_MARK = "~"  # PostgreSQL: a stem lexeme is "~" + stem, so it never equals an exact token
_ASCII_WORD = re.compile(r"[a-z]{3,40}")
_RUSSIAN_WORD = re.compile("[\u0430-\u044f\u0451]{3,40}")  # а-я and ё, lower-case
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # a unicode61 token (approximately)
# In ASCII text _WORD's tokens are the runs of [A-Za-z0-9]; only those of 3 or more characters
# can be stemmed, and this finds exactly them (a run shorter than 3 fails at every position).
_ASCII_CANDIDATE = re.compile(r"[A-Za-z0-9]{3,}")
_STEMMER = snowballstemmer.stemmer("english")
_RUSSIAN = snowballstemmer.stemmer("russian")


def _stem_word(word: str) -> str:
    """The stem of a lower-cased word, "" when it is not stemmable."""
    if _ASCII_WORD.fullmatch(word):
        return str(_STEMMER.stemWord(word))
    if _RUSSIAN_WORD.fullmatch(word):
        return str(_RUSSIAN.stemWord(word))
    return ""


def is_stemmable(token: str) -> bool:
    """Whether a lower-cased token is an English or Russian word this module stems."""
    return _ASCII_WORD.fullmatch(token) is not None or _RUSSIAN_WORD.fullmatch(token) is not None


@lru_cache(maxsize=1 << 16)
def _stem_lower(token: str) -> str:
    return _stem_word(token)


def stem(token: str) -> str:
    """The stem of one token (lower-cased); the token itself when it is not 3-40 ASCII or
    Russian letters."""
    token = token.lower()
    return _stem_lower(token) if is_stemmable(token) else token


def stem_tokens(tokens: list[str]) -> list[str]:
    """The stems of the stemmable lower-cased ``tokens``, in order (what an adapter
    indexes beside the exact tokens)."""
    return [_stem_lower(t) for t in tokens if is_stemmable(t)]


_INDEX_CACHE: dict[str, str] = {}  # token as written -> its stem, "" when not stemmable (cleared when large)
_INDEX_CACHE_MAX = 200_000


def stem_index_text(*texts: str) -> str:
    """A chunk's stems as one space-separated text: :func:`stem_tokens` of every text's
    unicode61-like tokens (empty when none is an English or Russian word)."""
    cache = _INDEX_CACHE
    if len(cache) > _INDEX_CACHE_MAX:
        cache.clear()
    out: list[str] = []
    for text in texts:
        # most chunks are ASCII: a cheaper pattern, and the tokens too short to stem never come back
        tokens = (_ASCII_CANDIDATE if text.isascii() else _WORD).findall(text)
        stems = list(map(cache.get, tokens))
        if None in stems:
            for i, token in enumerate(tokens):
                if stems[i] is None:
                    s = cache.get(token)
                    if s is None:
                        word = token.lower()
                        s = cache[token] = _stem_word(word)
                    stems[i] = s
        out.extend(filter(None, stems))
    return " ".join(out)
