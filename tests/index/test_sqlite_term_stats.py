"""The term counts on SQLite (``term_stats``, decision 650): once a refresh has built them every
write keeps them, so after any sequence of creates, edits and deletes, alone or summed in write
batches, the rows searches read are what a full refresh (``chunks_fts_vocab``) makes; a tool
edit's sync keeps them too, and a refresh rebuilds only a table no write kept."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from kb_fakes import client, reindex_before_folds

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.index import sqlite
from local_vector_search_mcp.index.port import ChunkRecord, DocumentDump, DocumentMeta, DocumentRecord
from local_vector_search_mcp.index.sqlite import SqliteStore

THRESHOLD = 3  # small, so that random writes move terms across it in both directions
# FTS5's own tokens of each: folded diacritics, apostrophes and underscores splitting words,
# CJK and Thai bigrams, Korean syllables, a word that is only ever in a heading
WORDS = [
    *["alpha", "beta", "café", "CAFE", "naïve", "snake_case", "索引", "機械学習", "ติดตั้ง", "검색을"],
    *["gamma", "Delta", "index", "indexes", "Ünïcode", "quote's", "back\\slash", "検索", "x1", "2026"],
]
WEIGHTS = [3] * 10 + [1] * 10  # the first ten common, the rest rarer


@pytest.fixture
def few(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite, "COMMON_TERM_MIN_CHUNKS", THRESHOLD)


@pytest.fixture
def store(sqlite_store: SqliteStore, few: None) -> SqliteStore:
    return sqlite_store


def _doc(rng: random.Random, path: str, revision: int) -> tuple[DocumentRecord, list[ChunkRecord]]:
    chunks = [
        ChunkRecord(
            i,
            f"p{i}",
            f"a{i}",
            " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(1, 6))),
            rng.choice([None, "Heading " + rng.choice(WORDS), "Only-in-headings " + rng.choice(WORDS)]),
            f"h{revision}-{i}",
        )
        for i in range(rng.randint(0, 4))
    ]
    return DocumentRecord(path, f"{revision:064d}", 1, 1, "2026-12-02T00:00:00Z"), chunks


def _snapshot(store: SqliteStore) -> list[tuple[str, int]]:
    """The counts searches read (the marker row's term is no token)."""
    rows = store._conn().execute("SELECT term, doc FROM term_stats WHERE term != '' ORDER BY term")
    return [(str(t), int(n)) for t, n in rows]


def _full_refresh(store: SqliteStore) -> list[tuple[str, int]]:
    """What a rebuild of the table holds (the definition)."""
    rows = store._conn().execute("SELECT term, doc FROM chunks_fts_vocab WHERE doc > ? ORDER BY term", (THRESHOLD,))
    return [(str(t), int(n)) for t, n in rows]


def _kept(store: SqliteStore) -> bool:
    return store._counts_kept(store._conn())


_WRITTEN: dict[tuple[Path, str], list[ChunkRecord]] = {}  # each index's paths' last chunks, for edits


def _step(store: SqliteStore, rng: random.Random, revision: int, paths: int = 8) -> None:
    path = f"d{rng.randrange(paths)}.md"
    roll = rng.random()
    if roll < 0.25:
        store.delete_document(path)
        return
    doc, chunks = _doc(rng, path, revision)
    before = _WRITTEN.get((store.path, path), [])
    if roll < 0.6 and before:
        # an edit: the old chunks kept, one changed or duplicated, one maybe dropped (the counting
        # skips chunks stored exactly as before; a copy must still count once more)
        chunks = list(before)
        at = rng.randrange(len(chunks))
        if rng.random() < 0.5:
            chunks[at] = ChunkRecord(at, f"p{at}", f"a{at}", chunks[at].text + " " + rng.choice(WORDS), None, "x")
        else:
            chunks.append(chunks[at])
        if rng.random() < 0.3:
            del chunks[rng.randrange(len(chunks))]
    _WRITTEN[store.path, path] = chunks
    store.replace_document(doc, chunks)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_write_leaves_what_a_full_refresh_makes(store: SqliteStore, seed: int) -> None:
    rng = random.Random(seed)
    for r in range(24):  # some terms common before the table is first kept
        _step(store, rng, r)
    assert not _kept(store)  # a new index: not kept until a refresh rebuilds it
    store.refresh_term_stats()
    assert _kept(store)
    assert _snapshot(store) == _full_refresh(store)
    seen: set[str] = set()
    for r in range(24, 160):
        _step(store, rng, r)
        snapshot = _snapshot(store)
        assert snapshot == _full_refresh(store), r
        seen.update(t for t, _ in snapshot)
    # folded, split and bigrammed terms crossed the threshold too, and a heading-only word
    assert {"cafe", "naive", "snake", "索引", "学習", "only", "ตด"} <= seen, sorted(seen)
    store.refresh_term_stats()  # nothing to rebuild
    assert _snapshot(store) == _full_refresh(store)


@pytest.mark.parametrize("seed", [4, 5])
def test_writes_summed_in_a_batch_leave_it_exact_at_each_commit(store: SqliteStore, seed: int) -> None:
    """A write batch (a reindex pass) sums its documents' changes and applies them at its commit,
    a document written twice in one batch included; a rolled-back write takes its share back."""
    rng = random.Random(seed)
    for r in range(10):
        _step(store, rng, r)
    store.refresh_term_stats()
    revision = 100
    for _ in range(25):
        with store.write_batch() as batch:
            for _ in range(rng.randint(1, 6)):
                revision += 1
                _step(store, rng, revision, paths=5)
            if rng.random() < 0.3:
                batch.flush()
                assert _snapshot(store) == _full_refresh(store)
                _step(store, rng, revision + 1000, paths=5)
        assert _snapshot(store) == _full_refresh(store), revision
    with pytest.raises(RuntimeError), store.write_batch():
        store.replace_document(*_doc(rng, "d0.md", 9999))
        raise RuntimeError("the pass fails")
    with store.write_batch():
        _step(store, rng, 10_000)  # the failed transaction's changes are not applied with these
    assert _snapshot(store) == _full_refresh(store)


def test_terms_are_what_fts5_indexes(store: SqliteStore) -> None:
    """The distinct tokens a chunk is counted under are FTS5's: the tokenizer's (folded, CJK
    bigrams) and a token longer than FTS5 keeps (a base64 run), cut where FTS5 cuts it."""
    text = "Mixed CASE café Ünïcode 機械学習 snake_case x1 " + "QUJD" * 9000
    assert sqlite._chunk_terms(text, "Heading") >= {"mixed", "case", "cafe", "unicode", "機械", "習", "heading"}
    store.refresh_term_stats()
    for i in range(THRESHOLD + 1):
        store.replace_document(
            DocumentRecord(f"b{i}.md", "0" * 64, 1, 1, "x"), [ChunkRecord(0, "p", "a", text, "Heading", "h")]
        )
        assert _snapshot(store) == _full_refresh(store), i
    assert ("qujd" * 8192, THRESHOLD + 1) in _snapshot(store)
    store.delete_document("b0.md")
    assert _snapshot(store) == _full_refresh(store)
    assert "qujd" * 8192 not in dict(_snapshot(store))


def test_a_pass_writing_much_text_stops_keeping_and_rebuilds_at_its_end(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``COUNT_READ_LIMIT`` chunks tokenized in one write batch (over its transactions), the
    batch drops the marker and counts no more; the pass's refresh rebuilds. Below it, it keeps."""
    monkeypatch.setattr(sqlite, "COUNT_READ_LIMIT", 10)
    rng = random.Random(9)
    for r in range(10):
        _step(store, rng, r)
    store.refresh_term_stats()
    chunk = [ChunkRecord(0, "p", "a", "alpha beta", None, "h")]
    with store.write_batch() as batch:
        for i in range(4):  # 4 chunks read: kept
            store.replace_document(DocumentRecord(f"n{i}.md", "0" * 64, 1, 1, "x"), chunk)
        batch.flush()
        assert _kept(store) and _snapshot(store) == _full_refresh(store)
        for i in range(4, 8):  # 8 over two transactions: still kept
            store.replace_document(DocumentRecord(f"n{i}.md", "0" * 64, 1, 1, "x"), chunk)
    assert _kept(store) and _snapshot(store) == _full_refresh(store)
    with store.write_batch() as batch:
        for i in range(8):
            store.replace_document(DocumentRecord(f"m{i}.md", "0" * 64, 1, 1, "x"), chunk)
        batch.flush()
        assert _kept(store)
        for i in range(8, 12):  # the 11th chunk read drops the marker
            store.replace_document(DocumentRecord(f"m{i}.md", "0" * 64, 1, 1, "x"), chunk)
        batch.flush()
        assert not _kept(store)
        counted: list[int] = []
        monkeypatch.setattr(sqlite, "_chunk_terms", lambda *a: counted.append(1) or set())
        store.replace_document(DocumentRecord("m99.md", "0" * 64, 1, 1, "x"), chunk)
        assert counted == []  # the next transaction counts nothing
    monkeypatch.undo()
    monkeypatch.setattr(sqlite, "COMMON_TERM_MIN_CHUNKS", THRESHOLD)
    store.refresh_term_stats()
    assert _kept(store) and _snapshot(store) == _full_refresh(store)


def test_a_refresh_rebuilds_only_what_writes_did_not_keep(store: SqliteStore) -> None:
    """A kept table is left as it is (a refresh after a one-file edit reads no vocabulary); an
    import (``index copy``) stops keeping it, and the next refresh rebuilds it."""
    rng = random.Random(7)
    for r in range(20):
        _step(store, rng, r)
    store.refresh_term_stats()
    term = _snapshot(store)[0][0]
    with store._write() as c:
        c.execute("UPDATE term_stats SET doc = doc + 1000 WHERE term = ?", (term,))  # a mark, not a count
    store.refresh_term_stats()
    assert dict(_snapshot(store))[term] > 1000  # kept: not rebuilt
    dumps = [DocumentDump(*_doc(rng, f"imported{i}.md", 100 + i), (), DocumentMeta()) for i in range(5)]
    store.import_documents(dumps)
    assert not _kept(store)
    store.refresh_term_stats()
    assert _kept(store)
    assert _snapshot(store) == _full_refresh(store)


def test_an_index_of_an_earlier_release_is_rebuilt_once(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its table has no marker (an earlier release's refresh deletes every row, the marker too), so
    its writes count nothing and the first refresh rebuilds it; so does a table kept at another
    threshold."""
    rng = random.Random(11)
    for r in range(20):
        _step(store, rng, r)
    store.refresh_term_stats()
    with store._write() as c:  # what an earlier release's refresh leaves
        c.execute("DELETE FROM term_stats")
        c.execute("INSERT INTO term_stats SELECT term, doc FROM chunks_fts_vocab WHERE doc > ?", (THRESHOLD,))
    assert not _kept(store)
    counted: list[int] = []
    monkeypatch.setattr(sqlite, "_chunk_terms", lambda *a: counted.append(1) or set())
    _step(store, rng, 21)
    _step(store, rng, 22)
    assert counted == []  # not kept: no write reads its old chunks' terms
    monkeypatch.undo()
    monkeypatch.setattr(sqlite, "COMMON_TERM_MIN_CHUNKS", THRESHOLD)
    store.refresh_term_stats()
    assert _kept(store)
    assert _snapshot(store) == _full_refresh(store)
    monkeypatch.setattr(sqlite, "COMMON_TERM_MIN_CHUNKS", THRESHOLD + 1)  # a release with another threshold
    assert not _kept(store)


def test_a_cold_index_counts_nothing_and_is_built_once_at_its_end(
    tmp_path: Path, few: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold pass writes without counting (its writes would each tokenize their text again) and
    its refresh rebuilds the table once; a tool edit's sync then keeps it."""
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(6):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nalpha beta gamma note{i}\n\n## Part\n\nalpha delta\n", "utf-8")
    kb = client(root, knowledge_base__allow_writes=True, knowledge_base__index_workers=2)
    try:
        real = sqlite._chunk_terms
        counted: list[int] = []

        def counting(text: str, heading: str | None) -> set[str]:
            counted.append(1)
            return real(text, heading)

        monkeypatch.setattr(sqlite, "_chunk_terms", counting)
        kb.reindex()
        assert counted == []
        store = kb.store
        assert _kept(store)
        assert _snapshot(store) == _full_refresh(store)
        assert ("gamma", 6) in _snapshot(store) and "epsilon" not in dict(_snapshot(store))

        # a tool edit: its sync (Indexer.reconcile) keeps the counts; no reindex pass runs
        invoke(kb.ws, "kb_create", {"request": {"path": "new.md", "markdown": "# New\n\nepsilon gamma\n"}})
        for i in range(3):
            (root / f"e{i}.md").write_text("epsilon\n", "utf-8")
            assert kb.indexer.reconcile(f"e{i}.md") == "indexed"
        assert kb.ws.indexing.sync.wait_idle(30)
        assert counted  # the writes counted
        assert _snapshot(store) == _full_refresh(store)
        assert dict(_snapshot(store))["epsilon"] == 4 and dict(_snapshot(store))["gamma"] == 7
        (root / "n0.md").unlink()
        assert kb.indexer.reconcile("n0.md") == "deleted"
        assert dict(_snapshot(store))["gamma"] == 6
        assert _snapshot(store) == _full_refresh(store)
    finally:
        kb.shutdown()


def test_a_connection_sees_its_own_writes_in_the_counts(store: SqliteStore) -> None:
    """The counts a search prices its OR alternatives with are cached per connection; a thread
    that writes and then searches (a CLI call, a targeted sync's thread) reads its own writes."""
    chunk = ChunkRecord(0, "p0", "a0", "alpha beta", None, "h0")
    store.replace_document(DocumentRecord("a.md", "0" * 64, 1, 1, "2026-12-02T00:00:00Z"), [chunk])
    assert store._document_frequencies(["alpha"]) == {"alpha": 1}
    for n in range(1, 5):
        store.replace_document(DocumentRecord(f"b{n}.md", "0" * 64, 1, 1, "2026-12-02T00:00:00Z"), [chunk])
        assert store._document_frequencies(["alpha"]) == {"alpha": n + 1}
    store.delete_document("a.md")
    assert store._document_frequencies(["alpha", "gone"]) == {"alpha": 4}


def test_an_earlier_tokenizers_index_upgraded_in_place_counts_the_new_tokens(
    tmp_path: Path, few: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 1011: the pass that upgrades an earlier tokenizer's index in place (1006) re-reads
    chunks whose texts did not change, which the write's counting cancels unread (651): the table
    kept ``αναζήτηση: 5`` as the earlier tokenizer wrote it and lacked ``αναζητηση``. The pass's end
    rebuilds the counts from the index."""
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(5):
        (root / f"n{i}.md").write_text(f"# Σημείωση {i}\n\nΚείμενο για την αναζήτηση {i}.\n", encoding="utf-8")
    kb = client(root, storage=tmp_path / "index.db")
    try:
        reindex_before_folds(kb, monkeypatch)
        store = kb.store
        assert _kept(store) and ("αναζήτηση", 5) in _snapshot(store)
        assert kb.reindex()["indexedFiles"] == 5
        assert ("αναζητηση", 5) in _snapshot(store) and "αναζήτηση" not in dict(_snapshot(store))
        assert _snapshot(store) == _full_refresh(store) and _kept(store)
    finally:
        kb.shutdown()
