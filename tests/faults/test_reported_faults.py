"""The three faults reported in issue 10, each reproduced as it was found, and what must happen instead.

1. one non-UTF-8 ``.md`` stopped the whole reindex (exit 1, no file named, later files never indexed);
2. an embedding service that is down stopped lexical indexing too (a traceback from the dimension probe);
3. ``call kb_move`` exited while the sync queue still held the paths (the moved document missing).

Plus the recovery the issue asks for: when the provider comes back, the
pending vectors are filled without a restart (a real loopback HTTP server
that first refuses connections, then serves).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from embedding_endpoint import Endpoint, handler_for

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.cli import main as cli_main
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.workspace import Workspace

# b.md starts with a UTF-16 byte order mark, which the reason names (decision 924).
UTF16_REASON = (
    "The file is not valid UTF-8 text: it starts with a UTF-16 byte order mark (UTF-16 text, as some Windows "
    "tools write it); only UTF-8 Markdown can be read or edited. Save it as UTF-8."
)


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha words\n", "utf-8")
    (root / "b.md").write_bytes(b"\xff\xfe# B\n")
    (root / "c.md").write_text("# C\n\ncharlie words\n", "utf-8")
    return root


def _search(args: list[str], query: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert cli_main([*args, "call", "kb_search", "--query", query, "--mode", "lexical"]) == 0
    return [hit["path"] for hit in json.loads(capsys.readouterr().out)["results"]]


def test_one_non_utf8_file_no_longer_stops_the_reindex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _folder(tmp_path)
    args = ["--root", str(root), "--project-root", str(tmp_path), "--embedding-provider", "none"]
    assert cli_main([*args, "--reindex"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["indexedFiles"] == 2 and result["unreadableFiles"] == 1
    assert result["unreadable"] == [{"path": "b.md", "reason": UTF16_REASON}]
    assert "1 file(s) could not be indexed" in captured.err and "b.md" in captured.err
    assert _search(args, "charlie", capsys) == ["c.md"]


def _status_project(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert cli_main([*args, "--status"]) == 0  # a new process, as a restarted server is
    project: dict[str, Any] = json.loads(capsys.readouterr().out)["project"]
    return project


def test_a_restarted_server_still_names_the_files_it_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _folder(tmp_path)
    args = ["--root", str(root), "--project-root", str(tmp_path), "--embedding-provider", "none"]
    assert cli_main([*args, "--reindex"]) == 0
    capsys.readouterr()
    project = _status_project(args, capsys)  # was: nothing, the list lived in one process's memory
    assert project["unreadableFiles"] == 1 and project["documents"] == 2
    assert project["unreadable"] == [{"path": "b.md", "reason": UTF16_REASON}]

    def sync(path: str) -> None:  # what an edit or the watcher does
        ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=tmp_path, environ={}))
        try:
            ws.indexing.schedule_sync([path])
            assert ws.indexing.sync.wait_idle(30)
        finally:
            ws.close()

    (root / "b.md").write_text("# B\n\nbravo words\n", "utf-8")  # fixed
    sync("b.md")
    assert _status_project(args, capsys)["unreadableFiles"] == 0
    (root / "c.md").write_bytes(b"\x00\xff binary now")  # broken by a later edit
    sync("c.md")
    project = _status_project(args, capsys)
    assert [f["path"] for f in project["unreadable"]] == ["c.md"] and project["documents"] == 2
    (root / "c.md").unlink()  # gone: no longer unreadable either
    assert cli_main([*args, "--reindex"]) == 0
    capsys.readouterr()
    assert _status_project(args, capsys)["unreadable"] == []


def test_every_odd_file_is_skipped_and_named_while_the_rest_is_indexed(tmp_path: Path) -> None:
    from odd_files import GOOD, ODD, build

    root = tmp_path / "kb"
    build(root, tmp_path / "outside")
    ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=tmp_path, environ={}))
    try:
        result = ws.indexing.reindex("all")
        named = dict(result.unreadable)
        # Each not-UTF-8, binary or link entry is named with a reason; each good file is indexed.
        odd = ("latin1.md", "bad-bom.md", "utf16.md", "image.md", "surrogates.md", "escape.md", "dangling.md")
        for rel in (*odd, "fifo.md"):
            assert rel in named, (rel, named)
        assert "symbolic link" in named["escape.md"] and "regular file" in named["fifo.md"]
        # a link is refused for being a link, whether its target exists or not (decision 292)
        assert named["dangling.md"] == named["escape.md"].replace("escape.md", "dangling.md")
        indexed = set(ws.store.document_states())
        assert set(GOOD) <= indexed and not indexed & set(named)
        assert result.unreadable_files == len(named)
        assert len(indexed) + len(named) >= len(GOOD) + len(ODD) - 3  # a few odd files are fine Markdown
        assert not any("outside" in path for path in indexed)
    finally:
        ws.close()


# --------------------------------------------------------------------------- a provider that is down


@pytest.fixture
def late_provider() -> Iterator[tuple[str, Any]]:
    """An endpoint that refuses connections until ``start()`` is called: its port is bound here
    (a bound socket that does not listen refuses connections) so nothing else can take it."""
    reserved = socket.socket()
    reserved.bind(("127.0.0.1", 0))
    port = int(reserved.getsockname()[1])
    servers: list[ThreadingHTTPServer] = []

    def start() -> None:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(Endpoint(dims=4)), bind_and_activate=False)
        server.socket.close()
        server.socket = reserved
        server.server_activate()  # listen
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)

    yield f"http://127.0.0.1:{port}/v1", start
    for server in servers:
        server.shutdown()
    reserved.close()


def test_a_down_embedding_service_no_longer_stops_lexical_indexing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], late_provider: tuple[str, Any]
) -> None:
    endpoint, _start = late_provider
    root = _folder(tmp_path)
    (root / "b.md").write_text("# B\n\nbravo words\n", "utf-8")
    args = ["--root", str(root), "--project-root", str(tmp_path), "--embedding-provider", "openai-compatible"]
    args += ["--embedding-endpoint", endpoint, "--embedding-model", "m"]
    assert cli_main([*args, "--reindex"]) == 0  # was: a traceback from the dimension probe
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["indexedFiles"] == 3 and "could not be reached" in result["warning"]
    assert "Traceback" not in captured.err
    assert _search(args, "charlie", capsys) == ["c.md"]
    assert cli_main([*args, "call", "kb_search", "--query", "charlie"]) == 0  # hybrid: lexical, with a warning
    hybrid = json.loads(capsys.readouterr().out)
    assert hybrid["results"] and "no vectors yet" in hybrid["warning"]
    assert "Falling back to lexical search" in hybrid["warning"]  # the contract's wording (notes §2.3)
    assert cli_main([*args, "call", "kb_search", "--query", "charlie", "--mode", "semantic"]) == 1
    error = json.loads(capsys.readouterr().err)
    assert error["code"] == "INDEX_NOT_READY" and "no vectors yet" in error["message"]
    assert "provider is none" not in error["message"]  # it is not: it has not answered yet


def test_vectors_are_filled_when_the_provider_comes_back_without_a_restart(
    tmp_path: Path, late_provider: tuple[str, Any]
) -> None:
    endpoint, start = late_provider
    root = _folder(tmp_path)
    (root / "b.md").write_text("# B\n\nbravo words\n", "utf-8")
    options = CliOptions(
        root=str(root), embedding_provider="openai-compatible", embedding_endpoint=endpoint, embedding_model="m"
    )
    ws = Workspace(load_settings(options, cwd=tmp_path, environ={}))
    try:
        ws.indexing.reindex()
        status = dispatch.invoke(ws, "kb_status", None)
        assert status["vectors"]["pendingChunks"] == 3 and status["vectors"]["lastError"]
        start()  # the service comes back; nobody restarts anything
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            vectors = dispatch.invoke(ws, "kb_status", None)["vectors"]
            if vectors["pendingChunks"] == 0 and not vectors["isRunning"]:
                break
            time.sleep(0.2)
        assert vectors == {
            "embeddedChunks": 3,
            "pendingChunks": 0,
            "isRunning": False,
            "lastError": None,
            "refusedChunks": 0,
            "refused": [],
            "etaSeconds": None,
        }
        found = dispatch.invoke(ws, "kb_search", {"request": {"query": "charlie", "mode": "hybrid"}})
        assert found["results"][0]["path"] == "c.md" and not found.get("warning")
    finally:
        ws.close()


def test_vectors_are_filled_when_the_index_comes_back_without_a_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 685: a background pass the index failed (PostgreSQL restarting) was only logged:
    kb_status showed no error and the vectors stayed pending until a search started another pass.
    It is now said in `vectors.lastError` and tried again with the provider's backoff."""
    from kb_fakes import HashEmbedder, make_workspace

    from local_vector_search_mcp.errors import IndexNotReady
    from local_vector_search_mcp.index import indexing

    monkeypatch.setattr(indexing, "RETRY_FIRST_SECONDS", 0.3)
    root = _folder(tmp_path)
    ws = make_workspace(root, "local", embedder=HashEmbedder(16))
    try:
        ws.indexing.reindex()
        (root / "b.md").write_text("# B\n\nbravo words\n", "utf-8")
        real = type(ws.indexing.indexer).embed_pending
        failures = [IndexNotReady("Cannot connect to PostgreSQL at postgresql://db:5432/kb#docs.")]

        def flaky(self: Any, *args: Any, **kwargs: Any) -> Any:
            if failures:
                raise failures.pop()
            return real(self, *args, **kwargs)

        monkeypatch.setattr(type(ws.indexing.indexer), "embed_pending", flaky)
        ws.indexing.schedule_sync(["b.md"])
        ws.indexing.sync.wait_idle(30)
        seen: list[Any] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            vectors = dispatch.invoke(ws, "kb_status", None)["vectors"]
            seen.append(vectors["lastError"])
            if not failures and vectors["pendingChunks"] == 0 and not vectors["isRunning"]:
                break
            time.sleep(0.05)
        assert vectors["pendingChunks"] == 0 and vectors["lastError"] is None
        assert any(str(e).startswith("The embedding pass failed: Cannot connect to PostgreSQL") for e in seen)
    finally:
        ws.close()


