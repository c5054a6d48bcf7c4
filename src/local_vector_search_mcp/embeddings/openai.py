"""OpenAI-compatible ``/embeddings`` client (Ollama, llama.cpp, LM Studio, vLLM...).

POST ``<endpoint>/embeddings`` with ``{"model", "input": [...]}`` and a bearer
key; the response must hold exactly one ``data[i].embedding`` per input, each
``index`` in range and unique, every vector numeric, finite, non-empty and of
one size. Anything else is an :class:`EmbeddingError` whose message names the
problem but never echoes the body, the texts or the key.

Endpoints must be loopback (``localhost``, ``127.0.0.0/8``, ``::1``) unless
``allowRemoteEndpoint`` is set, so document text never leaves the machine by
accident.
"""

from __future__ import annotations

import ipaddress
import math
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from ..retry_after import retry_after
from .base import EmbeddingError, EmbeddingRefused, ModelChanged, Vectors, normalise

__all__ = [
    "PASSAGE_PATIENCE",
    "QUERY_PATIENCE",
    "OpenAICompatibleEmbedder",
    "Patience",
    "is_loopback_url",
]

# Busy, loading a model (Ollama's 503), a gateway between: asked again after a while.
TRANSIENT_STATUS = frozenset({408, 429, 502, 503, 504})
# The endpoint refuses these inputs: 400/422 an input over the context length (OpenAI, vLLM),
# 413 a batch over the server's limit, 500 what llama.cpp's server answers for an over-long input.
REFUSED_STATUS = frozenset({400, 413, 422, 500})


@dataclass(frozen=True, slots=True)
class Patience:
    """How long a request keeps trying: ``attempts`` in all, waiting ``first * 2**n`` between
    them (or the endpoint's ``Retry-After``), never longer than ``max_wait`` at once (a longer
    ``Retry-After`` fails at once: the vector pass's own timer comes back later, decision 135)."""

    attempts: int
    first: float
    max_wait: float
    timeout: float | None = None  # caps embedding.timeoutSeconds for one request

    def backoff(self, attempt: int) -> float:
        return float(min(self.first * 2**attempt, self.max_wait))


PASSAGE_PATIENCE = Patience(attempts=5, first=1.0, max_wait=60.0)  # at most ~2 min of waits
# A search (and the reindex's size probe, which lexical indexing waits for) waits ~2 s for a
# retry and 10 s for an answer at most; then lexical search answers, or indexing goes on lexically.
QUERY_PATIENCE = Patience(attempts=2, first=0.5, max_wait=2.0, timeout=10.0)


