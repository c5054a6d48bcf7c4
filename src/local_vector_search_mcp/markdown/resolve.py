"""Anchor resolution and relocation (contract §3.4, §3.5).

A hashed anchor names an element by position *and* content. The element at the
logical position wins when its selfHash matches; otherwise the unique element
of the same kind with that selfHash is taken (the document was edited above
it). Anything else is a conflict: the caller must read the document again.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum

from local_vector_search_mcp.errors import Conflict, ConflictReason, InvalidArgument

from .kinds import ElementKind
from .model import Document, Element
from .pointers import Anchor, parse_anchor

__all__ = [
    "ChangedKey",
    "MutationScope",
    "check_subtree",
    "resolve",
    "resolve_for_mutation",
    "resolve_pointer",
]

# What to do after an anchor conflict (decision 1117): the notes' "read the document again", then
# the tool and where to start, since re-reading from the stale anchor fails the same way.
_REREAD = "read the document again with kb_read (from pointer `document`) to get current pointers"

# An element an edit changed or removed: its kind, self hash and logical pointer (decision 993).
ChangedKey = tuple[ElementKind, str, str]


class MutationScope(StrEnum):
    SELF = "self"
    SUBTREE = "subtree"


def _not_found(pointer: str, path: str) -> InvalidArgument:
    return InvalidArgument(f"Pointer '{pointer}' was not found in document '{path}'.")


def resolve(doc: Document, anchor: Anchor, path: str, changed: Collection[ChangedKey] = ()) -> Element | None:
    """The element an anchor designates now; ``None`` for ``document``.

    Unhashed pointers resolve positionally (navigation). Hashed ones follow
    §3.4; the subtree hash never takes part in finding the element. ``changed``: the elements
    (kind, self hash, pointer) an edit changed or removed in this document; a pointer naming one
    is not relocated (decision 993: the element left with that hash may be its twin).
    """
    if anchor.is_document:
        return None
    logical = anchor.logical
    current = doc.get(logical)
    if anchor.self_hash is None:
        if current is None:
            raise _not_found(logical, path)
        return current
    kind = anchor.kind
    if current is not None and current.kind is kind and current.self_hash == anchor.self_hash:
        return current
    matches = [e for e in doc.elements if e.kind is kind and e.self_hash == anchor.self_hash]
    reserved = doc.is_reserved(logical)
    if (
        len(matches) == 1
        and current is not None
        and current.kind is kind
        and (kind, anchor.self_hash, logical) in changed
    ):
        # an edit changed or removed the element of this text at this place, and its place holds
        # another of its kind: the one left with its hash is a twin, not the one read (decision 993)
        raise Conflict(
            f"The element at '{logical}' changed since it was read (self hash mismatch); an identical "
            f"element elsewhere is not taken for it; {_REREAD}.",
            ConflictReason.SELF_HASH_MISMATCH,
        )
    if len(matches) == 1 and not (reserved and _also_in_a_container(doc, matches[0])):
        return matches[0]
    if reserved:
        raise Conflict(
            f"Pointer '{logical}' now names content inside a list, quote or table; {_REREAD}.",
            ConflictReason.RESERVED_POINTER,
        )
    if matches:
        raise Conflict(
            f"Pointer '{logical}' is ambiguous: it matches {len(matches)} elements after the document changed; "
            f"{_REREAD}.",
            ConflictReason.AMBIGUOUS,
        )
    if current is not None and current.kind is kind:
        raise Conflict(
            f"The element at '{logical}' changed since it was read (self hash mismatch); {_REREAD}.",
            ConflictReason.SELF_HASH_MISMATCH,
        )
    raise Conflict(
        f"The original element of '{logical}' could not be found in the current document (target not found); "
        f"{_REREAD}.",
        ConflictReason.TARGET_NOT_FOUND,
    )


_CONTAINERS = (ElementKind.LIST_ITEM, ElementKind.BLOCK_QUOTE, ElementKind.TABLE)


def _also_in_a_container(doc: Document, match: Element) -> bool:
    """Whether the text of ``match`` also stands inside a list item, quote or table.

    A hashed anchor whose position is now reserved (decision 490) either lost its ordinal to a
    container placed above it (its element moved on: follow it) or was itself turned into
    container content, e.g. a paragraph made a list item. In the second case an identical
    element elsewhere is not the one that was read, and its text is in the container: a
    CONFLICT then, as the reference answers every reserved position.
    """
    lines = [line.strip() for line in match.text.splitlines() if line.strip()]
    return any(
        all(line in element.text for line in lines)
        for element in doc.elements
        if element.kind in _CONTAINERS and element is not match
    )


def resolve_pointer(doc: Document, pointer: str, path: str) -> Element | None:
    """Parse and resolve a pointer argument (``InvalidArgument`` on bad syntax)."""
    return resolve(doc, parse_anchor(pointer), path)


def check_subtree(element: Element, anchor: Anchor) -> None:
    """For Subtree-scoped mutations: the caller's subtree hash must be current."""
    if anchor.subtree_hash is None:
        raise Conflict(
            f"Pointer '{anchor.logical}' has no subtree hash, which this operation requires; {_REREAD}.",
            ConflictReason.MISSING_SUBTREE_HASH,
        )
    if anchor.subtree_hash != element.subtree_hash:
        raise Conflict(
            f"Content below '{element.pointer}' changed since it was read (subtree hash mismatch); {_REREAD}.",
            ConflictReason.SUBTREE_HASH_MISMATCH,
        )


def resolve_for_mutation(
    doc: Document,
    anchor: Anchor,
    path: str,
    scope: MutationScope,
    changed: Collection[ChangedKey] = (),
) -> Element | None:
    """Resolve a mutation target: concrete elements need a self hash (§3.5, item 5)."""
    if anchor.is_document:
        return None
    if anchor.self_hash is None:
        raise InvalidArgument("A fingerprint is required when mutating a concrete semantic element.")
    if scope is MutationScope.SUBTREE and anchor.subtree_hash is None:
        raise Conflict(
            f"Pointer '{anchor.logical}' has no subtree hash, which this operation requires; {_REREAD}.",
            ConflictReason.MISSING_SUBTREE_HASH,
        )
    element = resolve(doc, anchor, path, changed)
    if element is not None and scope is MutationScope.SUBTREE:
        check_subtree(element, anchor)
    return element
