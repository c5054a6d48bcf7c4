"""Inline Markdown (emphasis, code spans, links, images) as reportlab paragraph markup.

markdown-it-py, the project's parser, tokenises the inline content; this module
only maps its tokens to the small XML dialect reportlab's ``Paragraph`` reads.
Images are not drawn inline: they are returned so the caller can place them as
blocks after the paragraph (a picture in a line of text is rare in documents
and would not fit the line anyway).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.state_inline import Delimiter
from markdown_it.token import Token
from mdit_py_plugins.myst_role import myst_role_plugin

from ...markdown.links import autolink_rule, wikilink_rule
from .fonts import Family, FontSet
from .sites import label_id

__all__ = ["FOOTNOTES", "HIGHLIGHT", "MD", "InlineImage", "InlineRenderer", "Rendered", "html_image", "wikilink_text"]

_EQUALS = 0x3D
# The background of ``==highlighted==`` text: Obsidian's yellow
HIGHLIGHT = "#fff3a3"


def _highlight_marker(state: StateInline, silent: bool) -> bool:
    """Obsidian's ``==highlight==``: a run of exactly two ``=`` is a delimiter, paired as ``~~`` is
    (markdown-it's ``balance_pairs``). Flanking decides, so no blank may follow an opener or precede
    a closer, as Obsidian requires: ``a == b`` stays text (decision 1009)."""
    if silent or state.src[state.pos] != "=":
        return False
    scanned = state.scanDelims(state.pos, True)
    if scanned.length != 2:  # ``=`` or ``===``: text, taken whole so no pair is cut out of it
        state.pending += "=" * scanned.length
        state.pos += scanned.length
        return True
    token = state.push("text", "", 0)
    token.content = "=="
    state.delimiters.append(
        Delimiter(
            marker=_EQUALS,
            length=0,  # no "rule of 3", as for ``~~``
            token=len(state.tokens) - 1,
            end=-1,
            open=scanned.can_open,
            close=scanned.can_close,
        )
    )
    state.pos += 2
    return True


def _highlight_pairs(state: StateInline) -> None:
    """Paired ``==`` delimiters (top level and inside links) as ``mark_open``/``mark_close``."""
    lists = [state.delimiters, *(meta["delimiters"] for meta in state.tokens_meta if meta and "delimiters" in meta)]
    for delimiters in lists:
        for opener in delimiters:
            if opener.marker == _EQUALS and opener.end != -1:
                _mark(state.tokens[opener.token], "mark_open", 1)
                _mark(state.tokens[delimiters[opener.end].token], "mark_close", -1)


def _mark(token: Token, kind: str, nesting: Literal[1, -1]) -> None:
    token.type, token.tag, token.nesting, token.markup, token.content = kind, "mark", nesting, "==", ""


MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
# markdown-it's validateLink is an HTML renderer's XSS filter: it makes ``![x](file:///etc/passwd)``
# and ``[a](javascript:...)`` plain source text. Nothing here is rendered as HTML; a picture's
# destination goes through ImageStore (nothing remote or absolute is read) and a link's through the
# book's resolver (only web and mail links are clickable), so every destination is taken as
# CommonMark reads it, and a refused picture becomes a placeholder named in `warnings` (decision 900).
MD.validateLink = lambda url: True  # type: ignore[method-assign]
# Obsidian's [[links]] and ![[embeds]], read as the link graph reads them (decision 762)
MD.inline.ruler.before("link", "wikilink", wikilink_rule)
# `<page.md>` is a link to that page, as kb_links reads it (decisions 901, 912)
MD.inline.ruler.at("autolink", autolink_rule)
# Obsidian's ==highlights== (decision 1009); plain CommonMark has no meaning for a pair of `==`
MD.inline.ruler.before("emphasis", "highlight", _highlight_marker)
MD.inline.ruler2.after("strikethrough", "highlight", _highlight_pairs)
# MyST roles, ``{ref}`Install <install>```: printed as the site shows them (decision 1163)
MD.use(myst_role_plugin)
# The env key holding the labels of the document's footnotes (lower case); their references are raised.
FOOTNOTES = "lvsm_footnotes"
_FOOTNOTE_REF = re.compile(r"\[\^([^\]\s]+)\]")
# Inline HTML whose look a paragraph can show (decision 1137): the tag and reportlab's markup
# opening and closing it; ``{mono}`` is the monospace face. Other tags are dropped, their text kept.
_HTML_INLINE = {
    **dict.fromkeys(("b", "strong"), ("<b>", "</b>")),
    **dict.fromkeys(("i", "em", "cite", "var", "dfn"), ("<i>", "</i>")),
    **dict.fromkeys(("s", "del", "strike"), ("<strike>", "</strike>")),
    **dict.fromkeys(("u", "ins"), ("<u>", "</u>")),
    **dict.fromkeys(("code", "kbd", "samp", "tt"), ('<font face="{mono}">', "</font>")),
    "sub": ("<sub>", "</sub>"),
    "sup": ("<super>", "</super>"),
    "mark": (f'<span backColor="{HIGHLIGHT}">', "</span>"),
}
# A kramdown span attribute list right after a link or picture (``![x](a.png){: width="700" }``,
# ``[x](url){:target='_blank'}``): the site applies it and never shows it (decision 1142).
_SPAN_IAL = re.compile(r"^\{:[^{}\n]*\}")
_HTML_TAG = re.compile(r"^<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*?(/?)>$")
_RUBY_RT = re.compile(r"^</?rt\b[^>]*>$", re.IGNORECASE)
_RUBY_RP = re.compile(r"^<rp\b", re.IGNORECASE)
_HTML_ATTR = re.compile(r"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""")


