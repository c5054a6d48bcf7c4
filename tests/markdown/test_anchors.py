"""Heading anchors (``markdown/anchors.py``): one rule for the link graph, kb_read's hint, the
Notion push and the PDF book."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.index.graph import FragmentTargets, heading_anchors
from local_vector_search_mcp.markdown.anchors import Slugger, own_id, slug
from local_vector_search_mcp.notion.blocks import convert


def test_slugs_follow_github() -> None:
    assert slug("Hello, World!") == "hello-world"
    assert slug("Using `Box<T>` to Point") == "using-boxt-to-point"
    assert slug("模板语法") == "模板语法"
    assert slug("設定方法（詳細）") == "設定方法詳細"  # full-width brackets are punctuation
    assert slug(unicodedata.normalize("NFD", "Café")) == "café"  # a decomposed title, composed


def test_a_repeated_slug_is_numbered_as_github_slugger_numbers_it() -> None:
    slugger = Slugger()
    assert [slugger.slug(t) for t in ["Setup", "Setup", "Setup-1", "Setup"]] == [
        "setup",
        "setup-1",
        "setup-1-1",
        "setup-2",
    ]


def test_an_own_id_is_read_only_when_it_closes_the_heading() -> None:
    assert own_id("1.2.0 {#V120}") == "v120"
    assert own_id("Dependencies {: #target-dependencies .wide}") == "target-dependencies"
    assert own_id("Braces {#id} in the middle") is None


def test_the_notion_push_and_the_link_graph_name_a_page_s_headings_alike() -> None:
    markdown = "# Setup\n\n## Setup\n\n## Set up: again!\n\n## Custom {#here}\n"
    converted = convert(markdown)
    pushed = {anchor for _, anchor in converted.anchors}
    assert pushed == {"setup", "setup-1", "set-up-again", "here"}
    assert pushed <= heading_anchors(["Setup", "Setup", "Set up: again!", "Custom {#here}"])


_titles = st.lists(st.sampled_from(["Setup", "Setup-1", "Use `x`", "設定", "A {#a}", "a", "Intro"]), max_size=8)


@given(_titles, st.sampled_from(["setup-1", "setup-2", "a", "use-x", "設定", "intro", "nothing", "Intro#Setup"]))
def test_the_heading_a_fragment_names_is_the_first_whose_anchors_find_it(titles: list[str], fragment: str) -> None:
    """kb_read's hint names the heading by one pass (:meth:`FragmentTargets.heading`); it must be
    the first ``n`` for which :meth:`FragmentTargets.found` over ``titles[:n]`` turns true."""
    for wiki in (False, True):
        by_prefix = next(
            (n - 1 for n in range(1, len(titles) + 1) if FragmentTargets(titles[:n], ()).found(fragment, wiki)), None
        )
        assert FragmentTargets(titles, ()).heading(fragment, wiki) == by_prefix
