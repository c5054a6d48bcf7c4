"""The text a reader sees in raw HTML.

HTML blocks are no elements (§4.2), yet MDX components (``<Callout>``), figure captions and
``<details><summary>`` hold words a reader sees and searches for: the chunker indexes their
visible text with the section they sit in (decision 1025). The same reading tells a chunk of
markup alone, which the semantic list leaves out (``search/meaning.py``, decision 790).
"""

from __future__ import annotations

import html
import re

from .incremental import raw_blocks
from .model import Document

__all__ = ["MARKUP", "WORD", "html_block_texts", "visible_text"]

# An attribute: its name, and a value double-quoted, single-quoted, unquoted (HTML's syntax) or
# a JSX expression with one level of nested braces (MDX: ``items={[{ a: 1 }]}``). A quoted value may
# hold ``<`` and ``>``: mdBook's ``<Listing caption="... `Option<T>`">``.
_ATTRIBUTE = r"""\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|[^\s"'=<>`]+))?"""
# Markup a reader never sees: comments, the content of <script> and <style>, declarations,
# processing instructions, CDATA, and tags (a tag's attribute values are no text a reader sees).
# Each runs to its end or, left open, to the end of the text (where markdown-it ends the block).
# Tag names are CommonMark's, plus the ``.``, ``:`` and ``_`` of MDX and Vue (<Tabs.Item>).
MARKUP = re.compile(
    r"<!--.*?(?:-->|\Z)"
    r"|<(script|style)\b.*?(?:</\1\s*>|\Z)"
    r"|<!\[CDATA\[.*?(?:\]\]>|\Z)"
    r"|<![A-Za-z][^>]*>?"
    r"|<\?.*?(?:\?>|\Z)"
    rf"|</?[A-Za-z][\w.:-]*(?:{_ATTRIBUTE})*\s*/?>",
    re.DOTALL | re.IGNORECASE,
)
WORD = re.compile(r"[^\W_]")  # a letter or a digit
_HTML_BLOCK = ("html_block",)


def visible_text(markup: str) -> str:
    """The words ``markup`` shows: every tag read as a space (most HTML blocks are block-level
    tags, whose texts do not run on into each other), character references decoded, whitespace
    collapsed to single spaces."""
    return " ".join(html.unescape(MARKUP.sub(" ", markup)).split())


def html_block_texts(doc: Document) -> list[tuple[int, str]]:
    """``(start, visible text)`` of each top-level HTML block that shows a letter or a digit.

    HTML inside a list item or a quote is already part of that element's text."""
    if "<" not in doc.text:  # nearly every document without HTML stops here
        return []
    found = []
    for start, end, _ in raw_blocks(doc, _HTML_BLOCK):
        text = visible_text(doc.text[start:end])
        if WORD.search(text):
            found.append((start, text))
    return found
