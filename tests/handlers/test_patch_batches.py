"""kb_patch batches through the dispatcher: two operations where one element ends and the next
starts (decision 1067)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import make_workspace

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = make_workspace(tmp_path, knowledge_base__allow_writes=True)
    yield workspace
    workspace.close()


def _write(ws: Workspace, text: str) -> None:
    (ws.root / "d.md").write_bytes(text.encode("utf-8"))


def _disk(ws: Workspace) -> str:
    return (ws.root / "d.md").read_bytes().decode("utf-8")


def _pointer(ws: Workspace, first_line: str) -> str:
    elements = invoke(ws, "kb_read", {"request": {"path": "d.md"}})["elements"]
    return next(e["pointer"] for e in elements if e["text"].splitlines()[0] == first_line)


def _patch(ws: Workspace, *operations: dict[str, Any]) -> None:
    invoke(ws, "kb_patch", {"request": {"path": "d.md", "operations": list(operations)}})


CASES = [
    # (document, element the insertion follows, its fragment, next element, the next element's operation)
    ("- a\n- b\n", "- a", "- one", "- b", {"kind": "insert_before", "markdown": "- two"}),
    ("1. a\n2. b\n3. c\n", "1. a", "1. one", "2. b", {"kind": "insert_before", "markdown": "1. two"}),
    ("- a\r\n- b", "- a", "- one", "- b", {"kind": "insert_before", "markdown": "- two"}),
    ("- p\n  - c\n- q\n", "  - c", "  - one", "- q", {"kind": "insert_before", "markdown": "- two"}),
    ("- a\n- b\n- c\n", "- a", "- one", "- b", {"kind": "delete"}),
    ("- a\n- b\n", "- a", "- one", "- b", {"kind": "replace_element", "markdown": "- B"}),
    ("- a\n- b\n  - c\n", "- a", "- one", "- b", {"kind": "replace_subtree", "markdown": "- B"}),
    ("- a\n# H\n\ntext\n", "- a", "- one", "# H", {"kind": "insert_before", "markdown": "Two."}),
    ("- a\n# H\n\ntext\n\n# I\n", "- a", "- one", "# H", {"kind": "delete_section"}),
]


@pytest.mark.parametrize(("text", "before", "fragment", "after", "second"), CASES)
def test_an_insert_after_an_item_and_an_edit_of_the_next_element_go_together(
    ws: Workspace, text: str, before: str, fragment: str, after: str, second: dict[str, Any]
) -> None:
    """An item's insert_after lands where the next element starts, so any edit of that element
    claimed the same offset and the pair was refused as an overlap ("both would change the text
    at the same place"), while the same pair on two paragraphs was accepted. The batch now writes
    what the two operations write one after the other, in either order of the request."""
    _write(ws, text)
    _patch(ws, {"kind": "insert_after", "pointer": _pointer(ws, before), "markdown": fragment})
    _patch(ws, second | {"pointer": _pointer(ws, after)})
    one_by_one = _disk(ws)
    assert fragment in one_by_one
    for order in (1, -1):
        _write(ws, text)
        first = {"kind": "insert_after", "pointer": _pointer(ws, before), "markdown": fragment}
        _patch(ws, *[first, second | {"pointer": _pointer(ws, after)}][::order])
        assert _disk(ws) == one_by_one


def test_the_tight_list_pair_of_the_sweep(ws: Workspace) -> None:
    _write(ws, "Intro.\n\n- a\n- b\n\nEnd.\n")
    first = {"kind": "insert_after", "pointer": _pointer(ws, "- a"), "markdown": "- one"}
    _patch(ws, first, {"kind": "insert_before", "pointer": _pointer(ws, "- b"), "markdown": "- two"})
    assert _disk(ws) == "Intro.\n\n- a\n- one\n- two\n- b\n\nEnd.\n"


def test_two_insertions_after_elements_ending_at_one_place_stay_refused(ws: Workspace) -> None:
    # A parent item and its last nested item end at one offset; which insertion goes first is not said.
    text = "- p\n  - c\n- q\n"
    _write(ws, text)
    operations = [
        {"kind": "insert_after", "pointer": _pointer(ws, "- p"), "markdown": "- one"},
        {"kind": "insert_after", "pointer": _pointer(ws, "  - c"), "markdown": "  - two"},
    ]
    with pytest.raises(InvalidArgument, match=r"overlap .*the same place"):
        _patch(ws, *operations)
    assert _disk(ws) == text
