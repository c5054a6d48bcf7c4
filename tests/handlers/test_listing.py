"""kb_list_files pages (decision 774) through the dispatcher, the MCP and CLI code path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.globs import compile_glob
from local_vector_search_mcp.handlers.files import utc_iso
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


def test_odd_names_in_the_root_and_too_long_paths_are_skipped_not_fatal(tmp_path: Path) -> None:
    """One root file named `C:x.md`, `\\x.md` or `" "` made every kb_list_files fail with
    INVALID_PATH (the guard read the name as an absolute path and raised), and one path longer
    than the contract's 1,024 characters with INTERNAL_ERROR (the answer failed its own schema).
    Both are now named in `skipped`; every other file is listed (decision 952)."""
    root = tmp_path / "kb"
    deep = root / "/".join(["d" * 200] * 5)  # 1,004 characters
    deep.mkdir(parents=True)
    (deep / "a-name-that-passes-1024.md").write_text("x", "utf-8")
    (deep / "x").write_text("x", "utf-8")
    long = (deep / "a-name-that-passes-1024.md").relative_to(root).as_posix()
    for name in ("C:x.md", "\\x.md", " ", "ok.md", "a\\b.md"):
        (root / name).write_text("x", "utf-8")
    ws = _workspace(root, tmp_path)
    page = invoke(ws, "kb_list_files", {"request": {}})
    assert [f["relativePath"] for f in page["files"]] == ["a\\b.md", (deep / "x").relative_to(root).as_posix(), "ok.md"]
    reasons = {s["path"]: s["reason"] for s in page["skipped"]}
    assert set(reasons) == {" ", "C:x.md", "\\x.md", long}
    assert "absolute path" in reasons["C:x.md"] and "absolute path" in reasons["\\x.md"]
    assert "blank name" in reasons[" "]
    assert "longer than the 1024 characters" in reasons[long]
    assert page["skippedFolders"] == 4


def test_a_listing_checks_only_each_new_name_and_formats_a_time_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root listing re-checked every component of every path and formatted every timestamp anew:
    two thirds of its 37 ms on the 1,881-file bench tree (decision 951). Plain names are checked
    alone, and a second listing of unchanged files formats no time again."""
    root = tmp_path / "kb"
    for i in range(30):
        (root / f"d{i % 3}" / "deeper").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 3}" / "deeper" / f"f{i:02}.md").write_text("x", "utf-8")
    ws = _workspace(root, tmp_path)
    normalised: list[str] = []
    real = ws.guard.normalise
    monkeypatch.setattr(ws.guard, "normalise", lambda path, **kw: normalised.append(path) or real(path, **kw))
    first = invoke(ws, "kb_list_files", {"request": {}})
    assert len(first["files"]) == 30 and normalised == []
    formatted = utc_iso.cache_info().misses
    second = invoke(ws, "kb_list_files", {"request": {}})
    assert second == first and utc_iso.cache_info().misses == formatted


FOLDERS = [
    "docs",
    "Docs/API",
    "docs/api/v1",
    "DOCS/Api/v2",
    "caf\u00e9/x",
    "cafe\u0301/y",
    "\u212aelvin",
    "kelvin/a",
    "a[b]/c",
]
GLOBS = st.lists(
    st.sampled_from(
        [
            "docs",
            "DOCS",
            "api",
            "Api",
            "v1",
            "café",
            "cafe\u0301",
            "kelvin",
            "a[b]",
            "c",
            "x",
            "**",
            "*",
            "d?cs",
            "*.md",
            "f?.md",
            "f1.md",
        ]
    ),
    min_size=1,
    max_size=4,
)


@pytest.fixture(scope="module")
def globbed_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, list[str]]:
    tmp = tmp_path_factory.mktemp("globs")
    root = tmp / "kb"
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in ("f1.md", "F2.md", "notes.txt"):
            (root / folder / name).write_text("x", "utf-8")
    (root / "f1.md").write_text("x", "utf-8")
    ws = _workspace(root, tmp)
    return ws, [f["relativePath"] for f in invoke(ws, "kb_list_files", {"request": {}})["files"]]


@settings(max_examples=150, deadline=None)
@given(segments=GLOBS, trailing_slash=st.booleans())
def test_a_glob_listing_walks_only_its_literal_folders_and_lists_what_the_glob_matches(
    globbed_tree: tuple[Workspace, list[str]], segments: list[str], trailing_slash: bool
) -> None:
    """An includeGlob listing walked the whole tree and filtered (26 ms for one folder of the bench
    tree); it now walks down only the folders the glob names literally (decision 953), and lists
    exactly the files the glob matches among all files: case-insensitively, NFC and NFD alike,
    KELVIN SIGN as `k`, `[` as a literal."""
    ws, everything = globbed_tree
    glob = "/".join(segments) + ("/" if trailing_slash else "")
    matches = compile_glob(glob, "includeGlob")
    listed = [f["relativePath"] for f in invoke(ws, "kb_list_files", {"request": {"includeGlob": glob}})["files"]]
    assert listed == [p for p in everything if matches(p)]


def test_a_glob_listing_looks_only_where_its_files_can_be(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`docs/api/**/*.md` opens the root, `docs` and what is under `docs/api`, nothing beside them;
    and `skipped` names what is wrong there, not a refused name elsewhere (decision 953)."""
    root = tmp_path / "kb"
    for folder in ("docs/api/v1", "docs/guide", "other/deep", "Docs/API"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "a.md").write_text("x", "utf-8")
    (root / "nul.md").write_text("x", "utf-8")
    (root / "docs" / "api" / "nul.md").write_text("x", "utf-8")
    ws = _workspace(root, tmp_path)
    opened: list[str] = []
    real = os.scandir
    monkeypatch.setattr(
        os, "scandir", lambda path: opened.append(Path(path).relative_to(root).as_posix()) or real(path)
    )
    page = invoke(ws, "kb_list_files", {"request": {"includeGlob": "docs/api/**/*.md"}})
    assert [f["relativePath"] for f in page["files"]] == ["Docs/API/a.md", "docs/api/v1/a.md"]
    assert sorted(opened) == [".", "Docs", "Docs/API", "docs", "docs/api", "docs/api/v1"]
    assert [s["path"] for s in page["skipped"]] == ["docs/api/nul.md"]
    whole = invoke(ws, "kb_list_files", {"request": {}})
    assert [s["path"] for s in whole["skipped"]] == ["docs/api/nul.md", "nul.md"]
