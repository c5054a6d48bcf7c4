"""Where ``<img src="...">`` tags in a document's HTML name their picture (decision 761).

Markdown allows raw HTML, and pictures are often drawn with it: mdBook books (the rust book draws
every figure with ``<img>``), READMEs that size or centre an image. A move that keeps links
working must see those sources too. Only HTML that markdown-it reads as HTML counts: an HTML
block, or inline HTML in a paragraph, heading or table cell; the same tag in a code span, a code
block or an HTML comment is text and is never touched.

Each source is returned with its span in ``Document.text`` (the value between the quotes, or the
unquoted value), so a rewrite changes exactly those characters.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .front_matter import front_matter_plugin
from .model import Document

__all__ = ["IMG_OPEN", "HtmlImageSource", "HtmlRun", "html_image_sources"]

_MD = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
# the blocks alone: only a run holding "<img" is parsed inline (the graph reads every indexed
# document's tags, decision 820; a full parse doubled the link extraction of the rust book)
_BLOCKS = MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable(["inline", "text_join"])
_IMG_TAG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
IMG_OPEN = re.compile(r"<img", re.IGNORECASE)
# an attribute value: double-quoted, single-quoted or unquoted (HTML's attribute syntax)
_SRC = re.compile(r"""[\s/]src\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))""", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


class HtmlRun(NamedTuple):
    """A block of a parse that may hold an ``<img>`` tag: its first and end line (markdown-it's
    ``map``), and for an inline run (paragraph, heading, table cell) its content; ``None`` for an
    HTML block."""

    first: int
    end: int
    content: str | None


@dataclass(frozen=True, slots=True)
class HtmlImageSource:
    start: int
    end: int
    """The span of the value as written in ``Document.text``."""
    value: str
    """The value with character references resolved (what a browser requests)."""
    quote: str
    """``"``, ``'`` or ``""`` for an unquoted value."""


def html_image_sources(
    doc: Document, runs: Sequence[HtmlRun] | None = None, references: dict[str, Any] | None = None
) -> list[HtmlImageSource]:
    """Every ``src`` of an ``<img>`` tag that the document's HTML holds, in text order.

    ``runs`` are the blocks of the document's own full parse that may hold a tag (``LinkSource.html``,
    with its reference definitions): the indexer passes them, so a document is not parsed twice
    for its pictures. Without them the document's blocks are parsed here."""
    text = doc.text
    if runs is None:
        if IMG_OPEN.search(text) is None:
            return []
        env: dict[str, Any] = {}
        runs = _html_runs(_BLOCKS.parse(text, env))
        references = env.get("references")
    lines = doc.lines
    found: list[HtmlImageSource] = []
    inline_env: dict[str, Any] = {"references": references or {}}
    for first, end_line, content in runs:
        begin = lines.start_of(first)
        end = lines.ends[min(end_line, lines.count) - 1] if end_line > first else begin
        if content is None:
            found.extend(_sources(text, begin, end, None))
        else:
            children: list[Token] = []
            _MD.inline.parse(content, _MD, inline_env, children)
            tags = [c.content for c in children if c.type == "html_inline" and _IMG_TAG.fullmatch(c.content)]
            if tags:
                found.extend(_sources(text, begin, end, tags))
    return found


def _html_runs(tokens: Sequence[Token]) -> list[HtmlRun]:
    """The runs of a block parse that may hold a tag (as ``links.link_source`` collects them)."""
    runs = []
    for token in tokens:
        if token.map is None:
            continue
        if token.type == "html_block":
            runs.append(HtmlRun(token.map[0], token.map[1], None))
        elif token.type == "inline" and IMG_OPEN.search(token.content):
            runs.append(HtmlRun(token.map[0], token.map[1], token.content))
    return runs


def _sources(text: str, begin: int, end: int, inline_tags: list[str] | None) -> list[HtmlImageSource]:
    """The sources of the tags in ``text[begin:end]`` outside HTML comments. For a paragraph's inline
    HTML (``inline_tags``, as markdown-it read them) a tag counts only when the paragraph holds it
    exactly as often as markdown-it found it: the other copies would be in code spans."""
    region = _COMMENT.sub(lambda m: " " * len(m.group(0)), text[begin:end])
    out: list[HtmlImageSource] = []
    for tag in _IMG_TAG.finditer(region):
        written = tag.group(0)
        if inline_tags is not None and inline_tags.count(written) != region.count(written):
            continue
        src = _SRC.search(written)
        if src is None:
            continue
        group = next(g for g in (1, 2, 3) if src.group(g) is not None)
        quote = {1: '"', 2: "'", 3: ""}[group]
        start = begin + tag.start() + src.start(group)
        out.append(HtmlImageSource(start, start + len(src.group(group)), html.unescape(src.group(group)), quote))
    return out
