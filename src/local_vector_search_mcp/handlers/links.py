"""kb_links: the link graph around one document, or the whole knowledge base's broken links,
orphans and missing images (spec/tools/kb_links.yaml, decisions 42-46, 138-140, 773, 1038)."""

from __future__ import annotations

import os
import posixpath
import threading
import weakref
from collections.abc import Hashable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from lvsm_contract.models import (
    DocumentLink,
    KbLinksRequest,
    KbLinksResult,
    LinkCounts,
    MissingImage,
    MissingLink,
    SkippedEntry,
)

from ..errors import LIST_DOCUMENTS, InvalidArgument, KbError, NotFound
from ..index.graph import WIKI_KINDS, Graph, ResolvedLink, name_key, nearest
from ..index.port import DocumentState
from ..markdown import parse_document
from ..sourcefile import read_source, unlisted_folder
from ..workspace import Workspace
from .files import MAX_LISTED_SKIPPED

__all__ = ["kb_links", "load_graph"]

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif"})


@dataclass(frozen=True, slots=True)
class _Kept:
    key: Hashable
    graph: Graph
    states: dict[str, DocumentState]


_graphs: weakref.WeakKeyDictionary[object, _Kept] = weakref.WeakKeyDictionary()
_graphs_lock = threading.Lock()
# at most this share of the documents changed: update the kept graph instead of building anew
INCREMENTAL_SHARE = 0.25


def load_graph(ws: Workspace) -> Graph:
    """The resolved link graph of the index, kept while the store's snapshot key stays (decision
    300) and updated from the documents whose state changed when it moves (decision 302):
    reading and resolving every link took 55-80 ms on opensearch-docs' 10,800 links."""
    store = ws.store
    key = store.snapshot_key()
    if key is None:
        return Graph(store.links(), store.document_states(), store.document_meta())
    with _graphs_lock:
        kept = _graphs.get(store)
    if kept is not None and kept.key == key:
        return kept.graph
    states = store.document_states()
    graph: Graph | None = None
    if kept is not None:
        changed = {p for p in states.keys() | kept.states.keys() if states.get(p) != kept.states.get(p)}
        if not changed:
            graph = kept.graph  # the key moved for other tables (vectors, term statistics, ...)
        elif len(changed) <= max(50, INCREMENTAL_SHARE * len(states)):
            graph = kept.graph.updated(changed, states, store.links(changed), store.document_meta(changed))
    if graph is None:
        graph = Graph(store.links(), states, store.document_meta())
    if store.snapshot_key() == key:  # nothing committed while it was read
        with _graphs_lock:
            _graphs[store] = _Kept(key, graph, states)
    return graph


def _why_not_indexed(rel: str, target: Path) -> None:
    """A file that is there but could not be indexed (a Latin-1 or UTF-16 export, a file over the
    size cap, one the OS refuses) gets the typed error kb_read gives for it, not a NOT_FOUND that
    sends the agent looking for a file it can see in kb_list_files (decision 921). Read only on
    this error path; a missing file, or one that reads (new since the last index), returns."""
    try:
        parse_document(read_source(target, rel))
    except NotFound:
        return


def kb_links(ws: Workspace, request: KbLinksRequest) -> KbLinksResult:
    ws.check_ready(need_chunks=False)  # links need indexed documents, not text
    graph = load_graph(ws)
    if request.path is None:
        return _whole(ws, graph, request.include_missing, request.offset, request.limit)
    rel, target = ws.guard.resolve(request.path, markdown=True)
    if rel not in graph.documents and rel not in graph.incoming:
        _why_not_indexed(rel, target)
        raise NotFound(
            f"{rel!r} is neither an indexed document nor the target of an indexed link. {LIST_DOCUMENTS}; "
            "one added since the last reindex is indexed by kb_reindex."
        )
    if request.direction not in ("outgoing", "incoming", "both"):  # pragma: no cover - the model refuses it
        raise InvalidArgument("direction must be outgoing, incoming or both.")
    # a page is a stretch of the walk's links (decision 773): the walk is deterministic for one
    # index snapshot, so it is run to the page's end and the stretch before `offset` dropped
    end = request.offset + request.limit
    walked, truncated = graph.walk(rel, request.direction, request.depth, end)
    on_disk = _OnDisk(ws)
    links = [(hop, on_disk(ln)) for hop, ln in walked[request.offset :]]
    links = [(hop, ln) for hop, ln in links if request.include_missing or ln.exists]
    return KbLinksResult(
        path=rel,
        links=[_link(ln, hop) for hop, ln in links],
        missing=[_missing(ln) for _, ln in links if not ln.exists] if request.include_missing else [],
        truncated=truncated,
        next_offset=end if truncated else None,
        ignored_links=graph.site_links(rel),
    )


