"""A chunk's stored forms worked out in the parse worker (index/derive.py, decision 230):
the rows are the same as when the adapter derives them itself."""

from __future__ import annotations

import pickle
import pickletools
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import numpy as np
from isal import isal_zlib
from test_parallel import SETTINGS, _tree

from local_vector_search_mcp.index import derive
from local_vector_search_mcp.index.derive import ZLIB_LEVEL, chunk_stems, pack_body, unpack_body
from local_vector_search_mcp.index.port import DocumentMeta, DocumentRecord
from local_vector_search_mcp.index.prepare import Prepared, Task, Unchanged, Unreadable, Vanished, prepare
from local_vector_search_mcp.index.sqlite import SqliteStore


def _store(db: Path, prepared: list[Prepared], strip: bool) -> None:
    store = SqliteStore(db)
    store.ensure_schema(None, "float32")
    for p in prepared:
        chunks = [replace(c, stems=None, packed_body=None) for c in p.chunks] if strip else p.chunks
        record = DocumentRecord(p.path, p.source_hash, p.size, p.mtime_ns, "2026-01-01T00:00:00Z", p.properties)
        store.replace_document(record, chunks, p.links, p.meta)
    store.close()


def _rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    con = apsw.Connection(str(db))
    try:
        con.execute("CREATE VIRTUAL TABLE temp.stems_vocab USING fts5vocab(main, chunks_stems, 'instance')")
        con.execute("CREATE VIRTUAL TABLE temp.body_vocab USING fts5vocab(main, chunks_fts, 'instance')")
        return {
            "chunks": list(con.execute("SELECT * FROM chunks ORDER BY id")),
            "stems": list(con.execute("SELECT * FROM stems_vocab ORDER BY term, doc, offset")),
            "body": list(con.execute("SELECT * FROM body_vocab ORDER BY term, doc, col, offset")),
        }
    finally:
        con.close()


def test_prepared_forms_equal_the_adapters_own(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    _tree(root, copies=2)
    prepared = []
    for path in sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")):
        outcome = prepare(root, Task(path), SETTINGS)
        assert isinstance(outcome, Prepared)
        prepared.append(outcome)
    chunks = [c for p in prepared for c in p.chunks]
    assert chunks and all(c.stems is not None and c.packed_body is not None for c in chunks)
    for c in chunks:
        assert c.packed_body is not None and unpack_body(c.packed_body) == c.text
        assert c.stems == chunk_stems(c.text, c.heading_path)
        assert c.packed_body == pack_body(c.text)
    assert any(c.stems for c in chunks)  # the tree holds English words
    _store(tmp_path / "given.db", prepared, strip=False)
    _store(tmp_path / "derived.db", prepared, strip=True)
    given, derived = _rows(tmp_path / "given.db"), _rows(tmp_path / "derived.db")
    assert given["chunks"] and given["stems"] and given["body"]
    assert given == derived


def test_a_body_packed_at_any_zlib_level_reads_back() -> None:
    """Bodies were zlib level 6 before decision 272, then level 1, now ISA-L's deflate
    (decision 276): an index written by any of them must still read, so no rebuild is needed."""
    text = "Ünïcode body with code `x = 1`\n" * 40
    for level in range(10):
        assert unpack_body(zlib.compress(text.encode("utf-8"), level)) == text
    for sample in ("", "a", text, "机器学习" * 500, "".join(map(chr, range(32, 2000)))):
        assert unpack_body(pack_body(sample)) == sample


def test_bodies_are_packed_by_isal_when_it_is_installed() -> None:
    """isal is a dependency (pyproject.toml); without it the bodies are zlib level 1."""
    assert derive.DEFLATE_ENGINE == "isal"
    text = "a body " * 100
    assert pack_body(text) == isal_zlib.compress(text.encode("utf-8"), derive.ISAL_LEVEL)
    assert zlib.compress(text.encode("utf-8"), ZLIB_LEVEL) != pack_body(text)  # a different deflate


def test_outcomes_cross_the_worker_pipe_unchanged(tmp_path: Path) -> None:
    """Records pickle as constructor calls (decision 274): every outcome kind and every
    record field comes back equal, and no object is rebuilt from a state (BUILD opcode)."""
    root = tmp_path / "kb"
    _tree(root, copies=1)
    every = [prepare(root, Task(p.relative_to(root).as_posix()), SETTINGS) for p in sorted(root.rglob("*.md"))]
    prepared = next(p for p in every if isinstance(p, Prepared) and p.chunks and p.links)
    meta = DocumentMeta(("t",), ("a",), ("h",), ("b",))
    outcomes: list[Any] = [
        prepared,
        replace(prepared, meta=meta, properties={"title": "T", "n": [1, 2]}),
        Unchanged("a.md", 3, 4),
        Unreadable("b.md", "why"),
        Vanished("c.md"),
        Task("d.md", "hash"),
        Task("e.md"),
    ]
    for outcome in outcomes:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        back = pickle.loads(data)
        assert type(back) is type(outcome) and back == outcome
        assert "BUILD" not in {op.name for op, _, _ in pickletools.genops(data)}
    chunk = replace(prepared.chunks[0], vector=np.arange(4, dtype=np.float32))
    back_chunk = pickle.loads(pickle.dumps(chunk))
    assert np.array_equal(back_chunk.vector, chunk.vector)
    assert replace(back_chunk, vector=None) == replace(chunk, vector=None)
