"""Links, tags and aliases of one parsed document, read from markdown-it's tokens.

What counts (spec/decisions.md 43, widened by 138): inline links and images,
reference-style links (the definition's destination), autolinks, and the
Obsidian forms ``[[Note]]``, ``[[Note#Heading]]``, ``[[Note#^block]]``,
``[[Note|alias]]``, ``[[folder/Note]]`` and the embeds ``![[Note]]`` /
``![[image.png]]``. Code spans, fenced and indented code and HTML (comments
included) hide links, because markdown-it's own rules consume them first: the
wikilink rule is one more inline rule of the same parser, not a second parser.

Cost: the block pass collects reference definitions; only inline runs that
could hold a link or a tag (a ``[``, ``<`` or ``#``) are read, most of them by
``simple_runs`` (the same links without markdown-it's tokenizer, decision 1040),
the rest by the inline parser.

Every link carries the span of its destination in ``Document.text``, so a move
can rewrite exactly those bytes (``rewrite``) and nothing else.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from types import SimpleNamespace
from typing import Any, Literal, NamedTuple
from urllib.parse import unquote
from weakref import WeakKeyDictionary

from markdown_it import MarkdownIt
from markdown_it import helpers as _helpers
from markdown_it.common.utils import unescapeAll
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.autolink import autolink as _autolink_rule
from markdown_it.rules_inline.image import image as _image_rule
from markdown_it.rules_inline.link import link as _link_rule
from markdown_it.token import Token

from .footnotes import FOOTNOTE
from .front_matter import front_matter_plugin, is_toml, load_toml
from .html_references import HtmlReference, HtmlRun, html_references, may_hold_reference
from .kinds import ElementKind
from .model import Document, Element
from .scan import MAX_NESTING, PARSER_HEAD
from .simple_runs import Found, read_simple, read_wikilink

__all__ = [
    "DocumentLinks",
    "Hidden",
    "Link",
    "LinkKind",
    "LinkSource",
    "MarkedBlock",
    "autolink_rule",
    "block_ids",
    "document_link_source",
    "extract_links",
    "front_matter_aliases",
    "graph_links",
    "link_source",
    "links_through",
    "load_front_matter",
    "load_yaml",
    "marked_block",
    "normalize_label",
    "obsidian_hidden",
    "rewrite",
    "separators",
    "wikilink_rule",
]

LinkKind = Literal["inline", "reference", "autolink", "image", "wikilink", "embed", "html", "href"]


@dataclass(frozen=True, slots=True)
class Link:
    """One link as written.

    ``destination`` is the target as the author wrote it (backslash escapes and
    entities resolved; for a wikilink the part before ``|``, fragment included; for ``html``,
    the ``src`` of an ``<img>`` tag, for ``href`` the ``href`` of an ``<a>`` tag, character
    references resolved).
    ``start``/``end`` is its span in ``Document.text`` (``-1`` when it could not be
    located exactly, e.g. written with escapes; such a link is never rewritten).
    ``pointer`` is the v2 anchor of the innermost element holding the link. ``in_properties``:
    a wikilink written as a front-matter property value (``related: "[[Other]]"``, decision 483).
    """

    kind: LinkKind
    destination: str
    text: str | None
    pointer: str | None
    start: int
    end: int
    in_properties: bool = False


@dataclass(frozen=True, slots=True)
class DocumentLinks:
    """What the link graph keeps of one document."""

    links: tuple[Link, ...]
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    headings: tuple[str, ...]  # heading titles, in order (fragments resolve against them)
    block_ids: tuple[str, ...]  # Obsidian ``^id`` block markers


@dataclass(frozen=True, slots=True)
class LinkSource:
    """What extraction needs of a block parse: reference definitions, the inline runs
    that could hold a link or a tag (first line, end line, source) and the front matter."""

    references: dict[str, Any]
    runs: tuple[tuple[int, int, str, bool], ...]  # first line, end line, content, is a table cell
    front_matter: str | None
    code: tuple[tuple[int, int], ...] = ()  # first and end line of each code block, nested ones too
    # the blocks that may hold an ``<img>`` or ``<a>`` tag (``html_references.HtmlRun``): an HTML
    # block, or an inline run with its content; read by the link graph so it never parses a
    # document again
    html: tuple[HtmlRun, ...] = ()


def link_source(tokens: Sequence[Token], env: dict[str, Any]) -> LinkSource:
    """Collected from the block tokens of the element model's own full parse."""
    runs: list[tuple[int, int, str, bool]] = []
    code: list[tuple[int, int]] = []
    html: list[HtmlRun] = []
    front_matter = None
    in_table = False  # every inline run between table_open and table_close is one cell
    references = bool(env.get("references"))
    maybe = (_MAYBE_WITH_REFERENCES if references else _MAYBE_INLINE).search
    for token in tokens:
        if token.type == "inline":
            if token.info == FOOTNOTE:
                # a footnote definition's paragraph (decision 1194): its lines are the definition the
                # references hold, whose body is read as before (decision 1157), not a run of text
                continue
            content = token.content
            # the pattern cannot match without one of these substrings, and ``in`` finds them
            # at C speed where the pattern tries every position (decision 271)
            if (
                token.map is not None
                and (
                    "#" in content
                    or (("[" in content) if references else ("](" in content or "[[" in content))
                    or ("<" in content and "." in content)
                )
                and maybe(content)
            ):
                runs.append((token.map[0], token.map[1], content, in_table))
            if token.map is not None and "<" in content and may_hold_reference(content):
                html.append(HtmlRun(token.map[0], token.map[1], content))
        elif token.type == "html_block" and token.map is not None and may_hold_reference(token.content):
            html.append(HtmlRun(token.map[0], token.map[1], None))
        elif token.type in _CODE and token.map is not None:
            code.append((token.map[0], token.map[1]))
        elif token.type == "front_matter":
            front_matter = token.content
        elif token.type in _TABLE_EDGES:
            in_table = token.type == "table_open"
    return LinkSource(dict(env.get("references", {})), tuple(runs), front_matter, tuple(code), tuple(html))


# Block parses of documents re-parsed incrementally (their state holds no link source), kept while
# the document lives: the check of an edit that touched a reference definition (decision 990) and
# the indexing of the result that follows read the same one (the parse cache hands both the same
# object), so the check costs no parse the edit did not already pay.
_parsed: WeakKeyDictionary[Document, LinkSource] = WeakKeyDictionary()
_parsed_lock = threading.Lock()


