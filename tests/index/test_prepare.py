"""What one file gives the index (``index/prepare.py``): its front matter's fields, tags and chunks."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_vector_search_mcp.index.prepare import ChunkSettings, Prepared, Task, prepare

SETTINGS = ChunkSettings(max_chunk_bytes=4096, max_elements=20, include_front_matter=True, include_heading_context=True)


def _prepared(tmp_path: Path, raw: bytes) -> Prepared:
    (tmp_path / "page.md").write_bytes(raw)
    outcome = prepare(tmp_path, Task("page.md"), SETTINGS)
    assert isinstance(outcome, Prepared)
    return outcome


@pytest.mark.parametrize(
    "front",
    [
        '+++\r\ntitle = "Hugo page"\r\ndraft = true\r\ntags = ["secretword"]\r\naliases = ["Old"]\r\n'
        "[params]\r\nx = 1\r\n+++\r\n",
        "---\ntitle: Hugo page\ndraft: true\ntags: [secretword]\naliases: [Old]\nparams: {x: 1}\n---\n",
    ],
    ids=["toml", "yaml"],
)
def test_toml_front_matter_feeds_what_yaml_front_matter_feeds(tmp_path: Path, front: str) -> None:
    """Decision 1026: a Hugo page's ``+++`` front matter was a paragraph: no ``draft`` field for a
    metadata filter, no ``tags`` for a tag filter, no alias, and its TOML the page's first chunk of
    body text. It gives what its YAML twin gives; only the front matter chunk's text differs."""
    page = _prepared(tmp_path, b"\xef\xbb\xbf" + front.encode() + b"\n# Heading\n\nBody text.\n")
    assert page.properties == {"title": "Hugo page", "draft": True, "tags": ["secretword"], "aliases": ["Old"]}
    assert (page.meta.tags, page.meta.aliases, page.meta.headings) == (("secretword",), ("Old",), ("Heading",))
    assert [c.pointer for c in page.chunks] == ["frontmatter", "1.p1"]
    assert page.chunks[0].text.startswith(front[:3]) and page.chunks[1].text == "Body text."


def test_broken_toml_front_matter_gives_no_field_and_the_page_is_indexed(tmp_path: Path) -> None:
    page = _prepared(tmp_path, b'+++\ntitle = "unclosed\ntags = ["a"]\n+++\n\n# Heading\n\nBody text.\n')
    assert (page.properties, page.meta.tags) == ({}, ())
    assert [c.pointer for c in page.chunks] == ["frontmatter", "1.p1"]
