"""Logical pointers and anchors (contract §3.1, §3.2).

Grammar (``N`` = positive decimal without leading zero)::

    pointer  := "document" | "frontmatter" | section [ "." leaf ] | leaf
    section  := N { "." N }
    leaf     := "p" N | "code" N | "q" N | "t" N | listpath
    listpath := "li" N { ".li" N }

An anchor is ``logical`` (navigation only), ``logical~self`` (legacy v1, input
only) or ``logical~self~subtree`` (v2, the only form we emit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from local_vector_search_mcp.errors import InvalidArgument

from .kinds import ElementKind

__all__ = [
    "DOCUMENT",
    "FRONT_MATTER",
    "Anchor",
    "containing_section",
    "format_anchor",
    "is_valid_pointer",
    "parent_item",
    "parse_anchor",
    "pointer_kind",
]

DOCUMENT = "document"
FRONT_MATTER = "frontmatter"

_N = r"[1-9][0-9]*"
_LEAF = rf"(?:(?:p|code|q|t){_N}|li{_N}(?:\.li{_N})*)"
_POINTER_RE = re.compile(rf"(?:document|frontmatter|{_N}(?:\.{_N})*(?:\.{_LEAF})?|{_LEAF})")
_HASH_RE = re.compile(r"[0-9a-fA-F]{16}")
_FINGERPRINT_ERROR = "Invalid semantic pointer fingerprint."


def is_valid_pointer(value: str) -> bool:
    return _POINTER_RE.fullmatch(value) is not None


def pointer_kind(pointer: str) -> ElementKind | None:
    """Kind named by a valid logical pointer; ``None`` for ``document``."""
    if pointer == DOCUMENT:
        return None
    if pointer == FRONT_MATTER:
        return ElementKind.FRONT_MATTER
    last = pointer.rsplit(".", 1)[-1]
    if last.startswith("li"):
        return ElementKind.LIST_ITEM
    if last.startswith("code"):
        return ElementKind.CODE_BLOCK
    if last.startswith("p"):
        return ElementKind.PARAGRAPH
    if last.startswith("q"):
        return ElementKind.BLOCK_QUOTE
    if last.startswith("t"):
        return ElementKind.TABLE
    return ElementKind.HEADING


def containing_section(pointer: str) -> str | None:
    """``1.2.li3.li1`` → ``1.2``; ``li1.li2`` → ``None``; a heading is its own section."""
    if pointer in (DOCUMENT, FRONT_MATTER):
        return None
    numbers = []
    for part in pointer.split("."):
        if not part.isdigit():
            break
        numbers.append(part)
    return ".".join(numbers) or None


def parent_item(pointer: str) -> str | None:
    """``1.li2.li1`` → ``1.li2``; a root item or any other kind → ``None``."""
    head, _, last = pointer.rpartition(".")
    if last.startswith("li") and head.rsplit(".", 1)[-1].startswith("li"):
        return head
    return None


@dataclass(frozen=True, slots=True)
class Anchor:
    """A parsed pointer argument; hashes are lowercase or ``None``."""

    logical: str
    self_hash: str | None = None
    subtree_hash: str | None = None

    @property
    def is_document(self) -> bool:
        return self.logical == DOCUMENT

    @property
    def hashed(self) -> bool:
        return self.self_hash is not None

    @property
    def kind(self) -> ElementKind | None:
        return pointer_kind(self.logical)

    def format(self) -> str:
        parts = [self.logical]
        if self.self_hash is not None:
            parts.append(self.self_hash)
            if self.subtree_hash is not None:
                parts.append(self.subtree_hash)
        return "~".join(parts)


def format_anchor(pointer: str, self_hash: str, subtree_hash: str) -> str:
    """The canonical v2 anchor ``logical~self~subtree``."""
    return f"{pointer}~{self_hash}~{subtree_hash}"


def _full_pointer_hint(value: str) -> str:
    """What to send instead when ``value`` is a search result's ``fullPointer`` (``<path>::<pointer>``),
    which agents pass as the pointer: the contract's message alone sent them back to the same call
    (decision 1095)."""
    path, sep, pointer = value.rpartition("::")
    if not sep or not path.strip() or not is_valid_pointer(pointer.split("~")[0]):
        return ""
    return (
        f" (a search result's fullPointer, `<path>::<pointer>`, is no pointer: send path `{path}` and "
        f"pointer `{pointer}`)"
    )


def parse_anchor(value: str) -> Anchor:
    """Parse a pointer argument; raise ``InvalidArgument`` with the contract messages."""
    parts = value.split("~")
    if len(parts) > 3:
        raise InvalidArgument(_FINGERPRINT_ERROR)
    logical, hashes = parts[0], parts[1:]
    if hashes and (not logical.strip() or not all(_HASH_RE.fullmatch(h) for h in hashes)):
        raise InvalidArgument(_FINGERPRINT_ERROR)
    if not is_valid_pointer(logical) or (hashes and logical == DOCUMENT):
        # ``document`` is synthetic and never carries hashes.
        raise InvalidArgument(f"Invalid semantic pointer: {value}{_full_pointer_hint(value)}")
    lowered = [h.lower() for h in hashes]
    return Anchor(
        logical,
        lowered[0] if lowered else None,
        lowered[1] if len(lowered) > 1 else None,
    )
