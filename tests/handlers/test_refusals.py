"""Refusals as an agent meets them, through the dispatcher (the MCP and CLI code path): each names
what was wrong with which argument and what to send or call instead (decisions 1115-1124)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.workspace import Workspace

# a 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f01f0005000201"
    "a5bd3c8e0000000049454e44ae426082"
)
STALE = "0123456789abcdef"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nalpha para.\n\n| Name | Age |\n| --- | --- |\n| Bo | 3 |\n", "utf-8")
    (root / "taken.md").write_text("# Taken\n", "utf-8")
    (root / "folder.md").mkdir()
    (root / "dir.png").mkdir()
    (root / "img.png").write_bytes(PNG)
    (root / "other.png").write_bytes(PNG)
    settings = load_settings(
        CliOptions(
            root=str(root), storage_path=str(tmp_path / "index.db"), embedding_provider="none", allow_writes=True
        ),
        cwd=tmp_path,
        environ={},
    )
    workspace = Workspace(settings)
    yield workspace
    workspace.close()


def _files(root: Path) -> dict[str, bytes | None]:
    return {p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def refused(ws: Workspace, tool: str, arguments: dict[str, Any], code: str) -> str:
    """The message of the refusal ``tool`` gives ``arguments``, checked to be ``code`` and to leave
    every file as it was."""
    before = _files(ws.root)
    with pytest.raises(KbError) as caught:
        invoke(ws, tool, arguments)
    assert caught.value.code == code, caught.value.message
    assert _files(ws.root) == before
    return caught.value.message


@pytest.mark.parametrize(
    ("tool", "arguments", "named", "lister"),
    [
        ("kb_read", {"request": {"path": "docs/nope.md"}}, "Document 'docs/nope.md' was not found.", "kb_list_files"),
        ("kb_outline", {"request": {"path": "nope.md"}}, "Document 'nope.md' was not found.", "kb_list_files"),
        (
            "kb_patch",
            {
                "request": {
                    "path": "nope.md",
                    "operations": [{"kind": "insert_after", "pointer": "document", "markdown": "x"}],
                }
            },
            "Document 'nope.md' was not found.",
            "kb_list_files",
        ),
        (
            "kb_delete",
            {"request": {"path": "nope.md", "expectedSourceHash": "0" * 64}},
            "Document 'nope.md' was not found.",
            "kb_list_files",
        ),
        (
            "kb_move",
            {"request": {"sourcePath": "nope.md", "targetPath": "b.md", "expectedSourceHash": "0" * 64}},
            "Document 'nope.md' was not found.",
            "kb_list_files",
        ),
        ("kb_create_pdf_book", {"request": {"path": "nope.md"}}, "Document 'nope.md' was not found.", "kb_list_files"),
        ("kb_download_file", {"request": {"path": "nope.bin"}}, "File 'nope.bin' was not found.", "kb_list_files"),
        ("kb_load_image", {"path": "nope.png"}, "Image 'nope.png' was not found.", "kb_list_images"),
        ("kb_delete_image", {"path": "nope.png"}, "Image 'nope.png' was not found.", "kb_list_images"),
        (
            "kb_move_image",
            {"request": {"sourcePath": "nope.png", "targetPath": "b.png"}},
            "Image 'nope.png' was not found.",
            "kb_list_images",
        ),
    ],
)
def test_a_missing_document_or_file_is_refused_with_the_tool_that_lists_what_exists(
    ws: Workspace, tool: str, arguments: dict[str, Any], named: str, lister: str
) -> None:
    """Decision 1116: "Document 'nope.md' was not found." (the notes' words, kept first) said what
    was wrong but not where an agent finds the right path."""
    message = refused(ws, tool, arguments, "NOT_FOUND")
    assert message.startswith(named) and f"{lister} lists the" in message


def test_a_document_unknown_to_the_link_graph_names_kb_list_files_and_kb_reindex(ws: Workspace) -> None:
    ws.indexing.reindex("changed", False)  # synchronously, as kb_reindex's background pass does
    message = refused(ws, "kb_links", {"request": {"path": "nope.md"}}, "NOT_FOUND")
    assert "'nope.md'" in message and "kb_list_files" in message and "kb_reindex" in message


@pytest.mark.parametrize(
    ("tool", "arguments", "path"),
    [
        ("kb_read", {"request": {"path": "folder.md"}}, "folder.md"),
        ("kb_delete", {"request": {"path": "folder.md", "expectedSourceHash": "0" * 64}}, "folder.md"),
        ("kb_load_image", {"path": "dir.png"}, "dir.png"),
        ("kb_download_file", {"request": {"path": "docs"}}, "docs"),
    ],
)
def test_a_folder_sent_as_a_file_is_refused_with_how_to_list_it(
    ws: Workspace, tool: str, arguments: dict[str, Any], path: str
) -> None:
    message = refused(ws, tool, arguments, "INVALID_ARGUMENT")
    assert f"{path!r} is a folder" in message and f"kb_list_files with pathPrefix {path!r}" in message


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("kb_read", {"request": {"path": "taken.md/x.md"}}, "INVALID_PATH"),
        ("kb_create", {"request": {"path": "taken.md/sub/x.md", "markdown": "# X\n"}}, "INVALID_PATH"),
    ],
)
def test_a_path_under_a_file_names_the_file_that_is_no_folder(
    ws: Workspace, tool: str, arguments: dict[str, Any], code: str
) -> None:
    """Decision 1116: `taken.md/x.md` was "it cannot be inspected (Not a directory)", the operating
    system's words for a path whose folder is a file."""
    message = refused(ws, tool, arguments, code)
    assert "'taken.md' is a file, not a folder" in message and "Not a directory" not in message
    assert not (ws.root / "taken.md" / "sub").exists() and os.path.isfile(ws.root / "taken.md")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("kb_read", {"request": {"path": "a.md", "pointer": f"1.p1~{STALE}~{STALE}"}}),
        ("kb_outline", {"request": {"path": "a.md", "pointer": f"1~{STALE}~{STALE}"}}),
        (
            "kb_patch",
            {"request": {"path": "a.md", "operations": [{"kind": "delete", "pointer": f"1.p1~{STALE}~{STALE}"}]}},
        ),
        ("kb_edit_table", {"path": "a.md", "pointer": f"1.t1~{STALE}~{STALE}", "action": "delete_row", "rowIndex": 0}),
    ],
)
def test_a_stale_anchor_is_refused_with_the_read_that_gives_a_fresh_one(
    ws: Workspace, tool: str, arguments: dict[str, Any]
) -> None:
    """Decision 1117: "read the document again to get current pointers" (the notes' words, kept)
    named no tool, and re-reading from the stale anchor fails the same way."""
    message = refused(ws, tool, arguments, "CONFLICT")
    assert "read the document again with kb_read (from pointer `document`)" in message


