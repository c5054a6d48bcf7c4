from __future__ import annotations

import os
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from kb_fakes import BEFORE_FOLDS, HashEmbedder, KbClient, client, reindex_before_folds

from local_vector_search_mcp.errors import IndexNotReady
from local_vector_search_mcp.index.chunker import CHUNKER_VERSION
from local_vector_search_mcp.index.indexer import Progress
from local_vector_search_mcp.index.manifest import LEXICAL_TOKENIZER
from local_vector_search_mcp.index.sqlite import SqliteStore


def service(kb, provider="none", embedder=None, **overrides):
    return client(kb, provider, embedder=embedder, **overrides)


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


def test_a_reindex_counts_what_the_start_catch_up_did_once_whichever_runs_first(kb):
    """Decision 870: the syncs of a server's start-up catch-up are counted by the next reindex
    (was: every file skipped, nothing deleted), exactly once; a catch-up sync that finds a
    reindex running leaves its path to it. Another process's edits, while this one was down."""
    service(kb).reindex()
    (kb / "guide.md").write_text("# Guide\n\nNew text about lifetimes.\n", encoding="utf-8")
    (kb / "notes" / "ja.md").unlink()
    later = service(kb)
    indexing = later.ws.indexing
    indexing.start_catch_up(at_start=True)
    indexing.wait_catch_up(30)
    assert later.sync.wait_idle(30)
    assert [h["path"] for h in later.search(query="lifetimes", mode="lexical")["results"]] == ["guide.md"]
    result = later.reindex()
    assert (result["indexedFiles"], result["skippedFiles"], result["deletedFiles"]) == (1, 1, 1)
    assert result["chunksIndexed"] == 1
    again = later.reindex()
    assert (again["indexedFiles"], again["skippedFiles"], again["deletedFiles"]) == (0, 2, 0)

    (kb / "guide.md").write_text("# Guide\n\nText about borrowing.\n", encoding="utf-8")
    indexing._caught_up.queue(["guide.md"])
    indexing.activity.current = Progress("changed", False)  # a reindex runs meanwhile
    try:
        indexing._reconcile("guide.md")
    finally:
        indexing.activity.current = None
    assert later.search(query="borrowing", mode="lexical")["results"] == []  # left to the reindex
    result = later.reindex()
    assert (result["indexedFiles"], result["skippedFiles"], result["deletedFiles"]) == (1, 1, 0)
    assert [h["path"] for h in later.search(query="borrowing", mode="lexical")["results"]] == ["guide.md"]


def test_a_same_size_rewrite_in_the_tick_after_a_reindex_read_it_is_indexed_next_time(kb):
    """Decision 401 (git's "racy clean"): a file the reindex read within a timestamp tick of its
    last change may be rewritten at the same size within that tick and keep its mtime (a coarse
    file-system clock). Its stat is stored smudged, so the next reindex and the start-up catch-up
    read its bytes instead of skipping it."""
    svc = service(kb)
    note = kb / "tick.md"
    note.write_text("# Tick\n\nalpha words here\n", encoding="utf-8")
    svc.reindex()
    stamp = note.stat().st_mtime_ns
    note.write_text("# Tick\n\ngamma words here\n", encoding="utf-8")  # same size
    os.utime(note, ns=(stamp, stamp))  # as a coarse clock leaves it
    assert "tick.md" in svc.indexer.changed_paths()
    assert svc.reindex()["indexedFiles"] == 1
    assert [h["path"] for h in svc.search(query="gamma", mode="lexical")["results"]] == ["tick.md"]
    assert svc.search(query="alpha", mode="lexical")["results"] == []


def test_a_file_last_changed_well_before_it_was_read_is_trusted_by_its_stat(kb, monkeypatch):
    from local_vector_search_mcp.index import prepare

    svc = service(kb)
    # read an hour after the last change (an mtime set into the past is not enough: the ctime, which
    # no tool sets, is part of the stamp, decision 463)
    later = time.time_ns
    monkeypatch.setattr(prepare, "time", SimpleNamespace(time_ns=lambda: later() + 3_600 * 10**9))
    svc.reindex()
    state = svc.indexer.store.document_states()["guide.md"]
    assert state.size == (kb / "guide.md").stat().st_size  # not smudged
    assert svc.indexer.changed_paths() == []
    # so a rewrite in the same second as that old stamp would be missed: the stat is all we look at
    again = svc.reindex()
    assert (again["indexedFiles"], again["skippedFiles"]) == (0, 3)


def test_a_racily_clean_file_is_hashed_and_not_reported_as_changed(kb):
    svc = service(kb)
    svc.reindex()  # the fixture's files were just written: every one is stored smudged
    states = svc.indexer.store.document_states()
    assert {s.size for s in states.values()} == {-1}
    assert svc.indexer.changed_paths() == []  # hashed: the bytes are the indexed ones
    again = svc.reindex()
    assert (again["indexedFiles"], again["skippedFiles"]) == (0, 3)  # read again, nothing parsed


def test_the_catch_up_records_the_real_stat_once_it_can_vouch(kb, monkeypatch):
    from local_vector_search_mcp.index import prepare

    svc = service(kb)
    svc.reindex()
    monkeypatch.setattr(prepare, "RACY_NS", 0)  # as if the clock tick had long passed
    assert svc.indexer.changed_paths() == []
    states = svc.indexer.store.document_states()
    assert states["guide.md"].size == (kb / "guide.md").stat().st_size
    assert (svc.reindex()["indexedFiles"], svc.indexer.changed_paths()) == (0, [])


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

    def boom(self, doc, chunks, *graph):
        original(self, doc, [*chunks[:1], None], *graph)  # fails inside the transaction

    monkeypatch.setattr(SqliteStore, "replace_document", boom)
    with pytest.raises(AttributeError):
        svc.reindex()
    monkeypatch.setattr(SqliteStore, "replace_document", original)
    assert svc.search(query="strong_count", mode="lexical")["results"][0]["path"] == "guide.md"
    assert svc.search(query="Replacement", mode="lexical")["results"] == []


