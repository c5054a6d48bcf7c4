"""Book assembly: which documents make the book, and the PDF around them.

A book is one document, or, when a document is nothing but links (headings
aside), a ``SUMMARY.md``-style table of contents whose local ``.md`` links name
the chapters in order, list nesting giving their depth (spec/decisions.md).
Books get a title page and a table of contents with page numbers; every
heading gets a bookmark and an outline entry, and links between chapters
become links inside the PDF.
"""

from __future__ import annotations

import html
import posixpath
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from reportlab.lib import colors
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, PageBreak, Spacer, Table, TableStyle
from reportlab.platypus.doctemplate import BaseDocTemplate, PageTemplate
from reportlab.platypus.flowables import AnchorFlowable
from reportlab.platypus.frames import Frame
from reportlab.platypus.tableofcontents import TableOfContents

from ... import progress
from ...errors import InvalidArgument, KbError, NotFound
from ...markdown import Document, ElementKind, parse_document, parse_text
from ...markdown.anchors import Slugger, slug
from ...markdown.front_matter import is_toml
from ...markdown.links import (
    extract_links,
    load_front_matter,
    marked_block,
    obsidian_hidden,
    rewrite,
    separators,
)
from ...paths import PathGuard
from ...sourcefile import read_source
from .canvas import BookCanvas, PdfSink
from .flowables import HEADING_ID, BlockRenderer, Chapter, Heading, Outline, _Ctx, wikilink_href
from .fonts import FontSet, font_set
from .images import ImageStore
from .inline import EMBED_PICTURE, MD, wikilink_text
from .kinsoku import Paragraph
from .sites import Include, as_the_site_shows, holds_site_markup, included_part
from .styles import PAGE_FORMATS, PROFILES, Sheet, sheet

__all__ = ["MAX_BOOK_BYTES", "MAX_WARNINGS", "BookOptions", "render_book"]

# Everything of a book is held in memory while it is laid out: bound it.
MAX_BOOK_BYTES = 32 * 1024 * 1024
MAX_WARNINGS = 100
# Markdown bytes whose chapters' blocks a book keeps from its first layout pass for the second
# instead of making them again (decision 606): within it a book lays out as fast as when its story
# was made whole (making the blocks is about a third of an export), beyond it the memory stays
# bounded by a chapter (decision 620) plus this share (about 30 MiB of kept blocks per MB).
KEEP_FOR_NEXT_PASS = 2 * 1024 * 1024
# The depth of a part title (mdBook's ``# Part`` heading between chapters) among a book's links.
PART = -1
# A title, subtitle or author list from front matter is one line of the title page.
MAX_META_CHARS = 200
MAX_META_ITEMS = 50
_REMOTE = ("http", "https", "mailto", "ftp")


@dataclass(frozen=True)
class BookOptions:
    page_format: str = "a5"
    style: str = "compact"
    profile: str = "standard"
    cjk_font: str | None = None


@dataclass
class _Part:
    """One entry of the book: a chapter document, a missing chapter or a part title."""

    title: str
    depth: int
    rel: str | None = None
    doc: Document | None = None
    numbered: bool = True  # headings get numbers in the styles that number them
    missing: str | None = None  # why the chapter could not be read
    # a deferred chapter's bytes: parsed again when it is made, its ``doc`` dropped once its
    # headings are made (a parsed chapter takes about 10 times its Markdown's size)
    raw: bytes | None = None


class _Progress:
    """How far an export got, as the MCP progress of its call (decision 501).

    Each chapter counts one unit when it is read, one when its headings are prepared and one in
    each layout pass (a fraction of it as the pass goes through the book, so a long single
    document moves too). A book is expected to take two passes (the table of contents starts
    with its entries, so the first pass finds the pages, the second prints their numbers and
    finds them settled); a pass beyond that adds its units to the total, so ``progress`` only grows.

    A single document's pass goes through its blocks, all known beforehand. A book's chapters
    are made when the layout reaches them (:class:`_Deferred`), so its pass goes through the
    chapters, each weighing its Markdown's size, and through the blocks of the one being placed.
    """

    def __init__(self) -> None:
        self.chapters = 1
        self.parts = 1
        self.passes = 1
        self.done = 0.0
        self.pass_no = 0
        self.pass_start = 0.0
        self.size = 1
        self.page = 0
        self.chapter = 0
        # a book's chapters made when the layout reaches them: weight of the parts before each
        self.before: list[int] = []
        self.weight = 1
        # parts made in this pass: [part, weight, flowables after its blocks, its blocks]
        self.placing: list[list[int]] = []

    @property
    def total(self) -> float:
        return float(self.chapters * (2 + self.passes))

    def step(self, units: float, message: progress.Message, *, final: bool = False) -> None:
        self.done = max(self.done, units)
        progress.step(self.done, self.total, message, final=final)

    def _laying_out(self) -> str:
        where = f"page {self.page}" + (f", chapter {self.chapter + 1} of {self.parts}" if self.parts > 1 else "")
        of = f" (pass {self.pass_no} of {self.passes})" if self.passes > 1 else ""
        return f"Laying out{of}: {where}"

    def reportlab(self, kind: str, value: int) -> None:
        """reportlab's progress callback: a pass starts, its number of blocks, blocks done, a page."""
        if kind == "PASS":
            self.pass_no, self.chapter = value, 0
            self.passes = max(self.passes, value)
            self.pass_start = self.chapters * (1 + value)
            self.placing.clear()
        elif kind == "SIZE_EST":
            self.size = max(1, value)
        elif kind == "PAGE":
            self.page = value
        elif kind == "PROGRESS" and self.before:
            self.step(self.pass_start + self.chapters * self._placed(self.size - value), self._laying_out)
        elif kind == "PROGRESS":
            self.step(self.pass_start + self.chapters * min(value, self.size) / self.size, self._laying_out)

    def placing_part(self, index: int, weight: int, after: int, blocks: int) -> None:
        """Part ``index`` was made: ``blocks`` flowables now come before the ``after`` last ones."""
        for earlier in self.placing:  # made ahead of their last blocks: the part is after them
            earlier[2] += blocks - 1
        self.placing.append([index, weight, after, max(1, blocks)])

    def _placed(self, left: int) -> float:
        """The share of a book's pass done when ``left`` flowables are left to place."""
        while len(self.placing) > 1 and left <= self.placing[0][2]:
            self.placing.pop(0)  # its blocks are all placed (a later part was made ahead of them)
        if not self.placing:
            return 0.0
        index, weight, after, blocks = self.placing[0]
        done = min(1.0, max(0.0, 1 - (left - after) / blocks))
        return (self.before[index] + weight * done) / self.weight


