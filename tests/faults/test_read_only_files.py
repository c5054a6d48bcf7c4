"""A file whose mode gives no one write permission is never rewritten (decision 1046).

The writer replaces a file by renaming a new one over it, which only the folder's permission
governs, and these tests run as root on CI, where the operating system refuses nothing: every
refusal here is the server's own reading of the mode bits. Moving or deleting such a file stays
allowed, as ``mv`` and ``rm -f`` allow it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import KbClient, make_workspace

from local_vector_search_mcp import writer
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import PermissionDenied
from local_vector_search_mcp.workspace import Workspace

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
FILES: dict[str, bytes] = {
    "guide.md": b"# Guide\n\nSee [the FAQ](notes/faq.md).\n\n| Key | Value |\n| --- | --- |\n| a | 1 |\n",
    "notes/faq.md": b"# FAQ\n\nBack to [the guide](../guide.md) and ![logo](../img/logo.png).\n",
    "notes/locked.md": b"# Locked\n\nRead [the guide](../guide.md) first.\n",
    "lonely.md": b"# Lonely\n\nNo links.\n",
    "img/logo.png": PNG,
}


@pytest.fixture
def ws(tmp_path: Path, engine_storage: dict[str, Any]) -> Iterator[Workspace]:
    """``FILES``, writable and indexed (the link graph and the aliases a move reads), on each engine in turn."""
    root = tmp_path / "kb"
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    workspace = make_workspace(root, knowledge_base__allow_writes=True, **engine_storage)
    KbClient(workspace).reindex()
    yield workspace
    workspace.close()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _protect(ws: Workspace, rel: str) -> Path:
    """``rel`` made read-only as ``chmod a-w`` does."""
    path = ws.root / rel
    path.chmod(0o444)
    return path


def _pointer(ws: Workspace, rel: str, kind: str) -> str:
    read = invoke(ws, "kb_read", {"request": {"path": rel}})
    return str(next(e["pointer"] for e in read["elements"] if e["kind"] == kind))


def _patch(ws: Workspace, rel: str) -> dict[str, Any]:
    operation = {"kind": "insert_after", "pointer": _pointer(ws, rel, "paragraph"), "markdown": "A new paragraph."}
    return invoke(ws, "kb_patch", {"request": {"path": rel, "operations": [operation]}})


def _move(ws: Workspace, src: str, dst: str, **extra: Any) -> dict[str, Any]:
    request = {"sourcePath": src, "targetPath": dst, "expectedSourceHash": _sha((ws.root / src).read_bytes())}
    return invoke(ws, "kb_move", {"request": {**request, **extra}})


def _tree(root: Path) -> dict[str, bytes]:
    """Every file the user sees (the state folder aside), with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".local-vector-search-mcp" not in p.relative_to(root).parts
    }


def test_a_patch_or_table_edit_of_a_read_only_document_is_refused_and_leaves_it_unchanged(ws: Workspace) -> None:
    # was: both succeeded, a new file renamed over the protected one (keeping its mode)
    path = _protect(ws, "guide.md")
    before = _tree(ws.root)
    with pytest.raises(PermissionDenied, match=r"'guide\.md' is read-only.*nothing was changed.*chmod u\+w"):
        _patch(ws, "guide.md")
    table = {"path": "guide.md", "pointer": _pointer(ws, "guide.md", "table"), "action": "insert_row"}
    with pytest.raises(PermissionDenied, match=r"'guide\.md' is read-only"):
        invoke(ws, "kb_edit_table", {**table, "values": ["b", "2"]})
    assert _tree(ws.root) == before  # byte-identical, and no temporary file beside it
    assert path.stat().st_mode & 0o777 == 0o444


def test_the_same_patch_works_once_the_document_is_writable_again(ws: Workspace) -> None:
    path = _protect(ws, "guide.md")
    with pytest.raises(PermissionDenied):
        _patch(ws, "guide.md")
    path.chmod(0o644)  # chmod u+w
    result = _patch(ws, "guide.md")
    assert result["sourceHash"] == _sha(path.read_bytes())
    assert b"A new paragraph." in path.read_bytes()
    assert path.stat().st_mode & 0o777 == 0o644


def test_a_write_bit_for_anyone_is_enough(ws: Workspace) -> None:
    """Only "no one may write" is the user's protection; a file the group may write is not refused."""
    path = ws.root / "guide.md"
    path.chmod(0o464)
    _patch(ws, "guide.md")
    assert b"A new paragraph." in path.read_bytes()


