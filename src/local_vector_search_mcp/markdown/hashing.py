"""Hash functions of the element model (contract §3.3).

Every element hash is XxHash64 (seed 0) over the UTF-8 bytes of an exact
substring of the decoded document, printed as 16 lowercase hex digits. Nothing
is normalised: whitespace and line endings are part of the identity.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

import xxhash

__all__ = ["framed_hash", "segments_hash", "sha256_hex", "span_hash", "utf8"]


def utf8(text: str) -> bytes:
    # ``surrogatepass`` keeps hashing total for arbitrary ``str`` (tests feed
    # lone surrogates); text decoded from bytes never contains them.
    return text.encode("utf-8", "surrogatepass")


def span_hash(text: str) -> str:
    """The fingerprint of one exact source substring."""
    return xxhash.xxh64_hexdigest(utf8(text))


def framed_hash(parts: Sequence[str]) -> str:
    """XxHash64 over ``int32le count`` then ``int32le length + bytes`` per part.

    The framing keeps ``["ab", "c"]`` and ``["a", "bc"]`` apart, which a plain
    concatenation would not.
    """
    hasher = xxhash.xxh64()
    hasher.update(struct.pack("<i", len(parts)))
    for part in parts:
        data = utf8(part)
        hasher.update(struct.pack("<i", len(data)))
        hasher.update(data)
    return hasher.hexdigest()


def segments_hash(parts: Sequence[str]) -> str:
    """selfHash of a list item over its own segments (§3.3)."""
    if not parts:
        return span_hash("")
    if len(parts) == 1:
        return span_hash(parts[0])
    return framed_hash(parts)


def sha256_hex(raw: bytes) -> str:
    """sourceHash: SHA-256 of the file's raw bytes, BOM included."""
    return hashlib.sha256(raw).hexdigest()
