"""File names: a query that is a document's path or file name finds that document first (decision 795).

Agents paste what they see: a link target, a path from a listing, an error that names a file
(``ch04-02-references-and-borrowing.md``, ``_api-reference/document-apis/bulk.md``). Only the
text is indexed, so such a query ranked the pages that link to the file (a table of contents, an
index page) and never the file itself. A query without whitespace that is a document's
root-relative path as written (with or without ``.md``, a leading ``./`` or ``/``) or a file name
with ``.md`` in any folder and any case (``bulk.md``) names those documents: the best chunk of
each for the words of its file name goes ahead of the other hits, as a title's does
(``titles.py``). A name shared by more than :data:`NAMED_MAX` documents (``index.md``) names
none of them. A word alone never names a file: it needs a ``/`` or the ``.md``. A name a Mac wrote
decomposed (NFD) is the one typed composed, as the path guard reads it (decisions 505, 1101), and
one written in half-width katakana the one typed full-width, as the query is (decision 1113).
"""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath

from ..globs import nfc
from ..index.cjk import full_width_kana
from ..index.port import ChunkHit, IndexStore
from ..index.query import PathScope
from .text import build_lexical_query

__all__ = ["NAMED_MAX", "named_hits", "named_paths"]

NAMED_MAX = 10  # documents one name may promote; more is a name too common to mean one page
_QUOTES = "`'\""


def named_paths(store: IndexStore, query: str, scope: PathScope | None) -> list[str]:
    """The indexed documents ``query`` names (see the module docstring), in path order."""
    name = query.strip().strip(_QUOTES).replace("\\", "/")
    if not name or any(c.isspace() for c in name):
        return []
    if name.startswith("./"):
        name = name[2:]
    name = name.lstrip("/")
    low = nfc(name).lower()
    if "/" in name:  # a path: looked up as written (two keys, four when not ASCII), never by a scan
        keys = [name] if low.endswith(".md") else [name, name + ".md"]
        if not name.isascii():  # and as a Mac names it, decomposed (decision 1101)
            keys += [unicodedata.normalize("NFD", key) for key in keys]
        paths = list(store.document_states_of(keys))
        if not paths and not name.isascii():  # a path holding half-width katakana (1113): a scan
            paths = [p for p in store.document_states() if _key(p) in (low, low + ".md")]
    elif low.endswith(".md"):  # a file name: in any folder, any case, either normal form (1101)
        paths = [p for p in store.document_states() if (q := _key(p)) == low or q.endswith("/" + low)]
    else:
        return []
    keep = None if scope is None else scope.matcher()
    found = sorted(p for p in paths if keep is None or keep(p))
    return found if len(found) <= NAMED_MAX else []


def _key(path: str) -> str:
    """A path as a composed query reads it: NFC, katakana full-width (1101, 1113), lower case."""
    return nfc(full_width_kana(path)).lower()


def named_hits(store: IndexStore, query: str, scope: PathScope | None) -> list[ChunkHit]:
    """The best chunk of each document ``query`` names, for the words of its file name (a few,
    mostly rare ones: the words of a whole path, ``api`` or ``reference``, are in every page)."""
    hits: list[ChunkHit] = []
    for path in named_paths(store, query, scope):
        parsed = build_lexical_query(PurePosixPath(path).stem)
        words = parsed.words() or (parsed.ranked() if parsed.leaves else None)
        if words is None:
            continue
        hits += store.lexical(words, 1, PathScope.within(scope, path))
    return hits
