"""The path guard: hostile paths are refused with INVALID_PATH and nothing outside the root is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fs_audit import touched
from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.errors import InvalidPath
from local_vector_search_mcp.paths import PathGuard


@pytest.fixture
def layout(tmp_path: Path) -> tuple[PathGuard, Path, Path]:
    root = tmp_path / "kb"
    outside = tmp_path / "outside"
    (root / "docs").mkdir(parents=True)
    outside.mkdir()
    (root / "docs" / "a.md").write_text("# A\n")
    (outside / "secret.md").write_text("TOP SECRET\n")
    (root / "escape").symlink_to(outside)
    (root / "docs" / "evil.md").symlink_to(outside / "secret.md")
    (root / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    storage = root / ".local-vector-search-mcp" / "index.db"
    return PathGuard(root, storage), root, outside


HOSTILE = [
    "/etc/passwd",
    "\\\\server\\share\\x.md",
    "C:/Windows/x.md",
    "c:relative.md",
    "../outside/secret.md",
    "docs/../../outside/secret.md",
    "docs\\..\\..\\outside\\secret.md",
    "./docs/a.md",
    "docs//a.md",
    "docs/a.md ",
    "docs/a.md.",
    "docs/a<b.md",
    'docs/a"b.md',
    "docs/a|b.md",
    "docs/a?.md",
    "docs/a*.md",
    "docs/CON.md",
    "docs/nul",
    "docs/com1.txt",
    "LPT9",
    ".git/config",
    "docs/.GIT/HEAD",
    ".local-vector-search-mcp/index.db",
    ".local-vector-search-mcp/other",
    "docs/a\x00.md",
    "docs/a\nb.md",
    "docs/a\x7f.md",
    "docs/a\x80.md",  # C1 controls are control characters too, as .NET's char.IsControl says (decision 890)
    "docs/a\x85b.md",
    "docs/\x9f/a.md",
    "docs/bad\udcff.md",  # a name that is not UTF-8 on disk, as os.fsdecode gives it (decision 284)
    "docs/\ud800.md",
    "",
    "   ",
    "escape/secret.md",
    "docs/evil.md",
    "dangling.md",
]


@pytest.mark.parametrize("path", HOSTILE)
def test_hostile_paths_are_refused_without_touching_outside(layout: tuple[PathGuard, Path, Path], path: str) -> None:
    guard, _root, outside = layout
    with touched() as seen, pytest.raises(InvalidPath) as info:
        guard.resolve(path)
    assert info.value.code == "INVALID_PATH"
    assert str(outside) not in info.value.message
    assert str(_root) not in info.value.message
    assert not any(p.startswith(str(outside)) for p in seen), seen


def test_index_sidecars_are_refused(tmp_path: Path) -> None:
    guard = PathGuard(tmp_path, tmp_path / "data" / "kb.sqlite")
    for path in ("data/kb.sqlite", "data/kb.sqlite-wal", "data/KB.SQLITE-shm", "data/kb.sqlite.lock"):
        with pytest.raises(InvalidPath):
            guard.normalise(path)
    assert guard.normalise("data/other.md") == "data/other.md"


def test_refusal_tells_the_servers_own_files_from_refused_names(tmp_path: Path) -> None:
    # walks leave the index's files and .git out silently, and name every other refused file (decision 291)
    guard = PathGuard(tmp_path, tmp_path / ".local-vector-search-mcp" / "index.db")
    assert guard.refusal("docs/a.md") is None
    for internal in (".local-vector-search-mcp/index.db", "a/.git"):
        refused = guard.refusal(internal)
        assert refused is not None and refused.internal
    for name, why in (("nul.md", "device names"), ("what?.md", "characters"), ("dir./x.md", "end with")):
        refused = guard.refusal(name)
        assert refused is not None and not refused.internal and why in refused.why
        assert refused.code == "INVALID_PATH" and refused.why in refused.message


def test_storage_outside_root_hides_nothing(tmp_path: Path) -> None:
    guard = PathGuard(tmp_path / "kb", tmp_path / "elsewhere" / "index.db")
    assert guard.normalise("index.db") == "index.db"


def test_good_paths_resolve_inside_root(layout: tuple[PathGuard, Path, Path]) -> None:
    guard, root, _ = layout
    assert guard.resolve("docs/a.md") == ("docs/a.md", root / "docs" / "a.md")
    assert guard.resolve("docs\\a.md")[0] == "docs/a.md"
    assert guard.resolve("new/folder/b.md") == ("new/folder/b.md", root / "new" / "folder" / "b.md")
    assert guard.resolve(".github/x.yml")[0] == ".github/x.yml"
    assert guard.resolve("~notes.md")[0] == "~notes.md"


def test_markdown_only(layout: tuple[PathGuard, Path, Path]) -> None:
    guard, _, _ = layout
    with pytest.raises(InvalidPath):
        guard.resolve("docs/a.txt", markdown=True)
    assert guard.resolve("docs/A.MD", markdown=True)[0] == "docs/A.MD"


segment = st.one_of(
    st.sampled_from(["..", ".", "", ".git", "CON", "a.", "a ", "x:y", "a*b", "docs", "a.md", "escape", "dangling.md"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=0, max_size=6),
)


@given(
    parts=st.lists(segment, min_size=1, max_size=5),
    sep=st.sampled_from(["/", "\\"]),
    lead=st.sampled_from(["", "/", "\\", "C:", "../"]),
)
def test_generated_paths_never_escape(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str], sep: str, lead: str
) -> None:
    base = tmp_path_factory.getbasetemp() / "prop"
    root = base / "kb"
    outside = base / "outside"
    if not root.exists():
        (root / "docs").mkdir(parents=True)
        outside.mkdir()
        (outside / "secret.md").write_text("x")
        (root / "escape").symlink_to(outside)
        (root / "dangling.md").symlink_to(base / "nowhere")
    guard = PathGuard(root, root / ".local-vector-search-mcp" / "index.db")
    candidate = lead + sep.join(parts)
    with touched() as seen:
        try:
            rel, resolved = guard.resolve(candidate)
        except InvalidPath as exc:
            assert str(base) not in exc.message
        else:
            # Accepted: strictly inside the root, no link on the way, canonical form.
            assert resolved.is_relative_to(root) and resolved != root
            assert os.path.realpath(resolved).startswith(os.path.realpath(root) + os.sep)
            assert ".." not in rel.split("/") and "\\" not in rel
            assert ".git" not in rel.lower().split("/")
    assert not any(p.startswith(str(outside)) for p in seen)


def test_a_name_in_the_other_normal_form_resolves_to_the_file_on_disk(tmp_path: Path) -> None:
    """Decision 505: a Mac's NFD name is found when typed NFC (and the reverse), folders included."""
    root = tmp_path / "kb"
    (root / "Cafe\u0301").mkdir(parents=True)
    (root / "Cafe\u0301" / "Zo\u00eb.md").write_text("# Z\n")
    guard = PathGuard(root, root / ".local-vector-search-mcp" / "index.db")
    rel, path = guard.resolve("Caf\u00e9/Zoe\u0308.md", markdown=True)
    assert rel == "Cafe\u0301/Zo\u00eb.md"
    assert path == root / "Cafe\u0301" / "Zo\u00eb.md"
    # what does not exist keeps the caller's spelling below the folder that does
    assert guard.resolve("Caf\u00e9/New\u00e9.md")[0] == "Cafe\u0301/New\u00e9.md"
    assert guard.resolve("Nouveaut\u00e9.md")[0] == "Nouveaut\u00e9.md"


