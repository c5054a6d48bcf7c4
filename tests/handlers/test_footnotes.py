"""A footnote whose body is one token through the dispatcher (decision 1194): CommonMark reads
``[^1]: https://example.org/paper`` as a link reference definition, which no element and no chunk
held, so kb_search never found its text. It is now a paragraph, found, read and edited as a
footnote of several words is, and no other pointer of its document changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kb_fakes import KbClient, make_workspace

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.markdown import parse_text
from local_vector_search_mcp.workspace import Workspace

PAPER = (
    "# Paper\n"
    "\n"
    "A claim.[^1] Another one.[^smith]\n"
    "\n"
    "[^1]: https://example.org/quokkapaper\n"
    "[^smith]: Smith2020\n"
    "\n"
    "After the notes.\n"
    "\n"
    "[^long]: several words, read as a paragraph already\n"
    "\n"
    "A [real] reference.\n"
    "\n"
    "[real]: https://example.org/zebrapage\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = make_workspace(tmp_path, knowledge_base__allow_writes=True)
    (workspace.root / "paper.md").write_text(PAPER, "utf-8")
    KbClient(workspace).reindex()
    yield workspace
    workspace.close()


def _search(ws: Workspace, query: str) -> list[dict]:
    return invoke(ws, "kb_search", {"request": {"query": query, "mode": "lexical"}})["results"]


def _elements(ws: Workspace) -> list[dict]:
    return invoke(ws, "kb_read", {"request": {"path": "paper.md"}})["elements"]


def test_a_one_token_footnote_is_searched_and_read_as_a_paragraph(ws: Workspace) -> None:
    for query in ("Smith2020", "quokkapaper"):
        hits = _search(ws, query)
        assert [h["path"] for h in hits] == ["paper.md"], query
        read = invoke(ws, "kb_read", {"request": {"path": "paper.md", "pointer": hits[0]["pointer"]}})
        assert any(query in e["text"] for e in read["elements"]), query
    by_text = {e["text"]: e for e in _elements(ws)}
    for text in ("[^1]: https://example.org/quokkapaper", "[^smith]: Smith2020"):
        assert by_text[text]["kind"] == "paragraph"
        assert by_text[text]["headingPath"] == "Paper"
    # a real reference definition is still no element and no text of a chunk
    assert not any("zebrapage" in e["text"] for e in _elements(ws))
    assert _search(ws, "zebrapage") == []


def test_the_other_elements_keep_the_pointers_they_had() -> None:
    """The footnotes take the ordinals after their section's other paragraphs: every pointer the
    document had before (the reading of CommonMark, here the text without them) is unchanged."""
    before = parse_text(PAPER.replace("[^1]: https://example.org/quokkapaper\n[^smith]: Smith2020\n\n", ""))
    after = parse_text(PAPER)
    old = {e.pointer: e.text for e in before.elements}
    new = {e.pointer: e.text for e in after.elements}
    assert {p: new[p] for p in old} == old
    assert {p: t for p, t in new.items() if p not in old} == {
        "1.p5": "[^1]: https://example.org/quokkapaper",
        "1.p6": "[^smith]: Smith2020",
    }
    assert after.reserved == before.reserved


def test_an_edit_of_a_footnote_or_beside_it_keeps_every_other_byte(ws: Workspace) -> None:
    path = ws.root / "paper.md"
    note = next(e for e in _elements(ws) if e["text"] == "[^smith]: Smith2020")
    edit = {"kind": "replace", "pointer": note["pointer"], "markdown": "[^smith]: Smith2021"}
    invoke(ws, "kb_patch", {"request": {"path": "paper.md", "operations": [edit]}})
    expected = PAPER.replace("Smith2020", "Smith2021")
    assert path.read_text("utf-8") == expected
    after = next(e for e in _elements(ws) if e["text"] == "After the notes.")
    edit = {"kind": "insert_after", "pointer": after["pointer"], "markdown": "[^2]: Jones2019"}
    invoke(ws, "kb_patch", {"request": {"path": "paper.md", "operations": [edit]}})
    expected = expected.replace("After the notes.\n", "After the notes.\n\n[^2]: Jones2019\n")
    assert path.read_text("utf-8") == expected
    claim = next(e for e in _elements(ws) if e["text"].startswith("A claim."))
    edit = {"kind": "delete", "pointer": claim["pointer"]}
    invoke(ws, "kb_patch", {"request": {"path": "paper.md", "operations": [edit]}})
    expected = expected.replace("A claim.[^1] Another one.[^smith]", "")  # its span, the lines stay
    assert path.read_text("utf-8") == expected
    ws.indexing.sync.wait_idle(10)
    assert [h["path"] for h in _search(ws, "Jones2019")] == ["paper.md"]
    assert [h["path"] for h in _search(ws, "Smith2021")] == ["paper.md"]
