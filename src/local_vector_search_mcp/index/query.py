"""What the engine asks of a store's full-text and path filtering, as data.

A lexical query is a small tree built by ``search/`` from the user's text and
rendered by each adapter in its own dialect (SQLite: an FTS5 MATCH string,
``fts5.py``; PostgreSQL: a ``tsquery``). Nothing engine-specific crosses the
port: leaves carry user text, and the adapter tokenizes it the way it
tokenized the indexed text (``cjk.py`` for CJK runs).

Leaves:

* :class:`Term` - one whitespace-free piece of user text (``Rc::strong_count``).
  When the adapter's tokenizer splits it into several tokens they must occur
  adjacent and in order, as written.
* :class:`Phrase` - several words that must occur adjacent and in order.
* :class:`Prefix` - every token starting with ``text``.
* :class:`CjkRun` - an unspaced run of Chinese/Japanese characters; the
  adapter segments it exactly as it segmented indexed text. Inside
  :class:`AllOf` every segment must match, inside :class:`AnyOf` any may.

Groups: :class:`AllOf` (every child) and :class:`AnyOf` (any child). A leaf's
``weight`` scales its contribution to the score where the engine can weight
terms (FTS5 cannot inside MATCH and ignores it; the default 1 is plain BM25).

:class:`PathScope` is an include/exclude glob filter passed as data, so an
adapter can evaluate it next to its rows (in SQL) instead of the engine
loading every path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..globs import compile_glob

__all__ = ["AllOf", "AnyOf", "CjkRun", "LexicalLeaf", "LexicalQuery", "PathScope", "Phrase", "Prefix", "Term", "leaves"]


@dataclass(frozen=True, slots=True)
class Term:
    text: str
    weight: float = 1.0
    language: str = "en"  # whose stems it matches (``stem.query_stems``; decision 518)


@dataclass(frozen=True, slots=True)
class Phrase:
    words: tuple[str, ...]
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Prefix:
    text: str
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class CjkRun:
    text: str
    weight: float = 1.0


LexicalLeaf = Term | Phrase | Prefix | CjkRun


@dataclass(frozen=True, slots=True)
class AllOf:
    children: tuple[LexicalQuery, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """Any child matches. ``row_budget`` is a cost hint for engines that score
    every row an OR matches before sorting (FTS5): the adapter may drop the
    alternatives with the longest posting lists while the kept ones add up to
    at most ``row_budget`` rows, keeping at least ``keep_at_least`` of them.
    ``coverage`` > 0 asks the store to rescore its best candidates by how many
    of the plain-word children each holds, ``score * share ** coverage``
    (``coverage.py``: every adapter applies it with ``coverage.rerank`` over its
    own score). ``by_rarity`` weighs each word of that share by its rarity in the
    index (idf) instead of counting every word once (decision 1070)."""

    children: tuple[LexicalQuery, ...]
    row_budget: int | None = None
    keep_at_least: int = 2
    coverage: float = 0.0
    by_rarity: bool = False


LexicalQuery = LexicalLeaf | AllOf | AnyOf


def leaves(query: LexicalQuery) -> Iterator[LexicalLeaf]:
    """Every leaf of ``query``, depth first, in order."""
    if isinstance(query, AllOf | AnyOf):
        for child in query.children:
            yield from leaves(child)
    else:
        yield query


@dataclass(frozen=True, slots=True)
class PathScope:
    """Root-relative paths matching some ``include`` glob (every ``.md`` when
    empty) and no ``exclude`` glob; case-insensitive (``globs.py``). ``paths``,
    when set, further keeps only those exact paths (the kb_search tag filter)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    paths: frozenset[str] | None = None

    @property
    def is_everything(self) -> bool:
        return not self.include and not self.exclude and self.paths is None

    @staticmethod
    def within(scope: PathScope | None, path: str) -> PathScope:
        """``scope`` (everything when ``None``) narrowed to the one document ``path``: a look-up
        inside a document the engine already picked must still honour the caller's globs and tags."""
        if scope is None:
            return PathScope(paths=frozenset({path}))
        return PathScope(
            scope.include, scope.exclude, frozenset({path}) if scope.paths is None else scope.paths & {path}
        )

    def matcher(self) -> Callable[[str], bool]:
        """The predicate over paths (validates the patterns: InvalidArgument on a bad one)."""
        include = [compile_glob(p, "includeGlobs") for p in self.include] or [compile_glob("**/*.md")]
        exclude = [compile_glob(p, "excludeGlobs") for p in self.exclude]
        paths = self.paths
        return lambda path: (
            (paths is None or path in paths) and any(m(path) for m in include) and not any(m(path) for m in exclude)
        )