def test_cjk_lexical_search(kb):
    svc = service(kb)
    svc.reindex()
    for query, path in [
        ("共享状态", "notes/zh.md"),
        ("侦听器", "notes/zh.md"),
        ("东京", None),
        ("雨", "notes/ja.md"),
        ("東京都", "notes/ja.md"),
        ("天気", "notes/ja.md"),
    ]:
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
    assert "Embedding failed" in result["warning"] and result["indexedFiles"] == 1
    # the re-sync of earlier failures a reindex queues has run: it must not wipe this one
    assert svc.sync.wait_idle(10)
    assert svc.status_fields()["synchronization"]["paths"] == ["guide.md"]
    # the new revision is searchable lexically at once; its chunk waits for a vector
    assert svc.search(query="Changed", mode="lexical")["results"][0]["path"] == "guide.md"
    assert svc.store.counts().pending_vectors == 1
    assert "Falling back to lexical search" in svc.search(query="Changed", mode="hybrid")["warning"]
    assert svc.reindex()["warning"]  # the provider is still down: the failure stays listed
    assert svc.sync.wait_idle(10)
    assert svc.status_fields()["synchronization"]["paths"] == ["guide.md"]
    emb.fail = False  # queries work again; the failed pass is not retried by every search
    out = svc.search(query="Changed", mode="hybrid")
    assert "1 of 4 chunks do not have vectors yet (embedding failed: provider down)" in out["warning"]
    # a semantic answer has no lexical list to cover the rest (decision 1008)
    out = svc.search(query="Install", mode="semantic")
    assert out["results"] and out["warning"].endswith("; semantic search covers only the embedded chunks.")
    assert "lexical" not in out["warning"]
    assert svc.reindex()["warning"] is None  # the next reindex embeds what is pending
    assert svc.store.counts().pending_vectors == 0
    assert svc.search(query="Changed", mode="hybrid")["warning"] is None


def test_vectors_are_filled_after_the_lexical_pass(kb):
    """MCP reindex: lexical rows first, vectors in the same background operation."""
    import threading

    gate = threading.Event()
    emb = HashEmbedder()
    original = emb.embed_passages

    def slow(texts):
        gate.wait(10)
        return original(texts)

    emb.embed_passages = slow  # type: ignore[method-assign]
    svc = service(kb, embedder=emb)
    assert svc.start_reindex()["started"] is True
    for _ in range(200):  # lexical phase done: everything searchable, vectors pending
        if svc.store.counts().chunks == 5:
            break
        threading.Event().wait(0.02)
    assert svc.store.counts().pending_vectors == 5
    status = svc.indexing_status()
    assert status["isRunning"] is True and status["current"]["processedFiles"] == 3
    out = svc.search(query="Install the tool with pip", mode="hybrid")
    assert out["results"][0]["path"] == "guide.md" and "5 of 5 chunks" in out["warning"]
    assert svc.vector_status()["pendingChunks"] == 5
    gate.set()
    svc.wait_reindex(30)
    assert svc.indexing_status()["last"]["outcome"] == "succeeded"
    assert svc.vector_status() == {
        "embeddedChunks": 5,
        "pendingChunks": 0,
        "isRunning": False,
        "lastError": None,
        "refusedChunks": 0,
        "refused": [],
        "etaSeconds": None,
    }
    assert svc.search(query="Install the tool with pip", mode="hybrid")["warning"] is None


def test_targeted_sync_embeds_in_the_background(kb):
    emb = HashEmbedder()
    svc = service(kb, embedder=emb)
    svc.reindex()
    (kb / "new.md").write_text("# New\n\nA fresh page about kites.\n", encoding="utf-8")
    svc.schedule_sync(["new.md"])
    assert svc.sync.wait_idle(10)
    svc.wait_vectors(10)
    assert svc.store.counts().pending_vectors == 0
    assert svc.search(query="fresh page about kites", mode="semantic")["results"][0]["path"] == "new.md"


def test_switching_to_embeddings_is_incompatible(kb):
    # the converse, an index built with embeddings and a run without them, is used as it is
    # (decision 630: tests/index/test_lexical_run.py)
    service(kb).reindex()
    problems = service(kb, embedder=HashEmbedder()).status_fields()["compatibility"]["problems"]
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


@pytest.mark.parametrize("storage", ["blocker/index.db", "blocker/x/index.db", "folder.db"])
def test_an_index_that_cannot_be_opened_is_named_as_configured(kb, storage):
    # decision 290: the storage path's folder is a file, or the path is a folder: the failure
    # names the configured location and what to do, never the server's absolute path
    (kb / "blocker").write_text("not a folder\n", encoding="utf-8")
    (kb / "folder.db").mkdir()
    svc = client(kb, storage=Path(storage))
    svc.start_reindex()
    svc.wait_reindex(30)
    last = svc.indexing_status()["last"]
    assert last["outcome"] == "failed"
    assert f"{storage!r} (storage.path, relative to the project root)" in last["error"]
    assert "storage.path (CLI: --storage-path)" in last["error"]
    assert str(kb) not in last["error"] and "Errno" not in last["error"]


def test_an_index_outside_the_project_is_named_by_its_setting(kb, tmp_path):
    blocker = tmp_path / "outside-file"
    blocker.write_text("x\n", encoding="utf-8")
    svc = client(kb, storage=blocker / "index.db")
    with pytest.raises(IndexNotReady) as raised:
        svc.reindex()
    assert "at the configured storage.path (outside the project root)" in raised.value.message
    assert str(tmp_path) not in raised.value.message


def test_links_are_named_unreadable_whether_or_not_their_target_exists(kb):
    # decision 292: links are not followed, so each is named in `unreadable` with one reason;
    # a dangling link vanished silently (its target's stat said "gone")
    (kb / "link.md").symlink_to(kb / "guide.md")
    (kb / "dangling.md").symlink_to(kb / "nowhere.md")
    svc = service(kb)
    result = svc.reindex()
    reasons = {u["path"]: u["reason"] for u in result["unreadable"]}
    assert reasons == {
        "dangling.md": "'dangling.md' is a symbolic link; links are not followed.",
        "link.md": "'link.md' is a symbolic link; links are not followed.",
    }
    assert {u["path"] for u in svc.status_fields()["project"]["unreadable"]} == {"dangling.md", "link.md"}
    # an indexed document replaced by a link (to an equal file) leaves the index and is named too
    twin = kb / "notes" / "twin.md"  # same size and mtime: its stat would pass for guide.md's
    twin.write_bytes((kb / "guide.md").read_bytes())
    mtime = (kb / "guide.md").stat().st_mtime_ns
    os.utime(twin, ns=(mtime, mtime))
    (kb / "notes" / "twin-link").symlink_to(twin)
    os.replace(kb / "notes" / "twin-link", kb / "guide.md")
    again = svc.reindex()
    assert "guide.md" in {u["path"] for u in again["unreadable"]}
    assert "guide.md" not in svc.store.document_states()
    # an edit or the watcher (a targeted sync) names a new dangling link as the reindex does
    (kb / "late.md").symlink_to(kb / "also-nowhere.md")
    svc.schedule_sync(["late.md"])
    assert svc.sync.wait_idle(30)
    assert "late.md" in {u["path"] for u in svc.status_fields()["project"]["unreadable"]}
    (kb / "dangling.md").unlink()  # gone: no longer named
    svc.reindex()
    assert "dangling.md" not in {u["path"] for u in svc.status_fields()["project"]["unreadable"]}


