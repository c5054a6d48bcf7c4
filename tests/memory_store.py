"""A second storage adapter, in memory and pure Python: proof that the port is
engine-neutral (``tests/index/test_store_port.py`` runs the same suite on it
and on SQLite).

Simple but honest: lexical scoring is BM25 (k1 1.2, b 0.75) over the
structured query, the heading counting twice as much as the body (as the
SQLite adapter weights its columns), CJK segmented by ``index/cjk.py`` like
every adapter; semantic search is exact cosine. Leaf weights scale a leaf's
score. Nothing is persisted.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from local_vector_search_mcp.index.chunks import (
    MARKDOWN,
    ChunkFilterSpec,
    ExternalChunk,
    OtherCollection,
    StoredChunk,
    markdown_chunk_id,
    markdown_metadata,
)
from local_vector_search_mcp.index.cjk import bigrams, index_tokens
from local_vector_search_mcp.index.coverage import rerank
from local_vector_search_mcp.index.fts5 import hyphen_stems
from local_vector_search_mcp.index.port import (
    ChunkHit,
    ChunkRecord,
    DocumentDump,
    DocumentMeta,
    DocumentRecord,
    DocumentState,
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
from local_vector_search_mcp.index.query import AllOf, AnyOf, CjkRun, LexicalQuery, PathScope, Phrase, Prefix, Term
from local_vector_search_mcp.index.stem import STEM_MARK, is_stemmable, stem, stem_tokens

K1, B = 1.2, 0.75
FIELD_WEIGHTS = (1.0, 2.0, 0.25)  # body, heading, stems (as the SQLite adapter's bm25 weights)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass
class _Chunk:
    id: int
    doc_id: int
    record: ChunkRecord
    fields: tuple[list[str], list[str], list[str]]  # body, heading tokens; "~" + English stems
    vector: npt.NDArray[np.float32] | None
    pending: bool
    refused: str | None = None


# A scoring unit: a token sequence (one token, or a phrase) or a prefix ("*" marks it).
Unit = tuple[str, ...]


class MemoryStore:
    file_replacements = 0  # nothing on disk to replace

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._created = False
        self._dims: int | None = None
        self._manifest: dict[str, str] = {}
        self._docs: dict[str, tuple[DocumentState, DocumentRecord]] = {}
        self._removed_at: str | None = None
        self._links: dict[str, tuple[LinkRecord, ...]] = {}
        self._meta: dict[str, DocumentMeta] = {}
        self._chunks: dict[int, _Chunk] = {}
        self._next_doc = 1
        self._next_chunk = 1
        self._external: dict[str, ExternalChunk] = {}  # survives reset(), like the SQLite tables
        self._unreadable: dict[str, str] = {}

    @property
    def location(self) -> str:
        return ":memory:"

    # lifecycle and manifest -------------------------------------------------
    def exists(self) -> bool:
        return self._created

    def ensure_schema(self, vector_dimensions: int | None, vector_storage: str) -> None:
        with self._lock:
            if not self._created:
                self._created = True
                self._dims = vector_dimensions
            elif self._dims is None and vector_dimensions:
                self._dims = vector_dimensions

    def check(self) -> None:
        """Nothing on disk to be damaged."""

    def reset(self, vector_dimensions: int | None, vector_storage: str) -> None:
        with self._lock:
            self._docs.clear()
            self._chunks.clear()
            self._links.clear()
            self._meta.clear()
            self._manifest.clear()
            self._unreadable.clear()
            self._created, self._dims = True, vector_dimensions

    def read_manifest(self) -> dict[str, str]:
        return dict(self._manifest)

    def write_manifest(self, values: dict[str, str]) -> None:
        with self._lock:
            self._created = True
            self._manifest = dict(values)

    def has_vectors(self) -> bool:
        return self._dims is not None

    # documents ----------------------------------------------------------------
    def document_states(self) -> dict[str, DocumentState]:
        return {path: state for path, (state, _) in self._docs.items()}

    def documents_without_own_chunks(self) -> list[str]:
        with self._lock:
            own = {c.doc_id for c in self._chunks.values() if c.record.pointer != "frontmatter"}
            return sorted(path for path, (state, _) in self._docs.items() if state.id not in own)

    def document_states_of(self, paths: Collection[str]) -> dict[str, DocumentState]:
        return {path: self._docs[path][0] for path in paths if path in self._docs}

    def chunk_counts(self, paths: Collection[str]) -> dict[str, int]:
        with self._lock:
            by_doc = self._paths_by_doc()
            counts = {path: 0 for path in paths if path in self._docs}
            for chunk in self._chunks.values():
                if by_doc.get(chunk.doc_id) in counts:
                    counts[by_doc[chunk.doc_id]] += 1
            return counts

    def document_states_under(self, prefix: str) -> dict[str, DocumentState]:
        return {path: state for path, (state, _) in self._docs.items() if path.startswith(prefix)}

    def unreadable_files(self) -> dict[str, str]:
        return dict(self._unreadable)

    def set_unreadable(self, path: str, reason: str | None) -> None:
        with self._lock:
            if reason is None:
                self._unreadable.pop(path, None)
            else:
                self._unreadable[path] = reason

    def touch_document(self, path: str, size: int, mtime_ns: int) -> None:
        with self._lock:
            if path in self._docs:
                state, doc = self._docs[path]
                self._docs[path] = (replace(state, size=size, mtime_ns=mtime_ns), doc)

    def replace_document(
        self,
        doc: DocumentRecord,
        chunks: Sequence[ChunkRecord],
        links: Sequence[LinkRecord] = (),
        meta: DocumentMeta | None = None,
    ) -> int:
        with self._lock:
            staged = []  # build everything first: a bad record leaves the old revision in place
            for ch in chunks:
                body, heading = index_tokens(ch.text), index_tokens(ch.heading_path or "")
                fields = (body, heading, [STEM_MARK + s for s in stem_tokens(heading + body)])
                staged.append((ch, fields))
            self._remove(doc.path)
            self._created = True
            doc_id = self._next_doc
            self._next_doc += 1
            self._docs[doc.path] = (DocumentState(doc_id, doc.path, doc.source_hash, doc.size, doc.mtime_ns), doc)
            for ch, fields in staged:
                vector = None if ch.vector is None else np.asarray(ch.vector, dtype=np.float32)
                pending = self.has_vectors() and vector is None
                self._chunks[self._next_chunk] = _Chunk(self._next_chunk, doc_id, ch, fields, vector, pending)
                self._next_chunk += 1
            self._links[doc.path] = tuple(links)
            self._meta[doc.path] = meta or DocumentMeta()
            return len(chunks)

    def pending_vectors(self, limit: int, paths: Collection[str] | None = None) -> list[PendingChunk]:
        with self._lock:
            by_doc = self._paths_by_doc()
            todo = [
                c
                for c in sorted(self._chunks.values(), key=lambda c: c.id)
                if c.pending and (paths is None or by_doc[c.doc_id] in paths)
            ][:limit]
            return [
                PendingChunk(c.id, by_doc[c.doc_id], c.record.text, c.record.heading_path, c.record.embedding_text_hash)
                for c in todo
            ]

    def _waiting(self, pending: PendingChunk) -> _Chunk | None:
        """The chunk ``pending`` names, if it still waits with that embedding text."""
        chunk = self._chunks.get(pending.chunk_id)
        ok = chunk is not None and chunk.pending and chunk.record.embedding_text_hash == pending.embedding_text_hash
        return chunk if ok else None

    def store_vectors(self, vectors: Sequence[tuple[PendingChunk, npt.NDArray[np.float32]]]) -> int:
        with self._lock:
            stored = 0
            for pending, vector in vectors:
                chunk = self._waiting(pending)
                if chunk is not None:
                    chunk.vector, chunk.pending = np.asarray(vector, dtype=np.float32), False
                    stored += 1
            return stored

    def refuse_vectors(self, refusals: Sequence[tuple[PendingChunk, str]]) -> int:
        with self._lock:
            done = 0
            for pending, reason in refusals:
                chunk = self._waiting(pending)
                if chunk is not None:
                    chunk.pending, chunk.refused = False, reason
                    done += 1
            return done

    def refused_vectors(self, limit: int) -> tuple[int, list[RefusedChunk]]:
        with self._lock:
            paths = self._paths_by_doc()
            refused = [
                RefusedChunk(paths[c.doc_id], c.record.ordinal, c.record.heading_path, c.refused)
                for c in self._chunks.values()
                if c.refused is not None
            ]
            refused.sort(key=lambda r: (r.path, r.chunk_index))
            return len(refused), refused[:limit]

    def delete_document(self, path: str) -> bool:
        with self._lock:
            entry = self._docs.get(path)
            if entry is None:
                return False
            # the removal is a change of the index (decision 770), as the real stores stamp it
            self._removed_at = max(self._removed_at or "", utc_now(), entry[1].indexed_at_utc)
            return self._remove(path)

    def _remove(self, path: str) -> bool:
        with self._lock:
            entry = self._docs.pop(path, None)
            if entry is None:
                return False
            doc_id = entry[0].id
            self._links.pop(path, None)
            self._meta.pop(path, None)
            for chunk_id in [c.id for c in self._chunks.values() if c.doc_id == doc_id]:
                del self._chunks[chunk_id]
            return True

    def vectors_by_text_hash(self, path: str) -> dict[str, npt.NDArray[np.float32]]:
        with self._lock:
            entry = self._docs.get(path)
            if entry is None:
                return {}
            return {
                c.record.embedding_text_hash: c.vector.copy()
                for c in self._chunks.values()
                if c.doc_id == entry[0].id and c.vector is not None
            }

    def export_documents(self, after: str | None, limit: int) -> list[DocumentDump]:
        with self._lock:
            paths = sorted(p for p in self._docs if after is None or p > after)[:limit]
            out = []
            for path in paths:
                state, record = self._docs[path]
                chunks = sorted((c for c in self._chunks.values() if c.doc_id == state.id), key=lambda c: c.id)
                out.append(
                    DocumentDump(
                        record,
                        tuple(replace(c.record, vector=None if c.vector is None else c.vector.copy()) for c in chunks),
                        self._links.get(path, ()),
                        self._meta.get(path, DocumentMeta()),
                    )
                )
            return out

    def import_documents(self, dumps: Sequence[DocumentDump]) -> int:
        with self._lock:
            return sum(self.replace_document(d.document, d.chunks, d.links, d.meta) for d in dumps)

    def counts(self) -> StoreCounts:
        times = [doc.indexed_at_utc for _, doc in self._docs.values()]
        last = max([*times, self._removed_at] if self._removed_at else times, default=None)
        return StoreCounts(len(self._docs), len(self._chunks), last, self.pending_vector_count())

    def has_chunks(self) -> bool:
        return bool(self._chunks)

    def documents_holding_letters(self, letters: str) -> list[str]:
        found = re.compile(f"[{letters}]").search
        with self._lock:
            by_doc = self._paths_by_doc()
            held = {
                c.doc_id for c in self._chunks.values() if found(c.record.text) or found(c.record.heading_path or "")
            }
            return sorted(by_doc[doc_id] for doc_id in held)

    def mark_all_vectors_pending(self) -> None:
        pass  # the memory store has no separate vector table

    def pending_vector_count(self, paths: Collection[str] | None = None) -> int:
        with self._lock:
            by_doc = self._paths_by_doc()
            return sum(c.pending and (paths is None or by_doc[c.doc_id] in paths) for c in self._chunks.values())

    # link graph -----------------------------------------------------------------
    def links(self, paths: Collection[str] | None = None) -> list[StoredLink]:
        with self._lock:
            return [
                StoredLink(path, i, ln.kind, ln.destination, ln.text, ln.anchor)
                for path in sorted(self._links)
                if paths is None or path in paths
                for i, ln in enumerate(self._links[path])
            ]

    def snapshot_key(self) -> None:
        return None

    def document_meta(self, paths: Collection[str] | None = None) -> dict[str, DocumentMeta]:
        with self._lock:
            return {
                path: meta
                for path, meta in self._meta.items()
                if meta != DocumentMeta() and (paths is None or path in paths)
            }

    def paths_with_tags(self, tags: Sequence[str]) -> set[str]:
        wanted = {normalize_tag(t) for t in tags}
        with self._lock:
            return {path for path, meta in self._meta.items() if wanted and wanted <= set(tag_prefixes(meta.tags))}

    # retrieval ----------------------------------------------------------------
    def _paths_by_doc(self) -> dict[int, str]:
        return {state.id: path for path, (state, _) in self._docs.items()}

    def _in_scope(self, scope: PathScope | None) -> Callable[[_Chunk], bool]:
        if scope is None or scope.is_everything:
            return lambda chunk: True
        matches, paths = scope.matcher(), self._paths_by_doc()
        return lambda chunk: matches(paths[chunk.doc_id])

    def _hit(self, chunk: _Chunk, distance: float | None = None) -> ChunkHit:
        path = self._paths_by_doc()[chunk.doc_id]
        rec = chunk.record
        return ChunkHit(
            chunk.id, path, rec.anchor, rec.heading_path, rec.text, self._docs[path][1].source_hash, distance
        )

    def lexical(self, query: LexicalQuery, limit: int, scope: PathScope | None) -> list[ChunkHit]:
        with self._lock:
            in_scope = self._in_scope(scope)
            candidates = [c for c in self._chunks.values() if in_scope(c)]
            scorer = _Bm25(list(self._chunks.values()))
            scored = []
            for chunk in candidates:
                units = _match(query, chunk)
                if units is not None and units:
                    scored.append((-sum(w * scorer.score(u, chunk) for u, w in units), chunk.id, chunk))
            scored.sort(key=lambda t: (t[0], t[1]))
            scored = rerank(
                query,
                scored,
                lambda t: t[0],
                lambda t: f"{t[2].record.heading_path or ''}\n{t[2].record.text}",
                lambda tokens: (
                    {t: n for t in tokens if (n := sum(t in c.fields[0] or t in c.fields[1] for c in scorer.chunks))},
                    scorer.n,
                ),
            )
            return [self._hit(chunk) for _, _, chunk in scored[:limit]]

    def titled(self, words: Sequence[str], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        want = index_tokens(" ".join(words))
        with self._lock:
            in_scope = self._in_scope(scope)
            first: dict[int, _Chunk] = {}
            for chunk in sorted(self._chunks.values(), key=lambda c: c.id):
                heading = chunk.record.heading_path
                if in_scope(chunk) and heading and index_tokens(heading)[: len(want)] == want:
                    first.setdefault(chunk.doc_id, chunk)
            return [self._hit(chunk) for chunk in sorted(first.values(), key=lambda c: c.id)[:limit]]

    def refresh_term_stats(self) -> None:
        """Nothing is precomputed: BM25 statistics are counted per query."""

    def forget_term_stats(self) -> None:
        """Nothing is kept."""

    def tidy_lexical(self) -> bool:
        """Nothing to tidy: the postings live in dicts."""
        return False

    def semantic(self, vector: npt.NDArray[np.float32], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        with self._lock:
            if not self.has_vectors():
                return []
            in_scope = self._in_scope(scope)
            probe = np.asarray(vector, dtype=np.float32)
            probe = probe / max(float(np.linalg.norm(probe)), 1e-12)
            ranked = []
            for chunk in self._chunks.values():
                if chunk.vector is not None and in_scope(chunk):
                    v = chunk.vector / max(float(np.linalg.norm(chunk.vector)), 1e-12)
                    ranked.append((1.0 - float(np.dot(v, probe)), chunk.id, chunk))
            ranked.sort(key=lambda t: (t[0], t[1]))
            return [self._hit(chunk, distance) for distance, _, chunk in ranked[:limit]]

    # the chunk and vector API ---------------------------------------------------------
    def _md(self, chunk: _Chunk, with_vector: bool) -> StoredChunk:
        path = self._paths_by_doc()[chunk.doc_id]
        doc = self._docs[path][1]
        rec = chunk.record
        vector = None if chunk.vector is None else chunk.vector / max(float(np.linalg.norm(chunk.vector)), 1e-12)
        return StoredChunk(
            markdown_chunk_id(path, rec.ordinal),
            MARKDOWN,
            path,
            rec.ordinal,
            rec.text,
            markdown_metadata(rec.heading_path, rec.anchor, doc.properties or {}, doc.source_hash),
            None if vector is None else len(vector),
            False,
            vector if with_vector else None,
        )

    @staticmethod
    def _ext(chunk: ExternalChunk, with_vector: bool) -> StoredChunk:
        return StoredChunk(
            chunk.id,
            chunk.collection,
            chunk.source_path,
            chunk.chunk_index,
            chunk.content,
            dict(chunk.metadata),
            len(chunk.vector),
            chunk.stale,
            chunk.vector.copy() if with_vector else None,
        )

    def markdown_chunks(
        self, path: str | None, after: tuple[str, int] | None, limit: int, with_vector: bool = False
    ) -> list[StoredChunk]:
        with self._lock:
            paths = self._paths_by_doc()
            rows = sorted(self._chunks.values(), key=lambda c: (paths[c.doc_id], c.record.ordinal))
            out = []
            for chunk in rows:
                key = (paths[chunk.doc_id], chunk.record.ordinal)
                if (path is None or key[0] == path) and (after is None or key > after):
                    out.append(self._md(chunk, with_vector))
                    if len(out) == limit:
                        break
            return out

    def put_external(self, chunk: ExternalChunk, keep_collection: bool = False) -> bool:
        with self._lock:  # the check and the write under one lock, as the engines' one write
            current = self._external.get(chunk.id)
            if current is not None:
                if current.collection != chunk.collection and not keep_collection:
                    raise OtherCollection(current.collection)
                chunk = replace(chunk, collection=current.collection)
            self._external[chunk.id] = chunk
            return current is None

    def update_external(
        self,
        chunk_id: str,
        content: str | None,
        metadata: Mapping[str, Any] | None,
        vector: npt.NDArray[np.float32] | None,
    ) -> StoredChunk | None:
        with self._lock:  # the read and the write under one lock, as the engines' one statement
            current = self._external.get(chunk_id)
            if current is None:
                return None
            stale = False if vector is not None else current.stale or (content not in (None, current.content))
            changed = replace(
                current,
                content=current.content if content is None else content,
                metadata=dict(current.metadata if metadata is None else metadata),
                vector=current.vector if vector is None else vector,
                stale=stale,
            )
            self._external[chunk_id] = changed
            return self._ext(changed, False)

    def external_chunk(self, chunk_id: str, with_vector: bool = False) -> StoredChunk | None:
        chunk = self._external.get(chunk_id)
        return None if chunk is None else self._ext(chunk, with_vector)

    def external_chunks(
        self, collection: str | None, source_path: str | None, after: tuple[str, str] | None, limit: int
    ) -> list[StoredChunk]:
        with self._lock:
            rows = sorted(self._external.values(), key=lambda c: (c.collection, c.id))
            return [
                self._ext(c, False)
                for c in rows
                if (collection is None or c.collection == collection)
                and (source_path is None or c.source_path == source_path)
                and (after is None or (c.collection, c.id) > after)
            ][:limit]

    def delete_external(self, chunk_id: str) -> bool:
        with self._lock:
            return self._external.pop(chunk_id, None) is not None

    def vector_dimensions(self) -> int | None:
        if self._dims:
            return self._dims
        return next((len(c.vector) for c in self._external.values()), None)

    def nearest_chunks(
        self, vector: npt.NDArray[np.float32], limit: int, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        with self._lock:
            probe = np.asarray(vector, dtype=np.float32)
            probe = probe / max(float(np.linalg.norm(probe)), 1e-12)
            scored: list[tuple[StoredChunk, float]] = []
            paths = self._paths_by_doc()
            for chunk in self._chunks.values():
                path = paths[chunk.doc_id]
                fields = self._docs[path][1].properties or {}
                if (
                    chunk.vector is not None
                    and len(chunk.vector) == len(probe)
                    and spec.matches(MARKDOWN, path, fields)
                ):
                    md = self._md(chunk, True)
                    assert md.vector is not None
                    scored.append((replace(md, vector=None), float(np.dot(md.vector, probe))))
            for ext in self._external.values():
                wanted = spec.matches(ext.collection, ext.source_path, ext.metadata)
                if wanted and not ext.stale and len(ext.vector) == len(probe):
                    scored.append((self._ext(ext, False), float(np.dot(ext.vector, probe))))
            scored.sort(key=lambda pair: (-pair[1], pair[0].collection, pair[0].id))
            return scored[:limit]

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        with self._lock:
            yield

    def write_batch(self, hold: object = None, parsing: bool = False) -> AbstractContextManager[WriteBatch]:
        return nullcontext(NoBatch())  # every write is its own: nothing to batch in memory

    @contextmanager
    def exclusive_pass(self, name: str, wait: bool) -> Iterator[bool]:
        """Always granted: SQLite's own locking keeps concurrent writers of one file consistent."""
        yield True

    def close(self) -> None:
        """Nothing to release."""


