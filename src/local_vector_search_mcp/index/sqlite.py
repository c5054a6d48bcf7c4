"""SQLite adapter of the storage port: apsw + FTS5 + sqlite-vec.

One SQLite library per process: apsw bundles its own SQLite (FTS5 on,
extension loading on) and is the only binding that loads ``vec0`` here (the
stdlib ``sqlite3`` must never load it: two SQLite copies with vec0 in one
process crash).

Layout (schema version 5, layout 3)::

    index_manifest(key PK, value)
    documents(id, path UNIQUE, source_hash, size, mtime_ns, indexed_at_utc)
    chunks(id, document_id -> documents ON DELETE CASCADE, ordinal, anchor,
           heading_path, embedding_text_hash, body, vector_pending)
    chunks_fts   FTS5, contentless (rows deleted by rowid), columns body and
                 heading (CJK runs bigrammed here, ``cjk.py``), unicode61, rank bm25(1, 2)
    chunks_stems FTS5, contentless: the English stems of the chunk's
                 words (``stem.py``); searched beside chunks_fts and combined
                 with a quarter of its weight (``fts5.py``)
    chunk_vectors vec0(chunk_id PK, document_id metadata, embedding <type>[D])
                 float32: float[D] cosine; int8: int8[D] cosine (codes with one
                 scale per vector, decision 425: cosine ignores it); binary: bit[D]
                 (scanned in numpy for the Hamming candidates, decision 430)
    chunk_vectors_exact(chunk_id PK, embedding float32 BLOB)   binary only,
                 used to re-rank the hamming candidates exactly
    chunk_vectors_centre(id = 1, vectors, centre float32 BLOB)   binary only: the
                 bits are those of ``vector - centre`` (decision 380); an index
                 from before this table keeps raw signs
    chunks_fts_vocab fts5vocab(chunks_fts, row): chunk count per term
    term_stats(term PK, doc) the chunk counts of common terms (query building
                 reads them); every write keeps them once a refresh has built them
                 (the row of term '', decision 650)
    links(document_id -> documents ON DELETE CASCADE, ordinal, kind, destination,
          text, anchor)   links as written; resolved when read (``index/links.py``)
    document_meta(document_id PK -> documents ON DELETE CASCADE, tags, aliases,
          headings, block_ids)   JSON arrays
    document_tags(tag, document_id -> documents ON DELETE CASCADE)   casefolded,
          one row per tag and per parent of a nested tag (the tag filter)

Size (lexical index <= 2x the Markdown): chunk text is stored once,
zlib-compressed, in ``chunks.body`` (snippets are cut in Python from the few
hits a query returns); the FTS index is contentless; the logical pointer is
the first part of the stored anchor; there is no per-element table (nothing
reads it: kb_read and kb_outline parse the live file).

Vectors are filled after the lexical rows: a chunk stored without a vector in
a vector-enabled index has ``vector_pending = 1`` (partial index
``chunks_pending``) until :meth:`SqliteStore.store_vectors` writes it.

Concurrency: WAL, ``synchronous=NORMAL``, a 30 s busy timeout, and every
write is one ``BEGIN IMMEDIATE`` transaction, so several server processes on
one project queue for the write lock instead of corrupting anything; readers
never block. Each thread gets its own connection.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import inspect
import itertools
import json
import logging
import os
import re
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt
import sqlite_vec

from ..config import ConfigError
from ..errors import IndexNotReady
from ..sourcefile import os_reason
from .chunks import unit
from .cjk import cjk_index_text, index_terms
from .coverage import COVERAGE_DEPTH, rerank, wants_coverage
from .derive import chunk_stems, pack_body, unpack_body
from .fts5 import (
    COMMON_TERM_MIN_CHUNKS,
    STEM_BUDGET,
    STEM_DEPTH,
    STEM_WEIGHT,
    combine_stemmed,
    quote_phrase,
    render_match,
    render_stems,
    stem_counts,
    stem_key,
    stem_prices,
)
from .kept_vectors import NEAR, KeptVectors, stored_rows, unit_rows, vec0_cosine_distances, vec0_int8_distances
from .owner import Owner, Verdict, needs_file_record, refusal, verdict
from .port import (
    ChunkHit,
    ChunkRecord,
    DocumentDump,
    DocumentMeta,
    DocumentRecord,
    DocumentState,
    IndexDamaged,
    IndexUnavailable,
    LinkRecord,
    NoBatch,
    PendingChunk,
    RefusedChunk,
    StoreCounts,
    StoredLink,
    WriteBatch,
    normalize_tag,
    tag_prefixes,
    utc_now,
)
from .quantized import (
    CENTRE_SAMPLE,
    INT8_MIN_CANDIDATES,
    INT8_OVERFETCH,
    binary_candidates,
    int8_codes,
)
from .query import LexicalQuery, PathScope
from .segments import MERGE_STEP_PAGES, STRUCTURE_ROWID, read_structure, worth_merging
from .split_rank import alone, merge_ranked, row_ranges, run_all, split_parts
from .sqlite_chunks import ChunkTables, dump_properties
from .vecmath import dot_rows

__all__ = ["LAYOUT_VERSION", "SqliteStore"]

log = logging.getLogger(__name__)

LAYOUT_VERSION = "3"
DF_CACHE_SIZE = 50_000
_LEXICAL_TABLES = ("chunks_fts", "chunks_stems")  # the FTS5 tables: words as written, their stems
# Each table's ``rank`` as a call: ``chunks_fts`` is made with ``rank = bm25(1.0, 2.0)`` (the
# heading column weighs 2), ``chunks_stems`` keeps FTS5's default ``bm25()``. Called by name, an
# unscoped ranking ends in SQLite's bounded top-N sort; ``ORDER BY rank`` made FTS5 sort every
# match first (decision 657)
_HEADING_WEIGHTS = "1.0, 2.0"
_BM25 = {"chunks_fts": f"bm25(chunks_fts, {_HEADING_WEIGHTS})", "chunks_stems": "bm25(chunks_stems)"}

BUSY_TIMEOUT_MS = 30_000
DAMAGE = (apsw.CorruptError, apsw.NotADBError)  # SQLite's answers for a damaged file or not a database
_VEC0_PARTS = ("chunk_vectors_info", "chunk_vectors_chunks", "chunk_vectors_rowids", "chunk_vectors_vector_chunks00")
_CONNECTION_SERIALS = itertools.count(1)  # snapshot_key: tells this thread's successive connections apart
# term_stats' marker row: its term is no token, its count the threshold the table is kept at. A
# refresh of an earlier release (DELETE FROM term_stats, then the common terms) takes it away.
_KEPT_TERM = ""
_FTS5_MAX_TOKEN_BYTES = 32_768  # FTS5 indexes a token's first this many bytes
_FTS5_MAX_TOKEN_CHARS = _FTS5_MAX_TOKEN_BYTES // 4  # a token of no more characters is never cut
_Indexed = tuple[bytes, str | None]  # a chunk's packed body and heading path, as stored
# A write batch (a reindex pass) whose writes have read this many chunks' text for the term counts
# stops keeping them, and the pass's refresh rebuilds the table (decision 651): tokenizing takes
# 0.1-0.3 ms a chunk, a rebuild 60-300 ms at 17,861-30,045 chunks.
COUNT_READ_LIMIT = 1_000
# Loading every kept vector row costs about 20 us a row (0.4 CPU-s at opensearch-docs' 17,424, 1.2 s at
# 50k): above this many chunks a process's first semantic searches ask vec0 while a thread loads
# them (decision 647); below, the first search loads them itself (~40 ms).
KEPT_LOAD_IN_CALL = 2_048
KEPT_LOAD_JOIN_S = 5.0  # a store closing waits this long for that thread to be done with its connection


class _TermChanges(Counter[str]):
    """One write's term count changes, and how many chunks' text it read (tokenized) for them."""

    read = 0


class _ThreadEnd:
    """Kept in a thread's local storage beside its connection. Python drops a thread's local
    storage when the thread ends, and with it this object, which then hands the store the
    connection to close (decision 520). Nothing is closed here (it runs in the ending thread's
    teardown, where no lock may be waited for): the next statement of any thread closes it. The
    thread may still count as alive for a moment after this, so the connection is named, not
    found by ``is_alive()``; one replaced in a live thread (a new file at the path) is no longer
    the thread's and is left alone."""

    __slots__ = ("conn", "store", "thread")

    def __init__(self, store: SqliteStore, conn: apsw.Connection) -> None:
        self.store = weakref.ref(store)
        self.thread = threading.current_thread()
        self.conn = conn

    def __del__(self) -> None:
        store = self.store()
        if store is not None:
            store._ended.append((self.thread, self.conn))  # atomic: no lock in a teardown


_DERIVED = (
    "refused_vectors",  # before chunks: its rows reference them
    "unreadable_files",
    "links",
    "document_meta",
    "document_tags",
    "term_stats",
    "chunks_fts_vocab",
    "chunks_fts",
    "chunks_stems",
    "chunk_vectors",
    "chunk_vectors_exact",
    "chunk_vectors_centre",
    "chunks",
    "elements",
    "documents",
)


_pack = pack_body
_unpack = unpack_body


def _f32(vec: npt.NDArray[np.float32]) -> bytes:
    return np.ascontiguousarray(vec, dtype=np.float32).tobytes()


def _i8(vec: npt.NDArray[np.float32]) -> bytes:
    """The int8 codes: one scale per vector (decision 425), as the PostgreSQL adapter's."""
    return bytes(int8_codes(vec).tobytes())


def _bits(vec: npt.NDArray[np.float32], centre: npt.NDArray[np.float32] | None = None) -> bytes:
    """The sign bits of ``vec - centre`` (``centre`` None: of ``vec``, an index from before 380)."""
    return bytes(np.packbits((vec if centre is None else vec - centre) > 0, bitorder="little").tobytes())


class _Batch:
    """Writes of one thread in one transaction, begun at the first write after a flush.

    The transaction holds the store's lock (and ``hold``, taken first: the caller's
    writer gate, so no other thread of this process can wait on the lock while
    holding the gate this thread needs next). A write that fails rolls back the
    whole open transaction, not only its own rows: its exception ends the caller's
    pass, and the files of the unflushed batch are simply not stored yet.
    """

    def __init__(self, store: SqliteStore, hold: AbstractContextManager[Any] | None) -> None:
        self.store = store
        self.hold = hold
        self.conn: apsw.Connection | None = None
        self.files = 0  # writes in the open transaction
        self.since = 0.0
        self.bump = False  # a write changed the vector generation: bumped once, at the commit
        self.kept: bool | None = None  # whether term_stats is kept (read once per transaction)
        self.terms: Counter[str] = Counter()  # the writes' term count changes: applied at the commit
        self.read = 0  # chunks whose text the batch's writes tokenized, over all its transactions
        self._release = ExitStack()

    @property
    def age(self) -> float:
        return time.monotonic() - self.since if self.conn is not None else 0.0

    def _begin(self) -> apsw.Connection:
        conn = self.store._conn()
        with ExitStack() as held:
            if self.hold is not None:
                held.enter_context(self.hold)
            held.enter_context(self.store._lock)
            try:
                conn.execute("BEGIN IMMEDIATE")
            except apsw.BusyError:
                raise _busy() from None
            self._release = held.pop_all()
        self.conn, self.files, self.since = conn, 0, time.monotonic()
        return conn

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        conn = self.conn if self.conn is not None else self._begin()
        try:
            yield conn
        except BaseException:
            self._end("ROLLBACK")
            raise
        self.files += 1

    def flush(self) -> None:
        """Commit the open transaction, if any (a failed commit rolls it back and raises)."""
        try:
            self._flush()
        except DAMAGE as exc:
            raise self.store._damaged(exc) from None

    def _flush(self) -> None:
        if self.conn is not None:
            try:
                # both just before the commit: a write to another table amid FTS5 inserts flushes
                # FTS5's pending terms (decision 250)
                self.store._apply_terms(self.conn, self.terms)
                if self.bump:
                    ChunkTables._bump(self.store, self.conn)
            except BaseException:
                self._end("ROLLBACK")
                raise
            self._end("COMMIT")

    def _end(self, verb: str) -> None:
        conn, self.conn, self.files, self.bump = self.conn, None, 0, False
        self.kept, self.terms = None, Counter()
        try:
            if conn is not None and (verb == "COMMIT" or conn.in_transaction):  # see SqliteStore._write
                try:
                    conn.execute(verb)
                except BaseException:
                    if verb == "COMMIT":
                        with contextlib.suppress(apsw.Error):
                            conn.execute("ROLLBACK")
                    raise
        finally:
            self._release.close()