def test_status_fields_lexical(kb):
    svc = service(kb)
    status = svc.status_fields()
    assert status["indexExists"] is False and status["project"]["documents"] == 0
    svc.reindex()
    status = svc.status_fields()
    assert status["indexMode"] == "lexical" and status["embeddingModel"] == "none"
    assert status["embeddingDimensions"] is None and status["project"]["chunks"] > 0
    assert status["synchronization"] is None


def test_pending_vectors_left_by_a_dead_process_are_filled_after_restart(kb):
    """A process that dies after the lexical pass leaves pending chunks; the next one embeds them."""
    broken = HashEmbedder(fail=True)
    first = service(kb, embedder=broken)
    first.reindex()
    assert first.store.counts().pending_vectors == 5
    first.store.close()
    restarted = service(kb, embedder=HashEmbedder())
    out = restarted.search(query="Install the tool with pip", mode="hybrid")
    assert out["results"][0]["path"] == "guide.md" and "5 of 5 chunks do not have vectors yet" in out["warning"]
    assert "lexical matches cover every chunk" in out["warning"]
    restarted.wait_vectors(10)  # the search started a background pass
    assert restarted.store.counts().pending_vectors == 0
    assert restarted.search(query="Install the tool with pip", mode="hybrid")["warning"] is None


def test_older_storage_layout_is_reported_not_crashed(kb):
    """An index written by layout 1 (chunks.text, an elements table) must not break status or search."""
    import apsw

    svc = service(kb)
    svc.reindex()
    svc.store.close()
    conn = apsw.Connection(str(svc.store.path))
    conn.execute("DROP TABLE chunks; CREATE TABLE chunks(id INTEGER PRIMARY KEY, document_id INTEGER, text TEXT)")
    conn.execute("DELETE FROM index_manifest WHERE key = 'storage_layout'")
    conn.close()
    again = service(kb)
    status = again.status_fields()
    assert any(p.startswith("storage_layout") for p in status["compatibility"]["problems"])
    with pytest.raises(IndexNotReady, match="force=true"):
        again.search(query="pip", mode="lexical")
    assert again.reindex(force=True)["indexedFiles"] == 3
    assert again.search(query="pip", mode="lexical")["results"]


def _fail_unexpectedly(monkeypatch: pytest.MonkeyPatch, exc: Exception, at: str | None = None) -> None:
    from local_vector_search_mcp.index.indexing import IndexingService

    def failing(self: IndexingService, progress: Any, *args: Any, **kwargs: Any) -> Any:
        progress.current_path = at
        raise exc

    monkeypatch.setattr(IndexingService, "_run", failing)


def test_an_unexpected_reindex_failure_speaks_the_products_words(kb, monkeypatch, caplog):
    # decision 346: a bug's exception keeps its type, names where the reindex was, and shows
    # paths under the root as root-relative; the traceback with the real paths goes to the log
    svc = client(kb)
    inside = kb / "notes" / "deep.md"
    _fail_unexpectedly(monkeypatch, FileNotFoundError(2, "No such file or directory", str(inside)), at="notes/deep.md")
    with caplog.at_level("ERROR"):
        svc.start_reindex()
        svc.wait_reindex(30)
    error = svc.indexing_status()["last"]["error"]
    assert svc.indexing_status()["last"]["outcome"] == "failed"
    assert str(kb) not in error
    assert "FileNotFoundError" in error and "'notes/deep.md'" in error
    assert "while indexing files (at 'notes/deep.md')" in error
    assert "server's log" in error
    assert any(r.exc_info and str(inside) in str(r.exc_info[1]) for r in caplog.records)


def test_an_unexpected_failure_names_an_outside_index_by_its_setting(kb, tmp_path, monkeypatch):
    storage = tmp_path / "elsewhere" / "index.db"
    svc = client(kb, storage=storage)
    message = f"disk I/O error on {storage}-wal in {storage.parent}; root {kb}; temp /var/tmp/x1/y.bin"
    _fail_unexpectedly(monkeypatch, RuntimeError(message))
    svc.start_reindex()
    svc.wait_reindex(30)
    error = svc.indexing_status()["last"]["error"]
    assert str(tmp_path) not in error and str(kb) not in error and "/var/tmp" not in error
    assert "RuntimeError: disk I/O error on storage.path-wal in storage.path's folder; root the project root" in error


def test_in_product_words_keeps_relative_text_and_neighbouring_folders_apart(tmp_path):
    from local_vector_search_mcp.index.indexing import in_product_words

    root = tmp_path / "kb"
    text = f"{root}/a.md and {root}2/b.md, {root}; 1/2 and/or notes/x.md; postgresql://u:secret@db:5432/x"
    assert in_product_words(text, root) == (
        "a.md and <a path outside the project root>, the project root; 1/2 and/or notes/x.md;"
        " postgresql://***@db:5432/x"
    )


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"knowledge_base__include": ["*.txt"]}, "include ['*.txt'], though the root"),
        ({"knowledge_base__exclude": ["**"]}, "minus knowledgeBase.exclude ['**'], though the root"),
    ],
)
def test_globs_that_leave_out_every_markdown_file_say_so(kb, overrides, words):
    # a reindex of nothing answered scannedFiles 0 and no warning: every search then found
    # nothing, and the globs were the last thing a user would suspect
    result = service(kb, **overrides).reindex()
    assert result["scannedFiles"] == 0
    assert words in result["warning"]
    assert "holds 3 Markdown file(s)" in result["warning"]
    assert service(kb).reindex()["warning"] is None  # the defaults match them