# query evaluation -------------------------------------------------------------
def _leaf_alternatives(leaf: Term | Phrase | Prefix | CjkRun) -> list[Unit]:
    """The units a leaf stands for; a CJK run's bigrams (its prefix when one character)."""
    if isinstance(leaf, Term):
        words = tuple(t.lower() for t in _WORD.findall(leaf.text))
        if len(words) == 1 and is_stemmable(words[0]):
            return [words, (STEM_MARK + stem(words[0]),)]  # exactly, or among the stems (either one)
        stems, _ = hyphen_stems(leaf.text)  # a hyphenated word: or its parts' stems, adjacent
        return [words, tuple(STEM_MARK + s for s in stems)] if stems else [words]
    if isinstance(leaf, Phrase):
        return [tuple(t.lower() for w in leaf.words for t in _WORD.findall(w))]
    if isinstance(leaf, Prefix):
        return [("*", leaf.text.lower())]
    return [("*", leaf.text)] if len(leaf.text) == 1 else [(b,) for b in bigrams(leaf.text)]


def _occurs(unit: Unit, tokens: list[str]) -> int:
    if not unit:
        return 0
    if unit[0] == "*":
        return sum(t.startswith(unit[1]) for t in tokens)
    n = len(unit)
    if n == 1:
        return tokens.count(unit[0])
    return sum(tuple(tokens[i : i + n]) == unit for i in range(len(tokens) - n + 1))


