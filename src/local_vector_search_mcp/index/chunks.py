"""Records of the chunk and vector API (the ``chunks`` tool set) shared by every store adapter.

Two kinds of chunks answer the same calls: chunks derived from the Markdown (collection
``markdown``, id ``md:<path>#<ordinal>``, read-only) and external chunks a caller stored
with its own embedding (any other collection, kept apart from the Markdown's rows so
reindexing never touches them). Filters arrive as :class:`ChunkFilterSpec` data; its
predicates are the reference semantics each adapter applies inside retrieval.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..globs import compile_glob, nfc

if TYPE_CHECKING:  # numpy is imported where vectors are made: a parse worker never needs it
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MARKDOWN",
    "ChunkFilterSpec",
    "ExternalChunk",
    "OtherCollection",
    "StoredChunk",
    "document_properties",
    "markdown_chunk_id",
    "markdown_metadata",
    "parse_markdown_chunk_id",
]

MARKDOWN = "markdown"
_MD_PREFIX = "md:"


def markdown_chunk_id(path: str, ordinal: int) -> str:
    return f"{_MD_PREFIX}{path}#{ordinal}"


# An ordinal as markdown_chunk_id writes it: ASCII digits, no leading zero, within SQLite's integer
# (``#01``, ``#١`` or a 25-digit number name no chunk: NOT_FOUND, never another chunk or an
# overflow, decision 676).
_ORDINAL = re.compile(r"0|[1-9][0-9]{0,17}")


def parse_markdown_chunk_id(chunk_id: str) -> tuple[str, int] | None:
    """``(path, ordinal)`` of a Markdown chunk id; ``None`` for any other id."""
    if not chunk_id.startswith(_MD_PREFIX):
        return None
    path, sep, ordinal = chunk_id[len(_MD_PREFIX) :].rpartition("#")
    if not sep or not path or not _ORDINAL.fullmatch(ordinal):
        return None
    return path, int(ordinal)


def is_markdown_id(chunk_id: str) -> bool:
    return chunk_id.startswith(_MD_PREFIX)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: str
    collection: str
    source_path: str
    chunk_index: int
    content: str
    metadata: dict[str, Any]
    dimensions: int | None
    stale: bool = False
    vector: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True, slots=True)
class ExternalChunk:
    id: str
    collection: str
    source_path: str
    chunk_index: int
    content: str
    metadata: dict[str, Any]
    vector: npt.NDArray[np.float32]  # unit length
    stale: bool = False


class OtherCollection(Exception):
    """``put_external`` found the id stored in another collection than the one named and wrote
    nothing (decision 988): a chunk moves only by delete and create. ``collection`` is the stored one."""

    def __init__(self, collection: str) -> None:
        super().__init__(collection)
        self.collection = collection


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int | float)]
    return []


def document_properties(front_matter: Mapping[str, Any] | None) -> dict[str, Any]:
    """The front matter fields kept for filtering: JSON scalars and lists of scalars."""
    out: dict[str, Any] = {}
    for key, value in (front_matter or {}).items():
        if isinstance(value, str | int | float | bool) or value is None:
            out[str(key)] = value
        elif isinstance(value, list) and all(isinstance(v, str | int | float | bool) for v in value):
            out[str(key)] = list(value)
    return out


def markdown_metadata(
    heading_path: str | None, anchor: str, properties: Mapping[str, Any], source_hash: str
) -> dict[str, Any]:
    return {
        "headingPath": heading_path,
        "pointer": anchor,
        "tags": _tags(properties.get("tags")),
        "status": properties.get("status"),
        "indexedRevision": source_hash,
    }


@dataclass(frozen=True)
class ChunkFilterSpec:
    """What ``filter`` asks for; every given condition must hold."""

    path_prefix: str | None = None
    path_globs: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: tuple[tuple[str, Any], ...] = ()
    collections: tuple[str, ...] | None = None
    _globs: list[Any] = field(default_factory=list, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        self._globs.extend(compile_glob(g, "filter.pathGlobs") for g in self.path_globs)

    @property
    def is_everything(self) -> bool:
        return not (self.path_prefix or self.path_globs or self.tags or self.metadata or self.collections is not None)

    def wants(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    @property
    def prefixes(self) -> tuple[str, ...]:
        """What ``path_prefix`` may mean; empty when it filters nothing. Without its slashes, a
        folder of the root (Markdown paths are root-relative); with a leading slash also as
        given, since an external ``sourcePath`` is any string, `/data/crm.txt` too (decision 736).
        In NFC, as a glob is (decision 1100)."""
        raw = nfc(self.path_prefix or "")
        relative = raw.strip("/")
        literal = raw.rstrip("/") if raw.startswith("/") else ""
        return tuple(p for p in dict.fromkeys((relative, literal)) if p)

    def path_ok(self, path: str) -> bool:
        """The prefix is the path or a folder of it, compared case-insensitively and in NFC as globs
        are (``re.IGNORECASE``, which SQL engines spell out: ``globs.posix_regex_literal``; a folder a
        Mac named decomposed is the one typed composed, decision 1100)."""
        prefixes = self.prefixes
        if prefixes:
            alternatives = "|".join(re.escape(p) for p in prefixes)
            if not re.fullmatch(f"(?:{alternatives})(?:/.*)?", nfc(path), re.IGNORECASE | re.DOTALL):
                return False
        return not self._globs or any(m(path) for m in self._globs)

    def fields_ok(self, fields: Mapping[str, Any]) -> bool:
        """Tags (all present) and metadata equality over a chunk's fields (front matter or metadata)."""
        if self.tags:
            have = set(_tags(fields.get("tags")))
            if not all(t in have for t in self.tags):
                return False
        # null matches a field that is null or absent (decision 363), as get_chunk shows an absent
        # front matter `status` as null
        return all(fields.get(key) == value for key, value in self.metadata)

    def matches(self, collection: str, path: str, fields: Mapping[str, Any]) -> bool:
        return self.wants(collection) and self.path_ok(path) and self.fields_ok(fields)


def unit(vector: Sequence[float] | npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    import numpy as np

    v = np.asarray(vector, dtype=np.float32)
    return v / max(float(np.linalg.norm(v)), 1e-12)
