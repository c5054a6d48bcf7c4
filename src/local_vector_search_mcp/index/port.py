"""The storage port: everything the engine asks of an index store.

The engine (reindex, sync, search) talks only to :class:`IndexStore`; every
SQL dialect detail lives in an adapter (``sqlite.py`` now; a PostgreSQL +
pgvector adapter implements the same protocol and plugs into ``stores.py``).
Records are plain dataclasses.

Chunks arrive as plain text: each adapter tokenizes them for its own
full-text engine (CJK runs through ``cjk.py``, so index and query sides agree
per engine). Lexical queries arrive as a structured tree and path filters as
glob data (``query.py``); the adapter renders both in its own dialect.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..errors import IndexNotReady
from .chunks import ChunkFilterSpec, ExternalChunk, StoredChunk
from .query import LexicalQuery, PathScope

if TYPE_CHECKING:  # annotations only: parse workers import this module and never need numpy
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ChunkHit",
    "ChunkRecord",
    "DocumentDump",
    "DocumentMeta",
    "DocumentRecord",
    "DocumentState",
    "IndexDamaged",
    "IndexStore",
    "IndexUnavailable",
    "LinkRecord",
    "NoBatch",
    "PendingChunk",
    "RefusedChunk",
    "StoreCounts",
    "StoredLink",
    "WriteBatch",
    "normalize_tag",
    "pickled_by_fields",
    "tag_prefixes",
]

_T = TypeVar("_T")


def pickled_by_fields(cls: type[_T]) -> type[_T]:
    """Pickle a slotted dataclass as a constructor call with its field values.

    Parse workers send every file's records through a pipe (``parallel.py``). The
    default pickling of a ``slots=True`` dataclass calls ``dataclasses.fields()``
    for every object, on both ends: a third of a cold pass's pickling and
    unpickling CPU (spec/decisions.md 274). The values and the object rebuilt are
    the same."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    get = attrgetter(*names)
    values: Callable[[Any], tuple[Any, ...]] = get if len(names) > 1 else lambda obj: (get(obj),)

    def __reduce__(self: Any) -> tuple[type[_T], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign]
    return cls


class IndexDamaged(IndexNotReady):
    """The index database is truncated or corrupt; ``--reindex --force`` rebuilds it."""


class IndexUnavailable(IndexNotReady):
    """The index cannot be reached for now (busy, a database server down or lost twice, a disk
    full or failing): a targeted re-index is retried later on its own, as any transient failure
    (decision 498)."""


@dataclass(frozen=True, slots=True)
class DocumentState:
    """What the cheap unchanged-file check needs."""

    id: int
    path: str
    source_hash: str
    size: int
    mtime_ns: int  # the stat stamp: the later of mtime and ctime (prepare.stat_stamp, decision 463)


def utc_now() -> str:
    """The index's timestamps (``indexed_at_utc``, the removal stamp): fixed-width ISO 8601 with
    milliseconds, so the stores compare them as text (``max``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    path: str
    source_hash: str
    size: int
    mtime_ns: int
    indexed_at_utc: str
    # front matter fields kept for chunk filters and metadata (``chunks.document_properties``)
    properties: dict[str, Any] | None = None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One chunk to store; ``text`` and ``heading_path`` are what lexical search
    matches (the heading weighted higher). ``vector`` is the chunk's vector when
    already known (reused) and ``None`` otherwise: in a vector-enabled index such
    a chunk is stored as *pending* and gets its vector later
    (:meth:`IndexStore.store_vectors`)."""

    ordinal: int
    pointer: str
    anchor: str
    text: str
    heading_path: str | None
    embedding_text_hash: str
    vector: npt.NDArray[np.float32] | None = None
    # Worked out where the file was parsed (a parse worker, spec/decisions.md 230) so the one
    # writer only runs SQL: the stems text (``stem.stem_index_text(heading, text)``) and the
    # compressed body (``derive.pack_body``). ``None``: the adapter derives them itself.
    stems: str | None = None
    packed_body: bytes | None = None
    # On PostgreSQL instead: the chunk's (tsvector literal, ntok, nstem) (``pg_lexemes``, decision 566).
    lexemes: tuple[str, int, int] | None = None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class LinkRecord:
    """One link of a document as written (``markdown/links.py``); resolution against the
    other documents happens when the graph is read, so it never goes stale."""

    kind: str
    destination: str
    text: str | None
    anchor: str | None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """What the link graph keeps per document besides its links."""

    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()
    block_ids: tuple[str, ...] = ()


