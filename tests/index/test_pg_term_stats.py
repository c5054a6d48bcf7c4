"""The term counts on PostgreSQL (``term_stats``, decision 610): every write keeps them, so after any
sequence of creates, edits and deletes, by one server or several at once, the table holds what a
full refresh (``ts_stat`` over every tsvector) makes, and a refresh rebuilds it only where a write
did not keep it."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_server import PgServer

from local_vector_search_mcp.index import postgres
from local_vector_search_mcp.index.port import ChunkRecord, DocumentDump, DocumentMeta, DocumentRecord
from local_vector_search_mcp.index.postgres import PostgresStore

THRESHOLD = 3  # small, so that random writes move words across it in both directions
# common and rare words, stems, CJK bigrams, punctuation
WORDS = [
    *["alpha", "beta", "gamma", "delta", "index", "indexes", "indexing", "search", "searching"],
    *["rare1", "rare2", "rare3", "quote's", "back\\slash", "索引", "検索"],
]


@pytest.fixture
def few(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "COMMON_TERM_MIN_CHUNKS", THRESHOLD)


@pytest.fixture
def store(pg_server: PgServer, few: None) -> Iterator[PostgresStore]:
    s = PostgresStore(pg_server.url, pg_server.fresh_schema())
    s.ensure_schema(None, "float32")
    try:
        yield s
    finally:
        s.close()


def _doc(rng: random.Random, path: str, revision: int) -> tuple[DocumentRecord, list[ChunkRecord]]:
    chunks = [
        ChunkRecord(
            i,
            f"p{i}",
            f"a{i}",
            " ".join(rng.choices(WORDS, k=rng.randint(1, 6))),
            rng.choice([None, "Heading " + rng.choice(WORDS)]),
            f"h{revision}-{i}",
        )
        for i in range(rng.randint(0, 4))
    ]
    return DocumentRecord(path, f"{revision:064d}", 1, 1, "2026-12-02T00:00:00Z"), chunks


def _snapshot(store: PostgresStore, above: int = THRESHOLD) -> list[tuple[str, int]]:
    """The counts searches read (a count of 0 is a lexeme no chunk holds any more)."""
    rows = store._rows("select lexeme, ndoc from term_stats where ndoc > %s order by lexeme", (above,))
    return [(str(w), int(n)) for w, n in rows]


def _full_refresh(store: PostgresStore, above: int = THRESHOLD) -> list[tuple[str, int]]:
    """What a rebuild of the table holds (the definition)."""
    rows = store._rows(
        "select word, ndoc from ts_stat('select tsv from chunks') where ndoc > %s order by word", (above,)
    )
    return [(str(w), int(n)) for w, n in rows]


def _kept(store: PostgresStore) -> bool:
    return bool(store._rows("select 1 from lexical_meta where key = 'term_stats'"))


def _step(store: PostgresStore, rng: random.Random, revision: int, paths: int = 8) -> None:
    path = f"d{rng.randrange(paths)}.md"
    if rng.random() < 0.25:
        store.delete_document(path)
    else:
        store.replace_document(*_doc(rng, path, revision))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_write_leaves_what_a_full_refresh_makes(store: PostgresStore, seed: int) -> None:
    rng = random.Random(seed)
    for r in range(12):  # some words common before the snapshot is first kept
        _step(store, rng, r)
    assert not _kept(store)  # a new index: not kept until a refresh rebuilds it
    store.refresh_term_stats()
    assert _kept(store)
    assert _snapshot(store) == _full_refresh(store) != []
    seen: set[str] = set()
    for r in range(12, 150):
        _step(store, rng, r)
        snapshot = _snapshot(store)
        assert snapshot == _full_refresh(store), r
        assert _snapshot(store, 0) == _full_refresh(store, 0), r  # every lexeme's, not only the common
        seen.update(w for w, _ in snapshot)
    assert {"~index", "索引", "検索"} <= seen  # stems and CJK bigrams crossed the threshold too
    store.refresh_term_stats()  # nothing to rebuild
    assert _snapshot(store) == _full_refresh(store)


def test_a_refresh_rebuilds_only_what_writes_did_not_keep(store: PostgresStore) -> None:
    """A kept table is left as it is (a refresh after a one-file edit reads no tsvector); an import
    (one transaction, many documents) stops keeping it, and the next refresh rebuilds it."""
    rng = random.Random(7)
    for r in range(20):
        _step(store, rng, r)
    store.refresh_term_stats()
    word = _snapshot(store)[0][0]
    store._rows("update term_stats set ndoc = ndoc + 1000 where lexeme = %s", (word,))  # a mark, not a count
    store.refresh_term_stats()
    assert dict(_snapshot(store))[word] > 1000  # kept: not rebuilt
    dumps = [DocumentDump(*_doc(rng, f"imported{i}.md", 100 + i), (), DocumentMeta()) for i in range(5)]
    store.import_documents(dumps)
    assert not _kept(store)
    store.refresh_term_stats()
    assert _kept(store)
    assert _snapshot(store) == _full_refresh(store)


def test_an_index_of_an_earlier_release_is_rebuilt_once(store: PostgresStore) -> None:
    """Its table holds only the common lexemes (and no key): the first refresh rebuilds it."""
    rng = random.Random(11)
    for r in range(20):
        _step(store, rng, r)
    store.refresh_term_stats()
    store._rows("delete from term_stats where ndoc <= %s", (THRESHOLD,))
    store._rows("delete from lexical_meta where key = 'term_stats'")
    _step(store, rng, 21)  # counts nothing
    store.refresh_term_stats()
    assert _kept(store)
    assert _snapshot(store, 0) == _full_refresh(store, 0)


def test_servers_writing_at_once_keep_it_exact(pg_server: PgServer, few: None) -> None:
    """Three stores (three servers) on one schema write the same paths at once, one of them also
    refreshing: no deadlock, no lost count; the table is a full refresh's at the end."""
    schema = pg_server.fresh_schema()
    stores = [PostgresStore(pg_server.url, schema) for _ in range(3)]
    try:
        stores[0].ensure_schema(None, "float32")
        rng = random.Random(5)
        for r in range(10):
            _step(stores[0], rng, r)
        stores[0].refresh_term_stats()
        errors: list[BaseException] = []

        def writer(i: int) -> None:
            own = random.Random(100 + i)
            try:
                for r in range(60):
                    _step(stores[i], own, 1000 * (i + 1) + r, paths=5)
                    if i == 0 and r % 15 == 0:
                        stores[i].refresh_term_stats()
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors == []
        assert _kept(stores[1])
        assert _snapshot(stores[1]) == _full_refresh(stores[1]) != []
    finally:
        for s in stores:
            s.close()


def test_an_earlier_tokenizers_index_upgraded_in_place_counts_the_new_tokens(
    tmp_path: Path, pg_server: PgServer, few: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 1011, as on SQLite: the pass that upgrades an earlier tokenizer's index in place
    (1006) rewrites chunks whose texts did not change, under the new tokens; the counts follow."""
    from kb_fakes import client, reindex_before_folds

    root = tmp_path / "kb"
    root.mkdir()
    for i in range(5):
        (root / f"n{i}.md").write_text(f"# Σημείωση {i}\n\nΚείμενο για την αναζήτηση {i}.\n", encoding="utf-8")
    kb = client(
        root, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=pg_server.fresh_schema()
    )
    try:
        reindex_before_folds(kb, monkeypatch)
        store = kb.store
        assert isinstance(store, PostgresStore)
        assert _kept(store) and ("αναζήτηση", 5) in _snapshot(store)
        assert kb.reindex()["indexedFiles"] == 5
        assert ("αναζητηση", 5) in _snapshot(store) and "αναζήτηση" not in dict(_snapshot(store))
        assert _snapshot(store, 0) == _full_refresh(store, 0) and _kept(store)
    finally:
        kb.shutdown()
