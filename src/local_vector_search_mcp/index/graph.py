"""The link graph: stored links resolved against the indexed documents.

Links are stored as written (``port.StoredLink``) and resolved here, when the
graph is read, so a new or deleted document changes what every link reaches
without re-indexing its sources. Rules (spec/decisions.md 43 and 138-140):

* Markdown links (inline, reference, autolink) and images: a relative path,
  resolved against the source's folder, percent-decoded, ``?query`` dropped and
  ``#fragment`` kept apart. URLs with a scheme, ``//host``, root-absolute
  ``/...``, targets escaping the root and templates a site generator fills in
  (``{{site.url}}/images/a.png``, ``{% link a.md %}``) are not links. A link counts as a
  document link when its path ends in ``.md``; an image counts as an image, and so
  do, in the graph (``resolve(..., files=True)``), the ``src`` of an HTML ``<img>``
  (kind ``html``) and a plain link to an attachment (a picture, PDF, audio, video or
  office file: decision 820). The ``href`` of an HTML ``<a>`` (kind ``href``) is a plain
  link (decision 1032). A
  path that names no document as written reaches the one document whose path
  is the same after NFC normalisation, as the tools' paths do (decision 505).
* Wikilinks and embeds resolve like Obsidian: a name starting ``./`` or ``../``
  against the source's folder (decision 480); else the root-relative path (``.md``
  optional), else the documents whose path ends with ``/<name>.md``
  (case-insensitive, and blind to Unicode normalisation: NFC and NFD spell the same
  name), else the documents carrying the name as an alias. Of several by path or
  name, the one Obsidian opens (``nearest``: the source's folder, else fewest
  folders, then path order), all of them as candidates (decision 914); several by
  alias are *ambiguous*: reported with their candidates, never guessed. A name with
  another extension (``![[diagram.png]]``) is a file unless a note has that name
  (``[[Meeting.notes]]`` reaching ``Meeting.notes.md``).
"""

from __future__ import annotations

import functools
import posixpath
import re
import unicodedata
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from ..markdown.anchors import Slugger, own_id, slug
from ..markdown.html_references import ATTACHMENT_EXTENSIONS
from ..markdown.links import separators
from ..markdown.tables import cell_display_text
from .port import DocumentMeta, StoredLink

__all__ = [
    "ATTACHMENT_EXTENSIONS",
    "FragmentTargets",
    "Graph",
    "ResolvedLink",
    "Resolver",
    "has_template",
    "is_site_link",
    "may_answer",
    "name_key",
    "nearest",
    "nearest_tier",
    "own_fragment",
    "written_fragment",
]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# a site generator's template in a destination (Jekyll/Liquid `{{site.url}}/images/a.png`, `{% link a.md %}`,
# Hugo `{{< ref "a.md" >}}`): filled in when the site is built, so no path here (decision 1024)
_TEMPLATE = re.compile(r"\{\{|\{%")
WIKI_KINDS = frozenset({"wikilink", "embed"})
# ``ATTACHMENT_EXTENSIONS`` (kept with the HTML reader, whose `<iframe src>` needs them too): what a
# plain link reaches as a file the graph checks (decision 820)
# links written as a plain link reads: to a document, an attachment, or a fragment of their own
# document; an HTML ``<a href>`` is one (decision 1032), an ``<img src>`` is always a picture
_PLAIN_KINDS = frozenset({"inline", "reference", "href"})


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    source: str
    ordinal: int
    kind: str
    text: str | None
    pointer: str | None
    destination: str
    target: str  # root-relative path, or the wikilink name as written when ambiguous or unmatched
    fragment: str | None
    exists: bool
    is_image: bool
    candidates: tuple[str, ...] = ()
    fragment_found: bool | None = None


def heading_anchor_sets(titles: Sequence[str]) -> list[frozenset[str]]:
    """Each heading's anchors (decision 772), in order: GitHub's slug of the rendered text,
    numbered ``-1``, ``-2``... when repeated (github-slugger's rule), the slug of the text as
    written (what this check compared before), and an explicit ``{#id}``."""
    slugger = Slugger()
    out: list[frozenset[str]] = []
    for title in titles:
        anchors = {slugger.slug(cell_display_text(title)), slug(title)}  # parses only a title holding markup
        own = own_id(title)
        if own is not None:
            anchors.add(own)
        out.append(frozenset(anchors))
    return out