def _whole(ws: Workspace, graph: Graph, include_missing: bool, offset: int, limit: int) -> KbLinksResult:
    # the disk is looked at only for the links the index calls missing, and only when they are asked for
    on_disk = _OnDisk(ws)
    unreached = (on_disk(ln) for ln in graph.document_links() if not ln.exists) if include_missing else ()
    broken = [ln for ln in unreached if not ln.exists]
    orphans = graph.orphans()
    # an embed of any file counts (Obsidian embeds PDFs, audio, video as it does images: decision
    # 484), and so does a plain [[report.pdf]] (508), an HTML <img> and a plain link to an attachment
    # (820, the graph keeps only those); a Markdown image only with an image's extension
    images = [ln for ln in graph.links if ln.is_image and (ln.kind != "image" or _is_image(ln.target))]
    unlisted: list[tuple[str, str]] | None = [] if _needs_names(images) else None
    by_name = _files_by_name(ws, unlisted) if unlisted is not None else {}
    missing_images = [ln for ln in images if not _image_exists(ws, ln, by_name)]
    # each list paged by the same offset (decision 773): one nextOffset reads on in all three
    end = offset + limit
    truncated = max(len(broken), len(orphans), len(missing_images)) > end
    return KbLinksResult(
        path=None,
        links=[_link(ln, 1) for ln in broken[offset:end]],
        missing=[_missing(ln) for ln in broken[offset:end]],
        truncated=truncated,
        next_offset=end if truncated else None,
        orphans=orphans[offset:end],
        missing_images=[
            MissingImage(source=ln.source, target=ln.target, pointer=ln.pointer, kind=_missing_kind(ln))
            for ln in missing_images[offset:end]
        ],
        # the lists are whole before they are paged, so their lengths cost nothing (decision 1038)
        counts=LinkCounts(links=len(broken), orphans=len(orphans), missing_images=len(missing_images)),
        ignored_links=graph.site_links(),
        skipped_folders=None if unlisted is None else len(unlisted),
        skipped=None
        if unlisted is None
        else [SkippedEntry(path=path, reason=reason) for path, reason in unlisted[:MAX_LISTED_SKIPPED]],
    )