@dataclass
class _Warnings:
    items: list[str] = field(default_factory=list)
    dropped: int = 0
    # a book's chapters are made again in every layout pass: only the first pass's making warns
    muted: bool = False

    def add(self, message: str) -> None:
        if self.muted or message in self.items:
            return
        if len(self.items) < MAX_WARNINGS:
            self.items.append(message)
        else:
            self.dropped += 1

    def result(self) -> list[str]:
        return self.items + ([f"... and {self.dropped} more warnings."] if self.dropped else [])


def front_matter(doc: Document) -> dict[str, Any]:
    fm = next((e for e in doc.elements if e.kind is ElementKind.FRONT_MATTER), None)
    if fm is None:
        return {}
    body = "\n".join(fm.text.split("\n")[1:-1])
    try:
        data = load_front_matter(body, toml=is_toml(fm.text))  # the indexer's reading (decisions 404, 1026)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


_BREAK = re.compile(r"\r\n?")  # a CRLF or a lone CR (decision 55's line breaks besides LF)
_BREAK_AT = re.compile(r"\r\n?|\n")  # any one line break
# An image's inline data (``![x](data:...)``, ``<img src="data:...">``): never drawn (106), and past
# 20,000 characters it was cut mid-URI into paragraph pieces and printed as text.
_INLINE_DATA = re.compile(r"""(\]\(\s*<?|\bsrc\s*=\s*["']?)(data:[^\s)"'>]{0,40})[^\s)"'>]{160,}""", re.IGNORECASE)


def for_print(
    doc: Document, rel: str, warn: Callable[[str], None], include: Include | None = None, embed: Embed | None = None
) -> Document:
    """``doc`` as the PDF reads it: what Obsidian's reading view hides left out, every line break an
    LF, a site generator's markup as its site shows it (``sites.py``), and the inline data of its
    pictures cut to its first characters and an ellipsis.

    Obsidian shows nothing of a ``%%comment%%`` nor of a ``^block-id`` (decision 1009): a PDF is
    made to be shared, and a private remark printed there leaks. They are cut, not blanked as the
    link graph blanks them: spaces in their place would end a line in a hard break, or split a
    paragraph where a comment took whole lines.

    The layout splits element text at LF (code lines, headings, front matter, quotes); a file whose
    lines end in a lone CR (decision 55 reads it as Markdown like any other) lost its fenced code
    and its front matter title, and each CRLF line kept a CR (decision 922). Printing never writes
    the text back, so it may take one line ending.

    ``include`` reads the files a MyST ``include`` names (:func:`includer`); without it the
    directive is printed as written. ``embed`` reads the note an Obsidian ``![[Note]]`` standing on
    its own line embeds (:func:`embedder`), printed in its place as a quote; without it the embed is
    printed as its name.

    Pasted screenshots are embedded as inline data (Typora, Joplin, exports from web editors); such
    a picture becomes a placeholder named by the short form, as the paragraph around it stays whole.
    """
    text = doc.text
    hidden = obsidian_hidden(doc)
    if hidden.spans:
        text = _cut(text, hidden.spans)
    if hidden.unclosed is not None and doc.text[hidden.unclosed + 2 :].strip():
        # Obsidian would hide the rest of the note; printed here, with a word: such a `%%` is more
        # often a format string of a page that never was a note (a Jekyll table cell's `"%%Y"`, a
        # third of its page) than a private tail (decision 1010)
        line = len(_BREAK_AT.findall(doc.text, 0, hidden.unclosed)) + 1
        warn(
            f"{rel}: the %% on line {line} opens an Obsidian comment that no other %% closes; the rest of the "
            "note is printed, though Obsidian hides it. Close it to hide it, or write it as code (`%%`)."
        )
    if "\r" in text:
        text = _BREAK.sub("\n", text)
    if embed is not None and "![[" in text:
        text = _transcluded(doc if text is doc.text else parse_text(text, bom=doc.bom), embed)
    # a site generator's markup as the site shows it (decision 1028), read on this text's own parse
    if holds_site_markup(text):
        text = as_the_site_shows(doc if text is doc.text else parse_text(text, bom=doc.bom), include)
    if "data:" in text and _INLINE_DATA.search(text) is not None:
        text = _INLINE_DATA.sub(lambda m: m.group(1) + m.group(2) + "\u2026", text)
    return doc if text is doc.text else parse_text(text, bom=doc.bom)


# How deep MyST includes may nest (docutils has no limit but a cycle check), and the bytes a book's
# includes may add to it in all (each counted where it is included).
INCLUDE_DEPTH = 8


def includer(
    guard: PathGuard, rel: str, warn: Callable[[str], None], budget: list[int], stack: tuple[str, ...] = ()
) -> Include:
    """A MyST ``include`` read for ``rel`` (decision 1176): the named Markdown file, its path
    relative to ``rel``'s folder (``/`` from the root, as Sphinx's source folder), read through
    ``guard`` as a chapter is (inside the root, no link, no FIFO, within the document cap), cut to
    the part its options choose and read as the site shows it in turn. A file that cannot be read,
    one that includes itself (through others too), an include nested deeper than ``INCLUDE_DEPTH``
    or past the book's byte ``budget`` (its one item is what is left, shared by every include of
    the book) is said in a warning and a line in italics naming it is printed in its place."""

    def include(target: str, options: dict[str, str]) -> str:
        written = separators(target.strip())
        joined = written.lstrip("/") if written.startswith("/") else posixpath.join(posixpath.dirname(rel), written)
        joined = posixpath.normpath(joined)
        try:
            if joined == rel or joined in stack:
                raise InvalidArgument("it includes the file that includes it")
            found, doc = _read_nested(guard, joined, len(stack), budget, "include")
        except KbError as exc:
            reason = "the file does not exist" if isinstance(exc, NotFound) else _reason(exc.message)
            warn(f"{rel}: the include of {target!r} was replaced by a placeholder: {reason}.")
            return f"<em>{html.escape(f'Not included: {target} ({reason})', quote=False)}</em>"
        part = parse_text(included_part(_BREAK.sub("\n", doc.text), options))
        return for_print(part, found, warn, includer(guard, found, warn, budget, (*stack, rel))).text

    return include


def _read_nested(guard: PathGuard, rel: str, depth: int, budget: list[int], kind: str) -> tuple[str, Document]:
    """The path and document of ``rel``, which an ``include`` or an ``embed`` (``kind``) nested
    ``depth`` deep names, read through ``guard`` as a chapter is, its bytes taken from the book's
    ``budget`` (one item, shared by every include and embed of the book); :class:`KbError` when it
    is nested too deep, cannot be read or is past the budget."""
    if depth >= INCLUDE_DEPTH:
        raise InvalidArgument(f"it is nested more than {INCLUDE_DEPTH} {kind}s deep")
    found, path = guard.resolve(rel, markdown=True)
    raw = read_source(path, found)
    budget[0] -= len(raw)
    if budget[0] < 0:
        raise InvalidArgument(f"the book's {kind}s come to more than {MAX_BOOK_BYTES // (1024 * 1024)} MiB")
    return found, parse_document(raw)


