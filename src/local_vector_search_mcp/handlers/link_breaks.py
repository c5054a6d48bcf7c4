"""What a write broke: the links from other documents that reached what it changed and no longer do.

kb_patch, kb_move and kb_delete report them beside their result instead of leaving the agent to find
them with kb_links. A link counts only when it reached its target before the write, by the graph's own
rules, so one that was broken already is not the write's doing:

* kb_patch (decision 1016): links whose ``#fragment`` was found in the document before the edit and
  is not after (``FragmentTargets``, the rule behind kb_links' ``fragmentFound``); and (decision
  1037) wikilinks that reached it by a front-matter alias the edit took away and, resolved again with
  its aliases as they are after it, reach no document or another.
* kb_delete and kb_move (decision 1023): links that resolved to the document and, resolved again
  against the documents as the write leaves them (the graph's ``Resolver``), reach no document (a
  delete: ``[[Setup]]`` opening another ``Setup.md`` still works) or not the moved one (a move).
  A move to another folder without ``updateLinks`` also breaks the moved document's own links that
  reached a document from its old folder and not from its new one (decision 1037).
* kb_create, kb_move and kb_patch (decision 1200): a note that arrives under a name (a created or
  moved note's file name, an alias an edit adds) takes over the wikilinks by that name that opened
  another note: they now open it, or, for an alias two notes carry, none.
* kb_delete_image and kb_move_image (decision 1041): links to a picture that opened it and, with the
  files as the write leaves them, open no file (a delete) or not the moved one (a move), read by the
  rules a move with ``updateLinks`` keeps them working by (``relink.Files``): a path as written, a
  bare ``![[name]]`` the nearest file of that name.

Cost: an edit that keeps every heading in order, every block id and its front matter's aliases (most
edits) reads no link at all. Otherwise, and for every delete and move, the link graph kb_links keeps
is read (``load_graph``: built once, then updated from the documents that changed); a document nobody
links to is then one dictionary look-up, and only the links reaching it are resolved again.
"""

from __future__ import annotations

import dataclasses
import logging
import posixpath
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar
from urllib.parse import unquote

from lvsm_contract.models import (
    BrokenLink,
    BrokenLinks,
    KbCreateResult,
    KbDeleteImageResult,
    KbDeleteResult,
    KbMoveImageResult,
    KbMoveResult,
    KbPatchResult,
)

from ..globs import nfc
from ..index.graph import (
    WIKI_KINDS,
    FragmentTargets,
    Graph,
    ResolvedLink,
    Resolver,
    may_answer,
    name_key,
    own_fragment,
    written_fragment,
)
from ..index.indexer import indexable
from ..index.port import DocumentMeta, StoredLink
from ..index.relink import Files
from ..markdown import Document, parse_document
from ..markdown.kinds import ElementKind
from ..markdown.links import block_ids, extract_links, front_matter_aliases, graph_links, separators
from ..workspace import Workspace
from .links import load_graph
from .reading import load_document

__all__ = [
    "LIMIT",
    "NONE_BROKEN",
    "LinkBreaks",
    "broken_by_create",
    "broken_by_delete",
    "broken_by_image_delete",
    "broken_by_image_move",
    "broken_by_move",
    "broken_links",
    "reported",
]

log = logging.getLogger(__name__)

LIMIT = 100  # a heading linked 5,000 times still gives a small result; the count says the rest

# The results that carry ``brokenLinks`` and ``brokenLinkCount``.
Reporting = TypeVar(
    "Reporting", KbCreateResult, KbPatchResult, KbMoveResult, KbDeleteResult, KbMoveImageResult, KbDeleteImageResult
)


@dataclass(frozen=True, slots=True)
class LinkBreaks:
    links: tuple[BrokenLink, ...]  # the first LIMIT, by source path and place
    count: int


NONE_BROKEN = LinkBreaks((), 0)


def reported(result: Reporting, breaks: LinkBreaks | None) -> Reporting:
    """``result`` with the links its write broke; both fields left null when they could not be told."""
    if breaks is None:
        return result
    return result.model_copy(
        update={"broken_links": BrokenLinks(list(breaks.links)), "broken_link_count": breaks.count}
    )


