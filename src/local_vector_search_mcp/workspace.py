"""The workspace: one knowledge base, its settings and its lazily wired services.

Handlers receive a :class:`Workspace`. The index services are built on first
use, so starting the server never opens the database or loads a model::

    store      = index.stores.open_store(settings)        the storage port
    embedders  = embeddings.EmbedderSlot(config.embedding) one embedder, shared
    activity   = index.activity.IndexActivity()           what indexing is doing
    indexing   = IndexingService(store, embedders, activity)
    search     = SearchService(store, embedders, activity, on_pending_vectors=indexing.kick_vectors)

Indexing and search never import each other; this is the one place that
connects them.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .config import Config, Settings
from .errors import InvalidPath, PermissionDenied
from .lazy_imports import IMPORT_LOCK
from .paths import PathGuard

if TYPE_CHECKING:
    from .embeddings import EmbedderSlot
    from .index.activity import IndexActivity
    from .index.indexing import IndexingService
    from .index.port import IndexStore
    from .search.service import SearchService

__all__ = ["Workspace"]

T = TypeVar("T")
log = logging.getLogger(__name__)


class Workspace:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root: Path = settings.root
        self.storage_path: Path = settings.storage_path
        self.state_dir: Path = settings.state_dir
        self.config: Config = settings.config
        self.guard = PathGuard(settings.root, settings.storage_path, settings.state_dir)
        self._lock = threading.RLock()
        self._store: IndexStore | None = None
        self._embedders: EmbedderSlot | None = None
        self._activity: IndexActivity | None = None
        self._indexing: IndexingService | None = None
        self._search: SearchService | None = None
        self._services: dict[type[Any], Any] = {}
        self._closed = False
        self._catch_up_pending = False
        self._serving = False
        self._replacements_seen = 0  # the store's file_replacements already answered by a reindex

    def service(self, cls: type[T]) -> T:
        """The workspace's single ``cls(self)`` (other areas' per-workspace state, e.g. caches),
        created on first use; closed with the workspace when it has ``close()``."""
        with self._lock:
            instance = self._services.get(cls)
            if instance is None:
                instance = cls(self)  # type: ignore[call-arg]
                self._services[cls] = instance
            return instance

    # index services (built on first use) ----------------------------------------
    @property
    def store(self) -> IndexStore:
        with self._lock:
            if self._store is None:
                with IMPORT_LOCK:
                    from .index.stores import open_store

                self._store = open_store(self.settings)
            return self._store

    @property
    def embedders(self) -> EmbedderSlot:
        with self._lock:
            if self._embedders is None:
                with IMPORT_LOCK:
                    from .embeddings import EmbedderSlot

                self._embedders = EmbedderSlot(self.config.embedding)
            return self._embedders

    @property
    def activity(self) -> IndexActivity:
        with self._lock:
            if self._activity is None:
                with IMPORT_LOCK:
                    from .index.activity import IndexActivity

                self._activity = IndexActivity()
            return self._activity

    @property
    def indexing(self) -> IndexingService:
        with self._lock:
            if self._indexing is None:
                with IMPORT_LOCK:
                    from .index.indexing import IndexingService

                self._indexing = IndexingService(
                    self.root,
                    self.config,
                    self.store,
                    self.embedders,
                    self.activity,
                    addressable=lambda rel: not self.guard.refuses(rel),
                    misnamed=self._misnamed,
                    serving=lambda: self._serving,
                )
            return self._indexing

    @property
    def search(self) -> SearchService:
        with self._lock:
            if self._search is None:
                with IMPORT_LOCK:
                    from .search.service import SearchService

                self._search = SearchService(self.config, self.store, self.embedders, self.activity, self._kick_vectors)
            return self._search

    def check_ready(self, need_chunks: bool = True) -> None:
        """IndexNotReady unless the index can answer (:func:`.index.readiness.check_ready`), without
        importing the search stack: kb_links asks this alone (decision 1098)."""
        with IMPORT_LOCK:
            from .index.readiness import check_ready

        check_ready(self.config, self.embedders, self.store, self.activity, need_chunks)

    def start_serving(self) -> None:
        """A server starts: the watcher starts now (when configured); the catch-up with what
        changed while no server ran starts with the first tool call (:meth:`catch_up_once`), so
        nothing competes with the session's first requests and a bare start opens nothing."""
        self._catch_up_pending = True
        self._serving = True
        if self.config.knowledge_base.watch_files:
            # The watcher only queues paths; nothing is indexed or loaded until a change arrives.
            try:
                self.indexing.start_watching()
            except Exception as exc:  # the server still serves; kb_status shows the watcher error
                log.warning("file watching could not start: %s", exc)

    def catch_up_once(self) -> None:
        """The first tool call of a server starts its catch-up (decision 205), and a call after the
        index file was deleted or replaced a reindex (decision 498); the CLI's one-shot ``call``
        does nothing here."""
        store = self._store
        if self._serving and store is not None:
            replacements = store.file_replacements  # SQLite: a stat of the file, so read once
            if replacements != self._replacements_seen:
                # The index file was deleted or replaced under the server (decision 498): the store
                # follows the path; bring what it now holds in line with the files (a full build on
                # an empty file, a catch-up on an older copy). Single-flight: a running pass is kept.
                self._replacements_seen = replacements
                self.indexing.start_reindex("changed")
        if not self._catch_up_pending:
            return
        with self._lock:
            if not self._catch_up_pending or self._closed:
                return
            self._catch_up_pending = False
            indexing = self.indexing
        indexing.start_catch_up(at_start=True)

    def _misnamed(self, rel: str) -> bool:
        """Whether ``rel`` is a file of the user's that the tools refuse for its name (not valid
        UTF-8, a control character, ``nul.md``...), not one of the server's own files."""
        try:
            refused = self.guard.refusal(rel)
        except InvalidPath:  # `c:notes.md`, `\\draft.md` at the root: names that read as absolute paths
            return True
        return refused is not None and not refused.internal

    def settle_catch_up(self, timeout: float) -> None:
        """kb_status's view of a fresh start (decision 698): start the catch-up now if the server's
        first call has not, and give its compare of the files with the index up to ``timeout``
        seconds, so what it queues is in the answer. Otherwise a status call as the first call after
        a restart read as settled while files a killed server wrote (or another editor changed
        while none ran) were still to be indexed."""
        self.catch_up_once()
        if self._indexing is not None:
            self._indexing.wait_start_compare(timeout)

    def _kick_vectors(self) -> None:
        self.indexing.kick_vectors()

    @property
    def indexing_started(self) -> bool:
        """Whether the indexing service exists (a mutation queued re-indexing, or a reindex ran)."""
        return self._indexing is not None

    @property
    def index_opened(self) -> bool:
        """Whether anything has touched the index yet (status and shutdown stay cheap otherwise)."""
        return self._store is not None

    # writes ---------------------------------------------------------------------
    def require_writes(self) -> None:
        if not self.config.knowledge_base.allow_writes:
            raise PermissionDenied(
                "Workspace writes are disabled: set knowledgeBase.allowWrites: true in the configuration "
                "(or start the server with --allow-writes) to let tools change files."
            )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            indexing, store = self._indexing, self._store
            self._indexing = self._search = None
            self._store = None
            services = list(self._services.values())
            self._services.clear()
        for service in reversed(services):
            close = getattr(service, "close", None)
            if callable(close):
                close()
        if indexing is not None:
            indexing.shutdown()
        if store is not None:
            store.close()