def test_an_empty_root_is_no_glob_problem_but_is_said(tmp_path):
    # decision 554: a root without Markdown (the wrong folder, `.markdown` or `.mdx` files only)
    # answered scannedFiles 0 and no warning; no glob is to blame, the root is
    (tmp_path / "notes.markdown").write_text("# Notes\n", "utf-8")
    warning = service(tmp_path).reindex()["warning"]
    assert "holds no Markdown file (`.md`" in warning and "Check knowledgeBase.root (CLI: --root)" in warning
    assert "include" not in warning


def test_a_search_after_a_reindex_that_found_nothing_does_not_send_the_agent_back_to_it(tmp_path):
    # decision 554: over MCP, kb_reindex of a root without Markdown succeeded, and kb_search then
    # answered "The index is empty. Run kb_reindex": an agent that follows it loops
    svc = service(tmp_path)
    try:
        with pytest.raises(IndexNotReady, match="Run kb_reindex") as before:  # nothing ran yet: that is the advice
            svc.search("anything")
        # ... unless one ran in another process (`--reindex`, then `call kb_search`): said (decision 1084)
        assert "If a reindex already ran and indexed nothing, the knowledge-base root holds no" in before.value.message
        assert svc.start_reindex()["started"] is True
        svc.wait_reindex(30)
        with pytest.raises(IndexNotReady) as empty:
            svc.search("anything")
        message = empty.value.message
        assert "the last reindex found no Markdown file to index (its warning in kb_status" in message
        assert str(tmp_path) not in message
        last = svc.indexing_status()["last"]["result"]
        assert "holds no Markdown file" in last["warning"]
        assert "Another kb_reindex finds nothing more" in message
    finally:
        svc.shutdown()


def test_a_search_after_a_reindex_that_failed_points_at_its_error_not_back_at_it(kb):
    """Decision 853: with `storage.path` under a file, kb_reindex is accepted, the run fails
    (kb_status `indexing.last.error` says why and what to fix), and kb_search then answered "The
    index is empty. Run kb_reindex": the agent that follows it fails the same way, in a loop."""
    (kb / "blocker").write_text("a file where the index folder should be", "utf-8")
    svc = service(kb, storage__path=str(kb / "blocker" / "index.db"))
    try:
        assert svc.start_reindex()["started"] is True
        svc.wait_reindex(30)
        last = svc.indexing_status()["last"]
        assert last["outcome"] == "failed" and "cannot be opened" in last["error"]
        with pytest.raises(IndexNotReady) as empty:
            svc.search("anything")
        message = empty.value.message
        assert "the last reindex failed" in message and "kb_status" in message and "indexing.last.error" in message
        assert "Run kb_reindex (CLI" not in message and str(kb) not in message
    finally:
        svc.shutdown()


def test_an_include_that_stops_at_the_root_folder_says_so(kb):
    # decision 553: include ['*.md'] (gitignore's "every Markdown file") takes the root's files only,
    # by the contract's glob rules; the reindex indexed guide.md, left notes/ out and said nothing
    result = service(kb, knowledge_base__include=["*.md"]).reindex()
    assert result["scannedFiles"] == 1
    warning = result["warning"]
    assert "knowledgeBase.include ['*.md'] matches files in the root folder only" in warning
    assert "2 Markdown file(s) in subfolders are not indexed, such as 'notes/ja.md'" in warning
    assert "Write ['**/*.md']" in warning and "add '*/**' to knowledgeBase.exclude" in warning
    assert str(kb) not in warning
    # the advice holds: the root's files only, on purpose, is quiet, and so is every file
    quiet = service(kb, knowledge_base__include=["*.md"], knowledge_base__exclude=["*/**"]).reindex()
    assert (quiet["scannedFiles"], quiet["warning"]) == (1, None)
    every = service(kb, knowledge_base__include=["**/*.md"]).reindex()
    assert (every["scannedFiles"], every["warning"]) == (3, None)
    # nothing left below the root: nothing to say
    for sub in (kb / "notes").iterdir():
        sub.unlink()
    assert service(kb, knowledge_base__include=["*.md"]).reindex()["warning"] is None


def test_a_v6_index_is_brought_to_the_current_chunker_in_place_by_the_next_reindex(kb):
    """Decision 781: chunker v7 gives a document of headings alone a chunk. An index chunker v6
    wrote is still served (no forced rebuild, no vector recomputed) and its next reindex re-reads
    just the documents without a chunk of their own."""
    from local_vector_search_mcp.index.port import DocumentRecord

    (kb / "outline.md").write_text("# Quokka outline\n\n## Walrus plans\n", encoding="utf-8")
    svc = service(kb)
    assert svc.reindex()["indexedFiles"] == 4
    hits = svc.search(query="walrus", mode="lexical")["results"]
    assert [h["path"] for h in hits] == ["outline.md"] and hits[0]["headingPath"] == "Quokka outline"
    # What chunker v6 stored for it: the document without a chunk, the manifest saying "6".
    store = svc.store
    state = store.document_states()["outline.md"]
    store.replace_document(DocumentRecord(state.path, state.source_hash, state.size, state.mtime_ns, "x"), [])
    store.write_manifest({**store.read_manifest(), "chunker_version": "6"})
    assert svc.search(query="walrus", mode="lexical")["results"] == []
    older = service(kb)
    assert older.status_fields()["compatibility"] == {"isCompatible": True, "problems": []}
    assert older.store.documents_without_own_chunks() == ["outline.md"]
    result = older.reindex()
    assert (result["indexedFiles"], result["skippedFiles"]) == (1, 3)
    assert [h["path"] for h in older.search(query="walrus", mode="lexical")["results"]] == ["outline.md"]
    assert (
        older.store.read_manifest()["chunker_version"] == CHUNKER_VERSION
        and older.store.documents_without_own_chunks() == []
    )
    assert older.reindex()["skippedFiles"] == 4


