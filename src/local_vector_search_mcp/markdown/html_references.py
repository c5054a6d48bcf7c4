"""Where HTML tags in a document name a file: the ``src`` of ``<img>`` (decision 761) and the
``href`` of ``<a>`` (decision 1032).

Markdown allows raw HTML, and pictures and links are often written with it: mdBook books (the rust
book draws every figure with ``<img>``), READMEs that size or centre an image, MDX and HTML-heavy
docs that link with ``<a href="setup.md">``. A move that keeps links working must see those values
too. Only HTML that markdown-it reads as HTML counts: an HTML block, or inline HTML in a paragraph,
heading or table cell; the same tag in a code span, a code block or an HTML comment is text and is
never touched.

Each value is returned with its span in ``Document.text`` (the value between the quotes, or the
unquoted value), so a rewrite changes exactly those characters.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .front_matter import front_matter_plugin
from .model import Document

__all__ = ["HtmlReference", "HtmlRun", "html_references", "may_hold_reference"]

_MD = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
# the blocks alone: only a run holding a tag's opening is parsed inline (the graph reads every
# indexed document's tags, decision 820; a full parse doubled the link extraction of the rust book)
_BLOCKS = MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable(["inline", "text_join"])
# a tag and its opening; `<a` needs a blank or `/` after it: an attribute must follow, and
# `<abbr>`, `<aside>` are no links
_TAG = re.compile(r"<(img\b|a[\s/])[^>]*>", re.IGNORECASE)
_OPENING = re.compile(r"<(img\b|a[\s/])", re.IGNORECASE)
_IMG_OPEN = re.compile(r"<img", re.IGNORECASE)
_A_OPEN = re.compile(r"<a[\s/]", re.IGNORECASE)
_HREF = re.compile(r"href", re.IGNORECASE)


# an attribute value: double-quoted, single-quoted or unquoted (HTML's attribute syntax)
def _attribute(name: str) -> re.Pattern[str]:
    return re.compile(rf"""[\s/]{name}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)


_ATTRIBUTES = {"img": _attribute("src"), "a": _attribute("href")}
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def may_hold_reference(text: str) -> bool:
    """Whether ``text`` may hold a tag this module reads, so a block is worth reading for them: an
    ``<a>`` without ``href`` anywhere (the rust book's 63 files of ``<a id="...">`` anchors) is
    passed over. Separate scans, each linear: one pattern for ``<a`` ... ``href`` took seconds on
    a line of thousands of ``<a `` (every opening scanned to the line's end)."""
    if _IMG_OPEN.search(text) is not None:
        return True
    return _A_OPEN.search(text) is not None and _HREF.search(text) is not None


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
    """``img`` for a picture's ``src``, ``a`` for a link's ``href``."""


def html_references(
    doc: Document, runs: Sequence[HtmlRun] | None = None, references: dict[str, Any] | None = None
) -> list[HtmlReference]:
    """Every ``src`` of an ``<img>`` tag and ``href`` of an ``<a>`` tag that the document's HTML
    holds, in text order.

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
        value = _ATTRIBUTES[name].search(written)
        if value is None:
            continue
        group = next(g for g in (1, 2, 3) if value.group(g) is not None)
        quote = {1: '"', 2: "'", 3: ""}[group]
        start = begin + at + value.start(group)
        found = value.group(group)
        out.append(HtmlReference(start, start + len(found), html.unescape(found), quote, name))
    return out


def _tags(region: str) -> Iterator[tuple[int, str, Literal["img", "a"]]]:
    """Each ``<img>`` and ``<a>`` tag of ``region`` (where it starts, as written, its name), as
    ``_TAG.finditer`` finds them, but linear: once an opening has no ``>`` after it, no later one
    has (the pattern scanned to the end from each of thousands of unclosed openings)."""
    at = 0
    while (opening := _OPENING.search(region, at)) is not None:
        close = region.find(">", opening.end())
        if close < 0:
            return
        yield opening.start(), region[opening.start() : close + 1], "img" if opening.group(1).lower() == "img" else "a"
        at = close + 1
