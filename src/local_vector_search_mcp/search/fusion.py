"""How much the semantic list counts in hybrid fusion, per query.

Measured on the three shared sets (``make bench``, per query type): the
bundled model helps on prose - questions and paraphrases, where the words of
the query are not the words of the answer - and hurts on keyword, identifier
and code queries, where BM25 already finds the page and the model's
neighbours push it down (rust-book identifiers: lexical 0.95, plain fusion
0.86 at section level). So prose queries fuse with ``search.semanticWeight``
and every other query with :data:`KEYWORD_SHARE` of it: hybrid then stays
within 0.01 of the better single mode on nearly every set and type instead of
losing up to 0.09 on identifiers.

Semantic seats (decision 416). Under those weights a chunk that only the
semantic list holds can never reach the top: its best score, ``0.3 / (rrfK + 1)``,
is below what the lexical list's first 49 ranks get, so for a question that BM25
misses entirely (its words are not the answer's words) hybrid returned lexical's
misses even when the model's first hit was the answer. For questions
(:func:`is_question`, where the bundled model ranks about as well as BM25 on all
six labelled sets, shared and held-out; on task-like paraphrases it ranks far
below) the last fifth of ``topK`` (:data:`SEAT_SHARE`; none below 5) is therefore
reserved: the semantic list's best :func:`seat_count` chunks, when the fusion
ranked them lower, are moved up to those places (:func:`seat_semantic`).

A query is prose when it holds one of its stop words (``stopwords.py``: English, or another
language's when the query reads as that language, decision 515) or a
CJK run of at least :data:`CJK_CLAUSE` characters (a clause, not a term:
``生命周期`` is a term, ``父组件怎么调用子组件`` a question) or asks in Chinese or Japanese
(``Suspense 是什么``, ``Vite とは何``: decisions 718, 1175), and no piece
looks like code (``Rc::strong_count``, ``--test-mode``, ``camelCase``,
``snake_case``, ``f()``); hyphenated words and file names (``two-factor``,
``package.json``) are words of a sentence here (decision 1029).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..index.cjk import CJK_RUN
from ..index.port import ChunkHit
from .stopwords import asks_in_chinese, asks_in_japanese, is_stop_word, query_stop_words, reads_as_question

__all__ = [
    "CJK_CLAUSE",
    "KEYWORD_SHARE",
    "SEAT_SHARE",
    "is_prose",
    "is_question",
    "looks_like_code",
    "seat_count",
    "seat_semantic",
    "semantic_weight",
]

KEYWORD_SHARE = 0.1
SEAT_SHARE = 5  # one of every SEAT_SHARE places of a question's topK is kept for the semantic list's best
CJK_CLAUSE = 6
_CODE = re.compile(
    r"[A-Za-z0-9][:._()\[\]<>{}&|=/#$@!+*-]+[A-Za-z0-9(\[\]{}<>]"  # punctuation between word characters
    r"|[a-z][A-Z]|_[a-z]|^--?[a-z]|\(\)"  # camelCase, snake_case, a flag, a call
)


def looks_like_code(piece: str) -> bool:
    """Whether a whitespace-free query piece reads as an identifier or code."""
    return _CODE.search(piece) is not None


# Pieces code-like only by a hyphen between words or a file name's dot (``two-factor``, ``read-only``,
# ``package.json``, ``Node.js``): English writes them in sentences, so among words that make the query
# prose they do not make it code (decision 1029). Parts of two letters or more: ``v-if`` stays code.
# A dot counts as a file name's only before a common extension: ``reply.send`` is a member, code.
_FILE_EXTENSIONS = "json|js|ts|md|yml|yaml|toml|lock|txt|py|rs|io|html|css|xml|csv|sh|cfg|ini|conf|env|log"
_PROSE_COMPOUND = re.compile(
    r"[A-Za-z]{2,}(?:-[A-Za-z]{2,})+[?.,!:;]*"  # hyphenated words
    rf"|[A-Za-z][A-Za-z0-9]*\.(?:{_FILE_EXTENSIONS})[?.,!:;]*"  # a file name: package.json, Node.js, crates.io
    r"|(?:e\.g|i\.e)\.?[,:;]?"  # abbreviations
)


def is_prose(query: str) -> bool:
    """Whether ``query`` is natural-language prose (see the module docstring)."""
    pieces = query.split()
    if any(looks_like_code(p) and not _PROSE_COMPOUND.fullmatch(p) for p in pieces):
        return False
    stop = query_stop_words(pieces)
    if any(is_stop_word(p, stop) for p in pieces):
        return True
    return (
        asks_in_chinese(query) or asks_in_japanese(query) or any(len(m) >= CJK_CLAUSE for m in CJK_RUN.findall(query))
    )


def is_question(query: str) -> bool:
    """Whether ``query`` is a question: prose (:func:`is_prose`) that ends with a question mark
    or opens with an interrogative or auxiliary word (``How do I ...``, ``Can I ...``), or asks
    in Chinese or Japanese (decisions 718, 1175). Lexical search rescores a question's candidates
    by how many of its words they hold (decision 220); a task description (``get rid of old logs
    ...``) is not a question."""
    if not is_prose(query):
        return False
    return reads_as_question(query) or asks_in_chinese(query) or asks_in_japanese(query)


def semantic_weight(query: str, configured: float) -> float:
    """The semantic list's weight in the fusion of ``query``."""
    return configured if is_prose(query) else configured * KEYWORD_SHARE


def seat_count(top_k: int) -> int:
    """How many of ``top_k`` places a question keeps for the semantic list's best chunks."""
    return top_k // SEAT_SHARE


def seat_semantic(
    fused: Sequence[tuple[ChunkHit, float]], semantic: Sequence[ChunkHit], top_k: int
) -> list[tuple[ChunkHit, float]]:
    """``fused`` (best first) with the semantic list's best :func:`seat_count` hits moved up to
    the last places of ``top_k`` when the fusion ranked them lower: the ``j``-th best goes to
    place ``top_k - seats + j`` and takes that place's score, so scores stay non-increasing.
    A hit the fusion already ranked at or above its place stays where it is."""
    out = list(fused)
    seats = seat_count(top_k)
    for j, hit in enumerate(semantic[:seats]):
        place = top_k - seats + j
        at = next((i for i, (h, _) in enumerate(out) if h.chunk_id == hit.chunk_id), None)
        if at is None or at <= place or place >= len(out):
            continue
        moved, _ = out.pop(at)
        out.insert(place, (moved, out[place][1]))
    return out
