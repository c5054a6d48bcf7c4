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


def test_a_document_of_headings_alone_is_one_chunk_of_its_headings():
    """Decision 781: an index page, a stub or an outline had no chunk, so no word of it was found."""
    chunks = chunk_document(parse_document(b"# Quokka index\n\n## Alpha walrus\n\n### Deep\n\n## Beta\n"))
    assert [(c.pointer, c.text, c.heading_path, c.elements) for c in chunks] == [
        ("1", "# Quokka index\n\n## Alpha walrus\n\n### Deep\n\n## Beta", "Quokka index", ("1", "1.1", "1.1.1", "1.2"))
    ]


def test_headings_are_chunked_beside_a_front_matter_chunk_and_without_it():
    source = b"---\ntitle: Stub\n---\n# Todo\n\n## Later\n"
    kept = chunk_document(parse_document(source))
    assert [(c.pointer, c.text) for c in kept] == [
        ("frontmatter", "---\ntitle: Stub\n---"),
        ("1", "# Todo\n\n## Later"),
    ]
    assert [c.ordinal for c in kept] == [0, 1]
    left_out = chunk_document(parse_document(source), include_front_matter=False)
    assert [(c.ordinal, c.pointer, c.text) for c in left_out] == [(0, "1", "# Todo\n\n## Later")]


def test_many_headings_alone_follow_the_chunk_limits():
    source = "".join(f"## Heading number {i}\n\n" for i in range(45)).encode()
    chunks = chunk_document(parse_document(source), max_elements=20)
    assert [len(c.elements) for c in chunks] == [20, 20, 5]
    assert [c.ordinal for c in chunks] == [0, 1, 2]
    small = chunk_document(parse_document(source), max_chunk_bytes=60)
    assert all(len(c.text.encode()) <= 60 for c in small) and sum(len(c.elements) for c in small) == 45


def test_a_document_with_any_other_chunk_keeps_its_headings_out():
    """Only documents without a chunk of their own change: every other keeps v6's chunks exactly."""
    chunks = chunk_document(parse_document(b"# A\n\n## Empty\n\n# B\n\nbody\n"))
    assert [(c.pointer, c.text, c.heading_path) for c in chunks] == [("2.p1", "body", "B")]
    assert chunk_document(parse_document(b"   \n")) == []


HTML_DOC = b"""# Guide

Intro paragraph.

<Callout type="warning">
  Never store the zebra token &amp; its key.
</Callout>

<figure>
<img src="x.svg" alt="an aardvark diagram">
<figcaption>Figure 1: a concurrent quokka workflow</figcaption>
</figure>

<!-- a comment about the platypus -->

<script>const echidna = 1</script>

## Details

<details>
<summary>Click to expand the wombat notes</summary>

Body about koalas.

</details>

## Figure only

<figure><figcaption>A lonely numbat</figcaption></figure>
"""


def test_the_visible_text_of_an_html_block_joins_its_sections_chunk():
    """Decision 1025: HTML blocks are no elements, so the words of an MDX callout, a figure caption or
    a summary were in no chunk. Their visible text now joins the chunk of the section they sit in;
    comments, scripts and attribute values stay out, and every element keeps its pointer."""
    doc = parse_document(HTML_DOC)
    chunks = chunk_document(doc)
    assert [(c.pointer, c.text, c.heading_path, c.elements) for c in chunks] == [
        (
            "1.p1",
            "Intro paragraph.\n\nNever store the zebra token & its key.\n\nFigure 1: a concurrent quokka workflow",
            "Guide",
            ("1.p1",),
        ),
        ("1.1.p1", "Click to expand the wombat notes\n\nBody about koalas.", "Guide > Details", ("1.1.p1",)),
        ("1.2", "A lonely numbat", "Guide > Figure only", ()),  # no element: its section's heading
    ]
    assert chunks[2].anchor == doc.get("1.2").anchor
    assert [e.pointer for e in doc.elements] == ["1", "1.p1", "1.1", "1.1.p1", "1.2"]


def test_html_text_at_the_root_points_to_the_next_element_and_never_joins_the_front_matter():
    source = b'---\ntitle: Home\n---\n<p align="center">A tiny project</p>\n\n# Home\n\nBody.\n'
    chunks = chunk_document(parse_document(source))
    assert [(c.pointer, c.text, c.heading_path) for c in chunks] == [
        ("frontmatter", "---\ntitle: Home\n---", None),
        ("1", "A tiny project", None),
        ("1.p1", "Body.", "Home"),
    ]
    # a document of headings and HTML: its headings and the HTML's text, in source order (v7)
    outline = chunk_document(parse_document(b"# Index\n\n<div>Walrus pages</div>\n\n## Later\n"))
    assert [(c.pointer, c.text, c.heading_path) for c in outline] == [
        ("1", "# Index\n\nWalrus pages\n\n## Later", "Index")
    ]


def test_html_text_follows_the_chunk_limits_and_documents_without_it_are_chunked_as_before():
    source = b"# H\n\none\n\n<div>two</div>\n\nthree\n"
    assert [c.text for c in chunk_document(parse_document(source), max_elements=2)] == ["one\n\ntwo", "three"]
    plain = b"# H\n\n<!-- only a comment -->\n\n<img src='a.png'>\n\none\n"
    assert [c.text for c in chunk_document(parse_document(plain))] == ["one"]


def test_html_after_front_matter_alone_is_no_chunk_of_the_front_matter() -> None:
    # a landing page (front matter, then an HTML body): its body took the front matter's pointer, a
    # second `frontmatter` chunk the semantic list skips (decision 1025); it has no pointer of its own
    doc = parse_document(b'---\ntitle: Home\n---\n<div class="hero">\n<p>Zebra migration tracking</p>\n</div>\n')
    for include in (True, False):
        chunks = chunk_document(doc, include_front_matter=include)
        assert not [c for c in chunks if "Zebra" in c.text], include
    with_heading = parse_document(b"---\ntitle: Home\n---\n# Home\n\n<p>Zebra migration tracking</p>\n")
    assert [c.pointer for c in chunk_document(with_heading) if "Zebra" in c.text] == ["1"]