def normalize_tag(tag: str) -> str:
    """Tags compare case-insensitively, without a leading ``#``, and in NFC: a tag typed ``café``
    is the one a page saved by a macOS tool holds as ``cafe`` + U+0301 (decision 1129)."""
    return unicodedata.normalize("NFC", tag.strip().lstrip("#").casefold())


def tag_prefixes(tags: Sequence[str]) -> list[str]:
    """Each tag and the parents of a nested tag: ``a/b/c`` is also ``a/b`` and ``a``
    (an Obsidian search for ``#a`` finds ``#a/b``)."""
    out: dict[str, None] = {}
    for tag in tags:
        parts = normalize_tag(tag).split("/")
        for i in range(1, len(parts) + 1):
            if all(parts[:i]):
                out["/".join(parts[:i])] = None
    return list(out)


@dataclass(frozen=True, slots=True)
class DocumentDump:
    """One document's rows as a store holds them (:meth:`IndexStore.export_documents`), which
    :meth:`IndexStore.import_documents` writes into any engine without re-chunking or re-embedding.
    Each chunk's ``vector`` is its stored vector (``None`` while pending), restored to float32
    without renormalising: an int8 vector comes back as its codes / 127 (the largest is +-127,
    decision 425), so an index of the same vector storage stores exactly the same codes again."""

    document: DocumentRecord
    chunks: tuple[ChunkRecord, ...]
    links: tuple[LinkRecord, ...] = ()
    meta: DocumentMeta = DocumentMeta()


@dataclass(frozen=True, slots=True)
class StoredLink:
    source: str
    ordinal: int
    kind: str
    destination: str
    text: str | None
    anchor: str | None


@dataclass(frozen=True, slots=True)
class ChunkHit:
    chunk_id: int
    path: str
    anchor: str
    heading_path: str | None
    text: str
    source_hash: str
    distance: float | None = None


@dataclass(frozen=True, slots=True)
class PendingChunk:
    """A chunk still waiting for its vector, with what the embedding text needs."""

    chunk_id: int
    path: str
    text: str
    heading_path: str | None
    embedding_text_hash: str


@dataclass(frozen=True, slots=True)
class RefusedChunk:
    """A chunk the embedding provider refused (decision 510): found lexically, never semantically."""

    path: str
    chunk_index: int
    heading_path: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class StoreCounts:
    documents: int
    chunks: int
    # when the index last changed: the newest document's indexing or a later removal (decision 770)
    last_indexed_at_utc: str | None
    pending_vectors: int = 0


class WriteBatch(Protocol):
    """Writes that share one transaction until :meth:`flush` (``IndexStore.write_batch``)."""

    @property
    def files(self) -> int:
        """Writes in the open transaction, or sent and not yet confirmed (0: none)."""
        ...

    @property
    def age(self) -> float:
        """Seconds since the open transaction began (0.0: none open)."""
        ...

    def flush(self) -> None:
        """Commit the open transaction, if any."""
        ...


class NoBatch:
    """The :class:`WriteBatch` of a store whose writes each commit on their own."""

    files = 0
    age = 0.0

    def flush(self) -> None:
        return None


