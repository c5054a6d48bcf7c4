"""The embedding port: what every provider offers (implementations never import each other)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "EmbeddingError", "Vectors", "normalise"]

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
