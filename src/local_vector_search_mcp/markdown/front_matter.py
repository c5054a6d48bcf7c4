"""Front matter: YAML as the reference's parser (Markdig's YAML extension) reads it (contract §4.1),
and TOML between ``+++`` fences, Hugo's default (decision 1026).

mdit-py-plugins' rule was more lenient than the reference on both fences: it opened on any run of
three or more dashes followed by anything (``----``, ``--- title``) and closed on a dash run at
least as long as the opening one, indented by up to three spaces (``----``, ``  ---``). Markdig opens
only on a first line of exactly ``---`` (then whitespace) and only when a closing line exists: exactly
``---`` or ``...`` at column 0, then whitespace; otherwise the first line is ordinary Markdown (a
thematic break, a paragraph, a setext underline). This rule does the same and emits the token the
plugin emitted (type ``front_matter``, map over both fences), so every consumer reads it unchanged
(decision 830).

Hugo's TOML front matter opens on a first line of exactly ``+++`` (then whitespace) and closes on
the first later line that is exactly ``+++`` (then whitespace); unclosed, its first line is
ordinary Markdown (a paragraph), as an unclosed ``---`` is. Its token is the same, ``markup``
``+++``: every consumer reads it as front matter, and :func:`load_toml` is its reading.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock

__all__ = ["TOML_FENCE", "front_matter_plugin", "is_toml", "load_toml"]

TOML_FENCE = "+++"
_YAML = (re.compile(r"---[ \t]*"), re.compile(r"(?:---|\.\.\.)[ \t]*"))  # opening, closing fence
_TOML = (re.compile(r"\+\+\+[ \t]*"), re.compile(r"\+\+\+[ \t]*"))


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] : state.eMarks[line]]


def _front_matter_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    # Only the document's own first line opens front matter; a nested parse (a list item's
    # content) also starts at line 0 but never at offset 0 with a zero indent.
    if start_line != 0 or state.blkIndent != 0 or state.bMarks[0] != 0:
        return False
    markup = state.src[:3]
    fences = _YAML if markup == "---" else _TOML if markup == TOML_FENCE else None
    if fences is None or fences[0].fullmatch(_line(state, 0)) is None:
        return False
    closing = next((n for n in range(1, end_line) if fences[1].fullmatch(_line(state, n))), None)
    if closing is None:
        return False
    if silent:
        return True
    token = state.push("front_matter", "", 0)
    token.hidden = True
    token.markup = markup
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


def is_toml(text: str) -> bool:
    """Whether the front matter of the document ``text`` (known to have one) is TOML."""
    return text.startswith(TOML_FENCE)


def load_toml(source: str) -> Any:
    """``tomllib.loads`` of front matter. Raises ``ValueError`` when it does not load: broken TOML
    front matter is read as broken YAML is (no title, tags or fields; the body still counts)."""
    import tomllib  # standard library; only a document with TOML front matter pays the import

    try:
        return tomllib.loads(source)  # its TOMLDecodeError is a ValueError
    except RecursionError:  # arrays nested thousands deep: tomllib recurses once per level
        raise ValueError("front matter nested too deep") from None