def heading_anchors(titles: Sequence[str]) -> frozenset[str]:
    """Every anchor a renderer gives the headings of one page (:func:`heading_anchor_sets`)."""
    return frozenset().union(*heading_anchor_sets(titles))


def _folded(title: str) -> str:
    return " ".join(title.split()).casefold()


class FragmentTargets:
    """What a link's ``#fragment`` can name in one document: a heading (a Markdown fragment by the
    anchors renderers make, decision 772; a wikilink's by heading text, or a chain of them, 139 and
    482) or a ``^id`` block marker. The anchors are made on the first heading fragment."""

    __slots__ = ("_known", "block_ids", "headings")

    def __init__(self, headings: Sequence[str], block_ids: Collection[str]) -> None:
        self.headings = headings
        self.block_ids = block_ids
        self._known: tuple[frozenset[str], frozenset[str]] | None = None

    def found(self, fragment: str, wiki: bool) -> bool:
        """Whether ``fragment``, as the link writes it (:func:`written_fragment`), names one."""
        if fragment.startswith("^"):
            return fragment[1:] in self.block_ids
        wanted = unquote(fragment)
        if self._known is None:
            self._known = (heading_anchors(self.headings), frozenset(_folded(h) for h in self.headings))
        slugs, folded_titles = self._known
        if wiki:  # a heading whose folded title or slug matches
            if _folded(wanted) in folded_titles or slug(wanted) in slugs:
                return True
            return "#" in wanted and _heading_chain(self.headings, wanted.split("#")) is not None
        return wanted.lower() in slugs or slug(wanted) in slugs

    def heading(self, fragment: str, wiki: bool) -> int | None:
        """The index of the heading ``fragment`` names (the first that :meth:`found` would find; a
        wikilink chain's last), None when it names none or is a ``^id``. One pass over the titles:
        it runs for a message (kb_read's hint), where :meth:`found` runs for every link."""
        if fragment.startswith("^"):
            return None
        wanted = unquote(fragment)
        slugged = slug(wanted)
        if wiki:
            folded = _folded(wanted)
            for i, (title, anchors) in enumerate(zip(self.headings, heading_anchor_sets(self.headings), strict=True)):
                if _folded(title) == folded or slugged in anchors:
                    return i
            return _heading_chain(self.headings, wanted.split("#")) if "#" in wanted else None
        lowered = wanted.lower()
        for i, anchors in enumerate(heading_anchor_sets(self.headings)):
            if lowered in anchors or slugged in anchors:
                return i
        return None


def has_template(destination: str) -> bool:
    """Whether a destination holds a site generator's template, which makes it no path (decision 1024)."""
    return _TEMPLATE.search(destination) is not None


def is_site_link(link: StoredLink) -> bool:
    """Whether a Markdown link, image or HTML reference is written as the site's own URL, which the
    graph does not follow: root-absolute (``/docs/install/``) or holding a template
    (``{{site.url}}/docs/install/``). The site generator resolves those when it builds, so they may
    reach documents here, and kb_links says how many it left out (decision 1038). A URL with a
    scheme or ``//host`` is another site's, and a wikilink's leading ``/`` is a root-relative name."""
    if link.kind in WIKI_KINDS:
        return False
    dest = link.destination.strip()
    if has_template(dest):
        return True
    path = separators(dest.partition("#")[0].partition("?")[0])
    return path.startswith("/") and not path.startswith("//")


def written_fragment(link: ResolvedLink | StoredLink) -> str:
    """``link``'s fragment as written, what :meth:`FragmentTargets.found` reads (``link.fragment``
    is a Markdown link's percent-decoded, decision 911)."""
    destination = link.destination if link.kind in WIKI_KINDS else link.destination.strip()
    return destination.partition("#")[2]