# MyST roles that name a target: the text shown is the explicit title (``Title <target>``), else the
# target's own title where the book has it, else the target as written.
_CROSS_REFERENCES = {"ref", "numref", "any", "eq", "doc", "term", "keyword", "option", "envvar", "download", "pypi"}
_EXPLICIT_TITLE = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.DOTALL)


def role_text(name: str, content: str, title: Callable[[str, str], str | None] | None = None) -> tuple[str, bool]:
    """What a MyST role shows, and whether it is set as code (decision 1163). ``title(role,
    target)`` is the title of a ``ref``/``doc`` target where the book has one."""
    role = name.lower().rsplit(":", 1)[-1]
    explicit = _EXPLICIT_TITLE.match(content)
    shown, target = (explicit.group(1), explicit.group(2)) if explicit and explicit.group(1) else ("", content)
    if role in _CROSS_REFERENCES:
        return shown or (title(role, target.strip()) if title else None) or target.strip(), False
    if role in ("pep", "rfc"):
        return shown or f"{role.upper()} {target.strip()}", False
    if role in ("abbr", "guilabel", "menuselection", "dfn", "sub", "sup", "subscript", "superscript"):
        text = content.replace("&&", "\0").replace("&", "").replace("\0", "&") if role == "guilabel" else content
        return text.replace("-->", "\u2023") if role == "menuselection" else text, False
    # a role of a domain or an extension (``{py:func}``, ``{file}``, ``{kbd}``): code, as Sphinx sets most
    if shown:
        return shown, True
    bare = target.strip().lstrip("!")  # ``~a.b.C`` shows ``C``, ``!x`` an unlinked ``x``
    return (bare[1:].rsplit(".", 1)[-1] if bare.startswith("~") else bare), True


@dataclass(frozen=True)
class InlineImage:
    src: str
    alt: str
    embed: bool = False
    """An Obsidian ``![[name]]``: ``src`` is a file name or path as Obsidian finds it, not a URL."""
    size: tuple[float | None, float | None] | None = None
    """An embed's ``|width`` or ``|widthxheight``, an ``<img>``'s width and height, in points (CSS pixels x 0.75)."""
    share: float | None = None
    """An ``<img>``'s width as a share of the width left (``width="50%"``, ``style="width: 50%"``)."""


# Obsidian's image extensions: an embed of anything else (a note, a PDF) is shown as its name
EMBED_PICTURE = re.compile(r"\.(?:png|jpe?g|gif|webp|bmp|svg|avif)$", re.IGNORECASE)
_EMBED_SIZE = re.compile(r"^\s*(\d{1,5})\s*(?:x\s*(\d{1,5}))?\s*$")
_CSS_PX = 0.75  # points per CSS pixel


def _embed(target: str, alias: str | None) -> InlineImage | None:
    """``![[target|alias]]`` as a picture, or None when it embeds something that is no picture."""
    name = target.split("#", 1)[0].strip()
    if not EMBED_PICTURE.search(name):
        return None
    size = _EMBED_SIZE.match(alias or "")
    if size is None:
        return InlineImage(name, alias or "", embed=True)
    width, height = size.group(1), size.group(2)
    return InlineImage(name, "", embed=True, size=(int(width) * _CSS_PX, int(height) * _CSS_PX if height else None))


