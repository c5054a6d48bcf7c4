from __future__ import annotations

import os
import threading
import time

import pytest
from kb_fakes import client, make_workspace

from local_vector_search_mcp.index.indexer import UnreadableSource
from local_vector_search_mcp.index.sync import SyncQueue, SyncState


def test_queue_dedups_and_keeps_newer_generation():
    seen: list[str] = []
    gate = threading.Event()

    def reconcile(path):
        gate.wait(5)
        seen.append(path)

    q = SyncQueue(reconcile)
    q.schedule(["a.md", "b.md", "a.md"])
    assert q.status().pending_files == 2
    gate.set()
    assert q.wait_idle(5)
    assert seen == ["a.md", "b.md"]
    assert q.status() is None
    q.stop()


def test_failure_is_kept_and_later_items_continue():
    def reconcile(path):
        if path == "bad.md":
            raise RuntimeError("disk on fire")

    q = SyncQueue(reconcile)
    q.schedule(["bad.md", "good.md"])
    assert q.wait_idle(5)
    status = q.status()
    assert status == SyncState(0, ["bad.md"], "bad.md: disk on fire", {"bad.md": "disk on fire"})
    q.stop()


def test_a_path_failing_the_same_way_again_warns_once(caplog):
    """Every watcher event on a file that stays unreadable re-runs it; kb_status already shows the
    failure, so the log warns when it starts or changes, not on each repeat."""
    outcome = {"bad.md": "cannot be read"}

    def reconcile(path):
        if outcome[path]:
            raise RuntimeError(outcome[path])

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]

    q = SyncQueue(reconcile)
    caplog.set_level("DEBUG", logger="local_vector_search_mcp.index.sync")
    for _ in range(3):
        q.schedule(["bad.md"])
        assert q.wait_idle(5)
    assert warnings() == ["targeted re-index failed for one path: cannot be read"]
    outcome["bad.md"] = "something else"
    q.schedule(["bad.md"])
    assert q.wait_idle(5)
    assert len(warnings()) == 2 and warnings()[-1].endswith("something else")
    outcome["bad.md"] = ""  # mended: the next failure is a new one
    q.schedule(["bad.md"])
    assert q.wait_idle(5) and q.status() is None
    outcome["bad.md"] = "something else"
    q.schedule(["bad.md"])
    assert q.wait_idle(5)
    assert len(warnings()) == 3
    q.stop()


def test_targeted_sync_indexes_and_deletes(kb):
    svc = client(kb)
    svc.reindex()
    (kb / "new.md").write_text("# New\n\nfreshly written words\n", encoding="utf-8")
    (kb / "guide.md").rename(kb / "moved.md")
    svc.schedule_sync(["new.md", "guide.md", "moved.md", "../escape.md", "notes/missing.md"])
    assert svc.sync.wait_idle(10)
    assert svc.search(query="freshly", mode="lexical")["results"][0]["path"] == "new.md"
    assert svc.search(query="strong_count", mode="lexical")["results"][0]["path"] == "moved.md"
    assert svc.status_fields()["synchronization"] is None


def test_a_same_size_rewrite_within_one_clock_tick_is_synced(kb):
    """A coarse file-system clock (Linux before 6.13, HFS+, FAT) gives a rewrite within one tick
    the old mtime; with the same size its stat equals the indexed one. A targeted sync (an edit, a
    watcher event) compares the bytes, not the stat."""
    svc = client(kb)
    svc.reindex()
    note = kb / "tick.md"
    note.write_text("# Tick\n\nalpha words here\n", encoding="utf-8")
    svc.schedule_sync(["tick.md"])
    assert svc.sync.wait_idle(10)
    stamp = note.stat().st_mtime_ns
    note.write_text("# Tick\n\ngamma words here\n", encoding="utf-8")  # same size
    os.utime(note, ns=(stamp, stamp))  # as a coarse clock leaves it
    svc.schedule_sync(["tick.md"])
    assert svc.sync.wait_idle(10)
    assert [h["path"] for h in svc.search(query="gamma", mode="lexical")["results"]] == ["tick.md"]
    assert svc.search(query="alpha", mode="lexical")["results"] == []


