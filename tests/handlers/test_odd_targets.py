"""The editing tools on a path that exists but is no document answer as kb_read does (decision 702)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.workspace import Workspace

ZERO = "0" * 64


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "kb"
    root.mkdir()
    os.mkfifo(root / "pipe.md")  # opening it for reading would wait for a writer forever
    settings = load_settings(
        CliOptions(root=str(root), embedding_provider="none", allow_writes=True), cwd=tmp_path, environ={}
    )
    return Workspace(settings)


CALLS = {
    "kb_read": {"request": {"path": "pipe.md"}},
    "kb_patch": {
        "request": {"path": "pipe.md", "operations": [{"kind": "insert_after", "pointer": "document", "markdown": "x"}]}
    },
    "kb_edit_table": {
        "path": "pipe.md",
        "pointer": f"t1~{ZERO[:16]}~{ZERO[:16]}",
        "action": "delete_row",
        "rowIndex": 0,
    },
    "kb_move": {"request": {"sourcePath": "pipe.md", "targetPath": "moved.md", "expectedSourceHash": ZERO}},
    "kb_delete": {"request": {"path": "pipe.md", "expectedSourceHash": ZERO}},
}


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_a_fifo_named_like_a_document_is_not_a_regular_file_to_every_tool(ws: Workspace, tool: str) -> None:
    """kb_read said UNSUPPORTED_FORMAT "not a regular file"; kb_patch, kb_edit_table, kb_move and
    kb_delete said NOT_FOUND "was not found" of a name the agent sees in a listing, and kb_create
    then said it already exists."""
    with pytest.raises(KbError) as refused:
        invoke(ws, tool, CALLS[tool])
    assert refused.value.code == "UNSUPPORTED_FORMAT"
    assert "'pipe.md' is not a regular file" in refused.value.message
    assert stat.S_ISFIFO(os.lstat(ws.root / "pipe.md").st_mode) and not (ws.root / "moved.md").exists()


def test_kb_create_on_a_folder_named_like_a_document_says_it_is_a_folder(ws: Workspace) -> None:
    """Decision 1083: it said "Document 'notes.md' already exists", and kb_read then said it is a folder."""
    (ws.root / "notes.md").mkdir()
    with pytest.raises(KbError) as refused:
        invoke(ws, "kb_create", {"request": {"path": "notes.md", "markdown": "# Notes\n"}})
    assert refused.value.code == "ALREADY_EXISTS"
    assert "'notes.md' is a folder, not a document" in refused.value.message
    assert (ws.root / "notes.md").is_dir() and not any((ws.root / "notes.md").iterdir())