# ``![[target]]``'s target as written -> the Markdown printed in its place, or None to print its name
Embed = Callable[[str], "str | None"]
# a line that is one embed alone: `![[Note]]`, `![[Note#Heading|alias]]`
_EMBED_LINE = re.compile(r"^[ \t]*!\[\[([^\[\]\n]+)\]\][ \t]*$", re.MULTILINE)
# a name whose last dot starts a short extension names an attachment unless a note has that name
_ATTACHMENT = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def embedder(
    guard: PathGuard,
    find_note: Callable[[str, str], str | None],
    rel: str,
    warn: Callable[[str], None],
    budget: list[int],
    stack: tuple[str, ...] = (),
) -> Embed:
    """Obsidian's note embed read for ``rel`` (decision 1199): ``![[Note]]`` the note without its
    front matter, ``![[Note#Heading]]`` (or a chain ``#A#B``) that heading's section,
    ``![[Note#^id]]`` the block the marker marks (:func:`marked_block`), the note found as a
    ``[[link]]`` is (``find_note``) and read through ``guard`` as a chapter is, then printed as
    the PDF prints a note (its own embeds read in turn). A picture's or an attachment's embed is
    left to the inline parser (None). A note that is missing, cannot be read, embeds itself
    (through others too), nests deeper than ``INCLUDE_DEPTH``, is past the book's byte ``budget``,
    or has no such heading or block is said in a warning and printed as its name, as before."""

    def embed(target: str) -> str | None:
        written = target.partition("|")[0]
        written = written[:-1] if written.endswith("\\") else written  # `![[Note\|alias]]`, as a table writes it
        name, _, fragment = written.partition("#")
        name, fragment = name.strip(), fragment.strip()
        if EMBED_PICTURE.search(name):
            return None
        found = find_note(name, rel) if name else rel
        if found is None:
            if not _ATTACHMENT.search(name) or name.lower().endswith(".md"):
                warn(f"{rel}: the embed of {target!r} is printed as its name: no note of that name exists.")
            return None
        try:
            if (found == rel and not fragment) or found in stack:
                raise InvalidArgument("it embeds the note that embeds it")
            found, doc = _read_nested(guard, found, len(stack), budget, "embed")
        except KbError as exc:
            warn(f"{rel}: the embed of {target!r} is printed as its name: {_reason(exc.message)}.")
            return None
        part = _embedded_part(doc, fragment)
        if part is None:
            warn(f"{rel}: the embed of {target!r} is printed as its name: {found} has no such heading or block.")
            return None
        inner = embedder(guard, find_note, found, warn, budget, (*stack, rel))
        shown = for_print(parse_text(part), found, warn, embed=inner).text
        folder, home = posixpath.dirname(found), posixpath.dirname(rel)
        return shown if folder == home else _rebased(shown, folder, home)

    return embed


def _embedded_part(doc: Document, fragment: str) -> str | None:
    """The Markdown of ``doc`` an embed's ``fragment`` names (LF line ends), or None when it names
    nothing: the whole note but its front matter, a heading's section, or a marked block."""
    text = _BREAK.sub("\n", doc.text) if "\r" in doc.text else doc.text
    if "\r" in doc.text:
        doc = parse_text(text)
    if not fragment:
        front = doc.get("frontmatter")
        return text[front.end :].lstrip("\n") if front is not None else text
    if fragment.startswith("^"):
        block = marked_block(doc, fragment[1:])
        return None if block is None else textwrap.dedent(text[doc.line_start(block.start) : block.end])
    parts = [(_folded(p), slug(p)) for p in fragment.split("#") if p.strip()]
    at = 0
    heading = None
    for heading in doc.headings:  # each part of a chain `A#B` after the one before, as kb_links reads it
        title = heading.title or ""
        folded, slugged = parts[at]
        if _folded(title) == folded or (slugged and slug(title) == slugged):
            at += 1
            if at == len(parts):
                break
    else:
        return None
    assert heading is not None
    return text[heading.start : heading.section_end if heading.section_end is not None else heading.end].rstrip()


_REBASED_KINDS = frozenset({"inline", "reference", "image", "html", "href"})


def _rebased(text: str, folder: str, home: str) -> str:
    """``text``, written in ``folder``, with its relative Markdown links, pictures, reference
    definitions and HTML ``src``/``href`` made relative to ``home``, where it is printed: an
    embedded note's ``![x](../pics/a.png)`` still finds its picture. A destination written with
    escapes, a URL, a root-absolute or a template path, or one leaving the root is left as it is;
    a percent-encoded one stays encoded."""
    doc = parse_text(text)
    edits: list[tuple[int, int, str]] = []
    for link in extract_links(doc).links:
        if link.kind not in _REBASED_KINDS or link.start < 0:
            continue
        written = text[link.start : link.end]
        path, mark, rest = written.partition("#")
        split = urlsplit(path)
        if not path or split.scheme or split.netloc or path.startswith(("/", "\\")) or "{" in path:
            continue
        joined = posixpath.normpath(posixpath.join(folder, separators(unquote(path) if "%" in path else path)))
        if joined == ".." or joined.startswith("../"):
            continue
        moved = posixpath.relpath(joined, home or ".")
        edits.append((link.start, link.end, (quote(moved) if "%" in path else moved) + mark + rest))
    return rewrite(text, edits) if edits else text


def _folded(title: str) -> str:
    """A heading's text as a wikilink's fragment names it: case and runs of blanks ignored."""
    return " ".join(title.split()).casefold()


