"""One SQLite index file, one knowledge base (decisions 535-537).

Two projects given one storage.path (an absolute path in a copied configuration, one global
--storage-path in an MCP client's settings) deleted each other's documents at every reindex, and
each one's --status then called the other's documents its own. The file now records the root it
indexes: another project's index is refused, a moved project's and an old index are adopted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.errors import IndexNotReady
from local_vector_search_mcp.index.owner import Owner
from local_vector_search_mcp.index.sqlite import SqliteStore
from local_vector_search_mcp.workspace import Workspace

REFUSAL = "belongs to another knowledge base"


def _project(folder: Path, word: str) -> Path:
    folder.mkdir(parents=True)
    (folder / f"{word}.md").write_text(f"# {word.title()}\n\n{word} notes of this project\n", "utf-8")
    return folder


def _cli(root: Path, storage: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user or an MCP client's configuration starts it: a project
    root with its own state folder when no storage path is given."""
    where = ["--project-root", str(root)] if storage is None else ["--root", str(root), "--storage-path", str(storage)]
    return subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", *where, "--embedding-provider", "none", *args],
        capture_output=True,
        text=True,
        cwd=root.parent,
        timeout=120,
        env={**os.environ, "CLAUDE_PROJECT_DIR": ""},
    )


def _status(root: Path, storage: Path | None) -> dict[str, object]:
    done = _cli(root, storage, "--status")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert isinstance(status, dict)
    return status


def _documents(storage: Path) -> list[str]:
    conn = apsw.Connection(str(storage), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return sorted(str(row[0]) for row in conn.execute("SELECT path FROM documents"))
    finally:
        conn.close()


def test_a_second_project_on_one_index_file_is_refused_and_deletes_nothing(tmp_path: Path) -> None:
    """Decision 535: B's reindex deleted A's documents and A's --status said "compatible, 1
    document" (B's). Now every command of B refuses, naming both folders and the fix, and A's
    index is untouched, even by --reindex --force."""
    a, b = _project(tmp_path / "alpha", "apple"), _project(tmp_path / "beta", "banana")
    shared = tmp_path / "indexes" / "index.db"
    assert _cli(a, shared, "--reindex").returncode == 0
    for args in (["--reindex"], ["--reindex", "--force"]):
        done = _cli(b, shared, *args)
        assert done.returncode != 0
        assert REFUSAL in done.stderr and "'alpha'" in done.stderr and "'beta'" in done.stderr
        assert "give this project its own storage.path" in done.stderr.lower()
        assert "Traceback" not in done.stderr
    status = _status(b, shared)
    compatibility = status["compatibility"]
    assert isinstance(compatibility, dict) and not compatibility["isCompatible"]
    assert REFUSAL in compatibility["problems"][0]
    assert _documents(shared) == ["apple.md"]
    project = _status(a, shared)["project"]
    assert isinstance(project, dict) and project["documents"] == 1
    found = _cli(a, shared, "call", "kb_search", "--query", "apple", "--mode", "lexical")
    assert [hit["path"] for hit in json.loads(found.stdout)["results"]] == ["apple.md"]


def _workspace(root: Path, storage: Path, writes: bool = False) -> Workspace:
    options = CliOptions(root=str(root), storage_path=str(storage), embedding_provider="none", allow_writes=writes)
    return Workspace(load_settings(options, cwd=root.parent, environ={}))


def test_over_mcp_the_other_projects_index_is_index_not_ready_and_edits_still_write_markdown(tmp_path: Path) -> None:
    """Decision 535 over MCP: a server of B (its catch-up at the first call included) neither
    reads A's documents as B's nor writes into the file; an edit writes B's Markdown only."""
    a, b = _project(tmp_path / "alpha", "apple"), _project(tmp_path / "beta", "banana")
    shared = tmp_path / "shared.db"
    ws_a = _workspace(a, shared)
    ws_a.indexing.reindex()
    ws_a.close()
    before = shared.read_bytes()
    ws = _workspace(b, shared, writes=True)
    ws.start_serving()
    try:
        with pytest.raises(IndexNotReady, match=REFUSAL):
            dispatch.invoke(ws, "kb_search", {"request": {"query": "apple", "mode": "lexical"}})
        status = dispatch.invoke(ws, "kb_status", None)
        assert isinstance(status, dict) and REFUSAL in status["compatibility"]["problems"][0]
        created = dispatch.invoke(ws, "kb_create", {"request": {"path": "new.md", "markdown": "# New\n\ncherry\n"}})
        assert isinstance(created, dict) and created["indexSynchronized"] is False
        with pytest.raises(IndexNotReady, match=REFUSAL):
            ws.indexing.reindex(force=True)
        ws.indexing.wait_reindex(60)
    finally:
        ws.close()
    assert (b / "new.md").exists()
    assert _documents(shared) == ["apple.md"]
    assert shared.read_bytes() == before


def test_a_moved_project_adopts_its_index_and_a_new_folder_at_the_old_place_is_refused(tmp_path: Path) -> None:
    """Decision 536: the recorded folder gone (moved or renamed), the index is the project's at its
    new place, nothing re-indexed; a new project created at the old place is then another one."""
    a = _project(tmp_path / "alpha", "apple")
    shared = tmp_path / "shared.db"
    assert _cli(a, shared, "--reindex").returncode == 0
    moved = tmp_path / "alpha-renamed"
    a.rename(moved)
    assert _status(moved, shared)["compatibility"] == {"isCompatible": True, "problems": []}
    again = _cli(moved, shared, "--reindex")
    assert again.returncode == 0 and json.loads(again.stdout)["indexedFiles"] == 0
    newcomer = _project(tmp_path / "alpha", "apricot")
    refused = _cli(newcomer, shared, "--reindex")
    assert refused.returncode != 0 and REFUSAL in refused.stderr and "'alpha-renamed'" in refused.stderr
    assert _documents(shared) == ["apple.md"]


def test_an_index_from_before_the_record_is_adopted_by_the_first_project_that_opens_it(tmp_path: Path) -> None:
    """Decision 536: an index written before this change records no root; the first project to open
    it (even only for --status) adopts it, and a second one is refused from then on."""
    a, b = _project(tmp_path / "alpha", "apple"), _project(tmp_path / "beta", "banana")
    shared = tmp_path / "shared.db"
    assert _cli(a, shared, "--reindex").returncode == 0
    conn = apsw.Connection(str(shared))
    conn.execute("DROP TABLE index_owner")  # what an index of the previous release holds
    conn.close()
    assert _status(a, shared)["compatibility"] == {"isCompatible": True, "problems": []}
    refused = _cli(b, shared, "--reindex")
    assert refused.returncode != 0 and REFUSAL in refused.stderr
    assert _documents(shared) == ["apple.md"]


def test_a_project_folder_copied_with_its_index_adopts_the_copy(tmp_path: Path) -> None:
    """Decision 536: the default index lies inside the knowledge base; a copy of the whole folder
    carries an index recording the original, which still exists. A file inside the knowledge base
    is its own: the copy adopts it and the original keeps its own file."""
    a = _project(tmp_path / "alpha", "apple")
    assert _cli(a, None, "--reindex").returncode == 0
    copy = tmp_path / "alpha-copy"
    shutil.copytree(a, copy)
    (copy / "extra.md").write_text("# Extra\n\nkiwi\n", "utf-8")
    done = _cli(copy, None, "--reindex")
    assert done.returncode == 0, done.stderr
    assert _documents(copy / ".local-vector-search-mcp" / "index.db") == ["apple.md", "extra.md"]
    assert _status(a, None)["compatibility"] == {"isCompatible": True, "problems": []}


def test_two_stores_creating_one_new_file_the_second_is_refused(tmp_path: Path) -> None:
    """Decision 537: on a new (empty) file nothing is recorded at open; the schema's creation
    records the owner in the same transaction and decides again, so two projects starting on one
    new file cannot both take it."""
    a, b = _project(tmp_path / "alpha", "apple"), _project(tmp_path / "beta", "banana")
    path = tmp_path / "new.db"
    first = SqliteStore(path, owner=Owner(a.resolve(), False))
    second = SqliteStore(path, owner=Owner(b.resolve(), False))
    try:
        second._conn()  # opened while the file is still empty: nothing to check yet
        first.ensure_schema(None, "float32")
        with pytest.raises(IndexNotReady, match=REFUSAL):
            second.ensure_schema(None, "float32")
    finally:
        first.close()
        second.close()


def test_a_server_refused_at_every_call_logs_the_full_paths_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Decision 535: the message names folders only; the log names both full paths, once per
    store and file, not at every one of a server's calls."""
    a, b = _project(tmp_path / "alpha", "apple"), _project(tmp_path / "beta", "banana")
    shared = tmp_path / "shared.db"
    ws_a = _workspace(a, shared)
    ws_a.indexing.reindex()
    ws_a.close()
    ws = _workspace(b, shared)
    try:
        for _ in range(3):
            with pytest.raises(IndexNotReady, match=REFUSAL) as refused:
                dispatch.invoke(ws, "kb_search", {"request": {"query": "apple", "mode": "lexical"}})
            assert str(tmp_path) not in refused.value.message
    finally:
        ws.close()
    lines = [r.getMessage() for r in caplog.records if "belongs to the knowledge base" in r.getMessage()]
    assert len(lines) == 1 and str(a) in lines[0] and str(b) in lines[0]


def _config_project(folder: Path, word: str) -> Path:
    """A project whose configuration makes the subfolder docs/ the knowledge base: the state
    folder, and with it the index, lies beside the knowledge base, not inside it."""
    _project(folder / "docs", word)
    (folder / "kb.yml").write_text("knowledgeBase: {root: docs}\nembedding: {provider: none}\n", "utf-8")
    return folder


def _in(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command line started in the project folder with its configuration, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", "--config", "kb.yml", *args],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
        env={**os.environ, "CLAUDE_PROJECT_DIR": ""},
    )


def _lexical(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", "--embedding-provider", "none", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CLAUDE_PROJECT_DIR": ""},
    )


