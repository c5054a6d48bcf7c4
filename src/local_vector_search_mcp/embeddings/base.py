"""The embedding port: what every provider offers (implementations never import each other)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "EmbeddingError", "EmbeddingRefused", "ModelChanged", "Vectors", "normalise"]

Vectors = npt.NDArray[np.float32]


class EmbeddingError(Exception):
    """The provider could not produce vectors; ``str(e)`` is safe to surface."""


class EmbeddingRefused(EmbeddingError):
    """The provider answers, but not for these texts: it refused the request (an input over its
    context length, a batch too large) or gave one of them an unusable vector. One text among
    them may be at fault, so the vector pass splits the batch to find it (decision 510)."""


# Only an endpoint can start answering with another model under the same settings; the bundled model
# changes only with embedding.model.
_WHAT_CHANGED = {"openai-compatible": "the model behind embedding.endpoint changed"}


class ModelChanged(EmbeddingError):
    """The provider's vectors are no longer the size the index holds: another model answers behind
    the same configuration. Its vectors are never stored beside, nor compared with, the old ones
    (decision 512)."""

    def __init__(self, width: int, dims: int, configured: bool = False, provider: str = "openai-compatible") -> None:
        if configured:  # the size is the user's setting, which a forced rebuild keeps (decision 803)
            message = (
                f"embedding.dimensions is {dims}, but the embedding provider returns {width}-dimensional vectors: "
                f"set embedding.dimensions to {width}, or remove it to take the model's own size, then run "
                "kb_reindex force=true (CLI: --reindex --force)."
            )
        else:
            message = (
                f"The embedding provider now returns {width}-dimensional vectors, but this index holds "
                f"{dims}-dimensional ones: {_WHAT_CHANGED.get(provider, 'the embedding model changed')}. "
                "Vectors of two models are never mixed; run kb_reindex force=true (CLI: --reindex --force) to "
                "embed everything with the new one."
            )
        super().__init__(message)
        self.width, self.dims = width, dims


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
