"""BM25 for the PostgreSQL adapter: the ranking FTS5 gives the SQLite adapter (decision 310).

PostgreSQL's own ranking functions know nothing of how rare a word is:
``ts_rank``/``ts_rank_cd`` score a chunk by its hits alone, so in an OR of a
question's words a chunk repeating ``index`` outranks the one holding the rare
word the question is about. Measured on the three shared sets, that cost up to
0.25 nDCG@10 against the SQLite backend (``bench/bench_pg_quality.py``). So the
adapter ranks with FTS5's formula itself, over the same tokens:

* a *phrase* is what FTS5 scores separately: each one-token term, each
  multi-token term or adjacent pair (its tokens in order), each CJK bigram, a
  prefix; the same phrases as ``fts5.render_match`` renders, deduplicated per
  group as it does, the same row budget dropping the commonest ones;
* its frequency in a chunk, heading hits counted twice (``bm25(1.0, 2.0)``), is
  ``2 * ts_rank_cd('{0, 0, 0.5, 1}', tsv, phrase, 0)``: with those weights each
  cover (one occurrence of the phrase) adds its weight, heading 1 and body 0.5;
  a stem's frequency is ``ts_rank_cd('{0, 1, 0, 0}', tsv, '~stem', 0)``, its
  weight-C positions;
* ``idf = ln((N - n + 0.5) / (n + 0.5))`` (at least 1e-6) with ``n`` the chunks
  holding the phrase, counted among the rows the OR of every phrase matches
  (all of them, whatever the scope, as FTS5 counts over its whole table);
* ``k1 = 1.2, b = 0.75`` against the chunk's token count (``chunks.ntok``,
  heading and body, as FTS5's column sizes) over the average;
* the stems form a second list, as the SQLite stems table: their own ``N``
  (chunks with a stem), lengths (``chunks.nstem``) and budget, combined with
  ``fts5.combine_stemmed`` at a quarter weight.

Every matched row is scored (FTS5 does the same); the ranking functions cost
about as much as the single ``ts_rank_cd`` they replace (opensearch-docs: 100 ms
against 66 ms for an OR matching half of its 17,861 chunks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .cjk import bare, bigrams, index_tokens, word_tokens
from .fts5 import STEM_WEIGHT, combine_stemmed, hyphen_stems, quote_phrase, rarest_within
from .pg_lexemes import quoted_lexeme as _lexeme
from .query import AllOf, AnyOf, CjkRun, LexicalQuery, Phrase, Prefix, Term
from .stem import STEM_MARK, query_stems, stem_index_text

__all__ = [
    "HIT_WEIGHTS",
    "STEM_HIT_WEIGHTS",
    "Atom",
    "CorpusStats",
    "Matched",
    "RankPlan",
    "Side",
    "TopBounds",
    "bm25",
    "chunk_lengths",
    "plan",
    "rank",
]

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6  # FTS5's floor for a phrase in more than half the rows
HIT_WEIGHTS = "{0, 0, 0.5, 1}"  # ts_rank_cd weights (D, C, B, A): heading hit 1, body hit 0.5 (x2: FTS5's 2 and 1)
STEM_HIT_WEIGHTS = "{0, 1, 0, 0}"  # the stems' weight-C positions, one each


@dataclass(frozen=True, slots=True)
class Atom:
    """One phrase FTS5 would score: its tsquery, and the exact tokens whose chunk counts
    price it for a row budget (empty: a prefix, priced at the whole budget)."""

    tsquery: str
    tokens: tuple[str, ...]


# The boolean shape of a match over atom indexes: an index, or ("any" | "all", children).
Node = int | tuple[str, tuple["Node", ...]]


@dataclass(frozen=True, slots=True)
class Side:
    """The phrases of one list (exact tokens, or stems) and when a row matches it. ``budget``
    (rows, keep at least): the top-level OR keeps its rarest phrases within it."""

    atoms: tuple[Atom, ...]
    tree: Node
    budget: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class RankPlan:
    exact: Side | None
    stems: Side | None

    def atoms(self) -> list[Atom]:
        return [*(self.exact.atoms if self.exact else ()), *(self.stems.atoms if self.stems else ())]

    def where(self) -> str:
        """The tsquery of the rows either list matches. In an OR, a phrase one of whose tokens is
        an atom of its own adds no row and is left out: without phrases the GIN index answers
        without rechecking each row (a fifth of the fetch on opensearch-docs)."""
        parts = []
        for side in (self.exact, self.stems):
            if side is None:
                continue
            tree = side.tree
            if isinstance(tree, tuple) and tree[0] == "any":
                single = {a.tsquery for a in side.atoms if len(a.tokens) == 1 and a.tsquery == _lexeme(a.tokens[0])}
                kept = tuple(
                    c
                    for c in tree[1]
                    if not (
                        isinstance(c, int)
                        and len(side.atoms[c].tokens) > 1
                        and any(_lexeme(t) in single for t in side.atoms[c].tokens)
                    )
                )
                tree = ("any", kept)
            parts.append(_render(tree, side.atoms))
        return " | ".join(f"({p})" for p in parts)

    def priced_tokens(self, rows: int) -> list[str]:
        """The tokens whose chunk counts :meth:`cut` needs (those of a budgeted OR's atoms); none
        for an OR that keeps everything whatever the counts (``rows``: chunks in the index)."""
        out: dict[str, None] = {}
        for side in (self.exact, self.stems):
            if side is not None and side.budget is not None and isinstance(side.tree, tuple):
                children = side.tree[1]
                bounded = all(isinstance(c, int) and side.atoms[c].tokens for c in children)
                if bounded and len(children) * rows <= side.budget[0]:
                    continue
                for child in children:
                    if isinstance(child, int):
                        out.update(dict.fromkeys(side.atoms[child].tokens))
        return list(out)

    def cut(self, token_df: Callable[[str], int], stem_df: Callable[[str], int] | None = None) -> RankPlan:
        """The plan with each budgeted OR cut to its rarest atoms (``within_budget``) and only the
        atoms still used: what the SQLite adapter's MATCH expressions hold (a list whose budget
        keeps nothing, as the stems' may, is left out). ``stem_df``: the stems list's prices
        (``fts5.stem_prices``, decision 636), ``token_df`` when not given."""
        prices = (token_df, stem_df or token_df)
        cut = [
            None if side is None else within_budget(side, price)
            for side, price in zip((self.exact, self.stems), prices, strict=True)
        ]
        exact, stems = (None if side is None or not used(side.tree) else _pruned(side) for side in cut)
        return RankPlan(exact, stems)

    def counts_in_rows(self) -> bool:
        """Whether the rows :meth:`where` matches hold every row of every atom (each list an OR of
        atoms), so the atoms' chunk counts can be taken from them."""
        return all(side is None or _or_shaped(side.tree) for side in (self.exact, self.stems))


def _render(node: Node, atoms: Sequence[Atom]) -> str:
    if isinstance(node, int):
        return f"({atoms[node].tsquery})"
    kind, children = node
    return "(" + (" | " if kind == "any" else " & ").join(_render(c, atoms) for c in children) + ")"


def _pruned(side: Side) -> Side:
    """``side`` with only the atoms its tree uses, renumbered in their order."""
    keep = sorted(set(used(side.tree)))
    index = {old: new for new, old in enumerate(keep)}

    def renumber(node: Node) -> Node:
        if isinstance(node, int):
            return index[node]
        return (node[0], tuple(renumber(c) for c in node[1]))

    return Side(tuple(side.atoms[i] for i in keep), renumber(side.tree), side.budget)


def _or_shaped(node: Node) -> bool:
    if isinstance(node, int):
        return True
    kind, children = node
    return (kind == "any" or len(children) == 1) and all(_or_shaped(c) for c in children)


class _Builder:
    """The distinct atoms of a query (one frequency column each, keyed by tsquery)."""

    def __init__(self) -> None:
        self.atoms: list[Atom] = []
        self.index: dict[str, int] = {}

    def add(self, atom: Atom) -> int:
        if atom.tsquery not in self.index:
            self.index[atom.tsquery] = len(self.atoms)
            self.atoms.append(atom)
        return self.index[atom.tsquery]


def _words(text: str) -> tuple[str, ...]:
    """What FTS5 makes of query text: its unicode61 tokens (``cjk.index_tokens``)."""
    return tuple(index_tokens(text))


def _priced(text: str) -> tuple[str, ...]:
    """The tokens ``fts5.py`` prices a leaf by and stems it from (the index's, ``word_tokens``):
    mirrored so the same words are cut and stemmed."""
    return tuple(word_tokens(text))


def _leaf_atoms(node: LexicalQuery) -> list[tuple[str, Atom]]:
    """``(FTS5 rendering, atom)`` of a leaf, as ``fts5._atoms`` renders it."""
    if isinstance(node, Term | Phrase):
        text = node.text if isinstance(node, Term) else " ".join(node.words)
        words = _words(text)
        return [(quote_phrase(text), Atom(" <-> ".join(_lexeme(w) for w in words), _priced(text)))] if words else []
    if isinstance(node, Prefix):
        words = _words(node.text)
        return [(quote_phrase(node.text) + "*", Atom(f"{_lexeme(words[0])}:*", ()))] if len(words) == 1 else []
    assert isinstance(node, CjkRun)
    letters = bare(node.text)
    if not letters:
        return []
    if len(letters) == 1:
        return [(quote_phrase(letters) + "*", Atom(f"{_lexeme(letters)}:*", ()))]
    return [(quote_phrase(b), Atom(_lexeme(b), (b,))) for b in bigrams(node.text)]


def _exact(node: LexicalQuery, out: _Builder) -> Node | None:
    if not isinstance(node, AllOf | AnyOf):
        found = [out.add(atom) for _, atom in _leaf_atoms(node)]
        return None if not found else found[0] if len(found) == 1 else ("all", tuple(found))
    kind = "all" if isinstance(node, AllOf) else "any"
    children: list[Node] = []
    seen: set[str] = set()
    for child in node.children:
        if isinstance(child, AllOf | AnyOf):
            sub = _exact(child, out)
            if sub is not None:
                children.append(sub)
            elif kind == "all":
                return None
            continue
        leaf = _leaf_atoms(child)
        if not leaf and kind == "all":  # a leaf without a token matches nothing
            return None
        for rendered, atom in leaf:  # one operand per distinct rendering, as fts5.py
            if rendered not in seen:
                seen.add(rendered)
                children.append(out.add(atom))
    return (kind, tuple(children)) if children else None


def _stems(node: LexicalQuery, out: _Builder) -> Node | None:
    """As ``fts5.render_stems``: each one-word English term by its stem, a hyphenated one by the
    phrase of its parts' stems; in an OR the other leaves drop out, an AND holding one is exact-only."""
    if isinstance(node, Term):  # a query of one word: its English stem OR its language's (decision 1192)
        return _stems(AnyOf((node,)), out)
    if not isinstance(node, AllOf | AnyOf):
        return None
    children: list[Node] = []
    for child in node.children:  # one operand per distinct stem, as fts5.render_stems
        subs: list[Node] = []
        if isinstance(child, Term):
            words = _priced(child.text)
            language = child.language if isinstance(node, AnyOf) else "en"  # an AND: the English stem only
            if len(words) == 1:
                subs = [
                    out.add(Atom(_lexeme(STEM_MARK + s), words)) for s in query_stems(words[0], language, child.text)
                ]
            else:  # a hyphenated word: its parts' stems as a phrase, as fts5.render_stems
                stems, parts = hyphen_stems(child.text)
                subs = [out.add(Atom(" <-> ".join(_lexeme(STEM_MARK + s) for s in stems), parts))] if stems else []
        elif isinstance(child, AllOf | AnyOf):
            sub = _stems(child, out)
            subs = [] if sub is None else [sub]
        if not subs:
            if isinstance(node, AllOf):
                return None
            continue
        for sub in subs:
            if sub not in children:
                children.append(sub)
    if not children:
        return None
    return ("all" if isinstance(node, AllOf) else "any", tuple(children))


def plan(query: LexicalQuery, stem_budget: int | None) -> RankPlan:
    exact, stems = _Builder(), _Builder()
    tree = _exact(query, exact)
    stem_tree = _stems(query, stems) if STEM_WEIGHT else None
    top = query if isinstance(query, AnyOf) else None
    budget = (top.row_budget, top.keep_at_least) if top is not None and top.row_budget is not None else None
    return RankPlan(
        Side(tuple(exact.atoms), tree, budget) if tree is not None else None,
        Side(
            tuple(stems.atoms),
            stem_tree,
            (stem_budget, 0)
            if stem_budget is not None and isinstance(stem_tree, tuple) and stem_tree[0] == "any"
            else None,
        )
        if stem_tree is not None
        else None,
    )


def within_budget(side: Side, token_df: Callable[[str], int]) -> Side:
    """``side`` with its top-level OR cut as SQLite's (``fts5.rarest_within``): the rarest phrases
    whose chunk counts add up to at most the budget (at least ``keep`` stay)."""
    if side.budget is None or not isinstance(side.tree, tuple) or side.tree[0] != "any":
        return side
    budget, keep = side.budget
    children = side.tree[1]
    if len(children) <= keep:
        return side

    def cost(node: Node) -> int:
        if isinstance(node, int):
            tokens = side.atoms[node].tokens
            return min((token_df(t) for t in tokens), default=budget)
        return budget

    kept = rarest_within([cost(child) for child in children], budget, keep)
    return Side(side.atoms, ("any", tuple(c for i, c in enumerate(children) if i in kept)), None)


def matching(node: Node, freqs: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Which rows of ``freqs`` (a column per atom) ``node`` matches: an atom where its frequency
    is positive, then AND / OR of the children, over every row at once (a Python call per row
    and node was most of the client's time on an AND of common words, decision 330)."""
    if isinstance(node, int):
        return np.asarray(freqs[:, node] > 0)
    kind, children = node
    out = np.full(len(freqs), kind != "any")
    for child in children:
        part = matching(child, freqs)
        out = out | part if kind == "any" else out & part
    return out


def used(node: Node) -> list[int]:
    """The atoms ``node`` scores, each as often as it occurs (FTS5 scores a phrase written
    twice twice: ``Test test`` are two phrases of the same tokens)."""
    if isinstance(node, int):
        return [node]
    return [i for c in node[1] for i in used(c)]


@dataclass(frozen=True, slots=True)
class CorpusStats:
    """FTS5's table totals: rows and tokens of the exact table, rows holding a stem and their stems."""

    rows: int
    tokens: int
    stem_rows: int
    stems: int


def idf(rows: int, hits: int) -> float:
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0 else MIN_IDF


def bm25(freqs: Sequence[tuple[float, float]], length: float, average: float) -> float:
    """FTS5's bm25 of one row (negative: lower is better); ``freqs``: (idf, frequency) per phrase."""
    norm = K1 * (1 - B + B * length / average) if average > 0 else K1
    return -sum(w * f * (K1 + 1) / (f + norm) for w, f in freqs if f > 0)


@dataclass(frozen=True, slots=True)
class Matched:
    """The rows a query's tsquery matched, as columns: chunk and document ids, token and stem
    counts (NaN: written by an older release, counted as average) and ``freqs[row, atom]``, the
    frequency of every atom of the plan in order."""

    ids: npt.NDArray[np.int64]
    doc_ids: npt.NDArray[np.int64]
    ntok: npt.NDArray[np.float64]
    nstem: npt.NDArray[np.float64]
    freqs: npt.NDArray[np.float64]

    @classmethod
    def from_rows(
        cls, rows: Sequence[Sequence[Any]], n_exact: int, n_atoms: int, columns: Sequence[int] | None = None
    ) -> Matched:
        """From ``(id, doc id, ntok, nstem, ts_rank_cd per atom...)`` rows: the exact atoms'
        values doubled (``HIT_WEIGHTS`` halves FTS5's column weights). ``columns``: the atoms the
        rows' values are of, in order (the others: 0, known absent); ``None``: every atom."""
        if not rows:
            empty = np.zeros(0)
            return cls(empty.astype(np.int64), empty.astype(np.int64), empty, empty, np.zeros((0, n_atoms)))
        data = np.array(rows, dtype=np.float64)  # None (a length never written) becomes NaN
        if columns is None:
            freqs = data[:, 4:]
        else:
            freqs = np.zeros((len(data), n_atoms))
            freqs[:, list(columns)] = data[:, 4:]
        freqs[:, :n_exact] *= 2
        return cls(data[:, 0].astype(np.int64), data[:, 1].astype(np.int64), data[:, 2], data[:, 3], freqs)

    def count(self, atom: int) -> int:
        return int(np.count_nonzero(self.freqs[:, atom] > 0))


def _side_scores(
    side: Side,
    offset: int,
    rows: Matched,
    keep: npt.NDArray[np.bool_],
    total: int,
    average: float,
    sizes: npt.NDArray[np.float64],
    counts: Sequence[int] | None,
    depth: int,
) -> list[tuple[int, float]]:
    """(row id, bm25) of the best ``depth`` rows matching ``side`` (its atoms' frequencies from
    column ``offset`` on), best first; ``counts``: the atoms' chunk counts (``None``: counted in
    ``rows``)."""
    n = len(side.atoms)
    freqs = rows.freqs[:, offset : offset + n]
    if counts is None:
        counts = [int(c) for c in np.count_nonzero(freqs > 0, axis=0)]
    tree = side.tree
    matched = matching(tree, freqs)
    chosen = np.flatnonzero(matched & keep)
    f = freqs[chosen]
    length = np.where(np.isnan(sizes[chosen]), average, sizes[chosen])
    norm = K1 * (1 - B + B * length / average) if average > 0 else np.full(len(chosen), K1)
    total_score = np.zeros(len(chosen))
    for i in used(tree):  # in FTS5's order, each occurrence once: the same sums, bit for bit
        w = idf(total, counts[i])
        fi = f[:, i]
        total_score += np.where(fi > 0, w * fi * (K1 + 1) / (fi + norm), 0.0)
    scores = -total_score
    ids = rows.ids[chosen]
    order = np.lexsort((ids, scores))[:depth]
    return [(int(ids[k]), float(scores[k])) for k in order]


def rank(
    query_plan: RankPlan,
    rows: Matched,
    stats: CorpusStats,
    depth: int,
    keep: npt.NDArray[np.bool_],
    counts: Sequence[int] | None = None,
) -> list[tuple[int, float]]:
    """(row id, score) best first, as the SQLite adapter ranks (exact bm25 + a quarter of the
    stems' bm25, each list cut at ``depth``). ``rows`` hold every row :meth:`RankPlan.where`
    matches, in or out of the scope (``keep``: inside it), with the frequencies of
    ``query_plan.atoms()`` in order; ``counts``: the atoms' chunk counts in the same order
    (``None``: counted in ``rows``, which :meth:`RankPlan.counts_in_rows` allows). Row budgets
    are the caller's (:meth:`RankPlan.cut`, before fetching)."""
    exact, stems = query_plan.exact, query_plan.stems
    n_exact = len(exact.atoms) if exact else 0
    avg = stats.tokens / stats.rows if stats.rows else 0.0
    exact_counts = None if counts is None else counts[:n_exact]
    found = _side_scores(exact, 0, rows, keep, stats.rows, avg, rows.ntok, exact_counts, depth) if exact else []
    if stems is None or not stats.stem_rows:
        return found
    stem_avg = stats.stems / stats.stem_rows
    stem_counts = None if counts is None else counts[n_exact:]
    stemmed = _side_scores(stems, n_exact, rows, keep, stats.stem_rows, stem_avg, rows.nstem, stem_counts, depth)
    return combine_stemmed(found, stemmed, depth)


PRUNE_MARGIN = 1e-9  # relative slack on a bound sum: float rounding of ~100 terms is ~1e-14


@dataclass(frozen=True, slots=True)
class TopBounds:
    """MaxScore bounds of an OR-shaped plan (decision 455): what an atom can add at most to a row's
    bm25 on its list, so the rows that cannot reach a list's best ``depth`` are never fetched.

    A phrase adds ``idf * f * (K1 + 1) / (f + norm)`` to a row, less than ``idf * (K1 + 1)`` whatever
    its frequency and the row's length (``norm > 0``); an atom a list scores twice adds twice that.
    Once a list has ``depth`` rows in the scope, the last of them scores ``theta``: a row holding
    only atoms whose bounds add up to less than ``theta`` ranks strictly below ``depth`` rows, so
    it is neither in that list's best ``depth`` nor its last score (ties included). ``counts``:
    every atom's chunk count over the whole index (the idf), in ``plan.atoms()`` order."""

    plan: RankPlan
    stats: CorpusStats
    counts: tuple[int, ...]
    depth: int

    def _sides(self) -> list[tuple[Side, int, int, float]]:
        """(side, its first atom, N, average length) of each list :func:`rank` scores."""
        exact, stems = self.plan.exact, self.plan.stems
        out: list[tuple[Side, int, int, float]] = []
        if exact is not None:
            out.append((exact, 0, self.stats.rows, self.stats.tokens / self.stats.rows if self.stats.rows else 0.0))
        if stems is not None and self.stats.stem_rows:
            offset = len(exact.atoms) if exact else 0
            out.append((stems, offset, self.stats.stem_rows, self.stats.stems / self.stats.stem_rows))
        return out

    def bounds(self) -> list[float]:
        """Per atom (plan order), the most it adds to a row's bm25 on its list (0: a list not scored)."""
        out = [0.0] * len(self.counts)
        for side, offset, total, _ in self._sides():
            for i in used(side.tree):
                out[offset + i] += idf(total, self.counts[offset + i]) * (K1 + 1)
        return out

    def first(self, want: int) -> set[int]:
        """The atoms to fetch first: on each list, the ones that can add most, until their chunks
        add up to ``want`` (a first guess of rows good enough to set ``theta``)."""
        bound = self.bounds()
        chosen: set[int] = set()
        for side, offset, _, _ in self._sides():
            rows = 0
            for i in sorted(range(offset, offset + len(side.atoms)), key=lambda a: (-bound[a], a)):
                if rows >= want:
                    break
                chosen.add(i)
                rows += self.counts[i]
        return chosen

    def essential(self, rows: Matched, keep: npt.NDArray[np.bool_]) -> set[int]:
        """The atoms whose rows may still reach a list's best ``depth``, given ``rows`` (every row
        holding one of the atoms fetched so far): on each list, all but the atoms of least bound
        whose bounds add up to less than the list's ``theta`` among ``rows`` (all while fewer than
        ``depth`` rows of the scope are known)."""
        bound = self.bounds()
        out: set[int] = set()
        for side, offset, total, average in self._sides():
            sizes = rows.ntok if offset == 0 else rows.nstem
            counts = self.counts[offset : offset + len(side.atoms)]
            best = _side_scores(side, offset, rows, keep, total, average, sizes, counts, self.depth)
            atoms = range(offset, offset + len(side.atoms))
            if len(best) < self.depth:
                out.update(atoms)
                continue
            theta = -best[-1][1]
            below = 0.0
            ascending = sorted(atoms, key=lambda a: (bound[a], a))
            for k, i in enumerate(ascending):
                if (below + bound[i]) * (1 + PRUNE_MARGIN) >= theta:
                    out.update(ascending[k:])
                    break
                below += bound[i]
        return out


def concat(parts: Sequence[Matched], n_atoms: int) -> Matched:
    """The rows of several fetches as one :class:`Matched` (no row is in two of them)."""
    if not parts:
        return Matched.from_rows([], 0, n_atoms)
    return Matched(
        np.concatenate([p.ids for p in parts]),
        np.concatenate([p.doc_ids for p in parts]),
        np.concatenate([p.ntok for p in parts]),
        np.concatenate([p.nstem for p in parts]),
        np.concatenate([p.freqs for p in parts]),
    )


def chunk_lengths(text: str, heading: str | None) -> tuple[int, int]:
    """(tokens, stems) of a chunk: the sizes of its FTS5 rows on SQLite (``stem_index_text``)."""
    return len(index_tokens(heading or "")) + len(index_tokens(text)), len(stem_index_text(heading or "", text).split())
