"""Move an index between storage engines without re-chunking or re-embedding.

    local-vector-search-mcp [options] index copy --to STORE [--from STORE] [--force]

``STORE`` is ``sqlite:PATH``, ``postgresql://user@host:port/database[#schema]`` or
``postgresql:SCHEMA`` (the URL then comes from ``storage.url`` or the environment
variable ``LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL``, so a password need not be typed).
``--from`` defaults to the configured index. Everything the storage port holds is
copied through the port, so any pair of engines works: the manifest (compatibility
keys), documents with their front matter properties, chunks, vectors exactly as
stored, links and document metadata, and external chunks (the chunk tool set's).
The Notion page mapping is not in the index (decision 130) and needs no copy.

The copy is then verified: counts per table, every document and external chunk
compared field by field (vectors bit for bit), and the same queries run on both
(lexical: every match of words drawn from the index; semantic: exact nearest
neighbours of stored vectors). A JSON report goes to stdout; any mismatch exits 1.
No embedding model is loaded: the vectors travel as they are.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import ConfigError, Settings
from ..errors import KbError
from .chunks import ChunkFilterSpec, ExternalChunk, StoredChunk
from .cjk import index_tokens
from .port import ChunkRecord, DocumentDump, IndexStore
from .quantized import INT8_SCALE_KEY, INT8_SCALE_PER_VECTOR
from .query import CjkRun, LexicalQuery, Term
from .stores import open_store, open_store_spec

__all__ = ["CopyError", "CopyResult", "copy_index", "run", "verify_copy"]

PAGE = 200  # documents per transaction
EXTERNAL_PAGE = 500
QUERIES = 20  # lexical and semantic probes each
SEMANTIC_TOP_K = 10
SCORE_TOLERANCE = 1e-4  # cosine; engines may round the last bits differently
MAX_LEXICAL_ROWS = 100_000
MAX_LISTED = 10  # differing documents named in the report
_WORD = re.compile(r"^[^\W\d_]{4,}$", re.UNICODE)


class CopyError(ConfigError):
    """The copy cannot start (same store, non-empty target without --force, a reindex running)."""


@dataclass
class CopyResult:
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    external_chunks: int = 0
    # probes gathered while copying: (lexical query, stored vector or None)
    probes: list[tuple[LexicalQuery | None, npt.NDArray[np.float32] | None]] = field(default_factory=list)


# ----------------------------------------------------------------------------- copy
def _is_empty(store: IndexStore) -> bool:
    if not store.exists():
        return True
    return not (store.read_manifest() or store.has_chunks() or store.counts().documents or _externals(store, 1))


def _externals(store: IndexStore, limit: int | None = None) -> list[StoredChunk]:
    out: list[StoredChunk] = []
    after: tuple[str, str] | None = None
    while limit is None or len(out) < limit:
        page = store.external_chunks(None, None, after, EXTERNAL_PAGE if limit is None else limit - len(out))
        if not page:
            break
        out.extend(page)
        after = (page[-1].collection, page[-1].id)
    return out


def _dumps(store: IndexStore) -> Iterator[list[DocumentDump]]:
    after: str | None = None
    while True:
        page = store.export_documents(after, PAGE)
        if not page:
            return
        yield page
        after = page[-1].document.path


def _probe(record: ChunkRecord) -> LexicalQuery | None:
    """A query that must find ``record``: its rarest-looking word (the longest), or a CJK bigram."""
    words = [t for t in index_tokens(f"{record.heading_path or ''} {record.text}") if _WORD.match(t)]
    if not words:
        return None
    word = max(words, key=lambda w: (len(w), w))
    return CjkRun(word) if all(ord(ch) >= 0x2E80 for ch in word) else Term(word)


def copy_index(source: IndexStore, target: IndexStore, force: bool = False) -> CopyResult:
    """Copy every row of ``source`` into ``target`` (emptied first with ``force``)."""
    if source.location == target.location:
        raise CopyError(f"--from and --to are the same index ({source.location}).")
    manifest = source.read_manifest()
    if not source.exists() or (not manifest and not source.has_chunks() and not _externals(source, 1)):
        raise CopyError(f"There is no index to copy at {source.location}; build it first with --reindex.")
    dims: int | None = None
    if source.has_vectors():
        dims = int(manifest["embedding_dimensions"]) if "embedding_dimensions" in manifest else None
        dims = dims or source.vector_dimensions()
    storage = manifest.get("vector_storage", "float32")
    if storage == "int8" and manifest.get(INT8_SCALE_KEY) != INT8_SCALE_PER_VECTOR:
        # codes of the fixed scale 1/127 (before decision 425): the target would re-quantize them
        # with one scale per vector, so they would not travel bit for bit, and the index needs a
        # rebuild wherever it lives
        raise CopyError(
            f"The index at {source.location} holds int8 vectors of the fixed scale 1/127, which this"
            " version replaced (decision 425); rebuild it first (--reindex --force), then copy it."
        )
    with ExitStack() as stack:
        for store in (source, target):  # no reindex may rewrite either side meanwhile
            if not stack.enter_context(store.exclusive_pass("reindex", wait=False)):
                raise CopyError(f"A reindex is running on {store.location}; retry when it has finished.")
        if not _is_empty(target):
            if not force:
                raise CopyError(
                    f"The target {target.location} already holds an index; pass --force to replace it"
                    " (its documents, chunks, vectors and external chunks are deleted first)."
                )
            target.reset(dims, storage)
            for chunk in _externals(target):
                target.delete_external(chunk.id)
        else:
            target.ensure_schema(dims, storage)
        total = max(1, source.counts().chunks)
        step = max(1, total // QUERIES)
        result = CopyResult()
        seen = 0
        for page in _dumps(source):
            result.chunks += target.import_documents(page)
            result.documents += len(page)
            for dump in page:
                for record in dump.chunks:
                    result.vectors += record.vector is not None
                    if seen % step == 0 and len(result.probes) < QUERIES:
                        result.probes.append((_probe(record), record.vector))
                    seen += 1
        for chunk in _externals(source):
            full = source.external_chunk(chunk.id, with_vector=True)
            if full is None or full.vector is None:  # deleted meanwhile
                continue
            target.put_external(
                ExternalChunk(
                    full.id,
                    full.collection,
                    full.source_path,
                    full.chunk_index,
                    full.content,
                    full.metadata,
                    full.vector,
                    full.stale,
                )
            )
            result.external_chunks += 1
        # the manifest last: an interrupted copy is an incompatible index, never a silently partial one
        target.write_manifest(manifest)
        target.refresh_term_stats()
        while target.tidy_lexical():
            pass
    return result


# ----------------------------------------------------------------------------- verification
def _record_key(dump: DocumentDump) -> tuple[Any, ...]:
    doc = dump.document
    return (
        doc.path,
        doc.source_hash,
        doc.size,
        doc.mtime_ns,
        doc.indexed_at_utc,
        doc.properties or {},
        tuple(replace(c, vector=None) for c in dump.chunks),
        dump.links,
        dump.meta,
    )


def _same_vector(a: npt.NDArray[np.float32] | None, b: npt.NDArray[np.float32] | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))  # bit for bit


def _same_dump(a: DocumentDump, b: DocumentDump) -> bool:
    return _record_key(a) == _record_key(b) and all(
        _same_vector(x.vector, y.vector) for x, y in zip(a.chunks, b.chunks, strict=True)
    )


def _same_ranking(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """Equal id lists, or lists that differ only in the order of (near-)ties."""
    if [i for i, _ in a] == [i for i, _ in b]:
        return True
    if len(a) != len(b) or any(abs(x[1] - y[1]) > SCORE_TOLERANCE for x, y in zip(a, b, strict=True)):
        return False
    floor = a[-1][1] + SCORE_TOLERANCE  # below it an id may fall either side of the cut
    return {i for i, s in a if s > floor} == {i for i, s in b if s > floor}


def _table_counts(store: IndexStore) -> dict[str, int]:
    counts = store.counts()
    # a chunk the provider refused (decision 510) has no vector either: the copy holds it pending,
    # and its next pass tries it once more (decision 514)
    without = counts.pending_vectors + store.refused_vectors(0)[0]
    return {
        "documents": counts.documents,
        "chunks": counts.chunks,
        "vectors": counts.chunks - without if store.has_vectors() else 0,
        "pendingVectors": without,
        "links": len(store.links()),
        "documentMeta": len(store.document_meta()),
        "externalChunks": len(_externals(store)),
    }


def verify_copy(source: IndexStore, target: IndexStore, result: CopyResult) -> dict[str, Any]:
    """Counts, contents and queries compared; ``mismatches`` lists what differs (empty: identical)."""
    mismatches: list[str] = []
    counts = {"from": _table_counts(source), "to": _table_counts(target)}
    for key, value in counts["from"].items():
        if counts["to"][key] != value:
            mismatches.append(f"{key}: {value} in the source, {counts['to'][key]} in the copy")
    if source.read_manifest() != target.read_manifest():
        mismatches.append("the manifests differ")

    differing: list[str] = []
    compared = 0
    theirs = (d for page in _dumps(target) for d in page)
    for mine in (d for page in _dumps(source) for d in page):
        other = next(theirs, None)
        compared += 1
        if other is None or other.document.path != mine.document.path or not _same_dump(mine, other):
            differing.append(mine.document.path)
            if other is not None and other.document.path != mine.document.path:
                break  # out of step: counting further would only repeat the same difference
    if next(theirs, None) is not None and not differing:
        differing.append("(documents only in the copy)")
    if differing:
        shown = ", ".join(differing[:MAX_LISTED]) + (" ..." if len(differing) > MAX_LISTED else "")
        mismatches.append(f"{len(differing)} document(s) differ: {shown}")

    ext_differing = 0
    for chunk in _externals(source):
        a = source.external_chunk(chunk.id, with_vector=True)
        b = target.external_chunk(chunk.id, with_vector=True)
        if (
            a is None
            or b is None
            or replace(a, vector=None) != replace(b, vector=None)
            or not _same_vector(a.vector, b.vector)
        ):
            ext_differing += 1
    if ext_differing:
        mismatches.append(f"{ext_differing} external chunk(s) differ")

    limit = min(MAX_LEXICAL_ROWS, counts["from"]["chunks"] + 1)
    lexical = 0
    for query, _ in result.probes:
        if query is None:
            continue
        lexical += 1
        try:
            found = [{(h.path, h.anchor) for h in store.lexical(query, limit, None)} for store in (source, target)]
        except Exception as exc:  # a query one engine refuses is a difference to report, not a traceback (984)
            mismatches.append(f"lexical query {query!r} failed: {type(exc).__name__}: {exc}")
            continue
        if found[0] != found[1] or not found[0]:
            mismatches.append(
                f"lexical query {query!r}: {len(found[0])} matches in the source, {len(found[1])} in the copy"
            )
    semantic = 0
    for _, vector in result.probes:
        if vector is None:
            continue
        semantic += 1
        ranked = [
            [(c.id, s) for c, s in store.nearest_chunks(vector, SEMANTIC_TOP_K, ChunkFilterSpec())]
            for store in (source, target)
        ]
        if not _same_ranking(ranked[0], ranked[1]):
            mismatches.append(f"semantic query #{semantic}: {[i for i, _ in ranked[0]]} vs {[i for i, _ in ranked[1]]}")
    return {
        "counts": counts,
        "documentsCompared": compared,
        "lexicalQueries": lexical,
        "semanticQueries": semantic,
        "mismatches": mismatches,
    }


# ----------------------------------------------------------------------------- command line
def build_parser(
    prog: str, parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    parser = parser_class(prog=f"{prog} index", description="Maintenance of the index itself.")
    sub = parser.add_subparsers(dest="action", required=True, metavar="<action>")
    copy = sub.add_parser(
        "copy",
        help="copy the index to another file or storage engine (vectors included, nothing re-embedded), then verify it",
        description="Copy the index to another SQLite file or to PostgreSQL, or back, then verify the copy. "
        "STORE: sqlite:PATH (relative to the project root) | postgresql://user@host:port/database[#schema] | "
        "postgresql:SCHEMA (URL from storage.url or LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL). Then point "
        "storage.path (or storage.backend) at the copy.",
    )
    copy.add_argument("--to", required=True, metavar="STORE", help="where the copy goes")
    copy.add_argument("--from", dest="source", metavar="STORE", help="what to copy (default: the configured index)")
    copy.add_argument("--force", action="store_true", help="replace an index already at the target")
    return parser


def run(
    settings: Settings, argv: list[str], parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> int:
    ns = build_parser("local-vector-search-mcp", parser_class).parse_args(argv)
    source = open_store_spec(ns.source, settings) if ns.source else open_store(settings)
    target = open_store_spec(ns.to, settings)
    start = time.perf_counter()
    try:
        result = copy_index(source, target, force=ns.force)
        copied = time.perf_counter()
        verified = verify_copy(source, target, result)
    except KbError as exc:  # a store that cannot be opened, a damaged index
        raise ConfigError(exc.message) from None
    finally:
        source.close()
        target.close()
    report = {
        "from": source.location,
        "to": target.location,
        "copied": {
            "documents": result.documents,
            "chunks": result.chunks,
            "vectors": result.vectors,
            "externalChunks": result.external_chunks,
        },
        "seconds": {"copy": round(copied - start, 2), "verify": round(time.perf_counter() - copied, 2)},
        "verified": verified,
        "ok": not verified["mismatches"],
    }
    print(json.dumps(report, ensure_ascii=False, indent=2))
    if verified["mismatches"]:
        print(
            f"local-vector-search-mcp: the copy at {target.location} differs from the source"
            f" ({len(verified['mismatches'])} problem(s), listed in the report).",
            file=sys.stderr,
        )
        return 1
    return 0
