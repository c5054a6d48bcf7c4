"""The query vectors of recent searches, kept per embedder (decision 659).

An agent asks the same question again: in another mode, with another ``topK`` or scope, after an
edit, or from another client of the same server. Each time the model embedded it anew: 15-30 ms
of the bundled model's CPU (the larger part of a semantic search at 50,000 chunks), or a round trip
to an embedding endpoint. A query's vector depends only on the embedder and the text, so the last
:data:`KEPT` are kept; another embedder (a model or endpoint changed) starts afresh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..embeddings import Embedder
from ..embeddings.base import Vectors

__all__ = ["KEPT", "QueryVectors", "embedding_query"]

KEPT = 256  # 384 floats each: 0.4 MB


def embedding_query(query: str) -> str:
    """The text a query is embedded as: its whitespace collapsed. The model's tokenizer reads a
    trailing space or newline as a token of its own (decision 1008); kb_search and the chunk API's
    search_knowledge embed the same words alike (decision 1013)."""
    return " ".join(query.split())


class QueryVectors:
    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._embedder: Embedder | None = None
        self._vectors: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every kept vector (the benches time each search with its embedding)."""
        with self._lock:
            self._vectors.clear()

    def get(self, embedder: Embedder, query: str) -> Vectors:
        """``embedder.embed_query(query)``, from the kept vectors when it was asked before.
        The vector is read-only: it is handed to every search that asks the same.

        The query is embedded as :func:`embedding_query` writes it: `what is a trait object\n`
        ranked seven of the ten results differently from the same words without the newline."""
        query = embedding_query(query)
        with self._lock:
            if embedder is self._embedder and query in self._vectors:
                self._vectors.move_to_end(query)
                return self._vectors[query]
        vector = embedder.embed_query(query)  # outside the lock: other queries do not wait for it
        vector.setflags(write=False)
        with self._lock:
            if embedder is not self._embedder:
                self._embedder = embedder
                self._vectors.clear()
            self._vectors[query] = vector
            self._vectors.move_to_end(query)
            while len(self._vectors) > self.kept:
                self._vectors.popitem(last=False)
        return vector