_CSS_LENGTH = re.compile(r"^\s*(\d{1,5}(?:\.\d+)?)\s*(px|%)?\s*$", re.IGNORECASE)


def html_image(tag: str) -> InlineImage | None:
    """An ``<img>`` tag as a picture (None without ``src``), bounded by the size it asks for: its
    ``width``/``height`` attributes or ``style`` (pixels or a share of the width; decision 763)."""
    attrs: dict[str, str] = {}
    for m in _HTML_ATTR.finditer(tag):
        attrs.setdefault(m.group(1).lower(), html.unescape(next(g for g in m.groups()[1:] if g is not None)))
    src = attrs.get("src", "").strip()
    if not src:
        return None
    lengths = {"width": attrs.get("width"), "height": attrs.get("height")}
    for declaration in attrs.get("style", "").split(";"):  # CSS wins over the attributes, as in a browser
        name, _, value = declaration.partition(":")
        if name.strip().lower() in lengths:
            lengths[name.strip().lower()] = value
    points: dict[str, float | None] = {"width": None, "height": None}
    share = None
    for dimension, written in lengths.items():
        length = _CSS_LENGTH.match(written or "")
        if length is None or not float(length.group(1)):
            continue
        if length.group(2) == "%":
            if dimension == "width":
                share = min(float(length.group(1)), 100.0) / 100
        else:
            points[dimension] = float(length.group(1)) * _CSS_PX
    size = (points["width"], points["height"]) if points["width"] or points["height"] else None
    return InlineImage(src, attrs.get("alt", ""), size=size, share=share)


def wikilink_text(target: str, alias: str | None) -> str:
    """What Obsidian shows for ``[[target|alias]]``: the alias, else ``Note > Heading``."""
    if alias:
        return alias
    name, _, part = target.partition("#")
    name = name.strip()
    if name.lower().endswith(".md"):
        name = name[:-3]
    part = part.strip().lstrip("^")
    return f"{name} > {part}" if name and part else name or part


@dataclass
class Rendered:
    markup: str
    images: list[InlineImage] = field(default_factory=list)
    only_images: bool = False  # the text holds nothing but images


# Resolves a link target to ``#destination`` (internal), a URL (external) or None (plain text).
LinkResolver = Callable[[str], str | None]


class InlineRenderer:
    def __init__(
        self, fonts: FontSet, links: LinkResolver, link_color: str, wikilinks: LinkResolver | None = None
    ) -> None:
        self.fonts = fonts
        self.links = links
        self.link_color = link_color
        self.wikilinks = wikilinks
        """``[[target]]`` -> the href of the note it reaches (then resolved by ``links``), or None."""
        self.targets: dict[str, tuple[str, str]] = {}
        """A MyST label (lower case) -> its heading's title and the href of the heading (1163)."""
        self.titles: dict[str, str] = {}
        """The href of a chapter -> its title, for ``{doc}`` roles."""

    def render(self, text: str, base: Family, env: MutableMapping[str, Any] | None = None) -> Rendered:
        tokens = MD.parseInline(text, env if env is not None else {})
        children = tokens[0].children or [] if tokens else []
        out: list[str] = []
        images: list[InlineImage] = []
        visible = False
        link_stack: list[bool] = []
        tags = _HtmlTags(out, self.fonts.mono.regular)
        # a `<ruby>` reading is printed after its base in brackets, as a browser without ruby shows
        # it when the page writes `<rp>` parentheses (decision 1185); a page that writes them gets its own
        bracketed = _unbracketed_readings(children)
        previous = ""
        for tok in children:
            kind = tok.type
            if kind == "text" and previous in ("link_close", "image") and tok.content.startswith("{:"):
                ial = _SPAN_IAL.match(tok.content)
                if ial is not None:
                    tok = tok.copy(content=tok.content[ial.end() :])
                    if previous == "image" and images:  # its width and height bound the picture
                        sized = html_image(f'<img src="x" {ial.group(0)[2:-1]}>')
                        if sized is not None and (sized.size or sized.share):
                            images[-1] = replace(images[-1], size=sized.size, share=sized.share)
            previous = kind
            if kind in _MARKDOWN_SPANS or (kind == "link_close" and link_stack and link_stack[-1]):
                tags.markdown(kind)
            if kind == "text":
                out.append(self._text(tok.content, base, env))
                visible = visible or bool(tok.content.strip())
            elif kind == "softbreak":
                out.append(" ")
            elif kind == "hardbreak":
                out.append("<br/>")
            elif kind == "code_inline":
                out.append(
                    f'<font face="{self.fonts.mono.regular}">{self.fonts.markup(tok.content, self.fonts.mono)}</font>'
                )
                visible = True
            elif kind == "myst_role":
                out.append(self._role(str(tok.meta.get("name", "")), tok.content, base, env))
                visible = True
            elif kind in ("em_open", "em_close"):
                out.append("<i>" if kind.endswith("open") else "</i>")
            elif kind in ("strong_open", "strong_close"):
                out.append("<b>" if kind.endswith("open") else "</b>")
            elif kind in ("s_open", "s_close"):
                out.append("<strike>" if kind.endswith("open") else "</strike>")
            elif kind in ("mark_open", "mark_close"):
                out.append(f'<span backColor="{HIGHLIGHT}">' if kind.endswith("open") else "</span>")
            elif kind == "link_open":
                target = self.links(str(tok.attrGet("href") or ""))
                link_stack.append(target is not None)
                if target is not None:
                    tags.markdown(kind)
                    out.append(f'<a href="{_attr(target)}" color="{self.link_color}">')
            elif kind == "link_close":
                if link_stack and link_stack.pop():
                    out.append("</a>")
            elif kind == "image":
                images.append(InlineImage(str(tok.attrGet("src") or ""), _plain(tok.children or [])))
            elif kind == "wikilink":
                target, alias = str(tok.meta["target"]), tok.meta["alias"]
                picture = _embed(target, alias) if tok.meta["embed"] else None
                if picture is not None:
                    images.append(picture)
                else:  # a link or an embedded note: its name, as Obsidian shows the link
                    shown = wikilink_text(target, alias)
                    href = self.wikilinks(target) if self.wikilinks is not None and not tok.meta["embed"] else None
                    dest = self.links(href) if href is not None else None
                    text = self._text(shown, base, env)
                    out.append(f'<a href="{_attr(dest)}" color="{self.link_color}">{text}</a>' if dest else text)
                    visible = visible or bool(shown.strip())
            elif kind == "html_inline" and tok.content.lower().startswith("<br"):
                out.append("<br/>")
            elif kind == "html_inline" and tok.content.lower().startswith("<img"):
                picture = html_image(tok.content)
                if picture is not None:
                    images.append(picture)
            elif kind == "html_inline" and id(tok) in bracketed:
                out.append(self._text("）" if tok.content[1] == "/" else "（", base, env))
            elif kind == "html_inline":
                tags.html(tok.content)
            # other inline HTML tags are dropped; the text between them stays
        tags.close_all()
        return Rendered("".join(out).strip(), images, bool(images) and not visible)

    def _href(self, role: str, target: str) -> str | None:
        if role == "doc":
            return self.links(target if target.lower().endswith(".md") else f"{target}.md")
        if role in ("ref", "numref", "any"):
            found = self.targets.get(label_id(target).lower())
            return found[1] if found else None
        return None

    def _title(self, role: str, target: str) -> str | None:
        href = self._href(role, target)
        if role == "doc":
            return self.titles.get(href) if href else None
        found = self.targets.get(label_id(target).lower()) if role in ("ref", "numref", "any") else None
        return found[0] if found else None

    def _role(self, name: str, content: str, base: Family, env: MutableMapping[str, Any] | None) -> str:
        """A MyST role as its site shows it: a cross-reference as its title (linked where the book
        holds its target), ``{sub}``/``{sup}`` lowered and raised, any other as code (1163)."""
        text, code = role_text(name, content, self._title)
        role = name.lower().rsplit(":", 1)[-1]
        if code:
            return f'<font face="{self.fonts.mono.regular}">{self.fonts.markup(text, self.fonts.mono)}</font>'
        markup = self._text(text, base, env)
        if role in ("sub", "subscript", "sup", "superscript"):
            tag = "sub" if role.startswith("sub") else "super"
            return f"<{tag}>{markup}</{tag}>"
        explicit = _EXPLICIT_TITLE.match(content)
        href = self._href(role, (explicit.group(2) if explicit and explicit.group(1) else content).strip())
        return f'<a href="{_attr(href)}" color="{self.link_color}">{markup}</a>' if href else markup

    def _text(self, text: str, base: Family, env: MutableMapping[str, Any] | None) -> str:
        notes = env.get(FOOTNOTES) if env is not None else None
        if not notes or "[^" not in text:
            return self.fonts.markup(text, base)
        out: list[str] = []
        pos = 0
        for match in _FOOTNOTE_REF.finditer(text):
            if match.group(1).lower() in notes:
                out.append(self.fonts.markup(text[pos : match.start()], base))
                out.append(f"<super>{self.fonts.markup(match.group(1), base)}</super>")
                pos = match.end()
        out.append(self.fonts.markup(text[pos:], base))
        return "".join(out)

    def plain(self, text: str) -> str:
        """The visible text of inline Markdown (for outlines and the TOC)."""
        tokens = MD.parseInline(text, {})
        return _plain(tokens[0].children or [] if tokens else []).strip()