def document_link_source(doc: Document) -> LinkSource:
    """What :func:`link_source` collects of ``doc``: its full parse's, else a block parse made once."""
    source = _known_source(doc)
    if source is None:
        env: dict[str, Any] = {}
        source = link_source(PARSER_HEAD.parse(doc.text, env), env)
        with _parsed_lock:
            _parsed[doc] = source
    return source


def _known_source(doc: Document) -> LinkSource | None:
    source = getattr(doc._state, "link_source", None)
    if isinstance(source, LinkSource):
        return source
    with _parsed_lock:
        return _parsed.get(doc)


def links_through(content: str, references: dict[str, Any], label: str) -> bool:
    """Whether the inline run ``content`` holds a link or image through the reference ``label``
    (a key of ``references``), read with those definitions."""
    # Keys are case-folded the way markdown-it does it (lower, then upper) with runs of spaces as
    # one: a run where the words do not even appear is not parsed.
    words = r"\s+".join(map(re.escape, label.split()))
    if not re.search(words, content.lower().upper()):
        return False
    children: list[Token] = []
    _MD_INLINE.inline.parse(content, _MD_INLINE, {"references": references}, children)
    pending = deque(children)
    while pending:
        token = pending.popleft()
        if token.meta.get("label") == label:
            return True
        pending.extend(token.children or ())
    return False


_CODE = frozenset({"fence", "code_block"})


_TABLE_EDGES = frozenset({"table_open", "table_close"})


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """``[[target|alias]]`` and ``![[target]]`` on one line, no brackets inside (``read_wikilink``)."""
    found = read_wikilink(state.src, state.pos)
    if found is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"target": found.target, "alias": found.alias, "embed": found.embed, "at": found.at}
        token.content = found.inner
    state.pos = found.end
    return True


wikilink_rule = _wikilink_rule
"""The inline rule of ``[[target|alias]]`` / ``![[target]]`` (token ``wikilink``, ``meta`` target, alias,
embed), for other parsers that must read them as this one does (the PDF export)."""

InlineRule = Callable[[StateInline, bool], bool]

# ``<guide.md>``, ``<sub/a%20b.md#part>``: a relative path to a Markdown file in angle brackets. CommonMark
# reads autolinks with a scheme only, so "autolinks to relative `.md` targets" (notes section 13)
# matched nothing; this one form is read as an autolink too (decision 901). No space, no ``<``/``>``,
# not root-absolute; the path part (before ``#``/``?``) ends in ``.md``.
_RELATIVE_AUTOLINK = re.compile(r"<([^\s<>/\\][^\s<>#?]*\.[mM][dD](?:[#?][^\s<>]*)?)>")
_SCHEME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _autolinks(state: StateInline, silent: bool) -> bool:
    """CommonMark's autolink rule, else a relative ``<path.md>`` as an autolink of that path."""
    if _autolink_rule(state, silent):
        return True
    if state.src[state.pos] != "<":
        return False
    match = _RELATIVE_AUTOLINK.match(state.src, state.pos, state.posMax)
    if match is None or _SCHEME_LIKE.match(match.group(1)):
        return False
    if not silent:
        href = match.group(1)
        token = state.push("link_open", "a", 1)
        token.attrs = {"href": href}
        token.markup, token.info = "autolink", "auto"
        token = state.push("text", "", 0)
        token.content = href
        token = state.push("link_close", "a", -1)
        token.markup, token.info = "autolink", "auto"
    state.pos = match.end()
    return True


autolink_rule = _autolinks
"""CommonMark's autolink rule widened to a relative ``<page.md>`` (decision 901), for other parsers
that must read such a link as this one does (the PDF export, decision 912)."""


def _located(rule: InlineRule, *, image: bool) -> InlineRule:
    """``rule`` noting in its token's ``meta["at"]`` the offset in the inline run where the
    destination is written (inline form only; a reference link carries its ``label``)."""
    wanted = "image" if image else "link_open"

    def located(state: StateInline, silent: bool) -> bool:
        begin, count = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if silent:
            return True
        if rule is _autolinks:
            at, end = begin + 1, state.pos - 1
        elif state.src[state.pos - 1] == ")":  # the inline form; a reference one ends with "]"
            at, end = _destination_span(state, begin, image)
        else:
            return True
        for token in state.tokens[count:]:
            if token.type == wanted:  # the first: nested ones (an image in a link's text) follow it
                token.meta["at"], token.meta["end"] = at, end
                break
        return True

    return located


def _destination_span(state: StateInline, begin: int, image: bool) -> tuple[int, int]:
    """Where the destination of the link written at ``begin`` is: after ``](``, spaces and ``<``, up to
    its end (before ``>``), escapes and entities included as written; (-1, -1) if not found."""
    saved = state.pos
    try:
        label_end: int = state.md.helpers.parseLinkLabel(state, begin + 1 if image else begin, not image)
    finally:
        state.pos = saved
    src: str = state.src
    pos = label_end + 1
    if label_end < 0 or not src.startswith("(", pos):
        return -1, -1
    pos += 1
    while pos < len(src) and src[pos] in " \t\n":
        pos += 1
    found = state.md.helpers.parseLinkDestination(src, pos, state.posMax)
    if not found.ok:
        return -1, -1
    angled = src.startswith("<", pos)
    return (pos + 1, found.pos - 1) if angled else (pos, found.pos)


def _identity(url: str) -> str:
    return url


def _always(url: str) -> bool:
    return True


# markdown-it's parseLinkDestination walks character by character and was a quarter of the
# extraction time; a plain destination (no "<", parentheses, backslash, entity or control
# character) ends at the first space or ")" and is taken in one regex step, anything else goes
# to markdown-it's own function, so the result is always the one markdown-it would give.
_PLAIN_DESTINATION = re.compile(r"[^\x00-\x20\x7f()<\\&]+")


