"""Reindexing: discovery, the cheap unchanged check, one transaction per file.

``Indexer.reindex`` is synchronous; the single-flight background coordinator
and the CLI both call it. Incremental by default (``scope="changed"``):

1. discover ``.md`` files under the root that match include/exclude
   (case-insensitive), sorted case-insensitively; folders starting with ``.``
   (``.git``, the index folder) are never entered;
2. delete indexed documents that are gone or now excluded;
3. skip a file whose size and mtime equal the stored ones; when they differ,
   hash it and only touch the stored stat if the content hash is unchanged (a
   file read within a clock tick of its last change is stored with a smudged
   size, so the next pass hashes it again: ``prepare.recorded_size``);
4. otherwise parse once, chunk, and replace the document's rows in one
   transaction (so a failure or a kill keeps the previous revision). Vectors
   of unchanged chunk texts are reused; new chunks are stored *pending*.
   With parse workers, consecutive files share a transaction (a write batch
   of at most :data:`BATCH_FILES` files or :data:`BATCH_SECONDS`, committed
   before the writer waits any longer for the workers): a kill loses at most
   the open batch, whose files keep their previous revision and are indexed
   again by the next pass (spec/decisions.md 250). An in-process pass of at
   least :data:`IN_PROCESS_BATCH_FILES` files asks for a batch too; only a
   store whose batch holds no lock across the next file's parse gives one
   (PostgreSQL's pipeline, each document still its own transaction; 720).

Reading, hashing, parsing and chunking (``prepare.py``) run in worker
processes when there are many files to parse (``parallel.py``,
``knowledgeBase.indexWorkers``); this process stays the only writer and
stores the files in discovery order, so the index is the same either way.

Vectors are filled afterwards by :meth:`Indexer.embed_pending` (lexical
search works as soon as a file's transaction commits; the local model is
slow, so the CLI runs this pass synchronously after the files and the MCP
server in the background). A kill during either pass leaves a usable index:
pending chunks are simply embedded by the next pass.

``scope="all"`` reprocesses every file (vectors are still reused by text hash).
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..embeddings import Embedder, EmbeddingError, EmbeddingRefused, ModelChanged
from ..errors import IndexNotReady
from ..globs import GlobSet, root_only
from ..paths import shown_name
from ..sourcefile import os_reason
from .catch_up import Credit
from .chunker import build_embedding_text
from .manifest import (
    CHANGED_LETTERS,
    DEFERRED_UPGRADES,
    LINK_GRAPH_KEY,
    RESTEMMED_BYTES,
    borrows_vectors,
    current_manifest,
    enum_value,
    in_place_upgrades,
    incompatible_message,
    index_problems,
)
from .parallel import ParsePool, plan_workers
from .port import (
    DocumentRecord,
    DocumentState,
    IndexDamaged,
    IndexStore,
    NoBatch,
    PendingChunk,
    WriteBatch,
    utc_now,
)
from .prepare import (
    SMUDGED_SIZE,
    ChunkSettings,
    Outcome,
    Prepared,
    Task,
    Unchanged,
    Unreadable,
    Vanished,
    front_matter_properties,
    prepare,
    stat_stamp,
    verify,
)

__all__ = ["Cancelled", "EmbedResult", "Indexer", "Progress", "ReindexResult", "front_matter_properties", "utc_now"]


log = logging.getLogger(__name__)

ReindexScope = Literal["changed", "all"]

# A write batch (parse workers only) commits after this many files or once it is this old
# (other writers of this process wait for it at most that long, plus one file).
BATCH_FILES = 64
BATCH_SECONDS = 0.05
# An in-process pass of at least this many files to parse asks for a batch too (decision 720)
IN_PROCESS_BATCH_FILES = 50


def _idle(batch: WriteBatch) -> bool:
    """The writer is about to wait for parse workers: commit a batch that is old enough;
    True while one stays open (the wait is then kept short)."""
    if batch.age >= BATCH_SECONDS:
        batch.flush()
    return batch.files > 0


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
    refused: int = 0  # chunks the provider refused in this pass (decision 510)
    first_refused: str | None = None  # "path (chunk n): reason" of the first
    gave_way: bool = False  # stopped between batches for a caller waiting for the turn (decision 978)


class _Isolated:
    """What one batch gave once the texts the provider refused were split off (decision 510)."""

    def __init__(self) -> None:
        self.vectors: list[tuple[PendingChunk, np.ndarray[Any, Any]]] = []
        self.refused: list[tuple[PendingChunk, str]] = []
        self.split = False  # the provider refused the batch as a whole, so it was halved


MAX_LISTED_UNREADABLE = 20  # the result names the first ones; the count says how many in all
SYNC_RECHECKS = 2  # a targeted sync re-indexes a file another server re-indexed meanwhile at most this often


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
        *,
        misnamed: Callable[[str], bool] | None = None,
    ) -> None:
        self.root = Path(root)
        self.store = store
        self.config = config
        self.path_filter = path_filter
        self.misnamed = misnamed  # a file the globs take that the tools refuse for its name
        self.embedder = embedder
        self.gate = gate or threading.RLock()

    # manifest -----------------------------------------------------------------
    def expected_manifest(self, probe: bool) -> dict[str, str]:
        return current_manifest(self.config, self.embedder, self.store, probe)

    def compatibility(self, probe: bool = False) -> list[str]:
        return index_problems(self.config, self.embedder, self.store, probe)

    def forced_pass_rebuilds(self) -> bool:
        """Whether a forced reindex started now throws the index away and builds it anew: an index
        built with other settings, one built with embeddings under a run without them (decision
        630), a damaged one. kb_reindex tells its caller at once (decision 1073); the pass itself
        decides again when it starts."""
        try:
            return bool(self.compatibility()) or borrows_vectors(self.store.read_manifest(), self.embedder)
        except IndexDamaged:
            return True
        except Exception:  # the pass runs into it too, and kb_status says what happened
            return False

    def upgrade_pending(self) -> bool:
        """Whether an earlier release wrote the index and the next reindex brings it up to date in
        place (``manifest.UPGRADED_IN_PLACE``: the chunker, the link graph, the lexical tokenizer)."""
        stored = self.store.read_manifest()
        if not stored or self.compatibility():
            return False
        return bool(in_place_upgrades(stored, self.expected_manifest(probe=False)))

    def vector_storage(self) -> str:
        return enum_value(self.config.embedding.vector_storage)

    # discovery ----------------------------------------------------------------
    def discover(
        self, unlisted: dict[str, str] | None = None, *, matched: bool = True, misnamed: list[str] | None = None
    ) -> list[str]:
        """The Markdown files to index; folders that cannot be listed go to ``unlisted``
        (``folder/`` -> reason) instead of vanishing silently, and files the tools refuse for
        their names to ``misnamed``. ``matched=False``: every Markdown file, whatever
        knowledgeBase.include and exclude say."""
        found = []

        def refused(exc: OSError) -> None:
            if unlisted is not None and exc.filename is not None and not isinstance(exc, FileNotFoundError):
                rel = os.path.relpath(exc.filename, self.root).replace(os.sep, "/")
                unlisted[f"{rel}/"] = f"The folder could not be listed ({os_reason(exc)})."

        for dirpath, dirnames, filenames in os.walk(self.root, onerror=refused):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel_dir = os.path.relpath(dirpath, self.root)
            for name in filenames:
                if not name.lower().endswith(".md") or name.startswith("."):  # decision 460
                    continue
                rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
                if not matched or self.path_filter(rel):
                    found.append(rel)
                elif misnamed is not None and self.misnamed is not None and self.misnamed(rel):
                    misnamed.append(rel)
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
        worker_nice: int = 0,
        caught_up: Callable[[], dict[str, Credit]] | None = None,
    ) -> ReindexResult:
        """Bring the index in line with every file (``worker_nice``: priority of parse workers;
        ``caught_up``: takes what the server's start-up catch-up changed, which this pass counts)."""
        progress = progress or Progress(scope, force)
        result = ReindexResult()
        try:
            self.store.read_manifest()  # opens the database: a damaged one is found here
            if force:  # a forced pass must leave a sound index, wherever the damage is (decision 496)
                self.store.check()
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
        # no embeddings here, an index built with them: used as it is, its manifest and vectors
        # kept for the next run with the model; forced, it is rebuilt as lexical (decision 630)
        stored = self.store.read_manifest()
        borrowed = borrows_vectors(stored, self.embedder)
        upgraded = set() if problems else in_place_upgrades(stored, expected)
        # An older chunker's index taken as it is: the documents the new one chunks otherwise are
        # read again in this pass, whatever their stat says: v6's documents without a chunk of their
        # own (decision 781), and those holding an HTML block, found below (decision 1025).
        rechunk: set[str] = set()
        if "chunker_version" in upgraded and stored["chunker_version"] == "6":
            rechunk = set(self.store.documents_without_own_chunks())
        # An earlier tokenizer's index: the documents holding the letters it indexed otherwise are
        # read again, which rewrites their lexical rows and reuses every vector (decision 1006).
        letters = CHANGED_LETTERS[stored["lexical_tokenizer"]] if "lexical_tokenizer" in upgraded else None
        # the paths each deferred upgrade re-reads: its key is recorded only once all were written
        meant: dict[str, set[str]] = {
            "chunker_version": set(rechunk),
            "lexical_tokenizer": set(),
            LINK_GRAPH_KEY: set(),
        }
        if letters:
            meant["lexical_tokenizer"] = set(self.store.documents_holding_letters(letters))
            rechunk |= meant["lexical_tokenizer"]
        # an index without HTML <img> links (or relative autolinks) keeps the old link graph version
        # in its manifest until this pass has re-read every document that may hold one, and an earlier
        # tokenizer's index that tokenizer's name: a pass cut short leaves them to the next (decisions
        # 820, 901, 1006)
        deferred = upgraded & DEFERRED_UPGRADES
        relink = LINK_GRAPH_KEY in deferred
        written = _deferring(expected, stored, deferred)
        credit: dict[str, Credit] = {}
        with self.gate:
            if problems or (force and borrowed):
                if not force:
                    raise IndexNotReady(incompatible_message(problems))
                progress.is_destructive_rebuild = True  # search refuses until this reindex ends
                if caught_up is not None:
                    caught_up()  # everything is indexed anew, nothing deleted: nothing to credit
                self.store.reset(dims, self.vector_storage())
                self.store.write_manifest(expected)
            else:
                progress.is_destructive_rebuild = False  # kb_reindex may have foreseen otherwise
                # Taken under the gate a catch-up sync holds while it runs and records (decision 870).
                credit = caught_up() if caught_up is not None else {}
                self.store.ensure_schema(dims, self.vector_storage())
                if not borrowed:
                    self.store.write_manifest(written)
        unlisted: dict[str, str] = {}
        misnamed: list[str] = []
        files = self.discover(unlisted, misnamed=misnamed)
        progress.total_files = len(files)
        result.scanned_files = len(files)
        result.warning = self._nothing_matched() if not files else self._root_folder_only(files)
        if misnamed:
            named = _misnamed_note(misnamed)
            result.warning = f"{result.warning} {named}" if result.warning else named
        wanted = set(files)
        states = self.store.document_states()
        known = self.store.unreadable_files()  # kept across restarts for kb_status
        # A folder that cannot be listed is reported, and its documents keep their entries:
        # not seeing a file is no proof that it is gone.
        hidden = tuple(unlisted)
        for path in sorted(set(states) - wanted):
            if path.startswith(hidden):
                continue
            with self.gate:
                if self.store.delete_document(path):
                    result.deleted_files += 1
        # documents of gone or excluded files the start's catch-up deleted before this pass
        result.deleted_files += sum(
            1
            for path, done in credit.items()
            if done == "deleted" and path not in wanted and path not in states and not path.startswith(hidden)
        )
        for folder, reason in sorted(unlisted.items()):
            result.add_unreadable(folder, reason)
            self._note_unreadable(folder, reason, known)
            log.info("not listed: %s: %s", folder, reason)
        for path in sorted(set(known) - wanted - set(unlisted)):  # gone, now excluded, or listable again
            if not (path.startswith(hidden) and not path.endswith("/")):
                self._note_unreadable(path, None, known)
        if relink:
            new_links = _new_links(stored.get(LINK_GRAPH_KEY))
            meant[LINK_GRAPH_KEY] = {path for path in files if path in states and new_links(self.root / path)}
            rechunk |= meant[LINK_GRAPH_KEY]
        if letters is not None:  # every earlier tokenizer stemmed accented Latin words otherwise (decision 1192)
            restem = {path for path in files if path in states and _holds(self.root / path, RESTEMMED_BYTES)}
            meant["lexical_tokenizer"] |= restem
            rechunk |= restem
        if "chunker_version" in upgraded:
            new_pieces = _new_pieces(stored["chunker_version"])
            meant["chunker_version"] |= {
                path for path in files if path in states and _holds(self.root / path, new_pieces)
            }
            rechunk |= meant["chunker_version"]
        refused: set[str] = set()  # the files this pass could not read
        tasks = []
        for path in files:  # the cheap unchanged check needs no worker
            # a file the start's catch-up re-indexed is indexed (and counted) again by this pass
            fresh = scope == "all" or path in rechunk or credit.get(path) == "indexed"
            state = None if fresh else states.get(path)
            if state is not None and self._same_stat(path, state):
                result.skipped_files += 1
                progress.processed_files += 1
            else:
                tasks.append(Task(path, None if state is None else state.source_hash))
        workers = plan_workers(self.config.knowledge_base.index_workers, len(tasks))
        with ExitStack() as stack:
            outcomes: Iterable[Outcome]
            batch: WriteBatch = NoBatch()
            if workers:
                pool = stack.enter_context(ParsePool(self.root, self.chunk_settings(), workers, worker_nice))
                # the batch is left first: its last files are committed before the workers stop
                batch = stack.enter_context(self.store.write_batch(self.gate))
                outcomes = pool.run(tasks, cancel, partial(_idle, batch))
            else:
                outcomes = self._prepare_here(tasks)
                if len(tasks) >= IN_PROCESS_BATCH_FILES:
                    # a store whose batch holds no lock across the next file's parse (PostgreSQL's
                    # pipeline) sends this file's write while that parse runs (decision 720)
                    batch = stack.enter_context(self.store.write_batch(self.gate, parsing=True))
            for prepared in outcomes:
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                path = prepared.path
                progress.current_path = path
                if on_progress:
                    on_progress(progress)
                try:
                    outcome: int | None = self._write(prepared)
                except UnreadableSource as bad:
                    outcome = None
                    refused.add(path)
                    result.add_unreadable(path, bad.reason)
                    self._note_unreadable(path, bad.reason, known)
                    log.info("not indexed: %s: %s", path, bad.reason)
                except FileNotFoundError:
                    outcome = None
                    with self.gate:
                        if self.store.delete_document(path):
                            result.deleted_files += 1
                    self._note_unreadable(path, None, known)
                if outcome is not None:
                    self._note_unreadable(path, None, known)
                if outcome is None:
                    pass  # vanished between discovery and indexing
                elif outcome < 0:
                    result.skipped_files += 1
                else:
                    result.indexed_files += 1
                    result.chunks_indexed += outcome
                progress.processed_files += 1
                if batch.files >= BATCH_FILES or batch.age >= BATCH_SECONDS:
                    batch.flush()
            if cancel is not None and cancel.is_set():
                raise Cancelled()
        if result.indexed_files or result.deleted_files:
            with self.gate:
                if letters:
                    # a re-read chunk whose text did not change keeps its counted terms, the earlier
                    # tokenizer's: the counts are made anew from the index (decision 1011)
                    self.store.forget_term_stats()
                self.store.refresh_term_stats()
            self._tidy(cancel)
        # A deferred upgrade is recorded only when every document it meant to re-read was written and
        # every folder listed: one left unread (a moment's EACCES, a locked file) would otherwise keep
        # what the earlier release wrote for good, as its size and mtime do not change (decision 1011).
        done = {k for k in upgraded if k not in deferred or not (unlisted or refused & meant.get(k, set()))}
        if done:
            # a run without embeddings keeps the rest of its manifest (decision 630), but records what
            # it upgraded: otherwise every start would run this pass again (decision 1006)
            with self.gate:
                self.store.write_manifest({**self.store.read_manifest(), **{k: expected[k] for k in done}})
        if borrowed and not force and result.indexed_files:
            note = self._borrowed_note()
            if note:
                result.warning = f"{result.warning} {note}" if result.warning else note
        progress.current_path = None
        if on_progress:
            on_progress(progress)
        return result

    def _tidy(self, cancel: threading.Event | None) -> None:
        """Tidy the lexical index in short steps (decision 637), each under the gate: an edit
        waits for one step at most, and a pass cancelled here leaves the rest to the next one."""
        while cancel is None or not cancel.is_set():
            with self.gate:
                if not self.store.tidy_lexical():
                    return

    def _borrowed_note(self) -> str | None:
        """What a run without embeddings left for the model's next run (decision 630)."""
        pending = self.store.pending_vector_count()
        if not pending:
            return None
        model = self.store.read_manifest().get("embedding_model", "its model")
        return (
            f"This run has no embeddings (embedding.provider none) and the index was built with '{model}': "
            f"{pending} changed chunk(s) wait for vectors, added by the next run with that model. Every chunk "
            "is searchable lexically now; the other vectors are kept."
        )

    def _nothing_matched(self) -> str | None:
        """Say so when the globs leave out every Markdown file of the root: an index of nothing
        answers every search with no result, which looks like a search problem, not a glob one."""
        markdown = len(self.discover(matched=False))
        if not markdown:  # a wrong root (or `.markdown`/`.mdx` files): say it, no glob is to blame (decision 554)
            return (
                f"The knowledge-base root {self.root} holds no Markdown file (`.md`; names and folders starting "
                "with a dot are skipped): nothing is indexed. Check knowledgeBase.root (CLI: --root)."
            )
        kb = self.config.knowledge_base
        excluded = f" minus knowledgeBase.exclude {list(kb.exclude)}" if kb.exclude else ""
        return (
            f"No Markdown file matches knowledgeBase.include {list(kb.include)}{excluded}, though the root "
            f"{self.root} holds {markdown} Markdown file(s); globs are relative to that root and `*` stays "
            "within one folder (`**/*.md` is every file). Nothing is indexed."
        )

    def _root_folder_only(self, files: list[str]) -> str | None:
        """Say so when ``include: ['*.md']`` leaves out the Markdown of every subfolder: the
        pattern matches in the root folder only (the contract's glob rules, which kb_search's
        globs share), while its writer most often meant every file (decision 553). The second
        walk runs only for such an include."""
        kb = self.config.knowledge_base
        include, exclude = list(kb.include), list(kb.exclude)
        if not root_only(include):
            return None
        deeper = GlobSet([f"**/{p}" for p in include], exclude)
        taken = set(files)
        left = [p for p in self.discover(matched=False) if p not in taken and deeper(p)]
        if not left:
            return None
        return (
            f"knowledgeBase.include {include} matches files in the root folder only (a glob without '/' stays "
            f"in one folder, as in kb_search): {len(left)} Markdown file(s) in subfolders are not indexed, such "
            f"as {left[0]!r}. Write {[f'**/{p}' for p in include]} to index every folder; to index the root's "
            "files only and drop this warning, add '*/**' to knowledgeBase.exclude."
        )

    def changed_paths(self) -> list[str] | None:
        """The paths whose file differs from its index entry by size or mtime, is new, or is gone
        (a stat per file); ``None`` when there is no usable index to compare with. An entry stored
        racily clean (smudged size, decision 401) is read and hashed here instead: equal bytes are
        not a change (its real stat is recorded once it can vouch), so a start right after an
        index queues nothing.

        Files recorded as unreadable are left to the next reindex or edit (re-reading them at
        every start would only repeat their error), unless they are gone or no longer documents
        (decision 462); folders that cannot be listed keep theirs.
        """
        if not self.store.exists() or not self.store.read_manifest() or self.compatibility():
            return None
        unlisted: dict[str, str] = {}
        files = self.discover(unlisted)
        states = self.store.document_states()
        known = self.store.unreadable_files()
        hidden = tuple(unlisted)
        changed = {p for p in files if p not in known and (p not in states or not self._same_stat(p, states[p]))}
        for path in sorted(p for p in changed if p in states and states[p].size == SMUDGED_SIZE):
            same = verify(self.root, path, states[path].source_hash)
            if same is not None:
                changed.discard(path)
                if same.size != SMUDGED_SIZE:
                    with self.gate:
                        self.store.touch_document(path, same.size, same.mtime_ns)
        present = set(files)
        changed.update(p for p in states if p not in present and not p.startswith(hidden))
        # a file recorded unreadable that is gone (or no longer a document) is synced: its record goes
        changed.update(p for p in known if p not in present and not p.endswith("/") and not p.startswith(hidden))
        return sorted(changed, key=lambda p: (p.lower(), p))

    def _note_unreadable(self, path: str, reason: str | None, known: dict[str, str]) -> None:
        """Keep the stored list of unreadable files in step (written only when it changes)."""
        if known.get(path) == reason:
            return
        with self.gate:
            self.store.set_unreadable(path, reason)
        if reason is None:
            known.pop(path, None)
        else:
            known[path] = reason

    def chunk_settings(self) -> ChunkSettings:
        return ChunkSettings.from_config(self.config)

    def _prepare_here(self, tasks: list[Task]) -> Iterator[Outcome]:
        settings = self.chunk_settings()
        for task in tasks:
            yield prepare(self.root, task, settings)

    def _same_stat(self, path: str, state: Any) -> bool:
        try:
            st = os.lstat(self.root / path)  # as prepare() does: a link never passes for its target
        except OSError:
            return False  # preparing it says what is wrong (gone, unreadable)
        return bool(state.size == st.st_size and state.mtime_ns == stat_stamp(st))  # decision 463

    def _update_file(self, path: str, state: DocumentState | None) -> int:
        """Index one file in this process if its bytes changed: chunk count, or -1 when unchanged.

        No stat shortcut here: a targeted sync runs because an edit or the watcher says the path
        changed, and a rewrite of the same size within the file system's timestamp granularity
        keeps both size and mtime (a coarse clock: ~4 ms on Linux before 6.13, 1-2 s on HFS+ and
        FAT), so only the bytes tell. Reading and hashing one file costs far less than the parse
        an equal hash still saves."""
        known = None if state is None else state.source_hash
        # cache: an edit just parsed this revision, so the targeted sync that follows reuses it
        return self._write(prepare(self.root, Task(path, known), self.chunk_settings(), cache=True))

    def _write(self, outcome: Outcome) -> int:
        """Store one prepared file: its chunk count, or -1 when its bytes are unchanged.
        Raises :class:`UnreadableSource` (its old entry dropped) or ``FileNotFoundError``."""
        if isinstance(outcome, Prepared):
            return self.store_prepared(outcome)
        if isinstance(outcome, Unchanged):
            with self.gate:
                self.store.touch_document(outcome.path, outcome.size, outcome.mtime_ns)
            return -1
        if isinstance(outcome, Unreadable):
            self._forget(outcome.path)
            raise UnreadableSource(outcome.path, outcome.reason)
        assert isinstance(outcome, Vanished)
        raise FileNotFoundError(outcome.path)

    def _forget(self, path: str) -> None:
        """Drop the index entry of a file that can no longer be read: the index shows only what is on disk."""
        with self.gate:
            self.store.delete_document(path)

    def store_prepared(self, prepared: Prepared) -> int:
        """Replace one document's rows with ``prepared`` in one transaction (vectors of unchanged
        chunk texts reused); returns the chunk count."""
        chunks = prepared.chunks
        # also without an embedder: a run without embeddings on an index built with them keeps the
        # vectors of unchanged texts, and only the changed chunks wait for the model (decision 630)
        reuse = self.store.vectors_by_text_hash(prepared.path) if chunks else {}
        if reuse:
            chunks = [replace(c, vector=reuse.get(c.embedding_text_hash)) for c in chunks]
        with self.gate:
            record = DocumentRecord(
                prepared.path,
                prepared.source_hash,
                prepared.size,
                prepared.mtime_ns,
                utc_now(),
                prepared.properties,
            )
            return self.store.replace_document(record, chunks, prepared.links, prepared.meta)

    # vectors ------------------------------------------------------------------------
    def embed_pending(
        self,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        paths: Collection[str] | None = None,
        give_way: Callable[[], bool] | None = None,
    ) -> EmbedResult:
        """Embed the chunks pending when the pass starts (of the documents at ``paths`` only, when
        given), one provider batch and one transaction at a time.

        Stops at the first provider failure (the chunks stay pending, their path is reported), and
        between batches once ``give_way()`` says another caller waits for the turn. Chunks indexed
        meanwhile are left to the next pass: with edits streaming in, a pass that took them too
        never ended, and a reindex waiting for it neither (decision 978).
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
        batch = max(1, int(getattr(self.config.embedding, "batch_size", 16) or 16))
        dims = _maybe_int(self.store.read_manifest().get("embedding_dimensions"))
        if progress is not None:
            progress.phase = "vectors"
            progress.pending_chunks = self.store.pending_vector_count()
        answered = False  # the provider embedded a text of this index's size in this pass
        refused_here: set[int] = set()
        budget = self.store.pending_vector_count(paths)  # the chunks this pass is for
        taken = 0
        while taken < budget:
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            if taken and give_way is not None and give_way():
                result.gave_way = True
                break
            todo = self.store.pending_vectors(min(batch, budget - taken), paths)
            if not todo or refused_here.issuperset(p.chunk_id for p in todo):
                break  # done (or the store could not set refused chunks aside: never loop on them)
            taken += len(todo)
            if progress is not None:
                progress.current_path = todo[0].path
                if on_progress:
                    on_progress(progress)
            try:
                got = self._embed_isolating(todo, dims)
                if got.refused and not answered and not got.vectors:
                    self._probe(dims)  # raises when nothing embeds, not even a word: the endpoint is at fault
            except Exception as exc:  # EmbeddingError or a provider bug
                result.failed_paths = sorted({p.path for p in todo})
                result.error = str(exc) or type(exc).__name__
                # No file is named: the provider failed a whole batch, whatever its texts (a text it
                # refuses is isolated above), and this warning is also each failed path's reason in
                # kb_status, where "failed for <the batch's first file>" blamed one file for all.
                result.warning = (
                    f"Embedding failed: {result.error.rstrip('.')}. Every file is indexed and "
                    "searchable lexically; the chunks without vectors are embedded by the next kb_reindex once "
                    "the provider works."
                )
                break
            answered = answered or bool(got.vectors)
            if got.split and not got.refused:
                batch = max(1, len(todo) // 2)  # the batch was too large for the endpoint (413), no text was
            with self.gate:
                stored = self.store.store_vectors(got.vectors)
                self.store.refuse_vectors(got.refused)
            refused_here.update(p.chunk_id for p, _ in got.refused)
            if got.refused and result.first_refused is None:
                first, reason = got.refused[0]
                result.first_refused = f"{first.path}: {reason.rstrip('.')}"
            result.refused += len(got.refused)
            result.embedded += stored
            if progress is not None:
                progress.embedded_chunks += stored
                progress.pending_chunks = max(0, (progress.pending_chunks or 0) - len(todo))
        if result.refused and result.warning is None:
            result.warning = (
                f"The embedding provider refused {result.refused} chunk(s) (the first in {result.first_refused}); "
                "every other chunk has its vector. The refused ones are found by lexical search only, and "
                "embedded again when their document changes (kb_status.vectors.refused names them)."
            )
        result.pending = self.store.pending_vector_count()
        if progress is not None:
            progress.current_path = None
            progress.pending_chunks = result.pending
            if on_progress:
                on_progress(progress)
        return result

    def _embed_isolating(self, todo: list[PendingChunk], dims: int | None) -> _Isolated:
        """Embed ``todo``; when the provider refuses the batch, embed each half on its own, down
        to the one text it refuses (decision 510). Vectors of another size than the index's are
        never stored: a whole batch of them means another model behind the endpoint."""
        assert self.embedder is not None
        include_heading = self.config.chunking.include_heading_context
        texts = [build_embedding_text(p.path, p.text, p.heading_path, include_heading) for p in todo]
        out = _Isolated()
        try:
            vectors = self.embedder.embed_passages(texts)
            _check_width(vectors, dims)
        except ModelChanged as exc:
            if len(todo) > 1:  # a whole batch of another size: another model, not one odd text
                raise
            out.refused.append((todo[0], f"The embedding provider returned a {exc.width}-dimensional vector for it."))
            return out
        except EmbeddingRefused as exc:
            if len(todo) == 1:
                out.refused.append((todo[0], _refusal(exc)))
                return out
            mid = len(todo) // 2
            for half in (todo[:mid], todo[mid:]):
                part = self._embed_isolating(half, dims)
                out.vectors += part.vectors
                out.refused += part.refused
            out.split = True
            return out
        out.vectors = [(p, np.asarray(v, dtype=np.float32)) for p, v in zip(todo, vectors, strict=True)]
        return out

    def _probe(self, dims: int | None) -> None:
        """Raise unless the provider embeds a short text at the index's size: tells a refused text
        from an endpoint that refuses everything (a model name it does not know answered with 400,
        a crash's 500, another model)."""
        assert self.embedder is not None
        try:
            vectors = self.embedder.embed_passages(["dimension probe"])
        except EmbeddingRefused as exc:
            raise EmbeddingError(
                f"The embedding endpoint refuses every text, even a two-word one ({str(exc).rstrip('.')}); "
                "check embedding.model and embedding.endpoint."
            ) from exc
        _check_width(vectors, dims)

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
        # a file reached through a linked folder is not one a reindex finds (it never follows a
        # link): a real folder swapped for a link deletes its documents (decision 461)
        wanted = indexable(path, self.path_filter) and not _through_link(self.root, path)
        # a link, FIFO or device is read (and refused, reported) like a file, as the reindex does
        if wanted and os.path.lexists(full) and not full.is_dir():
            if self.compatibility():
                raise IndexNotReady("index is incompatible with the configuration; run kb_reindex force=true")
            state = self.store.document_states_of([path]).get(path)  # not every document's (decision 340)
            self.store.ensure_schema(
                _maybe_int(self.store.read_manifest().get("embedding_dimensions")), self.vector_storage()
            )
            if not self.store.read_manifest():
                try:
                    manifest = self.expected_manifest(probe=True)
                except EmbeddingError as exc:
                    # The provider is down: as in a reindex, lexical indexing never waits for it and
                    # the vector pass sizes the vector table once it answers; probing here failed the
                    # first edit's sync for as long as the provider was down (decision 1088).
                    log.warning("embedding provider unavailable, indexing lexically: %s", exc)
                    manifest = self.expected_manifest(probe=False)
                self.store.write_manifest(manifest)
            known = self.store.unreadable_files()
            try:
                outcome = self._update_file(path, state)
                # Another server of this index may have stored a later revision while this one
                # prepared the bytes it had read; storing after it would leave the older revision
                # indexed and nothing would sync the path again (decision 447). Look once more.
                for _ in range(SYNC_RECHECKS):
                    if outcome < 0:
                        break  # the disk holds what the index holds
                    state = self.store.document_states_of([path]).get(path)
                    if state is not None and verify(self.root, path, state.source_hash) is not None:
                        break
                    outcome = self._update_file(path, state)
            except FileNotFoundError:
                outcome = None  # moved or deleted after the look above: a deletion (decision 320)
            except UnreadableSource as bad:
                if _present(full):
                    self._note_unreadable(path, bad.reason, known)
                    raise
                outcome = None  # replaced by a folder, or gone, while it was read (decision 320)
            if outcome is not None:
                self._note_unreadable(path, None, known)
                return "unchanged" if outcome < 0 else "indexed"
        if not self.store.exists():
            # No index: it holds nothing to remove. Opening one here made an empty database file
            # whose missing tables failed this sync on every retry (decision 1087).
            return "deleted"
        with self.gate:
            self.store.delete_document(path)
        self._note_unreadable(path, None, self.store.unreadable_files())
        return "deleted"


def _present(full: Path) -> bool:
    """Whether ``full`` is still something a reindex would index or report (not gone, not a folder)."""
    return os.path.lexists(full) and not full.is_dir()


def _hidden(path: str) -> bool:
    """A dot folder on the way (decision 281) or a dot file: editors' lock and swap files
    (emacs `.#note.md`, macOS `._note.md`) are not documents (decision 460)."""
    return any(part.startswith(".") for part in path.split("/"))


def _through_link(root: Path, path: str) -> bool:
    """Whether a folder on the way from ``root`` to ``path`` is a link (or not a folder at all):
    `discover` never enters one, so what lies behind it is not a document (decision 461)."""
    folder = root
    for part in path.split("/")[:-1]:
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return True
        except OSError:
            return True  # gone: so is the file
    return False


def indexable(path: str, path_filter: Callable[[str], bool]) -> bool:
    """Whether a root-relative path belongs in the index: a `.md` file matching the include and
    exclude globs, not under a folder whose name starts with a dot (decision 281) nor itself named
    with a leading dot (decision 460), as `discover` finds."""
    return path.lower().endswith(".md") and path_filter(path) and not _hidden(path)


def _check_width(vectors: np.ndarray[Any, Any], dims: int | None) -> None:
    """Raise :class:`ModelChanged` when ``vectors`` are not rows of the index's size ``dims``."""
    width = int(vectors.shape[1]) if vectors.ndim == 2 else -1
    if dims is not None and width != dims:
        raise ModelChanged(width, dims)


MAX_NAMED_MISNAMED = 5


def _misnamed_note(paths: list[str]) -> str:
    """A reindex's word on the Markdown files it left out for their names (decision 707)."""
    paths = sorted(paths, key=lambda p: (p.lower(), p))
    shown = ", ".join(f"'{shown_name(p)}'" for p in paths[:MAX_NAMED_MISNAMED])
    more = f" and {len(paths) - MAX_NAMED_MISNAMED} more" if len(paths) > MAX_NAMED_MISNAMED else ""
    return (
        f"{len(paths)} Markdown file(s) were left out because the tools cannot address their names "
        f"(not valid UTF-8, a control character, a name the system reserves...): {shown}{more}; rename "
        "them to index them (kb_list_files lists each in `skipped` with its reason)."
    )


def _refusal(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


# TOML front matter's opening fence, after a BOM or none: what link graph v4 reads (its tags,
# aliases and fields) that an older index took for a paragraph (decision 1026)
_TOML_FRONT_MATTER = rb"\A(?:\xef\xbb\xbf)?\+\+\+"
# what each link graph version reads that the one before it lacks: v2 ``<img`` (decision 820),
# v3 a ``<page.md>`` autolink (901), v4 TOML front matter, v5 an ``<a`` tag holding ``href`` (1032;
# the rust book's 63 files of ``<a id="...">`` anchors, ``<abbr>`` and ``<aside>`` are not read again;
# no ``<`` before ``href``, so no two openings' scans overlap: a file of unclosed ``<a `` is read once),
# v6 an ``<img`` or ``<source`` tag holding ``srcset`` (1156; a page of plain ``<img src>`` is not) or
# a footnote's definition ``[^1]:`` (1157; no ``[`` in the label, so no two scans overlap) or text
# written decomposed, whose tags v6 keeps in NFC (1129): a combining mark (U+0300-U+036F), a Hangul
# jamo (U+1100-U+11FF) or a kana voicing mark (U+3099, U+309A), as UTF-8; or a media tag naming a
# file (1186): `<video>`, `<audio>`, `<source>`, `<track>`, `<embed>`, `<iframe>` with `src` (or
# `srcset`), `<video poster>`, `<object data>` (no `<` between, so no two openings' scans overlap)
_DECOMPOSED = rb"\xcc[\x80-\xbf]|\xcd[\x80-\xaf]|\xe1[\x84-\x87][\x80-\xbf]|\xe3\x82[\x99\x9a]"
_NEW_LINKS = (
    (2, rb"<img"),
    (3, rb"<[^\s<>]*\.md[#?>]"),
    (4, _TOML_FRONT_MATTER),
    (5, rb"<a[\s/][^<>]*href"),
    (6, rb"<(?:img|source)\b[^<>]*srcset"),
    (6, rb"\[\^[^\[\]\r\n]*\]:"),
    (6, _DECOMPOSED),
    (6, rb"<(?:video|audio|source|track|embed|object|iframe)\b[^<>]*(?:src|poster|data)"),
)


def _new_links(stored: str | None) -> Callable[[Path], bool]:
    """Whether a file's bytes may hold what the link graph versions after ``stored`` (None: before
    v2) read; a file that cannot be read now is left to the pass, which reports it. Every version
    since v5 looks for ``<a`` anywhere, so each file is read whole once (v4's look alone read six
    bytes)."""
    after = int(stored) if stored is not None and stored.isdigit() else 1
    parts = [pattern for version, pattern in _NEW_LINKS if version > after]
    found = re.compile(b"|".join(parts), re.IGNORECASE).search

    def may_hold(path: Path) -> bool:
        try:
            return found(path.read_bytes()) is not None
        except OSError:
            return True

    return may_hold


# what chunker v8 reads that v7 did not: a line that may open an HTML block (a tag, a comment or a
# declaration at most three spaces in, a byte order mark before the first); a line opening with an
# autolink or inline HTML matches too, and its file is re-read for nothing (every vector is kept)
_HTML_BLOCK = re.compile(rb"(?:^|[\r\n])(?:\xef\xbb\xbf)? {0,3}<[A-Za-z!?/]")


# what chunker v9 reads that v8 did not: a line that may open a footnote definition at the top level
# (``[^``, as ``markdown.footnotes`` takes it, after at most three spaces; decision 1194)
_FOOTNOTE_DEFINITION = rb"(?:^|[\r\n])(?:\xef\xbb\xbf)? {0,3}\[\^"
# the pieces each chunker version added to a document v6 chunked, by the line that may hold them
_NEW_PIECES = ((8, _HTML_BLOCK.pattern), (9, _FOOTNOTE_DEFINITION))


def _new_pieces(stored: str) -> re.Pattern[bytes]:
    """What a file's bytes may hold for the chunker versions after ``stored`` to chunk it otherwise."""
    after = int(stored) if stored.isdigit() else 6
    return re.compile(b"|".join(pattern for version, pattern in _NEW_PIECES if version > after))


def _holds(path: Path, pattern: re.Pattern[bytes]) -> bool:
    """Whether the file's bytes match ``pattern``; a file that cannot be read now is left to the
    pass, which reports it (decisions 820, 901, 1025)."""
    try:
        return pattern.search(path.read_bytes()) is not None
    except OSError:
        return True


def _deferring(expected: dict[str, str], stored: dict[str, str], deferred: set[str]) -> dict[str, str]:
    """The manifest a pass writes at its start: ``expected`` but the ``deferred`` keys as stored
    (left out where the index has none), recorded once the pass has gone through every file."""
    kept = {key: stored[key] for key in deferred if key in stored}
    return {**{key: value for key, value in expected.items() if key not in deferred}, **kept}


def _maybe_int(value: str | None) -> int | None:
    return int(value) if value else None