_MARKDOWN_SPANS = {"em_open", "strong_open", "s_open", "mark_open", "em_close", "strong_close", "s_close", "mark_close"}


def _unbracketed_readings(children: list[Token]) -> set[int]:
    """The ``<rt>`` and ``</rt>`` tokens of each ``<ruby>`` in ``children`` that writes no ``<rp>``."""
    found: set[int] = set()
    inside: list[Token] | None = None
    for tok in children:
        if tok.type != "html_inline":
            continue
        tag = _HTML_TAG.match(tok.content.strip())
        if tag is not None and tag.group(2).lower() == "ruby" and not tag.group(1):
            inside = []
        elif tag is not None and tag.group(2).lower() == "ruby" and inside is not None:
            if not any(_RUBY_RP.match(t.content) for t in inside):
                found.update(id(t) for t in inside if _RUBY_RT.match(t.content))
            inside = None
        elif inside is not None:
            inside.append(tok)
    return found


class _HtmlTags:
    """The inline HTML tags open in a paragraph's markup, kept well nested with Markdown's own.

    reportlab refuses markup whose tags cross (``<super><i>a</super></i>``), and HTML in Markdown
    may cross Markdown's emphasis: a tag is closed where Markdown's span around it closes, a
    closing tag that would cross a Markdown span is dropped, and what is still open at the end is
    closed there.
    """

    def __init__(self, out: list[str], mono: str) -> None:
        self.out = out
        self.mono = mono
        self.depth = 0  # Markdown spans open
        self.open: list[tuple[str, str, int]] = []  # (closing markup, tag, depth it was opened at)

    def markdown(self, kind: str) -> None:
        if kind.endswith("_open"):
            self.depth += 1
            return
        while self.open and self.open[-1][2] >= self.depth:
            self.out.append(self.open.pop()[0])
        self.depth -= 1

    def html(self, content: str) -> None:
        match = _HTML_TAG.match(content.strip())
        if match is None or match.group(3):  # a comment, not a tag, or self-closing
            return
        closing, tag = match.group(1), match.group(2).lower()
        if tag not in _HTML_INLINE:
            return
        markup, end = _HTML_INLINE[tag]
        if not closing:
            self.out.append(markup.format(mono=self.mono))
            self.open.append((end, tag, self.depth))
            return
        for at in range(len(self.open) - 1, -1, -1):
            if self.open[at][2] != self.depth:
                return
            if self.open[at][1] == tag:
                while len(self.open) > at:
                    self.out.append(self.open.pop()[0])
                return

    def close_all(self) -> None:
        while self.open:
            self.out.append(self.open.pop()[0])


def _plain(children: list[Token]) -> str:
    parts: list[str] = []
    for tok in children:
        if tok.type in ("text", "code_inline"):
            parts.append(tok.content)
        elif tok.type == "myst_role":
            parts.append(role_text(str(tok.meta.get("name", "")), tok.content)[0])
        elif tok.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif tok.type == "image":
            parts.append(_plain(tok.children or []))
        elif tok.type == "wikilink" and not (tok.meta["embed"] and _embed(tok.meta["target"], tok.meta["alias"])):
            parts.append(wikilink_text(str(tok.meta["target"]), tok.meta["alias"]))
    return "".join(parts)


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
