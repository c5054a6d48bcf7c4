"""Change-log entries rank after the reference hits that match as well (decision 1044).

A project's Markdown often holds a change log (CHANGELOG.md, HISTORY.md, release notes): one
short bullet per change, under a version heading (``## 0.43.0 (December 25, 2024)`` >
``### Added``), naming every identifier the project ever touched. BM25 loves such a bullet, so
``url_path_for`` found five release notes before the routing page's "Reverse URL lookups". An
entry is the answer only when the query asks about versions or changes (:func:`asks_about_changes`);
otherwise, among the lexical hits, each entry goes right after the last other hit that holds as
many of the query's words (``index/coverage.py``): it still shows when nothing else matches as
well, and a query only the change log answers still finds it.

An entry is a chunk under a version heading (:func:`is_version_heading`) of a change-log page:
one with at least :data:`PAGE_MIN_VERSIONS` version headings, or one at least and a change-log
file name (``CHANGELOG.md``, ``HISTORY.md``, ``release-notes.md``). So a migration guide's single
``## 2.0`` section is reference text, and in a README ending with a "Changelog" of three releases
or more, those releases are entries and the rest of the README is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import PurePosixPath

from ..index.coverage import CoverageWords, coverage, coverage_words
from ..index.port import ChunkHit
from .text import ParsedQuery
from .titles import HEADING_ID, HEADING_SEPARATOR

__all__ = [
    "PAGE_MIN_VERSIONS",
    "ChangeLogPages",
    "PageHeadings",
    "asks_about_changes",
    "demote_changelog",
    "is_changelog_name",
    "is_version_heading",
]

PAGE_MIN_VERSIONS = 3  # version headings that make a page a change log without its file name's help

# A heading that is a release: an optional ``[`` (Keep a Changelog links it), ``v``, ``Version`` or
# ``Release``, a version of two parts or more with an optional pre-release or build tag (``-rc.1``,
# ``b2``, ``+build.5``), then nothing but a date, something in parentheses (a date, "unreleased",
# "yanked") or a separator before either, and perhaps a colon: ``[1.2.0] - 2024-01-01``, ``v2.3.1``,
# ``1.0.0 / 2023-05-01``, ``0.43.0 (December 25, 2024)``, ``v6.9.2 (2019-06-27):``. A title after
# the number (``4.2 Continue a conversation``, ``3.0.0 Highlights``) is a numbered section, not a release.
# The number's parts are taken whole (``++``) and one run of blanks goes around the separator: the parts
# shared with the tag, and blanks on both sides of an optional separator, made a long heading
# (``1.1.1...`` or ``1.1`` and many blanks, 16 KB) take seconds to judge on every search meeting it.
_VERSION = r"(?:v|version\s*|release\s+)?\d+(?:\.\d+)++(?:[-+.]?[0-9a-z]+(?:[.-][0-9a-z]+)*)?"
_DATE = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/. ]\w+[-/.,]? \d{4}|[a-z]+\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}|\d{4})"
)
# What a release heading may hold in parentheses or brackets: a date or a release's state
# (``(December 25, 2024)``, ``[YANKED]``, ``(LTS)``); anything else (``5.1 (continued)``, ``3.2
# [Informative]``) is a numbered section of a specification (the 1044 review).
_STATE = rf"(?:{_DATE}|unreleased|yanked|lts|latest|current|beta|alpha|draft|pre-?release)"
# conventional-changelog links the version to its comparison: ``[1.2.3](https://.../v1.2.2...v1.2.3)``
_COMPARE_LINK = r"(?:\((?:https?://|\.{0,2}/|#)[^()\s]*\))?"
_VERSION_HEADING = re.compile(
    rf"(?:\[?{_VERSION}\]?{_COMPARE_LINK}(?:\s*(?:[-\u2013\u2014/:|,]\s*)?"
    rf"(?:\({_STATE}[^()]*\)|\[{_STATE}[^\[\]]*\]|{_DATE}.*|unreleased|yanked))?|\[?unreleased\]?):?",
    re.IGNORECASE,
)
# A file name that says change log: CHANGELOG, CHANGES, HISTORY, NEWS, RELEASES, release-notes, whats-new.
_CHANGELOG_NAME = re.compile(r"change[-_ ]?log|changes|history|news|releases|release[-_ ]?notes|what'?s[-_ ]?new")
# What a query about versions or changes says: a version number (``1.0``, ``v2.3.1``, ``v4``), or a word
# of the change log's own vocabulary. "version", "release" and "change" alone are not: documentation
# about publishing packages (npm's) uses them for its reference topics ("engines node version").
_CHANGE_INTENT = re.compile(
    r"\bv?\d+\.\d+|\bv\d+\b|\b(?:change[- ]?logs?|changed|breaking|deprecat\w*|removed|renamed|"
    r"release[- ]notes|what'?s new|new in|since version|which version|what version|upgrad\w*)\b",
    re.IGNORECASE,
)


def is_version_heading(title: str) -> bool:
    """Whether ``title`` heads a release in a change log (see ``_VERSION_HEADING``)."""
    title = HEADING_ID.sub("", title).strip()  # ``## 1.2.0 {#v120}``: the id is no part of the release's name
    return bool(title) and title[:1] in "[vVrRuU0123456789" and bool(_VERSION_HEADING.fullmatch(title))


def is_changelog_name(path: str) -> bool:
    """Whether the file name of ``path`` says change log (``CHANGELOG.md``, ``docs/release-notes.md``)."""
    return bool(_CHANGELOG_NAME.fullmatch(PurePosixPath(path).stem.casefold()))


def asks_about_changes(query: str) -> bool:
    """Whether ``query`` is about versions or changes, so that change-log entries may answer it."""
    return bool(_CHANGE_INTENT.search(query))


def _under_version(heading_path: str | None) -> bool:
    return any(is_version_heading(title) for title in (heading_path or "").split(HEADING_SEPARATOR))


def _is_changelog(path: str, headings: Sequence[str]) -> bool:
    versions = sum(1 for title in headings if is_version_heading(title))
    return versions >= PAGE_MIN_VERSIONS or (versions > 0 and is_changelog_name(path))


PageHeadings = Callable[[Collection[str]], Mapping[str, Sequence[str]]]  # paths -> each page's heading titles


class ChangeLogPages:
    """Which pages are change logs, remembered by page and source hash: a verdict changes only
    with the page's text, and reading a long change log's headings for every search that meets it
    cost more than the search (a release-notes page of 450 headings: 2 ms a query)."""

    LIMIT = 4096  # verdicts kept; past it they are forgotten all at once (a rare refill is cheap)

    def __init__(self) -> None:
        # shared by the server's threads: a lost or repeated write only judges a page again
        self._known: dict[tuple[str, str], bool] = {}

    def entries(self, hits: Sequence[ChunkHit], page_headings: PageHeadings) -> set[int]:
        """The chunk ids of ``hits`` that are change-log entries (the pages' headings asked for only
        when a hit sits under a version heading of a page not judged before)."""
        candidates = [h for h in hits if _under_version(h.heading_path)]
        unknown = {h.path for h in candidates if (h.path, h.source_hash) not in self._known}
        if unknown:
            headings = page_headings(unknown)
            if len(self._known) + len(unknown) > self.LIMIT:
                self._known.clear()
            for h in candidates:
                if h.path in unknown:
                    self._known[(h.path, h.source_hash)] = _is_changelog(h.path, headings.get(h.path, ()))
        return {h.chunk_id for h in candidates if self._known.get((h.path, h.source_hash), False)}


def demote_changelog(
    hits: Sequence[ChunkHit],
    query: str,
    parsed: ParsedQuery,
    pages: ChangeLogPages,
    page_headings: PageHeadings,
) -> list[ChunkHit]:
    """``hits`` with each change-log entry moved right after the last other hit holding at least as
    many of the query's words, unless the query asks about versions or changes; the rest keep
    their order. ``pages`` remembers which pages are change logs; ``page_headings(paths)`` gives each
    page's heading titles, in order."""
    if asks_about_changes(query):
        return list(hits)
    entries = pages.entries(hits, page_headings)
    if not entries:
        return list(hits)
    words = coverage_words(parsed.loose())
    others = [h for h in hits if h.chunk_id not in entries]
    held = [_held(words, h) for h in others]
    after: dict[int, list[ChunkHit]] = {}  # how many other hits go before -> the entries placed there
    ahead = 0  # the other hits ranked above the entry: it never moves up
    for h in hits:
        if h.chunk_id not in entries:
            ahead += 1
            continue
        own = _held(words, h)
        slot = max((i + 1 for i in range(len(others)) if held[i] >= own), default=0)
        after.setdefault(max(ahead, slot), []).append(h)
    out = after.pop(0, [])
    for i, h in enumerate(others, 1):
        out.append(h)
        out.extend(after.pop(i, ()))
    return out


def _held(words: CoverageWords, hit: ChunkHit) -> float:
    return coverage(words, f"{hit.heading_path or ''}\n{hit.text}")