def _present(unit: Unit, chunk: _Chunk) -> bool:
    return any(_occurs(unit, tokens) for tokens in chunk.fields)


def _match(node: LexicalQuery, chunk: _Chunk, every: bool = True) -> list[tuple[Unit, float]] | None:
    """The (unit, weight) pairs of ``node`` that ``chunk`` holds, or ``None`` when it does not match.
    ``every``: a CJK run inside AllOf needs every bigram, inside AnyOf one."""
    if isinstance(node, AllOf | AnyOf):
        found: list[tuple[Unit, float]] = []
        matched_any = False
        for child in node.children:
            units = _match(child, chunk, isinstance(node, AllOf))
            if units is None:
                if isinstance(node, AllOf):
                    return None
                continue
            matched_any = True
            found.extend(units)
        return found if (matched_any or isinstance(node, AllOf)) and node.children else None
    units = [u for u in _leaf_alternatives(node) if u]
    held = [u for u in units if _present(u, chunk)]
    every = every and isinstance(node, CjkRun)  # a word's stem is an alternative, a run's bigrams are parts
    if not units or not held or (every and len(held) < len(units)):
        return None
    return [(u, node.weight) for u in held]


class _Bm25:
    def __init__(self, chunks: list[_Chunk]) -> None:
        self.chunks = chunks
        self.n = len(chunks)
        self.avg = [max(1.0, sum(len(c.fields[f]) for c in chunks) / max(1, self.n)) for f in (0, 1, 2)]
        self._df: dict[Unit, int] = {}

    def score(self, unit: Unit, chunk: _Chunk) -> float:
        if unit not in self._df:
            self._df[unit] = sum(_present(unit, c) for c in self.chunks)
        df = self._df[unit]
        idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
        total = 0.0
        for f, weight in enumerate(FIELD_WEIGHTS):
            tf = _occurs(unit, chunk.fields[f])
            if tf:
                norm = K1 * (1 - B + B * len(chunk.fields[f]) / self.avg[f])
                total += weight * idf * tf * (K1 + 1) / (tf + norm)
        return total
