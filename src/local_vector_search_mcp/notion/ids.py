"""Notion page ids as people paste them, reduced to the one form the page mapping is keyed by.

Notion takes a page id with or without hyphens, in any case, and shows it at the end of the
page's URL (``https://www.notion.so/My-Page-<32 hex digits>``). All of these name one page,
so they must give one key in ``notion-pages.json``: a second spelling of the parent made
a second copy of every page (decision 708).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

__all__ = ["ACCEPTED_FORMS", "page_id"]

ACCEPTED_FORMS = (
    "the page id (32 hexadecimal digits, with or without hyphens) or the page's notion.so or notion.site URL "
    "(https://www.notion.so/My-Page-<32 hex digits>)"
)

_COMPACT = re.compile(r"[0-9a-f]{32}", re.IGNORECASE)
_HYPHENATED = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
# The URL's last path segment: the id alone, or the page's title slug, a hyphen and the id.
_URL_SEGMENT = re.compile(r"(?:.*-)?([0-9a-f]{32})", re.IGNORECASE | re.DOTALL)
_NOTION_HOSTS = ("notion.so", "notion.site")


def page_id(value: str) -> str | None:
    """``value`` as a lowercase hyphenated UUID (Notion's own form), or None if it names no page."""
    text = value.strip()
    if _COMPACT.fullmatch(text) or _HYPHENATED.fullmatch(text):
        return _hyphenated(text)
    digits = _from_url(text)
    return _hyphenated(digits) if digits else None


def _hyphenated(text: str) -> str:
    digits = text.replace("-", "").lower()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def _from_url(text: str) -> str | None:
    """The 32 hex digits a Notion page URL ends with; query and fragment are ignored."""
    try:
        parts = urlsplit(text)
    except ValueError:  # an unclosed IPv6 bracket: not a Notion URL either
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not any(host == h or host.endswith("." + h) for h in _NOTION_HOSTS):
        return None
    # A page opened over a database (peek view) is `/<database id>?p=<page id>`: the page is `p`.
    for peeked in parse_qs(parts.query).get("p", []):
        if _COMPACT.fullmatch(peeked):
            return peeked
    match = _URL_SEGMENT.fullmatch(parts.path.rstrip("/").rpartition("/")[2])
    return match.group(1) if match else None
