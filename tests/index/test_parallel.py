"""Parsing in worker processes (index/parallel.py): the same index as in-process, and no file,
dead worker or hung parse stops the pass."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from kb_fakes import HashEmbedder, client

from local_vector_search_mcp.index import parallel
from local_vector_search_mcp.index import prepare as prepare_module
from local_vector_search_mcp.index.parallel import ParsePool, plan_workers
from local_vector_search_mcp.index.prepare import SMUDGED_SIZE, ChunkSettings, Prepared, Task, Unreadable, prepare

SETTINGS = ChunkSettings(4096, 20, True, True)


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[ParsePool]:
    """Every pass uses workers, however small the tree; the pools made are recorded."""
    made: list[ParsePool] = []
    original = ParsePool.__init__

    def record(self: ParsePool, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(parallel, "MIN_PARALLEL_FILES", 0)
    monkeypatch.setattr(ParsePool, "__init__", record)
    return made


def _tree(root: Path, copies: int = 6) -> None:
    """Varied documents: front matter with tags, links, tables, lists, code, CJK, a BOM and CRLF."""
    pages = {
        "guide.md": (
            "---\ntitle: Guide\ntags: [howto, edit]\naliases: Handbook\nweight: 3\n---\n"
            "# Guide\n\nInstall it with `pip`. See [notes](notes/ja.md) and [[Other page#Part]].\n\n"
            "## Tables\n\n| name | value |\n|---|---|\n| alpha | 1 |\n\n- one\n  - nested #tag/child\n- two\n\n"
            "```python\nprint('x')\n```\n\n> quoted ^block-1\n"
        ),
        "notes/ja.md": "# 東京の天気\n\n今日は雨です。共有状態について。\n\n## 詳細\n\n検索と索引。\n",
        "notes/zh.md": "# 状态管理\n\n侦听器与共享状态。![图](img.png)\n",
        "crlf.md": (
            "\ufeff---\r\ntitle: CRLF\r\n---\r\n# Windows\r\n\r\nLine one.\r\n\r\n"
            "| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n"
        ),
        "plain.md": "Just a paragraph without heading.\n\nAnother one with a <https://example.com> link.\n",
        "empty.md": "",
    }
    for i in range(copies):
        for rel, text in pages.items():
            path = root / f"part{i}" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8") + f"\n\ncopy {i}\n".encode())


def _rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored row that describes the Markdown (times of indexing aside)."""
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        queries = {
            # the size aside: a file looked at within its own timestamp tick is stored smudged (-1,
            # decision 401), so two passes a moment apart store -1 or the size by the clock alone
            "documents": "SELECT id, path, source_hash, mtime_ns, properties FROM documents ORDER BY id",
            "sizes": "SELECT path, size FROM documents ORDER BY id",
            "chunks": "SELECT * FROM chunks ORDER BY id",
            "links": "SELECT * FROM links ORDER BY document_id, ordinal",
            "document_meta": "SELECT * FROM document_meta ORDER BY document_id",
            "document_tags": "SELECT * FROM document_tags ORDER BY tag, document_id",
            # contentless FTS: its vocabulary says what each row was indexed with
            "fts": "SELECT term, doc, col, cnt FROM fts_vocab ORDER BY term, col",
        }
        con.execute("CREATE TEMP TABLE IF NOT EXISTS x(y)")  # read-only main; the vocab table lives in temp
        con.execute("CREATE VIRTUAL TABLE temp.fts_vocab USING fts5vocab(main, chunks_fts, 'col')")
        return {name: list(con.execute(sql)) for name, sql in queries.items()}
    finally:
        con.close()


def test_parallel_reindex_stores_the_same_rows_as_in_process(tmp_path: Path, pools: list[ParsePool]) -> None:
    root = tmp_path / "kb"
    _tree(root)
    here = client(root, storage=tmp_path / "here.db", knowledge_base__index_workers=1)
    there = client(root, storage=tmp_path / "there.db", knowledge_base__index_workers=3)
    first = here.reindex()
    assert not pools  # indexWorkers 1: this process
    second = there.reindex()
    assert len(pools) == 1 and pools[0].size == 3 and pools[0].deaths == 0
    assert first == second and first["indexedFiles"] == 36 and first["chunksIndexed"] > 36
    here.store.close()
    there.store.close()
    a, b = _rows(tmp_path / "here.db"), _rows(tmp_path / "there.db")
    assert all(a[name] for name in ("documents", "chunks", "links", "document_meta", "document_tags", "fts"))
    for rows in (a.pop("sizes"), b.pop("sizes")):  # each the file's size, or smudged
        assert all(size in (SMUDGED_SIZE, (root / path).stat().st_size) for path, size in rows)
    assert a == b