def test_a_stale_image_hash_is_refused_with_the_tool_that_gives_the_current_one(ws: Workspace) -> None:
    arguments = {"request": {"sourcePath": "img.png", "targetPath": "b.png", "expectedSha256": "0" * 64}}
    message = refused(ws, "kb_move_image", arguments, "CONFLICT")
    assert "'img.png'" in message and "kb_load_image gives its current sha256" in message
    assert "expectedSha256" in message


@pytest.mark.parametrize(
    ("tool", "field"),
    [("kb_read", "path"), ("kb_outline", "path"), ("kb_list_files", "pathPrefix")],
)
def test_an_absolute_path_under_the_root_is_refused_with_its_relative_form(
    ws: Workspace, tool: str, field: str
) -> None:
    """Decision 1120: agents send the full path they saw in a terminal; "absolute paths are not
    allowed" told them what not to send. The relative form is named, the root never."""
    message = refused(ws, tool, {"request": {field: f"{ws.root}/docs/a.md"}}, "INVALID_PATH")
    assert f"send {field} 'docs/a.md'" in message and str(ws.root) not in message


def test_an_absolute_path_elsewhere_is_refused_with_the_shape_to_send(ws: Workspace) -> None:
    message = refused(ws, "kb_read", {"request": {"path": "/etc/secret/notes.md"}}, "INVALID_PATH")
    assert "Send path as kb_list_files lists paths" in message and "/etc" not in message
    outside = refused(ws, "kb_read", {"request": {"path": f"{ws.root}/../x.md"}}, "INVALID_PATH")
    assert "kb_list_files" in outside and str(ws.root.parent) not in outside


@pytest.mark.parametrize(
    ("tool", "arguments", "instead"),
    [
        ("kb_create", {"request": {"path": "taken.md", "markdown": "x"}}, "Choose another path, or change this one"),
        (
            "kb_move",
            {"request": {"sourcePath": "a.md", "targetPath": "taken.md", "expectedSourceHash": "0" * 64}},
            "Choose another targetPath.",
        ),
        (
            "kb_move_image",
            {"request": {"sourcePath": "other.png", "targetPath": "img.png"}},
            "Choose another targetPath.",
        ),
        (
            "kb_save_image",
            {"data": base64.b64encode(PNG).decode(), "targetPath": "img.png"},
            "Choose another targetPath, or leave it out",
        ),
    ],
)
def test_a_taken_target_is_refused_with_what_to_choose_instead(
    ws: Workspace, tool: str, arguments: dict[str, Any], instead: str
) -> None:
    """Decision 1120: "already exists; kb_move never overwrites" (the notes' words, kept) said what
    does not happen, not what to send."""
    message = refused(ws, tool, arguments, "ALREADY_EXISTS")
    assert "already exists" in message and instead in message


def test_an_unknown_tool_is_refused_with_the_tools_it_may_have_meant(ws: Workspace) -> None:
    """Decision 1121: "Unknown tool 'kb_reed'." named no tool to call instead."""
    message = refused(ws, "kb_reed", {}, "INVALID_ARGUMENT")
    assert message.startswith("Unknown tool 'kb_reed'.") and "Did you mean 'kb_read'" in message
    assert "tools/list names the" in message
    assert "Did you mean" not in refused(ws, "zzzz", {}, "INVALID_ARGUMENT")


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "said"),
    [
        ("kb_save_image", {"data": "data:image/png;base64,"}, "INVALID_ARGUMENT", "send the image's bytes as base64"),
        (
            "kb_save_image",
            {"data": "data:image/jpeg;base64," + base64.b64encode(PNG).decode()},
            "INVALID_ARGUMENT",
            "Declare image/png, or leave the type out.",
        ),
        (
            "kb_move_image",
            {"request": {"sourcePath": "img.png", "targetPath": "img2.jpg"}},
            "UNSUPPORTED_FORMAT",
            "give targetPath the extension .png",
        ),
    ],
)
def test_an_image_refusal_says_what_to_send(
    ws: Workspace, tool: str, arguments: dict[str, Any], code: str, said: str
) -> None:
    assert said in refused(ws, tool, arguments, code)


def test_a_document_that_is_not_utf8_is_refused_with_where_and_what_to_do(ws: Workspace) -> None:
    (ws.root / "latin.md").write_bytes("# Notes\n\nCaf\u00e9\n".encode("latin-1"))
    message = refused(ws, "kb_read", {"request": {"path": "latin.md"}}, "UNSUPPORTED_FORMAT")
    assert "byte 0xE9 on line 3" in message and message.endswith("Save it as UTF-8.")