def test_the_first_start_after_an_upgrade_brings_an_earlier_tokenizers_index_up_to_date(kb, monkeypatch):
    """Decision 1006: the server's start-up catch-up runs the reindex that upgrades an index in place
    (here one written before decision 1001's folds), though no file changed: nobody has to ask."""
    (kb / "el.md").write_text("# Αναζήτηση\n\nΗ αναζήτηση βρίσκει τις σελίδες.\n", encoding="utf-8")
    older = service(kb)
    reindex_before_folds(older, monkeypatch)
    older.shutdown()
    server = service(kb)
    try:
        assert "el.md" not in [h["path"] for h in server.search(query="αναζητηση", mode="lexical")["results"]]
        server.ws.start_serving()
        server.ws.settle_catch_up(30)
        server.wait_reindex(30)
        last = server.indexing_status()["last"]
        assert (last["outcome"], last["result"]["indexedFiles"]) == ("succeeded", 1)
        assert server.store.read_manifest()["lexical_tokenizer"] == LEXICAL_TOKENIZER
        assert [h["path"] for h in server.search(query="αναζητηση", mode="lexical")["results"]] == ["el.md"]
    finally:
        server.shutdown()


def test_a_run_without_embeddings_records_the_upgrade_and_keeps_the_vectors_manifest(kb):
    """Decisions 630, 1006: a run without the model writes no manifest of its own, but records the
    in-place upgrades it made (else every start would run the pass again)."""
    with_model = service(kb, "local", embedder=HashEmbedder())
    with_model.reindex()
    stored = with_model.store.read_manifest()
    earlier = {**stored, "lexical_tokenizer": BEFORE_FOLDS, "chunker_version": "6"}
    with_model.store.write_manifest(earlier)
    with_model.shutdown()
    without = service(kb)
    assert without.indexer.upgrade_pending()
    without.reindex()
    assert without.store.read_manifest() == stored
    assert not without.indexer.upgrade_pending()


def _refusing(indexer: Any, monkeypatch: pytest.MonkeyPatch, refused: str) -> None:
    """The pass cannot read ``refused``: a moment's EACCES, a file another program holds locked."""
    from local_vector_search_mcp.index.indexer import UnreadableSource

    real = indexer._write

    def write(prepared: Any) -> Any:
        if prepared.path == refused:
            raise UnreadableSource(prepared.path, "Permission denied")
        return real(prepared)

    monkeypatch.setattr(indexer, "_write", write)


def _unlisting(indexer: Any, monkeypatch: pytest.MonkeyPatch, folder: str) -> None:
    """The pass cannot list ``folder``: its documents keep their entries, unread."""
    real = indexer.discover

    def discover(unlisted: dict[str, str] | None = None, **options: Any) -> list[str]:
        if unlisted is not None:
            unlisted[folder] = "The folder could not be listed (Permission denied)."
        return [path for path in real(unlisted, **options) if not path.startswith(folder)]

    monkeypatch.setattr(indexer, "discover", discover)


@pytest.mark.parametrize("miss", ["unreadable file", "unlisted folder"])
def test_an_upgrade_pass_that_could_not_read_a_document_leaves_the_upgrade_to_the_next(kb, monkeypatch, miss):
    """Decision 1011: a document the pass that upgrades an earlier tokenizer's index (1006) could
    not read kept that tokenizer's rows for good: the pass recorded the new tokenizer anyway, and
    the next one skipped the file, its size and mtime unchanged. The name is now recorded only by a
    pass that wrote every document it meant to re-read and listed every folder."""
    (kb / "greek").mkdir()
    (kb / "greek" / "el.md").write_text("# Σελίδα\n\nΗ αναζήτηση βρίσκει τις σελίδες.\n", encoding="utf-8")
    (kb / "el2.md").write_text("# Άλλη\n\nΜια δεύτερη αναζήτηση.\n", encoding="utf-8")
    svc = service(kb)
    reindex_before_folds(svc, monkeypatch)
    with monkeypatch.context() as patch:
        if miss == "unreadable file":
            _refusing(svc.indexer, patch, "greek/el.md")
        else:
            _unlisting(svc.indexer, patch, "greek/")
        result = svc.reindex()
    assert result["indexedFiles"] == 1  # el2.md
    assert svc.store.read_manifest()["lexical_tokenizer"] == BEFORE_FOLDS
    assert svc.indexer.upgrade_pending()
    assert [h["path"] for h in svc.search(query="αναζητηση", mode="lexical")["results"]] == ["el2.md"]
    again = svc.reindex()  # reads greek/el.md again, though its size and mtime did not change
    assert again["indexedFiles"] == 1 and svc.store.read_manifest()["lexical_tokenizer"] == LEXICAL_TOKENIZER
    hits = svc.search(query="αναζητηση", mode="lexical")["results"]
    assert sorted(h["path"] for h in hits) == ["el2.md", "greek/el.md"]
    assert svc.reindex()["indexedFiles"] == 0 and not svc.indexer.upgrade_pending()


def test_a_link_graph_upgrade_pass_that_could_not_read_a_document_leaves_it_to_the_next(kb, monkeypatch):
    """Decision 1011, as for the tokenizer: an index without HTML picture links (820) recorded the
    current link graph version though a document that may hold one was not read; it never was."""
    from local_vector_search_mcp.index.manifest import LINK_GRAPH_KEY

    (kb / "pic.md").write_text('# Pic\n\n<img src="gone.png">\n', encoding="utf-8")
    svc = service(kb)
    svc.reindex()
    store = svc.store
    with store._write() as c:  # what the earlier release left: no html link rows, no key
        c.execute("DELETE FROM links WHERE kind = 'html'")
    current = store.read_manifest()[LINK_GRAPH_KEY]
    store.write_manifest({k: v for k, v in store.read_manifest().items() if k != LINK_GRAPH_KEY})
    with monkeypatch.context() as patch:
        _refusing(svc.indexer, patch, "pic.md")
        svc.reindex()
    assert LINK_GRAPH_KEY not in store.read_manifest() and svc.indexer.upgrade_pending()
    assert svc.reindex()["indexedFiles"] == 1
    assert store.read_manifest()[LINK_GRAPH_KEY] == current
    assert [ln.kind for ln in store.links() if ln.source == "pic.md"] == ["html"]


def test_an_index_of_another_chunker_than_v6_still_needs_a_rebuild(kb):
    svc = service(kb)
    svc.reindex()
    svc.store.write_manifest({**svc.store.read_manifest(), "chunker_version": "5"})
    problems = service(kb).status_fields()["compatibility"]["problems"]
    assert problems == ["chunker_version: indexed '5', current '6'"]


