"""read_source: a document's bytes, never through a link on the way, never waiting on a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from local_vector_search_mcp.errors import NotFound, UnsupportedFormat
from local_vector_search_mcp.sourcefile import read_source


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "kb" / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "kb" / "sub" / "deep" / "a.md").write_bytes(b"# Inside\n")
    (tmp_path / "outside" / "deep").mkdir(parents=True)
    (tmp_path / "outside" / "deep" / "a.md").write_bytes(b"# Outside\n")
    return tmp_path / "kb"


def test_a_nested_document_is_read(root: Path) -> None:
    assert read_source(root / "sub" / "deep" / "a.md", "sub/deep/a.md") == b"# Inside\n"


def test_a_folder_that_is_a_link_is_never_read_through(root: Path) -> None:
    """What a folder swapped for a link while a read runs looks like at the open (decision 675)."""
    os.rename(root / "sub", root / "sub.real")
    os.symlink(root.parent / "outside", root / "sub")
    with pytest.raises(NotFound):
        read_source(root / "sub" / "deep" / "a.md", "sub/deep/a.md")


def test_the_root_itself_may_be_a_link(root: Path) -> None:
    os.symlink(root, root.parent / "kb-link")
    linked = root.parent / "kb-link"
    assert read_source(linked / "sub" / "deep" / "a.md", "sub/deep/a.md") == b"# Inside\n"


def test_the_document_itself_may_not_be_a_link(root: Path) -> None:
    os.symlink(root.parent / "outside" / "deep" / "a.md", root / "b.md")
    with pytest.raises(UnsupportedFormat, match="symbolic link"):
        read_source(root / "b.md", "b.md")
    os.symlink(root.parent / "outside" / "deep" / "a.md", root / "sub" / "b.md")
    with pytest.raises(UnsupportedFormat, match="symbolic link"):
        read_source(root / "sub" / "b.md", "sub/b.md")
