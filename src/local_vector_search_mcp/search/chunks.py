"""The chunk and vector API (NoteHarbor's ``chunks`` tool set) over the storage port.

Semantics (spec/decisions.md 143-147): Markdown chunks are read-only and named
``md:<path>#<chunkIndex>``; external chunks live in their own collections that
reindexing never touches; vectors are compared by cosine similarity after being
normalised; filters run inside retrieval; ``list_chunks`` pages with an opaque cursor.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..embeddings import EmbedderSlot
from ..errors import IndexNotReady, InvalidArgument, NotFound, PermissionDenied
from ..index.activity import IndexActivity
from ..index.chunks import (
    MARKDOWN,
    ChunkFilterSpec,
    ExternalChunk,
    OtherCollection,
    StoredChunk,
    is_markdown_id,
    parse_markdown_chunk_id,
)
from ..index.port import IndexStore
from .query_vectors import embedding_query

__all__ = ["DEFAULT_COLLECTION", "ChunkApi", "Page"]

DEFAULT_COLLECTION = "external"
DEFAULT_TOP_K = 10
MAX_TOP_K = 100
_BITS = {"float32": 32, "float16": 16, "int8": 8, "binary": 1}


def read_only(chunk_id: str, verb: str) -> PermissionDenied:
    return PermissionDenied(
        f"Chunk {chunk_id!r} is derived from the Markdown and cannot be {verb} here: the Markdown is the single "
        "source of truth. Change the document with kb_patch (or kb_delete); its chunks follow on re-indexing."
    )


@dataclass(frozen=True)
class Page:
    chunks: list[StoredChunk]
    next_cursor: str | None


def filter_spec(value: Any) -> ChunkFilterSpec:
    """A ``ChunkFilter`` model (or None) as data for the store."""
    if value is None:
        return ChunkFilterSpec()
    data = value.model_dump(by_alias=True, exclude_none=True) if hasattr(value, "model_dump") else dict(value)
    collections = data.get("collections")
    return ChunkFilterSpec(
        path_prefix=data.get("pathPrefix") or None,
        path_globs=tuple(data.get("pathGlobs") or ()),
        tags=tuple(data.get("tags") or ()),
        metadata=tuple(sorted((data.get("metadata") or {}).items())),
        collections=tuple(str(c.root if hasattr(c, "root") else c) for c in collections) if collections else None,
    )


NUL = "\x00"


def _holds_nul(*values: Any) -> bool:
    """Whether any text in ``values`` (nested lists, tuples, mappings' keys and values) holds U+0000."""
    for value in values:
        if isinstance(value, str):
            if NUL in value:
                return True
        elif isinstance(value, Mapping):
            if _holds_nul(*value.keys(), *value.values()):
                return True
        elif isinstance(value, list | tuple) and _holds_nul(*value):
            return True
    return False


def _refuse_nul(**fields: Any) -> None:
    """U+0000 is refused in what a caller stores (decision 360): PostgreSQL's text and jsonb
    cannot hold it, and both engines answer alike."""
    for name, value in fields.items():
        if _holds_nul(value):
            raise InvalidArgument(
                f"{name} holds the character U+0000 (NUL), which the index cannot store; remove or replace it."
            )


def _encode(cursor: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(cursor, ensure_ascii=False).encode()).decode().rstrip("=")


def _listing(source_path: str | None, collection: str | None) -> str:
    """The filters a cursor belongs to (decision 734), short: the cursor stays well under 2048."""
    return hashlib.sha256(json.dumps([source_path, collection]).encode()).hexdigest()[:16]


def _decode(cursor: str, listing: str) -> tuple[str, tuple[Any, Any]]:
    try:
        token = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        # a position in another listing would skip or repeat chunks silently (decision 734);
        # a cursor of three parts comes from a server before it and is taken as it was
        if isinstance(token, list) and len(token) == 4 and token.pop() != listing:
            raise InvalidArgument(
                "cursor belongs to a listing with other filters (sourcePath, collection): pass the same "
                "filters as for the page it came from, or start again without a cursor."
            )
        kind, a, b = token
        # an ordinal list_chunks wrote: an int, not a bool, within SQLite's integer (decision 676)
        if kind == "m" and isinstance(a, str) and type(b) is int and 0 <= b < 2**63 and NUL not in a:
            return "m", (a, b)
        if kind == "x" and isinstance(a, str) and isinstance(b, str) and not _holds_nul(a, b):
            return "x", (a, b)
    except (ValueError, TypeError):
        pass
    raise InvalidArgument("cursor was not produced by list_chunks; start again without a cursor.")


class ChunkApi:
    def __init__(self, config: Any, store: IndexStore, embedders: EmbedderSlot, activity: IndexActivity) -> None:
        self.config = config
        self.store = store
        self.embedders = embedders
        self.activity = activity

    # vectors ----------------------------------------------------------------------
    def expected_dimensions(self) -> int | None:
        return self.store.vector_dimensions() or self.config.embedding.dimensions

    def vector(self, values: Sequence[float], field: str = "embedding") -> npt.NDArray[np.float32]:
        """The caller's vector checked against the index's size and normalised to unit length.

        Scaled by its largest magnitude in double precision first (decision 362): any finite,
        not all-zero vector has a direction, ``[1e300, 1e300]`` and ``[1e-40, 0]`` included,
        whose squares overflow or vanish in float32."""
        expected = self.expected_dimensions()
        if expected is not None and len(values) != expected:
            raise InvalidArgument(
                f"{field} has {len(values)} dimension{'' if len(values) == 1 else 's'} but the index stores "
                f"{expected}-dimensional vectors."
            )
        vec = np.asarray(values, dtype=np.float64)
        if not np.isfinite(vec).all():
            raise InvalidArgument(f"{field} has a component that is not a finite number.")
        peak = float(np.max(np.abs(vec))) if len(vec) else 0.0
        if peak == 0.0:
            raise InvalidArgument(f"{field} must not be all zeros.")
        vec = vec / peak
        unit_vector: npt.NDArray[np.float32] = (vec / float(np.linalg.norm(vec))).astype(np.float32)
        return unit_vector

    def quantization_bits(self) -> int | None:
        if self.embedders.get() is None:
            return None
        from ..index.manifest import enum_value

        return _BITS.get(enum_value(self.config.embedding.vector_storage), 32)

    # reads ---------------------------------------------------------------------------
    def get(self, chunk_id: str, with_vector: bool = False) -> StoredChunk:
        md = parse_markdown_chunk_id(chunk_id)
        if NUL in chunk_id:  # never stored (decision 360)
            pass
        elif md is not None:
            found = self.store.markdown_chunks(md[0], (md[0], md[1] - 1), 1, with_vector)
            if found and found[0].chunk_index == md[1]:
                return found[0]
        elif not is_markdown_id(chunk_id):
            chunk = self.store.external_chunk(chunk_id, with_vector)
            if chunk is not None:
                return self._sized(chunk, self.store.vector_dimensions())
        raise NotFound(f"No chunk has the id {chunk_id!r}; list_chunks shows the current ids.")

    @staticmethod
    def _sized(chunk: StoredChunk, dims: int | None) -> StoredChunk:
        """An external vector of another size than the index's is never compared (a forced rebuild
        with another model keeps the chunk, decision 145): shown stale, as search leaves it out
        until update_chunk gives an embedding of the index's size (decision 735)."""
        if chunk.stale or dims is None or chunk.dimensions in (None, dims):
            return chunk
        return replace(chunk, stale=True)

    def page(self, source_path: str | None, collection: str | None, cursor: str | None, limit: int) -> Page:
        listing = _listing(source_path, collection)
        kind, key = _decode(cursor, listing) if cursor else ("m", None)
        if source_path is not None and NUL in source_path:  # no source path holds one (decision 360)
            return Page([], None)
        out: list[StoredChunk] = []
        if kind == "m" and collection in (None, MARKDOWN):
            out += self.store.markdown_chunks(source_path, key if key else None, limit + 1)
        if len(out) <= limit and collection != MARKDOWN:
            after = key if kind == "x" else None
            dims = self.store.vector_dimensions()
            found = self.store.external_chunks(collection, source_path, after, limit + 1 - len(out))
            out += [self._sized(c, dims) for c in found]
        if len(out) <= limit:
            return Page(out, None)
        out = out[:limit]
        last = out[-1]
        token = (
            ["m", last.source_path, last.chunk_index]
            if last.collection == MARKDOWN
            else ["x", last.collection, last.id]
        )
        return Page(out, _encode([*token, listing]))

    def search(
        self, vector: npt.NDArray[np.float32], top_k: int | None, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        self.search_ready()
        if _holds_nul(spec.path_prefix, spec.path_globs, spec.tags, spec.metadata):
            return []  # no stored chunk holds U+0000 (decision 360)
        return self.store.nearest_chunks(vector, min(top_k or DEFAULT_TOP_K, MAX_TOP_K), spec)

    def search_ready(self) -> None:
        if self.activity.rebuild_in_progress:
            raise IndexNotReady("Index rebuild in progress (a forced kb_reindex); check kb_status and retry.")
        if self.store.vector_dimensions() is None:
            raise IndexNotReady(
                "No vector is stored yet: index the Markdown with embeddings on (kb_reindex, index_note) "
                "or store external chunks with upsert_vector."
            )

    def query_vector(self, query: str) -> npt.NDArray[np.float32]:
        from ..embeddings import EmbeddingError

        embedder = self.embedders.get()
        if embedder is None:
            manifest = self.store.read_manifest()
            if manifest.get("index_mode") == "vector-enabled":  # built with a model, used without it (630)
                raise IndexNotReady(
                    "Embeddings are off in this run (embedding.provider: none), so a query cannot be embedded, "
                    f"although the index was built with '{manifest.get('embedding_model')}': run with the provider "
                    "it was built with (its vectors are kept), use search_vectors with your own vector, or "
                    "kb_search for lexical search."
                )
            raise IndexNotReady(
                "Embeddings are off (embedding.provider: none), so a query cannot be embedded; use search_vectors "
                "with your own vector, or kb_search for lexical search."
            )
        try:
            vec = np.asarray(embedder.embed_query(embedding_query(query)), dtype=np.float32).reshape(-1)
        except EmbeddingError as exc:
            # what the agent can do meanwhile (decision 1121): the text and its own vectors are still searchable
            raise IndexNotReady(
                f"The embedding provider failed: {exc} Meanwhile, kb_search with mode lexical searches "
                "the text and search_vectors takes your own vector."
            ) from None
        dims = self.store.vector_dimensions()
        if dims is not None and vec.shape[0] != dims:  # another model's query: never compared (decision 512)
            # More than ModelChanged's advice: a forced rebuild re-embeds the Markdown but keeps external chunks,
            # whose size may be the one that differs (decision 679).
            raise IndexNotReady(
                f"search_knowledge embeds the query with this run's model '{embedder.model}', which makes "
                f"{vec.shape[0]}-dimensional vectors, but the stored chunk vectors are {dims}-dimensional, and "
                "vectors of two models are never compared. If the Markdown was embedded by another model (or the "
                "model behind an endpoint changed), kb_reindex force=true (CLI: --reindex --force) embeds it again; "
                f"vectors given to upsert_vector keep their size. Or use search_vectors with a {dims}-dimensional "
                "vector."
            )
        return vec / max(float(np.linalg.norm(vec)), 1e-12)

    # writes --------------------------------------------------------------------------
    def upsert(
        self,
        chunk_id: str | None,
        source_path: str,
        chunk_index: int,
        content: str,
        embedding: Sequence[float],
        metadata: Mapping[str, Any] | None,
        collection: str | None,
    ) -> tuple[str, bool]:
        if chunk_id is not None and is_markdown_id(chunk_id):
            raise read_only(chunk_id, "replaced")
        if collection == MARKDOWN:
            raise InvalidArgument(
                "The collection name `markdown` is reserved for chunks derived from the Markdown; choose another "
                f"collection, or leave it out for `{DEFAULT_COLLECTION}`."
            )
        _refuse_nul(id=chunk_id, sourcePath=source_path, content=content, metadata=metadata)
        vector = self.vector(embedding)
        final_id = chunk_id or f"ext_{uuid.uuid4().hex}"
        chunk = ExternalChunk(
            final_id, collection or DEFAULT_COLLECTION, source_path, chunk_index, content, dict(metadata or {}), vector
        )
        # The store checks the collection inside its write, never a read before it (decision 988):
        # another session's upsert of the same new id between the two was overwritten, and its
        # chunk moved to this call's collection.
        try:
            created = self.store.put_external(chunk, keep_collection=collection is None)
        except OtherCollection as other:
            raise InvalidArgument(
                f"Chunk {final_id!r} is in collection {other.collection!r}; delete it first (delete_chunk) to "
                f"move it to {collection!r}, or send collection {other.collection!r}."
            ) from None
        return final_id, created

    def update(
        self,
        chunk_id: str,
        content: str | None,
        embedding: Sequence[float] | None,
        metadata: Mapping[str, Any] | None,
    ) -> StoredChunk:
        if is_markdown_id(chunk_id):
            raise read_only(chunk_id, "updated")
        _refuse_nul(content=content, metadata=metadata)
        vector = self.vector(embedding) if embedding is not None else None
        # One conditional write, never a read then an upsert (decision 780): that brought back a
        # chunk delete_chunk removed in between, and wrote back fields another update had changed.
        changed = None if NUL in chunk_id else self.store.update_external(chunk_id, content, metadata, vector)
        if changed is None:
            raise NotFound(f"No external chunk has the id {chunk_id!r}; list_chunks shows the current ids.")
        return self._sized(changed, self.store.vector_dimensions())

    def delete(self, chunk_id: str) -> None:
        if is_markdown_id(chunk_id):
            raise read_only(chunk_id, "deleted")
        if NUL in chunk_id or not self.store.delete_external(chunk_id):
            raise NotFound(f"No external chunk has the id {chunk_id!r}; list_chunks shows the current ids.")