def test_a_provider_down_for_several_files_blames_no_one_file(kb):
    """The provider failing fails a whole batch, whatever its texts: the reindex warning and each
    failed path's reason in kb_status said "Embedding failed for <the batch's first file>", so
    kb_status told an agent that `notes/ja.md` failed because of `guide.md` (decision 850)."""
    emb = HashEmbedder()
    emb.fail = True
    svc = service(kb, embedder=emb)
    result = svc.reindex()
    assert result["indexedFiles"] == 3
    warning = result["warning"]
    assert warning.startswith("Embedding failed: provider down.") and "searchable lexically" in warning
    assert svc.sync.wait_idle(10)
    failed = svc.status_fields()["synchronization"]["failed"]
    assert sorted(f["path"] for f in failed) == sorted(str(p.relative_to(kb)) for p in kb.rglob("*.md"))
    for entry in failed:
        others = [f["path"] for f in failed if f["path"] != entry["path"]]
        assert not any(other in entry["reason"] for other in others), entry


def test_a_reindex_names_the_files_it_left_out_for_their_names(kb):
    """Decision 707: files whose names no tool can address (decisions 283, 284) were left out of
    the index without a word from --reindex or kb_reindex; only kb_list_files' `skipped` said so."""
    os.close(os.open(os.fsencode(kb / "notes") + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY))  # Latin-1
    (kb / "tab\there.md").write_text("# Tab\n", encoding="utf-8")
    (kb / "c:notes.md").write_text("# Drive-like\n", encoding="utf-8")  # reads as an absolute path
    (kb / "drafts").mkdir()
    (kb / "drafts" / "odd\x01.md").write_text("# Odd\n", encoding="utf-8")
    svc = service(kb, knowledge_base__exclude=["drafts/**"])  # excluded on purpose: not named
    result = svc.reindex()
    assert result["scannedFiles"] == 3
    warning = result["warning"]
    assert warning.startswith("3 Markdown file(s) were left out"), warning
    assert "'notes/caf\\xe9.md'" in warning and "'tab\there.md'" in warning and "odd" not in warning
    assert "'c:notes.md'" in warning
    assert svc.reindex()["warning"] == warning  # every pass says it again until they are renamed