def broken_links(ws: Workspace, rel: str, before: Document, after: Document) -> LinkBreaks | None:
    """The links to ``rel`` the edit from ``before`` to ``after`` broke; None when a heading, block
    id or alias went away but the links cannot be checked (``rel`` outside the index, no index yet)."""
    old = _targets(before)
    new = _targets(after)
    lost_fragment = _loses(old, new)
    aliases = _aliases_if_lost(before, after)
    gained = _aliases_gained(before, after)
    if not lost_fragment and aliases is None and not gained:
        return NONE_BROKEN
    graph = _graph(ws, rel)
    if graph is None:
        return None
    found = {(ln.source, ln.ordinal): ln for ln in _broken(graph, rel, after, old, new)} if lost_fragment else {}
    if aliases is not None:  # a link by a lost alias to a lost heading is one broken link, listed once
        found.update({(ln.source, ln.ordinal): ln for ln in _unaliased(graph, rel, after, aliases)})
    if gained:  # an alias another note carries too: the links by it that opened that note open none
        meta = dict(graph.resolver.meta)
        meta[rel] = dataclasses.replace(meta.get(rel, DocumentMeta()), aliases=front_matter_aliases(after))
        taken = _taken(Resolver(graph.documents, meta), _answered(graph, gained, rel))
        found.update({(ln.source, ln.ordinal): ln for ln in taken})
    return _report(_as_written(ws, found.values(), skip=rel))


def broken_by_create(ws: Workspace, rel: str, doc: Document) -> LinkBreaks | None:
    """The wikilinks and embeds of other documents that opened another note and, with ``rel`` just
    created (``doc``, its aliases along), open it or none (decision 1200); None when they cannot be
    told (``rel`` outside the index, no index)."""
    graph = _graph(ws, rel)
    if graph is None:
        return None
    aliases = front_matter_aliases(doc)
    answered = _answered(graph, _keys(rel, aliases), rel)
    if not answered:
        return NONE_BROKEN  # no wikilink is written by its names: nothing is resolved again
    meta = dict(graph.resolver.meta)
    meta[rel] = DocumentMeta(aliases=aliases)
    return _report(_as_written(ws, _taken(Resolver(graph.documents | {rel}, meta), answered), skip=rel))


def broken_by_delete(ws: Workspace, rel: str) -> LinkBreaks | None:
    """The links from other documents that reached ``rel``, just deleted, and now reach no document;
    None when they cannot be told (``rel`` outside the index or not in it yet, no index)."""
    graph = _graph_holding(ws, rel)
    if graph is None:
        return None
    inbound = _inbound(graph, rel)
    if not inbound:
        return NONE_BROKEN  # a page nobody links to: nothing is resolved again
    after = _resolver_after(graph, rel, None)
    return _report(_as_written(ws, [link for link in inbound if not _opens(after, link, None)]))


def broken_by_move(
    ws: Workspace,
    src: str,
    dst: str,
    rewritten: Mapping[str, tuple[bytes, bytes]],
    *,
    own_links_kept: bool = False,
) -> LinkBreaks | None:
    """The links from other documents that reached ``src``, just moved to ``dst``, and do not reach
    ``dst``; None when they cannot be told. ``rewritten``: the documents ``updateLinks`` rewrote, their
    bytes before and after; their links are read from those, since the index still holds them as
    they were (and what the rewrite left broken is what it reports). ``own_links_kept``: the moved
    document's own links were left as written (no ``updateLinks``), so those it had from ``src``'s
    folder and lost in ``dst``'s are listed too, with ``dst`` as their source."""
    graph = _graph_holding(ws, src)
    if graph is None:
        return None
    kept = [link for link in _inbound(graph, src) if link.source not in rewritten]
    checked = sorted(p for p in rewritten if p not in (src, dst) and indexable(p, ws.indexing.path_filter))
    own = _own_reaching(ws, graph.resolver, src, dst) if own_links_kept else []
    # a new name takes over the wikilinks by it that opened another note (decision 1200); the same
    # name in the same folder answers what it answered
    answered = []
    if indexable(dst, ws.indexing.path_filter):
        keys = _keys(dst, graph.resolver.meta.get(src, DocumentMeta()).aliases)
        answered = _answered(graph, keys, src, rewritten)
    if not kept and not checked and not own and not answered:
        return NONE_BROKEN  # a page nobody links to and linking nowhere: nothing is resolved again
    after = _resolver_after(graph, src, dst)
    found = [link for link in kept if not _opens(after, link, dst)]
    found.extend(_taken(after, answered))
    found = _as_written(ws, found, skip=dst)
    found.extend(link for link, target in own if not _opens(after, link, target))
    reached, reaches = partial(_opens, graph.resolver, target=src), partial(_opens, after, target=dst)
    for source in checked:
        found.extend(_left_broken(reached, reaches, source, rewritten[source]))
    return _report(found)


