"""Heading anchors as Markdown renderers name them (decision 772).

A heading's anchor is GitHub's slug of its text (lower case, punctuation dropped,
spaces to dashes), numbered ``-1``, ``-2``... when an earlier heading of the page
took it (github-slugger's rule), or the heading's own ``{#id}``. The link graph
checks fragments against these, kb_read names the heading a fragment means, the
Notion push links to heading blocks and the PDF book to its bookmarks by the
same rule, so the four never disagree about what ``page.md#setup`` reaches.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["Slugger", "own_id", "slug"]

_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)
# a heading's own id, written last: `## Title {#id}` (VitePress, Pandoc, kramdown, Hugo), other
# attributes allowed beside it (`{#id .class}`). The lookahead checks first that the block closes the
# heading: without it, an unclosed `{#aaa...` read each way of splitting the id from the rest (a 64 KB
# heading 5.4 s, each time the page's anchors were read).
_OWN_ID = re.compile(r"\{(?=[^{}]*\}\s*$)[^{}]*?#([^\s{}#]+)[^{}]*\}\s*$")


def slug(title: str) -> str:
    """GitHub-style heading slug: lower case, punctuation dropped, spaces to dashes. NFC first, so
    a title or fragment a Mac wrote decomposed has the slug of the one typed composed."""
    text = unicodedata.normalize("NFC", title).strip().lower()
    return _SLUG_DROP.sub("", text).replace(" ", "-")


def own_id(title: str) -> str | None:
    """The id a heading gives itself at its end (``Title {#id}``, ``Title {: #id .wide}``), lower
    case; None when it gives none."""
    found = _OWN_ID.search(title)
    return found.group(1).lower() if found else None


class Slugger:
    """One page's slugs in heading order: a slug an earlier heading took is numbered ``-1``,
    ``-2``..., and a numbered slug is itself taken (github-slugger's ``Slugger``)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def slug(self, text: str) -> str:
        """The anchor of the next heading whose rendered text is ``text``."""
        base = result = slug(text)
        while result in self._seen:
            self._seen[base] += 1
            result = f"{base}-{self._seen[base]}"
        self._seen[result] = 0
        return result
