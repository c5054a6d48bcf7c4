"""First calls in several threads at once: the lazily imported handler modules load safely.

Handler modules are imported on a tool's first call (``handlers.BINDINGS``), so the first calls of a
session (an HTTP server's clients, a reindex thread beside an edit) import in parallel. CPython's
import locks deadlock when one thread imports a package whose ``__init__`` imports a submodule
while another imports that submodule by name first: markdown-it-py is such a package
(``_DeadlockError`` on ``markdown_it.common.utils`` was seen in the shared-index conformance test).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from kb_fakes import make_workspace

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.handlers import BINDINGS
from local_vector_search_mcp.lazy_imports import IMPORT_LOCK

SCRIPT = textwrap.dedent(
    """
    import sys, threading

    from local_vector_search_mcp import dispatch
    from local_vector_search_mcp.handlers import BINDINGS

    jobs = [lambda: __import__("markdown_it"), dispatch._models]
    jobs += [(lambda name=name: dispatch._handler(name)) for name in BINDINGS]
    start = threading.Barrier(len(jobs))
    errors = []

    def run(job):
        start.wait()
        try:
            job()
        except BaseException as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("\\n".join(errors))
    sys.exit(1 if errors else 0)
    """
)


def test_first_calls_of_every_tool_import_their_handlers_at_once_without_deadlock() -> None:
    # A fresh interpreter each round: the race is only there while nothing is imported yet.
    for _ in range(4):
        done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


def _held_elsewhere() -> bool:
    """Whether another thread holds IMPORT_LOCK (this thread's own hold would not count)."""
    result: list[bool] = []

    def probe() -> None:
        taken = IMPORT_LOCK.acquire(blocking=False)
        if taken:
            IMPORT_LOCK.release()
        result.append(not taken)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return result[0]


def test_a_handler_is_bound_under_the_import_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def binder() -> Callable[..., object]:
        seen.append(_held_elsewhere())
        return lambda ws: None

    monkeypatch.setitem(BINDINGS, "kb_probe", binder)
    dispatch._handler.cache_clear()
    try:
        dispatch._handler("kb_probe")
    finally:
        dispatch._handler.cache_clear()
    assert seen == [True]
    assert not _held_elsewhere()


def test_the_workspace_imports_its_services_under_the_import_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import local_vector_search_mcp.index.activity as activity_module

    seen: list[bool] = []

    def module_getattr(name: str) -> object:
        seen.append(_held_elsewhere())
        raise AttributeError(name)

    ws = make_workspace(tmp_path)
    # `from .index.activity import IndexActivity` looks the name up on the module; with the class
    # removed, the module's __getattr__ records whether the lock was held at that moment.
    monkeypatch.delattr(activity_module, "IndexActivity")
    monkeypatch.setattr(activity_module, "__getattr__", module_getattr, raising=False)
    with pytest.raises(ImportError):
        _ = ws.activity
    assert seen and all(seen)


LINKS_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from kb_fakes import make_workspace
    from local_vector_search_mcp.dispatch import invoke

    root = Path(sys.argv[1])
    ws = make_workspace(root, "none")
    ws.indexing.reindex("changed", False)
    before = set(sys.modules)
    links = invoke(ws, "kb_links", {"request": {"path": "a.md"}})
    assert [link["target"] for link in links["links"]] == ["b.md"], links
    print(" ".join(sorted(m for m in set(sys.modules) - before if m.startswith("local_vector_search_mcp.search"))))
    """
)


def test_kb_links_answers_without_importing_the_search_stack(tmp_path: Path) -> None:
    # the search stack (ranking engine, its regular expressions, numpy) took ~50 ms of a first
    # kb_links on opensearch-docs, which needs only the readiness check and the graph (decision 1098)
    (tmp_path / "a.md").write_text("# A\n\nSee [b](b.md).\n", "utf-8")
    (tmp_path / "b.md").write_text("# B\n\nText.\n", "utf-8")
    tests = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", LINKS_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": tests},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == ""
