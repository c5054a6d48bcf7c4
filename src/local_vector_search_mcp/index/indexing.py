"""IndexingService: keeps one knowledge base's index in line with its Markdown.

Built lazily by the workspace (``ws.indexing``); construction opens nothing
and loads no model. It owns, over the storage port:

* the reindex coordinator: :meth:`start_reindex` is single-flight and
  asynchronous (MCP), :meth:`reindex` synchronous (CLI). Both index every
  file lexically first, then embed the pending chunks; the MCP operation stays
  ``current`` through that vector phase (``currentPath`` names the file being
  embedded), and searches meanwhile cover the embedded chunks;
* the vector filler: chunks left pending by targeted sync, by a killed
  process or by a failed provider are embedded by a background pass started
  on the next search or sync (never two passes at once);
* the targeted sync queue (:meth:`schedule_sync`) and the optional watcher;
* the embedder's use for passages (the slot is shared with search).

What it is doing is published in :class:`~.activity.IndexActivity`, which
search and status read; it never imports search.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..config import Config
from ..embeddings import Embedder, EmbedderSlot, EmbeddingError
from ..errors import IndexNotReady, KbError
from ..globs import GlobSet
from .activity import IndexActivity, LastReindex
from .catch_up import CatchUpLedger
from .indexer import (
    Cancelled,
    EmbedResult,
    Indexer,
    Progress,
    ReindexResult,
    ReindexScope,
    UnreadableSource,
    utc_now,
)
from .manifest import enum_value, index_problems
from .pass_rate import PassRate
from .port import IndexStore, IndexUnavailable, RefusedChunk
from .sync import SyncQueue
from .watcher import MarkdownWatcher

__all__ = ["IndexingService", "ReindexStart", "VectorState"]

log = logging.getLogger(__name__)
VECTOR_RETRY_SECONDS = 60.0  # after a provider failure, searches retry the background pass at most this often
# ...and a timer retries it on its own, 2 s, 4 s, 8 s ... up to every 5 minutes, until it answers.
RETRY_FIRST_SECONDS = 2.0
SHUTDOWN_DRAIN_SECONDS = 10.0
# At start, up to this many changed files are re-indexed one by one (targeted sync); more start
# a "changed" reindex (each targeted sync reads every document's state: many would be quadratic).
CATCH_UP_SYNC_LIMIT = 200
# A watched index compares every file with the index after this long without doing so, and lets
# at least AUDIT_COST_SHARE times the last compare's duration pass between two: a change no file
# event reported is indexed within minutes, for at most a hundredth of a core (decision 655)
AUDIT_SECONDS = 300.0
AUDIT_COST_SHARE = 100
RETRY_MAX_SECONDS = 300.0
MAX_LISTED_REFUSED = 20  # kb_status.vectors.refused names the first ones; refusedChunks counts them all
REBUILD_POLL_SECONDS = 0.1  # a targeted sync arriving during a forced rebuild looks this often whether it ended
ONE_SHOT_WAIT = (
    "they wait for vectors and are found by lexical search meanwhile: a server with the model embeds "
    "them in the background, --reindex at once."
)
BACKGROUND_WORKER_NICE = 10  # parse workers of kb_reindex (the CLI's run at normal priority)


# An absolute path left after the root's and the index's are named (a temporary folder, a cache):
# a slash that does not continue a word, a number, a URL or a relative path.
_OTHER_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/~-])/(?:[\w.@+~-]+/)*[\w.@+~-]+")
_URL_CREDENTIALS = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s@]+@", re.IGNORECASE)


def in_product_words(text: str, root: Path, storage_path: Path | None = None) -> str:
    """``text`` (an exception's message) without the server machine's absolute paths: a path
    under the project root becomes root-relative, the index file outside it ``storage.path``
    (its folder ``storage.path's folder``), the root itself "the project root", any other
    absolute path "<a path outside the project root>"; a URL's credentials become ``***``."""
    names: list[tuple[str, str, str]] = []  # (path, its name, what may not follow it)
    whole = r"(?![\w.@+~-])"
    roots = {str(root), os.path.realpath(root)}
    if storage_path is not None and not any(_under(str(storage_path), r) for r in roots):
        for path in {str(storage_path), os.path.realpath(storage_path)}:
            names.append((path, "storage.path", ""))  # also its -wal and -journal
        for folder in {str(storage_path.parent), os.path.realpath(storage_path.parent)}:
            names.append((folder, "storage.path's folder", whole))
    for r in roots:
        names.append((r.rstrip("/") + "/", "", ""))
        names.append((r, "the project root", whole))
    # longest first: a file's name before its folder's
    for path, name, end in sorted(names, key=lambda item: len(item[0]), reverse=True):
        if len(path) > 1:
            text = re.sub(re.escape(path) + end, name, text)
    text = _OTHER_ABSOLUTE_PATH.sub("<a path outside the project root>", text)
    return _URL_CREDENTIALS.sub(r"\1***@", text)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _transient(exc: Exception) -> bool:
    """A targeted sync failure worth retrying on its own (decision 326): not a file that cannot be
    read or parsed, nor a refusal the server explains (an incompatible index: KbError), unless
    the index is only unreachable for now (decision 498)."""
    return isinstance(exc, IndexUnavailable) or not isinstance(exc, (UnreadableSource, KbError))


@dataclass(frozen=True, slots=True)
class ReindexStart:
    """What ``kb_reindex`` answers: whether this call started a run, and the run now current."""

    started: bool
    current: Progress


@dataclass(frozen=True, slots=True)
class VectorState:
    """Progress of the embedding pass (``kb_status.vectors``)."""

    embedded_chunks: int
    pending_chunks: int
    is_running: bool
    last_error: str | None
    refused_chunks: int = 0  # the provider refused their text (decision 510)
    refused: tuple[RefusedChunk, ...] = ()  # the first MAX_LISTED_REFUSED of them
    eta_seconds: int | None = None  # the running pass's estimate (decision 804)


class IndexingService:
    def __init__(
        self,
        root: Path,
        config: Config,
        store: IndexStore,
        embedders: EmbedderSlot,
        activity: IndexActivity,
        addressable: Callable[[str], bool] | None = None,
        misnamed: Callable[[str], bool] | None = None,
        serving: Callable[[], bool] | None = None,
    ) -> None:
        """``addressable``: whether the tools accept a root-relative path at all (the path guard);
        a file they refuse is not indexed either, so no search result names it (decision 283).
        ``misnamed``: whether the guard refuses a user's file for its name, which a reindex then
        names in its warning (decision 707). ``serving``: whether this process is a server (not
        the CLI's one-shot ``call``), whose edit that creates the index catches up with the
        other files at once (decision 1086)."""
        self.root = root
        self.config = config
        self.store = store
        self.embedders = embedders
        self.activity = activity
        kb = config.knowledge_base
        globs = GlobSet(list(kb.include), list(kb.exclude))
        self.path_filter: Callable[[str], bool] = (
            globs if addressable is None else (lambda rel: globs(rel) and addressable(rel))
        )
        self._misnamed: Callable[[str], bool] | None = (
            None if misnamed is None else (lambda rel: globs(rel) and misnamed(rel))
        )
        self._serving: Callable[[], bool] = serving if serving is not None else (lambda: False)
        self.gate = threading.RLock()
        self._indexer: Indexer | None = None
        self._indexer_generation = -1
        self.sync = SyncQueue(self._reconcile, retryable=_transient, describe=self._sync_failure_text)
        self.watcher: MarkdownWatcher | None = None
        self._reindex_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._vector_thread: threading.Thread | None = None
        self._vector_error_at = 0.0
        self._retry_delay = RETRY_FIRST_SECONDS
        self._retry_timer: threading.Timer | None = None
        self._pass_rate = PassRate()  # kb_status.vectors.etaSeconds (decision 804)
        self._catch_up_thread: threading.Thread | None = None
        self._compares: list[threading.Thread] = []  # every catch-up started, the ended ones pruned
        self._start_compare: threading.Thread | None = None  # the server's start-up catch-up (decision 698)
        self._next_audit = 0.0  # set when watching starts
        self._compare_seconds = 0.0  # the last catch-up's compare of every file with the index
        self._caught_up = CatchUpLedger()  # what the start's catch-up did, for the next reindex to count
        # a one-shot process's re-indexed paths, whose chunks it embeds before it exits (decision 640)
        self._written: set[str] = set()
        self._written_lock = threading.Lock()

    # components --------------------------------------------------------------
    def embedder(self) -> Embedder | None:
        return self.embedders.get()

    def use_embedder(self, embedder: Embedder | None) -> None:
        """Replace the configured embedder (tests, benchmarks)."""
        self.embedders.replace(embedder)

    @property
    def indexer(self) -> Indexer:
        if self._indexer is None or self._indexer_generation != self.embedders.generation:
            embedder = self.embedder()
            self._indexer = Indexer(
                self.root, self.store, self.config, self.path_filter, embedder, self.gate, misnamed=self._misnamed
            )
            self._indexer_generation = self.embedders.generation
        return self._indexer

    # vectors ---------------------------------------------------------------------
    def kick_vectors(self, retry: bool = False) -> bool:
        """Start a background pass over pending chunks unless one (or a reindex) runs, or this
        process is a CLI call that ends with its answer (which would cancel the pass)."""
        if self.embedder() is None or self.activity.one_shot:
            return False
        if self.activity.current is not None:
            if retry:  # a reindex is running and embeds too; look again after it
                self._retry_later()
            return False
        recent = time.monotonic() - self._vector_error_at < VECTOR_RETRY_SECONDS
        if self.activity.vector_error is not None and recent and not retry:
            return False
        if not self.activity.embedding.acquire(blocking=False):
            return False
        self._vector_thread = threading.Thread(target=self._vector_pass, name="kb-vectors", daemon=True)
        self._vector_thread.start()
        return True

    def _vector_pass(self) -> None:
        while True:
            result: EmbedResult | None
            try:
                with self.store.exclusive_pass("embedding", wait=False) as held:
                    # another server embedding: it fills the same pending rows, nothing to do here
                    result = (
                        self.indexer.embed_pending(cancel=self._cancel, give_way=lambda: self.activity.embedding.wanted)
                        if held
                        else None
                    )
                if result is not None:
                    self._report_embedding(result)
            except Cancelled:
                result = None
            except Exception as exc:  # never kill the server
                if isinstance(exc, (KbError, OSError)):  # a known state (the database down, a full disk)
                    log.warning("background embedding failed: %s", self._sync_failure_text(exc))
                else:
                    log.exception("background embedding failed")
                # the index failed, not the provider (a database restarting): said in kb_status and tried
                # again with the provider's backoff, not left pending until the next search (decision 685)
                self.activity.vector_error = f"The embedding pass failed: {self._sync_failure_text(exc)}"[:300]
                self._vector_error_at = time.monotonic()
                self._retry_later()
                result = None
            finally:
                self.activity.embedding.release()
            if result is None or result.warning or not result.pending:
                return
            # Chunks indexed during the pass, or left when it gave way: another pass, unless a caller
            # waits for the turn, which starts one when it is done (kick_after_turn, decision 978).
            if not self.activity.embedding.acquire(blocking=False):
                return

    def _report_embedding(self, result: EmbedResult) -> None:
        self.activity.vector_error = None
        if result.error is not None:
            self.activity.vector_error = result.error[:300]
            self._vector_error_at = time.monotonic()
            self._retry_later()
        else:
            self._retry_delay = RETRY_FIRST_SECONDS
        for path in result.failed_paths:
            self.sync.report_error(path, result.warning or "embedding failed")

    def _retry_later(self) -> None:
        """A provider that failed is tried again with backoff, so vectors fill in without a restart."""
        if self._cancel.is_set() or (self._retry_timer is not None and self._retry_timer.is_alive()):
            return
        delay, self._retry_delay = self._retry_delay, min(self._retry_delay * 2, RETRY_MAX_SECONDS)
        self._retry_timer = threading.Timer(delay, self._on_retry_timer)
        self._retry_timer.daemon = True
        self._retry_timer.start()

    def _on_retry_timer(self) -> None:
        self._retry_timer = None
        if not self._cancel.is_set():
            self.kick_vectors(retry=True)

    def embed_written(self) -> str | None:
        """Embed the chunks this one-shot process's re-indexing left pending, before it exits
        (decision 640): no background pass outlives a CLI call, and the next call's semantic
        search must find the edit. Bounded to the paths this process re-indexed; chunks of other
        documents waiting for vectors are named, not embedded. Returns what the user should be
        told, or ``None``; never raises: the edit stands whatever the provider does."""
        with self._written_lock:
            paths, self._written = frozenset(self._written), set()
        if not paths or self.embedder() is None:  # a read-only call loads no model
            return None
        try:
            if not self.store.pending_vector_count():
                return None
            with self.activity.embedding, self.store.exclusive_pass("embedding", wait=False) as held:
                # another server's pass (PostgreSQL) embeds every pending chunk, these among them
                result = self.indexer.embed_pending(paths=paths) if held else None
            mine = self.store.pending_vector_count(paths)
            others = max(0, self.store.pending_vector_count() - mine)
        except Exception as exc:  # the index or the provider failed: the edit is written and indexed
            log.warning("embedding the edited chunks failed", exc_info=True)
            return (
                "The edit is saved and indexed lexically, but its chunks could not be embedded "
                f"({self._in_product_words(str(exc)) or type(exc).__name__}); {ONE_SHOT_WAIT}"
            )
        told: list[str] = []
        if result is None:
            told.append(
                f"{mine} chunk(s) this command wrote wait for vectors: another server is embedding the "
                "index's pending chunks, these among them."
            )
        elif mine:
            why = result.error or result.first_refused or "the provider did not embed them"
            told.append(
                f"The edit is saved and indexed lexically, but {mine} of its chunk(s) could not be embedded "
                f"({self._in_product_words(why).rstrip('.')}); {ONE_SHOT_WAIT}"
            )
        elif result.refused and result.warning:
            told.append(result.warning)
        if others:
            told.append(
                f"{others} chunk(s) of other documents, not written by this command, wait for vectors too: "
                "a server with the model embeds them in the background, --reindex at once."
            )
        return " ".join(told) or None

    def wait_vectors(self, timeout: float | None = None) -> None:
        thread = self._vector_thread
        if thread is not None:
            thread.join(timeout)

    # reindex ---------------------------------------------------------------------
    def reindex(
        self,
        scope: ReindexScope = "changed",
        force: bool = False,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> ReindexResult:
        """Synchronous reindex (CLI). Raises IndexNotReady when incompatible without force."""
        with self._reindex_lock:
            if self.activity.current is not None:
                raise IndexNotReady("A reindex is already running in this process.")
            progress = self.activity.current = Progress(scope, force)
        try:
            return self._run(progress, on_progress)
        finally:
            self.activity.current = None

    def _run(
        self,
        progress: Progress,
        on_progress: Callable[[Progress], None] | None = None,
        worker_nice: int = 0,
    ) -> ReindexResult:
        # one reindex at a time across every server sharing the store (PostgreSQL: an advisory
        # lock; a server that dies releases it); the others keep searching and editing meanwhile
        with self.store.exclusive_pass("reindex", wait=True):
            result = self.indexer.reindex(
                progress.scope,
                progress.force,
                progress=progress,
                cancel=self._cancel,
                on_progress=on_progress,
                worker_nice=worker_nice,
                caught_up=self._caught_up.take,
            )
        # Every file is in the tables again: a forced rebuild throws nothing away any more, so
        # searches and targeted syncs go on while the vectors are made, as after any reindex
        # (decisions 80, 1072); kb_status says it is no longer destructive.
        progress.is_destructive_rebuild = False
        self.activity.vector_error = None  # a reindex retries a provider that failed before
        with self.activity.embedding, self.store.exclusive_pass("embedding", wait=True):
            # waits for a background pass of this process, or of another server, already running
            embedded = self.indexer.embed_pending(progress, self._cancel, on_progress)
        # failures from before this reindex are retried, but not the paths this pass could not
        # embed: their re-sync would succeed at once (their rows are current) and wipe the
        # failure kb_status must show while their vectors are missing
        self._retry_failed_syncs(skip=frozenset(embedded.failed_paths))
        self._report_embedding(embedded)
        if embedded.warning:
            result.warning = f"{result.warning} {embedded.warning}" if result.warning else embedded.warning
        return result

    def _retry_failed_syncs(self, skip: frozenset[str] = frozenset()) -> None:
        """After a reindex, targeted syncs that failed (an incompatible index, a database error)
        run again, so no failure the reindex has since repaired stays in kb_status; files the
        reindex itself found unreadable are not retried (decision 324)."""
        unreadable = self.store.unreadable_files()
        self.sync.retry_failed(lambda path: path not in unreadable and path not in skip)

    def start_reindex(self, scope: str | None = "changed", force: bool = False) -> ReindexStart:
        """Single-flight asynchronous reindex (MCP); ``scope`` case-insensitive."""
        resolved: ReindexScope = "all" if scope and enum_value(scope) == "all" else "changed"
        with self._reindex_lock:
            if self.activity.current is not None:
                return ReindexStart(False, self.activity.current)
            progress = Progress(resolved, bool(force))
            # said at once to the agent that asked, and searches refuse from now on (decision 1073)
            progress.is_destructive_rebuild = progress.force and self.indexer.forced_pass_rebuilds()
            self.activity.current = progress
            self._thread = threading.Thread(target=self._background, args=(progress,), name="kb-reindex", daemon=True)
            self._thread.start()
            return ReindexStart(True, progress)

    def _background(self, progress: Progress) -> None:
        outcome: Literal["succeeded", "failed", "cancelled"] = "succeeded"
        result, error = None, None
        try:
            # the server's own reindex: parse workers yield the CPU to searches and the event loop
            result = self._run(progress, worker_nice=BACKGROUND_WORKER_NICE)
        except Cancelled:
            outcome = "cancelled"
        except KbError as exc:
            outcome, error = "failed", exc.message
        except EmbeddingError as exc:
            outcome, error = "failed", f"Embedding provider failed: {exc}"
        except Exception as exc:  # never kill the server
            log.exception("reindex failed")  # the traceback, with the real paths, for the operator
            outcome, error = "failed", self._unexpected_failure(exc, progress)
        with self._reindex_lock:
            self.activity.last = LastReindex(
                progress.scope, progress.force, progress.started_at_utc, utc_now(), outcome, result, error
            )
            self.activity.current = None
        if outcome == "succeeded":
            self.kick_after_turn()  # edits made while it ran wait for vectors (no pass starts during a reindex)

    def kick_after_turn(self) -> None:
        """Start a background pass for the chunks still pending once a caller that held the
        embedding turn (a reindex, ``index_note``) is done: a pass that gave way to it, and edits
        kicked meanwhile, left them (decision 978)."""
        try:
            if self.embedder() is not None and self.store.pending_vector_count():
                self.kick_vectors()
        except Exception as exc:  # the index went away meanwhile: the next edit or search kicks again
            log.warning("could not start embedding the pending chunks: %s", getattr(exc, "message", exc))

    def _unexpected_failure(self, exc: Exception, progress: Progress) -> str:
        """kb_status' words for a reindex killed by an exception nobody expected (a bug, a failing
        disk): where it stopped and the exception's type and text for a bug report, with paths in
        the product's words (decision 346)."""
        if progress.phase == "vectors":
            where = "while embedding pending chunks"
        else:
            where = "while indexing files" + (f" (at {progress.current_path!r})" if progress.current_path else "")
        text = self._in_product_words(str(exc))
        return (
            f"The reindex stopped on an unexpected error {where}: {type(exc).__name__}: {text}. "
            "The server's log (stderr) has the details; run kb_reindex again, and report this "
            "message if it repeats."
        )

    def _in_product_words(self, text: str) -> str:
        storage = getattr(self.store, "path", None)
        return in_product_words(text, self.root, storage if isinstance(storage, Path) else None)

    def _sync_failure_text(self, exc: Exception) -> str:
        """kb_status' words for a failed targeted sync (decision 350): a refusal the server
        explains (KbError) or a file that cannot be read by its message, anything else by its
        type and text; the server machine's paths in the product's words either way (as decision
        346 does for a reindex)."""
        if isinstance(exc, (KbError, UnreadableSource)):
            return self._in_product_words(exc.message)
        text = self._in_product_words(str(exc))
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    def wait_reindex(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    # targeted sync and watching ---------------------------------------------------------
    def schedule_sync(self, paths: Iterable[str]) -> None:
        """Queue root-relative paths for re-indexing (edits, moves: both paths)."""
        self.sync.schedule(paths)

    def _reconcile(self, path: str) -> None:
        while self.activity.rebuild_in_progress:  # the path waits for the rebuild (decision 324)
            if self._cancel.wait(REBUILD_POLL_SECONDS):
                raise IndexNotReady("forced rebuild in progress")
        if self._caught_up.claim(path):
            # The start's catch-up: under the gate, so a reindex takes the ledger either before this
            # sync or after it was recorded, and counts it either way (decision 870).
            with self.gate:
                if self.activity.current is not None:
                    return  # the running reindex brings every file in line, and counts this one
                was_indexed = path in self.store.document_states_of([path])
                self._caught_up.record(path, self.indexer.reconcile(path), was_indexed)
        else:
            # no index yet, or a database file without one (an empty file): the sync sets it up
            first = self._serving() and not self.store.read_manifest()
            self.indexer.reconcile(path)
            if first and self.store.read_manifest():
                # This edit made the index of a knowledge base never indexed: alone in it, its file
                # answered every search as if the base held nothing else ("no indexed chunk holds
                # it" for words on every other page) until a restart's catch-up (decision 205)
                # brought the rest in. Catch up now, as that start would (decision 1086): as its
                # catch-up, so the next kb_reindex counts the files it brings in (decision 870) and
                # kb_status waits for its compare (decision 698).
                self.start_catch_up(at_start=True)
        if self.activity.one_shot:
            with self._written_lock:
                self._written.add(path)
        elif self._vectors_wait():
            self.kick_vectors()

    def _vectors_wait(self) -> bool:
        """Whether chunks wait for vectors this run can make: those marked pending, or every chunk
        of an index whose vector table does not exist yet because the provider never answered
        (kb_status counts them so). Their rows are not marked (a table to mark them for comes with
        the provider's vector size), so counting only marked rows never started the pass that
        sizes the table: a restart, or an edit of a base first indexed while the provider was
        down, left them waiting for good (decision 1089). An index built without embeddings is no
        such index: it is incompatible with this run, and a pass would convert it silently."""
        embedder = self.embedder()
        if embedder is None:
            return False
        if self.store.has_vectors():
            return bool(self.store.pending_vector_count())
        return self.store.has_chunks() and not index_problems(self.config, embedder, self.store)

    def start_catch_up(self, at_start: bool = False, audit: bool = False) -> None:
        """Catch up in the background with what changed while no server ran, or what a killed
        server still had queued (decision 205); ``at_start``: the server's own, whose changes the
        next reindex reports (decision 870), not the watcher's after it lost events; ``audit``:
        the watcher's periodic compare (decision 655)."""
        thread = threading.Thread(target=self._catch_up, args=(at_start, audit), name="kb-catch-up", daemon=True)
        thread.start()
        # published once started: kb_status joins it from another thread (decision 698), and joining
        # a thread not yet started raises
        self._catch_up_thread = thread
        self._compares = [t for t in self._compares if t.is_alive()] + [thread]
        if at_start:
            self._start_compare = thread

    def _catch_up(self, at_start: bool = False, audit: bool = False) -> None:
        try:
            if not self.store.exists():  # nothing to compare with: build no indexer, load nothing
                return
            started = time.monotonic()
            changed = self.indexer.changed_paths()
            self._compare_seconds = time.monotonic() - started
            # an index an earlier release wrote is brought up to date by a reindex, so the first
            # start after an upgrade runs one: nobody has to know to ask for it (decision 1006)
            upgrade = at_start and changed is not None and self.indexer.upgrade_pending()
        except Exception as exc:  # a damaged or busy index: searches and kb_status say so
            log.warning("could not compare the files with the index at start: %s", getattr(exc, "message", exc))
            return
        if self._cancel.is_set():
            return
        if upgrade:
            log.info("the index was written by an earlier release; bringing it up to date in place")
            self.start_reindex("changed")  # which re-indexes the changed files too
            return
        if not changed:
            if at_start:  # a server killed mid-pass left chunks waiting: the next one embeds them (686)
                self._resume_vectors()
            return
        if audit:
            self._warn_unheard(changed)
        else:
            log.info("%d file(s) changed since the index was last updated; re-indexing them", len(changed))
        if len(changed) > CATCH_UP_SYNC_LIMIT:
            self.start_reindex("changed")  # one pass (parallel parsing) beats many targeted syncs
        elif self.activity.current is None:  # else the running reindex does it all
            if at_start:
                self._caught_up.queue(changed)
            self.schedule_sync(changed)

    def _warn_unheard(self, changed: list[str]) -> None:
        """The periodic compare's warning names only the changes no event announced (decision 991):
        a file saved while the compare ran is changed on disk and waits in the watcher's quiet
        period or the sync queue, so it was heard, and counting it blamed the folder for lost events."""
        heard = set(self.sync.pending())
        unheard = [path for path in changed if path not in heard]
        if unheard:
            log.warning(
                "%d file(s) changed without a file event (a folder whose edits raise none, such as a "
                "network share, or a watch the system refused); re-indexing them",
                len(unheard),
            )

    def _resume_vectors(self) -> None:
        try:
            pending = self._vectors_wait()
        except Exception as exc:  # the index said why at the compare; a search will say it again
            log.warning("could not count the chunks waiting for vectors: %s", getattr(exc, "message", exc))
            return
        if pending:
            self.kick_vectors()

    def wait_catch_up(self, timeout: float | None = None) -> None:
        thread = self._catch_up_thread
        if thread is not None:
            thread.join(timeout)

    @property
    def comparing(self) -> bool:
        """Whether a compare of every file with the index runs (the start's catch-up or the
        watcher's): what it will find changed is not queued yet (kb_status, decision 986). The
        thread ends after queueing its findings, so no moment reads as settled in between. Any of
        them: a second one started meanwhile (a write's take-over, decision 989) may end first."""
        return any(thread.is_alive() for thread in self._compares)

    def wait_start_compare(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the start-up catch-up's compare (kb_status, decision
        698); not for the watcher's periodic audit, which a status call has no reason to wait for."""
        thread = self._start_compare
        if thread is not None:
            thread.join(timeout)

    def start_watching(self) -> None:
        if self.watcher is None:
            self.watcher = MarkdownWatcher(
                self.root,
                self.sync,
                self.path_filter,
                lambda prefix: list(self.store.document_states_under(prefix)),
                on_lost_events=self.start_catch_up,  # compare every file, as at start (decision 322)
                bulk_limit=CATCH_UP_SYNC_LIMIT,
                on_many=self._reindex_many,
                on_idle=self._audit_if_due,
            )
            self._next_audit = time.monotonic() + AUDIT_SECONDS
            self.watcher.start()

    def _audit_if_due(self) -> None:
        """(The watcher's thread, while nothing waits.) Compare every file with the index, as at
        start, once ``AUDIT_SECONDS`` have passed (decision 655). File events are not the whole
        truth: a network or container-mounted folder raises none for another machine's edits,
        the system's watch limit leaves folders unwatched, and a watchdog defect lost a moved
        folder's watch (decision 649); without this the index stayed behind until a restart."""
        now = time.monotonic()
        if now < self._next_audit or self._cancel.is_set():
            return
        thread = self._catch_up_thread
        if thread is not None and thread.is_alive():
            return  # a compare runs: the next tick looks again
        self._next_audit = now + max(AUDIT_SECONDS, AUDIT_COST_SHARE * self._compare_seconds)
        if self.activity.current is None:  # a running reindex compares every file itself
            self.start_catch_up(audit=True)

    def _reindex_many(self, count: int) -> bool:
        """The watcher's many settled paths: one ``changed`` reindex, as the start's catch-up does
        for as many (decision 741); False when one already runs (it may have listed the tree first)."""
        if self._cancel.is_set() or not self.start_reindex("changed").started:
            return False
        log.info("%d file(s) changed at once; re-indexing them in one pass", count)
        return True

    def shutdown(self) -> None:
        # Drain the targeted sync queue first (bounded): an edit made just before exit must
        # not leave the index behind the file (issue 10). What is left, the next start's
        # catch-up finds again (start_serving).
        self.wait_catch_up(SHUTDOWN_DRAIN_SECONDS)
        self.sync.wait_idle(SHUTDOWN_DRAIN_SECONDS)
        self._cancel.set()
        timer = self._retry_timer
        if timer is not None:
            timer.cancel()
        if self.watcher is not None:
            self.watcher.stop()
        self.sync.stop()
        self.wait_reindex(10)
        self.wait_vectors(10)

    # status -----------------------------------------------------------------------
    def vector_state(self) -> VectorState | None:
        """``kb_status.vectors``: progress of the embedding pass; ``None`` in lexical mode, unless
        the index holds vectors (built with embeddings, used by this run without them: decision
        630), whose counts say what the model's next run embeds."""
        if self.embedder() is None and not self.store.has_vectors():
            return None
        # the pass's state before the counts (decision 386): a pass ending in between is shown
        # running, never stopped without an error beside the pending count from before it
        running, error = self.activity.embedding.locked(), self.activity.vector_error
        counts = self.store.counts()
        # No vector table yet (the provider has not answered): every chunk still waits for a vector.
        pending = counts.pending_vectors if self.store.has_vectors() else counts.chunks
        refused_count, refused = self.store.refused_vectors(MAX_LISTED_REFUSED)
        embedded = max(0, counts.chunks - pending - refused_count)
        eta = self._pass_rate.eta_seconds(running, embedded, pending, time.monotonic())
        return VectorState(embedded, pending, running, error, refused_count, tuple(refused), eta)
