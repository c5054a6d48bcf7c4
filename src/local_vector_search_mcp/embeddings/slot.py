"""The workspace's one embedder, built on first use and shared by indexing and search.

Building a provider loads nothing heavy (the local model loads on its first
call), but it can fail (an endpoint refused by policy): such a provider
becomes a :class:`FailingEmbedder`, so lexical search keeps working and
status and warnings say why.
"""

from __future__ import annotations

import threading
from typing import Any

from .base import Embedder, EmbeddingError, Vectors
from .factory import make_embedder

__all__ = ["EmbedderSlot", "FailingEmbedder"]


class FailingEmbedder:
    """Stands in for a provider that could not be built (e.g. refused endpoint)."""

    def __init__(self, provider: str, model: str, error: str) -> None:
        self.provider = provider
        self.model = model
        self._error = error

    def dimensions(self) -> int:
        raise EmbeddingError(self._error)

    def embed_passages(self, texts: list[str]) -> Vectors:
        raise EmbeddingError(self._error)

    def embed_query(self, text: str) -> Vectors:
        raise EmbeddingError(self._error)


def _enum(value: Any) -> str:
    return str(getattr(value, "value", value)).lower()


class EmbedderSlot:
    """``get()`` is the configured embedder, or ``None`` when ``embedding.provider`` is none."""

    def __init__(self, embedding_config: Any) -> None:
        self.config = embedding_config
        self._embedder: Embedder | None = None
        self._built = False
        self._lock = threading.Lock()
        self.generation = 0  # bumped by replace(): holders of the old embedder rebuild what uses it

    @property
    def provider(self) -> str:
        if self._built and self._embedder is not None:
            return str(self._embedder.provider)
        return _enum(self.config.provider)

    def get(self) -> Embedder | None:
        with self._lock:
            if not self._built:
                if _enum(self.config.provider) != "none":
                    try:
                        self._embedder = make_embedder(self.config)
                    except (EmbeddingError, ValueError) as exc:
                        self._embedder = FailingEmbedder(self.provider, self.config.model or "?", str(exc))
                self._built = True
            return self._embedder

    def replace(self, embedder: Embedder | None) -> None:
        """Use ``embedder`` instead of the configured one (tests, benchmarks)."""
        with self._lock:
            self._embedder, self._built = embedder, True
            self.generation += 1
