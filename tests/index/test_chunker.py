from __future__ import annotations

from local_vector_search_mcp.index.chunker import build_embedding_text, chunk_document
from local_vector_search_mcp.markdown import parse_document

DOC = b"""---
title: x
---
Intro paragraph.

# A

Para one.

- item one
  - nested
- item two

## B

```
code
```

| a | b |
|---|---|
| 1 | 2 |
"""


def test_sections_never_mix_and_headings_are_not_indexed():
    chunks = chunk_document(parse_document(DOC))
    assert [c.pointer.split("~")[0] for c in chunks] == [c.pointer for c in chunks]
    pointers = [c.pointer for c in chunks]
    assert pointers[0] == "frontmatter"
    # front matter and the root paragraph are both root level
    assert pointers[1] == "1.p1"
    assert chunks[1].heading_path == "A"
    assert chunks[-1].heading_path == "A > B"
    assert all("# A" not in c.text for c in chunks)
    assert "nested" in chunks[1].text and chunks[1].text.count("nested") == 1
    assert chunks[0].anchor.count("~") == 2


def test_front_matter_can_be_left_out():
    chunks = chunk_document(parse_document(DOC), include_front_matter=False)
    assert chunks[0].pointer == "p1"


def test_limits_split_chunks_but_never_an_element():
    doc = parse_document(b"# H\n\n" + b"\n\n".join(b"para %d " % i + b"x" * 100 for i in range(10)) + b"\n")
    by_count = chunk_document(doc, max_elements=3)
    assert [len(c.elements) for c in by_count] == [3, 3, 3, 1]
    by_size = chunk_document(doc, max_chunk_bytes=50)
    assert len(by_size) == 10  # each oversized element alone
    assert all(c.heading_path == "H" for c in by_size)


def test_embedding_text_v1():
    assert build_embedding_text("a.md", " body ", "A > B", True) == "Path: a.md\nHeading: A > B\n\nbody"
    assert build_embedding_text("a.md", "body", "A", False) == "Path: a.md\n\nbody"
