"""PostgreSQL's MaxScore fetch (decision 455) on a real server: random corpora x random queries, each
ranked twice, once as the adapter does (the rows of the atoms that can still reach a list's best
``depth``, fetched in rounds) and once from every matched row (the ranking before decision 455),
must agree on every id and every score bit, in and out of a path scope. The lists are cut short
(depth 5) and the first round is small so that the loop runs several rounds and leaves rows out."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from kb_fakes import KbClient, make_workspace
from pg_server import PgServer

from local_vector_search_mcp.index import pg_rank, postgres
from local_vector_search_mcp.index.postgres import PostgresStore
from local_vector_search_mcp.index.query import AnyOf, PathScope, Phrase, Term

# words of three frequency classes, some sharing a stem (the stems list is pruned too)
COMMON = ["index", "search", "node", "cluster", "data", "query"]
MIDDLE = ["shard", "shards", "sharding", "replica", "replicas", "mapping", "analyzer", "token", "tokens"]
RARE = ["quetzal", "ibis", "okapi", "lynx", "tapir", "gecko", "marmot", "heron", "osprey", "newt"]
WORDS = COMMON * 12 + MIDDLE * 3 + RARE


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


@pytest.fixture(scope="module", params=[48, 4802])
def corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, pg_server: PgServer
) -> Iterator[KbClient]:
    rng = random.Random(request.param)
    root = tmp_path_factory.mktemp("pruning")
    for i in range(120):
        sections = "\n\n".join(
            f"## {_text(rng, rng.randint(1, 3))}\n\n{_text(rng, rng.randint(3, 60))}." for _ in range(rng.randint(1, 4))
        )
        folder = root / rng.choice(["a", "b", "c/d"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc{i}.md").write_text(
            f"# {_text(rng, 2)}\n\n{_text(rng, rng.randint(2, 40))}.\n\n{sections}\n", "utf-8"
        )
    client = KbClient(
        make_workspace(
            root, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=pg_server.fresh_schema()
        )
    )
    client.reindex()
    try:
        yield client
    finally:
        client.store.close()


def _ranked(store: PostgresStore, query: AnyOf, scope: PathScope | None, every_row: bool) -> tuple[list[Any], int]:
    """(the ranking's ids and score bits, rows fetched) of one lexical call."""
    seen: list[list[tuple[int, float]]] = []
    fetched = [0]
    rank, fetch = pg_rank.rank, PostgresStore._fetch

    def record(*args: Any, **kwargs: Any) -> list[tuple[int, float]]:
        seen.append(rank(*args, **kwargs))
        return seen[-1]

    def counted(self: PostgresStore, *args: Any) -> pg_rank.Matched:
        rows = fetch(self, *args)
        fetched[0] += len(rows.ids)
        return rows

    def everything(self: PostgresStore, plan: pg_rank.RankPlan, *_: Any) -> pg_rank.Matched:
        n_exact = len(plan.exact.atoms) if plan.exact else 0
        return self._fetch(plan.atoms(), n_exact, plan.where())

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pg_rank, "rank", record)
        mp.setattr(PostgresStore, "_fetch", counted)
        if every_row:
            mp.setattr(PostgresStore, "_top_rows", everything)
        hits = store.lexical(query, 5, scope)
    return [[h.chunk_id for h in hits], [(i, s.hex()) for i, s in seen[0]] if seen else []], fetched[0]


def test_pruned_fetch_ranks_as_every_row(corpus: KbClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "STEM_DEPTH", 5)
    monkeypatch.setattr(postgres, "FIRST_ROWS", 3)
    store = corpus.store
    assert isinstance(store, PostgresStore)
    rng = random.Random(455)
    scopes = [None, PathScope(("a/**", "c/**")), PathScope(("**/*.md",), ("b/**",))]
    fewer = 0
    for case in range(150):
        words = rng.sample(COMMON + MIDDLE + RARE, rng.randint(1, 7))
        leaves: list[Term | Phrase] = [Term(w) for w in words]
        if rng.random() < 0.3:
            leaves.append(Phrase(tuple(rng.sample(COMMON + MIDDLE, 2))))
        query = AnyOf(tuple(leaves), rng.choice([None, None, 400]))
        scope = rng.choice(scopes)
        pruned, rows = _ranked(store, query, scope, every_row=False)
        expected, all_rows = _ranked(store, query, scope, every_row=True)
        assert pruned == expected, (case, words, scope)
        fewer += rows < all_rows
    assert fewer > 30  # the pruning ran, or the comparison proves nothing


def test_corpus_totals_have_their_index_and_tables_are_found_in_the_catalog(corpus: KbClient) -> None:
    """Decision 457: the ranking's totals read ``chunks_lengths`` (an index-only scan once vacuumed),
    and ``_table_exists`` asks ``pg_class`` (tables of this schema only, not its indexes)."""
    store = corpus.store
    assert isinstance(store, PostgresStore)
    ((name,),) = store._rows(
        "select indexname from pg_indexes where schemaname = current_schema() and indexname = 'chunks_lengths'"
    )
    assert name == "chunks_lengths"
    assert store._table_exists("chunks") and store._table_exists("term_stats")
    assert not store._table_exists("chunks_lengths") and not store._table_exists("no_such_table")
    stats = store._corpus_stats()
    assert stats.rows == store.counts().chunks and stats.tokens > 0
