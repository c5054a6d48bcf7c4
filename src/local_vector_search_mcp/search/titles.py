"""Title match: a short query that is a document's title finds that document first (decision 260).

Agents often search for a topic by its name (``segment replication``, ``point
in time``, ``hybrid search``). BM25 ranks such a query's words highest in
short chunks that mention them in passing (a settings table row, a "Next
steps" link list), while the page *about* the topic, whose title is exactly
the query, has a longer opening section and lands at rank 20-60 on a large
tree (opensearch-docs). A title is the author's own summary of a page, so a
query equal to it is the strongest lexical evidence there is: the first chunk
of every document whose title (its first top-level heading) has exactly the
query's words goes ahead of the other lexical hits (the document with the best-ranked lexical hit
first).

Words are compared as the index's tokens (``cjk.word_tokens``: lower-cased, accents
folded, so ``le cafe`` names ``Le café``; a CJK run one word), with heading ids
(``{#custom-id}``) left out; a question never names a title, and a query of
more than :data:`TITLE_MAX_WORDS` words hardly does, so neither asks the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..index.cjk import word_tokens
from ..index.port import ChunkHit, IndexStore
from ..index.query import PathScope

__all__ = ["TITLE_DEPTH", "TITLE_MAX_WORDS", "promote_titles", "title_words", "titled_hits"]

TITLE_MAX_WORDS = 8
TITLE_DEPTH = 200  # documents whose heading path begins with the words, looked at per query

HEADING_SEPARATOR = " > "  # between the headings of a heading path
_HEADING_ID = re.compile(r"\{#[^}]*\}")


def title_words(text: str) -> tuple[str, ...]:
    """The words a title match compares: the index's folded tokens, heading ids left out."""
    return tuple(word_tokens(_HEADING_ID.sub(" ", text)))


def titled_hits(store: IndexStore, query: str, scope: PathScope | None) -> list[ChunkHit]:
    """The first chunk of each document whose top-level heading is exactly ``query``'s words."""
    words = title_words(query)
    if not words or len(words) > TITLE_MAX_WORDS:
        return []
    return [
        hit
        for hit in store.titled(words, TITLE_DEPTH, scope)
        if title_words((hit.heading_path or "").split(HEADING_SEPARATOR, 1)[0]) == words
    ]


def promote_titles(hits: Sequence[ChunkHit], titled: Sequence[ChunkHit], limit: int) -> list[ChunkHit]:
    """``titled`` ahead of ``hits``, every chunk once, at most ``limit``. Titled documents are
    ordered by their best-ranked chunk among ``hits`` (a document the query's words find
    nowhere else goes last, in document-id order)."""
    if not titled:
        return list(hits[:limit])
    best: dict[str, int] = {}
    for i, h in enumerate(hits):
        best.setdefault(h.path, i)
    first = sorted(titled, key=lambda h: (best.get(h.path, len(hits)), h.chunk_id))
    ids = {h.chunk_id for h in first}
    return (first + [h for h in hits if h.chunk_id not in ids])[:limit]