def broken_by_image_delete(ws: Workspace, rel: str) -> LinkBreaks | None:
    """The links in indexed documents that reached the picture ``rel``, just deleted, and now reach no
    file; None when they cannot be told (no index, the graph unreadable)."""
    return _picture_breaks(ws, rel, None, {})


def broken_by_image_move(
    ws: Workspace, src: str, dst: str, rewritten: Mapping[str, tuple[bytes, bytes]]
) -> LinkBreaks | None:
    """The links in indexed documents that reached the picture ``src``, just moved to ``dst``, and do
    not reach ``dst``; None when they cannot be told. ``rewritten`` as for :func:`broken_by_move`."""
    return _picture_breaks(ws, src, dst, rewritten)


def _picture_breaks(
    ws: Workspace, image: str, moved_to: str | None, rewritten: Mapping[str, tuple[bytes, bytes]]
) -> LinkBreaks | None:
    """A picture is no document, so the graph keeps no ``incoming`` for it: its links are the graph's
    file links whose target bears its name, and only those are read again."""
    graph = _read_graph(ws)
    if graph is None:
        return None
    opened = _PictureLinks(ws, graph.resolver, image, moved_to)
    kept = [
        _stored(ln) for ln in graph.links if ln.is_image and ln.source not in rewritten and opened.named_like(ln.target)
    ]
    found = _as_written(ws, [link for link in kept if opened.before(link) and not opened.after(link)])
    for source in sorted(p for p in rewritten if indexable(p, ws.indexing.path_filter)):
        found.extend(_left_broken(opened.before, opened.after, source, rewritten[source]))
    return _report(found)


class _PictureLinks:
    """Which links open the picture ``image`` before its delete (``moved_to`` None) or its move to
    ``moved_to``, and after it, read when the write is done. The rules are the ones a move with
    ``updateLinks`` keeps links working by (``relink.Files``), so what it rewrote reads as kept: a path
    reaches the file it names (or the one file equal to it in another Unicode normal form, decision
    505); a bare ``![[name]]`` opens the file of that name Obsidian opens (the root's, else the nearest,
    decision 915). The tree before the write is the one after it with the move undone, or the deleted
    picture back."""

    def __init__(self, ws: Workspace, resolver: Resolver, image: str, moved_to: str | None) -> None:
        self.resolver = resolver
        self.files = Files(ws.root)
        self.image = image
        self.moved_to = moved_to
        self._undone = (moved_to or "", image)  # ``Files``' (src, dst): what reads the tree as it was
        self._name = name_key(posixpath.basename(image))

    def named_like(self, target: str) -> bool:
        """Whether a link resolved to ``target`` may open the picture: it bears its file name."""
        return name_key(posixpath.basename(target)) == self._name

    def before(self, link: StoredLink) -> bool:
        """Whether ``link`` opened the picture before the write."""
        found = self._file_link(link)
        if found is None:
            return False
        target, bare = found
        if bare:
            return self.files.opened(target, link.source, self._undone) == self.image
        return _same_path(target, self.image)

    def after(self, link: StoredLink) -> bool:
        """Whether ``link`` opens, as the write leaves the files, the moved picture (any file after a
        delete: ``![[name]]`` finding another file of that name still shows a picture)."""
        found = self._file_link(link)
        if found is None:
            return False
        target, bare = found
        now = self.files.opened(target, link.source) if bare else self.files.reached(target)
        return now is not None and self.moved_to in (None, now)

    def _file_link(self, link: StoredLink) -> tuple[str, bool] | None:
        """The path (or bare name) ``link`` names as a file, and whether it is a bare name an embed or
        wikilink finds anywhere; None when it names no file (a note, a URL, nothing)."""
        found = self.resolver.resolve(link, files=True)
        if found is None or not found.is_image:
            return None
        name = link.destination.split("#", 1)[0].strip()
        return found.target, link.kind in WIKI_KINDS and "/" not in separators(name)