def _transcluded(doc: Document, embed: Embed) -> str:
    """``doc``'s text with each line of a top-level paragraph that is one note embed alone replaced
    by the embedded Markdown as a quote (Obsidian frames an embed; a quote keeps its headings out
    of the book's outline), set apart by blank lines so no line around it joins the quote."""
    text = doc.text
    edits: list[tuple[int, int, str]] = []
    for element in doc.elements:
        if element.kind is not ElementKind.PARAGRAPH or "![[" not in element.text:
            continue
        for line in _EMBED_LINE.finditer(text, element.start, element.end):
            shown = embed(line.group(1))
            if shown is None:
                continue
            quoted = "\n".join(f"> {row}" if row.strip() else ">" for row in shown.strip("\n").split("\n"))
            edits.append((line.start(), line.end(), f"\n{quoted}\n"))
    return rewrite(text, edits) if edits else text


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without ``spans`` (sorted, apart). A span that fills its lines (indentation aside)
    takes them whole, line break included: a comment on lines of its own inside a paragraph would
    leave a blank line, and the paragraph would be printed as two."""
    edits = []
    at = 0
    for start, end in spans:
        line = start
        while line > at and text[line - 1] in " \t":
            line -= 1
        after = _BREAK_AT.match(text, end)
        if after is not None and (line == 0 or text[line - 1] in "\r\n"):
            start, end = line, after.end()
        edits.append((start, end, ""))
        at = end
    return rewrite(text, edits)


_HANGUL = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")


def contents_title(titles: Iterable[str]) -> str:
    """The contents page's heading in the language of the chapters' titles: ``목차`` when Korean
    letters outnumber Latin ones, ``目次`` for Japanese (kana among the Han), ``目录`` for Chinese,
    else ``Contents`` (decision 1109: a Chinese book opened on an English word)."""
    text = " ".join(titles)
    hangul, kana, han, latin = (len(p.findall(text)) for p in (_HANGUL, _KANA, _HAN, _LATIN))
    if hangul and hangul >= latin and hangul >= han:
        return "목차"
    if kana and kana + han >= latin:
        return "目次"
    if han and han >= latin:
        return "目录"
    return "Contents"


def _plain_heading(title: str) -> str:
    tokens = MD.parseInline(title, {})
    return "".join(t.content for t in (tokens[0].children or []) if t.type in ("text", "code_inline")).strip()


def meta_text(value: Any) -> str:
    """A front-matter value as one line for the title page and the PDF's metadata: a scalar, or a
    list of scalars joined with commas, at most :data:`MAX_META_CHARS` characters.

    Anything else is ignored rather than printed with ``str``: nine YAML aliases nested nine deep
    (a few hundred bytes) load as shared lists whose text is billions of characters, and the
    export ran out of memory building it.
    """
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value[:MAX_META_ITEMS] if _scalar(v))
    elif not _scalar(value):
        return ""
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_META_CHARS else text[: MAX_META_CHARS - 1] + "\u2026"


def _scalar(value: Any) -> bool:
    return value is not None and not isinstance(value, (list, dict, set, tuple, bytes))


def _summary_links(
    doc: Document, wikilinks: Callable[[str], str | None] | None = None
) -> list[tuple[str, str, int, bool]] | None:
    """``(title, href, depth, numbered)`` of a link-list document, or ``None`` when it has prose.

    As in mdBook, chapters in a list are numbered, links in paragraphs (prefix and suffix
    chapters such as a foreword) are not, and a heading after the first is the title of the part
    that follows: ``(title, "", PART, False)``. Obsidian's ``[[Note|title]]`` entries count too, their
    href made by ``wikilinks`` (a note no one finds keeps ``Note.md``, a missing chapter; decision 764).
    """
    links: list[tuple[str, str, int, bool]] = []
    env: dict[str, Any] = {}
    if "]:" in doc.text:  # reference-style entries (``[One][1]`` ... ``[1]: one.md``) are links too
        MD.parse(doc.text, env)
    headings = 0
    for element in doc.elements:
        if element.kind is ElementKind.HEADING:
            headings += 1
            if headings > 1:
                links.append((_plain_heading(element.title or ""), "", PART, False))
            continue
        if element.kind is ElementKind.FRONT_MATTER:
            continue
        if element.kind not in (ElementKind.PARAGRAPH, ElementKind.LIST_ITEM):
            return None
        text = doc.text[element.segments[0][0] : element.segments[0][1]]
        depth = 0
        if element.kind is ElementKind.LIST_ITEM:
            text = text.lstrip(" ")[1:] if text.lstrip(" ")[:1] in "-*+" else text.split(".", 1)[-1]
            parent = element.parent
            while parent is not None:
                depth += 1
                up = doc.get(parent)
                parent = up.parent if up is not None else None
        tokens = MD.parseInline(text.strip(), env)
        children = tokens[0].children or [] if tokens else []
        found: list[tuple[str, str, int, bool]] = []
        title: list[str] = []
        href = ""
        inside = False
        for tok in children:
            if tok.type == "link_open":
                href, title, inside = str(tok.attrGet("href") or ""), [], True
            elif tok.type == "link_close":
                found.append(("".join(title).strip(), href, depth, element.kind is ElementKind.LIST_ITEM))
                inside = False
            elif tok.type == "wikilink" and not tok.meta["embed"] and not inside:
                target = str(tok.meta["target"])
                found_href = wikilinks(target) if wikilinks is not None else None
                fallback = quote(target.split("#", 1)[0].strip() + ".md")
                title_text = wikilink_text(target, tok.meta["alias"])
                found.append((title_text, found_href or fallback, depth, element.kind is ElementKind.LIST_ITEM))
            elif tok.type in ("text", "code_inline"):
                if inside:
                    title.append(tok.content)
                elif tok.content.strip():
                    return None  # text outside links: prose, not a table of contents
            elif tok.type not in ("softbreak", "em_open", "em_close", "strong_open", "strong_close"):
                return None
        if not found:
            return None
        links += found
    local = [h for _, h, _, _ in links if h and not urlsplit(h).scheme and urlsplit(h).path.lower().endswith(".md")]
    return links if local else None


def _not_drawn(*args: Any, **kwargs: Any) -> None:
    """A flowable's ``drawOn`` in a pass whose pages are thrown away."""


class _Frame(Frame):  # type: ignore[misc]  # reportlab ships no type hints
    """The body frame; in a pass whose pages are thrown away it places blocks without drawing them.

    A block's place depends on its size alone (``wrap`` and ``split``); drawing it (setting its
    text, about 2/5 of a pass) changes nothing the layout reads. The block's own ``drawOn`` is
    shadowed for the time it is added, so a table's cells and every other drawing are skipped.
    """

    draws = True

    def add(self, flowable: Flowable, canv: Any, trySplit: int = 0) -> int:
        if self.draws:
            return int(super()._add(flowable, canv, trySplit))
        flowable.drawOn = _not_drawn
        try:
            return int(super()._add(flowable, canv, trySplit))
        finally:
            del flowable.drawOn

    _add = add


