"""CJK segmentation shared by every storage adapter's index and query sides.

Full-text tokenizers that split on spaces (FTS5 ``unicode61``, PostgreSQL's
``simple`` configuration) read an unbroken run of Chinese or Japanese as one
token, so ``学习`` inside ``机器学习很有趣`` could never match. Adapters rewrite
CJK runs before their tokenizer sees them, the same way on both sides:

* indexed text: each run becomes its overlapping character bigrams plus its
  last character on its own (``机器学习`` -> ``机器 器学 学习 习``);
* a query run (:class:`~.query.CjkRun`): its bigrams; a single character
  matches every bigram that starts with it (a prefix) and the run-final one.

Latin text is untouched. The engine never bigrams anything: it hands runs to
the adapter as :class:`~.query.CjkRun` leaves.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import apsw

__all__ = ["CJK_CHARS", "CJK_RUN", "bigrams", "cjk_index_text", "index_tokens"]

# Han (incl. ext. A and compatibility), Hiragana, Katakana (+ phonetic ext.,
# half-width), CJK symbols excluded. Hangul is spaced and left to the tokenizer.
CJK_CHARS = (
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # a unicode61 token (approximately)


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run (the run itself when it has one character)."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_index_text(text: str) -> str:
    """Text as handed to a space-splitting tokenizer: CJK runs replaced by bigrams + final char."""
    if text.isascii() or not CJK_RUN.search(text):  # isascii: a C scan, no regex (decision 273)
        return text
    return CJK_RUN.sub(lambda m: " " + " ".join([*bigrams(m.group()), m.group()[-1]]) + " ", text)


_LOCAL = threading.local()


def _unicode61() -> Any:
    """This thread's FTS5 ``unicode61 remove_diacritics 2`` tokenizer (apsw, in-memory)."""
    tokenizer = getattr(_LOCAL, "tokenizer", None)
    if tokenizer is None:
        _LOCAL.connection = apsw.Connection(":memory:")
        tokenizer = _LOCAL.tokenizer = _LOCAL.connection.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
    return tokenizer


def index_tokens(text: str) -> list[str]:
    """The tokens of ``cjk_index_text(text)`` exactly as the SQLite adapter's FTS5 tokenizer makes
    them (``unicode61 remove_diacritics 2``, run through apsw): lower-cased, Latin diacritics
    folded (``café`` -> ``cafe``), combining marks inside a word dropped. What an adapter without
    FTS5 indexes and queries (PostgreSQL, decision 311), so both engines see the same words."""
    if not text:
        return []
    prepared = cjk_index_text(text)
    if prepared.isascii():  # the common case: unicode61 splits ASCII at every non-alphanumeric
        return [t.lower() for t in _WORD.findall(prepared)]
    tokens: list[str] = _unicode61()(
        prepared.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False, include_colocated=False
    )
    return tokens