def own_fragment(link: StoredLink) -> str | None:
    """The fragment of a link within its own document (``[x](#setup)``, ``[[#Setup]]``), which is no
    document link and so not in the graph; None for any other link."""
    if link.kind in WIKI_KINDS:
        name, _, fragment = link.destination.partition("#")
        return fragment if fragment and not separators(name.strip()) else None
    destination = link.destination.strip()
    return destination[1:] if link.kind in _PLAIN_KINDS and destination.startswith("#") and destination[1:] else None


def name_key(name: str) -> str:
    """How wikilink names and aliases compare: case-insensitive and in one Unicode normal form, so
    a name typed NFC finds a file a Mac wrote NFD (they look the same to the author)."""
    return unicodedata.normalize("NFC", name).casefold()


class Resolver:
    """Resolves destinations against one snapshot of the indexed documents."""

    def __init__(self, documents: Iterable[str], meta: Mapping[str, DocumentMeta]) -> None:
        self.documents = set(documents)
        self.meta = meta
        self._by_lower: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        self._by_suffix: dict[str, list[str]] | None = None  # built on the first ``[[folder/name]]``
        self._by_nfc_paths: dict[str, list[str]] | None = None  # built on the first non-ASCII miss
        for path in self.documents:
            self._by_lower[name_key(path)].append(path)
            self._by_name[name_key(posixpath.basename(path)[:-3])].append(path)
        self._by_alias: dict[str, list[str]] = defaultdict(list)
        for path, m in meta.items():
            for alias in m.aliases:
                self._by_alias[name_key(alias)].append(path)
        # per target document, built on first use: what its fragments can name
        self._targets: dict[str, FragmentTargets] = {}

    def resolve(self, link: StoredLink, *, files: bool = False) -> ResolvedLink | None:
        """``None`` when the destination is not a link to a document or an image. ``files``: the
        graph's reading, where a plain link to an attachment and an HTML ``<img>`` reach a file
        too (``is_image``); a move plans those from disk itself (decision 761)."""
        if link.kind in WIKI_KINDS:
            return self._wiki(link)
        if link.kind == "html" and not files:
            return None
        return self._markdown(link, files)

    def _markdown(self, link: StoredLink, files: bool = False) -> ResolvedLink | None:
        dest = link.destination.strip()
        if not dest or dest.startswith("#") or _SCHEME.match(dest) or has_template(dest):
            return None
        path, _, fragment = dest.partition("#")
        # a backslash separates folders, as the path guard reads it and browsers read it in a URL:
        # `[a](sub\page.md)` written on Windows reaches `sub/page.md` (decision 910); `\x.md` and
        # `\\server\x.md` are then root-absolute or another host, no link
        path = separators(path.partition("?")[0])
        if not path or path.startswith("/"):
            return None
        path = unquote(path)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(link.source), path))
        if target == ".." or target.startswith("../") or target.startswith("/"):
            return None
        is_image = link.kind in ("image", "html")
        if not is_image and not target.lower().endswith(".md"):
            # a plain link to an attachment is a file reference, like an image's (decision 820)
            if not (
                files and link.kind in _PLAIN_KINDS and posixpath.splitext(target)[1].lower() in ATTACHMENT_EXTENSIONS
            ):
                return None
            is_image = True
        exists = target in self.documents
        if not exists and not target.isascii():  # a Mac's NFD name linked as typed (NFC), or back
            same = self._by_nfc().get(unicodedata.normalize("NFC", target), [])
            if len(same) == 1:
                target, exists = same[0], True
        found = self._fragment_found(target, fragment, wiki=False) if exists and fragment else None
        # the fragment as a reader's anchor: percent-decoded like the path (decision 911)
        return ResolvedLink(
            link.source, link.ordinal, link.kind, link.text, link.anchor, link.destination,
            target, unquote(fragment) or None, exists, is_image, (), found,
        )  # fmt: skip

    def _wiki(self, link: StoredLink) -> ResolvedLink | None:
        name, _, fragment = link.destination.partition("#")
        name = separators(name.strip())  # Obsidian names hold no backslash: a separator (decision 910)
        if not name:
            return None  # [[#Heading]]: a link inside the same note
        relative = _relative(name, link.source)
        if relative is not None and _leaves_root(relative):
            return None  # leaves the root: not a link, like a Markdown link that does (decision 43)
        ext = posixpath.splitext(name)[1].lower()
        if ext and ext != ".md" and not _looks_like_note(ext):
            # Obsidian tries the name as a file, then as a note: ``[[Meeting.notes]]`` is the note
            # ``Meeting.notes.md`` when there is one, ``![[pic.png]]`` an image (decision 481)
            matches, by_alias = self._match(name, link.source, aliases=False)
            if not matches:
                path = relative or posixpath.normpath(name.lstrip("/"))
                if _leaves_root(path):
                    return None  # ``![[a/../../x.png]]``: kb_links never looks outside the root
                return ResolvedLink(
                    link.source, link.ordinal, link.kind, link.text, link.anchor, link.destination,
                    path, fragment or None, False, True,
                )  # fmt: skip
        else:
            matches, by_alias = self._match(name, link.source)
        if len(matches) == 1 or (matches and not by_alias):
            # several notes by that path or name: the one Obsidian opens, all of them in
            # ``candidates`` so the choice is seen (decision 914)
            target = matches[0] if len(matches) == 1 else str(nearest(matches, link.source))
            found = self._fragment_found(target, fragment, wiki=True) if fragment else None
            return ResolvedLink(
                link.source, link.ordinal, link.kind, link.text, link.anchor, link.destination,
                target, fragment or None, True, False, tuple(matches) if len(matches) > 1 else (), found,
            )  # fmt: skip
        written = _relative(name, link.source) or name.lstrip("/")
        target = written if written.lower().endswith(".md") else f"{written}.md"
        return ResolvedLink(
            link.source, link.ordinal, link.kind, link.text, link.anchor, link.destination,
            target, fragment or None, False, False, tuple(sorted(matches)),
        )  # fmt: skip

    def match_note(self, name: str, source: str = "", *, aliases: bool = True) -> list[str]:
        """Every document a wikilink name written in ``source`` could mean, by the first rule that
        matches. A name starting ``./`` or ``../`` (Obsidian's "relative path" link format) means
        that path from the source's folder and nothing else (decision 480)."""
        return self._match(name, source, aliases)[0]

    def note_for(self, name: str, source: str = "", *, decisive: bool = False) -> str | None:
        """The document ``[[name]]`` written in ``source`` opens: the one match, or among several by
        path or file name the nearest (``nearest``, decision 914; with ``decisive``, None when only
        path order decides); None for none, or for an alias several documents carry (aliases are
        this project's reading, never guessed, 139)."""
        matches, by_alias = self._match(name, source)
        if len(matches) == 1:
            return matches[0]
        return nearest(matches, source, decisive=decisive) if matches and not by_alias else None

    def tier(self, name: str, source: str = "") -> frozenset[str]:
        """The notes ``[[name]]`` in ``source`` opens or ties with by nearness (``nearest_tier``)."""
        matches, by_alias = self._match(name, source)
        return frozenset() if by_alias else nearest_tier(matches, source)

    def _match(self, name: str, source: str, aliases: bool = True) -> tuple[list[str], bool]:
        """``match_note``'s matches, sorted, and whether they are the documents carrying the name
        as an alias (the last rule)."""
        name = separators(name)
        relative = _relative(name, source)
        if relative is not None:
            if _leaves_root(relative):
                return [], False  # outside the root
            with_ext = relative if relative.lower().endswith(".md") else f"{relative}.md"
            exact = self._by_lower.get(name_key(with_ext), [])
            return ([with_ext] if with_ext in exact else sorted(exact)), False
        written = name.strip().lstrip("/")
        with_ext = written if written.lower().endswith(".md") else f"{written}.md"
        exact = self._by_lower.get(name_key(with_ext), [])
        if exact:
            return ([with_ext] if with_ext in exact else sorted(exact)), False
        if "/" in written:
            found = list(self._suffixes().get(name_key(with_ext), []))
        else:
            found = list(self._by_name.get(name_key(with_ext[:-3]), []))
        if found or not aliases:
            return sorted(found), False
        return sorted(self._by_alias.get(name_key(written), [])), True

    def _by_nfc(self) -> dict[str, list[str]]:
        """The documents with a name outside ASCII under their NFC path (decision 505)."""
        if self._by_nfc_paths is None:
            self._by_nfc_paths = defaultdict(list)
            for path in self.documents:
                if not path.isascii():
                    self._by_nfc_paths[unicodedata.normalize("NFC", path)].append(path)
        return self._by_nfc_paths

    def _suffixes(self) -> dict[str, list[str]]:
        """Every document under each of its proper path suffixes (``b/c.md`` and ``c.md`` for
        ``a/b/c.md``, keyed by ``name_key``): scanning every path per ``[[b/c]]`` cost 2 ms a link on
        opensearch-docs as a vault (decision 484)."""
        if self._by_suffix is None:
            self._by_suffix = defaultdict(list)
            for key, paths in self._by_lower.items():
                at = key.find("/")
                while at >= 0:
                    self._by_suffix[key[at + 1 :]].extend(paths)
                    at = key.find("/", at + 1)
        return self._by_suffix

    def _fragment_found(self, target: str, fragment: str, wiki: bool) -> bool:
        targets = self._targets.get(target)
        if targets is None:
            meta = self.meta.get(target, DocumentMeta())
            targets = self._targets[target] = FragmentTargets(meta.headings, meta.block_ids)
        return targets.found(fragment, wiki)