class _Contents(TableOfContents):  # type: ignore[misc]  # reportlab ships no type hints
    """The table of contents, letting go of its laid-out table once it is placed.

    reportlab's ``wrap`` builds a table of one paragraph per entry (about 4 KiB each with its
    parsed fragments: 7 MiB for the 1,782 entries of opensearch-docs' ``_api-reference``) and
    keeps it on the flowable, which the story holds to the end of the export; the next pass's
    ``wrap`` built the new one while the old was still held. Once ``split`` has given the
    pieces (they hold their own rows, and are dropped as they are placed), or the table is
    drawn whole, it is not needed again in the pass: every pass and every placement try wraps
    it afresh first (decision 662).
    """

    def beforeBuild(self) -> None:
        super().beforeBuild()
        self._table = None

    def split(self, availWidth: float, availHeight: float) -> list[Flowable]:
        pieces: list[Flowable] = super().split(availWidth, availHeight)
        if pieces:
            self._table = None
        return pieces

    def drawOn(self, canvas: Any, x: float, y: float, _sW: float = 0) -> None:
        super().drawOn(canvas, x, y, _sW)
        self._table = None


class _Deferred(Flowable):  # type: ignore[misc]  # reportlab ships no type hints
    """A part of a book (a chapter or a part's title) whose blocks are made when the layout
    reaches it, in each pass, and dropped once placed: a book's memory is then bounded by its
    largest chapter rather than by the book (all blocks with their parsed text were held through
    both passes: 1.4 GiB for opensearch-docs, decision 605). :meth:`_Template.filterFlowables`
    puts the blocks in its place; it is never placed itself.
    """

    def __init__(self, index: int, weight: int) -> None:
        super().__init__()
        self.index = index
        self.weight = weight  # its share of a layout pass's progress (its Markdown's size)

    def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:
        raise RuntimeError(f"part {self.index} of the book was laid out before its blocks were made")


class _Template(BaseDocTemplate):  # type: ignore[misc]  # reportlab ships no type hints
    """Pages with a footer; headings feed the outline, bookmarks and the TOC.

    With ``layout_first``, the first of several passes only places the blocks: its pages are
    never kept (multiBuild keeps the last pass's), and it is never taken as the last one.
    A book's parts come as :class:`_Deferred` blocks that ``make`` turns into their blocks.
    """

    def __init__(self, out: PdfSink, sheet_: Sheet, fonts: FontSet, title_page: bool, **meta: Any) -> None:
        width, height = self._page
        super().__init__(
            out,
            pagesize=(width, height),
            leftMargin=sheet_.margins[0],
            rightMargin=sheet_.margins[1],
            topMargin=sheet_.margins[2],
            bottomMargin=sheet_.margins[3],
            invariant=1,
            pageCompression=1,
            # every page starts in this font; the default (Helvetica) would be an unembedded font
            initialFontName=fonts.family(sheet_.theme.body).regular,
            **meta,
        )
        self.sheet_ = sheet_
        self.fonts = fonts
        self.title_page = title_page
        self.progress: _Progress | None = None
        self.layout_first = False
        self.pass_no = 0
        self.drawing = True
        # (part, pass number) -> the part's blocks; the story's own flowables (kept between passes)
        self.make: Callable[[int, int], list[Flowable]] | None = None
        self.lasting: set[int] = set()
        self.body = frame = _Frame(
            self.leftMargin,
            self.bottomMargin,
            self.width,
            self.height,
            id="body",
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        )
        self.addPageTemplates([PageTemplate("body", [frame], onPage=self._footer)])

    _page: tuple[float, float] = PAGE_FORMATS["a5"]

    def build(self, flowables: list[Flowable], *args: Any, **kwargs: Any) -> None:
        self.pass_no += 1
        self.drawing = self.body.draws = not (self.layout_first and self.pass_no == 1)
        # reportlab notes an undo for every block it postpones to the next frame (``_postponed``),
        # held to the end of the export in the last pass: a long table's remainder at each page
        # it runs over, each holding every row after it (the contents of opensearch-docs, 14,625
        # entries over about 400 pages: about 4 million rows; decision 664). Only a block placed
        # again in the next pass needs its undo: the story's and the kept ones (``lasting``); made
        # blocks and split pieces are made afresh.
        with self._undo_notes_for_lasting_blocks():
            super().build(flowables, *args, **kwargs)

    def filterFlowables(self, flowables: list[Flowable]) -> None:
        """Make the deferred part about to be placed, and any the next block keeps with it.

        reportlab calls this before it places ``flowables[0]``; ``handle_keepWithNext`` then
        groups the blocks that keep with the next one (a chapter's last heading) with the block
        after them, which must be a made block, not a part still deferred.
        """
        i = 0
        while i < len(flowables):
            if isinstance(flowables[i], _Deferred):
                self._make(flowables, i)
            elif flowables[i].getKeepWithNext():
                i += 1
            else:
                break

    def _make(self, flowables: list[Flowable], i: int) -> None:
        assert self.make is not None
        part: _Deferred = flowables[i]
        blocks = self.make(part.index, self.pass_no)
        assert blocks, part.index  # a part that makes nothing is never deferred (it would end the story)
        after = len(flowables) - i - 1
        flowables[i : i + 1] = blocks
        if self.progress is not None:
            self.progress.placing_part(part.index, part.weight, after, len(blocks))

    def handle_keepWithNext(self, flowables: list[Flowable]) -> None:
        # reportlab notes how to undo the grouping before the next pass; blocks made for this
        # pass are not laid out again, and the note would keep them to the end of the pass
        with self._undo_notes_for_lasting_blocks():
            super().handle_keepWithNext(flowables)

    @contextmanager
    def _undo_notes_for_lasting_blocks(self) -> Iterator[None]:
        """While inside, reportlab's undo notes (``_multiBuildEdits``) are kept only for blocks
        placed again in the next pass (``lasting``); without deferred parts, all of them."""
        edits = getattr(self, "_multiBuildEdits", None)
        if edits is None or self.make is None:
            yield
            return
        lasting = self.lasting

        def note(edit: tuple[Any, ...]) -> None:
            if id(edit[1]) in lasting:
                edits(edit)

        self._multiBuildEdits = note
        try:
            yield
        finally:
            self._multiBuildEdits = edits

    def _allSatisfied(self) -> bool:
        # a pass that drew nothing is never the last: its pages are blank
        return self.drawing and bool(super()._allSatisfied())

    def _footer(self, canvas: Any, doc: Any) -> None:
        page = canvas.getPageNumber()
        if self.title_page and page == 1:
            return
        theme = self.sheet_.theme
        size = self.sheet_.body.fontSize - 1.5
        canvas.saveState()
        canvas.setFont(self.fonts.family(theme.body).regular, size)
        canvas.setFillColor(colors.HexColor("#666666"))
        y = self.bottomMargin * 0.45
        text = str(page)
        if theme.footer == "center":
            canvas.drawCentredString(self.pagesize[0] / 2, y, text)
        elif theme.footer == "right":
            canvas.drawRightString(self.pagesize[0] - self.rightMargin, y, text)
            canvas.setStrokeColor(colors.HexColor("#cccccc"))
            canvas.setLineWidth(0.4)
            canvas.line(self.leftMargin, y + size * 1.4, self.pagesize[0] - self.rightMargin, y + size * 1.4)
        else:
            canvas.drawString(self.leftMargin, y, text)
        canvas.restoreState()

    def afterFlowable(self, flowable: Flowable) -> None:
        if isinstance(flowable, AnchorFlowable) and self.progress is not None:
            key = getattr(flowable, "_name", "")
            if key[:1] == "c" and key[1:].isdigit():  # a chapter's start (``c<part>``)
                self.progress.chapter = int(key[1:])
        if isinstance(flowable, Heading) and flowable.outline is not None:
            o = flowable.outline
            self.canv.addOutlineEntry(o.title, o.key, level=o.level, closed=o.level >= 1)
            if o.toc:
                self.notify("TOCEntry", _toc_entry(o, self.fonts, self.sheet_, self.page))
        _drop_lines(flowable)


