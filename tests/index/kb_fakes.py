"""Fakes shared by the index, search and embedding tests: a config-shaped
object (no dependency on the generated config model), a workspace, a
deterministic embedder and a tiny multilingual knowledge base."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np


def make_config(provider: str = "none", **overrides: Any) -> SimpleNamespace:
    embedding = SimpleNamespace(
        provider=provider,
        endpoint="http://localhost:11434/v1",
        api_key="ollama",
        model=None,
        dimensions=None,
        batch_size=16,
        timeout_seconds=30,
        allow_remote_endpoint=False,
        vector_storage="float32",
    )
    chunking = SimpleNamespace(
        max_chunk_bytes=4096, max_elements=20, include_heading_context=True, include_front_matter=True
    )
    search = SimpleNamespace(
        default_mode="hybrid", semantic_candidate_pool_size=50, lexical_candidate_pool_size=50, max_results=10, rrf_k=60
    )
    kb = SimpleNamespace(root=None, allow_writes=False, watch_files=False, include=["**/*.md"], exclude=[])
    cfg = SimpleNamespace(embedding=embedding, chunking=chunking, search=search, knowledge_base=kb)
    for dotted, value in overrides.items():
        section, key = dotted.split("__")
        setattr(getattr(cfg, section), key, value)
    return cfg


class FakeWorkspace:
    def __init__(self, root: Path, config: SimpleNamespace, storage: Path | None = None) -> None:
        self.root = root
        self.config = config
        self.storage_path = storage or root / ".local-vector-search-mcp" / "index.db"
        self._services: dict[type, Any] = {}
        self._lock = threading.Lock()

    def service(self, cls: type) -> Any:
        with self._lock:
            if cls not in self._services:
                self._services[cls] = cls(self)
            return self._services[cls]


class HashEmbedder:
    """Deterministic bag-of-words vectors: similar word sets -> similar vectors."""

    provider = "local"
    model = "test/hash-embedder"

    def __init__(self, dims: int = 64, fail: bool = False) -> None:
        self.dims = dims
        self.fail = fail
        self.calls = 0

    def dimensions(self) -> int:
        return self.dims

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dims, dtype=np.float32)
        for word in text.lower().split():
            h = int(hashlib.md5(word.encode()).hexdigest(), 16)
            v[h % self.dims] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v + 1.0 / np.sqrt(self.dims)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if self.fail:
            from local_vector_search_mcp.embeddings import EmbeddingError

            raise EmbeddingError("provider down")
        self.calls += len(texts)
        return np.vstack([self._vec(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if self.fail:
            from local_vector_search_mcp.embeddings import EmbeddingError

            raise EmbeddingError("provider down")
        return self._vec(text)


def make_kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "notes").mkdir(parents=True)
    (root / "guide.md").write_text(
        "# Guide\n\nInstall the tool with pip.\n\n## Errors\n\nUse Rc::strong_count to inspect references.\n",
        encoding="utf-8",
    )
    (root / "notes" / "zh.md").write_text(
        "# 状态管理\n\n在组件之间共享状态可以使用响应式 API。\n\n## 侦听器\n\n侦听器在状态变化时执行副作用。\n",
        encoding="utf-8",
    )
    (root / "notes" / "ja.md").write_text("# 天気\n\n東京都の天気は晴れです。雨は降りません。\n", encoding="utf-8")
    return root
