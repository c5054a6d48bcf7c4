"""The chunk counts of a PostgreSQL lexical search (decision 671): where every write keeps
``term_stats`` (decision 610), a single lexeme's count is read from it instead of counted through
the GIN index. The counts must be the ones counting the chunks gives, after any writes, for stems,
CJK bigrams and words no chunk holds (some needing quoting: FTS5's tokens hold no quote or
backslash, a query's lexeme may); phrases and prefixes are still counted; and the ranking must be
the same bit for bit as when the table is not kept and everything is counted."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from pg_server import PgServer

from local_vector_search_mcp.index import pg_rank, postgres
from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord
from local_vector_search_mcp.index.postgres import PostgresStore, _lexeme, plain_lexeme
from local_vector_search_mcp.index.query import AllOf, AnyOf, Phrase, Prefix, Term

THRESHOLD = 3  # small: the search reads some counts as common (snapshot) and the others as rare
WORDS = [
    *["alpha", "beta", "gamma", "delta", "index", "indexes", "indexing", "search", "searching"],
    *["quote's", "back\\slash", "索引", "検索"],
]
RARE = ["rare1", "rare2", "rare3", "rare4"]  # in a few chunks: counts at or below the threshold
ABSENT = ["nowhere", "it''s", "x\\\\y"]  # no chunk holds these (nor their stems)


@pytest.fixture
def store(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[PostgresStore]:
    monkeypatch.setattr(postgres, "COMMON_TERM_MIN_CHUNKS", THRESHOLD)
    s = PostgresStore(pg_server.url, pg_server.fresh_schema())
    s.ensure_schema(None, "float32")
    try:
        yield s
    finally:
        s.close()


def _write(store: PostgresStore, rng: random.Random, revision: int) -> None:
    path = f"d{rng.randrange(10)}.md"
    if rng.random() < 0.2:
        store.delete_document(path)
        return
    chunks = [
        ChunkRecord(
            i,
            f"p{i}",
            f"a{i}",
            " ".join(rng.choices(WORDS, k=rng.randint(1, 8)) + rng.sample(RARE, rng.random() < 0.2)),
            rng.choice([None, "Heading " + rng.choice(WORDS)]),
            f"h{revision}-{i}",
        )
        for i in range(rng.randint(0, 5))
    ]
    store.replace_document(DocumentRecord(path, f"{revision:064d}", 1, 1, "2026-12-02T00:00:00Z"), chunks)


def _counted(store: PostgresStore, tsquery: str) -> int:
    """The definition: the chunks the tsquery matches."""
    ((n,),) = store._rows("select count(*) from chunks where tsv @@ cast(%s as tsquery)", (tsquery,))
    return int(n)


def _every_lexeme(store: PostgresStore) -> list[str]:
    return [str(w) for (w,) in store._rows("select word from ts_stat('select tsv from chunks') order by word")]


def test_plain_lexemes_are_read_back_and_nothing_else_is() -> None:
    for word in [*WORDS, *ABSENT, "~stem", "'", "\\", "''\\\\'"]:
        assert plain_lexeme(_lexeme(word)) == word
    for tsquery in ["'a' <-> 'b'", "'a':*", "'a':A", "'a' & 'b'", "''", "'", "'a''", "'a\\'", "a"]:
        assert plain_lexeme(tsquery) is None, tsquery


@pytest.mark.parametrize("seed", [1, 2])
def test_counts_are_the_chunks_counts_after_any_writes(store: PostgresStore, seed: int) -> None:
    rng = random.Random(seed)
    compared: set[str] = set()
    for revision in range(40):
        _write(store, rng, revision)
        if revision == 0:
            store.refresh_term_stats()  # every write from now on keeps the table
        if revision % 8 != 7:
            continue
        lexemes = [*_every_lexeme(store), *ABSENT]
        tsqueries = [_lexeme(w) for w in lexemes]
        tsqueries += ["'index' <-> 'search'", "'search' <-> 'index'", "'ind':*", "'索引' <-> '検索'"]
        expected = [_counted(store, q) for q in tsqueries]
        assert store._live_counts(tsqueries) == expected
        frequencies = store._token_frequencies(lexemes)
        assert frequencies.counts == {w: n for w, n in zip(lexemes, expected, strict=False) if n}
        assert all(_counted(store, q) == n for q, n in frequencies.live.items())
        # an AND's atoms, lexemes, phrases and prefixes mixed (and one twice), in one order or another
        atoms = [pg_rank.Atom(q, ()) for q in [*reversed(tsqueries), tsqueries[-1]]]
        assert store._atom_counts(atoms) == [*reversed(expected), expected[-1]]
        # the atoms' lexemes read in the pricing's round trip: every one, exactly
        read = store._token_frequencies([], lexemes)
        assert read.counts == {} and read.live == dict(zip(tsqueries[: len(lexemes)], expected, strict=False))
        compared |= {"common" for n in expected if n > THRESHOLD} | {"rare" for n in expected if 0 < n <= THRESHOLD}
        compared |= {w for w in lexemes if w in ("~index", "索引")}
    assert compared == {"common", "rare", "~index", "索引"}  # both kinds of count, stems and CJK bigrams


def test_the_table_is_read_only_while_every_write_keeps_it(store: PostgresStore) -> None:
    rng = random.Random(3)
    for revision in range(12):
        _write(store, rng, revision)
    store.refresh_term_stats()
    ((rare,),) = store._rows(
        "select lexeme from term_stats where ndoc between 1 and %s order by lexeme limit 1", (THRESHOLD,)
    )
    lexeme, phrase = _lexeme(rare), "'alpha' <-> 'beta'"
    truth = [_counted(store, lexeme), _counted(store, phrase)]
    assert truth[0] > 0
    # a count changed behind the writers' backs shows which one the search reads
    store._rows("update term_stats set ndoc = 0 where lexeme = %s returning 1", (rare,))
    assert store._live_counts([lexeme, phrase]) == [0, truth[1]]
    assert store._token_frequencies([rare]).counts == {}
    assert store._token_frequencies([], [rare]).live == {lexeme: 0}
    store._rows("delete from lexical_meta where key = 'term_stats' returning 1")  # as an import leaves it
    assert store._live_counts([lexeme, phrase]) == truth
    assert store._token_frequencies([rare]).counts == {rare: truth[0]}
    assert store._token_frequencies([], [rare]).live == {}  # not counted: the pricing's lexemes only


def _ranking(store: PostgresStore, query: Any) -> list[Any]:
    """The hits and every score's bits of one lexical call."""
    seen: list[list[tuple[int, float]]] = []
    rank = pg_rank.rank

    def record(*args: Any, **kwargs: Any) -> list[tuple[int, float]]:
        seen.append(rank(*args, **kwargs))
        return seen[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pg_rank, "rank", record)
        hits = store.lexical(query, 8, None)
    return [[h.chunk_id for h in hits], [[(i, s.hex()) for i, s in scored] for scored in seen]]


