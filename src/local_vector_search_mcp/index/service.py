"""IndexService: the per-workspace facade over store, indexer, sync and watcher.

Built lazily with ``ws.service(IndexService)``; construction opens nothing and
loads no model. It owns:

* the store (``SqliteStore`` at ``ws.storage_path``);
* the embedder (built on first use; a provider that cannot be built becomes
  a failing embedder, so lexical search keeps working and status says why);
* the reindex coordinator: :meth:`start_reindex` is single-flight and
  asynchronous (MCP), :meth:`reindex` synchronous (CLI). Both index every
  file lexically first, then embed the pending chunks; the MCP operation stays
  ``current`` through that vector phase (``currentPath`` names the file being
  embedded), and searches meanwhile cover the embedded chunks and say in
  ``warning`` how many still lack vectors;
* the vector filler: chunks left pending by targeted sync, by a killed
  process or by a failed provider are embedded by a background pass started
  on the next search or sync (never two passes at once);
* the targeted sync queue (:meth:`schedule_sync`) and the optional watcher.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..embeddings import EmbeddingError, make_embedder
from ..errors import IndexNotReady, KbError
from ..globs import GlobSet
from ..search.engine import SearchEngine
from .chunker import CHUNKER_VERSION, EMBEDDING_TEXT_BUILDER_VERSION
from .indexer import Cancelled, Indexer, Progress, utc_now
from .manifest import SCHEMA_VERSION, enum_value, incompatible_message
from .sqlite import SqliteStore
from .sync import SyncQueue
from .watcher import MarkdownWatcher

__all__ = ["IndexService"]

log = logging.getLogger(__name__)
VECTOR_RETRY_SECONDS = 60.0  # after a provider failure, searches retry the background pass at most this often


class _FailingEmbedder:
    """Stands in for a provider that could not be built (e.g. refused endpoint)."""

    def __init__(self, provider: str, model: str, error: str) -> None:
        self.provider = provider
        self.model = model
        self._error = error

    def dimensions(self) -> int:
        raise EmbeddingError(self._error)

    def embed_passages(self, texts: list[str]) -> Any:
        raise EmbeddingError(self._error)

    def embed_query(self, text: str) -> Any:
        raise EmbeddingError(self._error)


class IndexService:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.config = ws.config
        self.store = SqliteStore(ws.storage_path)
        kb = self.config.knowledge_base
        self.path_filter = GlobSet(list(kb.include), list(kb.exclude))
        self.gate = threading.RLock()
        self._embedder: Any = None
        self._embedder_built = False
        self._embedder_lock = threading.Lock()
        self._indexer: Indexer | None = None
        self.sync = SyncQueue(self._reconcile)
        self.watcher: MarkdownWatcher | None = None
        self._reindex_lock = threading.Lock()
        self._current: Progress | None = None
        self._last: dict[str, Any] | None = None
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._vector_lock = threading.Lock()
        self._vector_thread: threading.Thread | None = None
        self._vector_error: str | None = None
        self._vector_error_at = 0.0

    # components --------------------------------------------------------------
    @property
    def provider(self) -> str:
        if self._embedder_built and self._embedder is not None:
            return str(self._embedder.provider)
        return enum_value(self.config.embedding.provider)

    def embedder(self) -> Any:
        with self._embedder_lock:
            if self._embedder_built:
                return self._embedder
            if enum_value(self.config.embedding.provider) == "none":
                return None
            if not self._embedder_built:
                try:
                    self._embedder = make_embedder(self.config.embedding)
                except (EmbeddingError, ValueError) as exc:
                    self._embedder = _FailingEmbedder(self.provider, self.config.embedding.model or "?", str(exc))
                self._embedder_built = True
        return self._embedder

    def use_embedder(self, embedder: Any) -> None:
        """Replace the configured embedder (tests, benchmarks)."""
        with self._embedder_lock:
            self._embedder, self._embedder_built = embedder, True
            self._indexer = None

    @property
    def indexer(self) -> Indexer:
        if self._indexer is None:
            self._indexer = Indexer(self.ws.root, self.store, self.config, self.path_filter, self.embedder(), self.gate)
        return self._indexer

    @property
    def engine(self) -> SearchEngine:
        return SearchEngine(self.store, self.config.search, self.embedder)

    # search ---------------------------------------------------------------------
    def search(self, **kwargs: Any) -> dict[str, Any]:
        self.engine.validate(**kwargs)
        if self.indexer.destructive_running or (self._current is not None and self._current.is_destructive_rebuild):
            raise IndexNotReady("A forced rebuild of the index is in progress; check kb_status and retry.")
        problems = self.indexer.compatibility()
        if problems:
            raise IndexNotReady(incompatible_message(problems))
        if not self.store.has_chunks():
            raise IndexNotReady(
                "The index is empty. Run kb_reindex (CLI: --reindex) and follow progress with kb_status."
            )
        result = self.engine.search(**kwargs)
        pending = self.store.pending_vector_count() if self.embedder() is not None else 0
        if not pending:
            return result
        counts = self.store.counts()
        if counts.pending_vectors and result["results"] and result["results"][0]["searchMode"] != "lexical":
            note = (
                f"{counts.pending_vectors} of {counts.chunks} chunks do not have vectors yet "
                f"({self._vector_note()}); semantic matches cover only the embedded chunks, lexical matches "
                "cover every chunk."
            )
            result["warning"] = f"{result['warning']} {note}" if result["warning"] else note
        elif counts.pending_vectors and kwargs.get("mode") == "semantic" and not result["warning"]:
            result["warning"] = (
                f"{counts.pending_vectors} of {counts.chunks} chunks do not have vectors yet "
                f"({self._vector_note()}); semantic search covers only the embedded chunks."
            )
        if counts.pending_vectors:
            self.kick_vectors()
        return result

    def _vector_note(self) -> str:
        if self._current is not None or self._vector_lock.locked():
            return "they are being embedded in the background"
        if self._vector_error:
            return f"embedding failed: {self._vector_error}"
        return "a background pass will embed them"

    # vectors ---------------------------------------------------------------------
    def kick_vectors(self) -> bool:
        """Start a background pass over pending chunks unless one (or a reindex) runs."""
        if self.embedder() is None or self._current is not None:
            return False
        if self._vector_error is not None and time.monotonic() - self._vector_error_at < VECTOR_RETRY_SECONDS:
            return False
        if not self._vector_lock.acquire(blocking=False):
            return False
        self._vector_thread = threading.Thread(target=self._vector_pass, name="kb-vectors", daemon=True)
        self._vector_thread.start()
        return True

    def _vector_pass(self) -> None:
        while True:
            try:
                result = self.indexer.embed_pending(cancel=self._cancel)
                self._report_embedding(result)
            except Cancelled:
                result = None
            except Exception:  # never kill the server
                log.exception("background embedding failed")
                result = None
            finally:
                self._vector_lock.release()
            if result is None or result.warning or not result.pending:
                return
            if not self._vector_lock.acquire(blocking=False):
                return

    def _report_embedding(self, result: Any) -> None:
        self._vector_error = None
        for path in result.failed_paths:
            self._vector_error = (result.error or "embedding failed")[:300]
            self._vector_error_at = time.monotonic()
            self.sync.report_error(path, result.warning or "embedding failed")

    def wait_vectors(self, timeout: float | None = None) -> None:
        thread = self._vector_thread
        if thread is not None:
            thread.join(timeout)

    # reindex ---------------------------------------------------------------------
    def reindex(
        self, scope: str = "changed", force: bool = False, on_progress: Callable[[Progress], None] | None = None
    ) -> dict[str, Any]:
        """Synchronous reindex (CLI). Raises IndexNotReady when incompatible without force."""
        with self._reindex_lock:
            if self._current is not None:
                raise IndexNotReady("A reindex is already running in this process.")
            self._current = Progress(scope, force)
        try:
            return self._run(self._current, on_progress)
        finally:
            self._current = None

    def _run(self, progress: Progress, on_progress: Callable[[Progress], None] | None = None) -> dict[str, Any]:
        result = self.indexer.reindex(
            progress.scope, progress.force, progress=progress, cancel=self._cancel, on_progress=on_progress
        )
        self._vector_error = None  # a reindex retries a provider that failed before
        with self._vector_lock:  # waits for a background pass that is already running
            embedded = self.indexer.embed_pending(progress, self._cancel, on_progress)
        self._report_embedding(embedded)
        if embedded.warning:
            result.warning = f"{result.warning} {embedded.warning}" if result.warning else embedded.warning
        return result.to_wire()

    def start_reindex(self, scope: str = "changed", force: bool = False) -> dict[str, Any]:
        """Single-flight asynchronous reindex (MCP)."""
        scope = enum_value(scope) if scope else "changed"
        with self._reindex_lock:
            if self._current is not None:
                return {"started": False, "current": self._current.to_wire()}
            progress = Progress(scope, bool(force))
            self._current = progress
            self._thread = threading.Thread(target=self._background, args=(progress,), name="kb-reindex", daemon=True)
            self._thread.start()
            return {"started": True, "current": progress.to_wire()}

    def _background(self, progress: Progress) -> None:
        outcome, result, error = "succeeded", None, None
        try:
            result = self._run(progress)
        except Cancelled:
            outcome = "cancelled"
        except KbError as exc:
            outcome, error = "failed", exc.message
        except EmbeddingError as exc:
            outcome, error = "failed", f"Embedding provider failed: {exc}"
        except Exception as exc:  # never kill the server
            log.exception("reindex failed")
            outcome, error = "failed", f"Reindex failed: {type(exc).__name__}: {exc}"
        with self._reindex_lock:
            self._last = {
                "scope": progress.scope,
                "force": progress.force,
                "startedAtUtc": progress.started_at_utc,
                "completedAtUtc": utc_now(),
                "outcome": outcome,
                "result": result,
                "error": error,
            }
            self._current = None

    def wait_reindex(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    # targeted sync and watching ---------------------------------------------------------
    def schedule_sync(self, paths: Iterable[str]) -> None:
        """Queue root-relative paths for re-indexing (edits, moves: both paths)."""
        self.sync.schedule(paths)

    def _reconcile(self, path: str) -> None:
        if self._current is not None and self._current.is_destructive_rebuild:
            raise IndexNotReady("forced rebuild in progress")
        self.indexer.reconcile(path)
        if self.store.pending_vector_count():
            self.kick_vectors()

    def start_watching(self) -> None:
        if self.watcher is None:
            self.watcher = MarkdownWatcher(
                self.ws.root, self.sync, self.path_filter, lambda: list(self.store.document_states())
            )
            self.watcher.start()

    def shutdown(self) -> None:
        self._cancel.set()
        if self.watcher is not None:
            self.watcher.stop()
        self.sync.stop()
        self.wait_reindex(10)
        self.wait_vectors(10)
        self.store.close()

    # status -----------------------------------------------------------------------
    def indexing_status(self) -> dict[str, Any]:
        with self._reindex_lock:
            current = self._current
            return {
                "isRunning": current is not None,
                "current": None if current is None else current.to_wire(),
                "last": self._last,
            }

    def vector_status(self) -> dict[str, Any] | None:
        """``kb_status.vectors``: progress of the embedding pass; null in lexical mode."""
        if self.embedder() is None:
            return None
        counts = self.store.counts()
        return {
            "embeddedChunks": counts.chunks - counts.pending_vectors,
            "pendingChunks": counts.pending_vectors,
            "isRunning": self._vector_lock.locked(),
            "lastError": self._vector_error,
        }

    def status_fields(self) -> dict[str, Any]:
        """The kb_status fields this area owns (the lead adds root, flags, paths)."""
        counts = self.store.counts()
        manifest = self.store.read_manifest()
        emb = self.embedder()
        if emb is None:
            model, dims = "none", None
        else:
            model = emb.model
            dims = self.config.embedding.dimensions
            if dims is None and emb.provider == "local":
                dims = emb.dimensions()
            if dims is None and manifest.get("embedding_dimensions"):
                dims = int(manifest["embedding_dimensions"])
        try:
            problems = self.indexer.compatibility()
        except Exception as exc:  # pragma: no cover - status never fails
            problems = [f"compatibility could not be checked: {exc}"]
        return {
            "databasePath": str(self.store.path),
            "indexExists": self.store.exists(),
            "schemaVersion": SCHEMA_VERSION,
            "chunkerVersion": CHUNKER_VERSION,
            "embeddingTextBuilderVersion": EMBEDDING_TEXT_BUILDER_VERSION,
            "embeddingProvider": self.provider,
            "embeddingModel": model,
            "embeddingDimensions": dims,
            "indexMode": "lexical" if emb is None else "vector-enabled",
            "project": {
                "root": str(self.ws.root),
                "documents": counts.documents,
                "chunks": counts.chunks,
                "lastIndexedAtUtc": counts.last_indexed_at_utc,
            },
            "synchronization": self.sync.status(),
            "indexing": self.indexing_status(),
            "compatibility": {"isCompatible": not problems, "problems": problems},
        }