def test_a_link_reached_through_the_other_normal_form_is_still_refused(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (tmp_path / "secret.md").write_text("TOP SECRET\n")
    (root / "Cafe\u0301.md").symlink_to(tmp_path / "secret.md")
    guard = PathGuard(root, root / ".local-vector-search-mcp" / "index.db")
    with pytest.raises(InvalidPath, match="symbolic links"):
        guard.resolve("Caf\u00e9.md", markdown=True)


def test_an_exact_name_wins_and_two_equivalent_names_without_one_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "\u00e9\u00e9.md").write_text("composed\n")
    (root / "e\u0301e\u0301.md").write_text("decomposed\n")
    guard = PathGuard(root, root / ".local-vector-search-mcp" / "index.db")
    assert guard.resolve("e\u0301e\u0301.md")[0] == "e\u0301e\u0301.md"
    assert guard.resolve("\u00e9\u00e9.md")[0] == "\u00e9\u00e9.md"
    with pytest.raises(InvalidPath, match="only in Unicode normalisation"):
        guard.resolve("\u00e9e\u0301.md")


NAMES = [
    "a.md",
    "README",
    "notes 2024.md",
    "x-y_z+(1)[2]{3}~!@#$%^&'`=,;.md",
    ".github",
    ".gitignore",
    ".git",
    ".GIT",
    "git",
    "con",
    "CON.md",
    "Con",
    "console.md",
    "com1.md",
    "COM9",
    "com0.md",
    "lpt1.txt",
    "lpt.md",
    "nul",
    "aux.x.y",
    "prn.",
    ".",
    "..",
    "a.",
    "a ",
    " a",
    " ",
    "a:b.md",
    "a?.md",
    "a|b",
    'q"t',
    "<x>",
    "a*b",
    "tab\tname",
    "nel\x85",
    "del\x7f",
    "café.md",
    "cafe\u0301.md",
    "日本語.md",
    "a\\b.md",
    "\\x.md",
    "C:x.md",
    "c:",
    "index.db",
    "index.db-wal",
    "index.db.tmp",
    "INDEX.DB-shm",
    ".local-vector-search-mcp",
    "state",
    "é ",
]


