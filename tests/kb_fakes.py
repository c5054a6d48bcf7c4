"""What the index, search and embedding tests build on: a real :class:`Workspace`
made by ``config.load_settings`` with the shipped defaults (only the overrides a
test names differ, written to a real ``--config`` file), a deterministic
embedder and a tiny multilingual knowledge base.

:class:`KbClient` drives a workspace the way MCP and the CLI do (the
dispatcher for kb_search/kb_reindex/kb_status, the CLI's synchronous reindex)
and answers wire-shaped dicts, so tests check what agents see.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.embeddings import Embedder
from local_vector_search_mcp.handlers.indexing import reindex_result_model
from local_vector_search_mcp.workspace import Workspace

_config_files = itertools.count()


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def make_workspace(
    root: Path,
    provider: str = "none",
    *,
    storage: Path | None = None,
    embedder: Embedder | None = None,
    **overrides: Any,
) -> Workspace:
    """A real workspace over ``root`` (also its project root, so the index and the state
    folder sit in ``root/.local-vector-search-mcp/`` unless ``storage`` moves the index).

    ``overrides`` are ``section__key=value`` in snake case (``chunking__max_elements=5``);
    ``embedder`` replaces the configured provider's embedder (the config still names
    ``provider``, as a test double of that provider)."""
    options = CliOptions(root=".", storage_path=None if storage is None else str(storage), embedding_provider=provider)
    if overrides:
        data: dict[str, dict[str, Any]] = {}
        for dotted, value in overrides.items():
            section, key = dotted.split("__")
            data.setdefault(_camel(section), {})[_camel(key)] = value
        config_file = Path(tempfile.mkdtemp(prefix="lvsm-config-")) / f"config-{next(_config_files)}.yaml"
        config_file.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML
        options.config = str(config_file)
    ws = Workspace(load_settings(options, cwd=root, environ={}))
    if embedder is not None:
        ws.embedders.replace(embedder)
    return ws


class KbClient:
    """A workspace driven through the handlers, answering wire-shaped dicts."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    @property
    def store(self) -> Any:
        return self.ws.store

    @property
    def sync(self) -> Any:
        return self.ws.indexing.sync

    @property
    def config(self) -> Any:
        return self.ws.config

    @property
    def indexer(self) -> Any:
        return self.ws.indexing.indexer

    def embedder(self) -> Any:
        return self.ws.embedders.get()

    def use_embedder(self, embedder: Embedder | None) -> None:
        self.ws.embedders.replace(embedder)

    def reindex(self, scope: str = "changed", force: bool = False) -> dict[str, Any]:
        return reindex_result_model(self.ws.indexing.reindex(scope, force)).model_dump(by_alias=True)

    def start_reindex(self, scope: str = "changed", force: bool = False) -> dict[str, Any]:
        return invoke(self.ws, "kb_reindex", {"request": {"scope": scope, "force": force}})

    def search(self, query: str, mode: str | None = None, top_k: int | None = None, **globs: Any) -> dict[str, Any]:
        request: dict[str, Any] = {"query": query}
        if mode is not None:
            request["mode"] = mode
        if top_k is not None:
            request["topK"] = top_k
        request.update({_camel(k): v for k, v in globs.items()})
        return invoke(self.ws, "kb_search", {"request": request})

    def status_fields(self) -> dict[str, Any]:
        return invoke(self.ws, "kb_status", {})

    def indexing_status(self) -> dict[str, Any]:
        result: dict[str, Any] = self.status_fields()["indexing"]
        return result

    def vector_status(self) -> dict[str, Any] | None:
        result: dict[str, Any] | None = self.status_fields()["vectors"]
        return result

    def schedule_sync(self, paths: list[str]) -> None:
        self.ws.indexing.schedule_sync(paths)

    def start_watching(self) -> None:
        self.ws.indexing.start_watching()

    def wait_reindex(self, timeout: float | None = None) -> None:
        self.ws.indexing.wait_reindex(timeout)

    def wait_vectors(self, timeout: float | None = None) -> None:
        self.ws.indexing.wait_vectors(timeout)

    def shutdown(self) -> None:
        self.ws.close()


def client(root: Path, provider: str = "none", **kwargs: Any) -> KbClient:
    return KbClient(make_workspace(root, provider, **kwargs))


# The tokenizer of the release before decision 1001's folds, whose indexes decision 1006 upgrades in place.
BEFORE_FOLDS = "unicode61+cjk-bigram-3+stems-3"


def reindex_before_folds(kb: KbClient, monkeypatch: Any, name: str | None = BEFORE_FOLDS) -> None:
    """Reindex ``kb`` as the release before decision 1001 did (no letter folded) and record ``name``
    as its tokenizer (``None``: the manifest as the pass wrote it), as an index that release wrote."""
    from local_vector_search_mcp.index import cjk

    with monkeypatch.context() as patch:
        patch.setattr(cjk, "fold", lambda text: text)
        kb.reindex()
    if name is not None:
        kb.store.write_manifest({**kb.store.read_manifest(), "lexical_tokenizer": name})


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


def indexed_kb(tmp_path: Path, files: dict[str, str], **overrides: Any) -> KbClient:
    """A lexical index of ``files`` (name -> text) under ``tmp_path / "kb"``; ``overrides`` as
    :func:`make_workspace` takes them (``engine_storage`` puts the index in PostgreSQL)."""
    root = tmp_path / "kb"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, "utf-8")
    svc = KbClient(make_workspace(root, **overrides))
    svc.reindex()
    return svc


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
