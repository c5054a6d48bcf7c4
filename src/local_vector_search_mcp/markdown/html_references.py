"""Where HTML tags in a document name a file: the ``src`` of ``<img>`` (decision 761), the
``href`` of ``<a>`` (decision 1032), each candidate URL of the ``srcset`` of ``<img>`` and of
``<source>`` (in ``<picture>``, decision 1156), and the files audio and video tags play or embed:
the ``src`` of ``<video>``, ``<audio>``, ``<source>``, ``<track>`` and ``<embed>``, the ``poster``
of ``<video>``, the ``data`` of ``<object>``, and the ``src`` of an ``<iframe>`` that names an
attachment (decision 1186).

Markdown allows raw HTML, and pictures and links are often written with it: mdBook books (the rust
book draws every figure with ``<img>``), READMEs that size or centre an image, MDX and HTML-heavy
docs that link with ``<a href="setup.md">``. A move that keeps links working must see those values
too. Only HTML that markdown-it reads as HTML counts: an HTML block, or inline HTML in a paragraph,
heading or table cell; the same tag in a code span, a code block or an HTML comment is text and is
never touched.

Each value is returned with its span in ``Document.text`` (the value between the quotes, or the
unquoted value; for a ``srcset`` candidate its URL alone, without the descriptor or the commas), so
a rewrite changes exactly those characters.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .front_matter import front_matter_plugin
from .model import Document

__all__ = [
    "ATTACHMENT_EXTENSIONS",
    "HtmlReference",
    "HtmlRun",
    "html_references",
    "may_hold_reference",
    "srcset_urls",
]

# What a plain Markdown link (``[the spec](files/spec.pdf)``) reaches as a file the graph checks
# (decision 820): Obsidian's attachment formats and the office files people attach. A link to
# anything else that is no ``.md`` (``page.html``, ``../src/main.rs``, a folder) is left alone: it
# may be a page the site generator makes or a source file, and kb_links never guesses. An
# ``<iframe src>`` counts only when it names one (decision 1186): a page it shows may be made.
ATTACHMENT_EXTENSIONS = frozenset(
    {
        *(".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif"),
        *(".pdf", ".mp3", ".wav", ".m4a", ".ogg", ".flac", ".3gp", ".mp4", ".webm", ".mov", ".mkv", ".ogv"),
        *(".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".csv", ".zip"),
    }
)

_MD = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
# the blocks alone: only a run holding a tag's opening is parsed inline (the graph reads every
# indexed document's tags, decision 820; a full parse doubled the link extraction of the rust book)
_BLOCKS = MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable(["inline", "text_join"])
# a tag and its opening; `<a` needs a blank or `/` after it: an attribute must follow, and
# `<abbr>`, `<aside>` are no links; `<source>` names a picture by its `srcset` (in `<picture>`)
# or a clip by its `src` (in `<video>`, `<audio>`); the media tags name the files they play
_NAME = r"img\b|a[\s/]|source\b|video\b|audio\b|track\b|embed\b|object\b|iframe\b"
_TAG = re.compile(rf"<({_NAME})[^>]*>", re.IGNORECASE)
_OPENING = re.compile(rf"<({_NAME})", re.IGNORECASE)
_IMG_OPEN = re.compile(r"<img", re.IGNORECASE)
_A_OPEN = re.compile(r"<a[\s/]", re.IGNORECASE)
_HREF = re.compile(r"href", re.IGNORECASE)
# `<source>` (a `srcset` or a clip's `src`) and the media tags, in one scan
_MEDIA_OPEN = re.compile(r"<(?:source|video|audio|track|embed|object|iframe)\b", re.IGNORECASE)


# an attribute value: double-quoted, single-quoted or unquoted (HTML's attribute syntax)
def _attribute(name: str) -> re.Pattern[str]:
    return re.compile(rf"""[\s/]{name}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)


Attribute = Literal["src", "href", "srcset", "poster", "data"]
_Read = tuple[Attribute, re.Pattern[str]]
_SRC: _Read = ("src", _attribute("src"))
_SRCSET_VALUE: _Read = ("srcset", _attribute("srcset"))
# what each tag names a file by; `srcset` holds a list of candidates (``srcset_urls``)
_ATTRIBUTES: dict[str, tuple[_Read, ...]] = {
    "img": (_SRC, _SRCSET_VALUE),
    "a": (("href", _attribute("href")),),
    "source": (_SRC, _SRCSET_VALUE),
    "video": (_SRC, ("poster", _attribute("poster"))),
    "audio": (_SRC,),
    "track": (_SRC,),
    "embed": (_SRC,),
    "object": (("data", _attribute("data")),),
    "iframe": (_SRC,),
}
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def may_hold_reference(text: str) -> bool:
    """Whether ``text`` may hold a tag this module reads, so a block is worth reading for them: an
    ``<a>`` without ``href`` anywhere (the rust book's 63 files of ``<a id="...">`` anchors) is
    passed over. Separate scans, each linear: one pattern for ``<a`` ... ``href`` took seconds on
    a line of thousands of ``<a `` (every opening scanned to the line's end)."""
    if _IMG_OPEN.search(text) is not None:
        return True
    if _A_OPEN.search(text) is not None and _HREF.search(text) is not None:
        return True
    return _MEDIA_OPEN.search(text) is not None