def _same_path(target: str, image: str) -> bool:
    """A link's path names ``image``: spelled so, or in another Unicode normal form (505)."""
    return target == image or (not target.isascii() and nfc(target) == nfc(image))


def _graph(ws: Workspace, rel: str) -> Graph | None:
    """The index's link graph; None when the links to ``rel`` cannot be read from it."""
    if not indexable(rel, ws.indexing.path_filter):
        return None  # the graph holds no link to a document it does not index
    return _read_graph(ws)


def _read_graph(ws: Workspace) -> Graph | None:
    """The index's link graph; None when there is none to read (no index, a forced rebuild) or it
    cannot be read (logged)."""
    try:
        if not ws.store.exists() or ws.activity.rebuild_in_progress:
            return None
        return load_graph(ws)
    except Exception as exc:  # the write is committed: a report that cannot be made is no error
        log.warning("could not read the link graph to check the links a write broke: %s", exc)
        return None


def _graph_holding(ws: Workspace, rel: str) -> Graph | None:
    """The graph when it holds ``rel``: one created moments ago and not indexed yet has no link
    resolving to it there, which would read as "nothing broke"."""
    graph = _graph(ws, rel)
    return graph if graph is not None and rel in graph.documents else None


def _inbound(graph: Graph, rel: str) -> list[StoredLink]:
    """The links from other documents that reach ``rel`` (a link to an ambiguous name reaches none)."""
    return [_stored(ln) for ln in graph.incoming.get(rel, ()) if ln.source != rel and ln.exists]


def _resolver_after(graph: Graph, gone: str, moved_to: str | None) -> Resolver:
    """The graph's resolver as the write leaves the documents: ``gone`` deleted, or moved to
    ``moved_to`` with its aliases, headings and block ids."""
    documents = graph.documents - {gone}
    meta = {path: m for path, m in graph.resolver.meta.items() if path != gone}
    if moved_to is not None:
        documents.add(moved_to)
        if gone in graph.resolver.meta:
            meta[moved_to] = graph.resolver.meta[gone]
    return Resolver(documents, meta)


def _own_reaching(ws: Workspace, before: Resolver, src: str, dst: str) -> list[tuple[StoredLink, str]]:
    """The document links of the document moved from ``src`` to ``dst``, read from its file, that
    reached a document from ``src``, each with the document it must reach from ``dst`` (``dst`` for a
    link to itself). None in the same folder: a link resolves from its document's folder, and that
    did not change (its name did: a link to itself by its old name is left out, as it was before)."""
    if posixpath.dirname(src) == posixpath.dirname(dst):
        return []
    out = []
    for link in _links_on_disk(ws, dst):
        found = before.resolve(dataclasses.replace(link, source=src), files=True)
        if found is not None and found.exists and not found.is_image:
            out.append((link, dst if found.target == src else found.target))
    return out


def _opens(resolver: Resolver, link: StoredLink, target: str | None) -> bool:
    """Whether ``link`` reaches the document ``target`` (any document when None)."""
    found = resolver.resolve(link, files=True)
    return found is not None and found.exists and not found.is_image and target in (None, found.target)