@given(
    folder=st.sampled_from(["", "docs", "docs/deep er", ".local-vector-search-mcp", "a\\b", "data"]),
    name=st.one_of(st.sampled_from(NAMES), st.text(min_size=1, max_size=12).filter(lambda n: "/" not in n)),
)
def test_an_entry_is_refused_as_its_whole_path_would_be(folder: str, name: str) -> None:
    """A listing asks about each entry in a folder that passed (decision 951): refusal_in checks only
    a plain name, and must give refusal()'s answer for the whole path, the server's own files
    included. Where refusal() raised for a name that reads as an absolute path or as no path (a
    root entry `\\x`, `C:x`, `" "`: one such file failed the whole listing), it refuses the name."""
    root = Path("/kb")
    guard = PathGuard(root, root / "data" / "index.db", state_dir=root / "state")
    if guard.refusal(folder) is not None if folder else False:
        return  # a walk never enters a folder the guard refuses
    rel = f"{folder}/{name}" if folder else name
    try:
        expected = guard.refusal(rel)
    except InvalidPath:
        got = guard.refusal_in(folder, name)
        assert got is not None and not got.internal
        return
    got = guard.refusal_in(folder, name)
    if expected is None:
        assert got is None
    else:
        assert got is not None and (got.why, got.internal, str(got)) == (expected.why, expected.internal, str(expected))


def test_a_plain_name_is_not_checked_component_by_component(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of refusal_in: a listing of 1,881 files spent a third of its time re-checking every
    component of every path (decision 951). A plain name never reaches normalise()."""
    guard = PathGuard(Path("/kb"), Path("/kb/.local-vector-search-mcp/index.db"))
    seen: list[str] = []
    real = guard.normalise
    monkeypatch.setattr(guard, "normalise", lambda path, **kw: seen.append(path) or real(path, **kw))
    assert guard.refusal_in("docs/_api-reference/cat", "cat-indices.md") is None
    assert guard.refusal_in("", ".local-vector-search-mcp") is not None
    assert seen == []
    assert guard.refusal_in("docs", "nul.md") is not None and seen == ["docs/nul.md"]


def test_close_paths_name_what_an_agent_may_have_meant() -> None:
    from local_vector_search_mcp.paths import close_paths

    paths = ["docs/guide/install.md", "api/install.md", "docs/other.md", "Café/notes.md"]
    assert close_paths("docs/guide/instal.md", paths) == ["docs/guide/install.md"]  # a typo
    # its name in other folders, the one sharing a folder first; in another case
    assert close_paths("guide/install.md", paths)[:2] == ["docs/guide/install.md", "api/install.md"]
    assert close_paths("Docs/Guide/Install.md", paths)[0] == "docs/guide/install.md"
    assert close_paths("cafe\u0301/NOTES.md", paths) == ["Café/notes.md"]  # another Unicode form and case
    assert close_paths("nothing/here.md", paths) == []
    assert len(close_paths("install.md", [f"f{i}/install.md" for i in range(9)])) == 3


def test_a_missing_document_names_the_indexed_ones_close_to_it(tmp_path: Path) -> None:
    from kb_fakes import make_workspace

    from local_vector_search_mcp.dispatch import invoke
    from local_vector_search_mcp.errors import NotFound

    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "install.md").write_text("# Install\n\nSteps.\n", "utf-8")
    (tmp_path / "docs" / "gone.md").write_text("# Gone\n\nSoon.\n", "utf-8")
    ws = make_workspace(tmp_path, knowledge_base__allow_writes=True)
    ws.indexing.reindex("changed", False)
    (tmp_path / "docs" / "gone.md").unlink()  # indexed but no longer there: never suggested
    calls = [
        ("kb_read", {"path": "docs/guide/instal.md"}),
        ("kb_outline", {"path": "guide/install.md"}),
        ("kb_delete", {"path": "docs/install.md", "expectedSourceHash": "0" * 64}),
        ("kb_move", {"sourcePath": "Docs/Guide/Install.md", "targetPath": "x.md", "expectedSourceHash": "0" * 64}),
    ]
    for tool, request in calls:
        with pytest.raises(NotFound) as refused:
            invoke(ws, tool, {"request": request})
        sent = request.get("path") or request["sourcePath"]
        assert refused.value.message == (
            f"Document {sent!r} was not found. Did you mean 'docs/guide/install.md'? "
            "kb_list_files lists the documents that exist."
        ), tool
    with pytest.raises(NotFound) as refused:
        invoke(ws, "kb_read", {"request": {"path": "docs/gon.md"}})
    assert (
        refused.value.message == "Document 'docs/gon.md' was not found. kb_list_files lists the documents that exist."
    )