class HtmlRun(NamedTuple):
    """A block of a parse that may hold a tag: its first and end line (markdown-it's ``map``), and
    for an inline run (paragraph, heading, table cell) its content; ``None`` for an HTML block."""

    first: int
    end: int
    content: str | None


@dataclass(frozen=True, slots=True)
class HtmlReference:
    start: int
    end: int
    """The span of the value as written in ``Document.text``."""
    value: str
    """The value with character references resolved (what a browser requests)."""
    quote: str
    """``"``, ``'`` or ``""`` for an unquoted value."""
    tag: Literal["img", "a"]
    """``img`` for a file the tag shows, plays or embeds (an ``<img>``'s ``src`` or ``srcset``, a
    ``<source>``'s ``srcset`` or ``src``, a ``<video>``'s ``src`` or ``poster``, an ``<audio>``,
    ``<track>``, ``<embed>`` or ``<iframe>``'s ``src``, an ``<object>``'s ``data``): it names a file
    whatever its extension, as a picture does; ``a`` for a link's ``href``."""
    attribute: Attribute = "src"
    """The attribute that holds it: for ``srcset`` the value is one candidate's URL."""
    element: str = "img"
    """The tag's name, lower case (``img``, ``a``, ``source``, ``video``, ...)."""


def html_references(
    doc: Document, runs: Sequence[HtmlRun] | None = None, references: dict[str, Any] | None = None
) -> list[HtmlReference]:
    """Every ``src`` of an ``<img>`` tag, ``href`` of an ``<a>`` tag, candidate URL of the
    ``srcset`` of an ``<img>`` or ``<source>`` tag and file a media tag names (module docstring)
    that the document's HTML holds, in text order.

    ``runs`` are the blocks of the document's own full parse that may hold a tag (``LinkSource.html``,
    with its reference definitions): the indexer passes them, so a document is not parsed twice
    for its tags. Without them the document's blocks are parsed here."""
    text = doc.text
    if runs is None:
        if not may_hold_reference(text):
            return []
        env: dict[str, Any] = {}
        runs = _html_runs(_BLOCKS.parse(text, env))
        references = env.get("references")
    lines = doc.lines
    found: list[HtmlReference] = []
    inline_env: dict[str, Any] = {"references": references or {}}
    for first, end_line, content in runs:
        begin = lines.start_of(first)
        end = lines.ends[min(end_line, lines.count) - 1] if end_line > first else begin
        if content is None:
            found.extend(_values(text, begin, end, None))
        else:
            children: list[Token] = []
            _MD.inline.parse(content, _MD, inline_env, children)
            tags = [c.content for c in children if c.type == "html_inline" and _TAG.fullmatch(c.content)]
            if tags:
                found.extend(_values(text, begin, end, tags))
    return found


def _html_runs(tokens: Sequence[Token]) -> list[HtmlRun]:
    """The runs of a block parse that may hold a tag (as ``links.link_source`` collects them)."""
    runs = []
    for token in tokens:
        if token.map is None:
            continue
        if token.type == "html_block":
            runs.append(HtmlRun(token.map[0], token.map[1], None))
        elif token.type == "inline" and may_hold_reference(token.content):
            runs.append(HtmlRun(token.map[0], token.map[1], token.content))
    return runs


