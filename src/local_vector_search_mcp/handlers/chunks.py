"""The ``chunks`` tool set (NoteHarbor's API): index_note, upsert_vector, search_vectors,
search_knowledge, get_chunk, list_chunks, update_chunk, delete_chunk. Thin over
:mod:`..search.chunks`; listed only when ``server.toolsets`` holds ``chunks``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from lvsm_contract.models import (
    ChunkSearchHit,
    DeleteChunkArguments,
    DeleteChunkResult,
    GetChunkArguments,
    GetChunkResult,
    IndexNoteArguments,
    IndexNoteResult,
    ListChunksArguments,
    ListChunksResult,
    SearchKnowledgeArguments,
    SearchKnowledgeResult,
    SearchVectorsArguments,
    SearchVectorsResult,
    UpdateChunkArguments,
    UpdateChunkResult,
    UpsertVectorArguments,
    UpsertVectorResult,
)
from pydantic import BaseModel

from .. import progress
from ..errors import IndexNotReady, InvalidArgument, UnsupportedFormat, missing_document
from ..index.chunks import StoredChunk
from ..search.chunks import ChunkApi, filter_spec
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..index.indexer import Progress

M = TypeVar("M", bound=BaseModel)


def _wire(chunk: StoredChunk, with_vector: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": chunk.id,
        "collection": chunk.collection,
        "sourcePath": chunk.source_path,
        "chunkIndex": chunk.chunk_index,
        "content": chunk.content,
        "metadata": chunk.metadata,
        "embeddingDimensions": chunk.dimensions,
        "embeddingStale": chunk.stale,
        "readOnly": chunk.collection == "markdown",
    }
    if with_vector:
        out["embedding"] = None if chunk.vector is None else [float(x) for x in chunk.vector]
    return out


def _api(ws: Workspace) -> ChunkApi:
    return ChunkApi(ws.config, ws.store, ws.embedders, ws.activity)


def _chunk(model: type[M], chunk: StoredChunk, with_vector: bool = False) -> M:
    return model.model_validate(_wire(chunk, with_vector))


def _metadata(value: Any) -> dict[str, Any] | None:
    return None if value is None else dict(value.root)


def index_note(ws: Workspace, request: IndexNoteArguments) -> IndexNoteResult:
    done = _index_note(ws, request.path)
    return IndexNoteResult(
        path=done.path,
        chunk_ids=[c.id for c in done.chunks],
        chunks=len(done.chunks),
        dimensions=done.dimensions,
        quantization_bits=done.quantization_bits,  # type: ignore[arg-type]  # 32 | 16 | 8 | 1 | None
        warning=done.warning,
    )


def upsert_vector(ws: Workspace, request: UpsertVectorArguments) -> UpsertVectorResult:
    chunk_id, created = _api(ws).upsert(
        request.id,
        request.source_path,
        request.chunk_index,
        request.content,
        request.embedding,
        _metadata(request.metadata),
        request.collection,
    )
    return UpsertVectorResult(id=chunk_id, created=created)


def _hits(found: list[tuple[StoredChunk, float]]) -> list[ChunkSearchHit]:
    return [
        ChunkSearchHit.model_validate(
            {
                "id": c.id,
                "collection": c.collection,
                "sourcePath": c.source_path,
                "chunkIndex": c.chunk_index,
                "content": c.content,
                "metadata": c.metadata,
                # a cosine: float32 rounding gave 1.000001 for the same direction on SQLite (decision 992)
                "score": round(min(max(score, -1.0), 1.0), 6),
            }
        )
        for c, score in found
    ]


def search_vectors(ws: Workspace, request: SearchVectorsArguments) -> SearchVectorsResult:
    api = _api(ws)
    spec = filter_spec(request.filter)
    vector = api.vector(request.embedding)
    return SearchVectorsResult(results=_hits(api.search(vector, request.top_k, spec)))


def search_knowledge(ws: Workspace, request: SearchKnowledgeArguments) -> SearchKnowledgeResult:
    api = _api(ws)
    spec = filter_spec(request.filter)
    vector = api.query_vector(request.query)  # embeddings off: says so before anything else
    return SearchKnowledgeResult(results=_hits(api.search(vector, request.top_k, spec)))


def get_chunk(ws: Workspace, request: GetChunkArguments) -> GetChunkResult:
    chunk = _api(ws).get(request.id, request.include_embedding)
    return _chunk(GetChunkResult, chunk, request.include_embedding)


def list_chunks(ws: Workspace, request: ListChunksArguments) -> ListChunksResult:
    page = _api(ws).page(request.source_path, request.collection, request.cursor, request.limit)
    return ListChunksResult.model_validate({"chunks": [_wire(c) for c in page.chunks], "nextCursor": page.next_cursor})


def update_chunk(ws: Workspace, request: UpdateChunkArguments) -> UpdateChunkResult:
    chunk = _api(ws).update(request.id, request.content, request.embedding, _metadata(request.metadata))
    return _chunk(UpdateChunkResult, chunk)


def delete_chunk(ws: Workspace, request: DeleteChunkArguments) -> DeleteChunkResult:
    _api(ws).delete(request.id)
    return DeleteChunkResult(id=request.id, deleted=True)


class _VectorSteps:
    """index_note's progress: chunks handled of those pending when it began, one step per
    provider batch, and the cancel point between batches (decision 504, as H62 amended it). A
    slow endpoint took minutes over a long note, or over an index whose chunks were all pending,
    with no word and no way to stop it."""

    def __init__(self) -> None:
        self.total: int | None = None

    def __call__(self, tracked: Progress) -> None:
        remaining = tracked.pending_chunks or 0
        if self.total is None:
            self.total = remaining
        total = self.total
        done = min(total, max(0, total - remaining))
        final = tracked.current_path is None  # the pass's last report
        progress.step(done, total, lambda: f"Embedded {done:,} of {total:,} chunks", final=final)


@dataclass(frozen=True)
class IndexedNote:
    path: str
    chunks: list[StoredChunk]
    dimensions: int | None
    quantization_bits: int | None
    warning: str | None


def _index_note(ws: Workspace, path: str) -> IndexedNote:
    """Index one document now and wait for its vectors (decision 143)."""
    from ..index.indexer import Progress, UnreadableSource, indexable
    from ..index.manifest import incompatible_message

    rel, full = ws.guard.resolve(path, markdown=True)
    if not full.is_file():
        raise missing_document(rel)
    indexing = ws.indexing
    if not indexable(rel, indexing.path_filter):  # as the indexer decides: dot names too (decision 676)
        raise InvalidArgument(
            f"{rel!r} is not part of the index (knowledgeBase.include / exclude; a file or folder whose name "
            "starts with a dot is never indexed); it cannot be indexed."
        )
    if ws.activity.rebuild_in_progress:
        raise IndexNotReady("Index rebuild in progress (a forced kb_reindex); check kb_status and retry.")
    indexer = indexing.indexer
    problems = indexer.compatibility(probe=True)
    if problems:
        raise IndexNotReady(incompatible_message(problems))
    store = ws.store
    if not store.read_manifest():  # a fresh index: create it with its vector table before the first file
        manifest = indexer.expected_manifest(probe=True)
        size = manifest.get("embedding_dimensions")
        store.ensure_schema(int(size) if size else None, indexer.vector_storage())
        store.write_manifest(manifest)
    try:
        indexer.reconcile(rel)
    except UnreadableSource as bad:  # not UTF-8, over the document cap (decision 369)
        raise UnsupportedFormat(bad.reason) from None
    warning = None
    api = _api(ws)
    if indexer.embedder is not None and store.pending_vector_count([rel]):
        tracked = Progress("changed", False)
        try:
            # its own chunks, once a background pass gives way between batches (decision 978)
            with ws.activity.embedding:
                result = indexer.embed_pending(tracked, on_progress=_VectorSteps(), paths=[rel])
        finally:
            # The others pending (a pass that gave way left them), and this note's own when the client
            # cancelled (504 as amended: it stopped waiting, not the index wanting them) or the
            # provider failed: a background pass embeds them.
            ws.indexing.kick_after_turn()
        warning = result.warning
    chunks = store.markdown_chunks(rel, None, 1_000_000)
    dims = store.vector_dimensions() if indexer.embedder is not None else None
    return IndexedNote(rel, chunks, dims, api.quantization_bits(), warning)
