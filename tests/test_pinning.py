"""Pins: a write's folders opened without following a link, held while the write runs (decision 674)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from local_vector_search_mcp.errors import AlreadyExists
from local_vector_search_mcp.paths import RefusedPath
from local_vector_search_mcp.pinning import Pins, unpinned

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="pinning needs /proc/self/fd (Linux)")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "kb" / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return tmp_path / "kb"


def test_a_pinned_name_follows_its_folder_when_a_link_takes_the_folders_name(root: Path) -> None:
    with Pins(root) as pins:
        pinned = pins.pin(root / "sub" / "deep" / "a.md", "sub/deep/a.md")
        os.rename(root / "sub", root / "moved")
        os.symlink(root.parent / "outside", root / "sub")
        pinned.write_bytes(b"x")
    assert (root / "moved" / "deep" / "a.md").read_bytes() == b"x"
    assert list((root.parent / "outside").iterdir()) == []


def test_a_link_on_the_way_is_refused(root: Path) -> None:
    os.symlink(root.parent / "outside", root / "link")
    with Pins(root) as pins, pytest.raises(RefusedPath, match="symbolic links are not followed"):
        pins.pin(root / "link" / "a.md", "link/a.md")
    with Pins(root) as pins, pytest.raises(RefusedPath):
        pins.pin(root / "link" / "new" / "a.md", "link/new/a.md", make=True)
    assert list((root.parent / "outside").iterdir()) == []


def test_missing_folders_are_made_only_when_asked(root: Path) -> None:
    with Pins(root) as pins, pytest.raises(FileNotFoundError):
        pins.pin(root / "new" / "a.md", "new/a.md")
    assert not (root / "new").exists()
    with Pins(root) as pins:
        pins.pin(root / "new" / "more" / "a.md", "new/more/a.md", make=True).write_bytes(b"x")
    assert (root / "new" / "more" / "a.md").read_bytes() == b"x"


def test_a_file_where_a_folder_should_be(root: Path) -> None:
    (root / "file").write_bytes(b"")
    with Pins(root) as pins, pytest.raises(AlreadyExists, match="A file stands where a folder"):
        pins.pin(root / "file" / "a.md", "file/a.md", make=True)
    with Pins(root) as pins, pytest.raises(FileNotFoundError):
        pins.pin(root / "file" / "a.md", "file/a.md")


def test_a_folder_is_opened_once_and_closed_at_the_end(root: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    with Pins(root) as pins:
        a = pins.pin(root / "sub" / "a.md", "sub/a.md")
        b = pins.pin(root / "sub" / "b.md", "sub/b.md")
        top = pins.pin(root / "c.md", "c.md")
        assert a.parent == b.parent != top.parent
        assert len(os.listdir("/proc/self/fd")) == before + 2
        assert unpinned(a) == root / "sub" / "a.md"  # what crash recovery notes
        assert unpinned(top) == root / "c.md"
    assert len(os.listdir("/proc/self/fd")) == before
    assert unpinned(a) == a  # no longer open: no longer known


def test_only_the_roots_files_are_pinned(root: Path) -> None:
    with Pins(root) as pins, pytest.raises(ValueError):
        pins.pin(root.parent / "outside" / "a.md", "a.md")


def test_past_the_soft_limit_of_open_files_it_asks_for_more(root: Path) -> None:
    """A move's rewrites hold one descriptor per folder: at a low soft limit (often 1,024) a
    vault-wide rewrite must not fail with "Too many open files"."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    folders = 80
    for i in range(folders):
        (root / f"f{i}").mkdir()
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + folders // 2, hard))
        with Pins(root) as pins:
            pinned = [pins.pin(root / f"f{i}" / "a.md", f"f{i}/a.md") for i in range(folders)]
            pinned[-1].write_bytes(b"x")
        assert (root / f"f{folders - 1}" / "a.md").read_bytes() == b"x"
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