def _left_broken(
    reached: Callable[[StoredLink], bool],
    reaches: Callable[[StoredLink], bool],
    source: str,
    texts: tuple[bytes, bytes],
) -> Iterable[StoredLink]:
    """The links of a document the move rewrote that reached the moved file in its old text and, as
    rewritten, do not reach its new path. A rewrite changes destinations only: the links pair up."""
    old, new = texts
    for was, now in zip(_links_of(source, parse_document(old)), _links_of(source, parse_document(new)), strict=False):
        if reached(was) and not reaches(now):
            yield now


def _as_written(ws: Workspace, links: Iterable[StoredLink], skip: str | None = None) -> list[StoredLink]:
    """``links`` from the index, checked against the files this server has written or heard of and
    not indexed yet (its sync queue): such a file's link counts only if its text still holds it (the
    same kind, destination and text), with the pointer it has now; a file gone holds none. Another
    client's write moments earlier removed the link on disk while the index still held it, and the
    report named a link that no longer existed by a pointer that had gone stale (found on
    PostgreSQL, whose sync takes longer). ``skip``: the written document itself, read already."""
    links = list(links)
    pending = set(ws.indexing.sync.pending()) - {skip}
    stale = {link.source for link in links} & pending
    if not stale:
        return links
    now = {source: _links_on_disk(ws, source) for source in stale}
    out = []
    for link in links:
        if link.source not in stale:
            out.append(link)
            continue
        same = next((ln for ln in now[link.source] if _same_link(ln, link)), None)
        if same is not None:
            now[link.source].remove(same)  # two equal links are two links, each matched once
            out.append(same)
    return out


def _same_link(a: StoredLink, b: StoredLink) -> bool:
    return (a.kind, a.destination, a.text) == (b.kind, b.destination, b.text)


def _links_on_disk(ws: Workspace, source: str) -> list[StoredLink]:
    """``source``'s links as its file holds them now; none when it cannot be read (gone, moved)."""
    try:
        rel, document = load_document(ws, source)
    except Exception:  # gone, moved or unreadable since: no link of it stands
        return []
    return _links_of(rel, document)


def _links_of(source: str, doc: Document) -> list[StoredLink]:
    """A document's links as the index stores them, with the store's ordinals."""
    return [
        StoredLink(source, ordinal, ln.kind, ln.destination, ln.text, ln.pointer)
        for ordinal, ln in enumerate(graph_links(doc, extract_links(doc).links))
    ]


def _report(found: Iterable[StoredLink]) -> LinkBreaks:
    ordered = sorted(found, key=lambda link: (link.source, link.ordinal))
    return LinkBreaks(tuple(_wire(link) for link in ordered[:LIMIT]), len(ordered))


def _targets(doc: Document) -> FragmentTargets:
    return FragmentTargets(tuple(e.title or "" for e in doc.headings), frozenset(block_ids(doc)))


def _front_matter(doc: Document) -> str:
    first = doc.elements[0] if doc.elements else None
    return first.text if first is not None and first.kind == ElementKind.FRONT_MATTER else ""


def _aliases_if_lost(before: Document, after: Document) -> tuple[str, ...] | None:
    """``after``'s front-matter aliases when the edit took away one of ``before``'s (a wikilink by it
    may now reach no page, or another); None when it kept them all. An edit that leaves the front
    matter as it was (most) reads no YAML; aliases only added break no link that reached this page."""
    if _front_matter(before) == _front_matter(after):
        return None
    aliases = front_matter_aliases(after)
    kept = {name_key(alias) for alias in aliases}
    return aliases if any(name_key(alias) not in kept for alias in front_matter_aliases(before)) else None


def _unaliased(graph: Graph, rel: str, after: Document, aliases: tuple[str, ...]) -> Iterable[StoredLink]:
    """The wikilinks and embeds that reached ``rel`` (other documents' as the index holds them, its
    own from the edited text) and, with ``rel`` carrying ``aliases`` now, reach no document or
    another. Markdown links reach it by path, which an alias does not change."""
    meta = dict(graph.resolver.meta)
    meta[rel] = dataclasses.replace(meta.get(rel, DocumentMeta()), aliases=aliases)
    now = Resolver(graph.documents, meta)
    others = [link for link in _inbound(graph, rel) if link.kind in WIKI_KINDS]
    own = [link for link in _links_of(rel, after) if link.kind in WIKI_KINDS and _opens(graph.resolver, link, rel)]
    return [link for link in (*others, *own) if not _opens(now, link, rel)]


