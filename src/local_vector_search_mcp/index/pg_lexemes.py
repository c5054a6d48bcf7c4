"""A chunk's lexical columns on PostgreSQL, worked out in one pass: ``tsv``, ``ntok``, ``nstem``.

The adapter writes ``tsvector`` literals itself (decision 311): the heading's tokens
(``cjk.index_tokens``, FTS5's own) at weight A, the body's at weight B, then each part's
English (or the chunk's language's) stems as ``~stem`` lexemes at weight C, one position each
inside the part's range. Beside it, the sizes FTS5 would give the chunk's rows on SQLite:
tokens of heading and body (``ntok``) and stems (``nstem``), which BM25 needs (decision 310).

Both come from the same tokens and stems, so they are computed once, and the literal lists one
entry per token (``'index':4B 'index':9B``), made by C-level formatting: PostgreSQL's
``tsvector`` input merges the entries of a lexeme, sorts and deduplicates its positions and
keeps the first 256, so the stored value is the one the grouped literal gave (decision 565).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain

import xxhash

from .cjk import index_tokens
from .stem import STEM_MARK, stem_index_text, text_language

__all__ = ["MAX_LEXEME", "MAX_POSITION", "chunk_lexemes", "lexeme", "quoted_lexeme"]

MAX_POSITION = 16383  # tsvector positions stop there (PostgreSQL clamps larger ones to it)
# Characters. PostgreSQL refuses a lexeme of 2 KB or more (a tsquery with one fails the whole query), and
# 500 characters of four bytes stay below it; a longer token is stored folded (:func:`lexeme`).
MAX_LEXEME = 500
_FOLD_KEPT = MAX_LEXEME - 17  # the token's start, then "…" and 16 hex digits: MAX_LEXEME in all
_ESCAPE = str.maketrans({"'": "''", "\\": "\\\\"})  # inside a quoted lexeme of a tsvector literal
_ENTRY = {weight: (f"'{{}}':{{}}{weight}".format, f"'{STEM_MARK}{{}}':{{}}C".format)[weight == "C"] for weight in "ABC"}


def chunk_lexemes(text: str, heading: str | None) -> tuple[str, int, int]:
    """(tsvector literal, ntok, nstem) of a chunk.

    Positions: a gap of one before each part (a phrase never spans heading and body), then the
    part's tokens one after the other (PostgreSQL caps them at :data:`MAX_POSITION`); the part's
    stems from the part's first token position on. A token longer than :data:`MAX_LEXEME` is folded
    (:func:`lexeme`)."""
    heading = heading or ""
    language = text_language(heading, text)  # as the SQLite stems table's (decision 518)
    head, body = index_tokens(heading), index_tokens(text)
    head_stems = stem_index_text(heading, language=language).split() if heading else []
    body_stems = stem_index_text(text, language=language).split()
    head_start = 1
    body_start = min(head_start + len(head), MAX_POSITION) + 1
    literal = " ".join(
        chain(
            _entries(head, head_start + 1, "A"),
            _entries(head_stems, head_start + 1, "C"),
            _entries(body, body_start + 1, "B"),
            _entries(body_stems, body_start + 1, "C"),
        )
    )
    return literal, len(head) + len(body), len(head_stems) + len(body_stems)


def lexeme(word: str) -> str:
    """The lexeme PostgreSQL holds for an index token or a ``~stem`` (``STEM_MARK`` included): the word
    itself, or past :data:`MAX_LEXEME` characters its start, "…" and the XxHash64 of the whole word.
    Index and query fold alike, so a 768-character fingerprint is found as on SQLite, whose FTS5
    keeps tokens of any length; "…" is never part of a token, so no other word folds to it (decision 984)."""
    if len(word) <= MAX_LEXEME:
        return word
    return f"{word[:_FOLD_KEPT]}\u2026{xxhash.xxh64_hexdigest(word.encode('utf-8', 'surrogatepass'))}"


def quoted_lexeme(token: str) -> str:
    """A tsquery's quoted lexeme of ``token``, folded past :data:`MAX_LEXEME` as the index folds it."""
    return "'" + lexeme(token).translate(_ESCAPE) + "'"


def _entries(tokens: list[str], first: int, weight: str) -> Iterable[str]:
    """``'token':position<weight>`` of each token, the ``i``-th at ``first + i``."""
    positions: Iterable[int] = range(first, first + len(tokens))
    mark = STEM_MARK if weight == "C" else ""  # the entry's format writes the mark itself
    if tokens and max(map(len, tokens)) + len(mark) > MAX_LEXEME:  # rare: folded as the query folds them
        tokens = [lexeme(mark + t)[len(mark) :] for t in tokens]
    joined = "".join(tokens)
    if "'" in joined or "\\" in joined:  # no unicode61 token holds one; escaped all the same
        tokens = [t.translate(_ESCAPE) for t in tokens]
    entry: Callable[..., str] = _ENTRY[weight]
    return map(entry, tokens, positions)
