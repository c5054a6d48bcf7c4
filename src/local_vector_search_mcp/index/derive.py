"""What a chunk's rows hold besides its text, worked out before the writer needs it.

A cold index spends as much CPU deriving the stored forms of a chunk (its English
stems for the stems table, its zlib-compressed body) as parsing the file. Both
are pure functions of the chunk's text, so ``prepare.py`` computes them in the
parse workers, beside the parse, and the one writer process only runs SQL
(spec/decisions.md 230). An adapter given a chunk without them derives them
itself, with these same functions: the stored rows are the same either way.
"""

from __future__ import annotations

import zlib

from .stem import stem_index_text

__all__ = ["ZLIB_LEVEL", "chunk_stems", "pack_body", "unpack_body"]

ZLIB_LEVEL = 1  # level 6 cost 18 % more CPU for 3.5 % smaller bodies (decision 272); any level reads back


def pack_body(text: str) -> bytes:
    """A chunk body as the SQLite adapter stores it."""
    return zlib.compress(text.encode("utf-8"), ZLIB_LEVEL)


def unpack_body(body: bytes) -> str:
    return zlib.decompress(body).decode("utf-8")


def chunk_stems(text: str, heading_path: str | None) -> str:
    """The stems text a chunk's stems row holds (empty: no row)."""
    return stem_index_text(heading_path or "", text)
