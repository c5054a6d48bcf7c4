"""Edits write Markdown text: a control character in a fragment is refused, the file untouched (decision 631)."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.workspace import Workspace

PAGE = b"# Page\r\n\r\nText\twith a tab.\r\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "page.md").write_bytes(PAGE)
    settings = load_settings(
        CliOptions(root=str(root), embedding_provider="none", allow_writes=True), cwd=tmp_path, environ={}
    )
    return Workspace(settings)


def _append(markdown: str) -> dict:
    return {
        "request": {
            "path": "page.md",
            "operations": [{"kind": "insert_after", "pointer": "document", "markdown": markdown}],
        }
    }


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x08", "\x0b", "\x1b", "\x1f"])
def test_a_fragment_with_a_control_character_is_refused_and_nothing_written(ws: Workspace, char: str) -> None:
    with pytest.raises(
        InvalidArgument,
        match=rf"operations\[0\]\.markdown contains the control character U\+{ord(char):04X} on its line 2",
    ):
        invoke(ws, "kb_patch", _append(f"Fine line.\nBad {char} line.\n"))
    assert (ws.root / "page.md").read_bytes() == PAGE
    with pytest.raises(
        InvalidArgument, match=rf"markdown contains the control character U\+{ord(char):04X} on its line 1"
    ):
        invoke(ws, "kb_create", {"request": {"path": "new.md", "markdown": f"# New {char}\n"}})
    assert not (ws.root / "new.md").exists()


def test_tab_line_breaks_and_form_feed_are_text(ws: Workspace) -> None:
    invoke(ws, "kb_patch", _append("Cell\tcell.\r\n\x0c\nAfter a page break.\n"))
    assert b"Cell\tcell." in (ws.root / "page.md").read_bytes()
    invoke(ws, "kb_create", {"request": {"path": "new.md", "markdown": "# New\n\nTab\there.\n"}})
    assert (ws.root / "new.md").read_bytes() == b"# New\n\nTab\there.\n"
