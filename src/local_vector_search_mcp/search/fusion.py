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

A query is prose when it holds an English stop word (``stopwords.py``) or a
CJK run of at least :data:`CJK_CLAUSE` characters (a clause, not a term:
``生命周期`` is a term, ``父组件怎么调用子组件`` a question), and no piece
looks like code (``Rc::strong_count``, ``--test-mode``, ``camelCase``,
``snake_case``, ``f()``).
"""

from __future__ import annotations

import re

from ..index.cjk import CJK_RUN
from .stopwords import is_stop_word

__all__ = ["CJK_CLAUSE", "KEYWORD_SHARE", "is_prose", "is_question", "looks_like_code", "semantic_weight"]

KEYWORD_SHARE = 0.1
CJK_CLAUSE = 6
_CODE = re.compile(
    r"[A-Za-z0-9][:._()\[\]<>{}&|=/#$@!+*-]+[A-Za-z0-9(\[\]{}<>]"  # punctuation between word characters
    r"|[a-z][A-Z]|_[a-z]|^--?[a-z]|\(\)"  # camelCase, snake_case, a flag, a call
)


def looks_like_code(piece: str) -> bool:
    """Whether a whitespace-free query piece reads as an identifier or code."""
    return _CODE.search(piece) is not None


def is_prose(query: str) -> bool:
    """Whether ``query`` is natural-language prose (see the module docstring)."""
    pieces = query.split()
    if any(looks_like_code(p) for p in pieces):
        return False
    return any(is_stop_word(p) for p in pieces) or any(len(m) >= CJK_CLAUSE for m in CJK_RUN.findall(query))


_INTERROGATIVES = frozenset(
    (
        "how",
        "what",
        "why",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "can",
        "could",
        "should",
        "shall",
        "is",
        "are",
        "am",
        "was",
        "were",
        "do",
        "does",
        "did",
        "will",
        "would",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
    )
)


def is_question(query: str) -> bool:
    """Whether ``query`` is an English question: prose (:func:`is_prose`) that ends with a
    question mark or opens with an interrogative or auxiliary word (``How do I ...``,
    ``Can I ...``). Lexical search rescores a question's candidates by how many of its
    words they hold (decision 220); a task description (``get rid of old logs ...``) is not
    a question."""
    if not is_prose(query):
        return False
    pieces = query.split()
    return query.rstrip().endswith(("?", "\uff1f")) or pieces[0].lower().strip("\"'") in _INTERROGATIVES


def semantic_weight(query: str, configured: float) -> float:
    """The semantic list's weight in the fusion of ``query``."""
    return configured if is_prose(query) else configured * KEYWORD_SHARE