def test_edits_and_deletions_in_a_parallel_pass(tmp_path: Path, pools: list[ParsePool]) -> None:
    root = tmp_path / "kb"
    _tree(root, copies=2)
    emb = HashEmbedder()
    svc = client(root, embedder=emb, knowledge_base__index_workers=2)
    assert svc.reindex()["indexedFiles"] == 12
    calls = emb.calls
    (root / "part0" / "plain.md").write_text("A new paragraph about kites.\n", encoding="utf-8")
    os.utime(root / "part1" / "plain.md", ns=(time.time_ns(), time.time_ns() + 10**9))  # same bytes
    (root / "part1" / "notes" / "zh.md").unlink()
    result = svc.reindex()
    assert (result["indexedFiles"], result["skippedFiles"], result["deletedFiles"]) == (1, 10, 1)
    assert emb.calls - calls == 1  # unchanged chunk texts kept their vectors
    assert svc.search(query="kites", mode="lexical")["results"][0]["path"] == "part0/plain.md"
    assert svc.reindex("all")["indexedFiles"] == 11


def test_hostile_files_in_workers_are_skipped_and_named_like_in_process(tmp_path: Path, pools: list[ParsePool]) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "faults"))
    try:
        from odd_files import GOOD, build
    finally:
        sys.path.pop(0)
    root = tmp_path / "kb"
    build(root, tmp_path / "outside")
    results = []
    for workers in (1, 2):
        svc = client(root, storage=tmp_path / f"w{workers}.db", knowledge_base__index_workers=workers)
        results.append((svc.reindex("all"), set(svc.store.document_states())))
        svc.store.close()
    (here, indexed_here), (there, indexed_there) = results
    assert len(pools) == 1
    assert here == there and indexed_here == indexed_there
    named = {item["path"]: item["reason"] for item in there["unreadable"]}
    assert {"latin1.md", "bad-bom.md", "image.md", "fifo.md", "escape.md"} <= set(named)
    assert set(GOOD) <= indexed_there


def test_workers_told_to_stop_exit_cleanly_with_every_outcome_delivered(tmp_path: Path) -> None:
    tasks = _files(tmp_path, 12)
    with ParsePool(tmp_path, SETTINGS, 2) as pool:
        outcomes = list(pool.run(tasks))
        processes = [w.process for w in pool._workers]
    assert [o.path for o in outcomes] == [t.path for t in tasks] and all(isinstance(o, Prepared) for o in outcomes)
    assert len(processes) == 2 and [p.returncode for p in processes] == [0, 0]  # exited, not killed
    assert pool.deaths == 0


# --------------------------------------------------------------------------- workers that die or hang


def _boot(monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """Workers run ``body`` (with ``prepare`` wrapped as ``hostile``) before their loop."""
    script = (
        "import os, sys, time, signal\n"
        "import local_vector_search_mcp.index.prepare as p\n"
        "real = p.prepare\n"
        "def hostile(root, task, settings, **kw):\n"
        + "".join(f"    {line}\n" for line in body.splitlines())
        + "    return real(root, task, settings, **kw)\n"
        "p.prepare = hostile\n"
        "p.worker_main(int(sys.argv[1]), int(sys.argv[2]))\n"
    )
    monkeypatch.setattr(parallel, "_BOOT", script)


def _files(root: Path, n: int) -> list[Task]:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (root / f"doc{i:02}.md").write_text(f"# Doc {i}\n\nword{i} text\n", encoding="utf-8")
    return [Task(f"doc{i:02}.md") for i in range(n)]


def test_workers_collect_cycles_rarely(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision 278: a worker freezes what it imported and runs the cyclic collector less often."""
    _boot(
        monkeypatch, "import gc\nreturn p.Unreadable(task.path, repr((gc.get_threshold(), gc.get_freeze_count() > 0)))"
    )
    tasks = _files(tmp_path, 2)
    with ParsePool(tmp_path, SETTINGS, 2) as pool:
        outcomes = list(pool.run(tasks))
    expected = repr((prepare_module.WORKER_GC_THRESHOLD, True))
    assert [o.reason for o in outcomes if isinstance(o, Unreadable)] == [expected, expected]


def test_a_file_that_kills_its_worker_is_reported_and_the_rest_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _boot(monkeypatch, "if task.path == 'doc07.md':\n    os.kill(os.getpid(), signal.SIGKILL)")
    tasks = _files(tmp_path, 20)
    with ParsePool(tmp_path, SETTINGS, 2) as pool:
        outcomes = list(pool.run(tasks))
    assert [o.path for o in outcomes] == [t.path for t in tasks]  # in order, none lost
    bad = outcomes[7]
    assert isinstance(bad, Unreadable) and "killed by SIGKILL" in bad.reason and "2 times" in bad.reason
    assert all(isinstance(o, Prepared) for i, o in enumerate(outcomes) if i != 7)
    assert pool.deaths == 2


def test_a_worker_killed_from_outside_does_not_hang_the_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _boot(monkeypatch, "time.sleep(0.05)")
    tasks = _files(tmp_path, 40)
    with ParsePool(tmp_path, SETTINGS, 2) as pool:
        run = pool.run(tasks)
        outcomes = [next(run)]
        os.kill(pool._workers[0].process.pid, signal.SIGKILL)  # e.g. the OOM killer
        started = time.monotonic()
        outcomes += list(run)
    assert time.monotonic() - started < 30
    assert pool.deaths == 1
    # the file it was parsing is tried again in a new worker: nothing is lost
    assert [o.path for o in outcomes] == [t.path for t in tasks]
    assert all(isinstance(o, Prepared) for o in outcomes)


def test_a_hung_parse_is_reported_after_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _boot(monkeypatch, "if task.path == 'doc03.md':\n    time.sleep(3600)")
    monkeypatch.setattr(parallel, "PARSE_TIMEOUT_SECONDS", 1.5)
    tasks = _files(tmp_path, 8)
    started = time.monotonic()
    with ParsePool(tmp_path, SETTINGS, 2) as pool:
        outcomes = list(pool.run(tasks))
    assert time.monotonic() - started < 30
    assert isinstance(outcomes[3], Unreadable) and "longer than 2 s" in outcomes[3].reason
    assert [o.path for o in outcomes] == [t.path for t in tasks]
    assert sum(isinstance(o, Prepared) for o in outcomes) == 7


def test_the_parse_timeout_does_not_count_a_slow_worker_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first file sent to a worker waits for its interpreter and imports: its clock starts
    when the worker is ready. Counted from the dispatch, a slow start (a loaded machine) plus a
    parse well within the timeout passed for a hung parse."""
    # Start and parse each fit the timeout with about 3 s to spare (a loaded machine stretches
    # the imports and the parse by seconds), together they pass it: counted from the dispatch,
    # the file would be skipped.
    _boot(monkeypatch, "time.sleep(3.5)")  # each parse
    monkeypatch.setattr(parallel, "_BOOT", "import time\ntime.sleep(3.0)\n" + parallel._BOOT)  # the start
    monkeypatch.setattr(parallel, "PARSE_TIMEOUT_SECONDS", 6.5)
    tasks = _files(tmp_path, 2)
    with ParsePool(tmp_path, SETTINGS, 2) as pool:
        outcomes = list(pool.run(tasks))
    assert outcomes == [prepare(tmp_path, t, SETTINGS) for t in tasks]
    assert pool.deaths == 0


def test_workers_that_cannot_start_leave_the_pass_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "_BOOT", "import sys; sys.exit(3)")
    tasks = _files(tmp_path, 10)
    with ParsePool(tmp_path, SETTINGS, 2) as pool:
        outcomes = list(pool.run(tasks))
    assert [o.path for o in outcomes] == [t.path for t in tasks]
    assert all(isinstance(o, Prepared) for o in outcomes)
    assert outcomes == [prepare(tmp_path, t, SETTINGS) for t in tasks]


def test_a_cancelled_pass_stops_its_workers(tmp_path: Path, pools: list[ParsePool]) -> None:
    root = tmp_path / "kb"
    _tree(root, copies=4)
    svc = client(root, knowledge_base__index_workers=2)
    cancel = svc.ws.indexing._cancel
    seen = threading.Event()

    def on_progress(progress: Any) -> None:
        if progress.current_path and not seen.is_set():
            seen.set()
            cancel.set()

    from local_vector_search_mcp.index.indexer import Cancelled

    with pytest.raises(Cancelled):
        svc.ws.indexing.reindex(on_progress=on_progress)
    assert pools and not pools[0]._workers


def test_kb_reindex_in_the_background_uses_workers(tmp_path: Path, pools: list[ParsePool]) -> None:
    root = tmp_path / "kb"
    _tree(root, copies=2)
    svc = client(root, knowledge_base__index_workers=2)
    assert svc.start_reindex()["started"] is True
    svc.wait_reindex(60)
    last = svc.indexing_status()["last"]
    assert last["outcome"] == "succeeded" and last["result"]["indexedFiles"] == 12
    assert len(pools) == 1 and pools[0].nice == 10


def test_the_cli_reindex_runs_workers_without_rerunning_its_main(tmp_path: Path) -> None:
    """``python -m local_vector_search_mcp`` has no main guard: multiprocessing's spawn would run the
    CLI again in every worker. Our workers start as ``python -c``."""
    root = tmp_path / "kb"
    for i in range(parallel.MIN_PARALLEL_FILES + 20):
        path = root / f"d{i % 7}" / f"n{i:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n\nbody{i} words\n", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "local_vector_search_mcp",
            "--root",
            str(root),
            "--embedding-provider",
            "none",
            "--reindex",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert '"indexedFiles": 320' in proc.stdout
    assert "could not start" not in proc.stderr and "Traceback" not in proc.stderr


def test_workers_never_load_a_storage_adapter() -> None:
    # nor numpy: a third of a worker's start-up, and a parse never makes a vector
    code = (
        "import sys, local_vector_search_mcp.index.prepare\n"
        "bad = [m for m in sys.modules\n"
        "       if m in ('apsw', 'psycopg', 'sqlite3', 'numpy') or m.endswith(('.sqlite', '.postgres'))]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_plan_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "available_cores", lambda: 16)
    small = parallel.MIN_PARALLEL_FILES - 1
    assert plan_workers(0, small) == 0 and plan_workers(4, small) == 0  # start-up costs more than it saves
    assert plan_workers(0, 5000) == parallel.MAX_AUTO_WORKERS
    assert plan_workers(3, 5000) == 3 and plan_workers(1, 5000) == 0  # 1: in this process
    monkeypatch.setattr(parallel, "available_cores", lambda: 1)
    assert plan_workers(0, 5000) == 0


KILLED_PARENT = """
import sys, time
from pathlib import Path
from local_vector_search_mcp.index import parallel
from local_vector_search_mcp.index import prepare as prepare_module
from local_vector_search_mcp.index.prepare import ChunkSettings, Task
parallel._BOOT = sys.argv[2]
root = Path(sys.argv[1])
with parallel.ParsePool(root, ChunkSettings(4096, 20, True, True), 2) as pool:
    run = pool.run([Task(f"doc{i:02}.md") for i in range(20)])
    next(run)
    print(" ".join(str(w.process.pid) for w in pool._workers), flush=True)
    time.sleep(3600)
"""


def test_workers_exit_when_the_indexing_process_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _boot(monkeypatch, "time.sleep(0.2)")
    _files(tmp_path, 20)
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_PARENT, str(tmp_path), parallel._BOOT], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 20
    alive = pids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in pids if _running(pid)]
    assert not alive  # their pipe closed: they finished the file at hand and left


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for good (its parent was killed; init reaps it)
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_kb_reindex_over_stdio_with_workers_keeps_the_protocol_clean(tmp_path: Path) -> None:
    """The workers of a server's reindex never write to its stdout (the MCP channel)."""
    import json

    root = tmp_path / "kb"
    count = parallel.MIN_PARALLEL_FILES + 40
    for i in range(count):
        path = root / f"d{i % 5}" / f"n{i:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntags: [t{i % 3}]\n---\n# Note {i}\n\nbody{i} words\n", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "local_vector_search_mcp", "--root", str(root), "--embedding-provider", "none"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[dict[str, Any]] = []

    def rpc(message: dict[str, Any]) -> dict[str, Any] | None:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        while "id" in message:
            reply = json.loads(proc.stdout.readline())  # any stray byte on stdout fails here
            lines.append(reply)
            if reply.get("id") == message["id"]:
                return reply  # type: ignore[no-any-return]
        return None

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in (rpc({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}) or {})
        rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "kb_reindex", "arguments": {"request": {}}}
        started = rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}) or {}
        assert started["result"]["structuredContent"]["started"] is True
        deadline, last, ident = time.monotonic() + 120, None, 3
        while last is None and time.monotonic() < deadline:
            time.sleep(0.2)
            status_call = {"name": "kb_status", "arguments": {}}
            reply = rpc({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": status_call}) or {}
            ident += 1
            last = reply["result"]["structuredContent"]["indexing"]["last"]
        assert last is not None and last["outcome"] == "succeeded", last
        assert last["result"]["indexedFiles"] == count
    finally:
        proc.kill()
        proc.wait(30)
    assert all(line.get("jsonrpc") == "2.0" for line in lines)
