"""A path that changes between the sync's look at it and its read is the later state, not a failure.

H26 once saw "targeted re-index failed for one path" after a quick kb_move and move-back: the
sync thread saw the file, the move took it away before the read, and the vanished file was
reported (and kept in kb_status) as a failed re-index. These tests put the change exactly in
that window (a wrapper around the indexer's read, so they do not depend on timing).
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import client

import local_vector_search_mcp.index.indexer as indexer_module


def _in_the_window(monkeypatch: pytest.MonkeyPatch, change: Any) -> list[str]:
    """Run ``change(path)`` once per path right before the indexer reads that path."""
    real = indexer_module.prepare
    seen: list[str] = []

    def racing(root: Path, task: Any, settings: Any, **kwargs: Any) -> Any:
        if task.path not in seen:
            seen.append(task.path)
            change(task.path)
        return real(root, task, settings, **kwargs)

    monkeypatch.setattr(indexer_module, "prepare", racing)
    return seen


def _documents(svc: Any) -> set[str]:
    return set(svc.store.document_states())


def test_file_moved_away_before_the_read_is_a_deletion(kb, monkeypatch, caplog):
    svc = client(kb)
    svc.reindex()
    (kb / "guide.md").write_text("# Guide\n\nrewritten before the move\n", encoding="utf-8")
    seen = _in_the_window(monkeypatch, lambda rel: (kb / rel).rename(kb / "elsewhere.txt"))
    with caplog.at_level(logging.WARNING):
        svc.schedule_sync(["guide.md"])
        assert svc.sync.wait_idle(10)
    assert seen == ["guide.md"]
    assert svc.status_fields()["synchronization"] is None
    assert "guide.md" not in _documents(svc)
    assert not [r for r in caplog.records if "re-index failed" in r.getMessage()]
    svc.shutdown()


def test_move_and_move_back_between_look_and_read(kb, monkeypatch, caplog):
    """H26's case: kb_move guide.md -> moved.md queues both paths; the move back happens after
    the sync saw moved.md and before it read it."""
    svc = client(kb)
    svc.reindex()
    (kb / "guide.md").rename(kb / "moved.md")  # the first move, on disk

    def move_back(rel: str) -> None:
        if rel == "moved.md":
            (kb / "moved.md").rename(kb / "guide.md")

    seen = _in_the_window(monkeypatch, move_back)
    with caplog.at_level(logging.WARNING):
        svc.schedule_sync(["guide.md", "moved.md"])  # what the first kb_move queues
        assert svc.sync.wait_idle(10)
        svc.schedule_sync(["moved.md", "guide.md"])  # what the move back queues
        assert svc.sync.wait_idle(10)
    assert "moved.md" in seen
    assert svc.status_fields()["synchronization"] is None
    assert "guide.md" in _documents(svc) and "moved.md" not in _documents(svc)
    assert svc.search(query="strong_count", mode="lexical")["results"][0]["path"] == "guide.md"
    assert not [r for r in caplog.records if "re-index failed" in r.getMessage()]
    svc.shutdown()


def test_file_replaced_by_a_folder_before_the_read_is_a_deletion(kb, monkeypatch, caplog):
    svc = client(kb)
    svc.reindex()
    (kb / "guide.md").write_text("# Guide\n\nabout to become a folder\n", encoding="utf-8")

    def to_folder(rel: str) -> None:
        (kb / rel).unlink()
        (kb / rel).mkdir()

    _in_the_window(monkeypatch, to_folder)
    with caplog.at_level(logging.WARNING):
        svc.schedule_sync(["guide.md"])
        assert svc.sync.wait_idle(10)
    assert svc.status_fields()["synchronization"] is None
    assert "guide.md" not in _documents(svc)
    assert svc.status_fields()["project"]["unreadableFiles"] == 0
    assert not [r for r in caplog.records if "re-index failed" in r.getMessage()]
    shutil.rmtree(kb / "guide.md")
    svc.shutdown()


def _synced_with_an_unreadable_file(kb):
    """A service whose targeted sync of a new, undecodable ``bad.md`` has run."""
    svc = client(kb)
    svc.reindex()
    (kb / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not utf-8\n")
    svc.schedule_sync(["bad.md"])
    assert svc.sync.wait_idle(10)
    return svc


def test_a_file_that_really_cannot_be_read_is_still_reported(kb, monkeypatch):
    """The other side: a file that is there and unreadable stays a reported failure."""
    svc = _synced_with_an_unreadable_file(kb)
    status = svc.status_fields()
    assert status["synchronization"]["paths"] == ["bad.md"]
    assert status["project"]["unreadableFiles"] == 1
    svc.shutdown()


# --- tool calls whose document another program moves or deletes mid-call (decision 325) -------------


def _writable(kb: Path) -> Any:
    from kb_fakes import make_workspace

    return make_workspace(kb, knowledge_base__allow_writes=True)


def _sha(ws: Any, rel: str) -> str:
    from local_vector_search_mcp.dispatch import invoke

    return str(invoke(ws, "kb_read", {"request": {"path": rel}})["sourceHash"])


def _call(ws: Any, tool: str, request: dict[str, Any]) -> str:
    from local_vector_search_mcp.dispatch import invoke
    from local_vector_search_mcp.errors import KbError

    try:
        invoke(ws, tool, {"request": request})
    except KbError as exc:
        return exc.code
    return "OK"


def test_move_whose_source_is_deleted_mid_call_is_not_found(kb, monkeypatch):
    import os

    ws = _writable(kb)
    sha = _sha(ws, "guide.md")
    real_link = os.link

    def deleted_first(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if str(src).endswith("guide.md"):
            os.unlink(src)  # another program deletes it between the hash check and the link
        real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", deleted_first)
    code = _call(ws, "kb_move", {"sourcePath": "guide.md", "targetPath": "moved.md", "expectedSourceHash": sha})
    monkeypatch.undo()
    assert code == "NOT_FOUND"
    assert not (kb / "moved.md").exists()
    ws.close()


def test_delete_whose_file_vanishes_mid_call_is_not_found(kb, monkeypatch):
    import os

    ws = _writable(kb)
    sha = _sha(ws, "guide.md")
    real_unlink = os.unlink

    def vanished_first(path: Any, *args: Any, **kwargs: Any) -> None:
        if str(path).endswith("/guide.md") and os.path.exists(path):
            real_unlink(path)  # another program got there first
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", vanished_first)
    code = _call(ws, "kb_delete", {"path": "guide.md", "expectedSourceHash": sha})
    monkeypatch.undo()
    assert code == "NOT_FOUND"
    ws.close()


def test_move_whose_linking_note_is_deleted_mid_rewrite_is_a_conflict(kb, monkeypatch):
    import local_vector_search_mcp.writer as writer

    (kb / "notes" / "linker.md").write_text("# Linker\n\nSee [guide](../guide.md).\n", encoding="utf-8")
    ws = _writable(kb)
    sha = _sha(ws, "guide.md")
    real_read = writer._read
    reads: list[str] = []

    def deleted_after_check(path: Path) -> bytes | None:
        data = real_read(path)
        if path.name == "linker.md":
            reads.append(path.name)
            if len(reads) == 2:  # the apply loop's check: the file goes right after it
                path.unlink()
        return data

    monkeypatch.setattr(writer, "_read", deleted_after_check)
    request = {"sourcePath": "guide.md", "targetPath": "moved.md", "expectedSourceHash": sha, "updateLinks": True}
    code = _call(ws, "kb_move", request)
    monkeypatch.undo()
    assert code == "CONFLICT"
    assert (kb / "guide.md").exists() and not (kb / "moved.md").exists()
    ws.close()


def test_patch_whose_file_is_deleted_before_the_write_is_not_found(kb, monkeypatch):
    import os

    import local_vector_search_mcp.writer as writer

    ws = _writable(kb)
    real_read = writer._read
    calls: list[Path] = []

    def deleted_after_read(path: Path) -> bytes | None:
        data = real_read(path)
        if path.name == "guide.md":
            calls.append(path)
            if len(calls) == 2:  # the commit's check passed; the file goes before the write
                os.unlink(path)
        return data

    monkeypatch.setattr(writer, "_read", deleted_after_read)
    op = {"kind": "insert_after", "pointer": "document", "markdown": "Appended."}
    code = _call(ws, "kb_patch", {"path": "guide.md", "operations": [op]})
    monkeypatch.undo()
    assert code == "NOT_FOUND"
    assert not (kb / "guide.md").exists()  # not brought back by the edit
    ws.close()


def test_a_transient_sync_failure_is_retried_on_its_own(kb, monkeypatch, caplog):
    """A targeted sync that failed for a passing reason (the database busy with another server,
    an I/O error) is retried after a delay; no further edit or reindex is needed (decision 326)."""
    svc = client(kb)
    svc.reindex()
    indexer_type = type(svc.indexer)
    real = indexer_type.reconcile
    failures: list[str] = []

    def busy_once(self: Any, path: str) -> str:
        if not failures:
            failures.append(path)
            raise RuntimeError("database is locked")
        return str(real(self, path))

    monkeypatch.setattr(indexer_type, "reconcile", busy_once)
    (kb / "guide.md").write_text("# Guide\n\nretriedword after a busy database\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        svc.schedule_sync(["guide.md"])
        assert svc.sync.wait_idle(10)
        assert svc.status_fields()["synchronization"]["paths"] == ["guide.md"]  # failed, shown
        deadline = time.monotonic() + 30
        while svc.status_fields()["synchronization"] is not None and time.monotonic() < deadline:
            time.sleep(0.05)
    assert failures == ["guide.md"]
    assert svc.status_fields()["synchronization"] is None
    assert svc.search(query="retriedword", mode="lexical")["results"][0]["path"] == "guide.md"
    svc.shutdown()


def test_a_failed_sync_is_shown_in_the_products_words(kb, monkeypatch, caplog):
    """kb_status shows a failed targeted sync with the exception's type, without the server
    machine's absolute paths (decision 350); the log keeps them for the operator."""
    svc = client(kb)
    svc.reindex()
    indexer_type = type(svc.indexer)
    outside = "/var/lib/other-place/cache.tmp"

    def failing(self: Any, path: str) -> str:
        raise OSError(f"[Errno 5] Input/output error: '{kb / path}' (copy in '{outside}')")

    monkeypatch.setattr(indexer_type, "reconcile", failing)
    monkeypatch.setattr(svc.sync, "_retry_delays", ())
    with caplog.at_level(logging.WARNING):
        svc.schedule_sync(["guide.md"])
        assert svc.sync.wait_idle(10)
    error = svc.status_fields()["synchronization"]["lastError"]
    assert error == (
        "guide.md: OSError: [Errno 5] Input/output error: 'guide.md' (copy in '<a path outside the project root>')"
    )
    assert str(kb) not in error and outside not in error
    assert any(str(kb / "guide.md") in r.getMessage() for r in caplog.records)
    svc.shutdown()


