"""kb_edit_table through the dispatcher: the wire fields reach the table edit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kb_fakes import KbClient, make_workspace

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.workspace import Workspace

SETTINGS = "# Settings\n\n| Setting | Default |\n| --- | --- |\n| `index.refresh_interval` | `1s` |\n"


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = make_workspace(tmp_path, knowledge_base__allow_writes=True)
    yield workspace
    workspace.close()


def _table(ws: Workspace) -> str:
    read = invoke(ws, "kb_read", {"request": {"path": "settings.md"}})
    return next(e["pointer"] for e in read["elements"] if e["kind"] == "table")


def test_insert_row_writes_markdown_cells_as_given_when_asked(ws: Workspace) -> None:
    # the agent-work sweep had to insert, then update each cell again with valueFormat markdown,
    # to match rows written in code spans (decision 1027)
    (ws.root / "settings.md").write_text(SETTINGS, "utf-8")
    row = {"values": ["`index.number_of_shards`", "`1`"], "valueFormat": "markdown"}
    invoke(ws, "kb_edit_table", {"path": "settings.md", "pointer": _table(ws), "action": "insert_row", **row})
    assert (ws.root / "settings.md").read_text("utf-8") == SETTINGS + "| `index.number_of_shards` | `1` |\n"
    with pytest.raises(InvalidArgument, match="valueFormat"):
        invoke(
            ws,
            "kb_edit_table",
            {
                "path": "settings.md",
                "pointer": _table(ws),
                "action": "delete_row",
                "rowIndex": 0,
                "valueFormat": "text",
            },
        )


def test_a_search_results_full_pointer_sent_as_pointer_is_refused_with_what_to_send(ws: Workspace) -> None:
    """Decision 1095: an agent passing kb_search's ``fullPointer`` to kb_read or kb_patch read only
    "Invalid semantic pointer: ..." and repeated the call; the message now names the path and the
    pointer to send. The file is untouched."""
    (ws.root / "settings.md").write_text(SETTINGS, "utf-8")
    KbClient(ws).reindex()  # waits for the pass: a search while it runs is refused as not ready
    hit = invoke(ws, "kb_search", {"request": {"query": "refresh_interval", "mode": "lexical"}})["results"][0]
    hint = f"send path `settings.md` and pointer `{hit['pointer']}`"
    with pytest.raises(InvalidArgument, match=f"^Invalid semantic pointer: .*{hint}"):
        invoke(ws, "kb_read", {"request": {"path": "settings.md", "pointer": hit["fullPointer"]}})
    edit = {"kind": "delete", "pointer": hit["fullPointer"]}
    with pytest.raises(InvalidArgument, match=hint):
        invoke(ws, "kb_patch", {"request": {"path": "settings.md", "operations": [edit]}})
    assert (ws.root / "settings.md").read_text("utf-8") == SETTINGS
    # what the message says to send works
    read = invoke(ws, "kb_read", {"request": {"path": hit["path"], "pointer": hit["pointer"]}})
    assert read["elements"]