def _keys(rel: str, aliases: Iterable[str]) -> frozenset[str]:
    """The names a wikilink reaches the note at ``rel`` by: its file name and its aliases."""
    return frozenset({name_key(posixpath.basename(rel)[:-3]), *(name_key(alias) for alias in aliases)})


def _answered(
    graph: Graph, keys: frozenset[str], arriving: str, skip: Collection[str] = ()
) -> list[tuple[StoredLink, str]]:
    """The wikilinks and embeds of other documents than ``arriving`` (and than ``skip``, whose links
    are read elsewhere) that open a note other than it and whose name ``keys`` answer, each with
    the note it opens: what a note arriving under those names may take over (decision 1200). No
    resolving: most arrivals answer no written name."""
    return [
        (_stored(link), link.target)
        for link in graph.links
        if link.kind in WIKI_KINDS
        and link.exists
        and not link.is_image
        and may_answer(link, keys)
        and link.target != arriving
        and link.source != arriving
        and link.source not in skip
    ]


def _taken(after: Resolver, answered: Iterable[tuple[StoredLink, str]]) -> list[StoredLink]:
    """Of ``answered``, the links that, resolved by ``after``, no longer open their note."""
    return [link for link, target in answered if not _opens(after, link, target)]


def _aliases_gained(before: Document, after: Document) -> frozenset[str]:
    """The alias keys the edit gave the page (decision 1200); an edit that leaves the front matter
    as it was (most) reads no YAML."""
    if _front_matter(before) == _front_matter(after):
        return frozenset()
    had = {name_key(alias) for alias in front_matter_aliases(before)}
    return frozenset(name_key(alias) for alias in front_matter_aliases(after)) - had


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
) -> Iterable[StoredLink]:
    """Each link whose fragment as written ``old`` finds and ``new`` does not: other documents' links
    as the index holds them, this document's own from the edited text (the index may not have it
    yet, and an edit may rewrite a link along with its heading)."""
    for link, fragment in (*_from_others(graph, rel), *_own(graph, rel, after)):
        if old.found(fragment, link.kind in WIKI_KINDS) and not new.found(fragment, link.kind in WIKI_KINDS):
            yield link


def _from_others(graph: Graph, rel: str) -> Iterable[tuple[StoredLink, str]]:
    for ln in graph.incoming.get(rel, ()):
        if ln.source != rel and ln.exists and ln.fragment is not None:
            yield _stored(ln), written_fragment(ln)


def _own(graph: Graph, rel: str, after: Document) -> Iterable[tuple[StoredLink, str]]:
    """The edited document's links to itself: by its path or name (resolved as the graph resolves
    them) and within it (``[x](#setup)``, ``[[#Setup]]``, which the graph leaves out)."""
    for link in _links_of(rel, after):
        fragment = own_fragment(link)
        if fragment is not None:
            yield link, fragment
            continue
        resolved = graph.resolver.resolve(link)
        if resolved is not None and not resolved.is_image and resolved.target == rel and resolved.fragment is not None:
            yield link, written_fragment(resolved)


def _stored(link: ResolvedLink) -> StoredLink:
    return StoredLink(link.source, link.ordinal, link.kind, link.destination, link.text, link.pointer)


def _wire(link: StoredLink) -> BrokenLink:
    fragment = written_fragment(link) or None
    return BrokenLink(
        source=link.source,
        pointer=link.anchor,
        kind=link.kind,  # type: ignore[arg-type]  # the graph's and own_fragment's kinds, all in BrokenLinkKind
        destination=link.destination,
        # as kb_links gives it: a Markdown link's percent-decoded (decision 911)
        fragment=fragment if fragment is None or link.kind in WIKI_KINDS else unquote(fragment),
        text=link.text,
    )
