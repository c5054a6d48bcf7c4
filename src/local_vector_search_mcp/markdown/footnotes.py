"""A footnote definition CommonMark reads as a reference definition is a paragraph (decision 1194).

CommonMark has no footnotes: ``[^1]: https://example.org/paper`` (a body of one token) is a link
reference definition with the label ``^1``, which no element holds, so its text was in no chunk
(kb_search never found it) and kb_read showed it only between elements. A body with a blank in it
is no definition but a paragraph, an element like any other.

:func:`footnote_definitions` gives a block parser a reference rule that, where the stock rule reads
a definition written ``[^label]:`` at the top level of the document, also emits a paragraph over
exactly the lines that definition took (``paragraph_open``, ``inline``, ``paragraph_close``, the
open token's ``info`` :data:`FOOTNOTE`). Nothing else changes: the stock rule still consumes those
lines and records the reference (so ``[^1]`` elsewhere and the link layer's reading, decision 1157,
are as before), and every other token is the stock parser's. A definition inside a list item or a
quote is left as it was: the item's or the quote's text holds it already.

Such a paragraph takes an ordinal no other paragraph of its section had before (``numbering``):
every pointer written before keeps addressing the element it did.
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt

__all__ = ["FOOTNOTE", "footnote_definitions", "is_footnote_definition"]

# ``info`` of the ``paragraph_open`` token of a footnote definition's paragraph.
FOOTNOTE = "footnote"


def is_footnote_definition(src: str, pos: int) -> bool:
    """Whether a definition whose ``[`` is at ``pos`` is a footnote's: ``[^`` (GFM, Obsidian, the
    link layer's ``_is_footnote`` and the PDF renderer's footnotes, decisions 473, 1157)."""
    return src.startswith("[^", pos)


def footnote_definitions(md: MarkdownIt) -> MarkdownIt:
    """Make the top-level ``[^label]:`` definitions of ``md``'s block parse paragraphs too."""
    ruler = md.block.ruler
    rule = ruler.__rules__[ruler.__find__("reference")]
    stock = rule.fn

    def reference(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
        if not stock(state, start_line, end_line, silent):
            return False
        if silent or state.level != 0:
            return True
        if not is_footnote_definition(state.src, state.bMarks[start_line] + state.tShift[start_line]):
            return True
        line_map = [start_line, state.line]
        opening = state.push("paragraph_open", "p", 1)
        opening.map = line_map
        opening.info = FOOTNOTE
        inline = state.push("inline", "", 0)
        inline.content = state.getLines(start_line, state.line, state.blkIndent, False).strip()
        inline.map = line_map
        inline.info = FOOTNOTE
        inline.children = []
        state.push("paragraph_close", "p", -1)
        return True

    ruler.at("reference", reference, {"alt": list(rule.alt)})
    return md
