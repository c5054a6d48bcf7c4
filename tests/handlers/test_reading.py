"""kb_read and kb_outline through the dispatcher (the MCP and CLI code path) on every corpus file."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import CORPORA

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.workspace import Workspace


def _workspace(root: Path, tmp_path: Path) -> Workspace:
    settings = load_settings(
        CliOptions(root=str(root), storage_path=str(tmp_path / "index.db"), embedding_provider="none"),
        cwd=tmp_path,
        environ={},
    )
    return Workspace(settings)


@pytest.mark.slow
@pytest.mark.skipif(not CORPORA.is_dir(), reason="shared corpora not available")
@pytest.mark.parametrize("corpus", ["rust-book", "vue-docs-zh-cn"])
def test_every_corpus_file_reads_and_outlines(corpus: str, tmp_path: Path) -> None:
    root = CORPORA / corpus
    ws = _workspace(root, tmp_path)
    files = [f["relativePath"] for f in invoke(ws, "kb_list_files", {"request": {"includeGlob": "**/*.md"}})["files"]]
    assert len(files) > 100
    for rel in files:
        raw = (root / rel).read_bytes()
        text = raw.decode("utf-8-sig")
        outline = invoke(ws, "kb_outline", {"request": {"path": rel}})
        assert outline["path"] == rel
        pointer = None
        pages, seen, markdown = 0, set(), []
        while True:
            request = {"path": rel, "maxElements": 50}
            if pointer:
                request["pointer"] = pointer
            page = invoke(ws, "kb_read", {"request": request})
            markdown.append(page["markdown"])
            for element in page["elements"]:
                assert element["pointer"] not in seen
                seen.add(element["pointer"])
            pages += 1
            pointer = page["nextPointer"]
            if pointer is None:
                break
        assert "".join(markdown) == text, rel
        headings = sum(1 for p in seen if p.split("~")[0].replace(".", "").isdigit())
        assert headings >= len(outline["headings"])
    ws.close()


FIXTURES = Path(__file__).parent.parent / "fixtures" / "markdown"


def test_read_and_outline_wire_shape(tmp_path: Path) -> None:
    """The engine's Slice/Outline dataclasses become exactly the spec's JSON."""
    from local_vector_search_mcp.markdown import parse_document

    ws = _workspace(FIXTURES, tmp_path)
    doc = parse_document((FIXTURES / "basic.md").read_bytes())
    page = invoke(ws, "kb_read", {"request": {"path": "basic.md", "maxElements": 2}})
    assert set(page) == {"path", "pointer", "elements", "markdown", "nextPointer", "sourceHash", "table"}
    assert page["elements"][1] == {
        "pointer": doc.elements[1].anchor,
        "kind": "paragraph",
        "text": "Intro before any heading.",
        "headingPath": None,
    }
    assert page["nextPointer"] == doc.elements[2].anchor and page["table"] is None

    tables = parse_document((FIXTURES / "tables.md").read_bytes())
    table = tables.get("t1")
    assert table is not None
    page = invoke(ws, "kb_read", {"request": {"path": "tables.md", "pointer": table.anchor, "maxBytes": 1}})
    assert page["table"]["columnCount"] == 3 and page["table"]["rowCount"] == 3
    assert page["table"]["columns"][1] == {"index": 1, "name": "Qty", "alignment": "right"}
    assert page["table"]["rows"][1] == {"index": 1, "cells": ["short", "", ""]}
    assert page["table"]["editable"] is False

    tree = invoke(ws, "kb_outline", {"request": {"path": "basic.md"}})
    assert set(tree) == {"path", "sourceHash", "headings"}
    assert set(tree["headings"][0]) == {"pointer", "level", "title", "children"}
    assert tree["headings"][0]["children"][0]["title"] == "X"


def test_every_element_kind_has_a_wire_name() -> None:
    from local_vector_search_mcp.handlers.reading import _KINDS
    from local_vector_search_mcp.markdown import ElementKind

    assert set(_KINDS) == set(ElementKind)
    assert all(name == kind.value for kind, name in _KINDS.items())


def test_a_document_gone_since_it_was_indexed_is_named_so_and_leaves_the_index(tmp_path: Path) -> None:
    """Without the watcher a search keeps returning a document deleted or moved by another
    program, and its readHint led to a bare NOT_FOUND: the agent could not tell a typo from a
    stale index, and the next search returned it again (decision 697)."""
    from kb_fakes import KbClient

    from local_vector_search_mcp.errors import NotFound

    root = tmp_path / "kb"
    root.mkdir()
    (root / "gone.md").write_text("# Gone\n\nA quokka paragraph.\n", "utf-8")
    (root / "kept.md").write_text("# Kept\n\nAnother quokka.\n", "utf-8")
    ws = _workspace(root, tmp_path)
    KbClient(ws).reindex()
    hits = invoke(ws, "kb_search", {"request": {"query": "quokka", "mode": "lexical"}})["results"]
    assert {h["path"] for h in hits} == {"gone.md", "kept.md"}
    (root / "gone.md").unlink()
    for tool in ("kb_read", "kb_outline"):
        with pytest.raises(NotFound) as caught:
            invoke(ws, tool, {"request": {"path": "gone.md"}})
        assert "was not found" in caught.value.message and "since it was indexed" in caught.value.message
    ws.indexing.sync.wait_idle(10)
    hits = invoke(ws, "kb_search", {"request": {"query": "quokka", "mode": "lexical"}})["results"]
    assert [h["path"] for h in hits] == ["kept.md"]
    # a path the index never had: the plain answer
    with pytest.raises(NotFound) as caught:
        invoke(ws, "kb_read", {"request": {"path": "typo.md"}})
    assert caught.value.message == "Document 'typo.md' was not found."


def test_an_index_that_cannot_answer_leaves_a_missing_document_a_plain_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question of decision 697 only improves a message: the store's own errors (apsw's for a
    damaged SQLite file, psycopg's for a lost server) must not turn NOT_FOUND into an internal error."""
    import apsw
    from kb_fakes import KbClient

    from local_vector_search_mcp.errors import NotFound

    root = tmp_path / "kb"
    root.mkdir()
    (root / "gone.md").write_text("# Gone\n\nA quokka paragraph.\n", "utf-8")
    ws = _workspace(root, tmp_path)
    KbClient(ws).reindex()
    (root / "gone.md").unlink()

    def damaged(paths: object) -> dict[str, object]:
        raise apsw.CorruptError("database disk image is malformed")

    monkeypatch.setattr(ws.store, "document_states_of", damaged)
    with pytest.raises(NotFound) as caught:
        invoke(ws, "kb_read", {"request": {"path": "gone.md"}})
    assert caught.value.message == "Document 'gone.md' was not found."
