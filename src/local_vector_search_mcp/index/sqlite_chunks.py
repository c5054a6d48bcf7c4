"""The SQLite adapter's half of the chunk and vector API (``chunks.py``), mixed into ``SqliteStore``.

Tables (beside the Markdown's, and never dropped by a forced rebuild)::

    documents.properties  JSON of the front matter fields (added to older indexes in place)
    external_chunks(rid PK, id UNIQUE, collection, source_path, chunk_index, body, metadata JSON,
                    embedding float32 BLOB, dims, stale)
    vector_generation(n)  bumped by every write that changes a stored vector

Nearest neighbours are exact up to ``EXACT_ROWS`` rows of a kind: the vectors of each kind are
held as one unit-row matrix per process (rebuilt when ``vector_generation`` moves), scored with
one matrix-vector product; a filter is a mask over the rows applied before the top-k cut, so it
never cuts after the limit. Above that, centred sign bits pick a tenth of the rows, which are
then scored exactly (decision 395).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np
import numpy.typing as npt

from .chunks import (
    MARKDOWN,
    ChunkFilterSpec,
    ExternalChunk,
    OtherCollection,
    StoredChunk,
    markdown_chunk_id,
    markdown_metadata,
    unit,
)
from .kept_vectors import LOG_KEEP, NEAR, KeptVectors, Rows, stored_rows, unit_rows
from .vecmath import dot_rows

__all__ = ["ChunkTables", "dump_properties"]


def dump_properties(properties: dict[str, Any] | None) -> str | None:
    return json.dumps(properties, ensure_ascii=False, sort_keys=True) if properties else None


def _load(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


# The change log of the Markdown chunks' vectors (decision 960): which chunks a write at a generation
# changed, and how far back the log reaches (``floor``) and which generation it last saw (``last``).
_LOG_TABLES = """
    CREATE TABLE IF NOT EXISTS vector_log(
        generation INTEGER NOT NULL, chunk_id INTEGER NOT NULL, PRIMARY KEY(generation, chunk_id)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS vector_log_state(
        id INTEGER PRIMARY KEY CHECK (id = 1), floor INTEGER NOT NULL, last INTEGER NOT NULL);
"""


# Rows of some chunks: each looked up by its id (vec0 answers ``chunk_id IN (...)`` by scanning
# every row, ~25 CPU-ms at 50k; a lookup by one id reads one row). CROSS JOIN keeps chunks first.
_POINTS = (
    "SELECT c.id, c.document_id, e.embedding FROM chunks c CROSS JOIN {table} e ON e.chunk_id = c.id "
    "WHERE c.id IN ({marks})"
)


class ChunkTables:
    """Needs the host's connection helpers (``_conn``, ``_write``, ``_one``, ``_table_exists``,
    ``_storage``, ``has_vectors``, ``_knn``, ``read_manifest``)."""

    if TYPE_CHECKING:  # provided by SqliteStore

        def _conn(self) -> apsw.Connection: ...
        def _write(self) -> AbstractContextManager[apsw.Connection]: ...
        def _one(self, sql: str, params: Sequence[Any] = ()) -> Any: ...
        def _table_exists(self, name: str) -> bool: ...
        def _storage(self) -> str: ...
        def has_vectors(self) -> bool: ...
        def exists(self) -> bool: ...
        def read_manifest(self) -> dict[str, str]: ...

        _kept_lock: threading.RLock

        def _knn(
            self, vector: npt.NDArray[np.float32], limit: int, allowed: list[int] | None
        ) -> list[tuple[int, float]]: ...

    # schema ---------------------------------------------------------------------
    def _create_chunk_tables(self, c: apsw.Connection) -> None:
        columns = {row[1] for row in c.execute("PRAGMA table_info(documents)")}
        if columns and "properties" not in columns:
            c.execute("ALTER TABLE documents ADD COLUMN properties TEXT")
        c.execute(
            """
            CREATE TABLE IF NOT EXISTS external_chunks(
                rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, collection TEXT NOT NULL,
                source_path TEXT NOT NULL, chunk_index INTEGER NOT NULL, body TEXT NOT NULL,
                metadata TEXT NOT NULL, embedding BLOB NOT NULL, dims INTEGER NOT NULL,
                stale INTEGER NOT NULL DEFAULT 0);
            CREATE INDEX IF NOT EXISTS external_order ON external_chunks(collection, id);
            CREATE TABLE IF NOT EXISTS vector_generation(n INTEGER NOT NULL);
            """
            + _LOG_TABLES
        )
        if self._one("SELECT count(*) FROM vector_generation") == 0:
            c.execute("INSERT INTO vector_generation(n) VALUES(0)")
        # a log begun now reaches back to the present generation only (an index from before it)
        c.execute("INSERT OR IGNORE INTO vector_log_state SELECT 1, n, n FROM vector_generation")

    def _bump(self, c: apsw.Connection) -> None:
        """Inside a write that changes stored vectors: invalidates every process's vector matrices.
        ``vector_log_state.last`` records the generation this version made: a writer that moves the
        generation without logging (a version from before the log) leaves it behind, and readers
        then load every row (decision 960)."""
        if self._table_exists("vector_generation"):
            c.execute("UPDATE vector_generation SET n = n + 1")
            if self._table_exists("vector_log_state"):
                c.execute("UPDATE vector_log_state SET last = (SELECT n FROM vector_generation)")

    def _log_vectors(self, c: apsw.Connection, ids: Sequence[int]) -> None:
        """Inside a write: the Markdown chunks whose vector it adds, replaces or removes, at the
        generation its commit makes (the write bumps once, holding the write lock). Every process
        keeping the rows re-reads just these (decision 960). The log keeps about ``LOG_KEEP``
        entries; the oldest go, and ``floor`` says how far back it still reaches."""
        if not ids or not self._has_log(c):
            return
        made = self._generation() + 1
        c.executemany("INSERT OR IGNORE INTO vector_log VALUES(?, ?)", [(made, int(i)) for i in ids])
        if made % 32 and len(ids) < LOG_KEEP // 4:
            return  # counted now and then: a count reads the whole log
        if int(self._one("SELECT count(*) FROM vector_log")) <= LOG_KEEP:
            return
        cut = self._one("SELECT generation FROM vector_log ORDER BY generation DESC LIMIT 1 OFFSET ?", (LOG_KEEP // 2,))
        cut = made if cut is None else int(cut)
        c.execute("DELETE FROM vector_log WHERE generation <= ?", (cut,))
        c.execute("UPDATE vector_log_state SET floor = max(floor, ?)", (cut,))

    def _log_everything(self, c: apsw.Connection) -> None:
        """Inside a write that rewrites every vector (a reset, binary's new centre): every process
        loads all rows again."""
        if self._has_log(c):
            c.execute("DELETE FROM vector_log")
            c.execute("UPDATE vector_log_state SET floor = (SELECT n + 1 FROM vector_generation)")

    def _has_log(self, c: apsw.Connection) -> bool:
        """Inside a write: the log exists, made now in an index from before it (its first write
        after this version opened it), reaching back to the present generation."""
        if self._table_exists("vector_log_state"):
            return True
        if not self._table_exists("vector_generation"):
            return False
        c.execute(_LOG_TABLES)
        c.execute("INSERT OR IGNORE INTO vector_log_state SELECT 1, n, n FROM vector_generation")
        return True

    def _logged_since(self, since: int, now: int) -> list[int] | None:
        """The chunk ids logged after generation ``since`` up to ``now``; None when the log does not
        reach back that far or a write that did not log moved the generation."""
        if not self._table_exists("vector_log_state"):
            return None
        row = self._conn().execute("SELECT floor, last FROM vector_log_state").fetchone()
        if row is None or int(row[1]) != now or since < int(row[0]):
            return None
        rows = self._conn().execute("SELECT DISTINCT chunk_id FROM vector_log WHERE generation > ?", (since,))
        return [int(r[0]) for r in rows]

    def _generation(self) -> int:
        return int(self._one("SELECT n FROM vector_generation") or 0) if self._table_exists("vector_generation") else 0

    def _kept_markdown(self, c: apsw.Connection) -> KeptVectors:
        """The Markdown chunks' vectors at this connection's generation, kept per process and
        brought up to date from ``vector_log`` (decision 960); the caller holds ``_kept_lock``.

        Rows: ``markdown`` chunk ids, document ids, the stored vectors at unit length (int8: the codes
        restored; binary: the float32 rows of ``chunk_vectors_exact``, with the stored bits). Inside
        this connection's write transaction the rows are read afresh and not kept: what it wrote
        is not committed and may roll back to the generation the kept rows are at."""
        c.execute("SAVEPOINT kept")  # one read transaction: the generation, the log and the rows agree
        try:
            return self._kept_at(c)
        finally:
            c.execute("RELEASE kept")

    def _kept_at(self, c: apsw.Connection) -> KeptVectors:
        generation = self._generation()
        storage = self._storage()
        writing = c.txn_state() == apsw.mapping_txn_state["SQLITE_TXN_WRITE"]
        kept: KeptVectors | None = self.__dict__.get("_kept")
        if kept is not None and not writing and kept.storage == storage:
            if kept.generation == generation:
                return kept
            changed = self._logged_since(kept.generation, generation) if kept.generation < generation else None
            if changed is not None and not kept.big_delta(len(changed)):
                kept.remove(changed)
                kept.add(self._vector_rows(c, storage, changed))
                kept.generation = generation
                self.__dict__.setdefault("_masks", {}).clear()  # over the slots as they were
                self.__dict__.pop("_kept_signs", None)
                return kept
        fresh = KeptVectors.of(generation, storage, self._vector_rows(c, storage, None))
        if not writing and self._table_exists("vector_generation"):
            self.__dict__["_kept"] = fresh
            self.__dict__.setdefault("_masks", {}).clear()
            self.__dict__.pop("_kept_signs", None)
        return fresh

    def _vector_rows(self, c: apsw.Connection, storage: str, ids: Sequence[int] | None) -> Rows:
        """Stored Markdown vectors: every one (in (path, ordinal) order), or those of ``ids`` that exist."""
        table = "chunk_vectors_exact" if storage == "binary" else "chunk_vectors"
        if ids is None:
            sql = (
                f"SELECT e.chunk_id, c.document_id, e.embedding FROM {table} e JOIN chunks c ON c.id = e.chunk_id "
                "JOIN documents d ON d.id = c.document_id ORDER BY d.path, c.ordinal"
            )
            rows = list(c.execute(sql))
        else:
            rows = []
            for at in range(0, len(ids), 500):
                group = ids[at : at + 500]
                rows += c.execute(_POINTS.format(table=table, marks=",".join("?" * len(group))), group)
        width = self._markdown_dims() or 0
        found = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        owners = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            matrix = stored_rows(b"".join(r[2] for r in rows), len(rows), np.int8 if storage == "int8" else np.float32)
        else:
            matrix = np.zeros((0, width), dtype=np.float32)
        bits = None
        if storage == "binary":  # the stored bits (vec0 bit[n]), the Hamming candidates' source
            nbytes = (matrix.shape[1] + 7) // 8
            if ids is None:
                packed = dict(c.execute("SELECT chunk_id, embedding FROM chunk_vectors"))
            else:
                packed = {}
                for at in range(0, len(found), 500):
                    group = found[at : at + 500].tolist()
                    sql = _POINTS.format(table="chunk_vectors", marks=",".join("?" * len(group)))
                    packed.update((cid, blob) for cid, _, blob in c.execute(sql, group))
            raw = b"".join(packed.get(int(i), bytes(nbytes)) for i in found)
            bits = np.frombuffer(raw, dtype=np.uint8).reshape(len(found), nbytes).copy()
        return found, owners, matrix, bits

    def _matrix(self, kind: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """``(row ids, owner ids, unit vectors)`` of one kind, cached until a write changes any vector.

        ``markdown``: the kept rows (:meth:`_kept_markdown`; free slots have id -1 and a zero row,
        held under ``_kept_lock``); ``external``: rids, rids, the non-stale vectors, in the order
        PostgreSQL breaks ties in (collection, id; decision 361), loaded whole at every generation.
        One matrix product then scores every chunk exactly, several times faster than vec0's scan,
        and filters become masks.
        """
        if kind == MARKDOWN:
            kept = self._kept_markdown(self._conn())
            return kept.ids, kept.owners, kept.matrix
        generation = self._generation()
        cache: dict[str, Any] = self.__dict__.setdefault("_matrices", {})
        hit = cache.get(kind)
        if hit is not None and hit[0] == generation:
            return hit[1]  # type: ignore[no-any-return]
        rows = list(
            self._conn().execute(
                "SELECT rid, rid, embedding FROM external_chunks WHERE stale = 0 ORDER BY collection, id"
            )
        )
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            matrix = unit_rows(stored_rows(b"".join(r[2] for r in rows), len(rows), np.float32))
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        value = (ids, ids, matrix)
        cache[kind] = (generation, value)
        cache[kind + ":bits"] = _centred_signs(matrix) if len(rows) > EXACT_ROWS else None
        self.__dict__.setdefault("_masks", {}).clear()  # masks of the previous generation
        return value

    def _bits(self, kind: str) -> Signs | None:
        """Above ``EXACT_ROWS`` rows: the centred sign bits the candidates are taken by."""
        if kind != MARKDOWN:
            bits: Signs | None = self.__dict__.get("_matrices", {}).get(kind + ":bits")
            return bits
        kept: KeptVectors | None = self.__dict__.get("_kept")
        if kept is None or kept.count <= EXACT_ROWS:
            return None
        signs: tuple[int, Signs] | None = self.__dict__.get("_kept_signs")
        if signs is None or signs[0] != kept.generation:
            unit = kept.matrix * kept.scale[:, None]  # free slots are zero rows, masked out
            centre = unit[kept.live].mean(axis=0, dtype=np.float64).astype(np.float32)
            signs = (kept.generation, (centre, _signs(unit - centre)))
            self.__dict__["_kept_signs"] = signs
        return signs[1]

    def _mask(self, kind: str, spec: ChunkFilterSpec, owners: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_] | None:
        """The rows ``spec`` admits, cached per filter until the next vector write (a pipeline
        repeating one filter pays the metadata scan once)."""
        if kind == MARKDOWN and not (spec.path_prefix or spec.path_globs or spec.tags or spec.metadata):
            return None
        if kind == "external" and spec.is_everything:
            return None
        masks: dict[tuple[str, ChunkFilterSpec], npt.NDArray[np.bool_]] = self.__dict__.setdefault("_masks", {})
        key = (kind, spec)
        if key not in masks:
            if kind == MARKDOWN:
                rows = self._conn().execute("SELECT id, path, properties FROM documents")
                admitted = [i for i, path, props in rows if spec.path_ok(path) and spec.fields_ok(_load(props))]
            else:
                rows = self._conn().execute(
                    "SELECT rid, collection, source_path, metadata FROM external_chunks WHERE stale = 0"
                )
                admitted = [rid for rid, coll, path, meta in rows if spec.matches(coll, path, _load(meta))]
            if len(masks) > 64:
                masks.clear()
            masks[key] = np.isin(owners, np.asarray(admitted, dtype=np.int64))
        return masks[key]

    def _ready(self) -> bool:
        return self.exists() and self._table_exists("external_chunks")

    def _external_dims(self) -> int | None:
        if not self._ready():
            return None
        dims = self._one("SELECT dims FROM external_chunks LIMIT 1")
        return None if dims is None else int(dims)

    def _markdown_dims(self) -> int | None:
        value = self.read_manifest().get("embedding_dimensions")
        return int(value) if value and self.has_vectors() else None

    def vector_dimensions(self) -> int | None:
        return self._markdown_dims() or self._external_dims()

    # Markdown chunks ----------------------------------------------------------------
    _MD_SELECT = (
        "SELECT c.id, d.path, c.ordinal, c.anchor, c.heading_path, c.body, d.source_hash, d.properties, "
        "c.vector_pending FROM chunks c JOIN documents d ON d.id = c.document_id"
    )

    def _md_chunk(self, row: Sequence[Any], with_vector: bool) -> StoredChunk:
        from .sqlite import _unpack

        cid, path, ordinal, anchor, heading, body, source_hash, properties, pending = row
        dims = None if pending or not self.has_vectors() else self._markdown_dims()
        return StoredChunk(
            id=markdown_chunk_id(path, ordinal),
            collection=MARKDOWN,
            source_path=path,
            chunk_index=int(ordinal),
            content=_unpack(body),
            metadata=markdown_metadata(heading, anchor, _load(properties), source_hash),
            dimensions=dims,
            vector=self._markdown_vector(int(cid)) if with_vector and dims else None,
        )

    def _markdown_vector(self, chunk_id: int) -> npt.NDArray[np.float32] | None:
        storage = self._storage()
        table = "chunk_vectors_exact" if storage == "binary" else "chunk_vectors"
        blob = self._one(f"SELECT embedding FROM {table} WHERE chunk_id = ?", (chunk_id,))
        if blob is None:
            return None
        if storage == "int8":  # the codes at unit length, as the PostgreSQL adapter restores them
            return unit(np.frombuffer(blob, dtype=np.int8).astype(np.float32))
        return np.frombuffer(blob, dtype=np.float32).copy()

    def markdown_chunks(
        self, path: str | None, after: tuple[str, int] | None, limit: int, with_vector: bool = False
    ) -> list[StoredChunk]:
        if not self.exists() or not self._table_exists("chunks"):
            return []
        where: list[str] = []
        params: list[Any] = []
        if path is not None:
            where.append("d.path = ?")
            params.append(path)
        if after is not None:
            where.append("(d.path > ? OR (d.path = ? AND c.ordinal > ?))")
            params.extend([after[0], after[0], after[1]])
        sql = self._MD_SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY d.path, c.ordinal LIMIT ?"
        rows = list(self._conn().execute(sql, [*params, limit]))
        return [self._md_chunk(r, with_vector) for r in rows]

    # external chunks ------------------------------------------------------------------
    def _ext_chunk(self, row: Sequence[Any], with_vector: bool) -> StoredChunk:
        _rid, cid, collection, source_path, index, body, metadata, blob, dims, stale = row
        return StoredChunk(
            id=cid,
            collection=collection,
            source_path=source_path,
            chunk_index=int(index),
            content=body,
            metadata=_load(metadata),
            dimensions=int(dims),
            stale=bool(stale),
            vector=np.frombuffer(blob, dtype=np.float32).copy() if with_vector else None,
        )

    _EXT_SELECT = (
        "SELECT rid, id, collection, source_path, chunk_index, body, metadata, embedding, dims, stale "
        "FROM external_chunks"
    )

    def put_external(self, chunk: ExternalChunk, keep_collection: bool = False) -> bool:
        vector = np.ascontiguousarray(chunk.vector, dtype=np.float32)
        with self._write() as c:
            self._create_chunk_tables(c)
            row = (
                chunk.source_path,
                chunk.chunk_index,
                chunk.content,
                json.dumps(chunk.metadata, ensure_ascii=False),
                vector.tobytes(),
                len(vector),
                int(chunk.stale),
            )
            # read under the write lock: no other upsert of the id runs between this and the write
            stored = c.execute("SELECT rid, collection FROM external_chunks WHERE id = ?", (chunk.id,)).fetchone()
            if stored is None:
                c.execute(
                    "INSERT INTO external_chunks(collection, source_path, chunk_index, body, metadata, embedding, "
                    "dims, stale, id) VALUES(?,?,?,?,?,?,?,?,?)",
                    (chunk.collection, *row, chunk.id),
                )
            else:
                rid, collection = stored
                if collection != chunk.collection and not keep_collection:
                    raise OtherCollection(collection)
                c.execute(
                    "UPDATE external_chunks SET source_path = ?, chunk_index = ?, body = ?, "
                    "metadata = ?, embedding = ?, dims = ?, stale = ? WHERE rid = ?",
                    (*row, rid),
                )
            self._bump(c)
            return stored is None

    def update_external(
        self,
        chunk_id: str,
        content: str | None,
        metadata: Mapping[str, Any] | None,
        vector: npt.NDArray[np.float32] | None,
    ) -> StoredChunk | None:
        if not self._ready():
            return None
        blob = None if vector is None else np.ascontiguousarray(vector, dtype=np.float32).tobytes()
        # One statement: SET's right-hand sides read the row as it is when the write lock is
        # held, so staleness follows the stored text and a row deleted meanwhile stays deleted.
        with self._write() as c:
            row = c.execute(
                "UPDATE external_chunks SET body = coalesce(?1, body), metadata = coalesce(?2, metadata),"
                " embedding = coalesce(?3, embedding), dims = coalesce(?4, dims),"
                " stale = CASE WHEN ?3 IS NOT NULL THEN 0 ELSE (stale OR (?1 IS NOT NULL AND ?1 IS NOT body)) END"
                " WHERE id = ?5 RETURNING rid, id, collection, source_path, chunk_index, body, metadata,"
                " embedding, dims, stale",
                (
                    content,
                    None if metadata is None else json.dumps(dict(metadata), ensure_ascii=False),
                    blob,
                    None if vector is None else len(vector),
                    chunk_id,
                ),
            ).fetchone()
            if row is None:
                return None
            self._bump(c)  # a vector or its staleness changed: every process's matrices rebuild
            return self._ext_chunk(row, False)

    def external_chunk(self, chunk_id: str, with_vector: bool = False) -> StoredChunk | None:
        if not self._ready():
            return None
        row = self._conn().execute(self._EXT_SELECT + " WHERE id = ?", (chunk_id,)).fetchone()
        return None if row is None else self._ext_chunk(row, with_vector)

    def external_chunks(
        self, collection: str | None, source_path: str | None, after: tuple[str, str] | None, limit: int
    ) -> list[StoredChunk]:
        if not self._ready():
            return []
        where: list[str] = []
        params: list[Any] = []
        if collection is not None:
            where.append("collection = ?")
            params.append(collection)
        if source_path is not None:
            where.append("source_path = ?")
            params.append(source_path)
        if after is not None:
            where.append("(collection > ? OR (collection = ? AND id > ?))")
            params.extend([after[0], after[0], after[1]])
        sql = self._EXT_SELECT + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY collection, id LIMIT ?"
        return [self._ext_chunk(r, False) for r in self._conn().execute(sql, [*params, limit])]

    def delete_external(self, chunk_id: str) -> bool:
        if not self._ready():
            return False
        with self._write() as c:
            rid = self._one("SELECT rid FROM external_chunks WHERE id = ?", (chunk_id,))
            if rid is None:
                return False
            c.execute("DELETE FROM external_chunks WHERE rid = ?", (rid,))
            self._bump(c)
            return True

    # nearest neighbours ---------------------------------------------------------------
    def nearest_chunks(
        self, vector: npt.NDArray[np.float32], limit: int, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        probe = np.ascontiguousarray(vector, dtype=np.float32)
        found: list[tuple[StoredChunk, float]] = []
        if spec.wants(MARKDOWN) and self._markdown_dims() == len(probe):
            found += self._nearest_markdown(probe, limit, spec)
        if self._ready() and self._external_dims() == len(probe):
            found += self._nearest_external(probe, limit, spec)
        found.sort(key=lambda pair: (-pair[1], pair[0].collection, pair[0].id))
        return found[:limit]

    def _nearest_markdown(
        self, probe: npt.NDArray[np.float32], limit: int, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        with self._kept_lock:
            kept = self._kept_markdown(self._conn())
            if not kept.count:
                return []
            mask = self._mask(MARKDOWN, spec, kept.owners)
            if kept.free:  # free slots are never found
                mask = kept.live if mask is None else mask & kept.live
            # int8: the float query against the restored codes, as ``semantic`` scores (decision 381);
            # every row tied with the last one kept, cut below by (path, ordinal) (decision 361)
            bits = self._bits(MARKDOWN) if kept is self.__dict__.get("_kept") else None
            best = _top(kept.matrix, probe, limit, mask, bits, ties=True, scale=kept.scale)
            ids = kept.ids
            scored = [(int(ids[i]), score) for i, score in best]
        if not scored:
            return []
        marks = ",".join("?" * len(scored))
        wanted = [cid for cid, _ in scored]
        rows = {r[0]: r for r in self._conn().execute(self._MD_SELECT + f" WHERE c.id IN ({marks})", wanted)}
        found = [(self._md_chunk(rows[cid], False), score) for cid, score in scored if cid in rows]
        found.sort(key=lambda pair: (-pair[1], pair[0].source_path, pair[0].chunk_index))
        return found[:limit]

    def _nearest_external(
        self, probe: npt.NDArray[np.float32], limit: int, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        rids, _, matrix = self._matrix("external")
        if not len(rids):
            return []
        c = self._conn()
        best = _top(matrix, probe, limit, self._mask("external", spec, rids), self._bits("external"))
        if not best:
            return []
        wanted = [int(rids[i]) for i, _ in best]
        marks = ",".join("?" * len(wanted))
        rows = {r[0]: r for r in c.execute(self._EXT_SELECT + f" WHERE rid IN ({marks})", wanted)}
        return [(self._ext_chunk(rows[int(rids[i])], False), score) for i, score in best if int(rids[i]) in rows]


# Up to this many rows every query scores every row exactly: one pass over the matrix, memory-bound
# (~2.5 CPU-ms at 50k x 384 float32, ~5 at 100k; decision 395). Above it, centred sign bits
# (popcount of XOR, 48 bytes a row at 384 dimensions) pick the candidates, which are scored exactly:
# a tenth of the rows (RERANK_SHARE), at least RERANK_PER_RESULT per asked result and RERANK_MIN.
# A fixed 2,000 (4 % of 50k rows) kept only 0.94-0.96 of the exact top 10 of real embeddings
# (decision 395); a tenth kept 0.98-0.99 at 19k-100k rows.
EXACT_ROWS = 100_000
RERANK_PER_RESULT = 100
RERANK_MIN = 2_000
RERANK_SHARE = 10  # the pool is at least len(rows) // RERANK_SHARE
# A filter admitting at most 1 / NARROW_FILTER of the rows: only its rows are read and scored
# (1-in-10 at 50k: ~0.5 instead of ~2.5 CPU-ms); a wider one is a mask over the full pass.
NARROW_FILTER = 4


# The sign bits of the rows minus their mean, and that mean: real embeddings share a large common
# direction, so raw signs hardly tell them apart (decision 383, as 380 for binary storage).
Signs = tuple[npt.NDArray[np.float32], npt.NDArray[np.uint64]]


def _centred_signs(matrix: npt.NDArray[np.float32]) -> Signs:
    centre = matrix.mean(axis=0, dtype=np.float64).astype(np.float32)
    return centre, _signs(matrix - centre)


def _signs(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.uint64]:
    packed = np.packbits(matrix > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _pool(rows: int, limit: int) -> int:
    return max(limit * RERANK_PER_RESULT, RERANK_MIN, rows // RERANK_SHARE)


def _top(
    matrix: npt.NDArray[np.float32],
    probe: npt.NDArray[np.float32],
    limit: int,
    mask: npt.NDArray[np.bool_] | None,
    bits: Signs | None = None,
    ties: bool = False,
    scale: npt.NDArray[np.float32] | None = None,
) -> list[tuple[int, float]]:
    """(row, cosine similarity) of the ``limit`` best rows, ``mask`` applied before any cut;
    ``ties``: and every row tied with the last one (the caller breaks the tie). ``scale``: the
    rows are as stored and these are their inverse norms (the kept Markdown rows): the rows within
    ``NEAR`` of the cut are normalised and scored again, so the scores are the unit rows' to the bit."""
    if matrix.shape[1] != len(probe) or limit <= 0:
        return []
    unit = (probe / max(float(np.linalg.norm(probe)), 1e-12)).astype(np.float32)
    candidates: npt.NDArray[np.intp] | None = None
    pool = _pool(len(matrix), limit)
    admitted = None if mask is None else np.flatnonzero(mask)
    if admitted is not None and (
        len(admitted) * NARROW_FILTER <= len(matrix) or (bits is not None and len(admitted) <= pool)
    ):
        # a narrow filter: its rows alone, all scored (gathering a row costs a few times reading it in turn)
        if not len(admitted):
            return []
        candidates = admitted
    elif bits is not None and pool < len(matrix):
        centre, signs = bits
        distance = np.bitwise_count(signs ^ _signs((unit - centre)[None, :])[0]).sum(axis=1, dtype=np.int32)
        if mask is not None:  # admits more rows than the pool (else the branch above)
            distance = np.where(mask, distance, np.iinfo(np.int32).max)
        candidates = np.sort(np.argpartition(distance, pool - 1)[:pool])  # row order breaks ties
    if candidates is None:
        scores = dot_rows(matrix, unit) if scale is None else dot_rows(matrix, unit) * scale
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
    else:
        scores = dot_rows(matrix[candidates], unit)
        if scale is not None:
            scores *= scale[candidates]
    k = min(limit, len(scores))
    if scale is not None:  # the rows near the cut, scored as unit rows
        kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
        near = np.flatnonzero(scores >= kth - NEAR) if np.isfinite(kth) else np.flatnonzero(np.isfinite(scores))
        rows_near = near if candidates is None else candidates[near]
        candidates, scores = rows_near, dot_rows(unit_rows(matrix[rows_near]), unit)
        k = min(k, len(scores))
        if not k:
            return []
    part = np.argpartition(-scores, k - 1)[:k]
    # argpartition keeps any k of the rows tied with the k-th score; keep the first ones in row
    # order, as PostgreSQL's ORDER BY does (decision 361)
    kth = scores[part].min()
    above = np.flatnonzero(scores > kth)
    tied = np.flatnonzero(scores == kth)
    part = np.concatenate([above, tied if ties and np.isfinite(kth) else tied[: k - len(above)]])
    order = part[np.lexsort((part, -scores[part]))]
    rows = order if candidates is None else candidates[order]
    return [(int(r), float(scores[i])) for r, i in zip(rows, order, strict=True) if np.isfinite(scores[i])]
