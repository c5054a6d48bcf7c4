"""Builds the configured embedding provider (the only module that knows them all)."""

from __future__ import annotations

from typing import Any

from .base import Embedder

__all__ = ["make_embedder"]


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
