"""Every Markdown file of the shared corpora goes through parse, read and outline."""

from __future__ import annotations

import pytest
from shared_data import CORPORA

from local_vector_search_mcp.markdown import outline, parse_document, read_slice

FILES = sorted(CORPORA.rglob("*.md")) if CORPORA.is_dir() else []


@pytest.mark.skipif(not FILES, reason="corpora folder missing")
@pytest.mark.slow
def test_corpora_parse_page_and_outline() -> None:
    for path in FILES:
        doc = parse_document(path.read_bytes())
        name = str(path.relative_to(CORPORA))
        pages: list[str] = []
        seen: list[str] = []
        page = read_slice(doc, name, max_elements=100, max_bytes=100_000)
        while True:
            pages.append(page.markdown)
            seen.extend(e.anchor for e in page.elements)
            if page.next_pointer is None:
                break
            page = read_slice(doc, name, page.next_pointer, max_elements=100, max_bytes=100_000)
        assert "".join(pages) == doc.text, name
        assert seen == [e.anchor for e in doc.elements if e.end > e.start], name
        for element in doc.elements:
            assert doc.text[element.start : element.end] or element.start == element.end
        tree = outline(doc, name)
        assert tree.source_hash == doc.source_hash