def _values(text: str, begin: int, end: int, inline_tags: list[str] | None) -> list[HtmlReference]:
    """The values of the tags in ``text[begin:end]`` outside HTML comments. For a paragraph's inline
    HTML (``inline_tags``, as markdown-it read them) a tag counts only when the paragraph holds it
    exactly as often as markdown-it found it: the other copies would be in code spans."""
    region = _COMMENT.sub(lambda m: " " * len(m.group(0)), text[begin:end])
    tags = list(_tags(region))
    if inline_tags is not None:
        # counted once per spelling: a paragraph of 20,000 `<a href>` took 11 s counting each in all
        parsed, seen = Counter(inline_tags), Counter(written for _, written, _ in tags)
        tags = [tag for tag in tags if parsed[tag[1]] == seen[tag[1]]]
    out: list[HtmlReference] = []
    for at, written, name in tags:
        kind: Literal["img", "a"] = "a" if name == "a" else "img"
        own: list[HtmlReference] = []
        for attribute, pattern in _ATTRIBUTES.get(name, ()):
            value = pattern.search(written)
            if value is None:
                continue
            group = next(g for g in (1, 2, 3) if value.group(g) is not None)
            quote = {1: '"', 2: "'", 3: ""}[group]
            start = begin + at + value.start(group)
            found = value.group(group)
            if attribute == "srcset":
                own.extend(
                    HtmlReference(start + a, start + b, url, quote, kind, attribute, name)
                    for a, b, url in srcset_urls(found)
                )
                continue
            resolved = html.unescape(found)
            if name == "iframe" and not _names_attachment(resolved):
                continue  # a page it shows may be one the site makes (`demo.html`): left alone, as a plain link's
            own.append(HtmlReference(start, start + len(found), resolved, quote, kind, attribute, name))
        out.extend(sorted(own, key=lambda ref: ref.start))  # `srcset` may stand before `src`
    return out


def _names_attachment(value: str) -> bool:
    """Whether a value's path ends in an attachment's extension (``ATTACHMENT_EXTENSIONS``)."""
    path = re.split(r"[?#]", value.strip(), maxsplit=1)[0]
    return posixpath.splitext(path)[1].lower() in ATTACHMENT_EXTENSIONS


# HTML's ASCII whitespace, which ends a candidate's URL, and a character reference as
# ``html.unescape`` reads one (its own pattern), so a value is decoded piece by piece
_SEPARATORS = re.compile(r"[\t\n\f\r ,]*")
_URL = re.compile(r"[^\t\n\f\r ]+")
# a candidate's descriptors: to the first comma outside parentheses, that comma included
_DESCRIPTORS = re.compile(r"(?:[^,(]+|\([^)]*\)?)*,?")
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")


def srcset_urls(written: str) -> list[tuple[int, int, str]]:
    """The URL of each image candidate of a ``srcset`` value as written: its span in ``written``
    and the URL with character references resolved, in order (decision 1156).

    Read as HTML's "parse a srcset attribute" reads the value once its character references are
    resolved: whitespace and commas before a candidate are skipped; its URL is the run of
    characters up to the next whitespace, less the commas that end it (``a.png,b.png 2x`` is one
    URL, ``a.png, b.png`` two); its descriptors (``2x``, ``480w``) run to the next comma outside
    parentheses. A candidate whose descriptors a browser would reject keeps its URL: the author
    named that file."""
    text, at = _decoded(written)
    found: list[tuple[int, int, str]] = []
    i = _SEPARATORS.match(text).end()  # type: ignore[union-attr]  # it matches the empty string
    while i < len(text):
        url = _URL.match(text, i)
        assert url is not None  # a separator run stops at a character of a URL
        start, i = url.span()
        end = len(url.group(0).rstrip(",")) + start  # its first character is no comma
        found.append((at[start], at[end], text[start:end]))
        if end == i:  # not ended by a comma: its descriptors run to the next separating comma
            i = _DESCRIPTORS.match(text, i).end()  # type: ignore[union-attr]
        i = _SEPARATORS.match(text, i).end()  # type: ignore[union-attr]
    return found


def _decoded(written: str) -> tuple[str, list[int]]:
    """``written`` with its character references resolved, and where each of its characters (and
    its end) stands in ``written``: the characters of a reference all stand at its ``&``."""
    if "&" not in written:
        return written, list(range(len(written) + 1))
    out: list[str] = []
    at: list[int] = []
    done = 0
    for ref in _CHARREF.finditer(written):
        out.append(written[done : ref.start()])
        at.extend(range(done, ref.start()))
        piece = html.unescape(ref.group(0))
        out.append(piece)
        at.extend([ref.start()] * len(piece))
        done = ref.end()
    out.append(written[done:])
    at.extend(range(done, len(written) + 1))
    return "".join(out), at


def _tags(region: str) -> Iterator[tuple[int, str, str]]:
    """Each tag of ``region`` this module reads (where it starts, as written, its name in lower
    case: ``img``, ``a``, ``source``, ``video``...), as
    ``_TAG.finditer`` finds them, but linear: once an opening has no ``>`` after it, no later one
    has (the pattern scanned to the end from each of thousands of unclosed openings)."""
    at = 0
    while (opening := _OPENING.search(region, at)) is not None:
        close = region.find(">", opening.end())
        if close < 0:
            return
        name = opening.group(1).lower()
        yield opening.start(), region[opening.start() : close + 1], "a" if len(name) == 2 else name  # `a ` or `a/`
        at = close + 1