def _drop_lines(flowable: Flowable) -> None:
    """Forget the broken lines of a placed (and drawn) paragraph, or of a table's cells.

    The next pass wraps them again (a table's cells too, each time it is measured or drawn), so
    they need not stay until the end of the book: about 2/5 of a pass's memory (decision 604).
    """
    if isinstance(flowable, Paragraph):
        flowable.__dict__.pop("blPara", None)
    elif isinstance(flowable, Table):
        for row in getattr(flowable, "_cellvalues", ()):
            for cell in row:
                for each in cell if isinstance(cell, (list, tuple)) else (cell,):
                    if isinstance(each, Paragraph):
                        each.__dict__.pop("blPara", None)


def _toc_entry(outline: Outline, fonts: FontSet, sheet_: Sheet, page: int) -> tuple[int, str, int, str]:
    """A heading's entry in the table of contents, as reportlab's ``TOCEntry`` carries it."""
    return (outline.level, fonts.markup(outline.title, fonts.family(sheet_.theme.body)), page, outline.key)


def contents_entries(story: list[Flowable], fonts: FontSet, sheet_: Sheet) -> list[tuple[int, str, int, str]]:
    """The table of contents' entries the layout will report, every page number 0.

    The template reports the headings of the story's top level as it places them (a heading in
    a quote or list item has no outline entry; a split heading's first part keeps it), so this is
    the same list in the same order. Only page numbers change its height: they are drawn after
    each entry's last line and take no room in it. So a contents that starts with these entries
    has its final height in the first pass, which places every page; the second prints the
    numbers and finds them unchanged. Started empty, the contents grew in the second pass and
    moved every page after it, and a third pass was needed (rust book: 3 passes of about 1/3 of
    the export each, decision 601). Were the list ever wrong, reportlab's own check (the
    entries found equal to those drawn) still adds passes until they settle. A book's chapters
    are deferred (:class:`_Deferred`): their headings, made ahead, stand in for their blocks.
    """
    return [
        _toc_entry(f.outline, fonts, sheet_, 0)
        for f in story
        if isinstance(f, Heading) and f.outline is not None and f.outline.toc
    ]


