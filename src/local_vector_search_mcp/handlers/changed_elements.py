"""Which elements this server's edits changed in place, per document (decision 993).

A hashed pointer whose element is no longer at its position is relocated to the one element
of its kind with its hash (contract §3.4): the document was edited above it. When the file held
two identical elements and an edit changed or deleted the one a stale pointer names, the other is
then "the one element with its hash", and the stale edit landed on it: a row deleted from the
wrong table, an untouched paragraph replaced. The file alone cannot tell that case from a shift,
but the server that made the edit can: an element whose hash lost an instance in an edit was
changed in place (a shift keeps every hash's count). Edits then refuse to relocate to such a
hash, as the reference refuses an ambiguous one.

Kept in memory for this server's own edits (another process's or another editor's edits are not
seen), bounded per document and in documents.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from typing import Any

from ..markdown import Document, ElementKind

__all__ = ["ChangedElements"]

Key = tuple[ElementKind, str]

MAX_DOCUMENTS = 4096
MAX_PER_DOCUMENT = 512


class ChangedElements:
    def __init__(self, ws: Any = None) -> None:
        self._lock = threading.Lock()
        self._changed: OrderedDict[str, OrderedDict[Key, None]] = OrderedDict()

    def of(self, rel: str) -> frozenset[Key]:
        """The (kind, self hash) pairs an edit of ``rel`` changed or deleted in place."""
        with self._lock:
            keys = self._changed.get(rel)
            return frozenset(keys) if keys else frozenset()

    def record(self, rel: str, before: Document, after: Document) -> None:
        """Note the hashes that lost an instance from ``before`` to ``after``."""
        old = Counter((e.kind, e.self_hash) for e in before.elements if e.self_hash)
        new = Counter((e.kind, e.self_hash) for e in after.elements if e.self_hash)
        lost = old - new
        if not lost:
            return
        with self._lock:
            keys = self._changed.pop(rel, None) or OrderedDict()
            for key in lost:
                keys.pop(key, None)
                keys[key] = None
            while len(keys) > MAX_PER_DOCUMENT:
                keys.popitem(last=False)
            self._changed[rel] = keys  # the most recently edited document last
            while len(self._changed) > MAX_DOCUMENTS:
                self._changed.popitem(last=False)
