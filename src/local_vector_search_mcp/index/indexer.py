"""Reindexing: discovery, the cheap unchanged check, one transaction per file.

``Indexer.reindex`` is synchronous; the single-flight background coordinator
and the CLI both call it. Incremental by default (``scope="changed"``):

1. discover ``.md`` files under the root that match include/exclude
   (case-insensitive), sorted case-insensitively; folders starting with ``.``
   (``.git``, the index folder) are never entered;
2. delete indexed documents that are gone or now excluded;
3. skip a file whose size and mtime equal the stored ones; when they differ,
   hash it and only touch the stored stat if the content hash is unchanged;
4. otherwise parse once, chunk, and replace the document's rows in one
   transaction (so a failure or a kill keeps the previous revision). Vectors
   of unchanged chunk texts are reused; new chunks are stored *pending*.

Vectors are filled afterwards by :meth:`Indexer.embed_pending` (lexical
search works as soon as a file's transaction commits; the local model is
slow, so the CLI runs this pass synchronously after the files and the MCP
server in the background). A kill during either pass leaves a usable index:
pending chunks are simply embedded by the next pass.

``scope="all"`` reprocesses every file (vectors are still reused by text hash).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..embeddings import Embedder, EmbeddingError
from ..errors import IndexNotReady, KbError, NotFound
from ..markdown import parse_document
from ..markdown.links import extract_links
from ..sourcefile import read_source
from .chunker import build_embedding_text, chunk_document, embedding_text_hash
from .manifest import current_manifest, enum_value, incompatible_message, index_problems
from .port import ChunkRecord, DocumentMeta, DocumentRecord, IndexDamaged, IndexStore, LinkRecord

__all__ = ["Cancelled", "EmbedResult", "Indexer", "Progress", "ReindexResult", "utc_now"]


log = logging.getLogger(__name__)

ReindexScope = Literal["changed", "all"]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Cancelled(Exception):
    """The host is shutting down; the reindex stopped between two files."""


@dataclass
class Progress:
    scope: ReindexScope
    force: bool
    started_at_utc: str = field(default_factory=utc_now)
    processed_files: int = 0
    total_files: int | None = None
    current_path: str | None = None
    is_destructive_rebuild: bool = False
    phase: str = "files"  # "files", then "vectors" while pending chunks are embedded
    embedded_chunks: int = 0
    pending_chunks: int | None = None


@dataclass
class EmbedResult:
    embedded: int = 0
    pending: int = 0
    warning: str | None = None
    error: str | None = None
    failed_paths: list[str] = field(default_factory=list)


MAX_LISTED_UNREADABLE = 20  # the result names the first ones; the count says how many in all


class UnreadableSource(Exception):
    """One file could not be read or parsed; the others are indexed (internal)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.message = reason


@dataclass
class ReindexResult:
    scanned_files: int = 0
    indexed_files: int = 0
    skipped_files: int = 0
    deleted_files: int = 0
    chunks_indexed: int = 0
    warning: str | None = None
    failed_paths: list[str] = field(default_factory=list)
    unreadable_files: int = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, reason), capped

    def add_unreadable(self, path: str, reason: str) -> None:
        self.unreadable_files += 1
        if len(self.unreadable) < MAX_LISTED_UNREADABLE:
            self.unreadable.append((path, reason))


