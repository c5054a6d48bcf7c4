"""Change-log entries rank after the reference hits that match as well (decision 1044), on both
engines: the pages' headings come from the store's ``document_meta``."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import KbClient, indexed_kb

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.changelog import (
    ChangeLogPages,
    asks_about_changes,
    demote_changelog,
    is_changelog_name,
    is_version_heading,
)
from local_vector_search_mcp.search.text import build_lexical_query

ROUTING = """# Routing

## Path Parameters

Paths can use URI templating style to capture path components, and a convertor such as `int`
or `uuid` turns the captured text into a value before the endpoint sees it.

## Reverse URL lookups

You'll often want to be able to generate the URL for a particular route, such as in cases where
you need to return a redirect response. Every named route can be looked up with `url_path_for`,
passing the name of the route and its path parameters, and the application builds the path that
the router would have matched for them, so links never go stale when a route moves.
"""

RELEASE_NOTES = """# Release Notes

## 0.26.0 (March 9, 2023)

### Fixed

* Make `url_path_for` raise `NoMatchFound` with the route name.

## 0.18.0 (January 23, 2022)

### Fixed

* Allow `url_path_for` on a `Mount` without a name.

## 0.6.3

### Routing API

* Add `url_path_for` to the `Router` and the application.

## 0.6.0

* Rename `app.url_for` to `url_path_for`.
"""

MIGRATION = """# Migrating

These notes help you move an application between major versions.

## 2.0

