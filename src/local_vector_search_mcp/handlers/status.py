"""kb_status: configuration and index state. Never fails because the index is missing."""

from __future__ import annotations

from typing import Any

from ..workspace import Workspace

SCHEMA_VERSION = "5"
CHUNKER_VERSION = "6"
EMBEDDING_TEXT_BUILDER_VERSION = "1"


def kb_status(ws: Workspace) -> dict[str, Any]:
    config = ws.config
    provider = config.embedding.provider
    return {
        "databasePath": str(ws.storage_path),
        "indexExists": ws.storage_path.exists(),
        "schemaVersion": SCHEMA_VERSION,
        "chunkerVersion": CHUNKER_VERSION,
        "embeddingTextBuilderVersion": EMBEDDING_TEXT_BUILDER_VERSION,
        "embeddingProvider": provider,
        "embeddingModel": "none" if provider == "none" else (config.embedding.model or "default"),
        "embeddingDimensions": config.embedding.dimensions if provider != "none" else None,
        "indexMode": "lexical" if provider == "none" else "vector-enabled",
        "allowWrites": config.knowledge_base.allow_writes,
        "watchFiles": config.knowledge_base.watch_files,
        "project": {"root": str(ws.root), "documents": 0, "chunks": 0, "lastIndexedAtUtc": None},
        "synchronization": None,
        "indexing": {"isRunning": False, "current": None, "last": None},
        "compatibility": {"isCompatible": True, "problems": []},
    }
