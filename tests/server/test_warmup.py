"""A server imports what calls need once its tools are listed, and its first call runs alone
(decisions 643, 644)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.message import SessionMessage

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.server import app
from local_vector_search_mcp.server.warmup import Warmup
from local_vector_search_mcp.workspace import Workspace


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


# A fresh interpreter: the test process has imported everything long ago.
_FRESH = textwrap.dedent(
    """
    import gc, json, sys
    from local_vector_search_mcp.config import CliOptions, load_settings
    from local_vector_search_mcp.server.warmup import Warmup
    from local_vector_search_mcp.workspace import Workspace

    root, index = sys.argv[1], sys.argv[2]
    ws = Workspace(load_settings(CliOptions(root=root, storage_path=index, embedding_provider="none"), environ={}))
    wanted = ["lvsm_contract.models", "local_vector_search_mcp.handlers.search",
              "local_vector_search_mcp.handlers.reading", "local_vector_search_mcp.handlers.editing",
              "local_vector_search_mcp.index.sqlite", "local_vector_search_mcp.search.service", "markdown_it"]
    before = [m for m in wanted if m in sys.modules]
    warm = ws.service(Warmup)
    warm.run()
    from local_vector_search_mcp.server import heap
    settled = heap.wait(30)  # the heap's own thread settles what the warm-up imported
    print(json.dumps({
        "settled": settled,
        "before": before,
        "after": [m for m in wanted if m in sys.modules],
        "reportlab": "reportlab" in sys.modules,
        "opened": ws.index_opened,
        "frozen": gc.get_freeze_count(),
        "done": warm.done.is_set(),
    }))
    ws.close()
    """
)


def test_the_warm_up_imports_what_calls_need_and_opens_nothing(tmp_path: Path) -> None:
    """Decision 643: the first call's imports (the models, the handlers, the index and search
    services, the parser through them) are done before it comes, and settled; the index is not opened (a
    server that is never called touches nothing, decision 205) and the PDF export's reportlab
    stays unimported."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n", "utf-8")
    index = tmp_path / "index.db"
    out = subprocess.run(
        [sys.executable, "-c", _FRESH, str(root), str(index)], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    seen = json.loads(out.stdout)
    assert seen["before"] == []  # the premise: a bare workspace has imported none of them
    assert len(seen["after"]) == 7
    assert seen["reportlab"] is False
    assert seen["opened"] is False and not index.exists()
    assert seen["settled"] is True and seen["frozen"] > 1000 and seen["done"] is True


async def _list_tools(ws: Workspace) -> tuple[bool, int]:
    """Initialize and list the tools over an in-memory session; whether the warm-up had started
    before the listing, and how many tools were listed."""
    server = app.build_server(ws)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    warm = ws.service(Warmup)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_reads, server_writes, server.create_initialization_options())
        async with ClientSession(from_server, to_server) as session:
            await session.initialize()
            started_before = warm._thread is not None
            listed = await session.list_tools()
        tg.cancel_scope.cancel()
    return started_before, len(listed.tools)


def test_listing_the_tools_starts_the_warm_up(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    try:
        started_before, listed = anyio.run(_list_tools, ws)
        assert listed > 10
        assert not started_before
        assert ws.service(Warmup).done.wait(30)
        assert not ws.index_opened
    finally:
        ws.close()


def test_a_server_stopping_before_the_delay_ends_the_warm_up_unstarted(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    try:
        warm = Warmup(ws, delay=60)
        warm.start()
        warm.close(timeout=5)
        assert warm._thread is not None and not warm._thread.is_alive()
        assert not warm.done.is_set()
    finally:
        ws.close()


def test_the_catch_up_starts_after_the_first_call_not_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 644: the catch-up's walk of the tree competed with the session's first call; it
    now starts once the call is done, also after a call that failed."""
    ws = _workspace(tmp_path)
    events: list[str] = []
    monkeypatch.setattr(ws, "catch_up_once", lambda: events.append("catch-up"))
    real = dispatch._handler

    def recording(name: str) -> Any:
        handler = real(name)

        def call(*args: Any) -> Any:
            events.append(name)
            return handler(*args)

        return call

    monkeypatch.setattr(dispatch, "_handler", recording)
    try:
        dispatch.invoke(ws, "kb_list_files", {"request": {}})
        assert events == ["kb_list_files", "catch-up"]
        events.clear()
        with pytest.raises(Exception, match="unknown field"):
            dispatch.invoke(ws, "kb_read", {"request": {"nope": 1}})
        assert events == ["catch-up"]
    finally:
        ws.close()
