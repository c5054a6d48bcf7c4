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
