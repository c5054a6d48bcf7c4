"""YAML front matter as the reference's parser (Markdig's YAML extension) reads it (contract §4.1).

mdit-py-plugins' rule was more lenient than the reference on both fences: it opened on any run of
three or more dashes followed by anything (``----``, ``--- title``) and closed on a dash run at
least as long as the opening one, indented by up to three spaces (``----``, ``  ---``). Markdig opens
only on a first line of exactly ``---`` (then whitespace) and only when a closing line exists: exactly
``---`` or ``...`` at column 0, then whitespace; otherwise the first line is ordinary Markdown (a
thematic break, a paragraph, a setext underline). This rule does the same and emits the token the
plugin emitted (type ``front_matter``, map over both fences), so every consumer reads it unchanged
(decision 830).
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock

__all__ = ["front_matter_plugin"]

_OPENING = re.compile(r"---[ \t]*")
_CLOSING = re.compile(r"(?:---|\.\.\.)[ \t]*")


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] : state.eMarks[line]]


def _front_matter_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    # Only the document's own first line opens front matter; a nested parse (a list item's
    # content) also starts at line 0 but never at offset 0 with a zero indent.
    if start_line != 0 or state.blkIndent != 0 or state.bMarks[0] != 0 or not state.src.startswith("---"):
        return False
    if _OPENING.fullmatch(_line(state, 0)) is None:
        return False
    closing = next((n for n in range(1, end_line) if _CLOSING.fullmatch(_line(state, n))), None)
    if closing is None:
        return False
    if silent:
        return True
    token = state.push("front_matter", "", 0)
    token.hidden = True
    token.markup = "---"
    token.content = state.src[state.bMarks[1] : state.eMarks[closing - 1]] if closing > 1 else ""
    token.block = True
    token.map = [0, closing + 1]
    state.line = closing + 1
    return True


def front_matter_plugin(md: MarkdownIt) -> None:
    """Register the rule under mdit-py-plugins' name and position (``dispatch.py`` keys on it)."""
    md.block.ruler.before(
        "table",
        "front_matter",
        _front_matter_rule,
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )
