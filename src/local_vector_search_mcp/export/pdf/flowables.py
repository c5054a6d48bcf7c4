"""One element of the element model -> reportlab flowables.

:class:`BlockRenderer` walks a parsed :class:`~local_vector_search_mcp.markdown.Document`
in source order. Containers (list items with several blocks, block quotes,
alerts, callouts) are re-parsed with the project's own ``parse_text`` after their
markers are stripped and rendered recursively. Text between elements (thematic breaks,
HTML blocks, link reference definitions) is not an element; it is tokenised by
markdown-it on its own, which is how reference-style links resolve.
"""

from __future__ import annotations

import html
import posixpath
import re
import unicodedata
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_LEFT, TA_RIGHT
from reportlab.lib.styles import ParagraphStyle
from reportlab.platypus import (
    CondPageBreak,
    Flowable,
    HRFlowable,
    Image,
    Indenter,
    Spacer,
    Table,
    TableStyle,
    XPreformatted,
)
from reportlab.platypus.doctemplate import FrameBG

from ...markdown import Document, Element, ElementKind, parse_text, table_source
from .fonts import FontSet
from .images import ImageStore, Missing, Picture, Vector
from .inline import FOOTNOTES, MD, InlineImage, InlineRenderer, html_image
from .kinsoku import Paragraph
from .styles import Sheet

__all__ = ["BlockRenderer", "Heading", "Outline"]

_MARKER = re.compile(r"( *)([-+*]|(\d{1,9})([.)]))([ \t]+|$)")
_TASK = re.compile(r"\[([ xX])\][ \t]+")
_QUOTE = re.compile(r"^ {0,3}> ?", re.MULTILINE)
# A quote's first line that makes it a GitHub alert (``[!NOTE]``, one of five types, alone) or an
# Obsidian callout (``[!info]- Title``: any type, a fold sign, a title; decision 1009).
_CALLOUT = re.compile(r"^\[!([\w-]+)\][+-]?[ \t]*(.*?)[ \t]*$")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+|$)|[ \t]+#+[ \t]*$|^#+[ \t]*$")
# An HTML tag ends at the first ``>`` outside its quoted attribute values: mdBook's captions hold
# types (``caption="Using `RefCell<T>` to ..."``, decision 1139); a tag whose quote never closes
# ends at its first ``>``, as before.
_QUOTED_TAG = r"""(?:[^>"']|"[^"]*"|'[^']*')*>"""
_IMG_TAG = re.compile(rf"<img\b{_QUOTED_TAG}|<img\b[^>]*>", re.IGNORECASE | re.DOTALL)
_LISTING_TAG = re.compile(rf"<Listing\b{_QUOTED_TAG}|<Listing\b[^>]*>")
_ATTR = re.compile(r"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*("([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_TAG = re.compile(rf"<[A-Za-z/!]{_QUOTED_TAG}|<[^>]*>", re.DOTALL)
# An HTML table (decision 1143): its rows and cells, each closed by its end tag or the next one.
_HTML_TABLE = re.compile(r"<table\b.*?</table\s*>", re.IGNORECASE | re.DOTALL)
_HTML_TABLE_OPEN = re.compile(r"<table\b", re.IGNORECASE)
_HTML_ROW = re.compile(r"<tr\b[^>]*>(.*?)(?=<tr\b|</tr\s*>|</table\s*>)", re.IGNORECASE | re.DOTALL)
_HTML_CELL = re.compile(r"<(t[hd])\b[^>]*>(.*?)(?=<t[hd]\b|</t[hd]\s*>|$)", re.IGNORECASE | re.DOTALL)
_HTML_PARAGRAPH = re.compile(r"</p\s*>\s*<p\b[^>]*>", re.IGNORECASE)
# An HTML block that is one ``<div>`` a site styles as a callout, and the callout's colours by class
# (its class read apart: a pattern that looked for the word inside the value took seconds on a long
# value that never closed)
_HTML_BOX = re.compile(r"""^\s*<div\b[^>]{0,300}?\bclass\s*=\s*["']([^"'<>]{0,300})["']""", re.IGNORECASE)
_HTML_BOX_CLASSES = {"callout", "admonition", "alert", "warning", "note", "tip", "important", "caution", "danger"}
_HTML_BOX_END = re.compile(r"</div\s*>\s*$", re.IGNORECASE)
_HTML_BOX_KINDS = {
    **dict.fromkeys(("primary", "info", "note", "seealso"), "note"),
    **dict.fromkeys(("success", "tip", "hint"), "tip"),
    "important": "important",
    **dict.fromkeys(("warning", "attention"), "warning"),
    **dict.fromkeys(("alert", "danger", "error", "caution"), "caution"),
}
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9]*)")
_BLOCK_TAGS = {
    *("p", "div", "section", "article", "aside", "header", "footer", "nav", "main", "center", "blockquote"),
    *("ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "pre", "figure", "figcaption"),
    *("details", "summary", "table", "tr", "form", "fieldset", "address"),
}
_SCRIPT = re.compile(r"<(script|style)\b.*?(</\1\s*>|$)", re.DOTALL | re.IGNORECASE)
# A footnote's definition on a line of its own (GFM).
_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]*(.*)$", re.MULTILINE)
# A custom heading id (``## Title {#id}``), as VitePress and Pandoc write it.
HEADING_ID = re.compile(r"[ \t]*\{#([^}\s]+)\}[ \t]*$")
_COMPLEX = re.compile(r"^(?: {0,3}(?:```|~~~|>|\|)|    |\t)", re.MULTILINE)
# Code blocks are cut into pieces of this many lines: splitting one huge
# preformatted block page by page would re-measure all of it every time.
_CODE_CHUNK = 60
# Tables: 4 pt of padding each side plus a hair; a table over this many cells is printed as its
# text (reportlab lays out every cell as a paragraph, ~0.1 ms each); the first column is repeated
# in every part of a split table when it takes at most this share of the width.
CELL_PADDING = 8.5
# Hostile nesting and lengths (bounded time, no recursion limit): containers deeper than this are
# printed as their Markdown text; indentation stops growing at this share of the frame; a paragraph
# longer than this many characters is set in pieces cut between words.
MAX_NESTING = 40
MAX_INDENT_SHARE = 0.5
MAX_PARAGRAPH_CHARS = 20_000
MAX_TABLE_CELLS = 20_000
KEY_COLUMN_SHARE = 0.25
# A column whose longest word is wider than its share of the width has that word broken across
# lines, down to this share of the width, before the table is printed in parts (decision 1135).
BROKEN_WORD_SHARE = 0.25
# A picture in a cell takes at least this share of the width, unless it asks for less (1136).
PICTURE_SHARE = 0.2
_PICTURE = re.compile(r"<img\b|!\[", re.IGNORECASE)
_ALERT_COLORS = {
    "note": ("#0969da", "#eef5ff"),
    "tip": ("#1a7f37", "#eefaf1"),
    "important": ("#8250df", "#f5f0ff"),
    "warning": ("#9a6700", "#fff8e5"),
    "caution": ("#cf222e", "#ffefef"),
}
# Obsidian's other callout types by the GitHub colour nearest theirs; any type not here is a note
_CALLOUT_COLORS = {
    **{kind: "tip" for kind in ("hint", "success", "check", "done")},
    **{kind: "important" for kind in ("example",)},
    **{kind: "warning" for kind in ("attention", "question", "help", "faq")},
    **{kind: "caution" for kind in ("danger", "error", "failure", "fail", "missing", "bug")},
}


@dataclass(frozen=True)
class Outline:
    """What the page template does when a heading is drawn (bookmark, outline, TOC)."""

    key: str
    title: str  # plain text
    level: int
    toc: bool


class Heading(Paragraph):
    """A heading paragraph that carries its outline entry and, in some styles, a rule below.

    The rule is drawn by the heading itself rather than being a flowable of its own, so
    ``keepWithNext`` keeps the heading with the block after it (a group would not be).
    """

    def __init__(
        self,
        text: str | None,
        style: ParagraphStyle,
        outline: Outline | None = None,
        rule: tuple[float, colors.Color] | None = None,
        **parts: Any,  # reportlab's split makes the parts as ``cls(None, style, bulletText=, frags=)``
    ) -> None:
        super().__init__(text, style, **parts)
        self.outline = outline
        self.rule = rule

    def split(self, availWidth: float, availHeight: float) -> list[Flowable]:
        """A heading taller than the page is split like any paragraph (it failed the export with a
        TypeError): the first part carries the outline entry, the last the rule."""
        parts: list[Flowable] = super().split(availWidth, availHeight)
        for i, part in enumerate(parts):
            if isinstance(part, Heading):
                part.outline = self.outline if i == 0 else None
                part.rule = self.rule if i == len(parts) - 1 else None
        return parts

    def draw(self) -> None:
        if self.outline is not None:
            # the destination of the outline, the TOC and links, at the heading's top; an
            # ``<a name>`` in the markup would do too, but it stops reportlab from breaking a
            # word longer than the line, which then ran off the page
            self.canv.bookmarkHorizontal(self.outline.key, 0, self.height)
        super().draw()
        if self.rule is not None:
            width, color = self.rule
            self.canv.saveState()
            self.canv.setStrokeColor(color)
            self.canv.setLineWidth(width)
            y = -self.style.fontSize * 0.3
            self.canv.line(0, y, self.width, y)
            self.canv.restoreState()


class VectorPicture(Flowable):  # type: ignore[misc]  # reportlab ships no type hints
    """An SVG's drawing scaled to its size on the page; the drawing itself, shared by every use of
    the same picture, is left unchanged."""

    def __init__(self, vector: Vector) -> None:
        super().__init__()
        self.vector = vector
        self.width, self.height = vector.width, vector.height

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        from reportlab.graphics import renderPDF

        drawing = self.vector.drawing
        self.canv.saveState()
        self.canv.scale(self.width / drawing.width, self.height / drawing.height)
        renderPDF.draw(drawing, self.canv, 0, 0)
        self.canv.restoreState()


@dataclass
class Chapter:
    """The document being rendered and what its headings and links resolve to."""

    rel: str
    depth: int  # outline level of the chapter's top heading
    key: str  # destination of the chapter's start
    slugs: dict[str, str] = field(default_factory=dict)  # heading slug -> destination key
    heading_keys: list[str] = field(default_factory=list)  # destination of each heading, in order
    min_level: int = 1
    numbered: bool = True


@dataclass
class _Ctx:
    """Where a block is drawn: its left indent and the base width left for it."""

    indent: float = 0.0
    first_bullet: str | None = None
    depth: int = 0  # containers (quotes, list items) around it


class BlockRenderer:
    def __init__(
        self,
        sheet: Sheet,
        fonts: FontSet,
        images: ImageStore,
        links: Callable[[Chapter, str], str | None],
        warn: Callable[[str], None],
    ) -> None:
        self.sheet = sheet
        self.fonts = fonts
        self.images = images
        self.warn = warn
        self._links = links
        self.theme = sheet.theme
        self.body_family = fonts.family(self.theme.body)
        self.chapter: Chapter | None = None
        self.inline = InlineRenderer(
            fonts, self._resolve_link, self.theme.accent.hexval().replace("0x", "#"), self._wikilink_href
        )
        self.counters = [0] * 6
        self.last_level = -1
        self._styles: dict[tuple[str, float, int], ParagraphStyle] = {}

    # ------------------------------------------------------------------ helpers

    def _resolve_link(self, href: str) -> str | None:
        assert self.chapter is not None
        return self._links(self.chapter, href)

    def _wikilink_href(self, target: str) -> str | None:
        """``[[Note#Part]]`` in the current chapter as the relative href of the note it reaches."""
        assert self.chapter is not None
        return wikilink_href(target, self.chapter.rel, self.images.find_note)

    def style(self, base: ParagraphStyle, indent: float, align: int | None = None, cjk: bool = False) -> ParagraphStyle:
        key = (base.name, indent, (align if align is not None else -1) + (100 if cjk else 0))
        style = self._styles.get(key)
        if style is None:
            extra: dict[str, Any] = {"wordWrap": "CJK"} if cjk else {}
            style = ParagraphStyle(
                f"{base.name}-{len(self._styles)}",
                parent=base,
                leftIndent=base.leftIndent + indent,
                bulletIndent=base.leftIndent + indent - self.sheet.body.fontSize * 1.4,
                alignment=base.alignment if align is None else align,
                **extra,
            )
            self._styles[key] = style
        return style

    def para(
        self, markup: str, base: ParagraphStyle, ctx: _Ctx, source: str = "", bullet: str | None = None
    ) -> Paragraph:
        cjk = self.fonts.needs_cjk_wrap(source)
        style = self.style(base, ctx.indent, None, cjk)
        if bullet is not None:
            return Paragraph(markup, style, bulletText=bullet)
        return Paragraph(markup, style)

    def width(self, ctx: _Ctx) -> float:
        return self.sheet.frame_width - ctx.indent

    def _inner(self, ctx: _Ctx, step: float, bullet: str | None = None) -> _Ctx:
        """The context of a container's content: indented by ``step``, but never past
        :data:`MAX_INDENT_SHARE` of the frame (deep nesting must leave room for the text)."""
        indent = min(ctx.indent + step, max(ctx.indent, self.sheet.frame_width * MAX_INDENT_SHARE))
        return _Ctx(indent, bullet, ctx.depth + 1)

    # ------------------------------------------------------------------ documents

    def document(self, doc: Document, env: MutableMapping[str, Any], ctx: _Ctx, top: bool = False) -> list[Flowable]:
        """All of ``doc``'s blocks, in order; ``top`` when it is a chapter (headings count)."""
        out: list[Flowable] = []
        gaps = self._gaps(doc, env)
        covered = 0
        lists: dict[tuple[str | None, str], int] = {}  # open lists: (parent, delimiter) -> next number
        heading_index = 0
        after_heading = True
        for element in doc.elements:
            if element.start >= covered:
                gap = gaps.get(element.start)
                if gap:
                    out += self._gap(gap, env, ctx)
                    lists.clear()
                covered = max(covered, element.end)
                if element.kind is not ElementKind.LIST_ITEM:
                    lists.clear()
            kind = element.kind
            if kind is ElementKind.FRONT_MATTER:
                continue
            if kind is ElementKind.HEADING:
                # a heading needs room for a few lines after it, else it starts the next page
                out.append(CondPageBreak(self.sheet.body.leading * 5))
                out.append(self.heading(element, heading_index if top else None, ctx))
                heading_index += 1
                after_heading = True
                continue
            if kind is ElementKind.PARAGRAPH and _FOOTNOTE_DEF.match(element.text):
                out += self.footnotes(element.text, env, ctx)
            elif kind is ElementKind.PARAGRAPH:
                out += self.paragraph(element.text, env, ctx, first=after_heading)
            elif kind is ElementKind.CODE_BLOCK:
                out += self.code(element.text, ctx)
            elif kind is ElementKind.LIST_ITEM:
                out += self.list_item(doc, element, env, ctx, lists)
            elif kind is ElementKind.TABLE:
                out += self.table(doc, element, env, ctx)
            elif kind is ElementKind.BLOCK_QUOTE:
                out += self.quote(element.text, env, ctx)
            after_heading = False
            if ctx.first_bullet is not None and out:
                ctx = _Ctx(ctx.indent, None, ctx.depth)  # the bullet went to the first block
        tail = gaps.get(len(doc.text))
        if tail:
            out += self._gap(tail, env, ctx)
        return out

    def headings(self, doc: Document) -> list[Flowable]:
        """The headings :meth:`document` makes of a chapter (``top``), and only them, numbered
        the same: a book's contents are known before its chapters are laid out."""
        found = (e for e in doc.elements if e.kind is ElementKind.HEADING)
        return [self.heading(element, index, _Ctx()) for index, element in enumerate(found)]

    def _gaps(self, doc: Document, env: MutableMapping[str, Any]) -> dict[int, str]:
        """Text not covered by any top-level element, keyed by where it ends.

        Parsed once up front so that link reference definitions anywhere in
        the document are known before the first paragraph is rendered.
        """
        gaps: dict[int, str] = {}
        covered = 0
        for element in doc.elements:
            if element.start >= covered:
                if doc.text[covered : element.start].strip():
                    gaps[element.start] = doc.text[covered : element.start]
                covered = max(covered, element.end)
        if doc.text[covered:].strip():
            gaps[len(doc.text)] = doc.text[covered:]
        for text in gaps.values():
            if "]:" in text:
                MD.parse(text, env)
        # CommonMark reads a footnote definition (``[^1]: text``) as a link reference definition:
        # its text would vanish and every ``[^1]`` become a link to a file named after its first word.
        # A definition with more than one word is a paragraph instead, printed raw. Both are set as
        # footnotes where they are written, and references to them as raised labels.
        if "[^" in doc.text:
            env.setdefault(FOOTNOTES, set()).update(m.group(1).lower() for m in _FOOTNOTE_DEF.finditer(doc.text))
            _drop_footnote_references(env)
        return gaps

    def _gap(self, text: str, env: MutableMapping[str, Any], ctx: _Ctx) -> list[Flowable]:
        out: list[Flowable] = []
        tokens = MD.parse(text, env)
        _drop_footnote_references(env)
        covered = {line for tok in tokens if tok.map and tok.level == 0 for line in range(*tok.map)}
        notes = [
            (line, m.group(1), m.group(2))
            for line, m in ((text.count("\n", 0, m.start()), m) for m in _FOOTNOTE_DEF.finditer(text))
            if line not in covered
        ]
        for i, tok in enumerate(tokens):
            while notes and tok.map and tok.level == 0 and notes[0][0] < tok.map[0]:
                out.append(self.footnote(*notes.pop(0)[1:], env, ctx))
            if tok.type == "hr":
                out.append(
                    HRFlowable(
                        width="60%" if self.theme.heading_center else "100%",
                        thickness=0.6,
                        color=colors.HexColor("#999999"),
                        spaceBefore=self.sheet.body.fontSize * 0.6,
                        spaceAfter=self.sheet.body.fontSize * 0.9,
                    )
                )
            elif tok.type == "html_block":
                out += self.html_block(tok.content, ctx, env)
            elif tok.type == "inline" and i and tokens[i - 1].type == "paragraph_open":
                out += self.paragraph(tok.content, env, ctx)  # never lose text a gap happened to hold
            elif tok.type in ("fence", "code_block"):
                out += self.code_lines(tok.content.rstrip("\n").split("\n"), ctx)
        out += [self.footnote(label, note, env, ctx) for _, label, note in notes]
        return out

    def footnotes(self, text: str, env: MutableMapping[str, Any], ctx: _Ctx) -> list[Flowable]:
        """A paragraph of footnote definitions: each line that starts one begins the next footnote."""
        notes: list[tuple[str, list[str]]] = []
        for line in text.split("\n"):
            match = _FOOTNOTE_DEF.match(line)
            if match is not None:
                notes.append((match.group(1), [match.group(2)]))
            else:
                notes[-1][1].append(line.strip())
        return [self.footnote(label, "\n".join(lines), env, ctx) for label, lines in notes]

    def footnote(self, label: str, text: str, env: MutableMapping[str, Any], ctx: _Ctx) -> Flowable:
        """A footnote's definition where it was written: its label raised, then its text."""
        rendered = self.inline.render(text, self.body_family, env)
        mark = f"<super>{self.fonts.markup(label, self.body_family)}</super> "
        return self.para(mark + rendered.markup, self.sheet.small, ctx, text)

    # ------------------------------------------------------------------ blocks

    def heading(self, element: Element, index: int | None, ctx: _Ctx) -> Flowable:
        chapter = self.chapter
        assert chapter is not None
        raw = HEADING_ID.sub("", element.title if element.title is not None else _heading_text(element.text))
        level = element.level or 1
        title = self.inline.plain(raw) or raw
        if index is None:  # a heading inside a quote or list item: styled, not in the outline
            rendered = self.inline.render(raw, self.fonts.family(self.theme.heading))
            return self.para(rendered.markup, self.sheet.headings[min(5, level + 1)], ctx, raw)
        wanted = chapter.depth + max(0, level - chapter.min_level)
        outline_level = min(wanted, self.last_level + 1)
        self.last_level = outline_level
        number = ""
        if self.theme.number_headings and chapter.numbered and outline_level < 3:
            self.counters[outline_level] += 1
            for deeper in range(outline_level + 1, 6):
                self.counters[deeper] = 0
            number = ".".join(str(n) for n in self.counters[: outline_level + 1]) + "  "
        key = chapter.heading_keys[index]
        rendered = self.inline.render(raw, self.fonts.family(self.theme.heading))
        style = self.sheet.headings[min(5, outline_level)]
        if self.fonts.needs_cjk_wrap(raw):
            style = self.style(style, 0, None, True)
        markup = f"{self.fonts.markup(number, self.body_family)}{rendered.markup}"
        rule = None
        if self.theme.heading_rule and outline_level <= 1:
            rule = (1.2 if outline_level == 0 else 0.6, self.theme.accent)
        return Heading(markup, style, Outline(key, number + title, outline_level, outline_level <= 2), rule)

    def paragraph(self, text: str, env: MutableMapping[str, Any], ctx: _Ctx, first: bool = False) -> list[Flowable]:
        out: list[Flowable] = []
        bullet = ctx.first_bullet
        # reportlab re-wraps the rest of a paragraph at every page break (quadratic: a 1 MB
        # line took minutes); a huge one is set as consecutive paragraphs cut between words.
        for piece in _pieces(text, MAX_PARAGRAPH_CHARS):
            rendered = self.inline.render(piece, self.body_family, env)
            if not rendered.only_images and rendered.markup:
                base = self.sheet.first if first or ctx.indent else self.sheet.body
                out.append(self.para(rendered.markup, base, ctx, piece, bullet))
                bullet = None
            for image in rendered.images:
                out += self.picture(image, ctx)
        if bullet is not None and out:
            out.insert(0, self.para("", self.sheet.first, ctx, "", bullet))
        return out

    def picture(self, image: InlineImage, ctx: _Ctx, box: tuple[float, float] | None = None) -> list[Flowable]:
        """``image`` as a picture at most ``box`` (default: the width left and 3/4 of the frame's
        height) in size, or a placeholder."""
        assert self.chapter is not None
        width, height = box or (self.width(ctx), self.sheet.frame_height * 0.75)
        if image.share is not None:  # <img width="50%">: a share of the width left
            width *= image.share
        if image.size is not None:  # an embed's |width or |widthxheight, an <img>'s size, bounds it further
            width = min(width, image.size[0] or width)
            height = min(height, image.size[1] or height)
        loaded = self.images.load(image.src, self.chapter.rel, width, height, embed=image.embed)
        if isinstance(loaded, Missing):
            # markdown-it percent-encodes the reference (`{{site.url}}` read `%7B%7Bsite.url%7D%7D`):
            # name it as the reader wrote it
            written = MD.normalizeLinkText(image.src)
            self.warn(f"Image {written!r} in {self.chapter.rel} was replaced by a placeholder: {loaded.reason}.")
            return [self.placeholder(f"Image not available: {image.alt or written}", ctx, in_cell=box is not None)]
        return [self._image(loaded, ctx, image.alt)]

    def _image(self, picture: Picture | Vector, ctx: _Ctx, alt: str) -> Flowable:
        # A bare flowable (no group around it), so a heading's keepWithNext can take it along.
        flow: Flowable
        if isinstance(picture, Vector):
            flow = VectorPicture(picture)
        else:
            flow = Image(picture.source, width=picture.width, height=picture.height)
        flow.hAlign = "CENTER"
        flow.spaceBefore = flow.spaceAfter = self.sheet.body.fontSize * 0.5
        return flow

    def placeholder(self, text: str, ctx: _Ctx, in_cell: bool = False) -> Flowable:
        # in a table cell its border stays within the cell's 4 pt padding (decision 1136)
        pad = 2.5 if in_cell else 6
        style = ParagraphStyle(
            "placeholder",
            parent=self.style(self.sheet.small, ctx.indent, TA_CENTER),
            borderWidth=0.6,
            borderColor=colors.HexColor("#b0b0b0"),
            borderPadding=pad,
            backColor=colors.HexColor("#f4f4f4"),
            spaceBefore=pad + 1 if in_cell else 8,
            spaceAfter=pad + 1 if in_cell else 12,
        )
        return Paragraph(f"<i>{self.fonts.markup(text, self.body_family)}</i>", style)

    def code(self, text: str, ctx: _Ctx) -> list[Flowable]:
        lines = text.split("\n")
        first = lines[0].lstrip(" ")
        if first.startswith(("```", "~~~")):
            fence = first[:3]
            indent = len(lines[0]) - len(first)
            body = lines[1:]
            if body and body[-1].strip().startswith(fence) and not body[-1].strip().strip(fence[0]):
                body = body[:-1]
            lines = [line[min(indent, len(line) - len(line.lstrip(" "))) :] for line in body]
        else:
            lines = [_dedent(line, 4) for line in lines]
        return self.code_lines(lines, ctx)

    def code_lines(self, lines: list[str], ctx: _Ctx) -> list[Flowable]:
        mono = self.fonts.mono
        style = self.sheet.code
        pad = 5.0
        columns = max(16, int((self.width(ctx) - 2 * pad) / (style.fontSize * 0.602)))
        mark = "\u21aa " if mono.covers("\u21aa") else "> "
        wrapped: list[str] = []
        for line in lines:
            wrapped += _wrap(line.expandtabs(4), columns, mark)
        if not wrapped:
            wrapped = [""]
        out: list[Flowable] = [
            # room for its first lines (all of a short block), else it starts the next page: its box
            # was begun as an empty sliver at the foot of a page (decision 1141)
            CondPageBreak(style.fontSize * 0.3 + pad * 1.2 + style.leading * min(len(wrapped), 3)),
            Spacer(1, style.fontSize * 0.3),
            FrameBG(
                color=self.theme.code_bg,
                left=ctx.indent,
                strokeWidth=0.5 if self.theme.code_border else None,
                strokeColor=colors.HexColor("#c8c8c8") if self.theme.code_border else None,
            ),
            Indenter(left=ctx.indent + pad, right=pad),
            Spacer(1, pad * 0.6),
        ]
        for i in range(0, len(wrapped), _CODE_CHUNK):
            chunk = "\n".join(self.fonts.markup(line, mono) for line in wrapped[i : i + _CODE_CHUNK])
            out.append(XPreformatted(chunk, style))
        out += [Spacer(1, pad * 0.6), Indenter(left=-(ctx.indent + pad), right=-pad), FrameBG(start=False)]
        out.append(Spacer(1, self.sheet.body.fontSize * 0.6))
        return out

    def list_item(
        self,
        doc: Document,
        element: Element,
        env: MutableMapping[str, Any],
        ctx: _Ctx,
        lists: dict[tuple[str | None, str], int],
    ) -> list[Flowable]:
        # Indentation in columns, tabs to the next multiple of 4 as in CommonMark: editors such as
        # Obsidian indent nested lists with tabs, which the marker and the dedent below must see.
        own = "\n".join(_expand_indent(doc.text[a:b]) for a, b in element.segments)
        first_line, _, rest = own.partition("\n")
        match = _MARKER.match(first_line)
        if match is None:  # not expected from the parser; keep the text
            return self.paragraph(own, env, ctx)
        content_indent = (
            len(match.group(0))
            if match.group(5) and len(match.group(5)) <= 4
            else len(match.group(1)) + len(match.group(2)) + 1
        )
        delimiter = match.group(4) or match.group(2)
        key = (element.parent, delimiter)
        if match.group(3) is not None:
            number = lists.get(key, int(match.group(3)))
            bullet = f"{number}{delimiter}"
            lists[key] = number + 1
        else:
            lists[key] = 0
            depth = _depth(doc, element)
            bullet = ("\u2022", "\u25e6", "\u25aa")[depth % 3]
        content = first_line[match.end() :]
        task = _TASK.match(content)
        if task is not None:
            checked = task.group(1) != " "
            box = "\u2611" if checked else "\u2610"
            bullet = box if self.body_family.covers(box) else ("[x]" if checked else "[ ]")
            content = content[task.end() :]
        body = [content] + [_dedent(line, content_indent) for line in rest.split("\n")] if rest else [content]
        text = "\n".join(body)
        depth = _depth(doc, element)
        inner = self._inner(ctx, self.sheet.body.fontSize * 1.6 * (depth + 1), bullet)
        if not _COMPLEX.search(text) and "\n\n" not in text.strip("\n"):
            return self.paragraph(text, env, inner, first=True)
        if inner.depth > MAX_NESTING:  # deeper containers are shown as their Markdown text
            return self.code(text, inner)
        nested = parse_text(text)
        out = self.document(nested, env, inner)
        if not out:
            out = [self.para("", self.sheet.first, inner, "", bullet)]
        return out

    def quote(self, text: str, env: MutableMapping[str, Any], ctx: _Ctx) -> list[Flowable]:
        inner = _QUOTE.sub("", text)
        first, _, rest = inner.partition("\n")
        callout = _CALLOUT.match(first.strip())
        pad = self.sheet.body.fontSize * 0.8
        if callout is not None:
            kind, written = callout.group(1).lower(), callout.group(2)
            ink, paper = _ALERT_COLORS.get(_CALLOUT_COLORS.get(kind, kind), _ALERT_COLORS["note"])
            inner = rest
            title_style = ParagraphStyle(
                "alert-title",
                parent=self.style(self.sheet.first, ctx.indent + pad, None, self.fonts.needs_cjk_wrap(written)),
                fontName=self.body_family.bold,
                textColor=colors.HexColor(ink),
                spaceAfter=2,
            )
            # its title, else its type's name; the fold sign is not printed (a PDF shows the body)
            title = self.inline.render(written, self.body_family, env).markup
            title = title or self.fonts.markup(kind.capitalize(), self.body_family)
            head: list[Flowable] = [Paragraph(title, title_style)]
            bg = colors.HexColor(paper)
            stroke: colors.Color | None = colors.HexColor(ink)
        else:
            head = []
            bg = self._plain_box()
            stroke = None
        inside = self._inner(ctx, pad)
        # deeper containers are shown as their Markdown text
        deep = inside.depth > MAX_NESTING
        body = self.code(inner, inside) if deep else self.document(parse_text(inner), env, inside)
        # room for its title and two lines, else it starts the next page: an alert's title was
        # left alone at the foot of a page, its body on the next (decision 1141)
        return self._framed([*head, *body], ctx, pad, bg, stroke, 3 if head else 2)

    def _framed(
        self, content: list[Flowable], ctx: _Ctx, pad: float, bg: colors.Color, stroke: colors.Color | None, lines: int
    ) -> list[Flowable]:
        """``content`` in a box of ``bg`` (outlined in ``stroke``), kept from starting at a page's
        foot with fewer than ``lines`` body lines of room."""
        return [
            CondPageBreak(2 + pad * 0.8 + lines * self.sheet.body.leading),
            Spacer(1, 2),
            FrameBG(color=bg, left=ctx.indent, strokeWidth=0.6 if stroke else None, strokeColor=stroke),
            Spacer(1, pad * 0.5),
            *content,
            Spacer(1, pad * 0.3),
            FrameBG(start=False),
            Spacer(1, self.sheet.body.fontSize * 0.6),
        ]

    def _plain_box(self) -> colors.Color:
        """The background of a box without an alert's colours."""
        return colors.HexColor("#f2f2f2") if self.theme.body == "sans" else colors.HexColor("#f7f5ef")

    def table(self, doc: Document, element: Element, env: MutableMapping[str, Any], ctx: _Ctx) -> list[Flowable]:
        try:
            source = table_source(doc, element)
        except Exception:  # not a table we can split: show its text rather than lose it
            return self.code(element.text, ctx)
        columns = source.column_count
        rows = [source.header, *source.rows]
        if columns * len(rows) > MAX_TABLE_CELLS:
            self.warn(
                f"A table of {len(rows)} rows x {columns} columns ({columns * len(rows)} cells, over "
                f"{MAX_TABLE_CELLS}) is printed as its Markdown text."
            )
            return self.code(element.text, ctx)
        aligns = [{"center": TA_CENTER, "right": TA_RIGHT}.get(a, TA_LEFT) for a in source.alignments] + [
            TA_LEFT
        ] * columns
        raw = [[c.raw for c in row.cells[:columns]] + [""] * (columns - len(row.cells)) for row in rows]
        return self.grid(raw, aligns, env, ctx)

    def grid(
        self,
        raw: list[list[str]],
        aligns: list[int],
        env: MutableMapping[str, Any],
        ctx: _Ctx,
        header: bool = True,
    ) -> list[Flowable]:
        """Rows of inline Markdown cells (as many in each row) as a table, or as parts of it."""
        columns = len(raw[0])
        available = self.width(ctx) - 2
        natural, minimum = self._measure(raw, available)
        minimum = break_long_words(minimum, available)
        groups = column_groups(minimum, available)
        out: list[Flowable] = [Spacer(1, 3)]
        # Too wide for the page even at the narrowest readable widths: printed as several tables
        # of consecutive columns, each after the first repeating column 1 as the row's key.
        key = len(groups) > 1 and all(group[0] == 0 for group in groups)
        for part, group in enumerate(groups):
            if len(groups) > 1:
                first = group[1] if key and part else group[0]
                label = f"Columns {first + 1}\u2013{group[-1] + 1} of {columns}"
                label += ", column 1 repeated" if key and part else ""
                out.append(self.para(f"<i>{self.fonts.markup(label, self.body_family)}</i>", self.sheet.small, ctx))
            widths = fit_widths([natural[c] for c in group], [minimum[c] for c in group], available)
            cells = [[row[c] for c in group] for row in raw]
            table = self._table(cells, [aligns[c] for c in group], widths, env, header)
            if ctx.indent:
                out += [Indenter(left=ctx.indent), table, Indenter(left=-ctx.indent)]
            else:
                out.append(table)
            out.append(Spacer(1, self.sheet.body.fontSize * 0.8))
        return out

    def _table(
        self,
        raw: list[list[str]],
        aligns: list[int],
        widths: list[float],
        env: MutableMapping[str, Any],
        header: bool = True,
    ) -> Table:
        family = self.body_family
        cell, head = self.sheet.cell, self.sheet.cell_head
        data: list[list[Flowable]] = []
        for r, cells in enumerate(raw):
            line = []
            for c, text in enumerate(cells):
                base = head if r == 0 and header else cell
                style = self.style(base, 0, aligns[c], self.fonts.needs_cjk_wrap(text))
                rendered = self.inline.render(text.replace("\\|", "|"), family, env)
                cell_flowables: list[Flowable] = [Paragraph(rendered.markup, style)]
                if rendered.images:
                    # pictures in a cell (icons, screenshots beside their description) were dropped
                    # without a word: drawn in the cell, no taller than a row may be
                    box = (widths[c] - CELL_PADDING, self.sheet.frame_height * 0.6 / len(rendered.images))
                    cell_flowables = cell_flowables[: 0 if rendered.only_images else 1]
                    for image in rendered.images:
                        cell_flowables += self.picture(image, _Ctx(), box)
                line.append(cell_flowables if rendered.images else cell_flowables[0])
            data.append(line)
        table = Table(data, colWidths=widths, repeatRows=1 if header else 0, splitInRow=1, hAlign="LEFT")
        grid = colors.HexColor("#bbbbbb")
        commands: list[tuple[Any, ...]] = [
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("FONT", (0, 0), (-1, -1), family.regular),  # reportlab's default would be unembedded Helvetica
            ("LEFTPADDING", (0, 0), (-1, -1), 4),
            ("RIGHTPADDING", (0, 0), (-1, -1), 4),
            ("TOPPADDING", (0, 0), (-1, -1), 2.5),
            ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
        ]
        if header:
            commands.append(("LINEBELOW", (0, 0), (-1, 0), 0.9, self.theme.heading_color))
        body = 1 if header else 0
        if self.theme.code_border:
            commands.append(("GRID", (0, 0), (-1, -1), 0.4, grid))
            if header:
                commands.append(("BACKGROUND", (0, 0), (-1, 0), self.theme.code_bg))
        else:
            commands.append(("LINEBELOW", (0, body), (-1, -1), 0.3, grid))
            commands.append(("ROWBACKGROUNDS", (0, body), (-1, -1), [colors.white, colors.HexColor("#f8f8f8")]))
        table.setStyle(TableStyle(commands))
        return table

    def _measure(self, raw: list[list[str]], available: float) -> tuple[list[float], list[float]]:
        """Each column's natural width (its longest cell on one line) and minimum (its longest word),
        every run measured in the face it is set in (CJK in the CJK face, decision 1056)."""
        size = self.sheet.cell.fontSize
        pad = CELL_PADDING
        columns = len(raw[0])
        natural = [0.0] * columns
        minimum = [0.0] * columns
        body, mono = self.body_family, self.fonts.mono
        for r, row in enumerate(raw):
            face = body.bold if r == 0 else body.regular  # the header row is set in bold
            for c, text in enumerate(row):
                # code spans are set in the (wider) monospace face: measure them in it
                runs = [
                    (part, mono, mono.regular) if i % 2 else (self.inline.plain(part), body, face)
                    for i, part in enumerate(text.split("`"))
                    if part
                ]
                plain = "".join(part for part, _, _ in runs)
                line = sum(self.fonts.width(t, family, f, size) for t, family, f in runs)
                natural[c] = max(natural[c], min(line * 1.05, available) + pad)
                longest = max(
                    (self.fonts.width(w, family, f, size) for t, family, f in runs for w in t.split()), default=0.0
                )
                if self.fonts.needs_cjk_wrap(plain):
                    longest = min(longest, size * 4)  # CJK text breaks between any two characters
                minimum[c] = max(minimum[c], min(longest, available / 2) + pad)
                if _PICTURE.search(text):
                    # a picture (or its placeholder) measured no width: the column was left a
                    # sliver and the placeholder broke its words between letters (decision 1136)
                    for image in self.inline.render(text, body).images:
                        asked = image.size[0] if image.size is not None and image.size[0] else None
                        natural[c] = max(natural[c], min(asked or available / 3, available / 2) + pad)
                        minimum[c] = max(minimum[c], min(asked or available, available * PICTURE_SHARE) + pad)
        return natural, minimum

    def html_block(self, content: str, ctx: _Ctx, env: MutableMapping[str, Any] | None = None) -> list[Flowable]:
        """Raw HTML: its tables, its pictures and its visible text; comments vanish."""
        text = _SCRIPT.sub("", re.sub(r"<!--.*?(-->|$)", "", content, flags=re.DOTALL))
        out: list[Flowable] = []
        done = 0
        for match in _HTML_TABLE.finditer(text):
            rows, header = _html_rows(match.group(0))
            if not rows or len(rows) * len(rows[0]) > MAX_TABLE_CELLS:
                continue  # a nested or empty table, or a huge one: its text, as before
            out += self._html_text(text[done : match.start()], ctx)
            out += self.grid(rows, [TA_LEFT] * len(rows[0]), env if env is not None else {}, ctx, header)
            done = match.end()
        if not out:
            box = _HTML_BOX.match(text)
            if (
                box is not None
                and not _HTML_BOX_CLASSES.isdisjoint(box.group(1).lower().split())
                and _HTML_BOX_END.search(text)
            ):
                return self._html_box(text, box.group(1), ctx)
        return out + self._html_text(text[done:], ctx)

    def _html_box(self, text: str, classes: str, ctx: _Ctx) -> list[Flowable]:
        """A ``<div>`` a site styles as a callout (Foundation's ``callout warning``, an
        ``admonition note``): its pictures and text in a box of the callout's colours, with no
        title, as the site shows it (decision 1177)."""
        words = classes.lower().split()
        kind = next((_HTML_BOX_KINDS[word] for word in words if word in _HTML_BOX_KINDS), None)
        pad = self.sheet.body.fontSize * 0.8
        if kind is not None:
            ink, paper = _ALERT_COLORS[kind]
            bg, stroke = colors.HexColor(paper), colors.HexColor(ink)
        else:
            bg = self._plain_box()
            stroke = None
        body = self._html_text(text, self._inner(ctx, pad))
        return self._framed(body, ctx, pad, bg, stroke, 2) if body else []

    def _html_text(self, text: str, ctx: _Ctx) -> list[Flowable]:
        """HTML's pictures and visible text (and an mdBook listing's caption)."""
        out: list[Flowable] = []
        caption = _LISTING_TAG.search(text)
        if caption is not None:
            attrs = _attrs(caption.group(0))
            number = f"Listing {attrs.get('number', '')}".strip() + ":"
            if attrs.get("caption") or attrs.get("number"):
                # mdBook renders the caption as Markdown: its code spans are code
                said = self.inline.render(attrs.get("caption", ""), self.body_family).markup
                markup = f"<i>{self.fonts.markup(number, self.body_family)} {said}</i>"
                out.append(self.para(markup, self.sheet.small, ctx, f"{number} {attrs.get('caption', '')}"))
        for tag in _IMG_TAG.findall(text):
            picture = html_image(tag)
            if picture is not None:
                out += self.picture(picture, ctx)
        # a block's tags end its paragraph and ``<br>`` its line, as a browser shows them (decision 1177)
        visible = html.unescape(_TAG.sub(_tag_break, text))
        for block in visible.split("\f"):
            lines = [" ".join(line.split()) for line in block.split("\v")]
            lines = [line for line in lines if line]
            if lines:
                markup = "<br/>".join(self.fonts.markup(line, self.body_family) for line in lines)
                out.append(self.para(markup, self.sheet.small, ctx, "\n".join(lines)))
        return out


def _tag_break(tag: re.Match[str]) -> str:
    """What an HTML tag leaves in the text: ``\\f`` for a block's start or end (a new paragraph),
    ``\\v`` for ``<br>`` (a new line), a space for any other."""
    name = _TAG_NAME.match(tag.group(0))
    if name is None:
        return " "
    name_ = name.group(1).lower()
    return "\v" if name_ == "br" else "\f" if name_ in _BLOCK_TAGS else " "


def break_long_words(minimum: list[float], available: float) -> list[float]:
    """The minimum widths with the widest capped so that the columns fit ``available``, when the
    cap leaves each capped column at least ``BROKEN_WORD_SHARE`` of it (reportlab breaks a word
    wider than its cell between characters); else unchanged, and the table is printed in parts.

    A setting or a URL in a two-column table made it two one-column tables, each cell apart from
    the row it describes (decision 1135).
    """
    if sum(minimum) <= available:
        return minimum
    rest, left = available, len(minimum)
    for width in sorted(minimum):
        cap = rest / left
        if width >= cap:
            break
        rest -= width
        left -= 1
    if cap < available * BROKEN_WORD_SHARE:
        return minimum
    return [min(width, cap) for width in minimum]


def _html_rows(table: str) -> tuple[list[list[str]], bool]:
    """An HTML ``<table>``'s rows of cells (each cell's inner HTML on one line, paragraphs as line
    breaks), as many in each row, and whether its first row is all ``<th>``: ([], False) for a
    table holding another."""
    if len(_HTML_TABLE_OPEN.findall(table)) > 1:
        return [], False
    rows: list[list[str]] = []
    header = False
    for n, row in enumerate(_HTML_ROW.finditer(table)):
        cells = _HTML_CELL.findall(row.group(1))
        if not cells:
            continue
        if n == 0 or not rows:
            header = all(kind.lower() == "th" for kind, _ in cells)
        rows.append([" ".join(_HTML_PARAGRAPH.sub("<br>", inner).split()) for _, inner in cells])
    width = max((len(row) for row in rows), default=0)
    return [row + [""] * (width - len(row)) for row in rows], header


def column_groups(minimum: list[float], available: float) -> list[list[int]]:
    """Consecutive columns that fit ``available`` at their minimum widths, as few groups as possible.

    One group when the table fits. Otherwise every group after the first starts with
    column 0 again (the row's key) when that column is narrow enough to repeat.
    """
    if sum(minimum) <= available:
        return [list(range(len(minimum)))]
    key = minimum[0] <= available * KEY_COLUMN_SHARE
    groups: list[list[int]] = []
    current: list[int] = []
    used = 0.0
    for c in range(1 if key else 0, len(minimum)):
        if current and used + minimum[c] > available:
            groups.append(current)
            current = []
        if not current:
            current, used = ([0], minimum[0]) if key else ([], 0.0)
        current.append(c)
        used += minimum[c]
    groups.append(current)
    return groups


def fit_widths(natural: list[float], minimum: list[float], available: float) -> list[float]:
    """Widths from content: natural widths if they fit, else minimums plus a share of the rest."""
    if sum(natural) <= available:
        return natural
    if sum(minimum) >= available:
        return [available * m / sum(minimum) for m in minimum]
    spare = available - sum(minimum)
    extra = [n - m for n, m in zip(natural, minimum, strict=True)]
    total = sum(extra) or 1.0
    return [m + spare * e / total for m, e in zip(minimum, extra, strict=True)]


def _pieces(text: str, limit: int) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` characters, at the last white space before
    each cut when there is one (one piece when it is short enough)."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = max(text.rfind(" ", 0, limit), text.rfind("\n", 0, limit))
        cut = cut if cut > limit // 2 else limit
        pieces.append(text[:cut])
        text = text[cut:].lstrip(" \n")
    pieces.append(text)
    return pieces


def _drop_footnote_references(env: MutableMapping[str, Any]) -> None:
    references = env.get("references", {})
    for label in [label for label in references if label.startswith("^")]:
        del references[label]


def wikilink_href(target: str, source: str, find_note: Callable[[str, str], str | None]) -> str | None:
    """The Markdown href (relative to ``source``'s folder, percent-encoded) of the note ``[[target]]``
    reaches, found by ``find_note`` as Obsidian finds it; None when it reaches none (decision 764)."""
    name, _, fragment = target.partition("#")
    rel = find_note(name, source) if name.strip() else source
    if rel is None:
        return None
    href = quote(posixpath.relpath(rel, posixpath.dirname(source) or "."))
    fragment = fragment.strip().lstrip("^")
    return f"{href}#{quote(fragment)}" if fragment else href


def _attrs(tag: str) -> dict[str, str]:
    return {
        m.group(1).lower(): html.unescape(next(g for g in m.groups()[2:] if g is not None) or "")
        for m in _ATTR.finditer(tag)
    }


def _heading_text(text: str) -> str:
    first = text.split("\n")[0]
    if first.lstrip().startswith("#"):
        return _ATX.sub("", first).strip()
    return text.rsplit("\n", 1)[0].strip()  # setext: the underline is the last line


def _depth(doc: Document, element: Element) -> int:
    depth, parent = 0, element.parent
    while parent is not None:
        depth += 1
        up = doc.get(parent)
        parent = up.parent if up is not None else None
    return depth


def _expand_indent(text: str) -> str:
    """Each line's leading tabs as spaces, to the next multiple of 4 columns (CommonMark's tab stop)."""
    if "\t" not in text:
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        body = line.lstrip(" \t")
        lines[i] = line[: len(line) - len(body)].expandtabs(4) + body
    return "\n".join(lines)


def _dedent(line: str, width: int) -> str:
    """``line`` without up to ``width`` columns of leading indentation (tabs to multiples of 4)."""
    line = _expand_indent(line)
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, width) :]


def _cells(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _wrap(line: str, columns: int, mark: str) -> list[str]:
    """Hard-wrap one code line to ``columns`` cells; wide characters take two."""
    if len(line) <= columns and line.isascii():
        return [line]
    out: list[str] = []
    current: list[str] = []
    used = 0
    limit = columns
    for ch in line:
        need = _cells(ch)
        if used + need > limit:
            out.append("".join(current))
            current, used = [mark], len(mark)
            limit = columns
        current.append(ch)
        used += need
    out.append("".join(current))
    return out