def _destination(string: str, pos: int, maximum: int) -> Any:
    match = _PLAIN_DESTINATION.match(string, pos, maximum)
    if match is not None:
        end = match.end()
        if end == maximum or string[end] in " )" or string[end] < " " or string[end] == "\x7f":
            result = _helpers.parse_link_destination._Result()
            result.ok, result.pos, result.str = True, end, string[pos:end]
            return result
    return _helpers.parseLinkDestination(string, pos, maximum)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    md.options["maxNesting"] = MAX_NESTING  # the element parser's depth, so links map to its elements
    md.helpers = SimpleNamespace(  # type: ignore[assignment]  # this instance's own, never the shared module
        parseLinkLabel=_helpers.parseLinkLabel,
        parseLinkDestination=_destination,
        parseLinkTitle=_helpers.parseLinkTitle,
    )
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    # every link token notes where its destination starts in the inline run ("at"), so a move
    # rewrites that occurrence and no look-alike in a code span or comment (decision 450)
    md.inline.ruler.at("link", _located(_link_rule, image=False))
    md.inline.ruler.at("image", _located(_image_rule, image=True))
    md.inline.ruler.at("autolink", _located(_autolinks, image=False))
    md.options["store_labels"] = True  # a reference link names its definition
    # destinations exactly as written (no percent-encoding, no scheme filter): they are
    # matched against the source text and resolved as paths, never rendered
    md.normalizeLink = _identity  # type: ignore[method-assign]
    md.validateLink = _always  # type: ignore[method-assign]
    md.disable(["inline", "text_join"])  # inline runs only where a link can be (below)
    # what cannot hide or make a link is not parsed: emphasis, entities, line breaks
    md.disable(["emphasis", "entity", "newline", "balance_pairs", "fragments_join"])
    # Text runs stop only where a remaining rule can start (or where a link label can end,
    # which parseLinkLabel looks for): every other character is plain text in one step.
    md.inline.terminator_re = re.compile(r"[\[\]!`\\<]")
    return md


