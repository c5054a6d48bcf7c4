"""The objects a session's first calls leave behind leave the collector's full passes (decision 950)."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_vector_search_mcp import progress
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.server import app, heap
from local_vector_search_mcp.workspace import Workspace


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process whose heap nothing froze yet, thawed again afterwards (the test process goes on)."""
    gc.unfreeze()
    monkeypatch.setattr(heap, "_modules_seen", 0)
    yield
    gc.unfreeze()


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
        assert not _tracked(invoke) and gc.get_freeze_count() > 1000
        assert heap._modules_seen == len(sys.modules)
        assert heap.settle_after_imports() is False
    finally:
        ws.close()


def test_a_failed_call_settles_too(unfrozen: None, tmp_path: Path) -> None:
    """The settling follows the call whatever its answer: an error answer imported modules too."""
    ws = _workspace(tmp_path)
    try:
        result = app.call_result(ws, "kb_read", {"path": "missing.md"}, progress.Call(None))
        assert result.is_error
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
