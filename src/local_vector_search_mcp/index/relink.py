"""Planning a link-preserving move (``kb_move`` / ``kb_move_image`` with ``updateLinks``).

Pure planning over the files as they are on disk now (the index may lag): which
documents hold a link that the move would break, and their new bytes. Only the
destination span of each such link changes (``markdown/links.py`` located it),
so link text, aliases, fragments, BOM, line endings and every other byte stay.
Writing the plan, all or nothing, is the writer's job (``writer.commit_many``).

* Markdown links and images that reach the moved file get the new path relative
  to their source's folder (percent-encoded only when the old destination was, or
  the new path needs it); reference definitions are rewritten once.
* Wikilinks and embeds are rewritten only when they would no longer open the
  same file after the move (a bare name shared by several opens the nearest,
  decisions 914 and 915): the new name is the file name when that opens it,
  else the root-relative path, with ``.md`` kept if the author wrote it; one written ``./`` or
  ``../`` (Obsidian's "relative path" format) stays relative to its document (decision 1052).
* The moved document's own relative Markdown links are rewritten against its
  new folder so they still reach their targets.
* Plain links to files that are no documents (``[full size](pic.png)``, ``[spec](a.pdf)``) and
  the ``src`` of HTML ``<img>`` tags are followed the same way (decision 761), and the ``href``
  of HTML ``<a>`` tags as plain links are (decision 1032).
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import AnyStr
from urllib.parse import quote, unquote, unquote_to_bytes

from markdown_it.common.utils import unescapeAll

from ..errors import InvalidArgument, KbError, NotFound
from ..markdown import parse_document
from ..markdown.html_references import HtmlReference, html_references
from ..markdown.links import Link, extract_links, rewrite, separators
from ..markdown.source import BOM
from ..paths import spelled_on_disk
from ..sourcefile import read_source, unlisted_folder
from .graph import WIKI_KINDS, Resolver, has_template, name_key, nearest, nearest_tier
from .port import DocumentMeta, StoredLink

__all__ = ["Files", "RelinkPlan", "markdown_files", "plan_move"]

# what a plain destination cannot hold as written; in ``<...>`` only what would change its meaning
_NEEDS_ENCODING = frozenset(" ()<>%#?")
_NEEDS_ENCODING_ANGLED = frozenset("<>%#?")
_SAFE = frozenset("/!$&'*+,;=:@-._~ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
# a wikilink or embed cannot name a file holding these: Obsidian reads them as syntax
_WIKI_SYNTAX = frozenset("#|^[]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # a URL (https:, data:, mailto:), never a file here


@dataclass(frozen=True, slots=True)
class RelinkPlan:
    """New bytes per root-relative path (old bytes kept for the compare-and-swap);
    ``moved`` is the moved document's new bytes when its own links changed; ``unchecked`` the
    documents whose links could not be looked at, ``(path, reason)`` (decision 701)."""

    edits: dict[str, tuple[bytes, bytes]]
    moved: bytes | None
    unchecked: list[tuple[str, str]]


class _NotText(Exception):
    """The file's bytes are not UTF-8 Markdown: no link in it can be rewritten."""