def test_a_move_whose_links_reach_a_read_only_document_is_refused_and_changes_nothing(ws: Workspace) -> None:
    _protect(ws, "notes/locked.md")
    _protect(ws, "notes/faq.md")
    before = _tree(ws.root)
    with pytest.raises(PermissionDenied) as refused:
        _move(ws, "guide.md", "manual/guide.md", updateLinks=True)
    message = refused.value.message
    assert "'notes/faq.md', 'notes/locked.md'" in message and "nothing was moved or rewritten" in message
    assert "without updateLinks" in message
    assert _tree(ws.root) == before  # all or none: not moved, no link rewritten, nothing staged
    assert not (ws.root / "manual").exists()  # the target's folder is not left behind


def test_a_move_that_would_rewrite_the_read_only_document_itself_is_refused(ws: Workspace) -> None:
    """Its own relative links change with its folder: that rewrites its bytes, so it is refused too."""
    _protect(ws, "notes/locked.md")
    before = _tree(ws.root)
    with pytest.raises(PermissionDenied, match=r"a read-only document \('notes/locked\.md'; .*Make it writable"):
        _move(ws, "notes/locked.md", "locked.md", updateLinks=True)
    assert _tree(ws.root) == before


def test_a_read_only_document_itself_is_moved_and_deleted_as_mv_and_rm_do(ws: Workspace) -> None:
    _protect(ws, "notes/locked.md")
    assert _move(ws, "notes/locked.md", "notes/kept.md")["path"] == "notes/kept.md"
    assert (ws.root / "notes/kept.md").read_bytes() == FILES["notes/locked.md"]
    assert (ws.root / "notes/kept.md").stat().st_mode & 0o777 == 0o444
    # with updateLinks, when its own links stay as they are (same folder): moved, its bytes untouched
    assert _move(ws, "notes/kept.md", "notes/again.md", updateLinks=True)["path"] == "notes/again.md"
    assert (ws.root / "notes/again.md").read_bytes() == FILES["notes/locked.md"]
    data = (ws.root / "notes/again.md").read_bytes()
    invoke(ws, "kb_delete", {"request": {"path": "notes/again.md", "expectedSourceHash": _sha(data)}})
    assert not (ws.root / "notes/again.md").exists()


def test_an_image_move_whose_links_reach_a_read_only_page_is_refused(ws: Workspace) -> None:
    _protect(ws, "notes/faq.md")
    before = _tree(ws.root)
    request = {"sourcePath": "img/logo.png", "targetPath": "pics/logo.png", "updateLinks": True}
    with pytest.raises(PermissionDenied, match=r"'notes/faq\.md'.*nothing was moved or rewritten"):
        invoke(ws, "kb_move_image", {"request": request})
    assert _tree(ws.root) == before
    assert not (ws.root / "pics").exists()


def test_a_read_only_image_is_moved_and_deleted(ws: Workspace) -> None:
    _protect(ws, "img/logo.png")
    request = {"sourcePath": "img/logo.png", "targetPath": "pics/logo.png", "updateLinks": True}
    moved = invoke(ws, "kb_move_image", {"request": request})
    assert moved["updatedPaths"] == ["notes/faq.md"]
    assert (ws.root / "pics/logo.png").read_bytes() == PNG
    invoke(ws, "kb_delete_image", {"path": "pics/logo.png"})
    assert not (ws.root / "pics/logo.png").exists()


def test_a_pdf_export_over_a_read_only_pdf_is_refused(ws: Workspace) -> None:
    earlier = ws.root / "guide.pdf"
    earlier.write_bytes(b"%PDF-1.4 an earlier export\n")
    earlier.chmod(0o444)
    with pytest.raises(PermissionDenied, match=r"'guide\.pdf' is read-only.*not replaced.*another outputPath"):
        invoke(ws, "kb_create_pdf_book", {"request": {"path": "guide.md"}})
    assert earlier.read_bytes() == b"%PDF-1.4 an earlier export\n"


def test_a_pdf_made_read_only_during_the_export_is_not_replaced(ws: Workspace) -> None:
    """The writer checks again under its lock as the finished file takes the target's place."""
    target = ws.root / "guide.pdf"
    target.write_bytes(b"%PDF-1.4 an earlier export\n")
    target.chmod(0o444)  # after the handler looked
    staged = writer.temp_path(target)
    staged.write_bytes(b"%PDF-1.4 the new export\n")
    with pytest.raises(PermissionDenied, match=r"'guide\.pdf' is read-only.*not replaced"):
        writer.replace_with_staged(ws, "guide.pdf", target, staged)
    assert target.read_bytes() == b"%PDF-1.4 an earlier export\n"
