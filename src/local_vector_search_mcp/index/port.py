"""The storage port: everything the engine asks of an index store.

The engine (reindex, sync, search) talks only to :class:`IndexStore`; every
SQL dialect detail lives in an adapter (``sqlite.py`` now; a PostgreSQL +
pgvector adapter implements the same protocol). Records are plain dataclasses.

Lexical text handed to the store is already CJK-processed by the engine
(``search.text.cjk_index_text``) and lexical queries arrive as FTS-style
expressions built by ``search.text.build_lexical_query``; an adapter with
another full-text engine translates them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = [
    "ChunkHit",
    "ChunkRecord",
    "DocumentRecord",
    "DocumentState",
    "ElementRecord",
    "IndexStore",
    "PathFilter",
    "StoreCounts",
]

PathFilter = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class DocumentState:
    """What the cheap unchanged-file check needs."""

    id: int
    path: str
    source_hash: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    path: str
    source_hash: str
    size: int
    mtime_ns: int
    indexed_at_utc: str


@dataclass(frozen=True, slots=True)
class ElementRecord:
    pointer: str
    kind: str
    start_line: int
    end_line: int
    heading_path: str | None
    ordinal: int
    self_hash: str
    subtree_hash: str


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One chunk to store. ``lexical_text``/``lexical_heading`` are the FTS
    inputs; ``vector`` is set only in vector-enabled mode."""

    ordinal: int
    pointer: str
    anchor: str
    text: str
    heading_path: str | None
    embedding_text_hash: str
    lexical_text: str
    lexical_heading: str
    vector: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True, slots=True)
class ChunkHit:
    chunk_id: int
    path: str
    anchor: str
    heading_path: str | None
    text: str
    source_hash: str
    distance: float | None = None


@dataclass(frozen=True, slots=True)
class StoreCounts:
    documents: int
    chunks: int
    last_indexed_at_utc: str | None


class IndexStore(Protocol):
    """An index store. Implementations must be safe for one writer and many
    readers across threads and processes (each thread gets its own session)."""

    # lifecycle and manifest -------------------------------------------------
    def exists(self) -> bool: ...

    def ensure_schema(self, vector_dimensions: int | None, vector_storage: str) -> None:
        """Create missing tables (never drops anything)."""
        ...

    def reset(self, vector_dimensions: int | None, vector_storage: str) -> None:
        """Drop and recreate every derived table (forced rebuild)."""
        ...

    def read_manifest(self) -> dict[str, str]: ...

    def write_manifest(self, values: dict[str, str]) -> None: ...

    def has_vectors(self) -> bool: ...

    # documents ----------------------------------------------------------------
    def document_states(self) -> dict[str, DocumentState]: ...

    def touch_document(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a document whose content hash is unchanged."""
        ...

    def replace_document(
        self, doc: DocumentRecord, elements: Sequence[ElementRecord], chunks: Sequence[ChunkRecord]
    ) -> int:
        """Atomically replace one document's rows; returns the chunk count."""
        ...

    def delete_document(self, path: str) -> bool: ...

    def vectors_by_text_hash(self, path: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors of one document keyed by embedding-text hash (reuse on re-embed)."""
        ...

    def counts(self) -> StoreCounts: ...

    # retrieval ----------------------------------------------------------------
    def lexical(self, match: str, limit: int, path_filter: PathFilter | None) -> list[ChunkHit]:
        """Chunks matching an FTS expression, best BM25 first, filtered before the limit."""
        ...

    def semantic(
        self, vector: npt.NDArray[np.float32], limit: int, path_filter: PathFilter | None
    ) -> list[ChunkHit]:
        """Nearest chunks to ``vector``, filtered before the limit."""
        ...

    def write_lock(self) -> AbstractContextManager[None]:
        """Serialise multi-statement writers (reindex, sync) within this process."""
        ...

    def close(self) -> None: ...


def iter_batches(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