def test_an_unreadable_file_is_not_retried(kb, monkeypatch):
    svc = _synced_with_an_unreadable_file(kb)
    assert svc.sync._attempts == {}
    svc.shutdown()


# --- kb_create whose target folder another program removes mid-call (decision 345) -----------------


def _created(ws: Any, rel: str, markdown: str) -> str:
    from local_vector_search_mcp.dispatch import invoke
    from local_vector_search_mcp.errors import KbError

    try:
        result = invoke(ws, "kb_create", {"request": {"path": rel, "markdown": markdown}})
    except KbError as exc:
        return exc.code
    assert result["path"] == rel
    return "OK"


def test_create_whose_new_folder_is_removed_before_the_write_makes_it_again(kb, monkeypatch):
    """kb_create makes missing folders; one removed between that step and the write (a `git clean`,
    an editor tidying empty folders) is made again and the call succeeds."""
    import local_vector_search_mcp.writer as writer
    from local_vector_search_mcp.pinning import unpinned

    ws = _writable(kb)
    real = writer._write_temp
    removed: list[Path] = []

    def removed_first(intent: Any, target: Path, data: bytes, mode: int | None) -> Path:
        if not removed:
            removed.append(unpinned(target).parent)  # the target is named through its open folder (674)
            shutil.rmtree(kb / "fresh")  # the folders kb_create has just made
        return real(intent, target, data, mode)

    monkeypatch.setattr(writer, "_write_temp", removed_first)
    code = _created(ws, "fresh/deep/note.md", "# Note\n\nmade twice\n")
    monkeypatch.undo()
    assert removed == [kb / "fresh" / "deep"]
    assert code == "OK"
    assert (kb / "fresh" / "deep" / "note.md").read_text(encoding="utf-8") == "# Note\n\nmade twice\n"
    assert sorted(p.name for p in (kb / "fresh" / "deep").iterdir()) == ["note.md"]  # no temp file left
    ws.close()