class _Book:
    def __init__(self, guard: PathGuard, rel: str, options: BookOptions) -> None:
        self.guard = guard
        self.rel = rel
        self.options = options
        self.warnings = _Warnings()
        self.fonts = font_set(options.cjk_font)
        self.sheet = sheet(options.style, options.page_format, self.fonts)
        self.images = ImageStore(guard, PROFILES[options.profile])
        self.chapters: dict[str, Chapter] = {}
        self.renderer = BlockRenderer(self.sheet, self.fonts, self.images, self._link, self.warnings.add)
        self.progress = _Progress()
        self.is_book = False
        self.parts_: list[_Part] = []
        # the heading numbers before each deferred part, so that making it again numbers the same
        self.numbering: dict[int, tuple[list[int], int]] = {}
        # parts whose first-pass blocks the second pass places again (decision 606), and the ids
        # of every block whose keep-with-next grouping reportlab must undo before the next pass
        self.kept: dict[int, list[Flowable]] = {}
        self.lasting: set[int] = set()
        self._keep_left = KEEP_FOR_NEXT_PASS
        # the book's top-level headings, made ahead of the layout for the contents' entries
        self.headings: list[Flowable] = []
        self.include_budget = [MAX_BOOK_BYTES]

    def include(self, rel: str) -> Include:
        return includer(self.guard, rel, self.warnings.add, self.include_budget)

    def embed(self, rel: str) -> Embed:
        return embedder(self.guard, self.images.find_note, rel, self.warnings.add, self.include_budget)

    # -------------------------------------------------------------- the book's parts

    def parts(self, doc: Document) -> list[_Part]:
        links = _summary_links(doc, lambda target: wikilink_href(target, self.rel, self.images.find_note))
        if links is None:
            return [_Part("", 0, self.rel, doc)]
        parts: list[_Part] = []
        seen = {self.rel}
        folder = posixpath.dirname(self.rel)
        budget = len(doc.text.encode("utf-8"))
        self.progress.chapters = max(1, len(links))
        self.progress.passes = 2  # a book has a table of contents (see render_book)
        for n, (title, href, depth, numbered) in enumerate(links):
            self.progress.step(n, f"Reading chapter {n + 1} of {len(links)}: {href or title}")
            if depth == PART:
                parts.append(_Part(title, 0, numbered=False))
                continue
            split = urlsplit(href)
            if split.scheme or split.netloc or not split.path.lower().endswith(".md"):
                continue
            target = posixpath.normpath(posixpath.join(folder, separators(unquote(split.path))))
            if target in seen:
                continue
            seen.add(target)
            try:
                rel, path = self.guard.resolve(target, markdown=True)
            except KbError:
                parts.append(_Part(title, depth, target, numbered=numbered, missing="its path is not permitted"))
                continue
            try:  # never a FIFO (it would block), a link, or a file over the document cap
                raw = read_source(path, rel)
            except NotFound:
                parts.append(_Part(title, depth, rel, numbered=numbered, missing="the file does not exist"))
                continue
            except KbError as exc:
                parts.append(_Part(title, depth, rel, numbered=numbered, missing=_reason(exc.message)))
                continue
            budget += len(raw)
            if budget > MAX_BOOK_BYTES:
                raise InvalidArgument(
                    f"The book is larger than {MAX_BOOK_BYTES // (1024 * 1024)} MiB of Markdown; "
                    "export its parts separately."
                )
            try:
                chapter = for_print(parse_document(raw), rel, self.warnings.add, self.include(rel), self.embed(rel))
            except KbError:
                parts.append(_Part(title, depth, rel, numbered=numbered, missing="it is not valid UTF-8"))
                continue
            parts.append(_Part(title, depth, rel, chapter, numbered=numbered, raw=raw))
        return parts

    def _prepare(self, parts: list[_Part]) -> None:
        """Destinations of every chapter and heading, known before any link is drawn."""
        for i, part in enumerate(parts):
            if part.rel is None:
                continue
            chapter = Chapter(part.rel, part.depth, f"c{i}", numbered=part.numbered)
            if part.doc is not None:
                headings = part.doc.headings
                chapter.min_level = min((h.level or 1 for h in headings), default=1)
                slugger = Slugger()
                for j, heading in enumerate(headings):
                    key = f"c{i}h{j}"
                    chapter.heading_keys.append(key)
                    custom = HEADING_ID.search(heading.title or "")
                    plain = self.renderer.inline.plain(HEADING_ID.sub("", heading.title or ""))
                    if custom is not None:
                        chapter.slugs.setdefault(custom.group(1), key)
                        # a MyST `(label)=` target became the heading's id: `{ref}`label`` shows its title
                        self.renderer.inline.targets.setdefault(custom.group(1).lower(), (plain, f"#{key}"))
                    if j == 0:
                        self.renderer.inline.titles.setdefault(f"#{chapter.key}", part.title or plain)
                    # the link checker's anchor (markdown/anchors.py); an own id above keeps its name
                    chapter.slugs.setdefault(slugger.slug(plain), key)
            self.chapters.setdefault(part.rel, chapter)

    def _link(self, chapter: Chapter, href: str) -> str | None:
        split = urlsplit(href)
        if split.scheme:
            return href if split.scheme.lower() in _REMOTE else None
        if split.netloc:
            return None
        if not split.path:
            target = chapter
        else:
            # markdown-it wrote a backslash `%5C`; it separates folders, as for kb_links (decision 910)
            path = separators(unquote(split.path))
            if path.lower().endswith(".html"):
                path = path[:-5] + ".md"
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(chapter.rel), path))
            found = self.chapters.get(rel)
            if found is None:
                return None  # a file outside the book: the link text stays, unlinked
            target = found
        fragment = unquote(split.fragment)
        key = target.slugs.get(fragment) or target.slugs.get(slug(fragment)) if fragment else None
        return f"#{key or target.key}"

    # -------------------------------------------------------------- layout

    def story(self, doc: Document, parts: list[_Part]) -> tuple[list[Flowable], dict[str, str], bool]:
        meta = front_matter(doc)
        is_book = len(parts) != 1 or parts[0].doc is not doc
        title = meta_text(meta.get("title"))
        if not title and is_book:
            first = next((h for h in doc.headings), None)
            title = self.renderer.inline.plain(first.title or "") if first is not None else ""
            title = title or posixpath.splitext(posixpath.basename(self.rel))[0]
        author = meta_text(meta.get("author") or meta.get("authors"))
        story: list[Flowable] = []
        body = self.fonts.family(self.sheet.theme.body)
        title_page = bool(title)
        if title_page:
            story += [
                Spacer(1, self.sheet.frame_height * 0.28),
                Paragraph(self.fonts.markup(title, body), self.style_cjk(self.sheet.title, title)),
            ]
            subtitle = meta_text(meta.get("subtitle") or meta.get("description"))
            if subtitle:
                story.append(
                    Paragraph(self.fonts.markup(subtitle, body), self.style_cjk(self.sheet.subtitle, subtitle))
                )
            if author:
                story += [
                    Spacer(1, 12 * mm),
                    Paragraph(self.fonts.markup(author, body), self.style_cjk(self.sheet.subtitle, author)),
                ]
            story.append(PageBreak())
        if is_book:
            # The TOC is a table: name its cell font, else reportlab selects unembedded Helvetica.
            toc_style = TableStyle(
                [
                    ("VALIGN", (0, 0), (-1, -1), "TOP"),
                    ("RIGHTPADDING", (0, 0), (-1, -1), 0),
                    ("LEFTPADDING", (0, 0), (-1, -1), 0),
                    ("FONT", (0, 0), (-1, -1), body.regular),
                ]
            )
            toc = _Contents(dotsMinLevel=0, tableStyle=toc_style)
            toc.levelStyles = list(self.sheet.toc)
            heading = self.sheet.headings[0]
            title = contents_title(part.title for part in parts)
            story += [Paragraph(self.fonts.markup(title, body), heading), toc, PageBreak()]
        self._prepare(parts)
        ahead = self.progress.chapters - len(parts)  # links that named no chapter: done already
        self.progress.parts = len(parts)
        self.is_book, self.parts_ = is_book, parts
        for i, part in enumerate(parts):
            what = f"chapter {i + 1} of {len(parts)}: {part.rel or part.title}" if is_book else self.rel
            self.progress.step(self.progress.chapters + ahead + i, f"Preparing {what}")
            if not self._makes(i, part):
                if is_book and part.depth == 0 and i:
                    story.append(PageBreak())
                continue
            if not is_book:  # one document: its blocks are the story, made once
                story += self._blocks(i, part)
                continue
            # A book's chapter is made when the layout reaches it; its headings are made now, for
            # the contents' entries (601), in order, so that they number as the layout will.
            self.numbering[i] = (list(self.renderer.counters), self.renderer.last_level)
            self.headings += self._blocks(i, part, headings_only=True)
            story.append(_Deferred(i, len(part.doc.text) if part.doc is not None else 1))
            if part.raw is not None:
                part.doc = None  # parsed again when it is made
        self.progress.before = [0] * len(parts)
        done = 0
        for f in story:
            if isinstance(f, _Deferred):
                self.progress.before[f.index], done = done, done + f.weight
        self.progress.weight = max(1, done)
        info = {"title": title or _first_heading(doc) or posixpath.basename(self.rel), "author": author}
        return story, info, title_page

    def _makes(self, i: int, part: _Part) -> bool:
        """Whether part ``i`` has blocks (a link to a chapter listed before has none)."""
        if part.rel is None:
            return bool(part.title)
        chapter = self.chapters.get(part.rel)
        return chapter is not None and chapter.rel == part.rel and chapter.key == f"c{i}"

    def make(self, i: int, pass_no: int) -> list[Flowable]:
        """Part ``i``'s blocks for layout pass ``pass_no``: the same blocks in every pass, the
        warnings of their making given in the first only."""
        self.warnings.muted = pass_no > 1
        kept = self.kept.pop(i, None)
        if kept is not None and pass_no > 1:
            return kept  # the first pass's blocks, their groupings undone by reportlab
        counters, last = self.numbering[i]
        self.renderer.counters[:] = counters
        self.renderer.last_level = last
        part = self.parts_[i]
        blocks = self._blocks(i, part)
        size = len(part.raw) if part.raw is not None else len(part.title)
        if pass_no == 1 and size <= self._keep_left:
            self._keep_left -= size
            self.kept[i] = list(blocks)
            self.lasting.update(map(id, blocks))
        return blocks

    def _blocks(self, i: int, part: _Part, headings_only: bool = False) -> list[Flowable]:
        """Part ``i``'s blocks, or with ``headings_only`` its headings that have outline entries."""
        out: list[Flowable] = []
        if self.is_book and part.depth == 0 and i:
            out.append(PageBreak())
        if part.rel is None:  # a part's title: a heading of its own, unnumbered
            self.renderer.chapter = Chapter(f"#part{i}", 0, f"c{i}", heading_keys=[f"c{i}h0"], numbered=False)
            out.append(self.renderer.heading(_heading_element(part.title), 0, _Ctx()))
            return out
        chapter = self.chapters[part.rel]
        out.append(AnchorFlowable(chapter.key))
        self.renderer.chapter = chapter
        doc = part.doc
        if doc is None and part.raw is not None:
            doc = for_print(parse_document(part.raw), part.rel, self.warnings.add)  # as parts() read it
        if doc is None:
            if not headings_only:
                self.warnings.add(f"Chapter {part.rel} ({part.title!r}) was replaced by a placeholder: {part.missing}.")
            if not chapter.heading_keys:
                chapter.heading_keys.append(f"{chapter.key}h0")
            fake = _heading_element(part.title or part.rel or "")
            out.append(self.renderer.heading(fake, 0, _Ctx()))
            if not headings_only:
                out.append(self.renderer.placeholder(f"Chapter not available: {part.rel} ({part.missing})", _Ctx()))
            return out
        if not self.is_book and not any(e.kind is not ElementKind.FRONT_MATTER for e in doc.elements):
            # an empty note or front matter alone made a blank PDF and no word of why; a book's empty
            # chapter is not blank: its contents title heads it (decision 474)
            self.warnings.add(f"{part.rel} has no content to print (it is empty or holds front matter only).")
        if self.is_book and not doc.headings:
            # No heading of its own: the table of contents' title stands in, so the chapter has
            # its entry in the contents and the outline (an empty one is not a blank page).
            if not chapter.heading_keys:
                chapter.heading_keys.append(f"{chapter.key}h0")
            out.append(self.renderer.heading(_heading_element(part.title or part.rel or ""), 0, _Ctx()))
        if headings_only:
            out += self.renderer.headings(doc)
        else:
            env: MutableMapping[str, Any] = {}
            out += self.renderer.document(doc, env, _Ctx(), top=True)
        return out

    def style_cjk(self, style: Any, text: str) -> Any:
        return self.renderer.style(style, 0, None, True) if self.fonts.needs_cjk_wrap(text) else style


