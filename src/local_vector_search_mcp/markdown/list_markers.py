"""List item markers: the style and indent that tie an item to its list (§4.4).

CommonMark keeps consecutive items in one list only while their marker style
agrees (the bullet character, or the delimiter after an ordered number), so
kb_patch compares styles before and after an edit.
"""

from __future__ import annotations

import re

from .model import Document, Element

__all__ = ["item_depth", "item_marker", "list_marker", "marker_style"]

# A marker is followed by a space or tab, or ends its line: an item may start with a blank line
# (``-`` alone, its content indented below, decision 843).
_MARKER_RE = re.compile(r"([ \t]*)([-+*]|[0-9]{1,9}[.)])(?=[ \t\r\n]|\Z)")


def list_marker(text: str, start: int) -> tuple[str, int] | None:
    """``(style, indent)`` of the list item whose line starts at ``start``.

    Style is the bullet character or ``ordered:.`` / ``ordered:)`` (numbers
    ignored); indent is the leading whitespace length (§4.4). ``None`` when
    the line does not start with a recognised marker.
    """
    match = _MARKER_RE.match(text, start)
    if match is None:
        return None
    marker = match.group(2)
    style = marker if marker in "-+*" else f"ordered:{marker[-1]}"
    return style, len(match.group(1))


def marker_style(text: str, start: int) -> str | None:
    """The bullet character or ordered delimiter of the marker at ``start``."""
    match = _MARKER_RE.match(text, start)
    if match is None:
        return None
    marker = match.group(2)
    return marker if marker in "-+*" else marker[-1]


def item_marker(doc: Document, item: Element) -> tuple[str, int] | None:
    """:func:`list_marker` of an item that starts its own line, else ``None``."""
    if doc.line_start(item.start) != item.start:
        return None  # an item opening on its parent's line (``- - a``)
    return list_marker(doc.text, item.start)


def item_depth(item: Element) -> int:
    """Nesting depth of a list item: the ``liN`` parts of its pointer."""
    return sum(1 for part in item.pointer.split(".") if part.startswith("li"))
