"""kb_status: configuration and index state, assembled here from the services'
pieces (store counts and manifest, indexing activity, sync queue, vectors).
Never fails because the index is missing."""

from __future__ import annotations

from typing import Any

from ..index.chunker import CHUNKER_VERSION, EMBEDDING_TEXT_BUILDER_VERSION
from ..index.manifest import SCHEMA_VERSION, index_problems
from ..workspace import Workspace
from .indexing import progress_wire, reindex_result_wire


def kb_status(ws: Workspace) -> dict[str, Any]:
    store, indexing, activity = ws.store, ws.indexing, ws.activity
    counts = store.counts()
    manifest = store.read_manifest()
    emb = ws.embedders.get()
    dims: int | None
    if emb is None:
        model, dims = "none", None
    else:
        model = emb.model
        dims = ws.config.embedding.dimensions
        if dims is None and emb.provider == "local":
            dims = emb.dimensions()
        if dims is None and manifest.get("embedding_dimensions"):
            dims = int(manifest["embedding_dimensions"])
    try:
        problems = index_problems(ws.config, emb, store)
    except Exception as exc:  # pragma: no cover - status never fails
        problems = [f"compatibility could not be checked: {exc}"]
    current, last = activity.current, activity.last
    vectors = indexing.vector_state()
    return {
        "databasePath": store.location,
        "indexExists": store.exists(),
        "schemaVersion": SCHEMA_VERSION,
        "chunkerVersion": CHUNKER_VERSION,
        "embeddingTextBuilderVersion": EMBEDDING_TEXT_BUILDER_VERSION,
        "embeddingProvider": ws.embedders.provider,
        "embeddingModel": model,
        "embeddingDimensions": dims,
        "indexMode": "lexical" if emb is None else "vector-enabled",
        "project": {
            "root": str(ws.root),
            "documents": counts.documents,
            "chunks": counts.chunks,
            "lastIndexedAtUtc": counts.last_indexed_at_utc,
        },
        "synchronization": indexing.sync.status(),
        "indexing": {
            "isRunning": current is not None,
            "current": None if current is None else progress_wire(current),
            "last": None
            if last is None
            else {
                "scope": last.scope,
                "force": last.force,
                "startedAtUtc": last.started_at_utc,
                "completedAtUtc": last.completed_at_utc,
                "outcome": last.outcome,
                "result": None if last.result is None else reindex_result_wire(last.result),
                "error": last.error,
            },
        },
        "compatibility": {"isCompatible": not problems, "problems": problems},
        "vectors": None
        if vectors is None
        else {
            "embeddedChunks": vectors.embedded_chunks,
            "pendingChunks": vectors.pending_chunks,
            "isRunning": vectors.is_running,
            "lastError": vectors.last_error,
        },
        "allowWrites": ws.config.knowledge_base.allow_writes,
        "watchFiles": ws.config.knowledge_base.watch_files,
    }