def _owner_rows(storage: Path) -> dict[str, str]:
    conn = apsw.Connection(str(storage), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM index_owner")}
    finally:
        conn.close()


def test_a_project_with_root_docs_copied_with_its_index_adopts_the_copy(tmp_path: Path) -> None:
    """Decision 550: with `root: docs` the index lies beside the knowledge base, so 536's "inside
    the knowledge base" never held and a copied project was refused as another one's. The file
    records where it lay: found elsewhere at the same place relative to the root, it travelled
    with its knowledge base. Both projects then index on, each in its own file."""
    original = _config_project(tmp_path / "project", "apple")
    assert _in(original, "--reindex").returncode == 0
    copy = tmp_path / "project-copy"
    shutil.copytree(original, copy)
    (copy / "docs" / "extra.md").write_text("# Extra\n\nkiwi\n", "utf-8")
    done = _in(copy, "--reindex")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["indexedFiles"] == 1  # the copied document was not indexed again
    index = Path(".local-vector-search-mcp") / "index.db"
    assert _documents(copy / index) == ["apple.md", "extra.md"]
    assert _owner_rows(copy / index) == {"root": str((copy / "docs").resolve()), "file": str((copy / index).resolve())}
    assert _documents(original / index) == ["apple.md"]
    status = json.loads(_in(original, "--status").stdout)
    assert status["compatibility"] == {"isCompatible": True, "problems": []}


def test_a_changed_root_on_the_same_index_file_is_still_refused_and_named_apart(tmp_path: Path) -> None:
    """Decision 550 keeps 535: a file still at its recorded place is the one the recorded folder
    uses, so a project root indexed whole and then given `--root docs` (or a second knowledge
    base of the same project) is refused. Decision 551: the message names both folders relative
    to the project root, so the two can be told apart, and says what to do."""
    project = _project(tmp_path / "project", "apple")
    _project(project / "docs", "banana")
    assert _cli(project, None, "--reindex").returncode == 0
    refused = _lexical("--project-root", str(project), "--root", "docs", "--reindex")
    assert refused.returncode == 1
    message = refused.stderr.strip().splitlines()[-1]
    assert REFUSAL in message
    assert "it indexes the project root itself" in message and "knowledge base is the folder 'docs'" in message
    assert "'.local-vector-search-mcp/index.db'" in message  # which file, as the project knows it
    assert "index copy --from sqlite:" in message and "--reindex --force does not take it over" in message
    # decision 996: one project indexed with one root and served with another, said first
    assert "started with another knowledge-base root than the one the index was built with" in message
    assert str(tmp_path) not in message
    assert _documents(project / ".local-vector-search-mcp" / "index.db") == ["apple.md", "docs/banana.md"]


def test_the_whole_project_opening_the_index_of_its_root_docs_is_refused(tmp_path: Path) -> None:
    """Decision 982: with `root: docs` the index lies in the project root's state folder, so one
    `--status` typed without `--config` (its root the whole project) found the file inside its root
    and adopted it (536's copy rule). The index then belonged to the project root, and every later
    run with the configuration was refused for good. A file still at its recorded place is the
    recorded folder's: the run without the configuration is refused, and the configured one goes on."""
    project = _config_project(tmp_path / "project", "apple")
    assert _in(project, "--reindex").returncode == 0
    storage = project / ".local-vector-search-mcp" / "index.db"
    before = _owner_rows(storage)
    status = _lexical("--project-root", str(project), "--status")
    assert status.returncode == 0, status.stderr
    (problem,) = json.loads(status.stdout)["compatibility"]["problems"]
    assert REFUSAL in problem and "it indexes the folder 'docs'" in problem
    for stray in (["call", "kb_search", "--query", "apple"], ["--reindex"]):
        refused = _lexical("--project-root", str(project), *stray)
        assert refused.returncode == 1, (stray, refused.stdout)
        message = refused.stderr.strip().splitlines()[-1]
        assert REFUSAL in message and "it indexes the folder 'docs'" in message
    assert _owner_rows(storage) == before
    done = _in(project, "call", "kb_search", "--query", "apple")
    assert done.returncode == 0, done.stderr
    assert [hit["path"] for hit in json.loads(done.stdout)["results"]] == ["apple.md"]


def test_two_folders_of_one_name_are_told_apart(tmp_path: Path) -> None:
    """Decision 551: two knowledge bases named `kb` on one absolute storage.path were refused as
    "'kb' ... 'kb'". Relative to the project root they are '../../work/kb' and the root itself;
    without a project root (a store opened directly), by the end of the path that differs."""
    first, second = _project(tmp_path / "work" / "kb", "apple"), _project(tmp_path / "copy" / "kb", "banana")
    shared = tmp_path / "shared.db"
    assert _cli(first, shared, "--reindex").returncode == 0
    refused = _lexical("--project-root", str(second), "--storage-path", str(shared), "--reindex")
    message = refused.stderr.strip().splitlines()[-1]
    assert "it indexes the folder '../../work/kb'" in message and "is the project root itself" in message
    assert str(tmp_path) not in message
    store = SqliteStore(shared, owner=Owner(second.resolve(), False, shared.resolve()))
    try:
        with pytest.raises(IndexNotReady, match=REFUSAL) as bare:
            store.read_manifest()
    finally:
        store.close()
    assert "'.../work/kb'" in bare.value.message and "'.../copy/kb'" in bare.value.message
    assert str(tmp_path) not in bare.value.message


def test_an_index_that_records_no_place_records_it_when_its_project_opens_it(tmp_path: Path) -> None:
    """Decision 550: an index of decision 535's time records its root only; its own project
    records the file's place at the next open (even --status), so a copy made afterwards is
    recognised."""
    original = _config_project(tmp_path / "project", "apple")
    assert _in(original, "--reindex").returncode == 0
    index = original / ".local-vector-search-mcp" / "index.db"
    conn = apsw.Connection(str(index))
    conn.execute("DELETE FROM index_owner WHERE key = 'file'")
    conn.close()
    assert _in(original, "--status").returncode == 0
    assert _owner_rows(index)["file"] == str(index.resolve())
    copy = tmp_path / "project-copy"
    shutil.copytree(original, copy)
    done = _in(copy, "--reindex")
    assert done.returncode == 0, done.stderr