def test_the_next_start_embeds_what_a_killed_server_left_waiting(tmp_path: Path) -> None:
    """Decision 686: a server killed during its embedding pass left chunks pending, and the next
    server, finding no file changed, embedded none of them until a search happened to need them
    (kb_status said `pendingChunks: 60, isRunning: false` for minutes). Here the first server's
    provider fails, which leaves the same pending chunks behind."""
    from kb_fakes import HashEmbedder, make_workspace

    from local_vector_search_mcp.embeddings import EmbeddingError

    class Down(HashEmbedder):
        def embed_passages(self, texts: list[str]) -> Any:
            raise EmbeddingError("the provider is down")

    root = _folder(tmp_path)
    first = make_workspace(root, "local", embedder=Down(16))
    try:
        first.indexing.reindex()
        assert dispatch.invoke(first, "kb_status", None)["vectors"]["pendingChunks"] > 0
    finally:
        first.close()
    second = make_workspace(root, "local", embedder=HashEmbedder(16))
    try:
        second.indexing.start_catch_up(at_start=True)  # what a server's first call starts
        second.indexing.wait_catch_up(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            vectors = dispatch.invoke(second, "kb_status", None)["vectors"]
            if vectors["pendingChunks"] == 0 and not vectors["isRunning"]:
                break
            time.sleep(0.05)
        assert vectors["pendingChunks"] == 0 and vectors["embeddedChunks"] > 0
    finally:
        second.close()


# --------------------------------------------------------------------------- a CLI edit and its index sync


def test_a_cli_move_no_longer_leaves_the_index_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(30):  # enough files that a re-index is not instant
        (root / f"doc{i}.md").write_text(f"# Doc {i}\n\nfiller text {i}\n", "utf-8")
    (root / "a.md").write_text("# A\n\nzebra crossing\n", "utf-8")
    args = ["--root", str(root), "--project-root", str(tmp_path), "--embedding-provider", "none", "--allow-writes"]
    assert cli_main([*args, "--reindex"]) == 0
    capsys.readouterr()
    assert cli_main([*args, "call", "kb_read", "--path", "a.md"]) == 0
    sha = json.loads(capsys.readouterr().out)["sourceHash"]
    move = {"sourcePath": "a.md", "targetPath": "moved/z.md", "expectedSourceHash": sha}
    # A process of its own that exits, as in the report (in-process, the sync thread outlives the call).
    done = subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", *args, "call", "kb_move", "--json", json.dumps(move)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert _search(args, "zebra", capsys) == ["moved/z.md"]  # was: nothing until the next reindex
