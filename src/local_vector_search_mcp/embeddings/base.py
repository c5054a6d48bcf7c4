"""The embedding port and the provider factory."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "EmbeddingError", "Vectors", "make_embedder"]

Vectors = npt.NDArray[np.float32]


class EmbeddingError(Exception):
    """The provider could not produce vectors; ``str(e)`` is safe to surface."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of one fixed size."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def dimensions(self) -> int:
        """Vector size; may call the provider once to find out."""
        ...

    def embed_passages(self, texts: list[str]) -> Vectors:
        """Vectors for document chunks, shape ``(len(texts), dimensions)``."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Vector for a search query, shape ``(dimensions,)``."""
        ...


def normalise(mat: Vectors) -> Vectors:
    norms = np.linalg.norm(mat, axis=-1, keepdims=True)
    out: Vectors = (mat / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return out


def make_embedder(embedding: Any) -> Embedder | None:
    """Build the provider named by ``embedding.provider`` (``None`` for ``none``)."""
    provider = str(getattr(embedding, "provider", "none")).lower()
    if provider == "none":
        return None
    if provider == "local":
        from .local import LocalEmbedder

        return LocalEmbedder(
            model=getattr(embedding, "model", None),
            batch_size=embedding.batch_size,
            max_tokens=getattr(embedding, "max_input_tokens", None),
            workers=getattr(embedding, "workers", None),
        )
    if provider == "openai-compatible":
        from .openai import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(
            endpoint=embedding.endpoint,
            api_key=embedding.api_key,
            model=embedding.model,
            dimensions=embedding.dimensions,
            batch_size=embedding.batch_size,
            timeout_seconds=float(embedding.timeout_seconds),
            allow_remote_endpoint=bool(embedding.allow_remote_endpoint),
        )
    raise ValueError(f"Unknown embedding provider {provider!r}.")
