"""What a chunk's rows hold besides its text, worked out before the writer needs it.

A cold index spends as much CPU deriving the stored forms of a chunk (its English
stems for the stems table, its zlib-compressed body) as parsing the file. Both
are pure functions of the chunk's text, so ``prepare.py`` computes them in the
parse workers, beside the parse, and the one writer process only runs SQL
(spec/decisions.md 230). An adapter given a chunk without them derives them
itself, with these same functions: the stored rows are the same either way.

A body is a zlib stream. It is written by ISA-L's deflate (``isal``) when that is
importable, about twice as fast as zlib's own level 1 on chunk-sized texts and
no larger, else by zlib at level 1 (decisions 272, 276). ``zlib.decompress``
reads either, and any level an older index was written with: the bytes of a
body may differ from one install to another, its text never does.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from .stem import stem_index_text

__all__ = ["DEFLATE_ENGINE", "ZLIB_LEVEL", "chunk_stems", "pack_body", "unpack_body"]

ZLIB_LEVEL = 1  # level 6 cost 18 % more CPU for 3.5 % smaller bodies (decision 272)
ISAL_LEVEL = 1  # ISA-L's 0 is 4x faster again but its bodies 40 % larger (decision 276)

_compress: Callable[[bytes, int], bytes]
try:
    from isal import isal_zlib
except ImportError:  # no wheel for this platform: the standard library's zlib
    _compress, _level, DEFLATE_ENGINE = zlib.compress, ZLIB_LEVEL, "zlib"
else:
    _compress, _level, DEFLATE_ENGINE = isal_zlib.compress, ISAL_LEVEL, "isal"


def pack_body(text: str) -> bytes:
    """A chunk body as the SQLite adapter stores it (a zlib stream)."""
    return _compress(text.encode("utf-8"), _level)


def unpack_body(body: bytes) -> str:
    return zlib.decompress(body).decode("utf-8")


def chunk_stems(text: str, heading_path: str | None) -> str:
    """The stems text a chunk's stems row holds (empty: no row)."""
    return stem_index_text(heading_path or "", text)