class Indexer:
    """Builds and updates the index of one knowledge base.

    ``path_filter`` is the include/exclude predicate over root-relative paths;
    ``embedder`` is ``None`` in lexical mode. ``gate`` serialises writers in
    this process (reindex and targeted sync); SQLite serialises processes.
    """

    def __init__(
        self,
        root: Path,
        store: IndexStore,
        config: Any,
        path_filter: Callable[[str], bool],
        embedder: Embedder | None = None,
        gate: threading.RLock | None = None,
    ) -> None:
        self.root = Path(root)
        self.store = store
        self.config = config
        self.path_filter = path_filter
        self.embedder = embedder
        self.gate = gate or threading.RLock()

    # manifest -----------------------------------------------------------------
    def expected_manifest(self, probe: bool) -> dict[str, str]:
        return current_manifest(self.config, self.embedder, self.store, probe)

    def compatibility(self, probe: bool = False) -> list[str]:
        return index_problems(self.config, self.embedder, self.store, probe)

    def vector_storage(self) -> str:
        return enum_value(self.config.embedding.vector_storage)

    # discovery ----------------------------------------------------------------
    def discover(self) -> list[str]:
        found = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel_dir = os.path.relpath(dirpath, self.root)
            for name in filenames:
                if not name.lower().endswith(".md"):
                    continue
                rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
                if self.path_filter(rel):
                    found.append(rel)
        found.sort(key=lambda p: (p.lower(), p))
        return found

    # full reindex ---------------------------------------------------------------
    def reindex(
        self,
        scope: ReindexScope = "changed",
        force: bool = False,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> ReindexResult:
        progress = progress or Progress(scope, force)
        result = ReindexResult()
        try:
            self.store.read_manifest()  # opens the database: a damaged one is found here
        except IndexDamaged:
            if not force:
                raise
            log.warning("the index database is damaged; it is set aside and rebuilt")
            with self.gate:
                self.store.reset(None, self.vector_storage())
        try:
            expected = self.expected_manifest(probe=True)
            problems = self.compatibility(probe=True)
        except EmbeddingError as exc:
            # The provider is down: lexical indexing never waits for it. Without a known vector
            # size no vector table is made yet; the vector pass makes it once the provider answers.
            expected = self.expected_manifest(probe=False)
            problems = self.compatibility(probe=False)
            log.warning("embedding provider unavailable, indexing lexically: %s", exc)
        dims = _maybe_int(expected.get("embedding_dimensions"))
        with self.gate:
            if problems:
                if not force:
                    raise IndexNotReady(incompatible_message(problems))
                progress.is_destructive_rebuild = True  # search refuses until this reindex ends
                self.store.reset(dims, self.vector_storage())
                self.store.write_manifest(expected)
            else:
                self.store.ensure_schema(dims, self.vector_storage())
                self.store.write_manifest(expected)
        files = self.discover()
        progress.total_files = len(files)
        result.scanned_files = len(files)
        wanted = set(files)
        states = self.store.document_states()
        for path in sorted(set(states) - wanted):
            with self.gate:
                if self.store.delete_document(path):
                    result.deleted_files += 1
        for path in files:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            progress.current_path = path
            if on_progress:
                on_progress(progress)
            try:
                outcome = self._update_file(path, states.get(path), scope == "all")
            except UnreadableSource as bad:
                outcome = None
                result.add_unreadable(path, bad.reason)
                log.info("not indexed: %s: %s", path, bad.reason)
            except FileNotFoundError:
                outcome = None
                with self.gate:
                    if self.store.delete_document(path):
                        result.deleted_files += 1
            if outcome is None:
                pass  # vanished between discovery and indexing
            elif outcome < 0:
                result.skipped_files += 1
            else:
                result.indexed_files += 1
                result.chunks_indexed += outcome
            progress.processed_files += 1
        if result.indexed_files or result.deleted_files:
            with self.gate:
                self.store.refresh_term_stats()
        progress.current_path = None
        if on_progress:
            on_progress(progress)
        return result

    def _update_file(self, path: str, state: Any, always: bool) -> int:
        """Index one file if needed: chunk count, or -1 when skipped as unchanged."""
        full = self.root / path
        st = full.stat()
        if not always and state is not None and state.size == st.st_size and state.mtime_ns == st.st_mtime_ns:
            return -1
        try:
            raw = read_source(full, path)
        except NotFound:
            raise FileNotFoundError(path) from None
        except KbError as exc:
            self._forget(path)
            raise UnreadableSource(path, exc.message) from None
        source_hash = hashlib.sha256(raw).hexdigest()
        if not always and state is not None and state.source_hash == source_hash:
            with self.gate:
                self.store.touch_document(path, st.st_size, st.st_mtime_ns)
            return -1
        try:
            return self.index_bytes(path, raw, st.st_size, st.st_mtime_ns, source_hash)
        except (KbError, ValueError, RecursionError, MemoryError) as exc:
            # A file the parser cannot take (not UTF-8, ...) is one bad file, not a failed run.
            self._forget(path)
            reason = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            raise UnreadableSource(path, str(reason)[:300]) from None

    def _forget(self, path: str) -> None:
        """Drop the index entry of a file that can no longer be read: the index shows only what is on disk."""
        with self.gate:
            self.store.delete_document(path)

    def index_bytes(self, path: str, raw: bytes, size: int, mtime_ns: int, source_hash: str) -> int:
        doc = parse_document(raw)
        ch = self.config.chunking
        chunks = chunk_document(
            doc,
            max_chunk_bytes=ch.max_chunk_bytes,
            max_elements=ch.max_elements,
            include_front_matter=ch.include_front_matter,
        )
        hashes = [
            embedding_text_hash(build_embedding_text(path, c.text, c.heading_path, ch.include_heading_context))
            for c in chunks
        ]
        reuse = self.store.vectors_by_text_hash(path) if self.embedder is not None and chunks else {}
        records = [
            ChunkRecord(
                ordinal=c.ordinal,
                pointer=c.pointer,
                anchor=c.anchor,
                text=c.text,
                heading_path=c.heading_path,
                embedding_text_hash=hashes[i],
                vector=reuse.get(hashes[i]),
            )
            for i, c in enumerate(chunks)
        ]
        graph = extract_links(doc)
        links = [LinkRecord(ln.kind, ln.destination, ln.text, ln.pointer) for ln in graph.links]
        meta = DocumentMeta(graph.tags, graph.aliases, graph.headings, graph.block_ids)
        with self.gate:
            record = DocumentRecord(path, source_hash, size, mtime_ns, utc_now(), front_matter_properties(doc))
            return self.store.replace_document(record, records, links, meta)

    # vectors ------------------------------------------------------------------------
    def embed_pending(
        self,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> EmbedResult:
        """Embed every pending chunk, one provider batch and one transaction at a time.

        Stops at the first provider failure (the chunks stay pending, their
        path is reported); files indexed meanwhile are picked up too.
        """
        result = EmbedResult()
        if self.embedder is None or not self.store.exists():
            return result
        if not self.store.has_vectors():
            try:
                self._add_vector_table()
            except EmbeddingError as exc:
                result.error = str(exc)
                result.warning = (
                    f"The embedding provider could not be reached ({exc}); every file is searchable lexically "
                    "and vectors are added once it answers."
                )
                result.pending = self.store.counts().chunks
                return result
        include_heading = self.config.chunking.include_heading_context
        batch = max(1, int(getattr(self.config.embedding, "batch_size", 16) or 16))
        if progress is not None:
            progress.phase = "vectors"
            progress.pending_chunks = self.store.pending_vector_count()
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            todo = self.store.pending_vectors(batch)
            if not todo:
                break
            if progress is not None:
                progress.current_path = todo[0].path
                if on_progress:
                    on_progress(progress)
            texts = [build_embedding_text(p.path, p.text, p.heading_path, include_heading) for p in todo]
            try:
                vectors = self.embedder.embed_passages(texts)
            except Exception as exc:  # EmbeddingError or a provider bug
                result.failed_paths = sorted({p.path for p in todo})
                result.error = str(exc) or type(exc).__name__
                result.warning = (
                    f"Embedding failed for {todo[0].path}: {exc}. Every file is indexed and searchable "
                    "lexically; the chunks without vectors are embedded by the next kb_reindex once the "
                    "provider works."
                )
                break
            with self.gate:
                stored = self.store.store_vectors(
                    [(p.chunk_id, np.asarray(v, dtype=np.float32)) for p, v in zip(todo, vectors, strict=True)]
                )
            result.embedded += stored
            if progress is not None:
                progress.embedded_chunks += stored
                progress.pending_chunks = max(0, (progress.pending_chunks or 0) - len(todo))
        result.pending = self.store.pending_vector_count()
        if progress is not None:
            progress.current_path = None
            progress.pending_chunks = result.pending
            if on_progress:
                on_progress(progress)
        return result

    def _add_vector_table(self) -> None:
        """The provider answers at last: size the vector table and queue every chunk for a vector."""
        assert self.embedder is not None
        dims = self.embedder.dimensions()  # raises EmbeddingError while the provider is down
        with self.gate:
            if self.store.has_vectors():
                return
            self.store.ensure_schema(dims, self.vector_storage())
            self.store.mark_all_vectors_pending()
            self.store.write_manifest(self.expected_manifest(probe=False))

    # targeted synchronisation -------------------------------------------------------
    def reconcile(self, path: str) -> str:
        """Bring one path in line with the disk: ``indexed``, ``unchanged`` or ``deleted``."""
        full = self.root / path
        wanted = path.lower().endswith(".md") and self.path_filter(path) and not _hidden(path)
        if wanted and full.is_file():
            if self.compatibility():
                raise IndexNotReady("index is incompatible with the configuration; run kb_reindex force=true")
            states = self.store.document_states()
            self.store.ensure_schema(
                _maybe_int(self.store.read_manifest().get("embedding_dimensions")), self.vector_storage()
            )
            if not self.store.read_manifest():
                self.store.write_manifest(self.expected_manifest(probe=True))
            outcome = self._update_file(path, states.get(path), False)
            return "unchanged" if outcome < 0 else "indexed"
        with self.gate:
            self.store.delete_document(path)
        return "deleted"


def _hidden(path: str) -> bool:
    return any(part.startswith(".") for part in path.split("/")[:-1])


def _maybe_int(value: str | None) -> int | None:
    return int(value) if value else None


def front_matter_properties(doc: Any) -> dict[str, Any]:
    """The document's front matter fields for chunk filters (empty without front matter or
    when it is not a YAML mapping: a bad header never stops indexing)."""
    from ..markdown import ElementKind
    from .chunks import document_properties

    first = doc.elements[0] if doc.elements else None
    if first is None or first.kind is not ElementKind.FRONT_MATTER:
        return {}
    import yaml

    lines = first.text.splitlines()[1:-1]
    try:
        data = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError:
        return {}
    return document_properties(data) if isinstance(data, dict) else {}
