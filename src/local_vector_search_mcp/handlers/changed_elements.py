"""Which elements this server's edits changed in place, per document (decision 993).

A hashed pointer whose element is no longer at its position is relocated to the one element
of its kind with its hash (contract §3.4): the document was edited above it. When the file held
two identical elements and an edit changed or deleted the one a stale pointer names, the other is
then "the one element with its hash", and the stale edit landed on it: a row deleted from the
wrong table, an untouched paragraph replaced. The file alone cannot tell that case from a shift,
but the server that made the edit can: it notes each element the edit changed or removed (inside
the region of the text that changed) whose hash lost an instance, with its position, and an edit
whose pointer names that position and hash is not relocated (``resolve``). A twin that only moved
keeps its pointer working: its own position is not noted.

Kept in memory for this server's own edits (another process's or another editor's edits are not
seen), noted while the edit still holds the file's edit lock, and bounded in all.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict

from ..markdown import Document
from ..markdown.resolve import ChangedKey

__all__ = ["ChangedElements", "changed_span"]

MAX_KEYS = 65_536  # over every document: about 13 MB at most
_BLOCK = 4096  # characters compared at once while looking for the changed span


class ChangedElements:
    def __init__(self, _ws: object = None) -> None:  # ``Workspace.service`` passes the workspace
        self._lock = threading.Lock()
        self._changed: OrderedDict[str, frozenset[ChangedKey]] = OrderedDict()  # least recently edited first
        self._count = 0

    def of(self, rel: str) -> frozenset[ChangedKey]:
        """The elements of ``rel`` an edit changed or removed: (kind, self hash, pointer)."""
        with self._lock:
            return self._changed.get(rel, frozenset())

    def record(self, rel: str, before: Document, after: Document) -> None:
        """Note the elements of ``before`` in the span that changed whose hash lost an instance."""
        keys = changed_keys(before, after)
        if not keys:
            return
        with self._lock:
            old = self._changed.pop(rel, frozenset())
            merged = old | keys
            self._count += len(merged) - len(old)
            self._changed[rel] = merged
            while self._count > MAX_KEYS and len(self._changed) > 1:
                self._count -= len(self._changed.popitem(last=False)[1])


def changed_keys(before: Document, after: Document) -> frozenset[ChangedKey]:
    old = Counter((e.kind, e.self_hash) for e in before.elements)
    lost = old - Counter((e.kind, e.self_hash) for e in after.elements)
    if not lost:
        return frozenset()
    start, end = changed_span(before.text, after.text)
    return frozenset(
        (e.kind, e.self_hash, e.pointer)
        for e in before.elements
        if (e.kind, e.self_hash) in lost and e.start <= end and e.end >= start
    )


def changed_span(old: str, new: str) -> tuple[int, int]:
    """The span of ``old`` that differs from ``new``: less their common start and common end."""
    limit = min(len(old), len(new))
    prefix = _common_prefix(old, new, limit)
    suffix = _common_prefix(old[::-1], new[::-1], limit - prefix)  # the reversed copies: C speed
    return prefix, len(old) - suffix


def _common_prefix(old: str, new: str, limit: int) -> int:
    """How many first characters match, up to ``limit``, compared a block at a time."""
    at = 0
    while at < limit:
        n = min(_BLOCK, limit - at)
        a, b = old[at : at + n], new[at : at + n]
        if a != b:
            return at + next(i for i in range(n) if a[i] != b[i])
        at += n
    return at
