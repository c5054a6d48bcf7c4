"""Tables of contents rank below the sections they list (decisions 1021, 1071).

A long reference page opens with a list of links to its own sections (``- [bodyLimit](#bodylimit)``).
Such a chunk says every section's name, twice with the fragment's words, in a few lines, so BM25
ranks it first for a short query naming one of them (``FSTDEP022``, ``HTTP2 https``), while it tells
an agent nothing but where to look. Among the lexical hits, a table of contents goes right after
the last other hit of its own page: the sections it points to come first, and a page found only
through its contents still shows it.

A book's summary or a folder's index page is the same across documents (``- [Refutability](ch19-02-
refutability.md)``): a chunk of links to other documents ranked first for the one word its item holds,
above the chapter that word names. It goes right after the last hit of a document it lists (decision 1071).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from urllib.parse import unquote

from ..index.port import ChunkHit

__all__ = [
    "CONTENTS_MIN_LINKS",
    "CONTENTS_SHARE",
    "demote_contents",
    "demote_navigation",
    "is_contents",
    "navigation_targets",
]

CONTENTS_SHARE = 0.6  # of a chunk's non-blank lines that are links to the page's own sections
CONTENTS_MIN_LINKS = 5  # fewer points to a few subsections (a lab's "verify: ..."), not to a whole page
# A list item (any depth, any marker) that is nothing but a link to a fragment of the same page.
_OWN_LINK_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+\[[^\]]*\]\(#[^)\s]*\)\s*")


def is_contents(text: str) -> bool:
    """Whether ``text`` is mostly a list of links to its own page's sections."""
    if text.count("](#") < CONTENTS_MIN_LINKS:  # most chunks: no line is split (every search asks of every hit)
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    links = sum(1 for line in lines if _OWN_LINK_ITEM.fullmatch(line))
    return links >= CONTENTS_MIN_LINKS and links >= CONTENTS_SHARE * len(lines)


def demote_contents(hits: Sequence[ChunkHit]) -> list[ChunkHit]:
    """``hits`` with each table of contents moved right after the last other hit of its page
    (kept where it is when it is its page's only kind of hit); the rest keep their order."""
    contents = {h.chunk_id for h in hits if is_contents(h.text)}
    if not contents:
        return list(hits)
    last: dict[str, int] = {}  # the position of each page's last hit that is not its contents
    for i, h in enumerate(hits):
        if h.chunk_id not in contents:
            last[h.path] = i
    moved: dict[int, list[ChunkHit]] = {}  # position -> the contents to put right after it
    out: list[ChunkHit] = []
    for i, h in enumerate(hits):
        after = last.get(h.path, -1)
        if h.chunk_id in contents and after > i:
            moved.setdefault(after, []).append(h)
            continue
        out.append(h)
        out.extend(moved.pop(i, ()))
    return out


# A list item that is nothing but a link to another document (``- [Refutability](ch19-02-refutability.md)``).
_DOC_LINK_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+\[[^\]]*\]\(<?([^)\s#>]+)>?(?:#[^)\s]*)?\)\s*")


def navigation_targets(path: str, text: str) -> frozenset[str]:
    """The documents ``text`` (a chunk of ``path``) lists when it is mostly a list of links to other
    documents (a book's summary, a section's index page); empty otherwise."""
    if text.count("](") < CONTENTS_MIN_LINKS:
        return frozenset()
    lines = [line for line in text.splitlines() if line.strip()]
    targets = []
    for line in lines:
        m = _DOC_LINK_ITEM.fullmatch(line)
        if m is not None and "://" not in m.group(1) and not m.group(1).startswith("mailto:"):
            targets.append(posixpath.normpath(posixpath.join(posixpath.dirname(path), unquote(m.group(1)))))
    if len(targets) >= CONTENTS_MIN_LINKS and len(targets) >= CONTENTS_SHARE * len(lines):
        return frozenset(targets)
    return frozenset()


def demote_navigation(hits: Sequence[ChunkHit]) -> list[ChunkHit]:
    """``hits`` with each navigation list moved right after the last hit of a document it lists
    (kept where it is when none of them is among the hits); the rest keep their order."""
    targets = {h.chunk_id: t for h in hits if (t := navigation_targets(h.path, h.text))}
    if not targets:
        return list(hits)
    out = list(hits)
    for chunk_id, listed in targets.items():
        at = next(i for i, h in enumerate(out) if h.chunk_id == chunk_id)
        after = max((i for i, h in enumerate(out) if h.path in listed), default=-1)
        if after > at:
            out.insert(after, out.pop(at))
    return out
