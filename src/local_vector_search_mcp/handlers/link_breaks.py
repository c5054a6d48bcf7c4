"""What an edit broke: the links whose fragment named a heading or block id the edit removed.

kb_patch reports them beside its result (decision 1016) instead of leaving the agent to find
them with kb_links. A link counts when its ``#fragment`` was found in the document before the
edit and is not after, read by the graph's own rule (``FragmentTargets``, the one behind
kb_links' ``fragmentFound``), so a link that was broken already is not the edit's doing.

Cost: an edit that keeps every heading in order and every block id (most edits) reads no link
at all. Only one that renames, removes or reorders a heading, or drops a block id, reads the
link graph kb_links keeps (``load_graph``: built once, then updated from the documents that
changed) for the links reaching the document.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from lvsm_contract.models import BrokenLink

from ..index.graph import WIKI_KINDS, FragmentTargets, Graph, own_fragment, written_fragment
from ..index.indexer import indexable
from ..index.port import StoredLink
from ..markdown import Document
from ..markdown.links import block_ids, extract_links, graph_links
from ..workspace import Workspace
from .links import load_graph

__all__ = ["LIMIT", "NONE_BROKEN", "LinkBreaks", "broken_links"]

log = logging.getLogger(__name__)

LIMIT = 100  # a heading linked 5,000 times still gives a small result; the count says the rest


@dataclass(frozen=True, slots=True)
class LinkBreaks:
    links: tuple[BrokenLink, ...]  # the first LIMIT, by source path and place
    count: int


NONE_BROKEN = LinkBreaks((), 0)


def broken_links(ws: Workspace, rel: str, before: Document, after: Document) -> LinkBreaks | None:
    """The links to ``rel`` the edit from ``before`` to ``after`` broke; None when a heading or block
    id went away but the links cannot be checked (``rel`` outside the index, no index yet)."""
    old = _targets(before)
    new = _targets(after)
    if not _loses(old, new):
        return NONE_BROKEN
    if not indexable(rel, ws.indexing.path_filter):
        return None  # the graph holds no link to a document it does not index
    try:
        if not ws.store.exists() or ws.activity.rebuild_in_progress:
            return None
        graph = load_graph(ws)
    except Exception as exc:  # the edit is committed: a report that cannot be made is no error
        log.warning("could not read the link graph to check the links an edit broke: %s", exc)
        return None
    found = sorted(_broken(graph, rel, after, old, new), key=lambda hit: (hit[0].source, hit[0].ordinal))
    return LinkBreaks(tuple(_wire(link, fragment) for link, fragment in found[:LIMIT]), len(found))


def _targets(doc: Document) -> FragmentTargets:
    return FragmentTargets(tuple(e.title or "" for e in doc.headings), frozenset(block_ids(doc)))


def _loses(old: FragmentTargets, new: FragmentTargets) -> bool:
    """Whether a fragment ``old`` finds can be missing from ``new``. Headings only added keep every
    anchor (a repeated title's numbered slugs only grow) and every chain's order; anything else
    may lose one, and the links are read to tell."""
    return not _in_order(old.headings, new.headings) or any(i not in new.block_ids for i in old.block_ids)


def _in_order(part: Sequence[str], whole: Sequence[str]) -> bool:
    """``part`` is ``whole`` with some items left out."""
    if part == whole:  # most edits keep every heading: compared in C
        return True
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in part)


def _broken(
    graph: Graph, rel: str, after: Document, old: FragmentTargets, new: FragmentTargets
) -> Iterable[tuple[StoredLink, str]]:
    """Each link with its fragment as written that ``old`` finds and ``new`` does not: other
    documents' links as the index holds them, this document's own from the edited text (the index
    may not have it yet, and an edit may rewrite a link along with its heading)."""
    for link, fragment in (*_from_others(graph, rel), *_own(graph, rel, after)):
        if old.found(fragment, link.kind in WIKI_KINDS) and not new.found(fragment, link.kind in WIKI_KINDS):
            yield link, fragment


def _from_others(graph: Graph, rel: str) -> Iterable[tuple[StoredLink, str]]:
    for ln in graph.incoming.get(rel, ()):
        if ln.source != rel and ln.exists and ln.fragment is not None:
            yield StoredLink(ln.source, ln.ordinal, ln.kind, ln.destination, ln.text, ln.pointer), written_fragment(ln)


def _own(graph: Graph, rel: str, after: Document) -> Iterable[tuple[StoredLink, str]]:
    """The edited document's links to itself: by its path or name (resolved as the graph resolves
    them) and within it (``[x](#setup)``, ``[[#Setup]]``, which the graph leaves out)."""
    for ordinal, ln in enumerate(graph_links(after, extract_links(after).links)):  # the store's ordinals
        link = StoredLink(rel, ordinal, ln.kind, ln.destination, ln.text, ln.pointer)
        fragment = own_fragment(link)
        if fragment is not None:
            yield link, fragment
            continue
        resolved = graph.resolver.resolve(link)
        if resolved is not None and not resolved.is_image and resolved.target == rel and resolved.fragment is not None:
            yield link, written_fragment(resolved)


def _wire(link: StoredLink, fragment: str) -> BrokenLink:
    wiki = link.kind in WIKI_KINDS
    return BrokenLink(
        source=link.source,
        pointer=link.anchor,
        kind=link.kind,  # type: ignore[arg-type]  # document links only: the graph's and own_fragment's kinds
        destination=link.destination,
        # as kb_links gives it: a Markdown link's percent-decoded (decision 911)
        fragment=fragment if wiki else unquote(fragment),
        text=link.text,
    )