_MD = _parser()
# Inline runs are parsed with markdown-it's own nesting limit (the commonmark preset's 20), not
# the block parser's 100, which only lists and quotes need: every "[" makes the link rule scan its
# label in validation mode, each nested "[" one level deeper, so a run of brackets cost in
# proportion to the limit (a file of "[a][" repeated, 0.5 ms of CPU per bracket: an 8 MiB one
# about 17 minutes of one parse worker, holding back a reindex or every edit's sync behind it).
# 20 levels of inline nesting (a link in emphasis in a link ...) is beyond any real text: the
# links of the three shared corpora are the same (decision 783).
INLINE_MAX_NESTING = 20
_MD_INLINE = _parser()
_MD_INLINE.options["maxNesting"] = INLINE_MAX_NESTING
# A run can hold a link only with "](" (inline links and images), "[[" (wikilinks, embeds),
# "<" before ".md" (a relative autolink; one with a scheme is never a document link) or, when the
# document defines references, any "[" (reference links). A tag needs "#" after a space or at the
# start of the run.
_MAYBE_AUTOLINK = r"<[^\s<>]*\.[mM][dD][#?>]"
_MAYBE_INLINE = re.compile(r"\]\(|\[\[|" + _MAYBE_AUTOLINK + r"|(?:^|\s)#[^\s#]", re.MULTILINE)
_MAYBE_WITH_REFERENCES = re.compile(r"\[|" + _MAYBE_AUTOLINK + r"|(?:^|\s)#[^\s#]", re.MULTILINE)
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]*[^\W\d][\w/-]*)", re.UNICODE)
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*(?=\r|\n|\Z)")
_WS = re.compile(r"\s+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def separators(path: str) -> str:
    """A relative link's path with each backslash read as ``/`` (decision 910): the reference reads
    ``\\`` as a separator in every path it is given (notes 14), and a page written on Windows links
    ``sub\\page.md``. Markdown's own escapes (``my\\_note.md``) are gone before this."""
    return path.replace("\\", "/") if "\\" in path else path


def normalize_label(label: str) -> str:
    """Reference labels match case-insensitively with collapsed whitespace (CommonMark)."""
    return _WS.sub(" ", label.strip()).casefold()


class _Run:
    """Maps offsets in one inline run (a token's ``content``) back to ``text``.

    markdown-it gives an inline token the text of its lines with container markers, list
    indentation and the heading's ``#`` removed (and a table cell's neighbours): each content
    line is a stretch of one source line, line ``first + i`` for content line ``i``. Within a
    line the stretch is found as written (the last occurrence: it is a suffix up to trailing
    space, or a heading's closing ``#``); a table cell's is the first one after the previous
    cell of that row, its pipes written escaped. Anything that does not map exactly (a tab widened
    to spaces) gives -1: such a link is counted but never rewritten.
    """

    def __init__(self, text: str, doc: Document, first: int, content: str, cell: bool, cursors: dict[int, int]) -> None:
        self.text, self.lines, self.first, self.content = text, doc.lines, first, content
        self.cell_at = -1
        if cell:  # one line; placed once, after the cells before it on that row
            lines = self.lines
            if first < lines.count:
                line_start, line_end = lines.starts[first], lines.ends[first]
                # every "|" of a cell was written "\\|" (an unescaped one ends the cell), as in Obsidian's
                # [[note\\|alias]] inside tables
                written = content.replace("|", "\\|")
                self.cell_at = text.find(written, max(line_start, cursors.get(first, line_start)), line_end)
                if self.cell_at >= 0:
                    cursors[first] = self.cell_at + len(written)
        self.cell = cell
        # Each content line is placed in ``text`` once, for all its links: found again per link, a
        # paragraph of thousands of links cost the square of its length (decision 695).
        self._line_begins: list[int] | None = None
        self._placed: dict[int, tuple[int, int]] = {}

    def source(self, at: int) -> int:
        content = self.content
        if self.cell:
            return self.cell_at + at + content.count("|", 0, at) if self.cell_at >= 0 else -1
        begins = self._line_begins
        if begins is None:
            begins = self._line_begins = [0, *(m.end() for m in _NEWLINE.finditer(content))]
        index = bisect_right(begins, at) - 1
        placed = self._placed.get(index)
        if placed is None:
            line_begin = begins[index]
            line_end = begins[index + 1] - 1 if index + 1 < len(begins) else len(content)
            written = content[line_begin:line_end]
            stripped = written.lstrip(" \t")
            line = self.first + index
            found = -1
            if line < self.lines.count:
                found = self.text.rfind(stripped, self.lines.starts[line], self.lines.ends[line])
            placed = self._placed[index] = (line_begin + len(written) - len(stripped), found)
        content_start, found = placed
        column = at - content_start
        return found + column if column >= 0 and found >= 0 else -1

    def span(self, token: Token, value: str) -> tuple[int, int]:
        """Where the destination ``value`` is written in ``text`` (with its backslash escapes and
        entities, decision 451); (-1, -1) if the written bytes are not found there exactly."""
        at = token.meta.get("at", -1) if token.meta else -1
        end = token.meta.get("end", at + len(value)) if token.meta else -1
        return self.span_at(at, end, value)

    def span_at(self, at: int, end: int, value: str) -> tuple[int, int]:
        """:meth:`span` of a destination written at ``content[at:end]`` (-1: unknown)."""
        start = self.source(at) if at >= 0 else -1
        if start < 0:
            return -1, -1
        if self.text.startswith(value, start):
            return start, start + len(value)
        written = self.content[at:end]
        if self.text.startswith(written, start) and unescapeAll(written) == value:
            return start, start + len(written)
        return -1, -1


_TEXT_TOKENS = ("text", "text_special", "code_inline", "image")


def _plain_text(children: Sequence[Token]) -> str:
    # a picture's plain text is its description, as CommonMark renders it in ``alt`` (decision 902);
    # an escaped character (``my\_note``) is a ``text_special`` token of its own (decision 1048)
    return " ".join("".join(t.content for t in children if t.type in _TEXT_TOKENS).split())


def _element_at(doc: Document, starts: list[int], offset: int) -> Element | None:
    """Innermost element whose span holds ``offset`` (elements are in pre-order, so the
    innermost is the last one starting at or before ``offset`` that still covers it)."""
    i = bisect_right(starts, offset) - 1
    while i >= 0:
        element = doc.elements[i]
        if offset < max(element.end, element.start + 1):
            return element
        i -= 1
    return None


def extract_links(doc: Document, *, spans: bool = True) -> DocumentLinks:
    """Links, tags, aliases, headings and block ids of ``doc``.

    ``spans=False`` is for the index, which keeps no span: a link read without the inline parser is
    then left unplaced (span -1, as one written with escapes) unless the document holds HTML whose
    tags :func:`graph_links` orders among its links by their spans. Placing every link was a tenth
    of extraction (decision 1060). A reference link's definition is found either way: its
    destination is given as written there."""
    text = doc.text
    source = document_link_source(doc)
    place = spans or bool(source.html)
    # code blocks (nested ones too): neither a ``%%`` nor a ``^id`` in them is one (decision 507)
    # looked for once, after the single character: a search for "%%" alone took 5 % of extraction
    marks = "%" in text and "%%" in text
    code = _code_offsets(doc, source.code) if source.code and (marks or "^" in text) else []
    comments = _obsidian_comments(doc, code) if marks else []
    if comments:  # read as blanks of the same length: offsets and lines stay, nothing inside counts
        text = _blank(text, comments)
        blanked: dict[str, Any] = {}
        source = link_source(_MD.parse(text, blanked), blanked)
    env = {"references": source.references}
    definitions = _Definitions(text, doc, source.references)
    # a footnote whose body CommonMark took for a definition's destination holds links (1157)
    starts = [e.start for e in doc.elements]
    notes = (
        _footnote_links(text, doc, definitions, env, starts) if any(_is_footnote(k) for k in source.references) else {}
    )
    definitions.bodies = frozenset(notes)
    cursors: dict[int, int] = {}  # per table row: where the last placed cell ended
    links: list[Link] = []
    tags: list[str] = []
    aliases: list[str] = []
    if source.front_matter is not None:
        tags, aliases, properties = _front_matter(source.front_matter, toml=is_toml(doc.text))
        if properties:
            links.extend(_property_links(doc, properties))
    for first, _end, content, cell in source.runs:
        anchor = _element_at(doc, starts, doc.lines.start_of(first))
        pointer = anchor.anchor if anchor is not None else None
        run = _Run(text, doc, first, content, cell, cursors)
        # most runs are read without the inline parser, to the same links and text (decision 1040)
        simple = read_simple(content, _MD_INLINE, env)
        if simple is not None:
            links.extend(
                _simple_link(found, run, definitions, pointer, place)
                for found in simple.links
                if found.label not in definitions.bodies
            )
            texts: Iterable[str] = simple.texts
        else:
            children: list[Token] = []
            _MD_INLINE.inline.parse(content, _MD_INLINE, env, children)
            links.extend(_inline_links(children, run, definitions, pointer))
            texts = (child.content for child in children if child.type == "text")
        if "#" in content:
            for piece in texts:
                if "#" in piece:
                    tags.extend(m.group(1) for m in _TAG.finditer(piece))
    if notes:
        links = _in_text_order(links, sorted(chain(*notes.values()), key=lambda ln: (ln.start < 0, ln.start)))
    headings = tuple(e.title or "" for e in doc.headings)
    ids = _ids(text, code) if "^" in text else ()  # a block id starts with one; most texts hold none
    return DocumentLinks(tuple(links), tuple(dict.fromkeys(tags)), tuple(dict.fromkeys(aliases)), headings, ids)


def block_ids(doc: Document) -> tuple[str, ...]:
    """The ``^id`` block markers of ``doc`` as :func:`extract_links` finds them, without reading its
    links (an edit's check of what it removed, decision 1016)."""
    text = doc.text
    if "^" not in text:
        return ()
    source = document_link_source(doc)
    code = _code_offsets(doc, source.code) if source.code else []
    comments = _obsidian_comments(doc, code) if "%%" in text else []
    return _ids(_blank(text, comments) if comments else text, code)


class MarkedBlock(NamedTuple):
    """The block an Obsidian ``^id`` marker names (:func:`marked_block`)."""

    element: Element  # the block, or the first item of the list the marker follows
    start: int  # its span in ``Document.text``
    end: int


def marked_block(doc: Document, ident: str) -> MarkedBlock | None:
    """The block ``[[note#^ident]]`` names in ``doc``, as Obsidian reads the marker (decision 1198):
    the innermost element whose text holds it at a line's end (a nested list item, not its
    parent), or, for a marker alone in its paragraph, the block just before it: a quote, a table,
    or the whole list its last item ends. A marker in code, in a comment or in the front matter
    names nothing (as :func:`block_ids` finds them); None when no marker has that id."""
    text = doc.text
    if "^" + ident not in text:
        return None
    source = document_link_source(doc)
    code = _code_offsets(doc, source.code) if source.code else []
    comments = _obsidian_comments(doc, code) if "%%" in text else []
    front = doc.get("frontmatter")
    hidden = [*code, *comments, *([(0, front.end)] if front is not None else [])]
    at = next((m.start() for m in _block_ids(_blank(text, hidden) if hidden else text) if m.group(1) == ident), None)
    if at is None:
        return None
    holding = [e for e in doc.readable if e.start <= at < e.end and e.kind is not ElementKind.FRONT_MATTER]
    if not holding:
        return None
    block = holding[-1]  # pre-order: the last element holding the marker is the innermost
    if block.kind is not ElementKind.PARAGRAPH or text[block.start : block.end].strip() != "^" + ident:
        return MarkedBlock(block, block.start, block.end)
    before = [e for e in doc.readable if e.end <= block.start and e.kind is not ElementKind.FRONT_MATTER]
    if not before:
        return None
    last = before[-1]
    if last.kind is not ElementKind.LIST_ITEM:
        return MarkedBlock(last, last.start, last.end)
    while last.parent is not None and (up := doc.get(last.parent)) is not None:
        last = up  # the list's top item
    first = last
    for e in reversed(before):  # the items of the same list before it, top level only
        if e.kind is ElementKind.LIST_ITEM and e.parent is None:
            if text[e.end : first.start].strip():
                break
            first = e
        elif e.kind is not ElementKind.LIST_ITEM and e.start < first.start:
            break
    return MarkedBlock(first, first.start, last.end)


def front_matter_aliases(doc: Document) -> tuple[str, ...]:
    """The ``aliases``/``alias`` of ``doc``'s front matter as :func:`extract_links` reads them, from
    the front matter alone (an edit's check of the names it took away, decision 1037)."""
    first = doc.elements[0] if doc.elements else None
    if first is None or first.kind != ElementKind.FRONT_MATTER:
        return ()
    # the text between the fences, as markdown-it gives it (its line breaks made ``\n``)
    inner = "\n".join(_LINE_BREAK.split(first.text)[1:-1])
    return tuple(dict.fromkeys(_front_matter(inner, toml=is_toml(doc.text))[1]))


def _ids(text: str, code: list[tuple[int, int]]) -> tuple[str, ...]:
    """The block ids of ``text`` (its comments blanked) outside the ``code`` spans: a ``^id`` in code
    is code (decision 507)."""
    found = tuple(m.group(1) for m in _block_ids(text))
    # blanking code only takes markers away (a code block holds whole lines), so a text with none
    # is not blanked: most texts with a "^" hold it in code (a regex, a power)
    return tuple(m.group(1) for m in _block_ids(_blank(text, code))) if found and code else found


def _block_ids(text: str) -> Iterator[re.Match[str]]:
    """The ``^id`` block markers of ``text`` (its code and comments blanked): at a line's end, after
    a blank or at the start, so ``x^2`` or a footnote's ``[^1]`` is none."""
    return (m for m in _BLOCK_ID.finditer(text) if m.start() == 0 or text[m.start() - 1] in " \t\r\n")


class Hidden(NamedTuple):
    """What Obsidian's reading view does not show of a document (:func:`obsidian_hidden`)."""

    spans: list[tuple[int, int]]  # sorted and apart
    unclosed: int | None  # where a ``%%`` no other closes stands: it hides the rest of the document


def obsidian_hidden(doc: Document) -> Hidden:
    """The spans of ``doc`` Obsidian's reading view does not show: its closed comments, found as the
    link graph finds them (decision 507), and its block ids, found where the graph finds them but
    outside the front matter, with the blanks before them (so no hard break is left behind). The
    PDF export leaves them out (decision 1009)."""
    text = doc.text
    if "%%" not in text and "^" not in text:
        return Hidden([], None)
    source = document_link_source(doc)
    code = _code_offsets(doc, source.code) if source.code else []
    marks = _comment_marks(doc, code) if "%%" in text else []
    # a `%%` no other closes hides nothing here: it is more often a format string in a page that
    # never was an Obsidian note (`"%%Y"`) than a private tail (decision 1010); the caller warns
    unclosed = marks[-1] if len(marks) % 2 else None
    comments = _comment_spans(text, marks[: len(marks) - len(marks) % 2])
    if "^" not in text:
        return Hidden(comments, unclosed)
    front = doc.get("frontmatter")
    ids_text = _blank(text, [*code, *comments, *([(0, front.end)] if front is not None else [])])
    spans = sorted([*comments, *((_blanks_before(ids_text, m.start()), m.end()) for m in _block_ids(ids_text))])
    merged: list[tuple[int, int]] = []
    for start, end in spans:  # a block id right after a comment touches it
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return Hidden(merged, unclosed)


def _blanks_before(text: str, offset: int) -> int:
    """Where the run of spaces and tabs that ends at ``offset`` starts."""
    while offset and text[offset - 1] in " \t":
        offset -= 1
    return offset


def graph_links(doc: Document, links: Sequence[Link]) -> list[Link]:
    """``links`` (what :func:`extract_links` found) with the ``src`` of each ``<img>`` tag in the
    document's HTML as a link of kind ``html`` (decision 820; so are ``srcset`` candidates, 1156, and
    the files audio and video tags name, 1186) and the ``href`` of each ``<a>`` tag as one of kind
    ``href`` (decision 1032), in text order: the link graph sees the tags a move
    with ``updateLinks`` rewrites (decision 761), by the same rule (``html_references``: never in
    code or an HTML comment). A link whose place is unknown (span -1) keeps its order among the
    others; a tag comes before the first located link after it."""
    # blocks parsed already: nothing is parsed again; else they are parsed there if it holds a tag
    source = _known_source(doc)
    found = html_references(doc) if source is None else html_references(doc, source.html, source.references)
    if not found:
        return list(links)
    starts = [e.start for e in doc.elements]
    tags = deque(found)
    out: list[Link] = []
    for link in links:
        while tags and link.start >= 0 and tags[0].start < link.start:
            out.append(_html_link(doc, starts, tags.popleft()))
        out.append(link)
    out.extend(_html_link(doc, starts, tag) for tag in tags)
    return out


def _html_link(doc: Document, starts: list[int], tag: HtmlReference) -> Link:
    anchor = _element_at(doc, starts, tag.start)
    pointer = anchor.anchor if anchor is not None else None
    # an <a>'s text is HTML the graph does not read: none, as an autolink's
    return Link("html" if tag.tag == "img" else "href", tag.value, None, pointer, tag.start, tag.end)


# Backtick runs (code spans open and close with runs of one length), ``%%`` and blank lines (no
# code span crosses one): what the comment scan below looks at.
_TICKS_MARK_OR_BLANK = re.compile(r"`+|%%|(?:\r\n|\r|\n)[ \t]*(?=\r|\n)")
_NOT_A_BREAK = re.compile(r"[^\r\n]+")  # a line's characters at once: one substitution per character was slow
_NEWLINE = re.compile("\n")


def _obsidian_comments(doc: Document, code: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of Obsidian's ``%%comments%%`` (decision 507): from a ``%%`` to the next one, within
    a line or across blocks, or to the end of the document when none closes it, as Obsidian hides
    them."""
    return _comment_spans(doc.text, _comment_marks(doc, code))


def _comment_marks(doc: Document, code: list[tuple[int, int]]) -> list[int]:
    """Where each ``%%`` that opens or closes a comment stands. One in a code block or code span, or
    in the front matter, is text."""
    text = doc.text
    front = doc.get("frontmatter")
    begin = doc.break_after(front.end) if front is not None else 0
    marks: list[int] = []
    for start, end in [*sorted(code), (len(text), len(text))]:
        if min(start, len(text)) > begin:
            marks.extend(_marks_outside_code_spans(text, begin, min(start, len(text))))
        begin = max(begin, end)
    return marks


def _comment_spans(text: str, marks: list[int]) -> list[tuple[int, int]]:
    return [(marks[i], marks[i + 1] + 2 if i + 1 < len(marks) else len(text)) for i in range(0, len(marks), 2)]


def _marks_outside_code_spans(text: str, begin: int, end: int) -> list[int]:
    """Where ``%%`` stands in ``text[begin:end]`` outside code spans. Each paragraph's backtick runs
    are looked at once: an opener's closer is the next run of its length (found by bisection), so a
    text of many unclosed backticks costs no more than their number."""
    marks: list[int] = []
    tokens: list[tuple[int, int, str]] = []  # (start, end, kind) of one paragraph

    def close_paragraph() -> None:
        by_length: dict[int, list[int]] = {}
        for i, (s, e, kind) in enumerate(tokens):
            if kind == "`":
                by_length.setdefault(e - s, []).append(i)
        i = 0
        while i < len(tokens):
            s, e, kind = tokens[i]
            if kind == "%":
                marks.append(s)
            else:
                same = by_length[e - s]
                after = bisect_right(same, i)
                if after < len(same):
                    i = same[after]  # the code span ends there; nothing inside it counts
            i += 1
        tokens.clear()

    for m in _TICKS_MARK_OR_BLANK.finditer(text, begin, end):
        first = m.group(0)[0]
        if first == "`" or first == "%":
            tokens.append((m.start(), m.end(), first))
        else:
            close_paragraph()
    close_paragraph()
    return marks


def _code_offsets(doc: Document, code: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """Each code block's lines ``[first, end)`` as offsets of ``doc.text``."""
    lines = doc.lines
    return [(lines.starts[a], lines.ends[min(b, lines.count) - 1]) for a, b in code if a < min(b, lines.count)]


def _spaces(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every character of ``spans`` but line breaks made a space."""
    parts: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:
            start = at
        if end <= start:
            continue
        parts += [text[at:start], _NOT_A_BREAK.sub(_spaces, text[start:end])]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _inline_links(children: list[Token], run: _Run, definitions: _Definitions, pointer: str | None) -> Iterable[Link]:
    """Each link of one inline run with its destination's span in the text: the very bytes the
    parser read it from (decision 450), or (-1, -1) when they do not spell it exactly."""
    for i, tok in enumerate(children):
        if tok.type == "link_open":
            href = str(tok.attrGet("href") or "")
            close = next((j for j in range(i + 1, len(children)) if children[j].type == "link_close"), len(children))
            label = _plain_text(children[i + 1 : close])
            if tok.markup == "autolink":
                yield Link("autolink", href, None, pointer, *run.span(tok, href))
            elif tok.info == "auto" or tok.markup == "linkify":
                continue
            elif "label" in tok.meta:
                if tok.meta["label"] in definitions.bodies:
                    continue  # `[^1]` names a footnote whose body's links are read (decision 1157)
                start, end = definitions.span(str(tok.meta["label"]), href)
                yield Link("reference", definitions.written(start, end, href), label, pointer, start, end)
            else:  # an inline link (written with escapes or entities: counted, never rewritten)
                yield Link("inline", href, label, pointer, *run.span(tok, href))
        elif tok.type == "image":
            src = str(tok.attrGet("src") or "")
            if "label" in tok.meta:
                if tok.meta["label"] in definitions.bodies:
                    continue
                start, end = definitions.span(str(tok.meta["label"]), src)
                src = definitions.written(start, end, src)
            else:
                start, end = run.span(tok, src)
            yield Link("image", src, tok.content or None, pointer, start, end)
        elif tok.type == "wikilink":
            target = str(tok.meta["target"])
            kind: LinkKind = "embed" if tok.meta["embed"] else "wikilink"
            yield Link(kind, target, tok.meta["alias"], pointer, *run.span(tok, target))


def _simple_link(found: Found, run: _Run, definitions: _Definitions, pointer: str | None, place: bool) -> Link:
    """The link :func:`_inline_links` gives for the same link read from the parser's tokens
    (``place``: with its span, else unplaced)."""
    if found.label is None:
        start, end = run.span_at(found.at, found.end, found.destination) if place else (-1, -1)
        return Link(found.kind, found.destination, found.text, pointer, start, end)
    start, end = definitions.span(found.label, found.destination)
    return Link(found.kind, definitions.written(start, end, found.destination), found.text, pointer, start, end)


def _is_footnote(label: object) -> bool:
    """Whether a reference label is a footnote's (``[^1]``, GFM and Obsidian, decision 1157)."""
    return isinstance(label, str) and label.startswith("^")


class _Placed(_Run):
    """A run written as one stretch of ``text`` at ``offset`` (a footnote's body)."""

    def __init__(self, text: str, doc: Document, offset: int, content: str) -> None:
        super().__init__(text, doc, 0, content, False, {})
        self.offset = offset

    def source(self, at: int) -> int:
        return self.offset + at


def _footnote_links(
    text: str, doc: Document, definitions: _Definitions, env: dict[str, Any], starts: list[int]
) -> dict[str, list[Link]]:
    """The links in the body of each footnote that CommonMark read as a reference definition, by
    label (decision 1157): ``[^1]: ![chart](a.png)``, ``[^2]: [page](page.md)``, ``[^3]: [[Note]]``
    and ``[^4]: <page.md>`` hold one token, which the block parse took for the destination (a
    body with a blank in it is a paragraph, whose links are read already). The body is that
    destination as written (an angle-bracketed one with its brackets), read as inline Markdown. A
    definition at the top level is a paragraph of its own (decision 1194), whose pointer its links
    have; one in a list item or a quote belongs to no element, so its links have no pointer, as an
    HTML block's. A body holding no link (``[^5]: page.md``) is left to be read as before: ``[^5]``
    a reference link."""
    found: dict[str, list[Link]] = {}
    for label in definitions.references:
        if not _is_footnote(label):
            continue
        start, end = definitions.find(label)
        if start < 0:
            continue
        if text[start - 1 : start] == "<" and text[end : end + 1] == ">":
            start, end = start - 1, end + 1
        body = text[start:end]
        if "[" not in body and "<" not in body:
            continue  # `[^1]: https://example.org` or a word: no link
        children: list[Token] = []
        _MD_INLINE.inline.parse(body, _MD_INLINE, env, children)
        holder = _element_at(doc, starts, start)
        pointer = holder.anchor if holder is not None and holder.kind is ElementKind.PARAGRAPH else None
        if held := list(_inline_links(children, _Placed(text, doc, start, body), definitions, pointer)):
            found[label] = held
    return found


def _in_text_order(links: list[Link], more: list[Link]) -> list[Link]:
    """``links`` with ``more`` (in text order) placed before the first located link after each."""
    pending = deque(more)
    out: list[Link] = []
    for link in links:
        while pending and pending[0].start >= 0 and link.start >= 0 and pending[0].start < link.start:
            out.append(pending.popleft())
        out.append(link)
    out.extend(pending)
    return out


# A definition's first line: container markers (quotes, list items), the label, ":", the destination
# (maybe on the next line, after that line's quote markers).
_DEFINITION = re.compile(
    r"(?:[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)])(?=[ \t])))*[ \t]*\[((?:[^\[\]\\]|\\.)+)\]:[ \t]*"
    r"(?:(?:\r\n?|\n)(?:[ \t]*>)*[ \t]*)?(?:<([^<>\r\n]*)>|(\S+))"
)


class _Definitions:
    """Where each reference definition's destination is written. markdown-it notes the line a
    definition starts on (``map``); only that line is read, so a look-alike in a code block or
    comment above it is never taken for it (decision 450)."""

    def __init__(self, text: str, doc: Document, references: dict[str, Any]) -> None:
        self.text, self.lines, self.references = text, doc.lines, references
        self.spans: dict[str, tuple[int, int]] = {}
        # the footnotes whose body's links are read: a use of their label is no reference link
        self.bodies: frozenset[str] = frozenset()

    def span(self, label: str, href: str) -> tuple[int, int]:
        start, end = self.find(label)
        if start < 0 or unquote(unescapeAll(self.text[start:end])) != unquote(href):  # written partly encoded is fine
            return -1, -1
        return start, end

    def written(self, start: int, end: int, href: str) -> str:
        """The destination as written when its span is known: the block parse percent-encoded a
        definition's (``<a b.md>`` gives ``a%20b.md``), and a rewrite replaces exactly the written
        bytes (decision 451)."""
        return unescapeAll(self.text[start:end]) if start >= 0 else href

    def find(self, label: str) -> tuple[int, int]:
        """The span of ``label``'s destination as written, (-1, -1) when it is not found exactly."""
        if label not in self.spans:
            self.spans[label] = self._find(label)
        return self.spans[label]

    def _find(self, label: str) -> tuple[int, int]:
        ref = self.references.get(label)
        line = ref.get("map", [None])[0] if isinstance(ref, dict) else None
        if not isinstance(line, int) or line >= self.lines.count:
            return -1, -1
        match = _DEFINITION.match(self.text, self.lines.starts[line])
        if match is None or normalize_label(match.group(1)) != normalize_label(label):
            return -1, -1
        group = 2 if match.group(2) is not None else 3
        return match.span(group)


_PROPERTY_LINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
_NOT_LINK_PROPERTIES = frozenset({"tags", "tag", "aliases", "alias", "cssclasses", "cssclass"})


def _property_values(value: Any) -> Iterable[str]:
    """Every string in a property's value (lists and mappings walked)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _property_values(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _property_values(item)


def _property_links(doc: Document, wanted: list[str]) -> Iterable[Link]:
    """The wikilinks of front-matter property values (Obsidian 1.4+ counts them as links: in
    backlinks, the graph, and a rename updates them; decision 483). ``wanted`` holds the inner texts
    (``Other|shown``) the YAML values carry; each is placed inside the source of the string that
    holds it (:func:`_property_places`), so a move rewrites that spelling and no other. One the
    YAML spelled with escapes is not found there and keeps the span -1: counted, never rewritten."""
    holder = doc.get("frontmatter")
    pointer = holder.anchor if holder is not None else None
    placed = _property_places(doc, holder) if holder is not None else None
    found = placed if placed is not None else [(inner, -1) for inner in wanted]
    for inner, place in found:
        target, _, alias = inner.partition("|")
        name = target.strip()
        start = end = -1
        if place >= 0:
            start = place + len(target) - len(target.lstrip())
            end = start + len(name)
        yield Link("wikilink", name, alias.strip() or None, pointer, start, end, True)


def _property_places(doc: Document, holder: Element) -> list[tuple[str, int]] | None:
    """``(inner text, offset in doc.text or -1)`` of each wikilink of a property value, in the order
    of the front matter, found from the YAML's own nodes (decision 684): a link's place is searched
    only inside the source of the string scalar that holds it. Searching the whole front matter
    for the first unused spelling put a link at the same spelling in another property (an
    unquoted `up: [[Note]]`, a nested list and no link), and skipped every line starting with `#`
    as a comment, though inside a block scalar it is text. ``None`` when the YAML does not compose,
    and for TOML front matter, whose reader gives no places (decision 1026): its links count, and
    a move leaves them as written."""
    text = doc.text
    if is_toml(text):
        return None
    import yaml

    first = doc.line_end(holder.start)  # the opening fence's line
    start = first + (2 if text.startswith("\r\n", first) else 1)
    close = max(text.rfind("\n", start, holder.end), text.rfind("\r", start, holder.end)) + 1
    body = text[start:close] if close > start else ""
    try:
        root = yaml.compose(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        try:
            root = yaml.compose(body, Loader=yaml.SafeLoader)
        except (yaml.YAMLError, RecursionError):  # nested too deep for the stack (_parse_yaml)
            return None
    if not isinstance(root, yaml.MappingNode):
        return None
    out: list[tuple[str, int]] = []
    seen: set[int] = set()  # an alias names a node already walked: its text is written once
    stack: list[yaml.Node] = [
        value
        for key, value in reversed(root.value)
        if not (isinstance(key, yaml.ScalarNode) and str(key.value).lower() in _NOT_LINK_PROPERTIES)
    ]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if isinstance(node.value, str) and "[[" in node.value:
                out.extend(_places_in(node, body, start))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            stack.extend(value for _, value in reversed(node.value))
    return out


def _places_in(node: Any, body: str, offset: int) -> Iterable[tuple[str, int]]:
    """The links of one string scalar, each at the first unused ``[[...]]`` of its spelling in the
    scalar's source (linear in its links: decision 696's grouping)."""
    lo, hi = node.start_mark.index, node.end_mark.index
    written: dict[str, deque[int]] = {}
    for match in _PROPERTY_LINK.finditer(body, lo, hi):
        if not match.group(1):
            written.setdefault(match.group(2), deque()).append(offset + match.start(2))
    for match in _PROPERTY_LINK.finditer(node.value):
        inner = match.group(2)
        if not match.group(1) and inner.strip():
            places = written.get(inner)
            yield inner, places.popleft() if places else -1


def _front_matter(source: str, *, toml: bool) -> tuple[list[str], list[str], list[str]]:
    """``tags``/``tag`` and ``aliases``/``alias`` of front matter (lists or comma strings; tags
    split on spaces too), and the inner texts of the wikilinks its other properties' values hold."""
    if "tag" not in source and "alias" not in source and "[[" not in source:
        return [], [], []
    try:
        data = load_front_matter(source, toml=toml)
    except ValueError:
        return [], [], []  # broken front matter is the author's to fix; the links still count
    if not isinstance(data, dict):
        return [], [], []
    properties: list[str] = []
    if "[[" in source:
        for key, value in data.items():
            if str(key).lower() not in _NOT_LINK_PROPERTIES:
                for string in _property_values(value):
                    properties.extend(
                        m.group(2) for m in _PROPERTY_LINK.finditer(string) if m.group(2).strip() and not m.group(1)
                    )

    def values(*keys: str) -> list[str]:
        out: list[str] = []
        for key in keys:
            raw = data.get(key)
            items = raw if isinstance(raw, list) else str(raw).split(",") if raw is not None else []
            out.extend(str(v).strip() for v in items if v is not None and str(v).strip())
        return out

    # a tag holds no space (Obsidian): "alpha beta" is two tags, an alias may hold spaces (decision 483)
    tags = [t.lstrip("#") for v in values("tags", "tag") for t in v.split() if t.lstrip("#")]
    return tags, values("aliases", "alias"), properties


def load_front_matter(source: str, *, toml: bool) -> Any:
    """The front matter between its fences as data: TOML's (``+++``, decision 1026) or YAML's.
    Raises ``ValueError`` when it does not load; every reader takes that as no front matter data."""
    return load_toml(source) if toml else load_yaml(source)


def load_yaml(source: str) -> Any:
    """``yaml.safe_load`` of front matter. Raises ``ValueError`` when it does not load, or when
    its aliases make it far larger than its text (see :func:`_check_expansion`)."""
    data = _parse_yaml(source)
    _check_expansion(data, 2 * len(source) + EXPANSION_SLACK)
    return data


def _parse_yaml(source: str) -> Any:
    """Through libyaml when PyYAML has it (20x faster: the pure-Python loader was a sixth of a
    cold reindex). What libyaml refuses is tried again with the pure-Python loader, so no header
    that loaded before is lost."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.load(source, Loader=fast)  # the C build of SafeLoader
        except yaml.YAMLError:
            pass
        except RecursionError:  # its constructor is Python: see below
            raise ValueError("front matter nested too deep") from None
    try:
        return yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        # libyaml refuses nesting 1,000 deep; the pure-Python loader recurses once per level and
        # ran out of stack there, which is not a YAMLError: one such header made its whole file
        # unreadable and kb_move / the PDF export an INTERNAL_ERROR (decision 1005)
        raise ValueError("front matter nested too deep") from None


# What a front matter's values may weigh beyond twice its own text (decision 404).
EXPANSION_SLACK = 10_000


def _check_expansion(data: Any, budget: int) -> None:
    """Refuse a structure that weighs more than ``budget`` once its aliases are expanded.

    YAML aliases share one object, so loading nine levels of nine references to a list (a few
    hundred bytes, the "billion laughs") is cheap, but every reader that walks or prints the values
    expands it: its tags, aliases and property links took seconds and millions of links per file,
    and a self-referencing alias (``&r [*r]``) ended in RecursionError. Counting each value once
    per place it is reached, plus its characters, plain YAML never weighs more than about twice
    its text; the walk stops as soon as the budget is spent, so refusing costs no more than that."""
    stack = [data]
    while stack:
        value = stack.pop()
        budget -= 1
        if isinstance(value, str):
            budget -= len(value)
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list | tuple | set):
            stack.extend(value)
        if budget < 0:
            raise ValueError("front matter expands to far more than its text (YAML aliases)")


def rewrite(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end)`` span replaced; spans must not overlap."""
    out: list[str] = []
    at = 0
    for start, end, value in sorted(set(edits)):
        if start < at:
            raise ValueError("overlapping link spans")
        out.append(text[at:start])
        out.append(value)
        at = end
    out.append(text[at:])
    return "".join(out)
