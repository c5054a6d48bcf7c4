"""pg_rank's vectorized pieces against their per-row definitions (no server needed)."""

from __future__ import annotations

import random

import numpy as np

from local_vector_search_mcp.index import pg_rank
from local_vector_search_mcp.index.pg_rank import Matched, Node, matching


def matches_row(node: Node, freq: list[float]) -> bool:
    """The definition: an atom matches where its frequency is positive; AND / OR of children."""
    if isinstance(node, int):
        return freq[node] > 0
    kind, children = node
    found = [matches_row(c, freq) for c in children]
    return any(found) if kind == "any" else all(found)


def random_tree(rng: random.Random, atoms: int, depth: int) -> Node:
    if depth == 0 or rng.random() < 0.3:
        return rng.randrange(atoms)
    kind = rng.choice(["any", "all"])
    return (kind, tuple(random_tree(rng, atoms, depth - 1) for _ in range(rng.randint(0, 3))))


def test_matching_is_the_per_row_definition() -> None:
    rng = random.Random(330)
    for _ in range(300):
        atoms = rng.randint(1, 5)
        freqs = np.array(
            [[rng.choice([0.0, 0.0, 0.5, 1.0, 2.5]) for _ in range(atoms)] for _ in range(rng.randint(0, 40))]
        ).reshape(-1, atoms)
        tree = random_tree(rng, atoms, 3)
        expected = [matches_row(tree, list(row)) for row in freqs]
        assert matching(tree, freqs).tolist() == expected, tree


def test_rows_without_lengths_count_as_nan() -> None:
    rows = [(7, 1, None, None, 0.5, 1.0), (3, 2, 40, 12, 0.0, 0.5)]
    m = Matched.from_rows(rows, 1, 2)
    assert m.ids.tolist() == [7, 3] and m.doc_ids.tolist() == [1, 2]
    assert np.isnan(m.ntok[0]) and np.isnan(m.nstem[0]) and m.ntok[1] == 40 and m.nstem[1] == 12
    assert m.freqs.tolist() == [[1.0, 1.0], [0.0, 0.5]]  # the exact atom's column doubled


def test_rank_cuts_each_list_at_depth() -> None:
    side = pg_rank.Side((pg_rank.Atom("'a'", ("a",)),), 0)
    query_plan = pg_rank.RankPlan(side, None)
    rows = Matched.from_rows([(i, 1, 10 + i % 3, 0, 0.5 * (1 + i % 4)) for i in range(1, 50)], 1, 1)
    stats = pg_rank.CorpusStats(rows=1000, tokens=11_000, stem_rows=0, stems=0)
    full = pg_rank.rank(query_plan, rows, stats, 100, np.ones(49, dtype=bool))
    assert len(full) == 49
    assert pg_rank.rank(query_plan, rows, stats, 10, np.ones(49, dtype=bool)) == full[:10]
