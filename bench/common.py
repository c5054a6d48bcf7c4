"""Helpers shared by the benchmarks: a config-shaped object and a workspace."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def bench_config(
    provider: str = "none", vector_storage: str = "float32", max_input_tokens: int | None = None, **search: Any
) -> SimpleNamespace:
    return SimpleNamespace(
        embedding=SimpleNamespace(
            provider=provider,
            endpoint="http://localhost:11434/v1",
            api_key="ollama",
            model=None,
            dimensions=None,
            batch_size=16,
            timeout_seconds=120,
            allow_remote_endpoint=False,
            vector_storage=vector_storage,
            max_input_tokens=max_input_tokens,
        ),
        chunking=SimpleNamespace(
            max_chunk_bytes=4096, max_elements=20, include_heading_context=True, include_front_matter=True
        ),
        search=SimpleNamespace(**(_search_defaults() | search)),
        knowledge_base=SimpleNamespace(
            root=None, allow_writes=False, watch_files=False, include=["**/*.md"], exclude=[]
        ),
    )


def _search_defaults() -> dict[str, Any]:
    """The shipped search defaults (from the generated config model), so benches measure them."""
    from lvsm_contract.config import SearchConfig

    return SearchConfig().model_dump()


class BenchWorkspace:
    def __init__(self, root: Path, storage: Path, config: SimpleNamespace) -> None:
        self.root = Path(root)
        self.storage_path = Path(storage)
        self.config = config
        self._services: dict[type, Any] = {}
        self._lock = threading.Lock()

    def service(self, cls: type) -> Any:
        with self._lock:
            if cls not in self._services:
                self._services[cls] = cls(self)
            return self._services[cls]
