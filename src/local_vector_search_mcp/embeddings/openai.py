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
import threading
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from .base import EmbeddingError, Vectors, normalise

__all__ = ["OpenAICompatibleEmbedder", "is_loopback_url"]


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
        self._model = model
        self._dims = dimensions
        self._batch = max(1, batch_size)
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_seconds),
            headers={"Authorization": f"Bearer {api_key}"},
            transport=transport,
            trust_env=False,
        )
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self._model

    def dimensions(self) -> int:
        if self._dims is None:
            self._dims = int(self._request(["dimension probe"]).shape[1])
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
        out: Vectors = self._request([text])[0]
        return out

    def _request(self, texts: list[str]) -> Vectors:
        body: dict[str, Any] = {"model": self._model, "input": texts}
        try:
            with self._lock:
                response = self._client.post(self._url, json=body)
        except httpx.TimeoutException as exc:
            raise EmbeddingError(f"Embedding endpoint timed out ({type(exc).__name__}).") from exc
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"Embedding endpoint unreachable ({type(exc).__name__}).") from exc
        if response.status_code != 200:
            raise EmbeddingError(
                f"Embedding endpoint answered HTTP {response.status_code}; check embedding.model and endpoint."
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise EmbeddingError("Embedding endpoint returned a body that is not JSON.") from exc
        return self._validate(payload, len(texts))

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
                raise EmbeddingError("Embedding response vector holds a non-numeric or non-finite value.")
            rows[index] = vec
        width = len(rows[0] or [])
        if any(len(r or []) != width for r in rows):
            raise EmbeddingError("Embedding response vectors differ in size.")
        if self._dims is not None and width != self._dims:
            raise EmbeddingError(
                f"Embedding endpoint returned {width}-dimensional vectors; embedding.dimensions is {self._dims}."
            )
        return normalise(np.asarray(rows, dtype=np.float32))
