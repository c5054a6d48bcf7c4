"""kb_list_files pages (decision 774) through the dispatcher, the MCP and CLI code path."""

from __future__ import annotations

from pathlib import Path

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.workspace import Workspace


def _workspace(root: Path, tmp_path: Path) -> Workspace:
    settings = load_settings(
        CliOptions(root=str(root), storage_path=str(tmp_path / "index.db"), embedding_provider="none"),
        cwd=tmp_path,
        environ={},
    )
    return Workspace(settings)


def test_a_listing_comes_in_pages_that_stay_whole_while_files_come_and_go(tmp_path: Path) -> None:
    """A listing held every file in one answer (263 kB for opensearch-docs' 1,762 files, 15 MB
    for 100,000). Pages now follow the listing's order from a cursor naming the last path
    returned, so files created or deleted between pages never shift the rest: every file that
    exists throughout is listed exactly once, in order."""
    root = tmp_path / "kb"
    root.mkdir()
    names = [f"d{i % 4}/f{i:03}.md" for i in range(40)] + ["A.md", "a.md", "B.txt"]
    for name in names:
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text("x", "utf-8")
    ws = _workspace(root, tmp_path)
    whole = [f["relativePath"] for f in invoke(ws, "kb_list_files", {"request": {}})["files"]]
    assert len(whole) == 43
    listed: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        request: dict[str, object] = {"maxFiles": 7}
        if cursor is not None:
            request["cursor"] = cursor
        page = invoke(ws, "kb_list_files", {"request": request})
        assert len(page["files"]) <= 7
        listed += [f["relativePath"] for f in page["files"]]
        cursor = page["nextCursor"]
        pages += 1
        if pages == 2:  # another program: one file before the cursor, one after, one deleted ahead
            (root / "0-early.md").write_text("x", "utf-8")
            (root / "zz-late.md").write_text("x", "utf-8")
            (root / "d3/f039.md").unlink()
        if cursor is None:
            break
    expected = [p for p in whole if p != "d3/f039.md"] + ["zz-late.md"]
    assert listed == expected and len(set(listed)) == len(listed)
    assert pages == 7
    # the default page holds everything under 2000 files, and says there is no more
    page = invoke(ws, "kb_list_files", {"request": {"pathPrefix": "d1", "maxFiles": 0}})
    assert [f["relativePath"] for f in page["files"]] == ["d1/f001.md"] and page["nextCursor"] == "d1/f001.md"
    rest = invoke(ws, "kb_list_files", {"request": {"pathPrefix": "d1", "cursor": "d1/f001.md"}})
    assert len(rest["files"]) == 9 and rest["nextCursor"] is None
