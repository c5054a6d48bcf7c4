"""kb_status reads what runs before the index it describes (decision 386)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import make_kb, make_workspace

from local_vector_search_mcp import dispatch


def test_a_reindex_ending_during_the_call_is_not_shown_done_beside_older_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reindex ends while kb_status reads the index (here: right after the counts). Read in
    that order, the answer said "not running, succeeded" with no documents, and a client that
    polls until isRunning is false took those counts for the finished index."""
    ws = make_workspace(make_kb(tmp_path))
    files = len(ws.indexing.indexer.discover())
    real_counts = type(ws.store).counts
    calls: list[int] = []

    def counts_then_the_reindex_ends(store: Any) -> Any:
        counted = real_counts(store)
        if not calls:
            calls.append(1)
            ws.indexing.start_reindex("all")
            ws.indexing.wait_reindex(60)
        return counted

    monkeypatch.setattr(type(ws.store), "counts", counts_then_the_reindex_ends)
    try:
        status = dispatch.invoke(ws, "kb_status", None)
        indexing = status["indexing"]
        if indexing["last"] is not None and not indexing["isRunning"]:
            assert indexing["last"]["outcome"] == "succeeded"
            assert status["project"]["documents"] == files, status
        again = dispatch.invoke(ws, "kb_status", None)  # the next call sees both
        assert again["indexing"]["last"]["outcome"] == "succeeded"
        assert again["project"]["documents"] == files
    finally:
        ws.close()


def test_an_embedding_pass_ending_during_the_call_is_not_shown_stopped_beside_older_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for kb_status.vectors: a pass that ends while the counts are read was shown
    stopped, without an error, beside the pending chunks from before it."""
    from kb_fakes import HashEmbedder

    embedder = HashEmbedder(fail=True)
    ws = make_workspace(make_kb(tmp_path), embedder=embedder)
    try:
        ws.indexing.reindex()  # lexical rows; the provider is down, so every chunk waits
        assert dispatch.invoke(ws, "kb_status", None)["vectors"]["pendingChunks"] > 0
        embedder.fail = False
        real_counts = type(ws.store).counts
        calls: list[int] = []

        def counts_then_the_pass_ends(store: Any) -> Any:
            counted = real_counts(store)
            calls.append(1)
            if len(calls) == 2:  # kb_status' own counts, then the vectors' ones: the pass ends now
                assert ws.indexing.kick_vectors(retry=True)
                ws.indexing.wait_vectors(60)
            return counted

        monkeypatch.setattr(type(ws.store), "counts", counts_then_the_pass_ends)
        vectors = dispatch.invoke(ws, "kb_status", None)["vectors"]
        if not vectors["isRunning"] and vectors["lastError"] is None:
            assert vectors["pendingChunks"] == 0, vectors
        monkeypatch.undo()
        again = dispatch.invoke(ws, "kb_status", None)["vectors"]
        assert again["pendingChunks"] == 0 and again["lastError"] is None and not again["isRunning"]
    finally:
        ws.close()


def test_status_answers_when_the_local_provider_could_not_be_built(tmp_path: Path) -> None:
    # the configuration now refuses an unknown local model (decision 534), but a provider that
    # fails to build still becomes a FailingEmbedder, and kb_status raised its error
    from local_vector_search_mcp.embeddings.slot import FailingEmbedder

    make_kb(tmp_path)
    ws = make_workspace(tmp_path, "local", embedder=FailingEmbedder("local", "x", "the model could not be loaded"))
    try:
        status = dispatch.invoke(ws, "kb_status", {})
    finally:
        ws.close()
    assert status["embeddingModel"] == "x"
    assert status["embeddingDimensions"] is None


def _restarted_after_a_change(tmp_path: Path) -> Any:
    """A served workspace whose index is older than ``guide.md``: changed while no server ran."""
    root = make_kb(tmp_path)
    first = make_workspace(root)
    first.indexing.reindex()
    first.close()
    (root / "guide.md").write_text("# Guide\n\nInstall the walrus with pip.\n", "utf-8")
    ws = make_workspace(root)
    ws.start_serving()
    return ws


def test_status_as_a_restarted_servers_first_call_counts_what_changed_while_none_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 698: the start-up catch-up began only after the first call, so a kb_status that
    was the first call read as settled (nothing pending, nothing running) while a file changed
    behind the index's back still searched as before; a client polling until settled took that."""
    ws = _restarted_after_a_change(tmp_path)
    indexer = ws.indexing.indexer
    compare = indexer.changed_paths

    def slow_compare() -> list[str]:  # a larger tree: the compare outlasts the status call's own work
        time.sleep(0.3)
        return compare()

    monkeypatch.setattr(indexer, "changed_paths", slow_compare)
    try:
        status = dispatch.invoke(ws, "kb_status", None)
        sync, indexing = status["synchronization"], status["indexing"]
        settled = (sync is None or sync["pendingFiles"] == 0) and not indexing["isRunning"]
        if settled:  # its sync already ran: then search has the change
            found = dispatch.invoke(ws, "kb_search", {"request": {"query": "walrus", "mode": "lexical"}})
            assert [hit["path"] for hit in found["results"]] == ["guide.md"], status
        else:
            assert sync is not None and "guide.md" in sync["paths"], status
    finally:
        ws.close()


