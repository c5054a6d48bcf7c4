"""The embedding turn (decision 978): callers waiting for it are served in order, and the
background pass gives way to them between batches instead of keeping it while edits stream in."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
from kb_fakes import HashEmbedder, KbClient, make_workspace

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.index.activity import EmbeddingTurn


def test_waiting_callers_are_served_in_the_order_they_came_and_no_one_jumps_the_queue() -> None:
    turn = EmbeddingTurn()
    assert turn.acquire() and turn.locked() and not turn.wanted
    served: list[int] = []

    def wait(n: int) -> None:
        with turn:
            served.append(n)

    waiters = []
    for n in range(3):
        waiters.append(threading.Thread(target=wait, args=(n,)))
        waiters[-1].start()
        while turn._issued < n + 2:  # each takes its ticket before the next starts
            time.sleep(0.001)
    assert turn.wanted
    assert not turn.acquire(blocking=False)  # a background pass being started waits its turn too
    turn.release()
    for waiter in waiters:
        waiter.join(5)
    assert served == [0, 1, 2] and not turn.locked() and not turn.wanted
    assert turn.acquire(blocking=False)
    turn.release()


class SlowEmbedder(HashEmbedder):
    """A model that takes a while per batch, as a real one does on a busy machine."""

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        time.sleep(0.05)
        return super().embed_passages(texts)


def _kb(tmp_path: Path, files: int) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(files):
        (root / f"d{i:03}.md").write_text(f"# Doc {i}\n\nwords of doc {i}\n\nmore words {i}\n", "utf-8")
    return root


def _keep_editing(root: Path, svc: KbClient, stop: threading.Event) -> threading.Thread:
    """Another agent editing all the time: every edit leaves chunks waiting for vectors."""

    def edit() -> None:
        n = 0
        while not stop.is_set():
            path = f"e{n % 40:02}.md"
            (root / path).write_text(f"# Edit {n}\n\nfresh words {n}\n\nand more {n}\n", "utf-8")
            svc.schedule_sync([path])
            n += 1
            time.sleep(0.02)

    thread = threading.Thread(target=edit, daemon=True)
    thread.start()
    return thread


def test_a_reindex_is_not_kept_waiting_by_a_background_pass_while_edits_stream_in(tmp_path: Path) -> None:
    """The background pass embedded "files indexed meanwhile" too, so with edits streaming in it
    never ended, and a kb_reindex waiting for the turn stayed running for minutes."""
    root = _kb(tmp_path, 60)
    svc = KbClient(make_workspace(root, "local", embedder=SlowEmbedder()))
    svc.reindex()
    stop = threading.Event()
    editor = _keep_editing(root, svc, stop)
    try:
        time.sleep(1.0)  # a background pass is running by now, and finds more every batch
        assert svc.ws.activity.embedding.locked()
        started = time.monotonic()
        assert svc.start_reindex()["started"]
        svc.wait_reindex(8)  # without the fix it ends only once the edits stop
        took = time.monotonic() - started
        assert svc.ws.activity.last is not None and svc.ws.activity.last.outcome == "succeeded"
        assert took < 8, took  # a pass of what was pending, not of every edit to come
    finally:
        stop.set()
        editor.join(5)
    svc.ws.indexing.sync.wait_idle(30)
    deadline = time.monotonic() + 30
    while svc.ws.store.pending_vector_count() and time.monotonic() < deadline:
        svc.wait_vectors(1)  # what the edits left is embedded by the passes started after
    assert svc.ws.store.pending_vector_count() == 0
    svc.shutdown()


def test_index_note_embeds_its_own_note_without_waiting_for_everyone_elses(tmp_path: Path) -> None:
    """index_note took the turn after the background pass and then embedded every pending chunk
    of the index, so with edits streaming in its call did not return for minutes."""
    root = _kb(tmp_path, 60)
    (root / "note.md").write_text("# Note\n\nthe note's own words\n", "utf-8")
    ws = make_workspace(root, "local", embedder=SlowEmbedder(), server__toolsets=["kb", "chunks"])
    svc = KbClient(ws)
    svc.reindex()
    stop = threading.Event()
    editor = _keep_editing(root, svc, stop)
    answers: list[dict[str, object]] = []
    call = threading.Thread(target=lambda: answers.append(invoke(ws, "index_note", {"path": "note.md"})))
    try:
        time.sleep(1.0)
        (root / "note.md").write_text("# Note\n\nthe note's new words\n", "utf-8")
        call.start()
        call.join(5)  # without the fix it returns only once the edits stop: never, here
        assert answers and answers[0]["chunkIds"], "index_note still waiting after 5 s"
        assert ws.store.pending_vector_count(["note.md"]) == 0  # its own chunks have their vectors
    finally:
        stop.set()
        editor.join(5)
        if call.is_alive():
            call.join(30)
    svc.shutdown()


def test_a_caller_waits_one_batch_of_a_long_background_pass_not_all_of_it(tmp_path: Path) -> None:
    """The budget alone bounds a pass; giving way is what serves a caller after one batch of a long
    backlog (400 chunks, 0.1 s a batch of 16: 2.5 s) rather than after all of it; and the rest
    is embedded by the pass started once the caller is done."""

    class Slower(HashEmbedder):
        def embed_passages(self, texts: list[str]) -> np.ndarray:
            time.sleep(0.1)
            return super().embed_passages(texts)

    root = tmp_path / "kb"
    root.mkdir()
    (root / "note.md").write_text("# Note\n\nold words\n", "utf-8")
    for i in range(200):
        (root / f"d{i:03}.md").write_text(f"# Doc {i}\n\nwords {i}\n", "utf-8")
    ws = make_workspace(root, "local", embedder=HashEmbedder(), server__toolsets=["kb", "chunks"])
    svc = KbClient(ws)
    svc.reindex()
    svc.use_embedder(Slower())
    for i in range(200):
        (root / f"d{i:03}.md").write_text(f"# Doc {i}\n\nnew {i}\n\n## Two\n\nmore {i}\n", "utf-8")
        ws.indexing.indexer.reconcile(f"d{i:03}.md")
    assert ws.indexing.kick_vectors()
    time.sleep(0.3)
    (root / "note.md").write_text("# Note\n\nnew words\n", "utf-8")
    started = time.monotonic()
    invoke(ws, "index_note", {"path": "note.md"})
    assert time.monotonic() - started < 1.2  # one batch of the pass, then its own: not 2.5 s
    deadline = time.monotonic() + 30
    while ws.store.pending_vector_count() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ws.store.pending_vector_count() == 0  # the backlog the pass left was taken up again
    svc.shutdown()


def test_a_non_blocking_acquire_in_the_gap_after_a_release_does_not_take_a_waiters_turn() -> None:
    turn = EmbeddingTurn()
    turn.acquire()
    order: list[str] = []

    def wait() -> None:
        with turn:
            order.append("waiter")
            time.sleep(0.2)

    waiter = threading.Thread(target=wait)
    waiter.start()
    while not turn.wanted:
        time.sleep(0.001)
    turn.release()
    # the waiter is woken, or holds the turn: either way a pass being started must not get in
    assert not turn.acquire(blocking=False)
    waiter.join(5)
    assert order == ["waiter"]
    assert turn.acquire(blocking=False)
    turn.release()
