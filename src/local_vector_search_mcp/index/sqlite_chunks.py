"""The SQLite adapter's half of the chunk and vector API (``chunks.py``), mixed into ``SqliteStore``.

Tables (beside the Markdown's, and never dropped by a forced rebuild)::

    documents.properties  JSON of the front matter fields (added to older indexes in place)
    external_chunks(rid PK, id UNIQUE, collection, source_path, chunk_index, body, metadata JSON,
                    embedding float32 BLOB, dims, stale)
    external_vectors vec0(rid PK, embedding float[D] cosine)   non-stale external vectors

Filters: the documents (or external rows) a filter admits are found first, then the
nearest-neighbour query runs only over them (``document_id IN (...)`` in ``chunk_vectors``;
an exact scan of the admitted external vectors), so a filter never cuts after the limit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np
import numpy.typing as npt

from .chunks import (
    MARKDOWN,
    ChunkFilterSpec,
    ExternalChunk,
    StoredChunk,
    markdown_chunk_id,
    markdown_metadata,
)

__all__ = ["ChunkTables", "dump_properties"]


def dump_properties(properties: dict[str, Any] | None) -> str | None:
    return json.dumps(properties, ensure_ascii=False, sort_keys=True) if properties else None


def _load(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


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
            """
        )

    def _ready(self) -> bool:
        return self.exists() and self._table_exists("external_chunks")

    def _external_dims(self) -> int | None:
        sql = self._one("SELECT sql FROM sqlite_master WHERE name = 'external_vectors'")
        if sql:
            return int(sql.split("float[", 1)[1].split("]", 1)[0])
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
        if storage == "int8":  # restored the way the index compares it
            vec = np.frombuffer(blob, dtype=np.int8).astype(np.float32) / 127.0
            return vec / max(float(np.linalg.norm(vec)), 1e-12)
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

    def put_external(self, chunk: ExternalChunk) -> bool:
        vector = np.ascontiguousarray(chunk.vector, dtype=np.float32)
        with self._write() as c:
            self._create_chunk_tables(c)
            if not self._table_exists("external_vectors"):
                c.execute(
                    "CREATE VIRTUAL TABLE external_vectors USING vec0("
                    f"rid INTEGER PRIMARY KEY, embedding float[{len(vector)}] distance_metric=cosine)"
                )
            row = (
                chunk.collection,
                chunk.source_path,
                chunk.chunk_index,
                chunk.content,
                json.dumps(chunk.metadata, ensure_ascii=False),
                vector.tobytes(),
                len(vector),
                int(chunk.stale),
            )
            rid = self._one("SELECT rid FROM external_chunks WHERE id = ?", (chunk.id,))
            created = rid is None
            if rid is None:
                c.execute(
                    "INSERT INTO external_chunks(collection, source_path, chunk_index, body, metadata, embedding, "
                    "dims, stale, id) VALUES(?,?,?,?,?,?,?,?,?)",
                    (*row, chunk.id),
                )
                rid = c.last_insert_rowid()
            else:
                c.execute(
                    "UPDATE external_chunks SET collection = ?, source_path = ?, chunk_index = ?, body = ?, "
                    "metadata = ?, embedding = ?, dims = ?, stale = ? WHERE rid = ?",
                    (*row, rid),
                )
                c.execute("DELETE FROM external_vectors WHERE rid = ?", (rid,))
            if not chunk.stale:
                c.execute("INSERT INTO external_vectors(rid, embedding) VALUES(?, ?)", (rid, vector.tobytes()))
            return created

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
            if self._table_exists("external_vectors"):
                c.execute("DELETE FROM external_vectors WHERE rid = ?", (rid,))
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
        allowed: list[int] | None = None
        if spec.path_prefix or spec.path_globs or spec.tags or spec.metadata:
            allowed = [
                doc_id
                for doc_id, path, properties in self._conn().execute("SELECT id, path, properties FROM documents")
                if spec.path_ok(path) and spec.fields_ok(_load(properties))
            ]
            if not allowed:
                return []
        hits = self._knn(probe, limit, sorted(allowed) if allowed is not None else None)
        if not hits:
            return []
        marks = ",".join("?" * len(hits))
        rows = {
            r[0]: r for r in self._conn().execute(self._MD_SELECT + f" WHERE c.id IN ({marks})", [h[0] for h in hits])
        }
        return [(self._md_chunk(rows[cid], False), 1.0 - dist) for cid, dist in hits if cid in rows]

    def _nearest_external(
        self, probe: npt.NDArray[np.float32], limit: int, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        c = self._conn()
        if spec.is_everything:
            hits = [
                (int(rid), 1.0 - float(d))
                for rid, d in c.execute(
                    "SELECT rid, distance FROM external_vectors WHERE embedding MATCH ? AND k = ?",
                    (probe.tobytes(), limit),
                )
            ]
        else:
            # the rows the filter admits, then an exact scan of their vectors (never cut after the limit)
            rids: list[int] = []
            blobs: list[bytes] = []
            for rid, collection, source_path, metadata, blob in c.execute(
                "SELECT rid, collection, source_path, metadata, embedding FROM external_chunks WHERE stale = 0"
            ):
                if spec.matches(collection, source_path, _load(metadata)):
                    rids.append(int(rid))
                    blobs.append(blob)
            if not rids:
                return []
            matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(rids), -1)
            scores = matrix @ (probe / max(float(np.linalg.norm(probe)), 1e-12))
            order = np.argsort(-scores, kind="stable")[:limit]
            hits = [(rids[i], float(scores[i])) for i in order]
        if not hits:
            return []
        marks = ",".join("?" * len(hits))
        rows = {r[0]: r for r in c.execute(self._EXT_SELECT + f" WHERE rid IN ({marks})", [h[0] for h in hits])}
        return [(self._ext_chunk(rows[rid], False), score) for rid, score in hits if rid in rows]
