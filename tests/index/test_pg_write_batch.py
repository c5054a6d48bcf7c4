"""PostgreSQL's write batch (decision 680): documents sent without waiting for each, each still its
own transaction. A batch stores the rows writes one at a time store; a bad document in it keeps
its previous revision and takes no other with it; several servers writing batches at once keep
every document whole and the term counts exact."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from pg_server import PgServer
from psycopg import sql

from local_vector_search_mcp.index import postgres
from local_vector_search_mcp.index.port import ChunkRecord, DocumentMeta, DocumentRecord, LinkRecord
from local_vector_search_mcp.index.postgres import PostgresStore

THRESHOLD = 3
WORDS = ["alpha", "beta", "gamma", "index", "indexes", "searching", "rare1", "quote's", "back\\slash", "索引"]
_ROWS = (
    "select path, source_hash, size, mtime_ns, properties::text from documents order by path",
    "select d.path, c.ordinal, c.pointer, c.anchor, c.text, c.heading_path, c.embedding_text_hash, c.tsv::text,"
    " c.ntok, c.nstem from chunks c join documents d on d.id = c.doc_id order by d.path, c.ordinal",
    "select d.path, l.ordinal, l.kind, l.destination, l.text, l.anchor from links l"
    " join documents d on d.id = l.doc_id order by d.path, l.ordinal",
    "select d.path, m.tags, m.aliases, m.headings, m.block_ids, m.tag_keys from doc_meta m"
    " join documents d on d.id = m.doc_id order by d.path",
)


@pytest.fixture
def few(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres, "COMMON_TERM_MIN_CHUNKS", THRESHOLD)


@pytest.fixture
def stores(pg_server: PgServer, few: None) -> Iterator[list[PostgresStore]]:
    made = [PostgresStore(pg_server.url, pg_server.fresh_schema()) for _ in range(2)]
    for s in made:
        s.ensure_schema(None, "float32")
    try:
        yield made
    finally:
        for s in made:
            s.close()


def _doc(rng: random.Random, path: str, revision: int) -> tuple[DocumentRecord, list[ChunkRecord], list[LinkRecord]]:
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
    links = [
        LinkRecord("wiki", f"t{rng.randrange(9)}", rng.choice([None, "x"]), None) for _ in range(rng.randint(0, 2))
    ]
    props = rng.choice([None, {"n": revision}])
    return DocumentRecord(path, f"{revision:064d}", revision, revision, "2026-12-02T00:00:00Z", props), chunks, links


def _write(store: PostgresStore, rng: random.Random, path: str, revision: int) -> None:
    doc, chunks, links = _doc(rng, path, revision)
    meta = DocumentMeta(tags=(f"tag{revision % 3}",)) if revision % 2 else None
    store.replace_document(doc, chunks, links, meta)


def _rows(store: PostgresStore) -> list[list[tuple[object, ...]]]:
    return [store._rows(q) for q in _ROWS]


def _counts(store: PostgresStore) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    kept = store._rows("select lexeme, ndoc from term_stats where ndoc > 0 order by lexeme")
    full = store._rows("select word, ndoc from ts_stat('select tsv from chunks') order by word")
    return kept, full


def test_a_batch_stores_the_rows_writes_one_at_a_time_store(stores: list[PostgresStore]) -> None:
    """The same random creates, rewrites and deletes, alone on one schema and in a batch (flushed
    at random moments, as the indexer's 64 files or 50 ms) on another: equal rows, and the term
    counts kept by the batched writes equal to a full refresh's."""
    alone, batched = stores
    for store in stores:  # the counts are kept from here on (a cold index keeps none)
        store.refresh_term_stats()
    plan = random.Random(3)
    steps = [(f"d{plan.randrange(12)}.md", plan.random() < 0.15, plan.random() < 0.2) for _ in range(120)]
    rng = random.Random(9)
    for r, (path, delete, _) in enumerate(steps):
        alone.delete_document(path) if delete else _write(alone, rng, path, r)
    rng = random.Random(9)
    with batched.write_batch() as batch:
        for r, (path, delete, flush) in enumerate(steps):
            batched.delete_document(path) if delete else _write(batched, rng, path, r)  # a delete flushes first
            if flush:
                sent = batch.files
                batch.flush()
                assert batch.files == 0
                kept, full = _counts(batched)
                assert kept == full, (r, sent)
        assert batch.files > 0  # some left to the batch's end
    assert _rows(batched) == _rows(alone) != [[], [], [], []]
    kept, full = _counts(batched)
    assert kept == full != []


def test_a_batch_sends_without_waiting_and_its_thread_sees_its_writes(stores: list[PostgresStore]) -> None:
    """Sent documents are not confirmed until the flush; any other call of the writer's thread
    (here reading the document states) confirms them first."""
    store, other = stores
    rng = random.Random(1)
    with store.write_batch() as batch:
        for i in range(5):
            _write(store, rng, f"d{i}.md", i)
        assert batch.files == 5
        assert set(store.document_states()) == {f"d{i}.md" for i in range(5)}
        assert batch.files == 0
    assert other.document_states() == {}


@pytest.mark.parametrize("bad", ["server", "client"])
def test_a_bad_document_in_a_batch_takes_no_other_with_it(stores: list[PostgresStore], bad: str) -> None:
    """Five documents indexed, then rewritten in one batch where the third fails (a tsvector the
    server refuses, or text the client cannot send): the others hold their new revision, the
    bad one its old one, whole; the failure is raised once. When it is raised depends on when
    the server's answer comes (the bad document's own write, a later one's, or the flush): the
    caller here goes on after it, as the indexer does not (its pass ends there), so that every
    moment leaves the same rows."""
    store, _ = stores
    rng = random.Random(4)
    for i in range(5):
        _write(store, rng, f"d{i}.md", i)
    before = _rows(store)
    raised: list[psycopg.Error] = []
    with store.write_batch() as batch:
        for i in range(5):
            doc, chunks, links = _doc(rng, f"d{i}.md", 10 + i)
            chunks = chunks or [ChunkRecord(0, "p0", "a0", "alpha", None, "h")]
            if i == 2 and bad == "server":
                chunks[0] = ChunkRecord(0, "p0", "a0", "alpha", None, "h", lexemes=("'unclosed", 1, 0))
            elif i == 2:
                chunks[0] = ChunkRecord(0, "p0", "a0", "nul \x00 byte", None, "h")
            try:
                store.replace_document(doc, chunks, links)
            except psycopg.Error as exc:
                raised.append(exc)
        try:
            batch.flush()
        except psycopg.Error as exc:
            raised.append(exc)
    assert len(raised) == 1
    states = store.document_states()
    assert {p: s.source_hash for p, s in states.items()} == {
        f"d{i}.md": f"{(i if i == 2 else 10 + i):064d}" for i in range(5)
    }
    bad_rows = [[row for row in table if row[0] == "d2.md"] for table in _rows(store)]
    assert bad_rows == [[row for row in table if row[0] == "d2.md"] for table in before]
    with store.write_batch():  # the store goes on writing after the failure
        _write(store, rng, "d2.md", 30)
    assert store.document_states()["d2.md"].source_hash == f"{30:064d}"


def test_servers_writing_batches_at_once_keep_documents_whole(pg_server: PgServer, few: None) -> None:
    """Three stores (three servers) on one schema, each writing the same five paths in a batch from
    its own thread while one also refreshes the counts: no error, no deadlock; every document is
    one writer's revision whole (its chunks, its hash), and the counts equal a full refresh's."""
    schema = pg_server.fresh_schema()
    stores = [PostgresStore(pg_server.url, schema) for _ in range(3)]
    try:
        stores[0].ensure_schema(None, "float32")
        stores[0].refresh_term_stats()
        errors: list[BaseException] = []

        def writer(i: int) -> None:
            own = random.Random(100 + i)
            try:
                with stores[i].write_batch() as batch:
                    for r in range(60):
                        path = f"d{own.randrange(5)}.md"
                        if own.random() < 0.2:
                            stores[i].delete_document(path)
                        else:
                            _write(stores[i], own, path, 1000 * (i + 1) + r)
                        if own.random() < 0.2:
                            batch.flush()
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
        rows = stores[1]._rows(
            "select d.source_hash, c.embedding_text_hash from documents d join chunks c on c.doc_id = d.id"
        )
        assert rows
        for source_hash, chunk_hash in rows:  # every chunk of the document's own revision
            assert chunk_hash.split("-")[0] == f"h{int(source_hash)}"
        kept, full = _counts(stores[1])
        assert kept == full
    finally:
        for s in stores:
            s.close()


def test_a_batch_whose_sessions_the_server_ends_loses_no_document(
    stores: list[PostgresStore], pg_server: PgServer
) -> None:
    """Every client session ended (as a restart does) while documents are sent: the window is
    written again on new sessions, and every document of the batch is stored.

    The window is held uncommitted on the server until the sessions are ended (another session
    holds the first document's lock): had the server committed it first, the documents would be
    stored whether the batch wrote them again or not, and the test would pass by the clock."""
    store, _ = stores
    rng = random.Random(6)
    with psycopg.connect(pg_server.url, autocommit=True) as control, psycopg.connect(pg_server.url) as blocker:
        blocker.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", (store._doc_key("d0.md"),))
        spared = [control.info.backend_pid, blocker.info.backend_pid]
        with store.write_batch() as batch:
            try:
                for i in range(4):
                    _write(store, rng, f"d{i}.md", i)
                assert batch.files == 4
                _end_sessions_but(control, spared)
            finally:
                blocker.rollback()  # the lock is free for the window's second writing (or the batch's exit)
            committed = control.execute(
                sql.SQL("select count(*) from {}.documents").format(sql.Identifier(store._schema))
            )
            assert committed.fetchone() == (0,)  # none of the window
            for i in range(4, 8):
                _write(store, rng, f"d{i}.md", i)
    assert {p: s.source_hash for p, s in store.document_states().items()} == {f"d{i}.md": f"{i:064d}" for i in range(8)}


def _end_sessions_but(control: psycopg.Connection[Any], spared: list[int]) -> None:
    """Once the batch's session waits for the lock (its window sent, none of it committed), every
    client session but the ``spared`` ones is ended, as a restart ends them."""
    deadline = time.monotonic() + 30
    waiting = "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and wait_event = 'advisory'"
    while control.execute(waiting).fetchone() != (1,):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    ended = control.execute(
        "select pg_terminate_backend(pid), pid from pg_stat_activity"
        " where pid <> all(%s) and backend_type = 'client backend'",
        (spared,),
    ).fetchall()
    pids = [pid for _, pid in ended]
    assert len(pids) >= 2  # the store's thread session and the batch's at least
    while control.execute("select count(*) from pg_stat_activity where pid = any(%s)", (pids,)).fetchone() != (0,):
        assert time.monotonic() < deadline  # it only signals: wait until they are gone
        time.sleep(0.02)