def test_watcher_picks_up_changes_within_a_second(kb):
    svc = client(kb)
    svc.reindex()
    svc.start_watching()  # the watches are in place when it returns: a write right after is seen
    try:
        start = time.monotonic()
        (kb / "notes" / "watched.md").write_text("# W\n\nzebra crossing\n", encoding="utf-8")
        (kb / "ignored.txt").write_text("zebra", encoding="utf-8")
        found = False
        while time.monotonic() - start < 5:
            if svc.search(query="zebra", mode="lexical")["results"]:
                found = True
                break
            time.sleep(0.05)
        assert found
        (kb / "notes" / "watched.md").rename(kb / "notes" / "renamed.md")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            paths = [r["path"] for r in svc.search(query="zebra", mode="lexical")["results"]]
            if paths == ["notes/renamed.md"]:
                break
            time.sleep(0.05)
        assert paths == ["notes/renamed.md"]
    finally:
        svc.shutdown()


def test_a_watched_path_is_queued_before_it_leaves_the_debounce_set(tmp_path):
    """Whoever looks at the debounce set and then the queue (a test waiting for quiet) must not
    find a path in neither: it was taken out of the set first and queued a moment later."""
    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    queue = SyncQueue(lambda path: None)
    watcher = MarkdownWatcher(tmp_path, queue, lambda rel: True, lambda prefix: [], debounce=0.05)
    still_pending: list[bool] = []
    real_schedule = queue.schedule

    def schedule(paths):
        paths = list(paths)
        still_pending.extend(path in watcher._pending for path in paths)
        real_schedule(paths)

    queue.schedule = schedule
    watcher.start()
    try:
        (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
        deadline = time.monotonic() + 30
        while not still_pending and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        watcher.stop()
        queue.stop()
    assert still_pending and all(still_pending)


def test_watcher_start_failure_is_reported(kb, monkeypatch):
    import watchdog.observers

    class Broken:
        def __init__(self, *a, **k):
            raise OSError("inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", Broken)
    svc = client(kb)
    svc.start_watching()
    status = svc.status_fields()["synchronization"]
    assert status["paths"] == ["<watcher>"] and "inotify" in status["lastError"]


def _searchable_within(svc, query: str, seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    paths: list[str] = []
    while time.monotonic() < deadline:
        paths = [r["path"] for r in svc.search(query=query, mode="lexical")["results"]]
        if paths:
            break
        time.sleep(0.05)
    return paths


def test_a_change_no_event_reported_is_found_by_the_periodic_compare(kb, monkeypatch, caplog):
    """A folder whose edits raise no file event (a network share, a container's bind mount, a
    watch the system refused, decision 649's lost watch): the watched index compares every file
    now and then and indexes what changed, saying so in the log (decision 655)."""
    import logging

    from local_vector_search_mcp.index import indexing
    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    monkeypatch.setattr(indexing, "AUDIT_SECONDS", 0.5)
    monkeypatch.setattr(MarkdownWatcher, "_on_event", lambda self, event: None)  # hears nothing
    svc = client(kb)
    svc.reindex()
    caplog.set_level(logging.WARNING, logger=indexing.__name__)
    svc.start_watching()
    try:
        (kb / "notes" / "unheard.md").write_text("# Unheard\n\nplatypus sightings\n", encoding="utf-8")
        assert _searchable_within(svc, "platypus", 10) == ["notes/unheard.md"]
    finally:
        svc.shutdown()
    assert any("changed without a file event" in r.getMessage() for r in caplog.records)


def test_a_watcher_that_could_not_start_still_compares_now_and_then(kb, monkeypatch):
    import watchdog.observers

    from local_vector_search_mcp.index import indexing

    class Broken:
        def __init__(self, *a, **k):
            raise OSError("inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", Broken)
    monkeypatch.setattr(indexing, "AUDIT_SECONDS", 0.5)
    svc = client(kb)
    svc.reindex()
    svc.start_watching()
    try:
        assert "inotify" in svc.status_fields()["synchronization"]["lastError"]
        (kb / "notes" / "unwatched.md").write_text("# Unwatched\n\nokapi tracks\n", encoding="utf-8")
        assert _searchable_within(svc, "okapi", 10) == ["notes/unwatched.md"]
    finally:
        svc.shutdown()


def test_the_periodic_compare_takes_at_most_a_hundredth_of_the_time(kb, monkeypatch):
    """On a tree whose compare takes long (a slow disk, a huge tree) the compares space out: at
    least ``AUDIT_COST_SHARE`` times the last one's duration between two (decision 655)."""
    from local_vector_search_mcp.index import indexing

    svc = client(kb)
    svc.reindex()
    ix = svc.ws.indexing
    started: list[bool] = []
    monkeypatch.setattr(ix, "start_catch_up", lambda at_start=False, audit=False: started.append(audit))
    ix._compare_seconds = 9.0
    ix._next_audit = time.monotonic() - 1  # due
    ix._audit_if_due()
    assert started == [True]
    assert ix._next_audit - time.monotonic() > 9.0 * indexing.AUDIT_COST_SHARE - 5
    ix._audit_if_due()  # not due again
    assert started == [True]


def test_a_targeted_sync_reads_only_its_own_documents_state(kb, monkeypatch):
    """Reading every document's state per synced path made following a checkout grow with the
    index (3.0 ms of each sync at 3,000 documents; decision 340): a sync asks for its own path only,
    and leaves the index as a full reindex of the disk would."""
    ws = make_workspace(kb)
    ws.indexing.reindex("all")
    (kb / "new.md").write_text("# New\n\nfreshly written words\n", encoding="utf-8")
    (kb / "guide.md").write_text("# Guide\n\nrewritten guide words\n", encoding="utf-8")
    (kb / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not text\n")
    gone = sorted(ws.store.document_states())[-1]
    (kb / gone).unlink()

    def every_state() -> None:
        raise AssertionError("a targeted sync read every document's state")

    monkeypatch.setattr(ws.store, "document_states", every_state)
    indexer = ws.indexing.indexer
    assert indexer.reconcile("new.md") == "indexed"
    assert indexer.reconcile("guide.md") == "indexed"
    assert indexer.reconcile("guide.md") == "unchanged"
    assert indexer.reconcile(gone) == "deleted"
    with pytest.raises(UnreadableSource):
        indexer.reconcile("bad.md")
    monkeypatch.undo()
    synced = {p: s.source_hash for p, s in ws.store.document_states().items()}
    unreadable = ws.store.unreadable_files()
    ws.close()
    fresh = make_workspace(kb)
    fresh.indexing.reindex("all", force=True)
    assert synced == {p: s.source_hash for p, s in fresh.store.document_states().items()}
    assert unreadable.keys() == fresh.store.unreadable_files().keys() == {"bad.md"}
    fresh.close()


def test_a_folder_tree_made_at_once_raises_no_watchdog_warning(tmp_path):
    """watchdog registers a folder made with its subfolders twice (the walk of the new folder, then
    the subfolders' own create events) and warns "Callback with id ... already exists", with the
    repr of every watch in the text: harmless, and kilobytes on the server's stderr each time."""
    import warnings

    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    synced: list[str] = []
    queue = SyncQueue(synced.append)
    watcher = MarkdownWatcher(tmp_path, queue, lambda rel: True, lambda prefix: [], debounce=0.05)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        watcher.start()
        try:
            for burst in range(3):  # the race is the kernel's and the walk's: a few bursts meet it
                for i in range(300):
                    os.makedirs(tmp_path / f"b{burst}" / f"t{i}" / "a" / "b" / "c", exist_ok=True)
                (tmp_path / f"b{burst}" / "last.md").write_text("# Last\n", encoding="utf-8")
                deadline = time.monotonic() + 30  # the watcher has seen the whole tree once it queues the file
                while f"b{burst}/last.md" not in synced and time.monotonic() < deadline:
                    time.sleep(0.02)
        finally:
            watcher.stop()
            queue.stop()
    assert [str(w.message)[:60] for w in caught if "already exists" in str(w.message)] == []


def test_a_folder_moved_out_and_straight_back_in_is_watched_under_its_new_name(tmp_path):
    """A folder moved out of the root and back in under another name before watchdog pairs the
    first move (it holds an unpaired move-out for 0.5 s) must stay watched, under the new name.
    watchdog 6.0 and 7.0 went on reporting its files under the old name; 7.1.1 dropped its watch
    when the held move-out came through, so later saves in it were never heard (decision 649)."""
    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "guides").mkdir(parents=True)
    outside.mkdir()
    (root / "guides" / "n1.md").write_text("# N1\n", encoding="utf-8")
    synced: list[str] = []
    queue = SyncQueue(synced.append)
    watcher = MarkdownWatcher(root, queue, lambda rel: True, lambda prefix: [], debounce=0.05)
    watcher.start()
    try:
        (root / "guides").rename(outside / "guides")
        (outside / "guides").rename(root / "guides-back")
        time.sleep(1.0)  # the held move-out has come through
        (root / "guides-back" / "later.md").write_text("# Later\n", encoding="utf-8")
        deadline = time.monotonic() + 10
        while "guides-back/later.md" not in synced and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        watcher.stop()
        queue.stop()
    assert "guides-back/later.md" in synced
    assert "guides/later.md" not in synced


def test_a_change_waiting_for_its_debounce_is_pending_in_the_status(tmp_path):
    """An agent that saves a file itself and polls kb_status until synchronization is null, then
    searches, must not get the old text: a path the watcher heard but holds for its debounce is
    pending too (decision 740). Before, status() saw only the sync queue, so it said null for the
    first 0.4-0.55 s after every external save while search still returned the old text."""
    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    reconciled: list[str] = []
    queue = SyncQueue(reconciled.append)
    # a debounce far longer than the poll: the path can only be seen while it waits for it
    watcher = MarkdownWatcher(tmp_path, queue, lambda rel: True, lambda prefix: [], debounce=60)
    watcher.start()
    try:
        (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
        deadline = time.monotonic() + 30
        while queue.status() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        state = queue.status()
        assert state is not None, "a change the watcher holds was not pending in the status"
        assert (state.pending_files, state.paths, state.last_error) == (1, ["a.md"], None)
        assert queue.pending() == ["a.md"]
        assert reconciled == []  # still waiting: nothing was synced yet
    finally:
        watcher.stop()
        queue.stop()


@pytest.mark.parametrize("reindex_starts", [True, False])
def test_many_paths_settling_at_once_start_one_reindex(tmp_path, reindex_starts):
    """A folder of notes renamed, a checkout, an unzip: more paths settling at once than the
    start's catch-up syncs one by one start one `changed` reindex instead (decision 741); when
    one is already running (it may have listed the tree before these events) they are synced."""
    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    reconciled: list[str] = []
    started: list[int] = []
    queue = SyncQueue(reconciled.append)

    def on_many(count: int) -> bool:
        started.append(count)
        return reindex_starts

    watcher = MarkdownWatcher(
        tmp_path, queue, lambda rel: True, lambda prefix: [], debounce=0.3, bulk_limit=5, on_many=on_many
    )
    watcher.start()
    try:
        (tmp_path / "one.md").write_text("# One\n", encoding="utf-8")  # alone: synced
        assert queue_settles(queue, watcher, lambda: reconciled == ["one.md"])
        folder = tmp_path / "many"
        folder.mkdir()
        for i in range(8):
            (folder / f"n{i}.md").write_text(f"# N{i}\n", encoding="utf-8")
        assert queue_settles(queue, watcher, lambda: bool(started) and not watcher.waiting())
    finally:
        watcher.stop()
        queue.stop()
    assert started == [8]
    expected = [] if reindex_starts else [f"many/n{i}.md" for i in range(8)]
    assert sorted(reconciled[1:]) == expected


def queue_settles(queue, watcher, done, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done() and queue.wait_idle(0.05):
            return True
        time.sleep(0.05)
    return False


def test_a_failure_nothing_retries_is_failed_not_pending():
    """Decision 782: a path whose sync failed for good stayed counted in `pendingFiles`, so an agent
    told to wait for a settled index waited for ever behind one unreadable file."""
    gate = threading.Event()

    def reconcile(path):
        if path == "bad.md":
            raise UnreadableSource(path, "'bad.md' is not a regular file (a FIFO).")
        gate.wait(5)

    q = SyncQueue(reconcile)
    q.schedule(["bad.md", "slow.md"])
    deadline = time.monotonic() + 5
    while "bad.md" not in q.failed() and time.monotonic() < deadline:
        time.sleep(0.01)
    busy = q.status()
    assert busy is not None and busy.pending_files == 1 and busy.paths == ["bad.md", "slow.md"]
    assert busy.failed == {"bad.md": "'bad.md' is not a regular file (a FIFO)."}
    gate.set()
    assert q.wait_idle(5)
    settled = q.status()
    assert settled == SyncState(
        0,
        ["bad.md"],
        "bad.md: 'bad.md' is not a regular file (a FIFO).",
        {"bad.md": "'bad.md' is not a regular file (a FIFO)."},
    )
    q.stop()


def test_a_failure_waiting_for_its_retry_is_still_pending():
    attempts: list[str] = []

    def reconcile(path):
        attempts.append(path)
        if len(attempts) == 1:
            raise RuntimeError("database is locked")

    q = SyncQueue(reconcile, retryable=lambda exc: True, retry_delays=(0.3,))
    q.schedule(["busy.md"])
    assert q.wait_idle(5)
    waiting = q.status()  # its retry is scheduled: the path is not settled yet
    assert waiting is not None and waiting.pending_files == 1 and waiting.failed == {}
    deadline = time.monotonic() + 5
    while q.status() is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert q.status() is None and attempts == ["busy.md", "busy.md"]
    q.stop()


def test_a_fifo_in_the_knowledge_base_leaves_nothing_pending(kb):
    """The service end to end: the FIFO is failed in `synchronization`, listed unreadable in
    `project`, and `pendingFiles` reaches 0 (the agent's wait ends)."""
    svc = client(kb)
    svc.reindex()
    os.mkfifo(kb / "pipe.md")
    svc.schedule_sync(["pipe.md"])
    assert svc.sync.wait_idle(10)
    status = svc.status_fields()
    sync = status["synchronization"]
    assert sync["pendingFiles"] == 0 and sync["paths"] == ["pipe.md"]
    assert sync["failedFiles"] == 1 and [f["path"] for f in sync["failed"]] == ["pipe.md"]
    assert "not a regular file" in sync["failed"][0]["reason"]
    assert [u["path"] for u in status["project"]["unreadable"]] == ["pipe.md"]
    (kb / "pipe.md").unlink()
    svc.schedule_sync(["pipe.md"])
    assert svc.sync.wait_idle(10)
    assert svc.status_fields()["synchronization"] is None
    svc.shutdown()


def test_rapid_saves_of_one_file_coalesce_into_one_sync_after_quiet(tmp_path):
    """Contract 9.4: a path is scheduled once no new event arrived for the debounce (400 ms), so a
    burst of saves (an editor's autosave, a generator writing line by line) is one targeted sync,
    queued only after the burst, and an excluded or non-Markdown path is never queued."""
    from local_vector_search_mcp.index.watcher import DEBOUNCE_SECONDS, MarkdownWatcher

    queue = SyncQueue(lambda path: None)
    watcher = MarkdownWatcher(
        tmp_path, queue, lambda rel: rel.endswith(".md") and not rel.startswith("private/"), lambda prefix: []
    )
    scheduled: list[tuple[float, str]] = []
    real_schedule = queue.schedule

    def schedule(paths):
        paths = list(paths)
        scheduled.extend((time.monotonic(), path) for path in paths)
        real_schedule(paths)

    queue.schedule = schedule
    (tmp_path / "private").mkdir()
    watcher.start()
    try:
        for n in range(8):  # 8 saves 0.05 s apart: each comes long before the last one's debounce ends
            (tmp_path / "a.md").write_text(f"# A\n\nsave {n}\n", encoding="utf-8")
            (tmp_path / "private" / "p.md").write_text(f"save {n}\n", encoding="utf-8")
            (tmp_path / "notes.txt").write_text(f"save {n}\n", encoding="utf-8")
            time.sleep(0.05)
        last_save = time.monotonic()
        deadline = last_save + 10
        while not scheduled and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(1.0)  # long enough for any second scheduling to show
    finally:
        watcher.stop()
        queue.stop()
    assert [path for _, path in scheduled] == ["a.md"]
    assert scheduled[0][0] >= last_save + DEBOUNCE_SECONDS - 0.15  # after the quiet, not during the burst


def test_watchdogs_stopping_race_is_not_logged_as_an_error(tmp_path, caplog):
    """watchdog's emitter logs an ERROR when it reads an event while its observer stops ("called
    when the thread is inactive"): its own shutdown race, which put an error into a server's log.
    A running watcher filters exactly that message; other errors of that logger still show."""
    import logging

    from local_vector_search_mcp.index.watcher import EMITTER_LOGGER, MarkdownWatcher

    queue = SyncQueue(lambda rel: None)
    watcher = MarkdownWatcher(tmp_path, queue, lambda rel: True, lambda prefix: [], debounce=0.05)
    watcher.start()
    try:
        with caplog.at_level(logging.ERROR, logger=EMITTER_LOGGER):
            logging.getLogger(EMITTER_LOGGER).error("InotifyEmitter.queue_events() called when the thread is inactive")
            logging.getLogger(EMITTER_LOGGER).error("some other inotify failure")
    finally:
        watcher.stop()
        queue.stop()
    assert [r.getMessage() for r in caplog.records if r.name == EMITTER_LOGGER] == ["some other inotify failure"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the crash made here
def test_a_watcher_whose_reader_thread_died_is_restarted_and_compares(kb, caplog):
    """Decision 981 (session 28 sweep): watchdog's inotify reader thread died on a KeyError when a
    watched file was swapped for a folder and back, while the observer's threads lived on; the
    server never heard of another edit and kb_status said nothing."""
    svc = client(kb)
    svc.reindex()
    svc.start_watching()
    try:
        reader = svc.ws.indexing.watcher._observer._inotify_fd  # the thread every watch's events come through

        def crash(event: object) -> None:
            raise KeyError(b"/a/watch/that/was/never/there")  # as _remove_watch_internally raised

        reader.handle_event = crash
        (kb / "wake.txt").write_text("an event the reader dies on", encoding="utf-8")
        reader.join(5)
        assert not reader.is_alive()  # dead: every event is lost from here
        (kb / "notes" / "after.md").write_text("# After\n\nwalrus tusks\n", encoding="utf-8")
        assert _searchable_within(svc, "walrus", 10) == ["notes/after.md"]
        assert "restarting it" in caplog.text
        (kb / "notes" / "later.md").write_text("# Later\n\nnarwhal horns\n", encoding="utf-8")
        assert _searchable_within(svc, "narwhal", 5) == ["notes/later.md"]  # the new observer hears
    finally:
        svc.shutdown()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the crash made here
def test_a_watcher_stopped_while_it_restarts_leaves_no_observer_running(tmp_path):
    """Review of 981: stop() (the server shutting down) while the watcher replaced a dead observer
    skipped the new one, which then ran on with its reader thread and inotify descriptor."""
    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("x", encoding="utf-8")
    watcher = MarkdownWatcher(root, SyncQueue(lambda path: None), lambda rel: True, lambda prefix: [])
    watcher.start()
    old = watcher._observer
    real_stop, in_restart = old.stop, threading.Event()

    def slow_stop() -> None:  # stopping a dead observer takes a moment: the shutdown comes then
        in_restart.set()
        time.sleep(0.5)
        real_stop()

    old.stop = slow_stop
    reader = old._inotify_fd

    def crash(event: object) -> None:
        raise KeyError(b"x")

    reader.handle_event = crash
    (root / "wake.txt").write_text("x", encoding="utf-8")
    reader.join(5)
    assert in_restart.wait(5)
    watcher.stop()
    time.sleep(1.0)
    observers = [t for t in threading.enumerate() if type(t).__name__ in ("InotifyObserver", "InotifyFD")]
    assert not [t for t in observers if t.is_alive() and t is not reader], observers


def test_the_periodic_compare_blames_lost_events_only_for_changes_no_event_announced(kb, monkeypatch, caplog):
    """Decision 991: a file saved while the periodic compare ran is changed on disk and waits in
    the watcher's quiet period, so it was heard; counted in the warning, a busy folder on a local
    disk logged "changed without a file event (a network share ...)" every five minutes."""
    import logging

    from local_vector_search_mcp.index import indexing

    ws = make_workspace(kb)
    try:
        ws.indexing.reindex()
        caplog.set_level(logging.WARNING, logger=indexing.__name__)
        (kb / "notes" / "heard.md").write_text("# Heard\n\nsaved during the compare\n", encoding="utf-8")
        monkeypatch.setattr(ws.indexing.sync, "pending", lambda: ["notes/heard.md"])  # its event waits
        ws.indexing.start_catch_up(audit=True)
        ws.indexing.wait_catch_up(10)
        assert not [r for r in caplog.records if "without a file event" in r.getMessage()]
        (kb / "notes" / "unheard.md").write_text("# Unheard\n\nno event came\n", encoding="utf-8")
        ws.indexing.start_catch_up(audit=True)
        ws.indexing.wait_catch_up(10)
        warned = [r.getMessage() for r in caplog.records if "without a file event" in r.getMessage()]
        assert len(warned) == 1 and warned[0].startswith("1 file(s)"), warned
    finally:
        ws.close()