* `url_path_for` now takes the route's parameters as keyword arguments.
* `url_path_for` raises `NoMatchFound` instead of returning `None`.
"""


Index = Callable[[dict[str, str]], KbClient]


@pytest.fixture
def index(tmp_path: Path, engine_storage: dict[str, Any]) -> Iterator[Index]:
    """``index(files)``: a lexical index of ``files`` (name -> text), on each engine in turn."""
    opened: list[KbClient] = []

    def make(files: dict[str, str]) -> KbClient:
        opened.append(indexed_kb(tmp_path, files, **engine_storage))
        return opened[-1]

    yield make
    for svc in opened:
        svc.shutdown()


def paths(svc: KbClient, query: str) -> list[tuple[str, str]]:
    return [(r["path"], r["headingPath"]) for r in svc.search(query=query, mode="lexical", top_k=10)["results"]]


def test_an_identifier_finds_the_reference_section_before_the_change_log_entries(index: Index) -> None:
    svc = index({"routing.md": ROUTING, "release-notes.md": RELEASE_NOTES})
    found = paths(svc, "url_path_for")
    assert found[0] == ("routing.md", "Routing > Reverse URL lookups")
    assert sum(path == "release-notes.md" for path, _ in found) == 4  # demoted, not removed


def test_a_change_log_entry_headed_by_the_name_is_not_its_definition(index: Index) -> None:
    """Decision 1049: the entry is named by its heading (``app.url_path_for()``) as the reference
    section is not, but it is news about the name, so it still goes behind the reference."""
    notes = RELEASE_NOTES + "\n### `app.url_path_for()`\n\nThe application gains `url_path_for` too.\n"
    svc = index({"routing.md": ROUTING, "release-notes.md": notes})
    assert paths(svc, "url_path_for")[0] == ("routing.md", "Routing > Reverse URL lookups")
    assert paths(svc, "app.url_path_for")[0] == ("routing.md", "Routing > Reverse URL lookups")


def test_a_query_about_a_version_still_finds_the_change_log_entry_first(index: Index) -> None:
    svc = index({"routing.md": ROUTING, "release-notes.md": RELEASE_NOTES})
    assert paths(svc, "url_path_for NoMatchFound in 0.26")[0] == (
        "release-notes.md",
        "Release Notes > 0.26.0 (March 9, 2023) > Fixed",
    )
    assert paths(svc, "url_path_for changelog")[0][0] == "release-notes.md"


def test_a_page_with_a_single_version_heading_is_not_a_change_log(index: Index) -> None:
    svc = index({"routing.md": ROUTING, "migration.md": MIGRATION})
    assert paths(svc, "url_path_for")[0] == ("migration.md", "Migrating > 2.0")


def test_release_headings_are_told_from_numbered_sections() -> None:
    releases = (
        "1.2",
        "v1.2.3",
        "[1.2.0] - 2024-01-01",
        "1.0.0 / 2023-05-01",
        "0.43.0 (December 25, 2024)",
        "v6.9.2 (2019-06-27):",
        "1.0.0rc1 (February 23, 2026)",
        "v7.0.0-beta.0 (2020-08-04)",
        "Version 2.0.0",
        "[Unreleased]",
        "1.2.0 {#v120}",  # a heading id is no part of the name (decision 1062)
        "[1.3.0](https://github.com/o/r/releases/tag/v1.3.0) - 2022-07-10 {: #v1.3.0 }",
    )
    assert all(is_version_heading(title) for title in releases)
    others = (
        "4.2 Continue a conversation",
        "2.0 Migration",
        "1.x",
        "Release Notes",
        "Added",
        "2024",
        "3.0.0 Highlights",
    )
    assert not any(is_version_heading(title) for title in others)


def test_a_number_with_a_remark_in_parentheses_is_a_section_not_a_release() -> None:
    # a specification's `5.1 (continued)` read as a release: anything in parentheses passed (review)
    releases = (
        "[1.2.3](https://github.com/o/r/compare/v1.2.2...v1.2.3) (2024-01-01)",  # conventional-changelog
        "2.0.0 (LTS)",
        "1.2.3 - 2024-01-01 [YANKED]",
        "1.2.3 (unreleased)",
    )
    assert all(is_version_heading(title) for title in releases)
    sections = ("5.1 (continued)", "3.2 [Informative]", "1.4 (see below)")
    assert not any(is_version_heading(title) for title in sections)


def test_a_long_heading_is_judged_in_linear_time() -> None:
    """Review of decision 1044: the version's parts overlapped its tag, and blanks were taken on
    both sides of an optional separator, so a 16 KB heading of ``1.1.1...`` took 12 s to judge (and
    ``1.1`` then 4000 blanks 1.2 s), on every search whose hits sat under it."""
    headings = ("1" + ".1" * 8000 + " x", "1.1" + " " * 8000 + "x", "1.1" + "-1" * 8000 + "!")
    started = time.perf_counter()
    assert not any(is_version_heading(title) for title in headings)
    assert time.perf_counter() - started < 1.0
    assert is_version_heading("1.1" + " " * 50 + "- 2024-01-01")


def test_a_change_log_is_a_page_of_releases_or_one_named_so() -> None:
    assert is_changelog_name("CHANGELOG.md") and is_changelog_name("docs/release-notes.md")
    assert is_changelog_name("HISTORY.md") and not is_changelog_name("history-api.md")
    titles = {
        "CHANGELOG.md": ("Changelog", "1.0.0 - 2024-01-01", "Added"),  # one release, and the name says so
        "guide.md": ("Guide", "2.0", "Renamed options"),  # one release heading, a migration note
        "notes.md": ("Notes", "1.2.0", "Fixed", "1.1.0", "1.0.0"),  # three releases whatever its name
    }
    asked: list[Collection[str]] = []

    def headings(paths: Collection[str]) -> Mapping[str, Sequence[str]]:
        asked.append(set(paths))
        return {p: titles[p] for p in paths}

    hits = [hit(1, "CHANGELOG.md", "Changelog > 1.0.0 - 2024-01-01 > Added"), hit(2, "guide.md", "Guide > 2.0")]
    hits += [hit(3, "notes.md", "Notes > 1.2.0 > Fixed"), hit(4, "notes.md", "Notes")]
    pages = ChangeLogPages()
    assert pages.entries(hits, headings) == {1, 3}  # not the notes' text before their first release
    assert pages.entries(hits, headings) == {1, 3}
    assert asked == [{"CHANGELOG.md", "guide.md", "notes.md"}]  # judged once per page and source hash


def test_an_entry_goes_after_the_last_other_hit_that_holds_as_many_words() -> None:
    def entry(cid: int, text: str) -> ChunkHit:
        return hit(cid, "CHANGES.md", "1.0.0 > Fixed", text)

    hits = [entry(1, "alpha beta"), hit(2, "a.md", "A", "alpha beta"), entry(3, "alpha beta gamma")]
    hits += [hit(4, "b.md", "B", "alpha"), hit(5, "c.md", "C", "alpha beta")]

    def order(query: str) -> list[int]:
        pages = ChangeLogPages()
        out = demote_changelog(hits, query, build_lexical_query(query), pages, lambda ps: {p: ("1.0.0",) for p in ps})
        return [h.chunk_id for h in out]

    # entry 1 holds two words: after 5, the last hit holding two; entry 3 holds all three: it keeps its place
    assert order("alpha beta gamma") == [2, 3, 4, 5, 1]
    assert order("alpha beta gamma since 1.0") == [1, 2, 3, 4, 5]  # a version in the query: as ranked
    assert asks_about_changes("what changed in 2.3") and asks_about_changes("breaking changes")
    assert not asks_about_changes("engines node version") and not asks_about_changes("release age cooldown")


def hit(cid: int, path: str, heading_path: str, text: str = "prose") -> ChunkHit:
    return ChunkHit(cid, path, f"1.p{cid}~0~0", heading_path, text, "s" * 64)