def _first_heading(doc: Document) -> str:
    first = next((h for h in doc.headings), None)
    return (first.title or "") if first is not None else ""


def _heading_element(title: str) -> Any:
    from ...markdown import Element

    return Element("0", ElementKind.HEADING, 0, 0, ((0, 0),), "# " + title, "", "", level=1, title=title)


def render_book(guard: PathGuard, rel: str, doc: Document, out: PdfSink, options: BookOptions) -> list[str]:
    """Lay out ``doc`` (a document or a book's table of contents) as a PDF into ``out``.

    Returns the warnings: pictures and chapters replaced by placeholders and
    characters no installed font could draw.
    """
    book = _Book(guard, rel, options)
    doc = for_print(doc, rel, book.warnings.add, book.include(rel), book.embed(rel))
    parts = book.parts(doc)
    story, info, title_page = book.story(doc, parts)
    contents = next((f for f in story if isinstance(f, TableOfContents)), None)
    has_contents = contents is not None
    if contents is not None:
        contents.addEntries(contents_entries(story + book.headings, book.fonts, book.sheet))
    book.headings = []  # not held through the layout
    # pass 1 places the pages, pass 2 prints the contents' page numbers and finds them settled
    book.progress.passes = 2 if has_contents else 1

    class Template(_Template):
        _page = PAGE_FORMATS[options.page_format]

    template = Template(
        out,
        book.sheet,
        book.fonts,
        title_page,
        title=info["title"],
        author=info["author"],
        creator="local-vector-search-mcp",
        producer="local-vector-search-mcp (reportlab)",
    )
    template.progress = book.progress
    template.setProgressCallBack(book.progress.reportlab)
    if any(isinstance(f, _Deferred) for f in story):
        template.make = book.make
        book.lasting.update(map(id, story))
        template.lasting = book.lasting  # the same set: kept blocks join it as they are made
    if has_contents:
        template.layout_first = True
        template.multiBuild(story, maxPasses=4, canvasmaker=BookCanvas)
    else:
        book.progress.reportlab("PASS", 1)  # build() announces no pass; multiBuild() does
        template.build(story, canvasmaker=BookCanvas)
    book.warnings.muted = False
    book.progress.step(book.progress.total, f"Laid out {book.progress.page} pages", final=True)
    if book.fonts.missing:
        chars = "".join(sorted(book.fonts.missing)[:40])
        advice = (
            " (install a TrueType CJK font such as fonts-wqy-microhei or set export.pdf.cjkFont)"
            if book.fonts.cjk is None
            else ""  # a CJK face is there: emoji and rare symbols are what no face has
        )
        book.warnings.add(
            f"{len(book.fonts.missing)} distinct characters could not be rendered because no installed font has "
            f"them{advice}: {chars}"
        )
    if book.fonts.unused_cjk_font is not None and (book.fonts.missing or book.fonts.cjk_set):
        # said when it mattered: CJK text was set with another font, or text could not be set at all
        used = "no other CJK font was found" if book.fonts.cjk is None else "an installed CJK font was used instead"
        book.warnings.add(
            f"export.pdf.cjkFont {book.fonts.unused_cjk_font!r} was not found or cannot be used (a .ttf or .ttc "
            f"file, or a font family fontconfig knows): {used}."
        )
    if book.fonts.right_to_left:
        book.warnings.add(
            "Right-to-left text (Hebrew, Arabic, ...) is set left to right: its letters and words appear in "
            "reverse order and Arabic letters are not joined. The PDF export does not lay out right-to-left "
            "scripts; read such documents as Markdown."
        )
    return book.warnings.result()


def render_file(guard: PathGuard, rel: str, out: PdfSink, options: BookOptions) -> list[str]:
    """Convenience for tests and the bench: read ``rel`` through the guard and render it."""
    rel, path = guard.resolve(rel, markdown=True)
    return render_book(guard, rel, parse_document(read_source(path, rel)), out, options)


def _reason(message: str) -> str:
    """A read error's message as a placeholder's reason (its own sentence, without the final stop)."""
    return message.rstrip(".")