def _heading_chain(headings: Sequence[str], parts: Sequence[str]) -> int | None:
    """Obsidian's ``[[Note#Chapter#Section]]``: each heading of the chain found after the one
    before it (decision 482), each by its folded text or its slug. The last one's index, or None."""
    at = -1
    for part in parts:
        folded, slugged = _folded(part), slug(part)
        at += 1
        while at < len(headings) and _folded(headings[at]) != folded and slug(headings[at]) != slugged:
            at += 1
        if at == len(headings):
            return None
    return at


def nearest(paths: Sequence[str], source: str, *, decisive: bool = False) -> str | None:
    """Which of several documents sharing a wikilink's name Obsidian opens (its "shortest path"
    reading, decision 914): one in the linking document's own folder, else the one nearest the
    root (fewest folders), then the first in path order. The PDF book finds a chapter by the same
    order (``ImageStore.find_note``, decision 762), so the two never disagree. ``decisive``: None
    when only path order tells it from another (how Obsidian breaks that tie is not documented; a
    move never writes a name that depends on it, decision 915)."""
    tier = nearest_tier(paths, source)
    if decisive and len(tier) > 1:
        return None
    return min(tier) if tier else None


def nearest_tier(paths: Collection[str], source: str) -> frozenset[str]:
    """The paths equally near ``source`` at the top of ``nearest``'s order (one unless a tie)."""
    folder = posixpath.dirname(source)

    def key(p: str) -> tuple[bool, int]:
        return posixpath.dirname(p) != folder, p.count("/")

    best = min((key(p) for p in paths), default=None)
    return frozenset(p for p in paths if key(p) == best)