def test_a_file_whose_front_matter_is_nested_too_deep_is_indexed_without_it(kb):
    # 1,000 levels of `[`: the file was unreadable (RecursionError) and its body never searchable
    (kb / "deep.md").write_text("---\na: " + "[" * 1_000 + "]" * 1_000 + "\n---\n# Deep\n\nquokka\n", "utf-8")
    result = service(kb).reindex()
    assert result["unreadable"] == []
    assert [r["path"] for r in service(kb).search(query="quokka", mode="lexical")["results"]] == ["deep.md"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_v7_index_gains_the_text_of_html_blocks_in_place_keeping_every_other_vector(
    kb, request, monkeypatch, backend
):
    """Decision 1025: chunker v8 indexes the visible text of HTML blocks. An index v7 wrote is served
    as it is (no forced rebuild), and its next reindex re-reads only the files that may hold an HTML
    block, embeds only the chunks whose text changed, and records v8 once it has."""
    from local_vector_search_mcp.index import chunker

    (kb / "fig.md").write_text(
        "# Fig\n\nA figure.\n\n<figure><figcaption>Quokka chart</figcaption></figure>\n", "utf-8"
    )
    (kb / "link.md").write_text("# Link\n\n<https://example.com>\n", "utf-8")  # may hold one: read again
    storage = _engine_storage(request, backend)
    embedder = HashEmbedder()
    older = service(kb, "local", embedder=embedder, **storage)
    with monkeypatch.context() as patch:  # what v7 indexed: no HTML block's text
        patch.setattr(chunker, "html_block_texts", lambda doc: [])
        older.reindex()
    older.store.write_manifest({**older.store.read_manifest(), "chunker_version": "7"})
    older.shutdown()
    embedded = embedder.calls
    svc = service(kb, "local", embedder=embedder, **storage)
    try:
        assert svc.status_fields()["compatibility"] == {"isCompatible": True, "problems": []}
        assert svc.search(query="quokka", mode="lexical")["results"] == []
        assert svc.indexer.upgrade_pending()
        result = svc.reindex()
        assert (result["indexedFiles"], result["skippedFiles"]) == (2, 3)  # fig.md, link.md
        assert embedder.calls == embedded + 1  # fig.md's one chunk; link.md's text did not change
        assert [h["path"] for h in svc.search(query="quokka", mode="lexical")["results"]] == ["fig.md"]
        assert svc.store.read_manifest()["chunker_version"] == CHUNKER_VERSION
        assert not svc.indexer.upgrade_pending() and svc.reindex()["indexedFiles"] == 0
    finally:
        svc.shutdown()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_v8_index_gains_the_text_of_one_token_footnotes_in_place_keeping_every_other_vector(
    kb, request, monkeypatch, backend
):
    """Decision 1194: chunker v9 indexes a footnote definition CommonMark reads as a reference
    definition (``[^1]: Smith2020``) as the paragraph it now is. An index v8 wrote is served as it is,
    and its next reindex re-reads only the files with a line opening with ``[^``, embeds only the
    chunks whose text changed, and records v9 once it has."""
    from markdown_it import MarkdownIt

    from local_vector_search_mcp.markdown import incremental, scan
    from local_vector_search_mcp.markdown.document import clear_cache
    from local_vector_search_mcp.markdown.front_matter import front_matter_plugin

    (kb / "paper.md").write_text("# Paper\n\nA claim.[^1]\n\n[^1]: Smith2020quokka\n[^2]: [cited](c.md)\n", "utf-8")
    (kb / "quoted.md").write_text("# Quoted\n\n> [^2]: held by the quote\n", "utf-8")  # not read again
    (kb / "ref.md").write_text("# Ref\n\nA [ref].\n\n[ref]: https://example.org/quokka\n", "utf-8")
    storage = _engine_storage(request, backend)
    embedder = HashEmbedder()
    older = service(kb, "local", embedder=embedder, **storage)
    with monkeypatch.context() as patch:  # what v8 indexed: a footnote definition is no paragraph
        v8 = scan.block_only(MarkdownIt("commonmark").enable("table").use(front_matter_plugin))
        patch.setattr(incremental, "PARSER_HEAD", v8)
        clear_cache()
        older.reindex()
    clear_cache()
    older.store.write_manifest({**older.store.read_manifest(), "chunker_version": "8"})
    older.shutdown()
    embedded = embedder.calls
    svc = service(kb, "local", embedder=embedder, **storage)

    def cited() -> list[str | None]:  # the pointer of the link the footnote's body holds (decision 1157)
        return [ln.anchor and ln.anchor.split("~")[0] for ln in svc.store.links() if ln.destination == "c.md"]

    try:
        assert svc.status_fields()["compatibility"] == {"isCompatible": True, "problems": []}
        assert svc.search(query="Smith2020quokka", mode="lexical")["results"] == []
        assert cited() == [None]
        assert svc.indexer.upgrade_pending()
        files = len(list(kb.rglob("*.md")))
        result = svc.reindex()
        assert (result["indexedFiles"], result["skippedFiles"]) == (1, files - 1)  # paper.md alone
        assert embedder.calls == embedded + 1  # its one chunk
        hits = svc.search(query="Smith2020quokka", mode="lexical")["results"]
        assert [(h["path"], h["pointer"].split("~")[0]) for h in hits] == [("paper.md", "1.p1")]
        assert cited() == ["1.p3"]
        assert svc.store.read_manifest()["chunker_version"] == CHUNKER_VERSION
        assert not svc.indexer.upgrade_pending() and svc.reindex()["indexedFiles"] == 0
    finally:
        svc.shutdown()


def _engine_storage(request: pytest.FixtureRequest, backend: str) -> dict[str, str]:
    """A service's storage settings: none for SQLite (the default), a fresh schema of the test
    PostgreSQL server otherwise."""
    if backend == "sqlite":
        return {}
    pg = request.getfixturevalue("pg_server")
    return {"storage__backend": "postgresql", "storage__url": pg.url, "storage__schema": pg.fresh_schema()}


def _engine_client(root: Path, tmp_path: Path, request: pytest.FixtureRequest, backend: str) -> KbClient:
    """A client of ``root`` on SQLite in ``tmp_path`` or on a fresh schema of the test PostgreSQL server."""
    if backend == "sqlite":
        return client(root, storage=tmp_path / "index.db")
    pg = request.getfixturevalue("pg_server")
    return client(root, storage__backend="postgresql", storage__url=pg.url, storage__schema=pg.fresh_schema())


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_index_that_read_toml_front_matter_as_a_paragraph_is_upgraded_in_place(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """Decision 1026: an index written before it holds a Hugo page's ``+++`` front matter as a
    paragraph (no tags, no fields, the TOML a chunk of body text). Link graph v4 is an in-place
    upgrade: no rebuild, and the next reindex re-reads only the documents opening with ``+++`` (a
    BOM before it or none), whatever their stat says; a page with ``<img`` that v2 re-read is not."""
    from local_vector_search_mcp.index.manifest import LINK_GRAPH_KEY, LINK_GRAPH_VERSION
    from local_vector_search_mcp.markdown import front_matter
    from local_vector_search_mcp.markdown.document import clear_cache

    root = tmp_path / "kb"
    root.mkdir()
    (root / "hugo.md").write_bytes(b'\xef\xbb\xbf+++\ntags = ["secretword"]\n+++\n\n# Hugo\n\nHugo body text.\n')
    (root / "plain.md").write_text('# Plain\n\nBody text <img src="a.png">.\n\n+++\na = 1\n+++\n', "utf-8")
    (root / "yaml.md").write_text("---\ntags: [secretword]\n---\n\n# Yaml\n\nYaml body text.\n", "utf-8")
    kb = _engine_client(root, tmp_path, request, backend)

    def tagged() -> list[str]:
        return sorted(r["path"] for r in kb.search(query="body text", mode="lexical", tags=["secretword"])["results"])

    try:
        with monkeypatch.context() as patch:  # the release before: no TOML fences
            never = re.compile(r"(?!)")
            patch.setattr(front_matter, "_TOML", (never, never))
            clear_cache()
            kb.reindex()
        clear_cache()
        kb.store.write_manifest({**kb.store.read_manifest(), LINK_GRAPH_KEY: "3"})
        assert tagged() == ["yaml.md"]
        assert kb.indexer.compatibility() == []  # taken as it is, no rebuild
        result = kb.reindex()
        assert (result["indexedFiles"], result["skippedFiles"]) == (1, 2)  # hugo.md alone re-read
        assert tagged() == ["hugo.md", "yaml.md"]
        assert kb.store.read_manifest()[LINK_GRAPH_KEY] == LINK_GRAPH_VERSION
        assert kb.reindex()["indexedFiles"] == 0  # upgraded once
    finally:
        kb.store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_index_without_html_a_links_gains_them_in_place(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """Decision 1032: an index of link graph v4 holds no ``href`` link. It is served as it is (no
    rebuild), and the next reindex re-reads, whatever their stat says, only the documents whose
    bytes hold an ``<a`` tag with ``href`` (not a page of ``<img``, ``<abbr>`` or ``<a id>`` anchors
    alone), writes v5 once it has, and reads nothing the time after."""
    from local_vector_search_mcp.dispatch import invoke
    from local_vector_search_mcp.index.manifest import LINK_GRAPH_KEY, LINK_GRAPH_VERSION
    from local_vector_search_mcp.markdown import html_references
    from local_vector_search_mcp.markdown.document import clear_cache

    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text('# A\n\n<p><A class="x" HREF="b.md#b">b</A></p>\n', "utf-8")
    (root / "b.md").write_text("# B\n\nText.\n", "utf-8")
    (root / "c.md").write_text('# C\n\n<a id="c"></a><img src="pic.png"> and <abbr title="b.md">B</abbr>\n', "utf-8")
    kb = _engine_client(root, tmp_path, request, backend)

    def incoming() -> list[tuple[str, str]]:
        out = invoke(kb.ws, "kb_links", {"request": {"path": "b.md", "direction": "incoming"}})
        return [(ln["source"], ln["kind"]) for ln in out["links"]]

    try:
        with monkeypatch.context() as patch:  # the release before: an <img>'s src alone
            patch.setattr(html_references, "_OPENING", re.compile(r"<(img\b)", re.IGNORECASE))
            clear_cache()
            kb.reindex()
        clear_cache()
        kb.store.write_manifest({**kb.store.read_manifest(), LINK_GRAPH_KEY: "4"})
        assert incoming() == []
        assert kb.indexer.compatibility() == []  # taken as it is, no rebuild
        result = kb.reindex()
        assert (result["indexedFiles"], result["skippedFiles"]) == (1, 2)  # a.md alone re-read
        assert incoming() == [("a.md", "href")]
        assert kb.store.read_manifest()[LINK_GRAPH_KEY] == LINK_GRAPH_VERSION
        assert kb.reindex()["indexedFiles"] == 0  # upgraded once
    finally:
        kb.shutdown()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_index_without_srcset_links_gains_them_in_place(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """Decisions 1156, 1157, 1186: an index of link graph v5 holds no link of a ``srcset`` candidate,
    of a footnote read as a reference definition nor of a file an audio or video tag names. It is
    served as it is (no rebuild), and the next reindex re-reads, whatever their stat says, only the
    documents whose bytes hold an ``<img`` or ``<source`` tag with ``srcset``, a footnote definition
    or a media tag with ``src``, ``poster`` or ``data`` (not a page of plain ``<img src>``, ``<a
    href>`` or ``[^1]`` alone), writes v6 once it has, and reads nothing the time after."""
    from local_vector_search_mcp.dispatch import invoke
    from local_vector_search_mcp.index.manifest import LINK_GRAPH_KEY, LINK_GRAPH_VERSION
    from local_vector_search_mcp.markdown import html_references, links
    from local_vector_search_mcp.markdown.document import clear_cache

    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text('# A\n\n<img src="here.png" SRCSET="here.png 1x, gone@2x.png 2x">\n', "utf-8")
    (root / "d.md").write_text("# D\n\nSee[^1].\n\n[^1]: ![chart](chart.png)\n", "utf-8")
    (root / "b.md").write_text("# B\n\n<picture>\n<source srcset='dark.png' media=x>\n</picture>\n", "utf-8")
    (root / "c.md").write_text('# C\n\n<img src="here.png"> <a href="a.md">a</a> srcset in prose[^1]\n', "utf-8")
    (root / "e.md").write_text(
        '# E\n\n<video src="clip.mp4" poster="gone.png">\n<track src=en.vtt>\n</video>\n', "utf-8"
    )
    (root / "f.md").write_text("# F\n\nSee <object data='report.pdf'></object>.\n", "utf-8")
    (root / "here.png").write_bytes(b"png")
    (root / "clip.mp4").write_bytes(b"mp4")
    kb = _engine_client(root, tmp_path, request, backend)

    def missing() -> list[tuple[str, str]]:
        out = invoke(kb.ws, "kb_links", {"request": {}})
        return [(m["source"], m["target"]) for m in out["missingImages"]]

    try:
        with monkeypatch.context() as patch:  # the release before: no srcset read, footnotes as definitions
            patch.setattr(html_references, "srcset_urls", lambda written: [])
            patch.setattr(links, "_footnote_links", lambda *args: {})
            srcset = html_references._attribute("srcset")
            v5 = {
                "img": (("src", html_references._attribute("src")), ("srcset", srcset)),
                "source": (("srcset", srcset),),
            }
            patch.setattr(html_references, "_ATTRIBUTES", {**v5, "a": html_references._ATTRIBUTES["a"]})
            clear_cache()
            kb.reindex()
        clear_cache()
        kb.store.write_manifest({**kb.store.read_manifest(), LINK_GRAPH_KEY: "5"})
        assert missing() == []
        assert kb.indexer.compatibility() == []  # taken as it is, no rebuild
        result = kb.reindex()
        assert (result["indexedFiles"], result["skippedFiles"]) == (5, 1)  # all but c.md re-read
        assert missing() == [
            ("a.md", "gone@2x.png"),
            ("b.md", "dark.png"),
            ("d.md", "chart.png"),
            ("e.md", "gone.png"),
            ("e.md", "en.vtt"),
            ("f.md", "report.pdf"),
        ]
        assert kb.store.read_manifest()[LINK_GRAPH_KEY] == LINK_GRAPH_VERSION == "6"
        assert kb.reindex()["indexedFiles"] == 0  # upgraded once
    finally:
        kb.shutdown()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_index_of_tags_as_written_compares_them_in_nfc_after_the_next_reindex(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """Decision 1129: an index of link graph v5 holds a decomposed tag as written. The next reindex
    re-reads the documents whose bytes hold a decomposed letter (not the others), so a tag typed
    composed finds them."""
    from local_vector_search_mcp.index import port
    from local_vector_search_mcp.index.manifest import LINK_GRAPH_KEY
    from local_vector_search_mcp.markdown.document import clear_cache

    root = tmp_path / "kb"
    root.mkdir()
    (root / "nfd.md").write_text(
        "---\ntags: [cafe\u0301, \u30ab\u3099\u30a4\u30c9]\n---\n# Menu\n\nEspresso, short.\n", "utf-8"
    )
    (root / "plain.md").write_text("---\ntags: [caf\u00e9]\n---\n# Bar\n\nEspresso, long.\n", "utf-8")
    kb = _engine_client(root, tmp_path, request, backend)

    def tagged(tag: str) -> list[str]:
        return sorted(r["path"] for r in kb.search("espresso", mode="lexical", tags=[tag])["results"])

    try:
        with monkeypatch.context() as patch:  # the release before: tags case-folded as written
            patch.setattr(port, "normalize_tag", lambda tag: tag.strip().lstrip("#").casefold())
            clear_cache()
            kb.reindex()
        clear_cache()
        kb.store.write_manifest({**kb.store.read_manifest(), LINK_GRAPH_KEY: "5"})
        assert tagged("caf\u00e9") == ["plain.md"]
        result = kb.reindex()
        assert (result["indexedFiles"], result["skippedFiles"]) == (1, 1)  # nfd.md alone re-read
        assert tagged("caf\u00e9") == ["nfd.md", "plain.md"]
        assert tagged("\u30ac\u30a4\u30c9") == ["nfd.md"]
        assert kb.reindex()["indexedFiles"] == 0
    finally:
        kb.shutdown()