def _groups(paths: list[str], size: int = 500) -> Iterator[list[str]]:
    """``paths`` in groups small enough for one ``IN (...)`` list."""
    for i in range(0, len(paths), size):
        yield paths[i : i + size]


def _after_prefix(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` (its last character's
    successor), or None when that successor is no character (a surrogate, past U+10FFFF)."""
    if not prefix:
        return None
    following = ord(prefix[-1]) + 1
    if following > 0x10FFFF or 0xD800 <= following <= 0xDFFF:
        return None
    return prefix[:-1] + chr(following)


class SqliteStore(ChunkTables):
    """The index in one SQLite file (``path``); ``:memory:`` is not supported
    because every thread opens its own connection."""

    def __init__(self, path: Path, label: str | None = None, owner: Owner | None = None) -> None:
        self.path = Path(path)
        # the knowledge base this store indexes: its file records it (decision 535); None for a
        # file opened for itself (index copy), which claims nothing
        self.owner = owner
        self._owned_file: tuple[int, int] | None = None  # the file found to be the owner's
        self._refused_file: tuple[int, int] | None = None  # the other project's file, logged once
        # how messages name the file: never the server's absolute path (errors.py)
        self.label = label or "at the configured storage.path"
        self._local = threading.local()
        self._lock = threading.RLock()
        # One connection per thread; threads come and go (a vector pass per edit, the server's
        # worker threads), so a dead thread's connection is closed when the next one opens.
        self._connections: dict[threading.Thread, apsw.Connection] = {}
        self._conn_lock = threading.Lock()
        self._open_lock = threading.Lock()  # one thread opens a connection at a time (_open)
        self._ended: list[tuple[threading.Thread, apsw.Connection]] = []  # from _ThreadEnd, closed by _conn()
        self._vector_storage: str | None = None
        self._kept_lock = threading.RLock()  # the kept vector rows: updated and scored by one thread at a time
        self._kept_loader: threading.Thread | None = None  # loading them the first time (decision 647)
        self._scopes: dict[str, Callable[[str], bool]] = {}
        self._seen_damage = False  # SQLite reported the file damaged: a reset sets it aside
        self._replacements = 0
        self._known_file: tuple[int, int] | None = None  # the file the latest connection opened

    # connections --------------------------------------------------------------
    def _file_id(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def _conn(self) -> apsw.Connection:
        if self._ended:
            self._close_ended()
        conn = getattr(self._local, "conn", None)
        if conn is not None and not conn.in_transaction and self._file_id() != self._local.file_id:
            # The file at storage.path was deleted or replaced (the state folder removed, a copy
            # or a sync tool put another there, another process set a damaged one aside): this
            # thread follows the path, never the old inode (decision 498). A transaction in
            # progress finishes on the file it began on.
            self._forget_file(conn)
            conn = None
        if conn is None:
            with self._open_lock:
                conn = self._open()
        return conn

    def _open(self) -> apsw.Connection:
        """Open this thread's connection on the file at the path. One thread of the process at a
        time (decision 880): threads that follow a deleted file to the new one (the catch-up, the
        reindex the replacement starts, the call that noticed it) opened it together, and SQLite
        answered one of them "disk I/O error" (SQLITE_IOERR_DELETE_NOENT: two connections of one
        process switching a new file to WAL beside the deleted file's -wal and -shm), which failed
        that call and left the rebuilding pass's index empty until the next kb_reindex."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = apsw.Connection(str(self.path))
        except OSError as exc:
            raise _unopenable(self.label, _os_words(exc)) from None
        except apsw.CantOpenError:
            why = "SQLite cannot open it: it is a folder, or its folder refuses writes"
            raise _unopenable(self.label, why) from None
        try:
            conn.set_busy_timeout(BUSY_TIMEOUT_MS)
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            conn.enable_load_extension(False)
            if conn.execute("PRAGMA page_count").get == 0:
                # A new file keeps the pages it frees in a free list until `incremental_vacuum`
                # hands them back (tidy_lexical, decision 654). Asked only of an empty file: on a
                # file made so, the pragma writes its header again (a write at every open)
                conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            _use_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # reads the schema: a damaged file fails here
            self._check_owner(conn)
        except DAMAGE as exc:
            conn.close()
            raise self._damaged(exc) from None
        except apsw.BusyError:
            conn.close()
            raise _busy() from None
        except IndexNotReady:  # the index of another project (decision 535), or busy claiming it
            conn.close()
            raise
        except apsw.CantOpenError:  # the first read opens the -wal and -shm beside the file
            conn.close()
            why = (
                "SQLite cannot open the two files it keeps beside it (-wal, -shm): the folder refuses "
                "writes, or one of them is not a file"
            )
            raise _unopenable(self.label, why) from None
        # scopes are evaluated next to the rows (SQL joins on documents.path), not by loading paths
        conn.create_scalar_function("kb_in_scope", self._in_scope, 2, deterministic=True)
        self._local.conn = conn
        self._local.serial = next(_CONNECTION_SERIALS)
        self._local.file_id = self._file_id()
        self._local.end = _ThreadEnd(self, conn)
        self._note_file(self._local.file_id)
        with self._conn_lock:
            for thread in [t for t in self._connections if not t.is_alive()]:
                with contextlib.suppress(apsw.Error):
                    self._connections.pop(thread).close()
            self._connections[threading.current_thread()] = conn
        return conn

    def _check_owner(self, conn: apsw.Connection) -> None:
        """Refuse a file that records another knowledge base which still exists, before anything
        reads or writes it (decision 535); adopt one that records none, a folder gone since, or
        that travelled with its knowledge base (decisions 536, 550). Once per file: the threads'
        later connections to it skip the check."""
        file_id = self._file_id()
        if self.owner is None or file_id is None or file_id == self._owned_file:
            return
        names = "SELECT name FROM sqlite_master WHERE name IN ('documents', 'index_owner')"
        tables = {row[0] for row in conn.execute(names)}
        if not tables:
            return  # an empty file: the schema records its owner when it is created (_create)
        recorded, recorded_file = _recorded_owner(conn) if "index_owner" in tables else (None, None)
        found = verdict(recorded, self.owner, recorded_file)
        if found is Verdict.REFUSE:
            first, self._refused_file = file_id != self._refused_file, file_id
            raise refusal(str(recorded), self.owner, logged=first, label=self.label)
        if found is Verdict.ADOPT or needs_file_record(recorded_file, self.owner):
            try:
                conn.execute("BEGIN IMMEDIATE")
            except (apsw.BusyError, apsw.ReadOnlyError) as exc:
                if found is Verdict.OURS:  # only the file's place was to be recorded: a later store does it
                    self._owned_file = file_id
                    return
                if isinstance(exc, apsw.BusyError):
                    raise _busy() from None
                return  # a file that refuses writes: nothing can be deleted in it either; claimed later
            try:
                self._claim(conn)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        self._owned_file = file_id

    def _claim(self, c: apsw.Connection) -> None:
        """Record this store's knowledge base, and where the file lies, inside the caller's write
        transaction, deciding again on what the file holds now (another process may have claimed
        it since)."""
        if self.owner is None:
            return
        c.execute("CREATE TABLE IF NOT EXISTS index_owner(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        recorded, recorded_file = _recorded_owner(c)
        found = verdict(recorded, self.owner, recorded_file)
        if found is Verdict.REFUSE:
            raise refusal(str(recorded), self.owner, label=self.label)
        if found is Verdict.ADOPT:
            c.execute("INSERT OR REPLACE INTO index_owner(key, value) VALUES('root', ?)", (str(self.owner.root),))
            if recorded is not None:
                log.warning(
                    "the index file recorded the knowledge base %s, which no longer exists or which was copied "
                    "with this project; it now indexes %s",
                    recorded,
                    self.owner.root,
                )
        if self.owner.file is not None and needs_file_record(recorded_file, self.owner):
            c.execute("INSERT OR REPLACE INTO index_owner(key, value) VALUES('file', ?)", (str(self.owner.file),))

    def _close_ended(self) -> None:
        """Close the connections of threads that have ended. A burst of calls spreads over many
        worker threads; the idle ones end, the few serving the steady load live on and open
        nothing new, so waiting for the next new connection held the burst's (three descriptors
        and a page cache each) for the server's life (decision 520)."""
        with self._conn_lock:
            while self._ended:
                thread, conn = self._ended.pop()
                if self._connections.get(thread) is conn:
                    del self._connections[thread]
                    with contextlib.suppress(apsw.Error):
                        conn.close()

    def _damaged(self, exc: apsw.Error) -> IndexDamaged:
        """SQLite found the file damaged (at open or at any later statement, decision 495): the
        next forced rebuild of this store sets the file aside instead of building on it."""
        self._seen_damage = True
        return IndexDamaged(
            f"The index database is damaged ({exc.args[0] if exc.args else type(exc).__name__}); "
            "rebuild it with kb_reindex force=true (CLI: --reindex --force). Your Markdown is not affected."
        )

    def check(self) -> None:
        """Raise :class:`IndexDamaged` when the file fails SQLite's structural check or FTS5's
        own (decision 496). A forced rebuild runs it first: it rewrites only the files whose bytes
        changed, so damage elsewhere would outlive the rebuild that was meant to clear it."""
        if not self.exists():
            return
        conn = self._conn()
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise self._damaged(apsw.CorruptError("; ".join(problems)[:300]))
        for table in _LEXICAL_TABLES:
            if self._table_exists(table):
                # 'integrity-check' reads every segment: damage inside a segment leaves the b-tree valid
                conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
        lost = self._lost_vector_parts()
        if lost is not None:
            raise lost

    def _lost_vector_parts(self) -> IndexDamaged | None:
        """The damage when the vec0 table exists without the tables sqlite-vec keeps its rows in
        (decision 499's neighbour, 496): every vector query then fails with vec0's "could not
        open vectors blob", which no quick_check notices."""
        names = {row[0] for row in self._conn().execute("SELECT name FROM sqlite_master WHERE name LIKE 'chunk%'")}
        missing = [p for p in _VEC0_PARTS if p not in names] if "chunk_vectors" in names else []
        return self._damaged(apsw.CorruptError(f"the vector table has lost {', '.join(missing)}")) if missing else None

    def _set_aside(self) -> Path | None:
        """Move a damaged database (and its WAL) out of the way before a rebuild, never deleting
        it: ``index.db.damaged-<UTC time>`` (-wal beside it), one per event (decision 497). None
        when the file is gone meanwhile: nothing is left to keep.

        Only this thread's connection is closed. Closing every thread's (as it did) failed a
        search or a write batch another thread was in the middle of ("the connection has been
        closed"); each of them follows the path to the new file on its next call instead
        (decision 498), and the store's lock waits for a write batch of this process to end, so
        none commits into the file while it moves (decision 527). SQLite never deletes the new
        file's WAL when the last connection to the moved one closes (it sees the file moved).
        """
        with self._lock:
            return self._move_aside()

    def _move_aside(self) -> Path | None:
        self._forget_file(getattr(self._local, "conn", None))
        self._seen_damage = False
        with self._conn_lock:
            self._known_file = None  # this process's own new file is no replacement
        if not self.path.exists():
            return None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        for n in itertools.count(2):  # a second damage within the same second keeps the first copy too
            if not aside.exists():
                break
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{self.path}-wal", f"{aside}-wal")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{self.path}-shm")  # the shared-memory index of the WAL: rebuilt from the WAL
        os.replace(self.path, aside)
        log.warning("the damaged index database was set aside as %s; a new one is built", aside.name)
        return aside

    @staticmethod
    def _salvage_external(aside: Path) -> list[tuple[Any, ...]]:
        """The chunks stored through the chunk API that still read from a damaged file: they come
        from no Markdown, so a rebuild cannot make them again (decision 497). Rows are read in
        order until the first damaged page; the rest stay in the set-aside copy."""
        rows: list[tuple[Any, ...]] = []
        try:
            conn = apsw.Connection(str(aside), flags=apsw.SQLITE_OPEN_READONLY)
        except apsw.Error:
            return rows
        try:
            cursor = conn.execute(
                "SELECT id, collection, source_path, chunk_index, body, metadata, embedding, dims, stale"
                " FROM external_chunks ORDER BY rid"
            )
            rows.extend(cursor)
        except apsw.Error as exc:  # damaged, or an index without the table: keep what was read
            if not isinstance(exc, apsw.SQLError):
                log.warning("only %d external chunk(s) could be read back from the damaged index: %s", len(rows), exc)
        finally:
            conn.close()
            # reading made the copy's shared-memory index (and an empty WAL when it had none)
            with contextlib.suppress(OSError):
                os.unlink(f"{aside}-shm")
            with contextlib.suppress(OSError):
                if os.path.getsize(f"{aside}-wal") == 0:
                    os.unlink(f"{aside}-wal")
        return rows

    def _note_file(self, current: tuple[int, int] | None) -> None:
        """Count a file at the path other than the one last opened: one event however many
        threads (or :attr:`file_replacements`) notice it."""
        with self._conn_lock:
            if self._known_file is not None and current != self._known_file:
                self._replacements += 1
                self._seen_damage = False  # the damage seen was the old file's
            self._known_file = current

    @property
    def file_replacements(self) -> int:
        """How often the file at the path was deleted or replaced under this store (decision
        498); asked once per tool call, so a store no thread has used since still notices."""
        self._note_file(self._file_id())
        return self._replacements

    def _forget_file(self, conn: apsw.Connection | None = None) -> None:
        """Drop this thread's connection ``conn`` (if any) and what this process cached from the
        file (vector matrices keyed by a generation number that a new file starts again)."""
        if conn is not None:
            with self._conn_lock:
                self._connections.pop(threading.current_thread(), None)
            with contextlib.suppress(apsw.Error):
                conn.close()
            self._local.conn = None
            self._local.df_cache = None
        for key in ("_matrices", "_masks", "_kept", "_kept_signs"):
            self.__dict__.pop(key, None)
        self._vector_storage = None

    def close(self) -> None:
        loader = self._kept_loader
        if loader is not None:  # its connection is closed below: let it finish with it first
            loader.join(KEPT_LOAD_JOIN_S)
        with self._conn_lock:
            for conn in self._connections.values():
                with contextlib.suppress(apsw.Error):
                    conn.close()
            self._connections.clear()
        self._local = threading.local()

    @contextmanager
    def _write(self) -> Iterator[apsw.Connection]:
        batch: _Batch | None = getattr(self._local, "batch", None)
        if batch is not None:
            with batch.write() as conn:
                yield conn
            return
        conn = self._conn()
        with self._lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except apsw.BusyError:
                raise _busy() from None
            try:
                yield conn
            except BaseException:
                # SQLite has already rolled back after some errors (SQLITE_FULL, SQLITE_IOERR):
                # a ROLLBACK then fails and would hide the error that matters (decision 498)
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        with self._lock:
            yield

    def _bump(self, c: apsw.Connection) -> None:
        """In a write batch the vector generation is bumped once, just before the commit: an
        UPDATE in a transaction holding FTS5 rows opens a statement savepoint, and FTS5 flushes
        its pending terms into a new segment at every savepoint (most of the batch's gain)."""
        batch: _Batch | None = getattr(self._local, "batch", None)
        if batch is not None and batch.conn is c:
            batch.bump = True
        else:
            super()._bump(c)

    @contextmanager
    def write_batch(
        self, hold: AbstractContextManager[Any] | None = None, parsing: bool = False
    ) -> Iterator[WriteBatch]:
        """This thread's writes share transactions until the batch is flushed (spec/decisions.md 250);
        not while the caller parses between writes: the shared transaction holds the database's
        write lock, which every other process's writer waits for, across the parse (decision 720)."""
        if getattr(self._local, "batch", None) is not None:
            raise RuntimeError("write batches do not nest")
        if parsing:
            yield NoBatch()
            return
        batch = _Batch(self, hold)
        self._local.batch = batch
        try:
            yield batch
        finally:
            self._local.batch = None
            batch.flush()

    @contextmanager
    def exclusive_pass(self, name: str, wait: bool) -> Iterator[bool]:
        """Always granted: SQLite's own locking keeps concurrent writers of one file consistent."""
        yield True

    @property
    def location(self) -> str:
        return str(self.path)

    def _in_scope(self, *args: Any) -> int:
        """SQL ``kb_in_scope(key, path)``: 1 when ``path`` matches the registered scope ``key``."""
        key, path = args
        return int(self._scopes[key](path))

    def _scope_key(self, scope: PathScope) -> str:
        """Register the compiled predicate of ``scope`` for ``kb_in_scope(key, path)``."""
        key = repr((scope.include, scope.exclude, None if scope.paths is None else sorted(scope.paths)))
        if key not in self._scopes:
            if len(self._scopes) > 256:
                self._scopes.clear()
            self._scopes[key] = scope.matcher()
        return key

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self._conn().execute(sql, params).fetchone()
        return None if row is None else row[0]

    def _table_exists(self, name: str) -> bool:
        return bool(self._one("SELECT count(*) FROM sqlite_master WHERE name = ?", (name,)))

    # schema and manifest --------------------------------------------------------
    def exists(self) -> bool:
        return self.path.exists()

    def ensure_schema(self, vector_dimensions: int | None, vector_storage: str) -> None:
        with self._write() as c:
            self._create(c, vector_dimensions, vector_storage)

    def _create(self, c: apsw.Connection, dims: int | None, storage: str) -> None:
        c.execute(
            """
            CREATE TABLE IF NOT EXISTS index_manifest(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS documents(
                id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, source_hash TEXT NOT NULL,
                size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, indexed_at_utc TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS chunks(
                id INTEGER PRIMARY KEY,
                document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                ordinal INTEGER NOT NULL, anchor TEXT NOT NULL, heading_path TEXT,
                embedding_text_hash TEXT NOT NULL, body BLOB NOT NULL, vector_pending INTEGER NOT NULL DEFAULT 0);
            CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id);
            CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(id) WHERE vector_pending = 1;
            CREATE TABLE IF NOT EXISTS links(
                document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                ordinal INTEGER NOT NULL, kind TEXT NOT NULL, destination TEXT NOT NULL,
                text TEXT, anchor TEXT, PRIMARY KEY(document_id, ordinal)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS document_meta(
                document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
                tags TEXT NOT NULL, aliases TEXT NOT NULL, headings TEXT NOT NULL, block_ids TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS document_tags(
                tag TEXT NOT NULL, document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                PRIMARY KEY(tag, document_id)) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS document_tags_document ON document_tags(document_id);
            CREATE TABLE IF NOT EXISTS unreadable_files(path TEXT PRIMARY KEY, reason TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS index_clock(
                id INTEGER PRIMARY KEY CHECK (id = 1), removed_at_utc TEXT NOT NULL);
            """
        )
        if not self._table_exists("chunks_fts"):
            c.execute(
                "CREATE VIRTUAL TABLE chunks_fts USING fts5(body, heading, content='', "
                "contentless_delete=1, tokenize='unicode61 remove_diacritics 2')"
            )
            c.execute(f"INSERT INTO chunks_fts(chunks_fts, rank) VALUES('rank', 'bm25({_HEADING_WEIGHTS})')")
        if not self._table_exists("chunks_stems"):
            c.execute(
                "CREATE VIRTUAL TABLE chunks_stems USING fts5(stems, content='', "
                "contentless_delete=1, tokenize='unicode61 remove_diacritics 2')"
            )
        if not self._table_exists("chunks_fts_vocab"):
            c.execute("CREATE VIRTUAL TABLE chunks_fts_vocab USING fts5vocab(chunks_fts, row)")
        c.execute("CREATE TABLE IF NOT EXISTS term_stats(term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID")
        self._create_chunk_tables(c)
        self._claim(c)
        if dims and not self._table_exists("chunk_vectors"):
            columns = {
                "float32": f"float[{dims}] distance_metric=cosine",
                "int8": f"int8[{dims}] distance_metric=cosine",
                "binary": f"bit[{dims}]",
            }
            if storage not in columns:  # float16 is PostgreSQL's (an index copied from there)
                raise ConfigError(
                    f"A SQLite index cannot store {storage!r} vectors (float32, int8 or binary); nothing was written."
                )
            column = columns[storage]
            c.execute(
                "CREATE VIRTUAL TABLE chunk_vectors USING vec0("
                f"chunk_id INTEGER PRIMARY KEY, document_id INTEGER, embedding {column})"
            )
            if storage == "binary":
                c.execute(
                    "CREATE TABLE IF NOT EXISTS chunk_vectors_exact("
                    "chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)"
                )
                self._create_centre(c, dims)
        elif dims and self._table_exists("chunk_vectors_exact") and not self._table_exists("chunk_vectors_centre"):
            # a binary index from before decision 380: its float32 vectors are all here, so it
            # gets its centre in place (every row's bits rewritten once), no re-embedding
            self._create_centre(c, dims)
            self._recentre(c)
        self._vector_storage = None

    def _create_centre(self, c: apsw.Connection, dims: int) -> None:
        c.execute(
            "CREATE TABLE chunk_vectors_centre(id INTEGER PRIMARY KEY CHECK (id = 1), "
            "vectors INTEGER NOT NULL, centre BLOB NOT NULL)"
        )
        c.execute("INSERT INTO chunk_vectors_centre VALUES(1, 0, ?)", (_f32(np.zeros(dims, np.float32)),))

    def reset(self, vector_dimensions: int | None, vector_storage: str) -> None:
        if not self._seen_damage:
            with contextlib.suppress(IndexDamaged):
                self._conn()
        salvaged: list[tuple[Any, ...]] = []
        if self._seen_damage:
            aside = self._set_aside()
            salvaged = [] if aside is None else self._salvage_external(aside)
        with self._write() as c:
            for table in (*_DERIVED, "index_manifest"):
                c.execute(f"DROP TABLE IF EXISTS {table}")
            self._create(c, vector_dimensions, vector_storage)
            self._log_everything(c)
            c.executemany(
                "INSERT OR IGNORE INTO external_chunks(id, collection, source_path, chunk_index, body, metadata,"
                " embedding, dims, stale) VALUES(?,?,?,?,?,?,?,?,?)",
                salvaged,
            )
            self._bump(c)
        if salvaged:
            log.warning("%d external chunk(s) were carried over from the damaged index", len(salvaged))

    def read_manifest(self) -> dict[str, str]:
        if not self.exists() or not self._table_exists("index_manifest"):
            return {}
        return {k: v for k, v in self._conn().execute("SELECT key, value FROM index_manifest")}

    def write_manifest(self, values: dict[str, str]) -> None:
        with self._write() as c:
            c.execute("DELETE FROM index_manifest")
            c.executemany("INSERT INTO index_manifest(key, value) VALUES(?, ?)", sorted(values.items()))

    def has_vectors(self) -> bool:
        return self.exists() and self._table_exists("chunk_vectors")

    def _storage(self) -> str:
        if self._vector_storage is None:
            sql = self._one("SELECT sql FROM sqlite_master WHERE name = 'chunk_vectors'") or ""
            self._vector_storage = "binary" if " bit[" in sql else "int8" if " int8[" in sql else "float32"
        return self._vector_storage

    # documents --------------------------------------------------------------
    def document_states(self) -> dict[str, DocumentState]:
        if not self.exists() or not self._table_exists("documents"):
            return {}
        rows = self._conn().execute("SELECT id, path, source_hash, size, mtime_ns FROM documents")
        return {r[1]: DocumentState(*r) for r in rows}

    def documents_without_own_chunks(self) -> list[str]:
        if not self.exists() or not self._table_exists("documents"):
            return []
        # a chunk's anchor begins with its pointer: "frontmatter~<self>~<subtree>" for front matter
        rows = self._conn().execute(
            "SELECT path FROM documents d WHERE NOT EXISTS (SELECT 1 FROM chunks c"
            " WHERE c.document_id = d.id AND c.anchor NOT LIKE 'frontmatter~%') ORDER BY path"
        )
        return [r[0] for r in rows]

    def document_states_of(self, paths: Collection[str]) -> dict[str, DocumentState]:
        if not paths or not self.exists() or not self._table_exists("documents"):
            return {}
        rows = self._conn().execute(
            "SELECT id, path, source_hash, size, mtime_ns FROM documents"
            " WHERE path IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(paths))),),
        )
        return {r[1]: DocumentState(*r) for r in rows}

    def chunk_counts(self, paths: Collection[str]) -> dict[str, int]:
        if not paths or not self.exists() or not self._table_exists("documents"):
            return {}
        rows = self._conn().execute(
            "SELECT d.path, (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) FROM documents d"
            " WHERE d.path IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(paths))),),
        )
        return {path: int(n) for path, n in rows}

    def document_states_under(self, prefix: str) -> dict[str, DocumentState]:
        if not self.exists() or not self._table_exists("documents"):
            return {}
        query = "SELECT id, path, source_hash, size, mtime_ns FROM documents"
        # a range on the unique index of path (BINARY: UTF-8 bytes, the order of code points), not
        # LIKE, whose % and _ are wildcards and which ignores ASCII case (decision 351)
        after = _after_prefix(prefix)
        if not prefix:
            rows = self._conn().execute(query)
        elif after is None:
            rows = self._conn().execute(query + " WHERE path >= ?", (prefix,))
        else:
            rows = self._conn().execute(query + " WHERE path >= ? AND path < ?", (prefix, after))
        return {r[1]: DocumentState(*r) for r in rows if r[1].startswith(prefix)}

    def unreadable_files(self) -> dict[str, str]:
        if not self.exists() or not self._table_exists("unreadable_files"):
            return {}  # an index from before the table: nothing recorded yet
        return {path: reason for path, reason in self._conn().execute("SELECT path, reason FROM unreadable_files")}

    def set_unreadable(self, path: str, reason: str | None) -> None:
        with self._write() as c:
            if reason is None:
                c.execute("DELETE FROM unreadable_files WHERE path = ?", (path,))
            else:
                c.execute("INSERT OR REPLACE INTO unreadable_files(path, reason) VALUES(?, ?)", (path, reason))

    def touch_document(self, path: str, size: int, mtime_ns: int) -> None:
        with self._write() as c:
            c.execute("UPDATE documents SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def _delete_rows(self, c: apsw.Connection, doc_id: int, gone: list[_Indexed] | None = None) -> None:
        """One document's rows; ``gone`` (when term_stats is kept) gets the old chunks' indexed
        text, packed as stored."""
        if gone is None:
            ids = [(r[0],) for r in c.execute("SELECT id FROM chunks WHERE document_id = ?", (doc_id,))]
        else:
            ids = []
            for cid, body, heading in c.execute(
                "SELECT id, body, heading_path FROM chunks WHERE document_id = ?", (doc_id,)
            ):
                ids.append((cid,))
                gone.append((bytes(body), heading))
        if ids:
            c.executemany("DELETE FROM chunks_fts WHERE rowid = ?", ids)
            c.executemany("DELETE FROM chunks_stems WHERE rowid = ?", ids)
            if self._table_exists("chunk_vectors"):
                c.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", ids)
                self._log_vectors(c, [i for (i,) in ids])
            if self._table_exists("chunk_vectors_exact"):
                c.executemany("DELETE FROM chunk_vectors_exact WHERE chunk_id = ?", ids)
        c.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def replace_document(
        self,
        doc: DocumentRecord,
        chunks: Sequence[ChunkRecord],
        links: Sequence[LinkRecord] = (),
        meta: DocumentMeta | None = None,
    ) -> int:
        with self._write() as c:
            terms = self._term_changes(c)
            n = self._replace_rows(c, doc, chunks, links, meta, terms)
            self._keep_terms(c, terms)
            self._bump(c)
            return n

    def _replace_rows(
        self,
        c: apsw.Connection,
        doc: DocumentRecord,
        chunks: Sequence[ChunkRecord],
        links: Sequence[LinkRecord],
        meta: DocumentMeta | None,
        terms: _TermChanges | None = None,
    ) -> int:
        """One document's rows, inside the caller's write transaction. ``terms`` (when term_stats
        is kept): gets the write's term count changes, the new chunks' terms less the old ones'."""
        old = self._one("SELECT id FROM documents WHERE path = ?", (doc.path,))
        gone: list[_Indexed] | None = None if terms is None else []
        if old is not None:
            self._delete_rows(c, old, gone)
        c.execute(
            "INSERT INTO documents(path, source_hash, size, mtime_ns, indexed_at_utc, properties) VALUES(?,?,?,?,?,?)",
            (
                doc.path,
                doc.source_hash,
                doc.size,
                doc.mtime_ns,
                doc.indexed_at_utc,
                dump_properties(doc.properties),
            ),
        )
        doc_id = c.last_insert_rowid()
        first = int(self._one("SELECT coalesce(max(id), 0) FROM chunks")) + 1
        ids = range(first, first + len(chunks))
        has_table = self._table_exists("chunk_vectors")
        packed = [ch.packed_body if ch.packed_body is not None else pack_body(ch.text) for ch in chunks]
        c.executemany(
            "INSERT INTO chunks(id, document_id, ordinal, anchor, heading_path, embedding_text_hash, body, "
            "vector_pending) VALUES(?,?,?,?,?,?,?,?)",
            [
                (
                    cid,
                    doc_id,
                    ch.ordinal,
                    ch.anchor,
                    ch.heading_path,
                    ch.embedding_text_hash,
                    body,
                    int(has_table and ch.vector is None),
                )
                for cid, ch, body in zip(ids, chunks, packed, strict=True)
            ],
        )
        c.executemany(
            "INSERT INTO chunks_fts(rowid, body, heading) VALUES(?,?,?)",
            [
                (cid, cjk_index_text(ch.text), cjk_index_text(ch.heading_path or ""))
                for cid, ch in zip(ids, chunks, strict=True)
            ],
        )
        stems = [
            (cid, ch.stems if ch.stems is not None else chunk_stems(ch.text, ch.heading_path))
            for cid, ch in zip(ids, chunks, strict=True)
        ]
        c.executemany("INSERT INTO chunks_stems(rowid, stems) VALUES(?,?)", [r for r in stems if r[1]])
        if terms is not None and gone is not None:
            _count_changes(
                terms, gone, [((body, ch.heading_path), ch.text) for ch, body in zip(chunks, packed, strict=True)]
            )
        if has_table:
            self._insert_vectors(
                c, [(cid, doc_id, ch.vector) for cid, ch in zip(ids, chunks, strict=True) if ch.vector is not None]
            )
        self._insert_graph(c, doc_id, links, meta or DocumentMeta())
        return len(chunks)

    def _insert_graph(self, c: apsw.Connection, doc_id: int, links: Sequence[LinkRecord], meta: DocumentMeta) -> None:
        if links:
            c.executemany(
                "INSERT INTO links(document_id, ordinal, kind, destination, text, anchor) VALUES(?,?,?,?,?,?)",
                [(doc_id, i, ln.kind, ln.destination, ln.text, ln.anchor) for i, ln in enumerate(links)],
            )
        if meta != DocumentMeta():
            c.execute(
                "INSERT INTO document_meta(document_id, tags, aliases, headings, block_ids) VALUES(?,?,?,?,?)",
                (doc_id, *(json.dumps(list(v)) for v in (meta.tags, meta.aliases, meta.headings, meta.block_ids))),
            )
        if meta.tags:
            c.executemany(
                "INSERT OR IGNORE INTO document_tags(tag, document_id) VALUES(?, ?)",
                [(tag, doc_id) for tag in tag_prefixes(meta.tags)],
            )

    def _insert_vectors(self, c: apsw.Connection, rows: Sequence[tuple[int, int, npt.NDArray[np.float32]]]) -> None:
        if not rows:
            return
        self._log_vectors(c, [i for i, _, _ in rows])
        storage = self._storage()
        if storage == "float32":
            c.executemany("INSERT INTO chunk_vectors VALUES(?,?,?)", [(i, d, _f32(v)) for i, d, v in rows])
        elif storage == "int8":
            c.executemany("INSERT INTO chunk_vectors VALUES(?,?,vec_int8(?))", [(i, d, _i8(v)) for i, d, v in rows])
        else:
            centre = self._centre()
            c.executemany(
                "INSERT INTO chunk_vectors VALUES(?,?,vec_bit(?))", [(i, d, _bits(v, centre)) for i, d, v in rows]
            )
            c.executemany("INSERT INTO chunk_vectors_exact VALUES(?,?)", [(i, _f32(v)) for i, _, v in rows])
            if centre is not None:
                self._recentre(c)

    def _centre(self) -> npt.NDArray[np.float32] | None:
        """The binary layout's centre as this connection sees it; None for an index from before
        decision 380 (raw signs, as it was built)."""
        if not self._table_exists("chunk_vectors_centre"):
            return None
        blob = self._one("SELECT centre FROM chunk_vectors_centre WHERE id = 1")
        return None if blob is None else np.frombuffer(blob, dtype=np.float32)

    def _recentre(self, c: apsw.Connection) -> None:
        """Inside a write: while the centre was made from fewer than CENTRE_SAMPLE vectors, make it
        again (the mean of every stored vector) once their count has doubled, and rewrite every
        row's bits (vec0 has no UPDATE of a bit column: delete and insert). Bounded: at most about
        2 x CENTRE_SAMPLE rows are rewritten over an index's life."""
        made = int(self._one("SELECT vectors FROM chunk_vectors_centre WHERE id = 1") or 0)
        if made >= CENTRE_SAMPLE:
            return
        count = int(self._one("SELECT count(*) FROM chunk_vectors_exact"))
        if count == 0 or count < 2 * made:
            return
        rows = list(
            c.execute(
                "SELECT e.chunk_id, c.document_id, e.embedding FROM chunk_vectors_exact e "
                "JOIN chunks c ON c.id = e.chunk_id ORDER BY e.chunk_id"
            )
        )
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        centre = matrix.mean(axis=0, dtype=np.float64).astype(np.float32)
        c.execute("UPDATE chunk_vectors_centre SET vectors = ?, centre = ? WHERE id = 1", (len(rows), _f32(centre)))
        self._log_everything(c)  # every row's bits
        c.execute("DELETE FROM chunk_vectors")
        c.executemany(
            "INSERT INTO chunk_vectors VALUES(?,?,vec_bit(?))",
            [(cid, doc, _bits(v, centre)) for (cid, doc, _), v in zip(rows, matrix, strict=True)],
        )

    def pending_vectors(self, limit: int, paths: Collection[str] | None = None) -> list[PendingChunk]:
        if not self.has_vectors():
            return []
        sql = (
            "SELECT c.id, d.path, c.body, c.heading_path, c.embedding_text_hash FROM chunks c "
            "JOIN documents d ON d.id = c.document_id WHERE c.vector_pending = 1"
        )
        if paths is None:
            rows = list(self._conn().execute(sql + " ORDER BY c.id LIMIT ?", (limit,)))
        else:
            rows = []
            for group in _groups(sorted(paths)):
                where = f" AND d.path IN ({','.join('?' * len(group))}) ORDER BY c.id LIMIT ?"
                rows += self._conn().execute(sql + where, (*group, limit))
            rows = sorted(rows)[:limit]
        return [PendingChunk(cid, path, _unpack(body), hp, eth) for cid, path, body, hp, eth in rows]

    def mark_all_vectors_pending(self) -> None:
        if not self.has_vectors():
            return
        with self._write() as c:
            # a refused chunk (2) is tried again too: a new table means another model (decision 510)
            c.execute("UPDATE chunks SET vector_pending = 1 WHERE vector_pending != 1")
            if self._table_exists("refused_vectors"):
                c.execute("DELETE FROM refused_vectors")

    def store_vectors(self, vectors: Sequence[tuple[PendingChunk, npt.NDArray[np.float32]]]) -> int:
        if not vectors or not self.has_vectors():
            return 0
        with self._write() as c:
            rows = []
            for chunk, vec in vectors:
                # the text too: a document stored again meanwhile may have given this id to another
                # chunk (ids start after the highest left), whose vector this is not (decision 801)
                doc_id = self._one(
                    "SELECT document_id FROM chunks WHERE id = ? AND vector_pending = 1 AND embedding_text_hash = ?",
                    (chunk.chunk_id, chunk.embedding_text_hash),
                )
                if doc_id is not None:
                    rows.append((chunk.chunk_id, int(doc_id), vec))
            c.executemany("UPDATE chunks SET vector_pending = 0 WHERE id = ?", [(cid,) for cid, _, _ in rows])
            self._insert_vectors(c, rows)
            self._bump(c)
            return len(rows)

    def refuse_vectors(self, refusals: Sequence[tuple[PendingChunk, str]]) -> int:
        """``vector_pending = 2`` marks a refused chunk (out of the pending index and count);
        the reason sits in ``refused_vectors``, whose rows go with their chunk (decision 510)."""
        if not refusals or not self.has_vectors():
            return 0
        with self._write() as c:
            c.execute(
                "CREATE TABLE IF NOT EXISTS refused_vectors(chunk_id INTEGER PRIMARY KEY "
                "REFERENCES chunks(id) ON DELETE CASCADE, reason TEXT NOT NULL)"
            )
            done = 0
            for chunk, reason in refusals:
                c.execute(
                    "UPDATE chunks SET vector_pending = 2 WHERE id = ? AND vector_pending = 1 "
                    "AND embedding_text_hash = ?",
                    (chunk.chunk_id, chunk.embedding_text_hash),
                )
                if not c.changes():  # gone, no longer pending, or another text (decision 801)
                    continue
                c.execute(
                    "INSERT OR REPLACE INTO refused_vectors(chunk_id, reason) VALUES(?, ?)", (chunk.chunk_id, reason)
                )
                done += 1
            return done

    def refused_vectors(self, limit: int) -> tuple[int, list[RefusedChunk]]:
        if not self.exists() or not self._table_exists("refused_vectors"):
            return 0, []
        count = int(self._one("SELECT count(*) FROM refused_vectors"))
        rows = self._conn().execute(
            "SELECT d.path, c.ordinal, c.heading_path, r.reason FROM refused_vectors r "
            "JOIN chunks c ON c.id = r.chunk_id JOIN documents d ON d.id = c.document_id "
            "ORDER BY d.path, c.ordinal LIMIT ?",
            (limit,),
        )
        return count, [RefusedChunk(path, int(ordinal), heading, reason) for path, ordinal, heading, reason in rows]

    def delete_document(self, path: str) -> bool:
        if not self.exists() or not self._table_exists("documents"):
            return False  # no index, or a file without its tables: nothing to remove (decision 1087)
        with self._write() as c:
            row = c.execute("SELECT id, indexed_at_utc FROM documents WHERE path = ?", (path,)).fetchone()
            if row is None:
                return False
            old, indexed_at = row
            self._stamp_removal(c, indexed_at)
            terms = self._term_changes(c)
            gone: list[_Indexed] | None = None if terms is None else []
            self._delete_rows(c, old, gone)
            if terms is not None and gone is not None:
                _count_changes(terms, gone, [])
            self._keep_terms(c, terms)
            self._bump(c)
            return True

    def _stamp_removal(self, c: apsw.Connection, indexed_at: str) -> None:
        """Removing a document changes the index, but leaves no row whose ``indexed_at_utc`` says
        when: the removal is stamped here (decision 770), never earlier than the document's own
        time (a clock set back must not move ``lastIndexedAtUtc`` back either). An index from
        before the table gets it here: a removal may come before any ``ensure_schema``."""
        if not self._table_exists("index_clock"):
            c.execute("CREATE TABLE index_clock(id INTEGER PRIMARY KEY CHECK (id = 1), removed_at_utc TEXT NOT NULL)")
        c.execute(
            "INSERT INTO index_clock(id, removed_at_utc) VALUES(1, ?) "
            "ON CONFLICT(id) DO UPDATE SET removed_at_utc = max(removed_at_utc, excluded.removed_at_utc)",
            (max(utc_now(), indexed_at),),
        )

    def vectors_by_text_hash(self, path: str) -> dict[str, npt.NDArray[np.float32]]:
        if not self.has_vectors():
            return {}
        storage = self._storage()
        table = "chunk_vectors_exact" if storage == "binary" else "chunk_vectors"
        rows = self._conn().execute(
            f"SELECT c.embedding_text_hash, v.embedding FROM chunks c JOIN documents d ON d.id = c.document_id "
            f"JOIN {table} v ON v.chunk_id = c.id WHERE d.path = ?",
            (path,),
        )
        out: dict[str, npt.NDArray[np.float32]] = {}
        for text_hash, blob in rows:
            if storage == "int8":
                vec = np.frombuffer(blob, dtype=np.int8).astype(np.float32) / 127.0
                vec /= max(float(np.linalg.norm(vec)), 1e-12)
            else:
                vec = np.frombuffer(blob, dtype=np.float32).copy()
            out[text_hash] = vec
        return out

    # moving an index between engines ---------------------------------------------------
    def export_documents(self, after: str | None, limit: int) -> list[DocumentDump]:
        if not self.exists() or not self._table_exists("documents"):
            return []
        c = self._conn()
        c.execute("BEGIN")  # one snapshot per page: a writer elsewhere cannot tear a document
        try:
            docs = list(
                c.execute(
                    "SELECT id, path, source_hash, size, mtime_ns, indexed_at_utc, properties FROM documents "
                    "WHERE path > ? ORDER BY path LIMIT ?",
                    (after or "", limit),
                )
            )
            if not docs:
                return []
            marks = ",".join("?" * len(docs))
            ids = [d[0] for d in docs]
            vectors: dict[int, npt.NDArray[np.float32]] = {}
            if self.has_vectors():
                storage = self._storage()
                table = "chunk_vectors_exact" if storage == "binary" else "chunk_vectors"
                for cid, blob in c.execute(
                    f"SELECT v.chunk_id, v.embedding FROM chunks c JOIN {table} v ON v.chunk_id = c.id "
                    f"WHERE c.document_id IN ({marks})",
                    ids,
                ):
                    if storage == "int8":  # the stored values, not renormalised: re-quantizing gives them back
                        vectors[cid] = np.frombuffer(blob, dtype=np.int8).astype(np.float32) / np.float32(127.0)
                    else:
                        vectors[cid] = np.frombuffer(blob, dtype=np.float32).copy()
            chunks: dict[int, list[ChunkRecord]] = {i: [] for i in ids}
            for cid, doc_id, ordinal, anchor, heading, text_hash, body in c.execute(
                "SELECT id, document_id, ordinal, anchor, heading_path, embedding_text_hash, body FROM chunks "
                f"WHERE document_id IN ({marks}) ORDER BY document_id, ordinal",
                ids,
            ):
                pointer = anchor.split("~", 1)[0]  # the logical pointer is the anchor's first part
                chunks[doc_id].append(
                    ChunkRecord(ordinal, pointer, anchor, _unpack(body), heading, text_hash, vectors.get(cid))
                )
            links: dict[int, list[LinkRecord]] = {i: [] for i in ids}
            for doc_id, kind, destination, text, anchor in c.execute(
                "SELECT document_id, kind, destination, text, anchor FROM links "
                f"WHERE document_id IN ({marks}) ORDER BY document_id, ordinal",
                ids,
            ):
                links[doc_id].append(LinkRecord(kind, destination, text, anchor))
            metas = {
                doc_id: DocumentMeta(*(tuple(json.loads(v)) for v in rest))
                for doc_id, *rest in c.execute(
                    "SELECT document_id, tags, aliases, headings, block_ids FROM document_meta "
                    f"WHERE document_id IN ({marks})",
                    ids,
                )
            }
        finally:
            c.execute("COMMIT")
        return [
            DocumentDump(
                DocumentRecord(path, source_hash, size, mtime_ns, indexed_at, json.loads(props) if props else None),
                tuple(chunks[doc_id]),
                tuple(links[doc_id]),
                metas.get(doc_id, DocumentMeta()),
            )
            for doc_id, path, source_hash, size, mtime_ns, indexed_at, props in docs
        ]

    def import_documents(self, dumps: Sequence[DocumentDump]) -> int:
        """Every dump in one write transaction (SQLite stores vectors as given anyway). The term
        counts are not kept here (``index copy`` refreshes them after its last page): the marker
        goes, so the next refresh rebuilds them."""
        with self._write() as c:
            c.execute("DELETE FROM term_stats WHERE term = ?", (_KEPT_TERM,))
            n = sum(self._replace_rows(c, d.document, d.chunks, d.links, d.meta) for d in dumps)
            self._bump(c)
            return n

    def counts(self) -> StoreCounts:
        if not self.exists() or not self._table_exists("documents"):
            return StoreCounts(0, 0, None)
        c = self._conn()
        docs, last = c.execute("SELECT count(*), max(indexed_at_utc) FROM documents").fetchone() or (0, None)
        if self._table_exists("index_clock"):
            removed = self._one("SELECT removed_at_utc FROM index_clock")
            last = max(filter(None, (last, removed)), default=None)
        chunks = self._one("SELECT count(*) FROM chunks")
        return StoreCounts(int(docs), int(chunks), last, self.pending_vector_count())

    def has_chunks(self) -> bool:
        if not self.exists() or not self._table_exists("chunks"):
            return False
        return self._one("SELECT 1 FROM chunks LIMIT 1") is not None

    def documents_holding_letters(self, letters: str) -> list[str]:
        """Read from the FTS vocabulary (the indexed tokens of every body and heading, lower-cased):
        one pass over its terms, not over the compressed chunk texts, then the chunks holding the
        few terms found, by their posting lists."""
        if not self.exists() or not self._table_exists("chunks_fts_vocab"):
            return []
        found = re.compile(f"[{letters}]").search
        c = self._conn()
        terms = [
            term for (term,) in c.execute("SELECT term FROM chunks_fts_vocab") if not term.isascii() and found(term)
        ]
        paths: set[str] = set()
        sql = (
            "SELECT DISTINCT d.path FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
            "JOIN documents d ON d.id = c.document_id WHERE chunks_fts MATCH ?"
        )
        for group in _groups(terms, 200):
            # a vocabulary term is one token: quoted, it tokenizes to itself
            match = " OR ".join('"' + term.replace('"', '""') + '"' for term in group)
            paths.update(path for (path,) in c.execute(sql, (match,)))
        return sorted(paths)

    def pending_vector_count(self, paths: Collection[str] | None = None) -> int:
        if not self.exists() or not self._table_exists("chunks"):
            return 0
        try:
            if paths is None:
                return int(self._one("SELECT count(*) FROM chunks WHERE vector_pending = 1"))
            sql = (
                "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
                "WHERE c.vector_pending = 1 AND d.path IN ({})"
            )
            return sum(
                int(self._one(sql.format(",".join("?" * len(group))), tuple(group))) for group in _groups(sorted(paths))
            )
        except apsw.SQLError:  # an index of an older layout (incompatible; status must still answer)
            return 0

    # link graph -----------------------------------------------------------------
    def links(self, paths: Collection[str] | None = None) -> list[StoredLink]:
        if not self.exists() or not self._table_exists("links"):
            return []
        sql = (
            "SELECT d.path, l.ordinal, l.kind, l.destination, l.text, l.anchor FROM links l "
            "JOIN documents d ON d.id = l.document_id"
        )
        order = " ORDER BY d.path, l.ordinal"
        if paths is None:
            return [StoredLink(*row) for row in self._conn().execute(sql + order)]
        out: list[StoredLink] = []
        for group in _groups(sorted(paths)):
            where = f" WHERE d.path IN ({','.join('?' * len(group))})"
            out += [StoredLink(*row) for row in self._conn().execute(sql + where + order, group)]
        return out

    def document_meta(self, paths: Collection[str] | None = None) -> dict[str, DocumentMeta]:
        if not self.exists() or not self._table_exists("document_meta"):
            return {}
        sql = (
            "SELECT d.path, m.tags, m.aliases, m.headings, m.block_ids FROM document_meta m "
            "JOIN documents d ON d.id = m.document_id"
        )
        if paths is None:
            rows = list(self._conn().execute(sql))
        else:
            rows = []
            for group in _groups(sorted(paths)):
                rows += self._conn().execute(sql + f" WHERE d.path IN ({','.join('?' * len(group))})", group)
        # most lists are empty ("[]" for 5,274 of opensearch-docs' 7,032): not worth a JSON parse
        return {path: DocumentMeta(*(() if v == "[]" else tuple(json.loads(v)) for v in rest)) for path, *rest in rows}

    def snapshot_key(self) -> tuple[int, int, int] | None:
        """(this thread's connection, ``PRAGMA data_version``, its ``total_changes()``): the pragma
        moves when any other connection (thread or process) commits, the count with every row
        this connection changes, so together they move with every change this connection can
        see. No table is read (about 10 us)."""
        if not self.exists():
            return None
        conn = self._conn()
        return self._local.serial, int(self._one("PRAGMA data_version")), conn.total_changes()

    def paths_with_tags(self, tags: Sequence[str]) -> set[str]:
        if not self.exists() or not self._table_exists("document_tags"):
            return set()
        wanted = sorted({normalize_tag(t) for t in tags})
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        rows = self._conn().execute(
            f"SELECT d.path FROM document_tags t JOIN documents d ON d.id = t.document_id "
            f"WHERE t.tag IN ({marks}) GROUP BY d.id HAVING count(*) = ?",
            [*wanted, len(wanted)],
        )
        return {r[0] for r in rows}

    # retrieval ----------------------------------------------------------------
    def _allowed_docs(self, scope: PathScope | None) -> list[int] | None:
        """Ids of the documents in ``scope``; ``None`` when that is every document."""
        if scope is None or scope.is_everything:
            return None
        key = self._scope_key(scope)
        c = self._conn()
        allowed = [r[0] for r in c.execute("SELECT id FROM documents WHERE kb_in_scope(?, path) ORDER BY id", (key,))]
        return None if len(allowed) == self._one("SELECT count(*) FROM documents") else allowed

    def _hits(self, ids: Sequence[int], distances: dict[int, float] | None = None) -> list[ChunkHit]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._conn().execute(
            "SELECT c.id, d.path, c.anchor, c.heading_path, c.body, d.source_hash FROM chunks c "
            f"JOIN documents d ON d.id = c.document_id WHERE c.id IN ({marks})",
            list(ids),
        )
        by_id = {r[0]: r for r in rows}
        return [
            ChunkHit(
                chunk_id=i,
                path=by_id[i][1],
                anchor=by_id[i][2],
                heading_path=by_id[i][3],
                text=_unpack(by_id[i][4]),
                source_hash=by_id[i][5],
                distance=None if distances is None else distances.get(i),
            )
            for i in ids
            if i in by_id
        ]

    def lexical(self, query: LexicalQuery, limit: int, scope: PathScope | None) -> list[ChunkHit]:
        if not self.exists() or not self._table_exists("chunks_fts"):
            return []
        match = render_match(query, self._document_frequencies)
        if match is None:
            return []
        stems = (
            render_stems(query, self._stem_frequencies, STEM_BUDGET)
            if STEM_WEIGHT and self._table_exists("chunks_stems")
            else None
        )
        depth = max(limit, STEM_DEPTH)
        rankings = [("chunks_fts", match)] + ([] if stems is None else [("chunks_stems", stems)])
        exact, *stemmed = self._rank_all(rankings, depth, scope)
        scored = exact if not stemmed else combine_stemmed(exact, stemmed[0], depth)
        if wants_coverage(query):  # a question: its best rows by the share of its words they hold (decision 220)
            bm25 = dict(scored[:COVERAGE_DEPTH])
            top = self._hits([rid for rid, _ in scored[:COVERAGE_DEPTH]])
            ranked = rerank(
                query, top, lambda h: bm25[h.chunk_id], lambda h: f"{h.heading_path or ''}\n{h.text}", self._frequencies
            )
            return ranked[:limit] + self._hits([rid for rid, _ in scored[COVERAGE_DEPTH:limit]])
        return self._hits([rid for rid, _ in scored[:limit]])

    def titled(self, words: Sequence[str], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        if not words or not self.exists() or not self._table_exists("chunks_fts"):
            return []
        # the words as a phrase at the first token of the heading column (FTS5 ``^``), which
        # holds the heading path; then each document's first such chunk
        match = "heading : ^" + quote_phrase(cjk_index_text(" ".join(words)))
        scoped = scope is not None and not scope.is_everything
        sql = (
            "SELECT min(c.id) FROM chunks_fts f JOIN chunks c ON c.id = f.rowid "
            + ("JOIN documents d ON d.id = c.document_id " if scoped else "")
            + "WHERE chunks_fts MATCH ? "
            + ("AND kb_in_scope(?, d.path) " if scoped else "")
            + "GROUP BY c.document_id ORDER BY 1 LIMIT ?"
        )
        params = (match, self._scope_key(scope), limit) if scoped and scope is not None else (match, limit)
        return self._hits([r[0] for r in self._conn().execute(sql, params)])

    def _rank_all(
        self, rankings: Sequence[tuple[str, str]], limit: int, scope: PathScope | None
    ) -> list[list[tuple[int, float]]]:
        """:meth:`_ranked` of each (table, match) of ``rankings``, all at once: on a large index
        each split into rowid ranges ranked on several cores (``split_rank.py``, decision 635)
        while no other ranking runs. Not inside this thread's transaction: the other threads'
        connections would not see it."""
        ranges = self._scope_ranges(scope)
        if ranges is not None:  # a narrow scope: its own chunks' ids, ranked without a join
            return [
                merge_ranked([self._ranked(table, match, limit, None, rows) for rows in ranges], limit)
                for table, match in rankings
            ]
        conn = getattr(self._local, "conn", None)
        with alone() as only:
            span = None if not only or (conn is not None and conn.in_transaction) else self._id_span()
            parts = split_parts(span)
            if span is None or parts == 1:
                return [self._ranked(table, match, limit, scope) for table, match in rankings]
            ranges = row_ranges(span, parts)
            calls = [
                functools.partial(self._ranked, table, match, limit, scope, rows)
                for table, match in rankings
                for rows in ranges
            ]
            done = run_all(calls)
        n = len(ranges)
        return [merge_ranked(done[i * n : (i + 1) * n], limit) for i in range(len(rankings))]

    def _scope_ranges(self, scope: PathScope | None) -> list[tuple[int, int]] | None:
        """The ids of the chunks of the documents ``scope`` admits, as runs of consecutive ids,
        when it admits at most one document in ``NARROW_SCOPE`` and its chunks make at most
        ``SCOPE_RANGES`` runs; ``None`` otherwise (decision 658).

        A scoped ranking joins FTS5's matches, best first, to their documents until ``limit`` of
        them are in scope: a folder holding a hundredth of the index walked about a hundred times
        as many matches, 2.4x the CPU of an unscoped search at 50k chunks. A document's chunks
        are written together, so they take consecutive ids, and so does a folder indexed in
        one pass; ranked by rowid range (bm25's statistics are the whole table's either way),
        they give the same rows, scores and order. A wide scope keeps the join: there its rows
        come soon. Scattered chunks (many edited documents) keep it too, since each range is a
        query of its own."""
        if scope is None or scope.is_everything:
            return None
        # kept per scope until the index changes: the scope is tested on every document's path
        # (about 5 ms at 9,000 documents), which an agent searching one folder pays once
        snapshot = self.snapshot_key()
        kept: tuple[Any, dict[str, list[tuple[int, int]] | None]] | None = getattr(self._local, "scope_ranges", None)
        if kept is None or kept[0] != snapshot or len(kept[1]) > 64:
            kept = self._local.scope_ranges = (snapshot, {})
        key = self._scope_key(scope)
        if key not in kept[1]:
            kept[1][key] = self._id_runs(key)
        return kept[1][key]

    def _id_runs(self, key: str) -> list[tuple[int, int]] | None:
        c = self._conn()
        # one more than a narrow scope admits is enough to know it is not one: a wide scope
        # (``**/*.md``, an exclude) stops after an eighth of the documents
        most = self._one("SELECT count(*) FROM documents") // NARROW_SCOPE
        sql = "SELECT id FROM documents WHERE kb_in_scope(?, path) LIMIT ?"
        admitted = [r[0] for r in c.execute(sql, (key, most + 1))]
        if len(admitted) > most:
            return None
        ids = c.execute(
            "SELECT id FROM chunks WHERE document_id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (json.dumps(admitted),),
        )
        runs: list[tuple[int, int]] = []
        for (cid,) in ids:
            if runs and runs[-1][1] == cid - 1:
                runs[-1] = (runs[-1][0], cid)
            elif len(runs) == SCOPE_RANGES:
                return None
            else:
                runs.append((cid, cid))
        return runs

    def _id_span(self) -> tuple[int, int] | None:
        """The lowest and highest chunk id (two index seeks), ``None`` without chunks. Two
        subqueries: SQLite seeks for a lone min() or max() only, and with both in one SELECT it
        scanned every chunk (3.4 ms of a 50k index's 16 ms lexical search; decision 656)."""
        sql = "SELECT (SELECT min(id) FROM chunks), (SELECT max(id) FROM chunks)"
        lo, hi = self._conn().execute(sql).fetchone() or (None, None)
        return None if lo is None or hi is None else (int(lo), int(hi))

    def _ranked(
        self, table: str, match: str, limit: int, scope: PathScope | None, rows: tuple[int, int] | None = None
    ) -> list[tuple[int, float]]:
        """(rowid, bm25) of the best ``limit`` rows of ``table`` matching ``match``, inside ``scope``
        and the inclusive rowid range ``rows`` (``None``: every row)."""
        c = self._conn()
        within = "" if rows is None else " AND {rowid} BETWEEN ? AND ?"
        bounds = () if rows is None else rows
        if scope is None or scope.is_everything:
            # bm25 by name and SQLite's top-N sort: a third less CPU than ``ORDER BY rank``, which
            # has FTS5 sort every match (20,000 for a five-word question at 50k) before the LIMIT;
            # the same rows, scores and order, ties by rowid (decision 657)
            sql = (
                f"SELECT rowid, {_BM25[table]} AS score FROM {table} WHERE {table} MATCH ?"
                f"{within.format(rowid='rowid')} ORDER BY score, rowid LIMIT ?"
            )
            return [(r[0], r[1]) for r in c.execute(sql, (match, *bounds, limit))]
        # scoped: FTS5's own sorted ``rank`` stays, as the join then reads chunks in rank order
        # until the LIMIT is met (by name, every match was joined first: 1.7x slower)
        key = self._scope_key(scope)
        sql = (
            f"SELECT f.rowid, f.rank FROM {table} f JOIN chunks c ON c.id = f.rowid "
            "JOIN documents d ON d.id = c.document_id "
            f"WHERE {table} MATCH ?{within.format(rowid='f.rowid')} AND kb_in_scope(?, d.path) "
            "ORDER BY f.rank LIMIT ?"
        )
        return [(r[0], r[1]) for r in c.execute(sql, (match, *bounds, key, limit))]

    def refresh_term_stats(self) -> None:
        """Rebuild the chunk counts of common terms (one pass over the FTS vocabulary) unless
        every write has kept them (decision 650): then there is nothing to do."""
        if not self._table_exists("chunks_fts_vocab") or self._counts_kept(self._conn()):
            return
        with self._write() as c:
            c.execute("DELETE FROM term_stats")
            c.execute(
                "INSERT INTO term_stats(term, doc) SELECT term, doc FROM chunks_fts_vocab WHERE doc > ?",
                (COMMON_TERM_MIN_CHUNKS,),
            )
            c.execute("INSERT INTO term_stats(term, doc) VALUES(?, ?)", (_KEPT_TERM, COMMON_TERM_MIN_CHUNKS))
            batch: _Batch | None = getattr(self._local, "batch", None)
            if batch is not None and batch.conn is c:
                batch.kept = True

    def forget_term_stats(self) -> None:
        """Drop the marker row: a write counts a chunk stored exactly as before as unchanged, unread
        (decision 651), which it is not once the tokenizer changed (decision 1011)."""
        if self._table_exists("term_stats"):
            with self._write() as c:
                c.execute("DELETE FROM term_stats WHERE term = ?", (_KEPT_TERM,))

    def tidy_lexical(self) -> bool:
        """One merge step (``segments.py``) of the first FTS5 table whose segments are worth
        merging, or, once none is, one step handing free pages back to the file system
        (:meth:`_reclaim_step`); whether a step ran (call again until one does not)."""
        if not self.exists():
            return False
        for table in _LEXICAL_TABLES:
            if not self._table_exists(table):
                continue
            row = self._conn().execute(f"SELECT block FROM {table}_data WHERE id = ?", (STRUCTURE_ROWID,)).fetchone()
            if row is None or not worth_merging(read_structure(row[0])):
                continue
            with self._write() as c:
                before = c.total_changes()
                c.execute(f"INSERT INTO {table}({table}, rank) VALUES('merge', ?)", (-MERGE_STEP_PAGES,))
                # FTS5 counts two changes for the command itself: more means it merged something
                if c.total_changes() - before > 2:
                    return True
        return self._reclaim_step()

    def _reclaim_step(self) -> bool:
        """Hand up to ``MERGE_STEP_PAGES`` free pages back to the file system while at least
        ``FREE_MIN_PAGES`` and one page in ``FREE_SHARE`` are free (decision 654). A merge leaves
        the segments it replaced as free pages, a quarter of a new index's file; they would only
        be reused as the index grows. A few free pages stay: the next edits reuse them instead of growing the file. Only
        a file made with ``auto_vacuum=INCREMENTAL`` (every file made since) can give them back."""
        if self._one("PRAGMA auto_vacuum") != _INCREMENTAL_VACUUM:
            return False
        pages, free = self._one("PRAGMA page_count"), self._one("PRAGMA freelist_count")
        if free < FREE_MIN_PAGES or free * FREE_SHARE < pages:
            return False
        with self._write() as w:
            w.execute(f"PRAGMA incremental_vacuum({MERGE_STEP_PAGES})").fetchall()
        return True

    def _counts_kept(self, c: apsw.Connection) -> bool:
        """Whether term_stats holds the counts of the terms above today's threshold and every
        write keeps them: not in a new index (a cold build counts nothing and is rebuilt once at
        its end), one of an earlier release, or after an import."""
        if not self._table_exists("term_stats"):
            return False
        row = c.execute("SELECT doc FROM term_stats WHERE term = ?", (_KEPT_TERM,)).fetchone()
        return row is not None and row[0] == COMMON_TERM_MIN_CHUNKS

    def _term_changes(self, c: apsw.Connection) -> _TermChanges | None:
        """A counter for one write's term count changes, or None when term_stats is not kept."""
        batch: _Batch | None = getattr(self._local, "batch", None)
        if batch is not None and batch.conn is c:
            if batch.kept is None:
                batch.kept = self._counts_kept(c)
            return _TermChanges() if batch.kept else None
        return _TermChanges() if self._counts_kept(c) else None

    def _keep_terms(self, c: apsw.Connection, terms: _TermChanges | None) -> None:
        """Apply a write's term count changes now, or in a write batch at its commit (summed). A
        batch that has read more than ``COUNT_READ_LIMIT`` chunks stops keeping the counts: its
        pass rebuilds them at its end for less (a failed or cancelled pass leaves them to the next
        pass that changes a file)."""
        if terms is None:
            return
        batch: _Batch | None = getattr(self._local, "batch", None)
        if batch is None or batch.conn is not c:
            self._apply_terms(c, terms)
            return
        batch.terms.update(terms)
        batch.read += terms.read
        if batch.read > COUNT_READ_LIMIT:
            c.execute("DELETE FROM term_stats WHERE term = ?", (_KEPT_TERM,))
            batch.kept, batch.terms = False, Counter()

    def _apply_terms(self, c: apsw.Connection, terms: Counter[str]) -> None:
        """Move term_stats by the changes, after the transaction's FTS5 writes: a kept term's count
        moves by its change and leaves at or below the threshold; a term the table does not hold
        whose count grew is looked up in the vocabulary (it was at most the threshold, so its
        posting list is short) and enters above it. The table then holds what a refresh makes."""
        moved = sorted(t for t, n in terms.items() if n)
        if not moved:
            return
        threshold = COMMON_TERM_MIN_CHUNKS
        held: dict[str, int] = {}
        for group in _groups(moved):
            marks = ",".join("?" * len(group))
            held.update(c.execute(f"SELECT term, doc FROM term_stats WHERE term IN ({marks})", group))
        update: list[tuple[int, str]] = []
        gone: list[tuple[str]] = []
        new: list[tuple[str, int]] = []
        for term in moved:
            if term in held:
                count = held[term] + terms[term]
                if count > threshold:
                    update.append((count, term))
                else:
                    gone.append((term,))
            elif terms[term] > 0:
                row = c.execute("SELECT doc FROM chunks_fts_vocab WHERE term = ?", (term,)).fetchone()
                if row is not None and row[0] > threshold:
                    new.append((term, int(row[0])))
        c.executemany("UPDATE term_stats SET doc = ? WHERE term = ?", update)
        c.executemany("DELETE FROM term_stats WHERE term = ?", gone)
        c.executemany("INSERT INTO term_stats(term, doc) VALUES(?, ?)", new)

    def _frequencies(self, tokens: Sequence[str]) -> tuple[dict[str, int], int]:
        """Each token's chunk count and the chunks in the index (``coverage.Frequencies``): the
        total is counted once per snapshot, as the token counts are cached."""
        counts = self._document_frequencies(tokens)
        version = getattr(self._local, "df_version", None)
        cached = getattr(self._local, "chunk_total", None)
        if cached is None or version is None or cached[0] != version:
            cached = self._local.chunk_total = (version, int(self._one("SELECT count(*) FROM chunks")))
        return counts, cached[1]

    def _document_frequencies(self, tokens: Sequence[str]) -> dict[str, int]:
        """How many chunks hold each unicode61 token (absent tokens are left out): the
        cost of OR alternatives (``fts5.py``)."""
        if not tokens or not self.exists() or not self._table_exists("chunks_fts_vocab"):
            return {}
        c = self._conn()
        # fts5vocab counts a term by walking its posting list (~1 ms for a word in half of 50k
        # chunks): common terms come from term_stats (every write keeps it once a pass has built
        # it, decision 650; an index no pass has finished yet lags), rare ones from fts5vocab
        # (cheap). Cached per connection until the database changes: data_version moves with
        # other connections' commits only, total_changes with this connection's own writes.
        version = (self._one("PRAGMA data_version"), c.total_changes())
        cache = getattr(self._local, "df_cache", None)
        if cache is None or self._local.df_version != version or len(cache) > DF_CACHE_SIZE:
            cache = self._local.df_cache = {}
            self._local.df_version = version
        missing = [t for t in dict.fromkeys(tokens) if t not in cache]
        if missing and self._table_exists("term_stats"):
            marks = ",".join("?" * len(missing))
            for term, doc in c.execute(f"SELECT term, doc FROM term_stats WHERE term IN ({marks})", missing):
                cache[term] = int(doc)
        for token in missing:  # one lookup per term: an IN list makes fts5vocab scan every term
            if token not in cache:
                row = c.execute("SELECT doc FROM chunks_fts_vocab WHERE term = ?", (token,)).fetchone()
                cache[token] = 0 if row is None else int(row[0])
        return {t: cache[t] for t in tokens if cache.get(t)}

    def _stem_frequencies(self, tokens: Sequence[str]) -> dict[str, int]:
        """The prices of the stems query's alternatives (``fts5.stem_prices``, decision 636): each
        stem's common forms are the terms of ``term_stats`` from its stable prefix on (a range of
        the primary key: a few rows a token)."""
        counts = self._document_frequencies(tokens)
        if not self._table_exists("term_stats"):
            return counts
        c = self._conn()
        forms: list[tuple[str, int]] = []
        for key in dict.fromkeys(k for k in map(stem_key, tokens) if k is not None):
            start = key[:-1] if key.endswith("i") else key  # Snowball's "happi" stands for "happy"
            sql = "SELECT term, doc FROM term_stats WHERE term >= ? AND term < ?"
            rows = c.execute(sql, (start, start + "\U0010ffff"))
            forms += [(str(term), int(doc)) for term, doc in rows if term]
        return stem_prices(tokens, counts, stem_counts(forms))

    def semantic(self, vector: npt.NDArray[np.float32], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        if not self.has_vectors():
            return []
        allowed = self._allowed_docs(scope)
        if allowed is not None and not allowed:
            return []
        found = self._knn(vector, limit, allowed)
        return self._hits([cid for cid, _ in found], {cid: float(d) for cid, d in found})

    def _knn(self, vector: npt.NDArray[np.float32], limit: int, allowed: list[int] | None) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the nearest Markdown chunks, within ``allowed`` documents.

        float32: vec0's distances. int8: candidates by the quantized query, re-scored with the
        float32 query against the codes (decision 381). binary: candidates by the Hamming distance
        of the centred bits (decision 380), a pool growing with the index (430), re-ranked by
        exact float32 cosine. One read
        transaction (a savepoint: this thread may be inside a write), so the centre and the bits
        are those of one moment."""
        c = self._conn()
        c.execute("SAVEPOINT knn")
        try:
            return self._knn_in(c, unit(vector), limit, allowed)
        finally:
            c.execute("RELEASE knn")

    def _knn_in(
        self, c: apsw.Connection, vector: npt.NDArray[np.float32], limit: int, allowed: list[int] | None
    ) -> list[tuple[int, float]]:
        """Scored from the kept rows (decisions 960-961), answering as vec0 did: float32 the rows
        nearest by vec0's own distance (the product proposes every row within ``NEAR`` of the cut,
        scored then with vec0's arithmetic); int8 the ``max(2 x limit, 40)`` candidates nearest to
        the quantized query by vec0's distance of the codes, re-scored with the float query;
        binary the Hamming pool re-scored exactly. Equal distances: the lower chunk id first, as
        PostgreSQL's ``order by distance, c.id``."""
        storage = self._storage()
        if allowed is None and storage != "binary" and "_kept" not in self.__dict__ and self._large_for_a_first_load():
            self._keep_in_background()
            return self._vec0_knn(c, storage, vector, limit)
        with self._kept_lock:
            kept = self._kept_markdown(c)
            if not kept.count or kept.matrix.shape[1] != len(vector):
                return []
            admitted = kept.live if allowed is None else kept.live & np.isin(kept.owners, np.asarray(allowed))
            if storage == "binary":
                rows = self._hamming_rows(kept, vector, limit, admitted)
            elif storage == "int8":
                codes = np.frombuffer(_i8(vector), dtype=np.int8).astype(np.float32)
                probe = codes / max(float(np.linalg.norm(codes)), 1e-12)
                pool = max(limit * INT8_OVERFETCH, INT8_MIN_CANDIDATES)
                near = _nearest_rows(kept.ids, kept.cosines(probe.astype(np.float32)), pool, admitted, NEAR)
                # the pool as vec0's int8 KNN chose it: by its own distance of the codes, ties by id
                exact = vec0_int8_distances(kept.matrix[near], codes)
                rows = near[np.lexsort((kept.ids[near], exact))[:pool]]
            else:
                rows = _nearest_rows(kept.ids, kept.cosines(vector), limit, admitted, NEAR)
            ids = kept.ids[rows]
            if storage == "float32":
                distances: Any = vec0_cosine_distances(kept.matrix[rows], vector)
            else:  # the re-scoring: the float query against the stored rows at unit length (381)
                distances = 1.0 - dot_rows(unit_rows(kept.matrix[rows]), vector)
            found = [(int(i), float(d)) for i, d in zip(ids, distances, strict=True)]
        found.sort(key=lambda kv: (kv[1], kv[0]))
        return found[:limit]

    def _large_for_a_first_load(self) -> bool:
        """Whether loading every row would hold this search up: more chunks than
        :data:`KEPT_LOAD_IN_CALL` (two index seeks, an upper bound)."""
        span = self._id_span()
        return span is not None and span[1] - span[0] >= KEPT_LOAD_IN_CALL

    def _keep_in_background(self) -> None:
        """Load the kept rows in a thread of their own, once (decision 647)."""
        with self._open_lock:
            if self._kept_loader is None or not self._kept_loader.is_alive():
                self._kept_loader = threading.Thread(target=self._load_kept, name="lvsm-kept-vectors", daemon=True)
                self._kept_loader.start()

    def _load_kept(self) -> None:
        try:
            with self._kept_lock:
                if self.__dict__.get("_kept") is None:
                    self._kept_markdown(self._conn())
        except Exception:  # closed or damaged meanwhile: the next search loads them in its call
            log.debug("loading the kept vector rows failed", exc_info=True)

    def _vec0_knn(
        self, c: apsw.Connection, storage: str, vector: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[int, float]]:
        """A process's first unscoped semantic searches while its kept rows load (decision 647):
        vec0's KNN. float32: its distances; int8: its candidates by the quantized query, re-scored
        with the float query against the stored codes (381). Equal distances by chunk id, as the
        kept rows answer."""
        k = max(limit * INT8_OVERFETCH, INT8_MIN_CANDIDATES) if storage == "int8" else limit
        param, probe = ("vec_int8(?)", _i8(vector)) if storage == "int8" else ("?", _f32(vector))
        sql = f"SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH {param} AND k = ?"
        found = [(int(cid), float(d)) for cid, d in c.execute(sql, (probe, k))]
        if storage == "int8" and found:
            marks = ",".join("?" * len(found))
            rows = list(
                c.execute(
                    f"SELECT chunk_id, embedding FROM chunk_vectors WHERE chunk_id IN ({marks})", [i for i, _ in found]
                )
            )
            codes = stored_rows(b"".join(r[1] for r in rows), len(rows), np.int8)
            distances = 1.0 - dot_rows(unit_rows(codes), vector)
            found = [(int(r[0]), float(d)) for r, d in zip(rows, distances, strict=True)]
        found.sort(key=lambda kv: (kv[1], kv[0]))
        return found[:limit]

    def _hamming_rows(
        self, kept: KeptVectors, vector: npt.NDArray[np.float32], limit: int, admitted: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.intp]:
        """binary: the slots nearest by the Hamming distance of the centred bits (decision 380), a
        pool growing with the index (430: ``binary_candidates``), among the ``admitted`` slots; equal
        distances at the pool's edge keep the lower chunk ids. XOR and popcount over the kept bits:
        vec0's bit KNN took 25-45 CPU-ms for a pool of 1,000 or more at 17,861 rows."""
        assert kept.bits is not None
        k = binary_candidates(limit, kept.count)
        probe = np.frombuffer(_bits(vector, self._centre()), dtype=np.uint8)
        distance = np.bitwise_count(kept.bits ^ probe).sum(axis=1, dtype=np.int64)
        key = np.where(admitted, (distance << 40) | np.maximum(kept.ids, 0), np.iinfo(np.int64).max)
        held = int(admitted.sum())
        if k >= held:
            return np.flatnonzero(admitted)
        return np.argpartition(key, k - 1)[:k]

    def file_size(self) -> int:
        """Bytes on disk: database + WAL."""
        total = 0
        for suffix in ("", "-wal"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += os.path.getsize(p)
        return total


# The port's methods that run SQL: SQLite's "damaged" answers (SQLITE_CORRUPT, SQLITE_NOTADB) from
# any statement become IndexDamaged, a typed INDEX_NOT_READY naming the fix, wherever the damaged page
# is first read (decision 495). Opening only reads the schema, and a file damaged in a table's pages
# opened fine and then failed every call that touched them with a traceback.
_NO_SQL = frozenset({"close", "write_lock", "write_batch", "exclusive_pass", "file_size"})


def _chunk_terms(text: str, heading: str | None) -> set[str]:
    """The terms fts5vocab counts a chunk's row under: FTS5's tokens of its indexed body and
    heading (``cjk.index_tokens`` of what ``_replace_rows`` hands it), each once. FTS5 stores a
    token's first 32,768 bytes only (``FTS5_MAX_TOKEN_SIZE``; a base64 run): cut alike."""
    terms = index_terms(text) | index_terms(heading or "")
    if any(len(t) > _FTS5_MAX_TOKEN_CHARS for t in terms):
        terms = {t.encode()[:_FTS5_MAX_TOKEN_BYTES].decode("utf-8", "ignore") for t in terms}
    return terms


def _count_changes(terms: _TermChanges, gone: list[_Indexed], new: list[tuple[_Indexed, str]]) -> None:
    """Add a write's term count changes to ``terms``: each new chunk's terms on, each old one's
    off. A new chunk stored exactly as an old one (packed body and heading alike) cancels it
    unread: an edit re-tokenizes only the chunks it changed (decision 651)."""
    left = Counter(gone)
    for key, text in new:
        if left[key] > 0:
            left[key] -= 1
        else:
            terms.update(_chunk_terms(text, key[1]))
            terms.read += 1
    for (body, heading), n in left.items():
        if n > 0:
            terms.read += 1
            old = _chunk_terms(_unpack(body), heading)
            for _ in range(n):
                terms.subtract(old)


def _detecting_damage(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: SqliteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except DAMAGE as exc:
            raise self._damaged(exc) from None
        except (apsw.IOError, apsw.FullError, apsw.ReadOnlyError) as exc:
            raise _unusable(self.label, exc) from None
        except apsw.SQLError:
            lost = None
            with contextlib.suppress(apsw.Error):
                lost = self._lost_vector_parts()
            if lost is not None:
                raise lost from None
            raise

    return call


for _name, _method in inspect.getmembers(SqliteStore, inspect.isfunction):
    if not _name.startswith("_") and _name not in _NO_SQL:
        setattr(SqliteStore, _name, _detecting_damage(_method))


def _recorded_owner(c: apsw.Connection) -> tuple[str | None, str | None]:
    """The recorded knowledge-base root and the place the file was recorded at (either may be absent)."""
    values = {str(key): str(value) for key, value in c.execute("SELECT key, value FROM index_owner")}
    return values.get("root"), values.get("file")


# A scope admitting at most one document in NARROW_SCOPE whose chunks make at most SCOPE_RANGES
# runs of consecutive ids is ranked by those ranges instead of a join (decision 658)
NARROW_SCOPE = 8
SCOPE_RANGES = 8

# Free pages are handed back once they are at least this many and a FREE_SHARE-th of the file: the
# few that an edit frees are reused by the next one (decision 654)
FREE_MIN_PAGES = 64
FREE_SHARE = 10
_INCREMENTAL_VACUUM = 2  # PRAGMA auto_vacuum's value for INCREMENTAL


def _use_wal(conn: apsw.Connection) -> None:
    """Put the database in WAL mode (it stays so: later connections find it set).

    Switching a new database to WAL needs a moment of exclusive access, and SQLite answers
    SQLITE_BUSY at once, without calling the busy handler, when another connection is opening
    the same new file: two servers started together on a fresh project failed their first
    reindex that way (most runs of three processes racing). So the switch alone is retried,
    with a growing pause, for as long as any other statement would wait.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except apsw.BusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.05)


def _os_words(exc: OSError) -> str:
    if exc.errno in (errno.EEXIST, errno.ENOTDIR):
        return "a part of its folder path is a file, not a folder"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "the operating system refused to create its folder"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "no space left on the device"
    return f"its folder could not be created ({os_reason(exc)})"


def _unopenable(label: str, why: str) -> IndexNotReady:
    """The index file cannot be created or opened (decision 290): named as configured, with
    what to do, never by the absolute path of the server's machine."""
    return IndexNotReady(
        f"The index database {label} cannot be opened: {why}. Point storage.path (CLI: --storage-path)"
        " at a file in a writable folder, or fix that folder, then reindex. Your Markdown is not affected."
    )


def _unusable(label: str, exc: apsw.Error) -> IndexUnavailable:
    """The file system refused a read or write of the index (decision 498): nothing about the
    index's contents, so no rebuild is named first."""
    if isinstance(exc, apsw.FullError):
        why = "the disk is full. Free some space, then retry"
    elif isinstance(exc, apsw.ReadOnlyError):
        why = "the file or its folder refuses writes. Make them writable (or point storage.path elsewhere), then retry"
    else:
        why = (
            f"the file system failed ({exc.args[0] if exc.args else 'disk I/O error'}). Check the disk, then retry; "
            "if it keeps failing, rebuild the index with kb_reindex force=true (CLI: --reindex --force)"
        )
    return IndexUnavailable(
        f"The index database {label} could not be read or written: {why}. Your Markdown is not affected."
    )


def _busy() -> IndexUnavailable:
    return IndexUnavailable(
        f"The index database is busy: another process held it for longer than {BUSY_TIMEOUT_MS // 1000} s. "
        "Retry shortly; kb_status shows whether a reindex is running."
    )


def _nearest_rows(
    ids: npt.NDArray[np.int64],
    scores: npt.NDArray[np.float32],
    k: int,
    admitted: npt.NDArray[np.bool_],
    near: float = 0.0,
) -> npt.NDArray[np.intp]:
    """The ``k`` admitted slots of the highest ``scores``, equal scores at the cut keeping the lower
    chunk ids; with ``near``, every admitted slot within ``near`` of the cut too."""
    held = int(admitted.sum())
    k = min(k, held)
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    masked = np.where(admitted, scores, -np.inf)
    if k == held:
        return np.flatnonzero(admitted)
    cut = float(masked[np.argpartition(-masked, k - 1)[k - 1]])
    if near:
        return np.flatnonzero(masked >= cut - near)
    above = np.flatnonzero(masked > cut)
    tied = np.flatnonzero(masked == cut)
    return np.concatenate([above, tied[np.argsort(ids[tied], kind="stable")][: k - len(above)]])