def _leaves_root(path: str) -> bool:
    return path == ".." or path.startswith("../")


def _relative(name: str, source: str) -> str | None:
    """The root-relative path a wikilink name written ``./x`` or ``../x`` in ``source`` names (``..``
    first when it leaves the root); None for any other name."""
    written = name.strip()
    if not written.startswith(("./", "../")):
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(source), written))


def _answering(paths: Collection[str], metas: Iterable[Mapping[str, DocumentMeta]]) -> frozenset[str]:
    """The keys a wikilink's name is looked up by that the documents at ``paths`` answer, before or
    after a change: their file names (``name_key``, ``.md`` dropped) and their aliases."""
    keys = {name_key(posixpath.basename(path)[:-3]) for path in paths}
    for meta in metas:
        for path in paths:
            keys.update(name_key(alias) for alias in meta.get(path, DocumentMeta()).aliases)
    return frozenset(keys)


def may_answer(link: StoredLink | ResolvedLink, keys: frozenset[str]) -> bool:
    """Whether a document answering ``keys`` can change what wikilink ``link`` reaches. Every rule of
    ``Resolver._match`` compares the name's last segment with a file name (by path, path suffix or
    name), or the whole name with an alias; a name with ``.`` or ``..`` segments or ending in ``/``
    is resolved again whatever it says."""
    looked_up = _lookup_keys(link.destination)
    return looked_up is None or not keys.isdisjoint(looked_up)


