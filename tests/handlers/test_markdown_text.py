"""Edits write Markdown text: a control character in a fragment is refused, the file untouched (decision 631)."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import Conflict, InvalidArgument
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


# mand-mobile's components/progress/README.md (a blind set): a stray backspace opens two slot texts
SLOTS = (
    "#### Progress Slots\n\n##### default\n\x08圆环内部内容插槽，一般用于添加文本\n\n"
    "##### defs\n\x08圆环SVG内部的插槽\n"
)


def test_a_control_character_the_file_holds_may_be_written_back(ws: Workspace) -> None:
    """Decision 1092, from the real-corpus sweep: an element holding a control character the file
    already had could not be replaced by its own text, nor its section, nor could a typo beside it
    be fixed keeping it; a stale anchor with such a fragment answered INVALID_ARGUMENT, not CONFLICT."""
    (ws.root / "slots.md").write_text(SLOTS, "utf-8")
    read = invoke(ws, "kb_read", {"request": {"path": "slots.md"}})
    slot = next(e for e in read["elements"] if e["kind"] == "paragraph")
    heading = read["elements"][0]

    def patch(*ops: dict) -> dict:
        return invoke(ws, "kb_patch", {"request": {"path": "slots.md", "operations": list(ops)}})

    patch({"kind": "replace", "pointer": slot["pointer"], "markdown": slot["text"]})
    section = SLOTS  # the whole file is the first heading's section
    patch({"kind": "replace_section", "pointer": heading["pointer"], "markdown": section})
    assert (ws.root / "slots.md").read_text("utf-8") == SLOTS
    patch({"kind": "replace", "pointer": slot["pointer"], "markdown": slot["text"].replace("插槽", "插槽。")})
    assert (ws.root / "slots.md").read_text("utf-8") == SLOTS.replace("内容插槽", "内容插槽。")
    stale = slot["pointer"]  # its text changed: the anchor read before is stale
    with pytest.raises(Conflict):
        patch({"kind": "replace", "pointer": stale, "markdown": slot["text"]})
    # a control character the file does not hold is still refused, the file untouched
    before = (ws.root / "slots.md").read_bytes()
    with pytest.raises(InvalidArgument, match="U\\+001B"):
        patch({"kind": "insert_after", "pointer": "document", "markdown": "Esc \x1b here."})
    assert (ws.root / "slots.md").read_bytes() == before
