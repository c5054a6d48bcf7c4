"""What Markdown an edit may write: text, not control characters.

A fragment of kb_patch or the content of kb_create holding NUL or another C0 control character
(``\\u0000`` in the JSON an agent sends, usually an escaping slip) was written as given: a file
git and grep then call binary, which CommonMark reads with U+FFFD in its place. kb_edit_table
already refused them in cells. Tab, line feed, carriage return and form feed (a page break some
plain-text files hold) are text; DEL (U+007F) and the C1 range are left alone, as printable
encodings once used them (decision 631). A kb_patch fragment may hold a control character the file
already holds, checked against the revision it replaces (decision 1092).
"""

from __future__ import annotations

import re

from ..errors import InvalidArgument

__all__ = ["require_text"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


def require_text(markdown: str | None, field: str, source: str = "") -> None:
    """Refuse ``markdown`` (the request's ``field``) if it holds a control character that is not text,
    unless ``source`` (the file it is written into) already holds that character: an element read
    with a stray backspace is written back as it was read (decision 1092)."""
    if not markdown:
        return
    found = next((m for m in _CONTROL.finditer(markdown) if m.group() not in source), None)
    if found is None:
        return
    line = markdown.count("\n", 0, found.start()) + 1
    raise InvalidArgument(
        f"{field} contains the control character U+{ord(found.group()):04X} on its line {line}; Markdown text "
        "holds no control characters other than tab, line feed, carriage return and form feed. If it came "
        "from escaping, send the character it stood for."
    )
