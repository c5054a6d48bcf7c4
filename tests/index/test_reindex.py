from __future__ import annotations

import os
import time

import pytest
from kb_fakes import FakeWorkspace, HashEmbedder, make_config

from local_vector_search_mcp.errors import IndexNotReady
from local_vector_search_mcp.index.service import IndexService
from local_vector_search_mcp.index.sqlite import SqliteStore


def service(kb, provider="none", embedder=None, **overrides):
    svc = IndexService(FakeWorkspace(kb, make_config(provider, **overrides)))
    if embedder is not None:
        svc.use_embedder(embedder)
    return svc


def test_incremental_skip_touch_delete(kb):
    svc = service(kb)
    first = svc.reindex()
    assert (first["scannedFiles"], first["indexedFiles"], first["skippedFiles"]) == (3, 3, 0)
    again = svc.reindex()
    assert (again["indexedFiles"], again["skippedFiles"]) == (0, 3)
    # same content, new mtime: hashed, touched, not reindexed
    os.utime(kb / "guide.md", ns=(time.time_ns(), time.time_ns() + 10**9))
    touched = svc.reindex()
    assert (touched["indexedFiles"], touched["skippedFiles"]) == (0, 3)
    (kb / "guide.md").write_text("# Guide\n\nNew text about lifetimes.\n", encoding="utf-8")
    (kb / "notes" / "ja.md").unlink()
    changed = svc.reindex()
    assert (changed["indexedFiles"], changed["deletedFiles"]) == (1, 1)
    assert svc.search(query="lifetimes", mode="lexical")["results"][0]["path"] == "guide.md"
    assert svc.search(query="strong_count", mode="lexical")["results"] == []


def test_scope_all_reprocesses_every_file(kb):
    svc = service(kb)
    svc.reindex()
    assert svc.reindex("all")["indexedFiles"] == 3


def test_excluded_files_are_removed(kb):
    svc = service(kb)
    svc.reindex()
    svc2 = service(kb, knowledge_base__exclude=["notes/**"])
    assert svc2.reindex()["deletedFiles"] == 2
    assert svc2.store.counts().documents == 1


def test_hidden_folders_are_not_indexed(kb):
    (kb / ".git").mkdir()
    (kb / ".git" / "x.md").write_text("# secret\n", encoding="utf-8")
    assert service(kb).reindex()["scannedFiles"] == 3


def test_incompatible_index_needs_force_and_keeps_data(kb):
    service(kb).reindex()
    changed = service(kb, chunking__max_elements=5)
    status = changed.status_fields()
    assert status["compatibility"]["isCompatible"] is False
    assert any("chunking_max_elements" in p for p in status["compatibility"]["problems"])
    with pytest.raises(IndexNotReady, match="force=true"):
        changed.reindex()
    with pytest.raises(IndexNotReady, match="--reindex --force"):
        changed.search(query="guide", mode="lexical")
    assert changed.store.counts().documents == 3  # nothing deleted
    result = changed.reindex(force=True)
    assert result["indexedFiles"] == 3
    assert changed.status_fields()["compatibility"] == {"isCompatible": True, "problems": []}


def test_force_on_compatible_index_does_not_reset(kb):
    svc = service(kb)
    svc.reindex()
    assert svc.reindex(force=True)["skippedFiles"] == 3


def test_failed_file_keeps_previous_revision(kb, monkeypatch):
    svc = service(kb)
    svc.reindex()
    (kb / "guide.md").write_text("# Guide\n\nReplacement text.\n", encoding="utf-8")
    original = SqliteStore.replace_document

    def boom(self, doc, elements, chunks):
        original(self, doc, elements, [*chunks[:1], None])  # fails inside the transaction

    monkeypatch.setattr(SqliteStore, "replace_document", boom)
    with pytest.raises(AttributeError):
        svc.reindex()
    monkeypatch.setattr(SqliteStore, "replace_document", original)
    assert svc.search(query="strong_count", mode="lexical")["results"][0]["path"] == "guide.md"
    assert svc.search(query="Replacement", mode="lexical")["results"] == []


def test_cjk_lexical_search(kb):
    svc = service(kb)
    svc.reindex()
    for query, path in [("共享状态", "notes/zh.md"), ("侦听器", "notes/zh.md"), ("东京", None), ("雨", "notes/ja.md"),
                        ("東京都", "notes/ja.md"), ("天気", "notes/ja.md")]:
        results = svc.search(query=query, mode="lexical")["results"]
        if path is None:
            assert results == [] or results[0]["path"] != "guide.md"
        else:
            assert results and results[0]["path"] == path, query
    hit = svc.search(query="侦听器", mode="lexical")["results"][0]
    assert hit["headingPath"].startswith("状态管理")


@pytest.mark.parametrize("storage", ["float32", "int8", "binary"])
def test_vector_storage_variants(kb, storage):
    emb = HashEmbedder()
    svc = service(kb, embedder=emb, embedding__vector_storage=storage)
    svc.reindex()
    out = svc.search(query="Install the tool with pip", mode="semantic")
    assert out["results"][0]["path"] == "guide.md"
    assert out["results"][0]["searchMode"] == "semantic"
    manifest = svc.store.read_manifest()
    assert manifest["vector_storage"] == storage and manifest["index_mode"] == "vector-enabled"


def test_unchanged_chunks_reuse_vectors(kb):
    emb = HashEmbedder()
    svc = service(kb, embedder=emb)
    svc.reindex()
    calls = emb.calls
    with open(kb / "guide.md", "a", encoding="utf-8") as f:
        f.write("\nOne more paragraph.\n")
    svc.reindex()
    assert emb.calls - calls == 1  # only the changed chunk was embedded


def test_embedding_failure_stops_cleanly_with_warning(kb):
    emb = HashEmbedder()
    svc = service(kb, embedder=emb)
    svc.reindex()
    (kb / "guide.md").write_text("# Guide\n\nChanged.\n", encoding="utf-8")
    emb.fail = True
    result = svc.reindex()
    assert "Embedding failed" in result["warning"]
    assert svc.status_fields()["synchronization"]["paths"] == ["guide.md"]
    # lexical still serves the previous revision
    assert svc.search(query="strong_count", mode="lexical")["results"][0]["path"] == "guide.md"


def test_switching_to_lexical_mode_is_incompatible(kb):
    service(kb, embedder=HashEmbedder()).reindex()
    problems = service(kb).status_fields()["compatibility"]["problems"]
    assert any(p.startswith("index_mode") for p in problems)


def test_background_reindex_is_single_flight(kb):
    svc = service(kb, embedder=HashEmbedder())
    first = svc.start_reindex("changed", False)
    second = svc.start_reindex("all", True)
    assert first["started"] is True
    if second["started"] is False:  # may already be done on a fast machine
        assert second["current"]["scope"] == "changed"
    svc.wait_reindex(30)
    svc.wait_reindex(30)
    last = svc.indexing_status()["last"]
    assert last["outcome"] == "succeeded" and last["result"]["scannedFiles"] == 3
    assert svc.indexing_status()["isRunning"] is False


def test_background_failure_is_recorded_and_retry_works(kb):
    service(kb).reindex()
    svc = service(kb, chunking__max_elements=3)
    svc.start_reindex()
    svc.wait_reindex(30)
    last = svc.indexing_status()["last"]
    assert last["outcome"] == "failed" and "force=true" in last["error"]
    svc.start_reindex(force=True)
    svc.wait_reindex(30)
    assert svc.indexing_status()["last"]["outcome"] == "succeeded"


def test_status_fields_lexical(kb):
    svc = service(kb)
    status = svc.status_fields()
    assert status["indexExists"] is False and status["project"]["documents"] == 0
    svc.reindex()
    status = svc.status_fields()
    assert status["indexMode"] == "lexical" and status["embeddingModel"] == "none"
    assert status["embeddingDimensions"] is None and status["project"]["chunks"] > 0
    assert status["synchronization"] is None