def test_status_never_joins_a_catch_up_thread_before_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kb_status waits for the catch-up (decision 698) from its own thread; the thread was
    published before it was started, so a status call landing in between raised "cannot join
    thread before it is started" (INTERNAL_ERROR; seen with a first call's catch-up starting)."""

    from local_vector_search_mcp.index import indexing as indexing_module

    ws = make_workspace(make_kb(tmp_path))
    ws.indexing.reindex()
    service = ws.indexing

    class Racing(threading.Thread):
        def start(self) -> None:
            service.wait_catch_up(0)  # another thread's kb_status or shutdown, just before this one starts
            service.wait_start_compare(0)
            super().start()

    monkeypatch.setattr(indexing_module.threading, "Thread", Racing)
    try:
        service.start_catch_up(at_start=True)
        service.start_catch_up(at_start=True)  # the second start meets the first, published
        service.wait_catch_up(10)
    finally:
        ws.close()


def test_status_does_not_wait_for_the_watchers_periodic_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of 698: kb_status joined whatever compare ran, the watcher's periodic audit (decision
    655) too, and every status call during one took 5 s."""
    ws = make_workspace(make_kb(tmp_path))
    ws.indexing.reindex()
    indexer = ws.indexing.indexer
    compare = indexer.changed_paths
    monkeypatch.setattr(indexer, "changed_paths", lambda: (time.sleep(3), compare())[1])
    try:
        ws.indexing.start_catch_up(audit=True)
        started = time.monotonic()
        dispatch.invoke(ws, "kb_status", None)
        assert time.monotonic() - started < 2
    finally:
        ws.indexing.wait_catch_up(10)
        ws.close()


def test_a_compare_outlasting_the_wait_shows_as_comparing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision 986: a start-up compare longer than kb_status's wait (a large tree, a slow disk)
    answered `synchronization: null` and no reindex running, which reads as settled, while the
    file changed behind the index was still to be found; a client polling until settled searched
    the old text."""
    from local_vector_search_mcp.handlers import status as status_module

    ws = _restarted_after_a_change(tmp_path)
    indexer = ws.indexing.indexer
    compare = indexer.changed_paths
    release = threading.Event()
    monkeypatch.setattr(indexer, "changed_paths", lambda: (release.wait(10), compare())[1])
    monkeypatch.setattr(status_module, "CATCH_UP_WAIT_SECONDS", 0.1)
    try:
        status = dispatch.invoke(ws, "kb_status", None)
        assert status["synchronization"] is not None, status
        assert status["synchronization"]["comparing"] is True
        assert status["synchronization"]["pendingFiles"] == 0
        release.set()
        deadline = time.monotonic() + 20
        while True:
            status = dispatch.invoke(ws, "kb_status", None)
            sync = status["synchronization"]
            if not status["indexing"]["isRunning"] and (
                sync is None or not (sync["pendingFiles"] or sync["comparing"])
            ):
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.05)
        found = dispatch.invoke(ws, "kb_search", {"request": {"query": "walrus", "mode": "lexical"}})
        assert [hit["path"] for hit in found["results"]] == ["guide.md"]
    finally:
        release.set()
        ws.close()


def test_a_compare_ending_between_the_two_reads_is_not_settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of 986: kb_status read the queue before `comparing`; a compare that queued its finding
    and ended between the two reads answered the settled state while the file still waited."""
    from local_vector_search_mcp.handlers import status as status_module

    ws = _restarted_after_a_change(tmp_path)
    indexer, sync = ws.indexing.indexer, ws.indexing.sync
    compare, real_status = indexer.changed_paths, sync.status
    release = threading.Event()
    monkeypatch.setattr(indexer, "changed_paths", lambda: (release.wait(10), compare())[1])
    monkeypatch.setattr(status_module, "CATCH_UP_WAIT_SECONDS", 0.1)

    def status_then_the_compare_ends() -> object:  # the interleaving: the compare finishes right after this read
        state = real_status()
        release.set()
        ws.indexing.wait_catch_up(10)
        return state

    monkeypatch.setattr(sync, "status", status_then_the_compare_ends)
    try:
        answer = dispatch.invoke(ws, "kb_status", None)
        assert answer["synchronization"] is not None or answer["indexing"]["isRunning"], "read as settled"
    finally:
        release.set()
        ws.close()


def test_comparing_holds_while_any_compare_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review of 986: `comparing` looked at the latest compare only; a second one started meanwhile
    (a write finishing another process's move starts one, decision 989) that ended first read as
    no compare running while the first still had files to find."""
    ws = make_workspace(make_kb(tmp_path))
    ws.indexing.reindex()
    indexer = ws.indexing.indexer
    compare = indexer.changed_paths
    first_may_end, calls = threading.Event(), []

    def slow_then_quick() -> list[str]:
        calls.append(1)
        if len(calls) == 1:
            first_may_end.wait(10)
        return compare()

    monkeypatch.setattr(indexer, "changed_paths", slow_then_quick)
    try:
        ws.indexing.start_catch_up()
        ws.indexing.start_catch_up()
        ws.indexing.wait_catch_up(10)  # the second, quick one
        assert ws.indexing.comparing
    finally:
        first_may_end.set()
        deadline = time.monotonic() + 10
        while ws.indexing.comparing and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not ws.indexing.comparing
        ws.close()
