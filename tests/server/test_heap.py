"""The objects a session's first calls leave behind leave the collector's full passes (decision 950),
frozen after the reply, when no call is running (decision 975)."""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.memory import create_client_server_memory_streams

from local_vector_search_mcp import progress
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.server import app, heap
from local_vector_search_mcp.server.warmup import Warmup
from local_vector_search_mcp.workspace import Workspace


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process whose heap nothing froze yet, thawed again afterwards (the test process goes on)."""
    assert heap.wait(60)  # a settling left by an earlier test in this process
    gc.unfreeze()
    monkeypatch.setattr(heap, "_modules_seen", 0)
    monkeypatch.setattr(heap, "_running", 0)
    yield
    assert heap.wait(60)
    gc.unfreeze()


class Clock:
    """The settling thread's clock, moved by the test: no test here depends on how fast it runs."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(heap, "clock", fake)
    monkeypatch.setattr(heap, "_last_end", fake.now)
    return fake


def _tracked(obj: object) -> bool:
    """Whether the collector's passes walk ``obj`` (frozen objects are in none of its generations)."""
    return any(o is obj for o in gc.get_objects())


def _workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nText.\n", "utf-8")
    settings = load_settings(
        CliOptions(root=str(root), storage_path=str(tmp_path / "index.db"), embedding_provider="none"),
        cwd=tmp_path,
        environ={},
    )
    return Workspace(settings)


def test_a_served_call_freezes_what_the_imports_left_once(unfrozen: None, tmp_path: Path) -> None:
    """Every full collection walked the ~110,000 objects of the imported code (70-100 ms on the
    bench tree, inside whichever call was running). The first served call now freezes them: the
    dispatcher's own function is no longer walked, and the next call, which imported nothing,
    freezes nothing."""
    ws = _workspace(tmp_path)
    try:
        assert _tracked(invoke)
        result = app.call_result(ws, "kb_list_files", {"request": {}}, progress.Call(None))
        assert not result.is_error
        assert heap.wait(60)
        assert not _tracked(invoke) and gc.get_freeze_count() > 1000
        assert heap._modules_seen == len(sys.modules)
        app.call_result(ws, "kb_list_files", {"request": {}}, progress.Call(None))
        assert heap._settler is None and heap._due_since is None  # nothing imported: nothing due
        assert heap.settle_after_imports() is False
    finally:
        ws.close()


def test_a_failed_call_settles_too(unfrozen: None, tmp_path: Path) -> None:
    """The settling follows the call whatever its answer: an error answer imported modules too."""
    ws = _workspace(tmp_path)
    try:
        result = app.call_result(ws, "kb_read", {"path": "missing.md"}, progress.Call(None))
        assert result.is_error
        assert heap.wait(60)
        assert heap._modules_seen == len(sys.modules) and not _tracked(invoke)
    finally:
        ws.close()


def test_new_imports_settle_again_after_a_collection(
    unfrozen: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module imported later (a tool's first use) is frozen at the next settling, and the garbage
    cycles made before it are collected first, not frozen for good."""
    assert heap.settle_after_imports() is True
    assert heap.settle_after_imports() is False
    (tmp_path / "h116_late_module.py").write_text("def late() -> None:\n    pass\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "h116_late_module", raising=False)
    import h116_late_module  # type: ignore[import-not-found]

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    was_enabled = gc.isenabled()
    gc.disable()  # no automatic pass may free the cycle first: only the settling's own collection
    try:
        cycle = weakref.ref(Cycle())  # unreachable garbage already: a bare freeze would keep it for good
        assert cycle() is not None and _tracked(h116_late_module.late)
        assert heap.settle_after_imports() is True
    finally:
        if was_enabled:
            gc.enable()
    assert cycle() is None
    assert not _tracked(h116_late_module.late)


def test_the_settling_runs_after_the_reply_reached_the_client_not_inside_the_call(
    unfrozen: None, clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settling is a full collection (60-90 ms once per batch of imports): inside the call, the
    first kb_links of a session waited for it. Now the call's reply reaches the client first and
    nothing was collected or frozen for it; the collection runs in its own thread once the server has
    been idle for QUIET_S (here when the test moves the clock on), with no call running."""
    events: list[tuple[Any, ...]] = []
    settle = heap.settle_after_imports

    def recorded() -> bool:
        events.append(("settle", threading.current_thread().name, heap._running))
        return settle()

    monkeypatch.setattr(heap, "settle_after_imports", recorded)
    # the client's listing would start the warm-up (decision 643), a call of its own: not this test's
    monkeypatch.setattr(Warmup, "start", lambda self: None)
    ws = _workspace(tmp_path)

    async def run() -> None:
        server = app.build_server(ws)
        async with create_client_server_memory_streams() as (client, served), anyio.create_task_group() as tg:
            tg.start_soon(lambda: server.run(served[0], served[1], server.create_initialization_options()))
            async with ClientSession(client[0], client[1]) as session:
                await session.initialize()
                result = await session.call_tool("kb_list_files", {"request": {}})
                assert not result.is_error
                events.append(("reply",))
                assert heap._due_since is not None and _tracked(invoke)  # due, not done
                clock.now += heap.QUIET_S  # the server stays idle that long
                assert await anyio.to_thread.run_sync(heap.wait, 60)
            tg.cancel_scope.cancel()

    try:
        anyio.run(run)
    finally:
        ws.close()
    assert events == [("reply",), ("settle", "lvsm-heap-settle", 0)]
    assert not _tracked(invoke) and heap._modules_seen == len(sys.modules)


def test_a_running_call_holds_the_settling_until_it_ends(unfrozen: None, clock: Clock) -> None:
    """Another call still running (another agent over HTTP, a long export) would wait for the
    collection: the settling waits for it to end, then for the quiet time."""
    heap.call_started()  # a long call
    heap.call_started()
    heap.call_ended()  # a call that imported (nothing is frozen in this process): a settling is due
    assert heap._due_since is not None
    clock.now += 10 * heap.QUIET_S  # quiet for long, but the long call runs
    assert not heap.wait(0.3) and _tracked(invoke)
    heap.call_ended()
    clock.now += heap.QUIET_S
    assert heap.wait(60) and not _tracked(invoke)


def test_calls_that_never_pause_get_the_heap_settled_after_patience(unfrozen: None, clock: Clock) -> None:
    """Calls overlapping without a pause (a burst of edits from many agents) never leave the server
    idle, and the collector's full passes would keep walking the imports inside them (decision 950's
    p95): after PATIENCE_S the settling runs anyway."""
    heap.call_started()
    heap.call_started()
    heap.call_ended()
    clock.now += heap.PATIENCE_S / 2
    assert not heap.wait(0.3) and _tracked(invoke)
    clock.now += heap.PATIENCE_S / 2
    assert heap.wait(60) and not _tracked(invoke)
    assert heap._running == 1
    heap.call_ended()