@functools.lru_cache(maxsize=1 << 16)
def _lookup_keys(destination: str) -> tuple[str, str] | None:
    """A wikilink's file-name key and alias key; None for a name resolved again whatever changes.
    Kept per destination: a graph update asks for every wikilink's."""
    written = separators(destination.partition("#")[0]).strip().lstrip("/")
    segments = written.split("/")
    last = segments[-1]
    if not last or any(part in (".", "..") for part in segments):
        return None
    stem = last[:-3] if last.lower().endswith(".md") else last
    return name_key(stem), name_key(written)


def _nfc_in(path: str, keys: set[str]) -> bool:
    return bool(keys) and not path.isascii() and unicodedata.normalize("NFC", path) in keys


def _looks_like_note(ext: str) -> bool:
    """``[[v1.2 notes]]`` has a dot but is a note name: only short alphanumeric
    extensions are file types."""
    return not (1 < len(ext) <= 6 and ext[1:].isalnum() and not ext[1:].isdigit())


def _site_link_count(stored: Sequence[StoredLink], resolved: Sequence[ResolvedLink | None]) -> int:
    return sum(1 for ln, got in zip(stored, resolved, strict=True) if got is None and is_site_link(ln))


class Graph:
    """Every resolved link of the index, with incoming and outgoing adjacency. Read-only once
    built (kb_links keeps one across calls); :meth:`updated` derives the next one."""

    def __init__(self, links: Sequence[StoredLink], documents: Iterable[str], meta: Mapping[str, DocumentMeta]) -> None:
        resolver = Resolver(documents, meta)
        stored: dict[str, list[StoredLink]] = {}
        for link in links:  # the store's order: by source, then ordinal
            stored.setdefault(link.source, []).append(link)
        self._assemble(
            resolver, stored, {src: [resolver.resolve(ln, files=True) for ln in lst] for src, lst in stored.items()}
        )

    def _assemble(
        self,
        resolver: Resolver,
        stored: dict[str, list[StoredLink]],
        resolved: dict[str, list[ResolvedLink | None]],
    ) -> None:
        self.resolver = resolver
        self.documents = resolver.documents
        self._stored = stored
        self._resolved = resolved  # parallel to ``_stored``: None where a link is no document or image link
        self.links: list[ResolvedLink] = []
        outgoing: dict[str, list[ResolvedLink]] = defaultdict(list)
        incoming: dict[str, list[ResolvedLink]] = defaultdict(list)
        for results in resolved.values():
            for link in results:
                if link is None:
                    continue
                self.links.append(link)
                if not link.is_image:
                    outgoing[link.source].append(link)
                    incoming[link.target].append(link)
        self.outgoing: dict[str, list[ResolvedLink]] = dict(outgoing)  # plain dicts: no default entries
        self.incoming: dict[str, list[ResolvedLink]] = dict(incoming)
        # counted on first use, then kept with the graph (kb_links keeps one across calls)
        self._site_links: dict[str, int] | None = None

    def site_links(self, source: str | None = None) -> int:
        """How many links written in ``source`` (None: in every document) are site URLs the graph
        left out (:func:`is_site_link`)."""
        if self._site_links is None:
            self._site_links = {src: _site_link_count(lst, self._resolved[src]) for src, lst in self._stored.items()}
        return sum(self._site_links.values()) if source is None else self._site_links.get(source, 0)

    def updated(
        self,
        changed: Collection[str],
        documents: Iterable[str],
        links: Sequence[StoredLink],
        meta: Mapping[str, DocumentMeta],
    ) -> Graph:
        """The graph after the documents at ``changed`` were added, removed or rewritten, equal to
        one built from every link (decision 302). ``documents`` are all documents now; ``links``
        and ``meta`` those of ``changed`` only, read now; every other document's stored links and
        meta are the ones this graph holds. Only what can differ is resolved again: the links of
        changed documents, every wikilink and embed (they resolve by names and aliases anywhere),
        and the Markdown links that reached a changed document (its existence and headings).
        A Markdown link that was no document or image link stays one (that depends on its text
        and source path only)."""
        gone = set(changed)
        kept_meta = {path: m for path, m in self.resolver.meta.items() if path not in gone}
        kept_meta.update(meta)
        resolver = Resolver(documents, kept_meta)
        # A wikilink resolves by the documents' names and aliases: while no document came or went
        # and no changed one changed its aliases (an edit), each keeps its target and only those
        # reaching a changed document are resolved again, for their fragments (decision 484).
        names_kept = resolver.documents == self.documents and all(
            self.resolver.meta.get(path, DocumentMeta()).aliases == kept_meta.get(path, DocumentMeta()).aliases
            for path in gone
        )
        # Otherwise only a wikilink whose name a changed document answers can change (decision 1023):
        # re-resolving every one cost 50 ms a delete on 2,000 notes with 3,000 wikilinks.
        answering = frozenset() if names_kept else _answering(gone, (self.resolver.meta, kept_meta))
        # a Markdown link reaches a document also by its NFC path (505): one written in either form
        # is resolved again when a document of that NFC path comes or goes
        gone_nfc = {unicodedata.normalize("NFC", path) for path in gone if not path.isascii()}
        fresh: dict[str, list[StoredLink]] = {}
        for link in links:
            fresh.setdefault(link.source, []).append(link)
        stored = {src: lst for src, lst in self._stored.items() if src not in gone}
        stored.update(fresh)
        resolved: dict[str, list[ResolvedLink | None]] = {}
        for src in sorted(stored):
            if src in fresh:
                resolved[src] = [resolver.resolve(ln, files=True) for ln in stored[src]]
                continue
            resolved[src] = [
                resolver.resolve(ln, files=True)
                if (ln.kind in WIKI_KINDS and not names_kept and may_answer(ln, answering))
                or (old is not None and (old.target in gone or _nfc_in(old.target, gone_nfc)))
                else old
                for ln, old in zip(stored[src], self._resolved[src], strict=True)
            ]
        graph = Graph.__new__(Graph)
        graph._assemble(resolver, {src: stored[src] for src in resolved}, resolved)
        return graph

    def document_links(self) -> list[ResolvedLink]:
        return [ln for ln in self.links if not ln.is_image]

    def walk(self, start: str, direction: str, depth: int, limit: int) -> tuple[list[tuple[int, ResolvedLink]], bool]:
        """Breadth-first from ``start``: each link once, with the hop that reached it."""
        seen_links: set[tuple[str, int]] = set()
        seen_docs = {start}
        frontier = [start]
        found: list[tuple[int, ResolvedLink]] = []
        for hop in range(1, depth + 1):
            layer: list[ResolvedLink] = []
            nxt: list[str] = []
            for doc in frontier:
                edges: list[tuple[ResolvedLink, str]] = []
                if direction in ("outgoing", "both"):
                    edges.extend((ln, ln.target) for ln in self.outgoing.get(doc, ()))
                if direction in ("incoming", "both"):
                    edges.extend((ln, ln.source) for ln in self.incoming.get(doc, ()))
                for link, other in edges:
                    key = (link.source, link.ordinal)
                    if key in seen_links:
                        continue
                    seen_links.add(key)
                    layer.append(link)
                    if other not in seen_docs and (link.exists or other == link.source):
                        seen_docs.add(other)
                        nxt.append(other)
            layer.sort(key=lambda ln: (ln.source, ln.ordinal))
            for link in layer:
                if len(found) >= limit:
                    return found, True
                found.append((hop, link))
            frontier = nxt
            if not frontier:
                break
        return found, False

    def orphans(self) -> list[str]:
        """Documents that no other document links to."""
        linked = {ln.target for ln in self.links if ln.exists and ln.source != ln.target}
        return sorted(self.documents - linked)