class _OnDisk:
    """A document link the index cannot reach whose Markdown file is on disk all the same: a file
    the include/exclude globs keep out of the index (drafts, archives) is no broken link (decision
    904). Markdown links and wikilinks with a folder by their path; a bare ``[[name]]`` by the one
    ``name.md`` under the root Obsidian opens (the nearest of several, decision 914; the folders are
    listed once, and only for such a link). Through the path guard, so ``.git``, the index's files
    and symbolic links stay missing; the fragment of such a target is not checked
    (``fragmentFound`` null)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._names: dict[str, list[str]] | None = None

    def __call__(self, ln: ResolvedLink) -> ResolvedLink:
        if ln.exists or ln.candidates or ln.is_image or not ln.target.lower().endswith(".md"):
            return ln
        found = self._file(ln.target)
        if found is None and ln.kind in WIKI_KINDS and "/" not in ln.destination.split("#", 1)[0]:
            if self._names is None:
                self._names = _files_by_name(self.ws, [])
            named = [p for p in self._names.get(name_key(ln.target), []) if p.lower().endswith(".md")]
            # several of that name: the one Obsidian opens, as for indexed notes (decision 914)
            found = self._file(str(nearest(named, ln.source))) if named else None
        return ln if found is None else replace(ln, target=found, exists=True)

    def _file(self, target: str) -> str | None:
        try:
            rel, path = self.ws.guard.resolve(target, markdown=True)
        except KbError:  # a name the tools refuse (.git, the index, a symbolic link, ...)
            return None
        return rel if path.is_file() else None


def _missing_kind(ln: ResolvedLink) -> Literal["image", "embed", "wikilink", "link", "html", "href"]:
    if ln.kind in ("embed", "wikilink", "html", "href"):
        return ln.kind  # type: ignore[return-value]  # the literal itself
    return "image" if ln.kind == "image" else "link"


def _is_image(target: str) -> bool:
    return posixpath.splitext(target)[1].lower() in IMAGE_EXTENSIONS


def _needs_names(images: list[ResolvedLink]) -> bool:
    """The folders are walked only when an embed or a wikilink names a bare file."""
    return any(ln.kind in WIKI_KINDS and "/" not in ln.target for ln in images)


def _files_by_name(ws: Workspace, unlisted: list[tuple[str, str]]) -> dict[str, list[str]]:
    """File names under the root by ``name_key`` (case and Unicode normal form ignored, as wikilinks
    compare); folders that cannot be listed go to ``unlisted``."""
    names: dict[str, list[str]] = {}

    def refused(exc: OSError) -> None:
        if exc.filename is not None and not isinstance(exc, FileNotFoundError):
            rel = os.path.relpath(exc.filename, ws.root).replace(os.sep, "/")
            unlisted.append((rel, unlisted_folder(exc)))

    for dirpath, dirnames, filenames in os.walk(ws.root, onerror=refused):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = os.path.relpath(dirpath, ws.root).replace(os.sep, "/")
        for name in filenames:
            names.setdefault(name_key(name), []).append(name if rel_dir == "." else f"{rel_dir}/{name}")
    unlisted.sort(key=lambda item: (item[0].lower(), item[0]))
    return names


def _image_exists(ws: Workspace, link: ResolvedLink, by_name: dict[str, list[str]]) -> bool:
    """Whether a tool may open the file ``link`` names: through the path guard, so a picture reached
    through a symbolic link or kept in ``.git`` is missing, as kb_load_image and the PDF export refuse
    it (decision 1054), and a Mac's NFD file name linked as typed (NFC), or back, is found (505)."""
    path = _guarded(ws, link.target)
    if path is not None and path.is_file():
        return True
    if link.kind not in WIKI_KINDS and link.kind != "image" and path is not None and path.is_dir():
        return True  # a plain link or an <img> naming a folder is left alone, as a move leaves it (761)
    # an embed or wikilink resolves like a note: by path, else by a file name found anywhere (Obsidian)
    if link.kind not in WIKI_KINDS or "/" in link.target:
        return False
    named = by_name.get(name_key(link.target), ())
    return any((found := _guarded(ws, path)) is not None and found.is_file() for path in named)


def _guarded(ws: Workspace, target: str) -> Path | None:
    """``target`` on disk as the tools reach it; None for a name they refuse (``.git``, the index, a
    symbolic link on the way, two files it could mean)."""
    try:
        return ws.guard.resolve(target)[1]
    except KbError:
        return None


def _link(ln: ResolvedLink, hop: int) -> DocumentLink:
    return DocumentLink(
        kind=ln.kind,  # type: ignore[arg-type]  # the resolver yields only document-link kinds here
        source=ln.source,
        target=ln.target,
        fragment=ln.fragment,
        fragment_found=ln.fragment_found,
        candidates=list(ln.candidates) if ln.candidates else None,
        target_exists=ln.exists,
        pointer=ln.pointer,
        text=ln.text,
        depth=hop,
    )


def _missing(ln: ResolvedLink) -> MissingLink:
    return MissingLink(source=ln.source, target=ln.target, pointer=ln.pointer)
