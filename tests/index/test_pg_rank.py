"""pg_rank's vectorized pieces against their per-row definitions (no server needed)."""

from __future__ import annotations

import random

import numpy as np

from local_vector_search_mcp.index import pg_rank
from local_vector_search_mcp.index.pg_rank import Matched, Node, matching
from local_vector_search_mcp.index.query import AnyOf, Term


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


def _random_rows(rng: random.Random, n_rows: int, plan: pg_rank.RankPlan) -> Matched:
    """Rows holding each atom with a Zipf-like share (a few common atoms, many rare), frequencies of
    any size (heading hits count 2), lengths from 1 token, some never written (NaN)."""
    atoms = plan.atoms()
    share = [min(0.9, 0.6 / (1 + rng.randrange(40))) for _ in atoms]
    rows = []
    for rid in rng.sample(range(1, 10 * n_rows), n_rows):
        freqs = [rng.choice([0.5, 1.0, 1.0, 1.5, 3.0, 12.0]) if rng.random() < p else 0.0 for p in share]
        if not any(freqs):
            freqs[rng.randrange(len(freqs))] = 0.5
        ntok = None if rng.random() < 0.03 else rng.randint(1, 400)
        rows.append((rid, rng.randrange(12), ntok, None if ntok is None else rng.randint(0, ntok), *freqs))
    return Matched.from_rows(rows, len(plan.exact.atoms) if plan.exact else 0, len(atoms))


def _only(rows: Matched, take: np.ndarray) -> Matched:
    return Matched(rows.ids[take], rows.doc_ids[take], rows.ntok[take], rows.nstem[take], rows.freqs[take])


def test_maxscore_pruning_keeps_every_list_top_exactly() -> None:
    """The fetch loop of decision 455 on random rows: the rows of the first atoms, then of every atom
    still essential, until none is left; ranked with the whole index's counts, they give the ranking
    of every row bit for bit (ids, scores, each list's last score), in or out of a scope. The loop
    must also leave rows out, or this would prove nothing."""
    from local_vector_search_mcp.index.query import AnyOf, Phrase, Term

    rng = random.Random(455)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "iota", "kappa", "lambda"]
    words += ["running", "runner", "indexes", "indexing", "shards", "sharded", "replica", "replicas"]
    pruned_cases = 0
    for case in range(400):
        leaves: list[Term | Phrase] = [Term(w) for w in rng.sample(words, rng.randint(1, 8))]
        if rng.random() < 0.3:
            leaves.append(Phrase(tuple(rng.sample(words, 2))))
        plan = pg_rank.plan(AnyOf(tuple(leaves)), None)
        rows = _random_rows(rng, rng.randint(1, 600), plan)
        total = len(rows.ids) + rng.randint(0, 3000)  # chunks of the index, matched or not
        stats = pg_rank.CorpusStats(
            total, total * rng.randint(20, 200), total - rng.randint(0, total - len(rows.ids)), total * 30
        )
        depth = rng.choice([1, 3, 10, 100])
        keep = np.ones(len(rows.ids), dtype=bool) if rng.random() < 0.5 else rows.doc_ids < rng.randint(1, 12)
        counts = tuple(rows.count(i) for i in range(len(plan.atoms())))
        expected = pg_rank.rank(plan, rows, stats, depth, keep)
        bounds = pg_rank.TopBounds(plan, stats, counts, depth)
        fetched: set[int] = set()
        held = np.zeros(len(rows.ids), dtype=bool)
        batch = bounds.first(rng.choice([1, 5, 50, 200]))
        while batch:
            fetched |= batch
            held = (rows.freqs[:, sorted(fetched)] > 0).any(axis=1)
            batch = bounds.essential(_only(rows, held), keep[held]) - fetched
        got = pg_rank.rank(plan, _only(rows, held), stats, depth, keep[held], counts)
        assert [(i, s.hex()) for i, s in got] == [(i, s.hex()) for i, s in expected], case
        pruned_cases += bool(not held.all())
    assert pruned_cases > 100


def test_a_hyphenated_word_ranks_by_its_parts_stems_as_a_phrase() -> None:
    """As ``fts5.render_stems`` (decision 1017): the stems list holds ``~fine <-> ~tune``, priced by
    the stemmed parts; an identifier of short parts adds nothing there."""
    query = AnyOf((Term("fine-tuned"), Term("k-NN"), Term("models")))
    stems = pg_rank.plan(query, None).stems
    assert stems is not None
    assert [(a.tsquery, a.tokens) for a in stems.atoms] == [
        ("'~fine' <-> '~tune'", ("fine", "tuned")),
        ("'~model'", ("models",)),
    ]
