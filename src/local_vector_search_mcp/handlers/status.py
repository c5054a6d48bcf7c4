"""kb_status: configuration and index state, assembled here (the one place) from
the services' pieces: store counts and manifest, indexing activity, sync queue,
vectors. Never fails because of the index: missing, empty, damaged or busy (decision 285)."""

from __future__ import annotations

import contextlib
from typing import Literal

from lvsm_contract.models import (
    KbStatusResult,
    RefusedChunk,
    ReindexOutcome,
    StatusCompatibility,
    StatusIndexing,
    StatusProject,
    StatusSynchronization,
    StatusVectors,
    UnreadableFile,
)

from ..embeddings import EmbeddingError
from ..errors import IndexNotReady
from ..index.chunker import CONTRACT_CHUNKER_VERSION, EMBEDDING_TEXT_BUILDER_VERSION
from ..index.indexer import MAX_LISTED_UNREADABLE
from ..index.indexing import VectorState
from ..index.manifest import SCHEMA_VERSION, index_problems
from ..index.port import StoreCounts
from ..index.sync import SyncState
from ..workspace import Workspace
from .indexing import progress_model, reindex_result_model

Provider = Literal["none", "local", "openai-compatible"]
_PROVIDERS: dict[str, Provider] = {"none": "none", "local": "local", "openai-compatible": "openai-compatible"}


# How long kb_status waits for a running compare of the files with the index (a stat of every
# file: 0.3 s for opensearch-docs' 1,758), so the changes it finds are counted (decision 698).
CATCH_UP_WAIT_SECONDS = 5.0


def kb_status(ws: Workspace) -> KbStatusResult:
    store, indexing, activity, kb = ws.store, ws.indexing, ws.activity, ws.config.knowledge_base
    ws.settle_catch_up(CATCH_UP_WAIT_SECONDS)
    # What runs and what failed first, the index after (decision 386): a reindex or a sync that
    # ends while this call reads the index is then shown running with the counts it has reached,
    # never as done beside the counts from before it (a client polls until isRunning is false,
    # then reads the documents in the same answer).
    # A compare first (decision 986): one seen ended has queued what it found (or started the
    # reindex) before this reads the queue; read after, one ending in between read as settled.
    comparing = indexing.comparing
    current, last = activity.current, activity.last
    sync = indexing.sync.status()
    # A damaged or busy database is part of the answer, not an error (decision 285).
    unusable: str | None = None
    exists = False
    try:
        exists = store.exists()
        counts = store.counts()
        manifest = store.read_manifest()
        unreadable = store.unreadable_files()  # stored: a restarted server still names them
    except IndexNotReady as exc:  # unreachable, refused (decision 499), damaged or busy
        unusable = exc.message
        counts, manifest, unreadable = StoreCounts(0, 0, None), {}, {}
        with contextlib.suppress(IndexNotReady):
            exists = store.exists()  # a damaged file still exists
    emb = ws.embedders.get()
    dims: int | None
    if emb is None:
        model, dims = "none", None
    else:
        model = emb.model
        dims = ws.config.embedding.dimensions
        if dims is None and emb.provider == "local":
            with contextlib.suppress(EmbeddingError):  # a provider that could not be built: status still answers
                dims = emb.dimensions()
        if dims is None and manifest.get("embedding_dimensions"):
            dims = int(manifest["embedding_dimensions"])
    if unusable is not None:
        problems = [unusable]
    else:
        try:
            problems = index_problems(ws.config, emb, store)
        except Exception as exc:  # pragma: no cover - status never fails
            problems = [f"compatibility could not be checked: {exc}"]
    if unusable is None:
        vectors = indexing.vector_state()
    else:
        vectors = None if emb is None else VectorState(0, 0, activity.embedding.locked(), activity.vector_error)
    return KbStatusResult(
        database_path=store.location,
        index_exists=exists,
        schema_version=SCHEMA_VERSION,
        chunker_version=CONTRACT_CHUNKER_VERSION,
        embedding_text_builder_version=EMBEDDING_TEXT_BUILDER_VERSION,
        embedding_provider=_PROVIDERS[ws.embedders.provider],
        embedding_model=model,
        embedding_dimensions=dims,
        index_mode="lexical" if emb is None else "vector-enabled",
        allow_writes=kb.allow_writes,
        watch_files=kb.watch_files,
        project=StatusProject(
            root=str(ws.root),
            documents=counts.documents,
            chunks=counts.chunks,
            last_indexed_at_utc=counts.last_indexed_at_utc,
            unreadable_files=len(unreadable),
            unreadable=[
                UnreadableFile(path=path, reason=unreadable[path])
                for path in sorted(unreadable, key=lambda p: (p.lower(), p))[:MAX_LISTED_UNREADABLE]
            ],
        ),
        synchronization=_synchronization(sync, comparing),
        indexing=StatusIndexing(
            is_running=current is not None,
            current=None if current is None else progress_model(current),
            last=None
            if last is None
            else ReindexOutcome(
                scope=last.scope,
                force=last.force,
                started_at_utc=last.started_at_utc,
                completed_at_utc=last.completed_at_utc,
                outcome=last.outcome,
                result=None if last.result is None else reindex_result_model(last.result),
                error=last.error,
            ),
        ),
        vectors=None
        if vectors is None
        else StatusVectors(
            embedded_chunks=vectors.embedded_chunks,
            pending_chunks=vectors.pending_chunks,
            is_running=vectors.is_running,
            last_error=vectors.last_error,
            refused_chunks=vectors.refused_chunks,
            eta_seconds=vectors.eta_seconds,
            refused=[
                RefusedChunk(path=r.path, chunk_index=r.chunk_index, heading_path=r.heading_path, reason=r.reason)
                for r in vectors.refused
            ],
        ),
        compatibility=StatusCompatibility(is_compatible=not problems, problems=problems),
    )


def _synchronization(sync: SyncState | None, comparing: bool) -> StatusSynchronization | None:
    """Null only when nothing is queued, failed or still to be found by a compare (decision 986)."""
    if sync is None and not comparing:
        return None
    state = sync if sync is not None else SyncState(0, [], None)
    return StatusSynchronization(
        pending_files=state.pending_files,
        paths=state.paths,
        last_error=state.last_error,
        failed_files=len(state.failed),
        failed=[UnreadableFile(path=p, reason=r) for p, r in list(state.failed.items())[:MAX_LISTED_UNREADABLE]],
        comparing=comparing,
    )