def markdown_files(root: Path, skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """Every ``.md`` file under ``root`` (dot folders skipped): links may live outside the indexed set.

    A folder the operating system refuses to list is appended to ``skipped`` as
    ``(root-relative folder, reason)`` (decision 245): its links cannot be seen, so the
    caller must say so rather than report a complete rewrite.
    """
    found = []

    def refused(exc: OSError) -> None:
        if skipped is not None and exc.filename is not None and not isinstance(exc, FileNotFoundError):
            rel = os.path.relpath(exc.filename, root).replace(os.sep, "/")
            skipped.append((rel, unlisted_folder(exc)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=refused):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in filenames:
            if name.lower().endswith(".md"):
                found.append(name if rel_dir == "." else f"{rel_dir}/{name}")
    if skipped is not None:
        skipped.sort(key=lambda item: (item[0].lower(), item[0]))
    return sorted(found)


def plan_move(
    root: Path,
    documents: list[str],
    meta: Mapping[str, DocumentMeta],
    src: str,
    dst: str,
    *,
    is_document: bool = True,
) -> RelinkPlan:
    """The rewrites that keep every link to ``src`` (and, for a document, from it) working."""
    after_docs = [dst if d == src else d for d in documents] if is_document else documents
    after_meta = {dst if k == src else k: v for k, v in meta.items()} if is_document else meta
    before = Resolver(documents, meta)
    after = Resolver(after_docs, after_meta)
    names = _needles(src, dst)
    files = Files(root)
    edits: dict[str, tuple[bytes, bytes]] = {}
    moved: bytes | None = None
    unchecked: list[tuple[str, str]] = []
    for rel in documents:
        try:
            raw = read_source(root / rel, rel)
        except NotFound:  # gone since the walk: it holds no link any more
            continue
        except KbError as refused:  # a FIFO, an unreadable or oversized file: it may link, unseen
            unchecked.append((rel, f"{refused.message} Its links were not checked."))
            continue
        own = is_document and rel == src
        if not own and not _may_link(raw, rel, src, names):
            continue
        try:
            new = _relink_file(raw, rel, src, dst, before, after, own, files)
        except _NotText:  # a Latin-1 note that names the moved file: its bytes are not ours to decode
            unchecked.append(
                (rel, "It is not valid UTF-8 text; a link in it may reach the moved file and was not rewritten.")
            )
            continue
        if new is None:
            continue
        if own:
            moved = new
        else:
            edits[rel] = (raw, new)
    return RelinkPlan(edits, moved, unchecked)


def _needles(src: str, dst: str) -> list[str]:
    """The stems of ``src`` and ``dst``, case-folded: what a wikilink or embed the move may
    rewrite (or make ambiguous) holds, since those match names case-insensitively."""
    return sorted({name_key(posixpath.splitext(posixpath.basename(path))[0]) for path in (src, dst)})


# the inside of a wikilink or embed as markdown.links' rule reads it: no bracket, no line break
_WIKI_INNER = re.compile(r"\[\[([^\[\]\n]*)\]\]")
# what may stand right before a written destination: `](`, `](<`, `]: `, `]:`, `src="`, `href='`, `src=`
# (an unquoted `<img>` or `<a>` value, decision 717), `, ` or `,` before a `srcset` candidate (1156),
# or a line start
_DESTINATION_START = re.compile(r"[ \t(<>\[\]:'\"=,]")


def _may_link(raw: bytes, rel: str, src: str, names: list[str]) -> bool:
    """False only when ``raw`` holds no link the move could rewrite, so it need not be parsed
    (decision 301): a full parse of every file that merely mentions the moved file's name took
    seconds for a common name such as ``index.md``.

    A Markdown link or image is rewritten only when its destination resolves to ``src`` exactly,
    so its (percent-decoded) path ends with ``src``'s file name; each place the name occurs is
    resolved from every position a destination can start at, as ``Resolver`` would. A wikilink
    or embed needs ``[[`` and a stem, case-folded as Obsidian's matching is.
    """
    # a link typed in another Unicode normal form reaches the file as well (decision 505): a path
    # that is not ASCII is looked for, and compared, in NFC (decision 943)
    wide = not src.isascii()
    if wide:
        src, rel = _nfc(src), _nfc(rel)
        raw = _nfc(raw.decode("utf-8", "replace")).encode("utf-8")
    name = posixpath.basename(src)
    probes = {name.encode("utf-8").lower(), quote(name).encode("utf-8").lower()}
    folded = raw.lower()  # ASCII only, on both sides alike
    named = any(p in folded for p in probes)
    if not named and b"%" in raw:  # a name percent-encoded some other way, on a line holding a `%`
        named = _encoded_on_a_line(raw, name, wide)
    text = raw.decode("utf-8", "replace")
    needles = (name, "%") if named else ()
    if (b"\\" in raw or b"&" in raw) and _escaped_on_a_line(text, name, wide):
        # the name may be written with escapes or entities (decision 451): the lines holding them
        # are read unescaped, as the parser reads a destination, and resolved like the others (a
        # file holding `&` anywhere and naming some other `index.md` was parsed: decision 940)
        needles = (*needles, "\\", "&")
    if needles and _reaches(text, posixpath.dirname(rel), src, name, needles, wide):
        return True
    if b"[[" in raw:
        # only the inside of a `[[...]]` on one line can name a note (markdown.links' wikilink rule);
        # `[[1, 2], [3, 4]]` in a JSON sample and the word "index" in prose made every such file a
        # candidate on a move of an `index.md` (decision 941); NFC and NFD spell one name (480)
        inners = _WIKI_INNER.findall(text)
        return any(n in name_key(inner) for inner in inners for n in names)
    return False


def _encoded_on_a_line(raw: bytes, name: str, wide: bool) -> bool:
    """Whether a line holding a ``%`` names ``name`` once percent-decoded (ASCII case folded; in
    NFC when ``wide``). A destination never spans lines, so only those lines are decoded, not the
    whole file (decision 645)."""
    folded = name.encode("utf-8").lower()
    for a, b in _lines_with(raw, (b"%",)):
        decoded = unquote_to_bytes(raw[a:b])
        if wide:
            decoded = _nfc(decoded.decode("utf-8", "replace")).encode("utf-8")
        if folded in decoded.lower():
            return True
    return False


def _escaped_on_a_line(text: str, name: str, wide: bool) -> bool:
    """Whether a line holding a backslash or an ``&`` names ``name`` once read unescaped (decision
    451): a destination never spans lines, and a file of escapes everywhere was unescaped whole
    to look for one name (decision 645)."""
    folded = name.lower()
    return any(folded in _decoded(text[a:b], wide).lower() for a, b in _lines_with(text, ("\\", "&")))


def _reaches(text: str, folder: str, src: str, name: str, needles: tuple[str, ...], wide: bool = False) -> bool:
    """Whether a line holding one of ``needles`` (``name``, or a ``%``, ``\\`` or ``&``, which may
    encode it) has a place where a destination starting at a possible start and ending with
    ``name`` (once decoded) resolves to ``src``; ``wide``: all of them in NFC."""
    for start, end in _lines_with(text, needles):
        line = text[start:end]
        if "%" in line or "\\" in line or "&" in line:  # encoded, escaped or entities (decision 451)
            line = separators(_decoded(line, wide))  # `sub\page.md` (decision 910)
        at = line.find(name)
        while at >= 0:
            stop = at + len(name)
            starts = [0, *(m.end() for m in _DESTINATION_START.finditer(line, 0, at))]
            if any(posixpath.normpath(posixpath.join(folder, line[b:stop])) == src for b in starts):
                return True
            at = line.find(name, at + 1)
    return False


def _decoded(text: str, wide: bool) -> str:
    """``text`` as the parser and the resolver read a destination in it: escapes and entities
    resolved, then percent-decoded (in NFC when ``wide``)."""
    out = unquote(unescapeAll(text))
    return _nfc(out) if wide else out


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _lines_with(text: AnyStr, needles: tuple[AnyStr, ...]) -> list[tuple[int, int]]:
    """(start, end) of each line (ended by CR, LF or CRLF) of ``text`` (str or bytes) holding one
    of ``needles``, in order."""
    lf, cr = ("\n", "\r") if isinstance(text, str) else (b"\n", b"\r")
    spans: set[tuple[int, int]] = set()
    for needle in needles:
        at = text.find(needle)
        while at >= 0:
            start = max(text.rfind(lf, 0, at), text.rfind(cr, 0, at)) + 1
            ends = [e for e in (text.find(lf, at), text.find(cr, at)) if e >= 0]
            end = min(ends) if ends else len(text)
            spans.add((start, end))
            at = text.find(needle, end)
    return sorted(spans)


def _relink_file(
    raw: bytes, rel: str, src: str, dst: str, before: Resolver, after: Resolver, own: bool, files: Files
) -> bytes | None:
    try:
        doc = parse_document(raw, keep=False)  # a move sweeps many files: keep the agent's (decision 639)
    except KbError:  # not UTF-8: not a document we can edit
        raise _NotText from None
    if (BOM if doc.bom else b"") + doc.text.encode("utf-8") != raw:
        raise _NotText  # bytes the decoder would not give back: never risk them
    source_before, source_after = rel, (dst if own else rel)
    changes: set[tuple[int, int, str]] = set()
    properties: list[str] = []  # what each property link should read after the rewrite
    for link in extract_links(doc).links:
        change = None
        if link.start >= 0:
            try:
                change = _new_destination(link, source_before, source_after, src, dst, before, after, files, doc.text)
            except InvalidArgument as refused:
                raise InvalidArgument(f"In {rel!r}: {refused.message}") from None
        if change is not None:
            changes.add(change)
        if link.in_properties:
            properties.append(link.destination if change is None else _replaced(link, change))
    for tag in html_references(doc):
        written = doc.text[tag.start : tag.end]
        change = _new_html_value(tag, written, (source_before, source_after), (src, dst), files)
        if change is not None:
            changes.add(change)
    if not changes:
        return None
    new_text = rewrite(doc.text, changes)
    if properties:
        _check_properties(rel, new_text, properties)
    return (BOM if doc.bom else b"") + new_text.encode("utf-8")


def _replaced(link: Link, change: tuple[int, int, str]) -> str:
    """``link``'s destination with ``change`` (a span inside it) applied."""
    start, end, value = change
    return link.destination[: start - link.start] + value + link.destination[end - link.start :]


def _check_properties(rel: str, new_text: str, wanted: list[str]) -> None:
    """A link rewritten inside a front-matter value must leave the YAML reading as intended: a new
    name with a quote or backslash can end or escape the quoted value around it (decision 483).
    The rewritten front matter is read again; any difference refuses the move before anything is
    written."""
    got = [
        ln.destination
        for ln in extract_links(parse_document(new_text.encode("utf-8"), keep=False)).links
        if ln.in_properties
    ]
    if got != wanted:
        raise InvalidArgument(
            f"In {rel!r}: updateLinks cannot keep the front-matter property links working: the new name would "
            "change the YAML value around them (a quote or backslash). Choose another name, or move without "
            "updateLinks."
        )


def _stored(link: Link, source: str) -> StoredLink:
    return StoredLink(source, 0, link.kind, link.destination, link.text, link.pointer)


def _new_destination(
    link: Link,
    source_before: str,
    source_after: str,
    src: str,
    dst: str,
    before: Resolver,
    after: Resolver,
    files: Files,
    text: str,
) -> tuple[int, int, str] | None:
    resolved = before.resolve(_stored(link, source_before))
    if resolved is None and link.kind in ("inline", "reference"):
        # a plain link to a file that is no document (an image, a PDF) is not a graph edge, but a
        # move breaks it all the same: resolved as an image's destination is (decision 761); a link
        # to a folder or to nothing on disk is left as written
        resolved = before.resolve(StoredLink(source_before, 0, "image", link.destination, link.text, link.pointer))
        if resolved is not None and resolved.target != src and files.reached(resolved.target) is None:
            return None
    if resolved is None or (resolved.candidates and not resolved.exists):
        return None  # an alias several documents carry reaches none of them: nothing to keep
    if link.kind in WIKI_KINDS:
        if not resolved.target.lower().endswith(".md"):
            return _file_embed_change(link, resolved.target, src, dst, files, source_before, source_after)
        return _wiki_change(
            link, resolved.target, resolved.exists, src, dst, (before, after), source_before, source_after
        )
    target = resolved.target
    if not resolved.exists and target != src:
        # a file that is no document, maybe named in another Unicode normal form than on disk (a
        # Mac's `café.png` typed NFD): the file it reaches, spelled as there (decision 505)
        target = files.reached(target) or target
    if target == src:
        target = dst
    elif source_before == source_after:
        return None  # neither end moved
    path_part = link.destination.split("#", 1)[0].split("?", 1)[0]
    folder_after = posixpath.dirname(source_after)
    reads = unquote(separators(path_part))
    if not reads.startswith("/") and _still_reaches(
        posixpath.normpath(posixpath.join(folder_after, reads)), target, (src, dst), files
    ):
        return None  # it still reaches its target as written (`./page.md` after a rename): left alone (decision 705)
    written = _written_path(text[link.start : link.end], link.destination, path_part)
    if written is None:
        return None
    # a destination in <...> may hold spaces; an autolink (<page.md>) ends at one (decision 901)
    angled = link.kind != "autolink" and link.start > 0 and text[link.start - 1] == "<"
    relative = posixpath.relpath(target, folder_after or ".")
    if separators(written).startswith("./") and not relative.startswith("../"):
        relative = f"./{relative}"  # the author's `./` stays (decision 705); `/` after it (910)
    new_path = _written(relative, written, angled)
    if unquote(path_part) == unquote(new_path):
        return None
    return link.start, link.start + len(written), new_path


def _new_html_value(
    tag: HtmlReference, written: str, sources: tuple[str, str], moved: tuple[str, str], files: Files
) -> tuple[int, int, str] | None:
    """The new ``src`` of an ``<img>`` tag, ``href`` of an ``<a>`` tag, URL of a ``srcset``
    candidate or file an audio or video tag names (1186) that the move would break, as a browser
    reads it: percent-decoded, relative to the document's folder (``sources``: its path before and
    after the move of ``moved``); None when it still reaches its file."""
    source_before, source_after = sources
    src, dst = moved
    value = tag.value.strip()
    # a template the site fills in is no path: left as written, as a Markdown link's (1024)
    if not value or value.startswith(("#", "/", "\\")) or _SCHEME.match(value) or has_template(value):
        return None
    path_part = re.split(r"[?#]", value, maxsplit=1)[0]
    if not path_part:
        return None
    reads = unquote(separators(path_part))  # a browser reads `\` as `/` (decision 910)
    target = posixpath.normpath(posixpath.join(posixpath.dirname(source_before), reads))
    if target == ".." or target.startswith(("../", "/")):
        return None
    if target != src:
        on_disk = files.reached(target)  # typed in another normal form than on disk (505)
        if on_disk is None and tag.tag == "a" and not target.lower().endswith(".md"):
            # as a plain link's: a folder, a page the site generator makes, nothing (761)
            return None
        target = on_disk or target
    if target == src:
        target = dst
    elif source_before == source_after:
        return None  # neither end moved
    folder_after = posixpath.dirname(source_after)
    if _still_reaches(posixpath.normpath(posixpath.join(folder_after, reads)), target, moved, files):
        return None
    if written != value:
        return None  # written with character references or padded: left as written, never guessed
    relative = posixpath.relpath(target, folder_after or ".")
    if path_part.startswith("./") and not relative.startswith("../"):
        relative = f"./{relative}"
    # a quoted value holds spaces; an unquoted one ends at one; the quote itself and "&" are encoded
    new_path = _written(relative, path_part, angled=bool(tag.quote))
    for char in f"&{tag.quote}":
        new_path = new_path.replace(char, quote(char, safe=""))
    if tag.attribute == "srcset":
        new_path = _candidate_url(new_path)
    return tag.start, tag.start + len(path_part), new_path


def _candidate_url(path: str) -> str:
    """``path`` as the URL of a ``srcset`` candidate (decision 1156): whitespace would end it and a
    comma at either end would be read as a separator, so those are encoded; the rest is as written."""
    path = "".join(quote(char, safe="") if char.isspace() else char for char in path)
    if path.startswith(","):
        path = "%2C" + path[1:]
    if path.endswith(","):
        path = path[:-1] + "%2C"
    return path


def _still_reaches(path: str, target: str, moved: tuple[str, str], files: Files) -> bool:
    """Whether a destination that reads as ``path`` after the move of ``moved`` = (src, dst) still
    reaches ``target``: spelled so, or a file that stays, spelled in another normal form (decision
    505), so a moved note's link typed NFD to ``café.pdf`` is not respelled when it need not change."""
    if path == target:
        return True
    if path.isascii() or target in moved or path in moved:
        return False  # the moved file is not on disk where it will be: only its own spelling is sure
    return files.reached(path) == target


def _written_path(written: str, destination: str, path_part: str) -> str | None:
    """The path part of a destination as written: ``path_part`` itself, or when the author wrote
    backslash escapes or entities (``my\\_note.md``), the shortest prefix that reads as it and
    is followed by the fragment or query (decision 451)."""
    if written == destination:
        return path_part
    for end in range(len(path_part), len(written) + 1):
        if (end == len(written) or written[end] in "#?") and unescapeAll(written[:end]) == path_part:
            return written[:end]
    return None


def _written(path: str, old: str, angled: bool) -> str:
    """``path`` as a destination in the style of ``old`` (decision 452). When ``old`` was
    percent-encoded, everything outside the URL-safe set is encoded (letters outside ASCII stay
    as they are if ``old`` wrote such letters unencoded). Otherwise only what would change the
    meaning is: a space or parenthesis outside ``<...>``, and always ``%``, ``#`` and ``?`` (read as
    an escape, a fragment or a query)."""
    needs = _NEEDS_ENCODING_ANGLED if angled else _NEEDS_ENCODING
    encoded = "%" in old
    if not encoded and not needs & set(path):
        return path
    keep_letters = any(ord(c) > 127 for c in old)
    out = []
    for char in path:
        if char in _SAFE or (keep_letters and ord(char) > 127 and char.isprintable()):
            out.append(char)
        elif encoded or char in needs or not char.isprintable():
            out.append(quote(char, safe=""))
        else:  # inside <...>, written as the author would: only what changes the meaning is encoded
            out.append(char)
    return "".join(out)


class Files:
    """Which files exist, for links to files that are no documents: by root-relative path (as
    written, or in another Unicode normal form), and (built on first use) by file name anywhere,
    case-insensitive and in one normal form, as a bare ``![[name]]`` finds them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_name: dict[str, list[str]] | None = None
        self._reached: dict[str, str | None] = {}

    def exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def reached(self, rel: str) -> str | None:
        """The file a link's path ``rel`` reaches, spelled as on disk: ``rel`` itself when it is a
        file, else (a path outside ASCII) the one file equal to it after NFC, component by
        component, as the path guard and kb_links read it (decision 505): a file spelled exactly
        wins, two equivalent ones without it are none. None for a folder or nothing."""
        if self.exists(rel):
            return rel
        if rel.isascii():
            return None
        if rel not in self._reached:
            found = spelled_on_disk(self.root, rel)
            self._reached[rel] = found if found is not None and self.exists(found) else None
        return self._reached[rel]

    def named(self, name: str) -> list[str]:
        """Every file of that name (dot folders skipped), root-relative."""
        if self._by_name is None:
            self._by_name = {}
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                folder = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                for file in filenames:
                    self._by_name.setdefault(name_key(file), []).append(file if folder == "." else f"{folder}/{file}")
        return self._by_name.get(name_key(name), [])

    def opened(
        self, name: str, source: str, moved: tuple[str, str] | None = None, *, decisive: bool = False
    ) -> str | None:
        """The file a bare ``![[name]]`` in ``source`` opens: the one at that root path, else the
        nearest of that name (``graph.nearest``, decision 915; ``decisive``: not by path order
        alone); ``moved`` = (src, dst) reads the tree as it will be after that move."""
        src, dst = moved or ("", "")
        at_root = name == dst or (name != src and self.exists(name))
        if at_root:
            return name
        paths = [p for p in self.named(name) if p != src]
        if dst and name_key(posixpath.basename(dst)) == name_key(name):
            paths.append(dst)
        return nearest(paths, source, decisive=decisive) if paths else None

    def tier(self, name: str, source: str, moved: tuple[str, str] | None = None) -> frozenset[str]:
        """The files a bare ``![[name]]`` opens or ties with by nearness (``graph.nearest_tier``)."""
        src, dst = moved or ("", "")
        if name == dst or (name != src and self.exists(name)):
            return frozenset({name})
        paths = [p for p in self.named(name) if p != src]
        if dst and name_key(posixpath.basename(dst)) == name_key(name):
            paths.append(dst)
        return nearest_tier(paths, source)


def _file_embed_change(
    link: Link, target: str, src: str, dst: str, files: Files, source_before: str, source_after: str
) -> tuple[int, int, str] | None:
    """An embed or wikilink of a file that is no note: by its path, else (a bare name) the file
    Obsidian opens, which a move can change (decision 915): it keeps opening the same file, by its
    name when that name opens it after the move, else by its root-relative path."""
    name = link.destination.split("#", 1)[0].rstrip()
    if "/" in separators(name):  # a path (``target``, resolved as written)
        return _file_path_change(link, name, target, (src, dst), files, (source_before, source_after))
    wanted = files.opened(name, source_before)
    if wanted is None:
        return None  # missing before: nothing to keep
    if wanted == src:
        wanted = dst
    elif source_before == source_after and name_key(name) not in {
        name_key(posixpath.basename(src)),
        name_key(posixpath.basename(dst)),
    }:
        return None  # the move neither takes nor gives this name
    # the name stays, or is written, only where it opens the file by more than path order, or
    # already did so by path order among the same files (a moved note's own embed)
    moved = (src, dst)
    if files.opened(name, source_after, moved) == wanted and (
        files.opened(name, source_after, moved, decisive=True) == wanted
        or files.tier(name, source_after, moved) == files.tier(name, source_before)
    ):
        return None
    base = posixpath.basename(wanted)
    new = base if files.opened(base, source_after, moved, decisive=True) == wanted else wanted
    return link.start, link.start + len(name), _wiki_name(link, new)


def _file_path_change(
    link: Link, name: str, target: str, moved: tuple[str, str], files: Files, sources: tuple[str, str]
) -> tuple[int, int, str] | None:
    """An embed or wikilink naming a file that is no note by its path: a root-relative path follows
    only the moved file; one written ``./`` or ``../`` also follows its own document (decision 1052)."""
    src, dst = moved
    source_before, source_after = sources
    reached = target if target == src else files.reached(target)  # or in another normal form (505)
    relative = _is_relative(name)
    if reached == src:
        wanted = dst
    elif relative and source_before != source_after and reached is not None:
        still = posixpath.normpath(posixpath.join(posixpath.dirname(source_after), separators(name).strip()))
        if files.reached(still) == reached:
            return None
        wanted = reached
    else:
        return None
    new = _relative_name(wanted, source_after) if relative else wanted
    return link.start, link.start + len(name), _wiki_name(link, new)


def _is_relative(name: str) -> bool:
    """Whether a wikilink or embed name is written in Obsidian's "relative path" format (480)."""
    return separators(name).strip().startswith(("./", "../"))


def _relative_name(target: str, source: str) -> str:
    """``target`` named from ``source``'s folder in the "relative path" format: ``./`` unless it goes
    up, so a name the author wrote relative stays relative (decision 1052)."""
    relative = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return relative if relative.startswith("../") else f"./{relative}"


def _wiki_change(
    link: Link,
    target: str,
    exists: bool,
    src: str,
    dst: str,
    resolvers: tuple[Resolver, Resolver],
    source_before: str,
    source: str,
) -> tuple[int, int, str] | None:
    before, after = resolvers
    name = link.destination.split("#", 1)[0].rstrip()
    if not exists:
        return None  # unresolved before: nothing to preserve
    wanted = dst if target == src else target
    # still the note it opens from where the link is after the move (``source``), by Obsidian's
    # reading of a shared name (decision 914): a note moved to the root, or into the linking
    # note's folder, can take a bare name over from the note it opened, which then gets its path
    # left as written where it opens the note by more than path order, or where it already did so
    # by path order among the same equally near notes before the move (decisions 914, 915)
    if after.note_for(name, source) == wanted and (
        after.note_for(name, source, decisive=True) == wanted
        or after.tier(name, source) == before.tier(name, source_before)
    ):
        return None
    if _is_relative(name):  # the author's "relative path" format stays: it names one note (1052)
        forms = [_relative_name(wanted, source)[:-3]]
    else:
        forms = [posixpath.basename(wanted)[:-3], wanted[:-3]]
    if name.lower().endswith(".md"):
        forms = [f + wanted[-3:] for f in forms]
    new = next((f for f in forms if after.note_for(f, source, decisive=True) == wanted), forms[-1])
    return link.start, link.start + len(name), _wiki_name(link, new)


def _wiki_name(link: Link, new: str) -> str:
    """``new`` if a wikilink can hold it; a name with ``#``, ``|``, ``^`` or brackets cannot (decision
    453), so the move is refused before anything is written rather than leave the link broken."""
    if _WIKI_SYNTAX & set(new):
        written = f"![[{link.destination}]]" if link.kind == "embed" else f"[[{link.destination}]]"
        raise InvalidArgument(
            f"updateLinks cannot keep {written} working: a wikilink or embed cannot name {new!r} "
            "(# | ^ [ ] are link syntax there). Choose a target name without them, or move without updateLinks."
        )
    return new
