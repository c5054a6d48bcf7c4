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


def test_the_byte_limit_counts_utf8_bytes_not_characters():
    """Two 30-character paragraphs fit 64 bytes as ASCII and not as Cyrillic (2 bytes a letter):
    the chunker sizes ASCII text by its length and any other by its encoding (decision 715)."""
    ascii_doc = ("a" * 30 + "\n\n" + "b" * 30 + "\n").encode()
    cyrillic_doc = ("ж" * 30 + "\n\n" + "ы" * 30 + "\n").encode()
    assert len(chunk_document(parse_document(ascii_doc), max_chunk_bytes=64)) == 1
    assert [c.text for c in chunk_document(parse_document(cyrillic_doc), max_chunk_bytes=64)] == ["ж" * 30, "ы" * 30]


def test_every_paragraph_of_a_section_shares_its_chunk_and_a_new_section_cuts():
    """Sections come from each element's pointer (cached per pointer, decision 715): the same
    pointers in a second document still cut where its sections change."""
    doc = parse_document(b"# A\n\none\n\ntwo\n\n## B\n\nthree\n\n# C\n\nfour\n")
    for _ in range(2):  # the second time every section is answered from the cache
        chunks = chunk_document(doc)
        assert [(c.pointer.split("~")[0], c.text) for c in chunks] == [
            ("1.p1", "one\n\ntwo"),
            ("1.1.p1", "three"),
            ("2.p1", "four"),
        ]
