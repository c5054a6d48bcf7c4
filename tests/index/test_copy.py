"""``index copy``: an index moves between engines with every row and every vector bit for bit,
without a single embedding call, and the copy is verified (issue 14 item 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kb_fakes import HashEmbedder, make_workspace
from pg_server import PgServer

from local_vector_search_mcp import cli
from local_vector_search_mcp.index.chunks import ExternalChunk
from local_vector_search_mcp.index.copy import copy_index, verify_copy
from local_vector_search_mcp.index.port import DocumentDump, IndexStore
from local_vector_search_mcp.index.postgres import PostgresStore
from local_vector_search_mcp.index.sqlite import SqliteStore

DIMS = 48


def _kb(root: Path) -> None:
    (root / "notes").mkdir(parents=True)
    (root / "guide.md").write_text(
        "---\ntags: [howto, setup/python]\nstatus: draft\n---\n# Guide\n\nInstall the tool with pip.\n\n"
        "See [the notes](notes/zh.md) and [[ja]].\n\n## Errors\n\nUse Rc::strong_count to inspect references.\n",
        encoding="utf-8",
    )
    (root / "notes" / "zh.md").write_text(
        "# 状态管理\n\n在组件之间共享状态可以使用响应式 API。\n\n## 侦听器\n\n侦听器在状态变化时执行副作用。\n",
        encoding="utf-8",
    )
    (root / "notes" / "ja.md").write_text("# 天気\n\n東京都の天気は晴れです。雨は降りません。\n", encoding="utf-8")
    for i in range(12):
        (root / "notes" / f"n{i:02}.md").write_text(
            f"# Note {i}\n\nquetzal marmot number{i} " + " ".join(f"word{i * j}" for j in range(30)) + "\n",
            encoding="utf-8",
        )


def _everything(store: IndexStore) -> tuple[list[DocumentDump], list[Any], dict[str, str]]:
    dumps: list[DocumentDump] = []
    after = None
    while page := store.export_documents(after, 5):
        dumps.extend(page)
        after = page[-1].document.path
    ext = [store.external_chunk(c.id, with_vector=True) for c in store.external_chunks(None, None, None, 1000)]
    return dumps, ext, store.read_manifest()


def _assert_identical(a: IndexStore, b: IndexStore) -> None:
    (da, ea, ma), (db, eb, mb) = _everything(a), _everything(b)
    assert ma == mb and len(da) == len(db) and len(ea) == len(eb)
    vectors = 0
    for x, y in zip(da, db, strict=True):
        assert x.document.path == y.document.path and x.links == y.links and x.meta == y.meta
        assert (x.document.properties or {}) == (y.document.properties or {})
        for cx, cy in zip(x.chunks, y.chunks, strict=True):
            assert (cx.ordinal, cx.anchor, cx.text, cx.heading_path, cx.embedding_text_hash) == (
                cy.ordinal,
                cy.anchor,
                cy.text,
                cy.heading_path,
                cy.embedding_text_hash,
            )
            assert cx.vector is not None and cy.vector is not None
            assert cx.vector.tobytes() == cy.vector.tobytes()  # bit for bit
            vectors += 1
    for x, y in zip(ea, eb, strict=True):
        assert x is not None and y is not None and x.vector is not None and y.vector is not None
        assert (x.id, x.collection, x.metadata, x.stale) == (y.id, y.collection, y.metadata, y.stale)
        assert x.vector.tobytes() == y.vector.tobytes()
    assert vectors >= 15


@pytest.fixture
def source(tmp_path: Path) -> SqliteStore:
    root = tmp_path / "kb"
    _kb(root)
    ws = make_workspace(root, "local", embedder=HashEmbedder(DIMS))
    ws.indexing.reindex("all", False)
    ws.indexing.wait_vectors(60)
    store = ws.store
    assert store.pending_vector_count() == 0 and store.counts().documents == 15
    rng = np.random.default_rng(7)
    for i in range(3):  # external chunks (the chunk tool set's), one of them stale
        v = rng.standard_normal(DIMS).astype(np.float32)
        store.put_external(
            ExternalChunk(f"x{i}", "crm", f"crm/{i}.txt", i, f"external {i}", {"n": i}, v / np.linalg.norm(v), i == 2)
        )
    ws.close()
    return SqliteStore(root / ".local-vector-search-mcp" / "index.db")


def test_sqlite_to_postgresql_and_back_keeps_every_vector_without_embedding(
    source: SqliteStore, tmp_path: Path, pg_server: PgServer, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    def no_embedding(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("index copy must never embed")

    monkeypatch.setattr("local_vector_search_mcp.embeddings.slot.make_embedder", no_embedding)
    monkeypatch.setattr(HashEmbedder, "embed_passages", no_embedding)
    monkeypatch.setattr(HashEmbedder, "embed_query", no_embedding)
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL", pg_server.url)
    schema = pg_server.fresh_schema()
    root = source.path.parents[1]
    base = ["--project-root", str(root), "--embedding-provider", "local"]

    assert cli.main([*base, "index", "copy", "--to", f"postgresql:{schema}"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["verified"]["mismatches"] == []
    assert report["copied"] == {
        "documents": 15,
        "chunks": report["verified"]["counts"]["to"]["chunks"],
        "vectors": report["verified"]["counts"]["to"]["vectors"],
        "externalChunks": 3,
    }
    assert report["verified"]["lexicalQueries"] > 5 and report["verified"]["semanticQueries"] > 5
    assert "password" not in json.dumps(report) and report["to"].endswith(f"#{schema}")
    middle = PostgresStore(pg_server.url, schema)
    _assert_identical(source, middle)

    back = tmp_path / "back" / "index.db"
    assert cli.main([*base, "index", "copy", "--from", f"postgresql:{schema}", "--to", f"sqlite:{back}"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"]
    returned = SqliteStore(back)
    _assert_identical(source, returned)
    # the copy serves searches like the original
    assert [h.path for h in returned.lexical(_term("quetzal"), 50, None)] != []
    middle.close()
    returned.close()
    source.close()


def _term(text: str) -> Any:
    from local_vector_search_mcp.index.query import Term

    return Term(text)


def test_a_non_empty_target_needs_force_and_the_same_store_is_refused(
    source: SqliteStore, tmp_path: Path, capsys: Any
) -> None:
    root = source.path.parents[1]
    target = tmp_path / "copy.db"
    base = ["--project-root", str(root), "--embedding-provider", "none"]
    assert cli.main([*base, "index", "copy", "--to", f"sqlite:{target}"]) == 0
    capsys.readouterr()
    assert cli.main([*base, "index", "copy", "--to", f"sqlite:{target}"]) == 1
    assert "--force" in capsys.readouterr().err
    assert cli.main([*base, "index", "copy", "--to", f"sqlite:{source.path}", "--force"]) == 1
    assert "same index" in capsys.readouterr().err
    # --force replaces everything, external chunks included
    extra = SqliteStore(target)
    extra.put_external(ExternalChunk("stray", "crm", "s", 0, "stray", {}, np.ones(DIMS, np.float32) / np.sqrt(DIMS)))
    extra.close()
    assert cli.main([*base, "index", "copy", "--to", f"sqlite:{target}", "--force"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"]
    copied = SqliteStore(target)
    assert copied.external_chunk("stray") is None
    _assert_identical(source, copied)
    copied.close()
    assert cli.main([*base, "index", "copy", "--to", "mysql://x"]) == 1
    assert "sqlite:PATH" in capsys.readouterr().err


def test_verification_reports_a_copy_that_differs(source: SqliteStore, tmp_path: Path) -> None:
    target = SqliteStore(tmp_path / "copy.db")
    result = copy_index(source, target)
    assert verify_copy(source, target, result)["mismatches"] == []
    path = target.export_documents(None, 1)[0].document.path
    target.delete_document(path)
    problems = verify_copy(source, target, result)["mismatches"]
    assert any(p.startswith("documents: 15 in the source, 14") for p in problems)
    assert any("document(s) differ" in p and path in p for p in problems)
    target.close()
    source.close()


@pytest.mark.parametrize("storage", ["int8", "binary"])
def test_quantized_vectors_come_back_as_stored(tmp_path: Path, storage: str) -> None:
    root = tmp_path / "kb"
    _kb(root)
    ws = make_workspace(root, "local", embedder=HashEmbedder(DIMS), embedding__vector_storage=storage)
    ws.indexing.reindex("all", False)
    ws.indexing.wait_vectors(60)
    ws.close()
    original = SqliteStore(root / ".local-vector-search-mcp" / "index.db")
    first, second = SqliteStore(tmp_path / "a.db"), SqliteStore(tmp_path / "b.db")
    assert verify_copy(original, first, copy_index(original, first))["mismatches"] == []
    assert verify_copy(first, second, copy_index(first, second))["mismatches"] == []
    raw = "chunk_vectors_exact" if storage == "binary" else "chunk_vectors"
    blobs = [sorted(bytes(r[0]) for r in s._conn().execute(f"SELECT embedding FROM {raw}")) for s in (original, second)]
    assert blobs[0] == blobs[1] and len(blobs[0]) >= 15  # the stored bytes themselves
    for s in (original, first, second):
        s.close()


@pytest.mark.parametrize("storage", ["int8", "binary"])
def test_quantized_vectors_cross_engines_and_come_back_as_stored(
    tmp_path: Path, pg_server: PgServer, storage: str
) -> None:
    """SQLite -> PostgreSQL -> SQLite with int8 codes or binary's exact rows: the final SQLite
    file holds the very bytes the first one did, and every copy verifies."""
    root = tmp_path / "kb"
    _kb(root)
    ws = make_workspace(root, "local", embedder=HashEmbedder(DIMS), embedding__vector_storage=storage)
    ws.indexing.reindex("all", False)
    ws.indexing.wait_vectors(60)
    ws.close()
    original = SqliteStore(root / ".local-vector-search-mcp" / "index.db")
    middle = PostgresStore(pg_server.url, pg_server.fresh_schema())
    back = SqliteStore(tmp_path / "back.db")
    assert verify_copy(original, middle, copy_index(original, middle))["mismatches"] == []
    assert verify_copy(middle, back, copy_index(middle, back))["mismatches"] == []
    raw = "chunk_vectors_exact" if storage == "binary" else "chunk_vectors"
    blobs = [sorted(bytes(r[0]) for r in s._conn().execute(f"SELECT embedding FROM {raw}")) for s in (original, back)]
    assert blobs[0] == blobs[1] and len(blobs[0]) >= 15
    for s in (original, middle, back):
        s.close()


def test_an_int8_index_of_the_fixed_scale_is_not_copied(tmp_path: Path) -> None:
    """An int8 index from before decision 425 (no ``int8_scale`` in its manifest) holds codes of the
    fixed scale 1/127: the target would re-quantize them with one scale per vector, so the copy is
    refused with the rebuild to run, and the target is left as it was."""
    from local_vector_search_mcp.index.copy import CopyError

    root = tmp_path / "kb"
    _kb(root)
    ws = make_workspace(root, "local", embedder=HashEmbedder(DIMS), embedding__vector_storage="int8")
    ws.indexing.reindex("all", False)
    ws.indexing.wait_vectors(60)
    ws.close()
    source = SqliteStore(root / ".local-vector-search-mcp" / "index.db")
    source.write_manifest({k: v for k, v in source.read_manifest().items() if k != "int8_scale"})
    target = SqliteStore(tmp_path / "copy.db")
    with pytest.raises(CopyError, match=r"fixed scale 1/127.*--reindex --force"):
        copy_index(source, target)
    assert target.counts().documents == 0 and target.read_manifest() == {}
    source.close()
    target.close()


def test_a_storage_the_target_engine_lacks_is_refused_cleanly(tmp_path: Path, pg_server: PgServer) -> None:
    """float16 exists only on PostgreSQL: copying such an index into SQLite stops with a clear
    message and leaves the target as it was."""
    from local_vector_search_mcp.config import ConfigError
    from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord

    source = PostgresStore(pg_server.url, pg_server.fresh_schema())
    source.ensure_schema(DIMS, "float16")
    source.replace_document(
        DocumentRecord("a.md", "s" * 64, 1, 1, "2026-12-01T00:00:00.000Z"),
        [ChunkRecord(0, "p0", "p0~a~b", "alpha", None, "h", np.ones(DIMS, np.float32))],
    )
    source.write_manifest({"embedding_dimensions": str(DIMS), "vector_storage": "float16"})
    target = SqliteStore(tmp_path / "copy.db")
    with pytest.raises(ConfigError, match="float16"):
        copy_index(source, target)
    assert target.counts().documents == 0 and target.read_manifest() == {}
    source.close()
    target.close()


def test_store_names_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from local_vector_search_mcp.config import CliOptions, ConfigError, load_settings
    from local_vector_search_mcp.index.stores import open_store_spec

    settings = load_settings(CliOptions(root="."), cwd=tmp_path, environ={})
    store = open_store_spec("postgresql://kb:s3cret@db.example:6543/knowledge#team_docs", settings)
    assert store.location == "postgresql://db.example:6543/knowledge#team_docs"  # never the password
    assert open_store_spec("postgres://db/k", settings).location.endswith("/k#local_vector_search_mcp")
    assert open_store_spec("sqlite:idx/a.db", settings).location == str(tmp_path / "idx" / "a.db")
    monkeypatch.delenv("LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL", raising=False)
    with pytest.raises(ConfigError, match="LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL"):
        open_store_spec("postgresql:team", settings)
    monkeypatch.setenv("LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL", "postgresql://u:pw@h:1/d")
    assert open_store_spec("postgresql:team", settings).location == "postgresql://h:1/d#team"
    for bad in ("postgresql:Bad-Name", "postgresql://u:pw@h/d#x;drop", "mysql://u:pw@h/d", "sqlite:"):
        with pytest.raises(ConfigError) as caught:
            open_store_spec(bad, settings)
        assert "pw" not in str(caught.value)
    note = tmp_path / "notes" / "a.MD"
    note.parent.mkdir()
    note.write_text("# A\n", "utf-8")
    with pytest.raises(ConfigError, match="names a Markdown document"):  # as storage.path (decision 985)
        open_store_spec("sqlite:notes/a.MD", settings)
    assert note.read_text("utf-8") == "# A\n"


class _RefusingEmbedder(HashEmbedder):
    """Refuses one note's text, as an endpoint refuses an input over its context length."""

    def embed_passages(self, texts: list[str]) -> Any:
        from local_vector_search_mcp.embeddings import EmbeddingRefused

        if any("number3 " in t for t in texts):
            raise EmbeddingRefused("Embedding endpoint refused the input (HTTP 400).")
        return super().embed_passages(texts)


def test_a_chunk_the_provider_refused_is_copied_without_a_vector(tmp_path: Path) -> None:
    """Decision 514: a refused chunk (decision 510) has no vector, like a pending one; the copy
    holds it pending (its next pass tries it once more) and the verification counts both alike."""
    root = tmp_path / "kb"
    _kb(root)
    ws = make_workspace(root, "local", embedder=_RefusingEmbedder(DIMS))
    try:
        ws.indexing.reindex("all", False)
        assert ws.store.refused_vectors(5)[0] == 1 and ws.store.pending_vector_count() == 0
        target = SqliteStore(tmp_path / "copy.db")
        result = copy_index(ws.store, target)
        report = verify_copy(ws.store, target, result)
        assert report["mismatches"] == []  # was: "vectors: N in the source, N-1 in the copy"
        assert target.pending_vector_count() == 1
        target.close()
    finally:
        ws.close()