def test_create_whose_folder_is_removed_between_temp_and_link_makes_it_again(kb, monkeypatch):
    import os

    ws = _writable(kb)
    real_link = os.link
    links: list[str] = []

    def removed_first(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        links.append(str(dst))
        if len(links) == 1:
            shutil.rmtree(kb / "notes")  # an existing folder, with its temporary file in it
        real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", removed_first)
    code = _created(ws, "notes/new.md", "# New\n")
    monkeypatch.undo()
    assert len(links) == 2
    assert code == "OK"
    assert sorted(p.name for p in (kb / "notes").iterdir()) == ["new.md"]
    ws.close()


def test_create_whose_folder_keeps_being_removed_is_a_conflict_and_leaves_nothing(kb, monkeypatch):
    import local_vector_search_mcp.writer as writer

    ws = _writable(kb)
    real = writer._write_temp
    calls: list[int] = []

    def always_removed(intent: Any, target: Path, data: bytes, mode: int | None) -> Path:
        calls.append(1)
        shutil.rmtree(kb / "fresh")
        return real(intent, target, data, mode)

    monkeypatch.setattr(writer, "_write_temp", always_removed)
    code = _created(ws, "fresh/note.md", "# Note\n")
    monkeypatch.undo()
    assert code == "CONFLICT"
    assert len(calls) == writer.MAX_ATTEMPTS
    assert not (kb / "fresh").exists()
    ws.close()