def is_loopback_url(url: str) -> bool:
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAICompatibleEmbedder:
    provider = "openai-compatible"

    def __init__(
        self,
        *,
        endpoint: str,
        api_key: str,
        model: str | None,
        dimensions: int | None = None,
        batch_size: int = 16,
        timeout_seconds: float = 120.0,
        allow_remote_endpoint: bool = False,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EmbeddingError(f"Embedding endpoint must be an absolute http(s) URL, got {endpoint!r}.")
        if not allow_remote_endpoint and not is_loopback_url(endpoint):
            raise EmbeddingError(
                "Embedding endpoint is not on this machine; set embedding.allowRemoteEndpoint: true "
                "to send document text to it."
            )
        if not model:
            raise EmbeddingError("embedding.model is required for the openai-compatible provider.")
        self._url = endpoint.rstrip("/") + "/embeddings"
        # how messages name the endpoint: without a user or password it may hold (decision 882)
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        port = f":{parts.port}" if parts.port else ""
        self._shown = f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"
        self._model = model
        self._dims = dimensions
        self._configured_dims = dimensions
        self._batch = max(1, batch_size)
        self._timeout = timeout_seconds
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_seconds),
            headers={"Authorization": f"Bearer {api_key}"},
            transport=transport,
            trust_env=False,
        )

    @property
    def model(self) -> str:
        return self._model

    def _unreachable(self, exc: httpx.HTTPError) -> EmbeddingError:
        """Nothing answers at the endpoint: say where, and the usual cause (notes 16: the
        embedding server is not running)."""
        return EmbeddingError(
            f"Embedding endpoint unreachable at {self._shown} ({type(exc).__name__}): start the embedding "
            "server (Ollama: ollama serve) or fix embedding.endpoint."
        )

    def dimensions(self) -> int:
        if self._dims is None:
            self._dims = int(self._request(["dimension probe"], patience=QUERY_PATIENCE).shape[1])
        return self._dims

    def close(self) -> None:
        self._client.close()

    def embed_passages(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimensions()), dtype=np.float32)
        parts = [self._request(texts[i : i + self._batch]) for i in range(0, len(texts), self._batch)]
        out: Vectors = np.vstack(parts)
        return out

    def embed_query(self, text: str) -> Vectors:
        # a search is waiting: one quick retry at most, then lexical search answers (decision 511)
        out: Vectors = self._request([text], patience=QUERY_PATIENCE)[0]
        return out

    def _request(self, texts: list[str], patience: Patience | None = None) -> Vectors:
        """POST one batch; transient failures (429, 503 while a model loads, a dropped connection)
        are retried within ``patience``; a refusal is :class:`EmbeddingRefused`."""
        patience = patience or PASSAGE_PATIENCE
        body: dict[str, Any] = {"model": self._model, "input": texts}
        timeout = self._timeout if patience.timeout is None else min(self._timeout, patience.timeout)
        for attempt in range(patience.attempts):
            last = attempt + 1 == patience.attempts
            try:
                # no lock around the request: httpx's pool is thread-safe, and a search's query
                # must not wait behind a pass's batch the endpoint takes long over (decision 802)
                response = self._client.post(self._url, json=body, timeout=timeout)
            except httpx.TimeoutException as exc:  # it has waited timeoutSeconds already
                raise EmbeddingError(f"Embedding endpoint timed out ({type(exc).__name__}).") from exc
            except httpx.ConnectError as exc:
                # nothing listens: the endpoint is down, and waiting here would hold up lexical
                # indexing (decision 135); the vector pass's timer tries again later
                raise self._unreachable(exc) from exc
            except httpx.HTTPError as exc:  # reset or closed mid-request (a stale kept-alive connection)
                if last:
                    raise self._unreachable(exc) from exc
                self._sleep(0.0 if attempt == 0 else patience.backoff(attempt))
                continue
            status = response.status_code
            if status == 200:
                break
            if status in TRANSIENT_STATUS:
                wait = retry_after(response.headers.get("retry-after"))
                wait = patience.backoff(attempt) if wait is None else wait
                if last or wait > patience.max_wait:
                    raise EmbeddingError(
                        f"Embedding endpoint is busy (HTTP {status}"
                        + (f", asks to retry after {wait:.0f} s" if wait > patience.max_wait else "")
                        + ")."
                    )
                self._sleep(wait)
                continue
            if status in REFUSED_STATUS:
                raise EmbeddingRefused(
                    f"Embedding endpoint refused the input (HTTP {status}; an input over the model's context "
                    "length, or a batch over the server's limit, is the usual cause)."
                )
            if status == 404:  # Ollama's answer for a model it does not have; a wrong path's too
                raise EmbeddingError(
                    f"Embedding endpoint {self._shown} answered HTTP 404: the model '{self._model}' is not "
                    f"installed there (Ollama: ollama pull {self._model}), or embedding.endpoint lacks its "
                    "API path (Ollama: /v1)."
                )
            raise EmbeddingError(
                f"Embedding endpoint {self._shown} answered HTTP {status}; check embedding.model and endpoint"
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise EmbeddingError("Embedding endpoint returned a body that is not JSON.") from exc
        return self._validate(payload, len(texts))

    def _sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def _validate(self, payload: Any, count: int) -> Vectors:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise EmbeddingError("Embedding response has no 'data' list.")
        if len(data) != count:
            raise EmbeddingError(f"Embedding response has {len(data)} items for {count} inputs.")
        rows: list[list[float] | None] = [None] * count
        for pos, item in enumerate(data):
            if not isinstance(item, dict):
                raise EmbeddingError("Embedding response item is not an object.")
            index = item.get("index", pos)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise EmbeddingError("Embedding response item has an index out of range.")
            if rows[index] is not None:
                raise EmbeddingError("Embedding response has a duplicate index.")
            vec = item.get("embedding")
            if not isinstance(vec, list) or not vec:
                raise EmbeddingError("Embedding response item has no embedding vector.")
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in vec):
                # one input's vector, in a well-formed answer: a model can turn one text into NaN
                # (llama.cpp writes it as null), so the pass isolates that text (decision 800)
                raise EmbeddingRefused("Embedding response vector holds a non-numeric or non-finite value.")
            rows[index] = vec
        width = len(rows[0] or [])
        if any(len(r or []) != width for r in rows):  # one input's answer is odd: find which
            raise EmbeddingRefused("Embedding response vectors differ in size.")
        if self._dims is not None and width != self._dims:
            expected = self._dims
            if self._configured_dims is None:  # probed, not configured: the next probe learns the new size
                self._dims = None
            raise ModelChanged(width, expected, configured=self._configured_dims is not None)
        mat = np.asarray(rows, dtype=np.float32)
        if not np.all(np.isfinite(mat)):  # finite in JSON, past float32's range: normalised to NaN
            raise EmbeddingRefused("Embedding response vector holds a non-finite value as float32.")
        if not np.all(np.linalg.norm(mat, axis=1) > 0):  # a zero vector matches nothing: never stored
            raise EmbeddingRefused("Embedding endpoint returned a zero vector for an input.")
        return normalise(mat)