def test_rankings_are_the_same_as_from_counting_the_chunks(store: PostgresStore) -> None:
    rng = random.Random(4)
    for revision in range(30):
        _write(store, rng, revision)
    store.refresh_term_stats()
    queries: list[Any] = []
    for _ in range(60):
        words = rng.sample(WORDS + RARE + ABSENT, rng.randint(1, 5))
        leaves: list[Term | Phrase | Prefix] = [Term(w) for w in words]
        if rng.random() < 0.4:
            leaves.append(Phrase(tuple(rng.sample(WORDS, 2))))
        if rng.random() < 0.2:
            leaves.append(Prefix(rng.choice(WORDS)[:3]))
        queries.append(AnyOf(tuple(leaves), rng.choice([None, 12])) if rng.random() < 0.7 else AllOf(tuple(leaves)))
    kept = [_ranking(store, q) for q in queries]
    store._rows("delete from lexical_meta where key = 'term_stats' returning 1")
    counted = [_ranking(store, q) for q in queries]
    assert kept == counted
    assert sum(bool(r[0]) for r in kept) > 30  # most queries found something to compare


def test_an_ands_quoted_lexeme_is_counted_as_any_other_lexeme(store: PostgresStore) -> None:
    # a lexeme holding a quote or a backslash is as plain as any (``plain_lexeme``): an AND counts
    # it by the same rule, in the same round trip, not through the GIN index by a rule of its own
    rng = random.Random(5)
    for revision in range(6):
        _write(store, rng, revision)
    store.refresh_term_stats()
    words = ["nowhere", "it's", "x\\y"]  # no chunk holds them
    atoms = [pg_rank.Atom(_lexeme(w), (w,)) for w in words]
    statements: list[str] = []
    rows = store._rows

    def counted_rows(query: str, params: Any = ()) -> list[tuple[Any, ...]]:
        statements.append(query)
        return rows(query, params)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "_rows", counted_rows)
        assert store._atom_counts(atoms) == [0, 0, 0]
    assert len(statements) == 1  # every plain lexeme in the pricing's statement
    # without the key the snapshot prices a common lexeme, quoted or not (as SQLite's snapshot)
    store._rows("delete from lexical_meta where key = 'term_stats' returning 1")
    store._rows(
        "insert into term_stats (lexeme, ndoc) select unnest(cast(%s as text[])), %s returning 1",
        (words, THRESHOLD + 7),
    )
    assert store._atom_counts(atoms) == [THRESHOLD + 7] * 3