class IndexStore(Protocol):
    """An index store. Implementations must be safe for one writer and many
    readers across threads and processes (each thread gets its own session)."""

    # lifecycle and manifest -------------------------------------------------
    @property
    def file_replacements(self) -> int:
        """How often the stored index vanished under the store: the SQLite file at its path
        deleted or replaced (decision 498), the PostgreSQL schema dropped (decision 499)."""
        ...

    @property
    def location(self) -> str:
        """Where the index lives, safe to show (a file path; never a password)."""
        ...

    def exists(self) -> bool: ...

    def ensure_schema(self, vector_dimensions: int | None, vector_storage: str) -> None:
        """Create missing tables (never drops anything)."""
        ...

    def reset(self, vector_dimensions: int | None, vector_storage: str) -> None:
        """Drop and recreate every derived table (forced rebuild); a store found damaged is
        set aside and started afresh instead."""
        ...

    def check(self) -> None:
        """Raise :class:`IndexDamaged` when the stored index fails the engine's own integrity
        check (a forced rebuild runs it first, decision 496)."""
        ...

    def read_manifest(self) -> dict[str, str]: ...

    def write_manifest(self, values: dict[str, str]) -> None: ...

    def has_vectors(self) -> bool: ...

    # documents ----------------------------------------------------------------
    def document_states(self) -> dict[str, DocumentState]: ...

    def documents_without_own_chunks(self) -> list[str]:
        """Paths of the documents whose chunks are front matter at most: the ones chunker v7 changes
        (a v6 index is upgraded in place by re-reading just these, decision 781)."""
        ...

    def document_states_of(self, paths: Collection[str]) -> dict[str, DocumentState]:
        """The states of just ``paths`` (exact, case-sensitive; a path not indexed is left out):
        a targeted sync looks up one document instead of reading every one (decision 340)."""
        ...

    def chunk_counts(self, paths: Collection[str]) -> dict[str, int]:
        """How many chunks each of ``paths`` has in the index (exact, case-sensitive; a path not
        indexed is left out): the size search compares copies of a passage by (decision 1080)."""
        ...

    def document_states_under(self, prefix: str) -> dict[str, DocumentState]:
        """The states of the documents whose path starts with ``prefix`` (a folder's ``a/b/``;
        exact and case-sensitive, ``%`` and ``_`` are plain characters; ``""``: every document):
        the watcher finds a moved or deleted folder's documents without reading every one
        (decision 351)."""
        ...

    def unreadable_files(self) -> dict[str, str]:
        """Files left out of the index because they could not be read or parsed (path -> reason),
        as the last reindex or sync of each found them; kept across restarts (empty: none)."""
        ...

    def set_unreadable(self, path: str, reason: str | None) -> None:
        """Record why ``path`` was left out of the index; ``None`` forgets it (indexed, or gone)."""
        ...

    def touch_document(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a document whose content hash is unchanged."""
        ...

    def replace_document(
        self,
        doc: DocumentRecord,
        chunks: Sequence[ChunkRecord],
        links: Sequence[LinkRecord] = (),
        meta: DocumentMeta | None = None,
    ) -> int:
        """Atomically replace one document's rows (chunks, links, metadata); returns the chunk count."""
        ...

    def pending_vectors(self, limit: int, paths: Collection[str] | None = None) -> list[PendingChunk]:
        """Up to ``limit`` chunks without a vector yet, in id order (of the documents at ``paths``
        only, when given)."""
        ...

    def store_vectors(self, vectors: Sequence[tuple[PendingChunk, npt.NDArray[np.float32]]]) -> int:
        """Store the vectors of pending chunks, each with the chunk as ``pending_vectors`` gave it,
        in one transaction. Skipped: chunks that are gone, no longer pending, or whose embedding
        text changed since (their id may now hold another text, whose vector this is not: decision
        801). Returns how many were stored."""
        ...

    def refuse_vectors(self, refusals: Sequence[tuple[PendingChunk, str]]) -> int:
        """Record that the provider refused the texts of these pending chunks (with its reason):
        they stop being pending and get no vector, until their document is stored again or a new
        vector table queues every chunk. Skipped as by :meth:`store_vectors`; returns how many
        were recorded."""
        ...

    def refused_vectors(self, limit: int) -> tuple[int, list[RefusedChunk]]:
        """How many chunks the provider refused, and the first ``limit`` by path and chunk index."""
        ...

    def delete_document(self, path: str) -> bool: ...

    def vectors_by_text_hash(self, path: str) -> dict[str, npt.NDArray[np.float32]]:
        """Stored vectors of one document keyed by embedding-text hash (reuse on re-embed)."""
        ...

    def counts(self) -> StoreCounts: ...

    def has_chunks(self) -> bool:
        """Whether any chunk is indexed (cheap, unlike :meth:`counts`)."""
        ...

    def mark_all_vectors_pending(self) -> None:
        """Queue every chunk for a vector (the vector table was just created)."""
        ...

    def pending_vector_count(self, paths: Collection[str] | None = None) -> int:
        """Chunks still waiting for a vector (of the documents at ``paths`` only, when given); cheap,
        no chunk text is read."""
        ...

    # link graph -----------------------------------------------------------------
    def links(self, paths: Collection[str] | None = None) -> list[StoredLink]:
        """Every stored link (of the documents at ``paths`` only, when given), by source path then ordinal."""
        ...

    def document_meta(self, paths: Collection[str] | None = None) -> dict[str, DocumentMeta]:
        """Tags, aliases, headings and block ids of every document (of those at ``paths``, when given)."""
        ...

    def snapshot_key(self) -> Hashable | None:
        """A value that changes whenever anything committed to the index changes, as seen by
        this thread (cheap: no table is read), so a reader may keep what it derived from a
        whole-table read until the key moves; ``None`` when the store cannot tell (never cache)."""
        ...

    def paths_with_tags(self, tags: Sequence[str]) -> set[str]:
        """Documents carrying every one of ``tags`` (case-insensitive; ``a`` also matches
        the nested tag ``a/b``, as in Obsidian)."""
        ...

    # retrieval ----------------------------------------------------------------
    def lexical(self, query: LexicalQuery, limit: int, scope: PathScope | None) -> list[ChunkHit]:
        """Chunks matching ``query``, best first (BM25 or the engine's equivalent, the
        heading weighted above the body), restricted to ``scope`` before the limit."""
        ...

    def titled(self, words: Sequence[str], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        """The first chunk of each document holding a chunk whose heading path begins with
        ``words`` (the query's words, tokenized as the adapter tokenizes headings), in
        document-id order, at most ``limit``, restricted to ``scope`` before the limit: the
        candidates of the engine's title match (``search/titles.py``), which compares the
        first heading with the words itself, so an adapter may return more than that."""
        ...

    def refresh_term_stats(self) -> None:
        """Recompute whatever statistics lexical search precomputes (after a full reindex)."""
        ...

    def forget_term_stats(self) -> None:
        """Make the next :meth:`refresh_term_stats` recompute the statistics in full, where the
        writes' own counting would miss this pass's changes: a pass re-tokenizing chunks whose
        texts did not change (an earlier tokenizer's index upgraded in place, decision 1011)."""
        ...

    def tidy_lexical(self) -> bool:
        """One short step of tidying the lexical index after a pass wrote to it (SQLite: merging
        FTS5 segments, decision 637), in its own transaction so that edits slip between steps;
        whether there is more to do. An adapter whose engine tidies its own index returns False."""
        ...

    def documents_holding_letters(self, letters: str) -> list[str]:
        """Paths of the documents the text or heading of a chunk of which holds one of ``letters``
        (the body of a regular-expression character class naming every case meant: ``a-zA-Z``).
        Asked by the reindex of an index written by an earlier lexical tokenizer: it re-reads just
        these, whose lexical rows that tokenizer wrote otherwise (decisions 518, 1006)."""
        ...

    def semantic(self, vector: npt.NDArray[np.float32], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        """Nearest chunks to ``vector`` (cosine distance in ``ChunkHit.distance``), restricted
        to ``scope`` before the limit."""
        ...

    # the chunk and vector API (``chunks.py``; external chunks survive every reindex) -------------
    def markdown_chunks(
        self, path: str | None, after: tuple[str, int] | None, limit: int, with_vector: bool = False
    ) -> list[StoredChunk]:
        """Chunks derived from the Markdown ordered by (path, ordinal), after ``after``, only of
        ``path`` when given."""
        ...

    def put_external(self, chunk: ExternalChunk, keep_collection: bool = False) -> bool:
        """Insert or replace an external chunk (its vector unless ``stale``); True when created.
        A replaced chunk keeps its collection: one stored in another than ``chunk.collection``
        raises :class:`OtherCollection` and nothing is written, unless ``keep_collection`` (the
        caller named none), when ``chunk.collection`` is only a new chunk's. The check is part of
        the write, never a read before it, which let a concurrent upsert of the same id move the
        chunk (decision 988)."""
        ...

    def update_external(
        self,
        chunk_id: str,
        content: str | None,
        metadata: Mapping[str, Any] | None,
        vector: npt.NDArray[np.float32] | None,
    ) -> StoredChunk | None:
        """Replace the given fields of an external chunk in one conditional write (None given:
        kept), None when no chunk has the id. Staleness is decided from the row being changed:
        a new vector makes it fresh, else new text unlike the stored one makes it stale. Never
        a read then an upsert, which undid a concurrent delete or lost a concurrent update
        (decision 780). The chunk as written, without its vector."""
        ...

    def external_chunk(self, chunk_id: str, with_vector: bool = False) -> StoredChunk | None: ...

    def external_chunks(
        self, collection: str | None, source_path: str | None, after: tuple[str, str] | None, limit: int
    ) -> list[StoredChunk]:
        """External chunks ordered by (collection, id), after ``after``."""
        ...

    def delete_external(self, chunk_id: str) -> bool: ...

    def vector_dimensions(self) -> int | None:
        """Size of the stored vectors (Markdown index first, else external); None when none."""
        ...

    def nearest_chunks(
        self, vector: npt.NDArray[np.float32], limit: int, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        """Nearest non-stale chunks of both kinds with their cosine similarity, best first,
        ``spec`` applied before the limit."""
        ...

    # moving an index between engines (``index/copy.py``) -----------------------------------
    def export_documents(self, after: str | None, limit: int) -> list[DocumentDump]:
        """Up to ``limit`` documents whose path sorts after ``after`` (code-point order), with
        their chunks, stored vectors, links and metadata, in that order."""
        ...

    def import_documents(self, dumps: Sequence[DocumentDump]) -> int:
        """Replace each dumped document's rows in one transaction, vectors stored exactly as
        given (never renormalised; a chunk without one is pending). Returns the chunk count."""
        ...

    def write_lock(self) -> AbstractContextManager[None]:
        """Serialise multi-statement writers (reindex, sync) within this process."""
        ...

    def write_batch(
        self, hold: AbstractContextManager[Any] | None = None, parsing: bool = False
    ) -> AbstractContextManager[WriteBatch]:
        """Within the block, this thread's writes may share a transaction until the yielded
        batch is flushed (and at the end of the block). ``hold`` (the caller's writer gate) is
        entered before the store's own lock while a shared transaction is open. A store may
        commit each write on its own (:class:`NoBatch`); it does so when ``parsing`` (the caller
        parses the next file between two writes) and its batch would hold, across that parse, a
        lock other processes wait for."""
        ...

    def exclusive_pass(self, name: str, wait: bool) -> AbstractContextManager[bool]:
        """Hold the index-wide lock ``name`` (``reindex``, ``embedding``) across every server
        sharing this store; yields whether it is held (False only when ``wait`` is off and
        another server holds it). A store only one machine's processes share may yield True
        at once: the engine already runs one pass at a time per process."""
        ...

    def close(self) -> None: ...
