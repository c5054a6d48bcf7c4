"""The pending-vector count on PostgreSQL (``index/pg_pending.py``, decisions 485-487): a table the
database's triggers keep, so a count reads as many rows as chunks wait, stays exact across every
write of every server on the index, and an index written before it is upgraded on open."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
from kb_fakes import HashEmbedder, make_workspace
from pg_server import PgServer

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.index.port import ChunkRecord, DocumentDump, DocumentMeta, DocumentRecord
from local_vector_search_mcp.index.postgres import PostgresStore

DIMS = 16


def _doc(path: str, n: int, with_vectors: list[bool], seed: int) -> tuple[DocumentRecord, list[ChunkRecord]]:
    rng = np.random.default_rng(seed)
    chunks = [
        ChunkRecord(
            i,
            f"p{i}",
            f"a{i}",
            f"{path} part {i} revision {seed}",
            None,
            f"h{seed}-{i}",
            rng.standard_normal(DIMS).astype(np.float32) if with_vectors[i] else None,
        )
        for i in range(n)
    ]
    return DocumentRecord(path, f"{seed:064d}", 1, 1, "2026-12-02T00:00:00Z"), chunks


def _truth(store: PostgresStore) -> list[int]:
    """The definition (decision 150): chunks with no row in ``vectors``."""
    rows = store._rows(
        "select c.id from chunks c where not exists (select 1 from vectors v where v.chunk_id = c.id) order by c.id"
    )
    return [r[0] for r in rows]


def _agree(stores: list[PostgresStore]) -> int:
    truth = _truth(stores[0])
    for store in stores:
        assert store.pending_vector_count() == len(truth)
        assert [p.chunk_id for p in store.pending_vectors(1000)] == truth
        assert store.counts().pending_vectors == len(truth)
    return len(truth)


def _scans(store: PostgresStore) -> int:
    """Scans of ``chunks``, ``vectors`` and their indexes in the current transaction."""
    ((n,),) = store._rows(
        "select coalesce(sum(pg_stat_get_xact_numscans(r)), 0) from (select unnest(array[to_regclass('chunks'),"
        " to_regclass('vectors')]) r union all select indexrelid from pg_index"
        " where indrelid in (to_regclass('chunks'), to_regclass('vectors'))) s"
    )
    return int(n)


def test_the_count_reads_no_chunk_and_no_vector(pg_server: PgServer) -> None:
    """The count asked by every kb_search (decision 485): never a read of the index's chunks or
    vectors, whose cost grows with the index (the anti-join's 80 ms at 100k chunks)."""
    store = PostgresStore(pg_server.url, pg_server.fresh_schema())
    try:
        store.ensure_schema(DIMS, "float32")
        for d in range(8):
            store.replace_document(*_doc(f"d{d}.md", 10, [i != 3 or d % 3 == 0 for i in range(10)], d))
        store.pending_vector_count()  # any first-look work done
        conn = store._conn()
        with conn.transaction():
            before = _scans(store)
            assert store.pending_vector_count() == 5
            assert _scans(store) == before
    finally:
        store.close()


def test_two_servers_see_the_exact_count_through_every_write(pg_server: PgServer) -> None:
    """Random documents written, rewritten, deleted, imported, their vectors stored, by two
    stores on one schema (two servers, decision 152): each answers the anti-join's count and
    list after every step."""
    schema = pg_server.fresh_schema()
    stores = [PostgresStore(pg_server.url, schema) for _ in range(2)]
    rng = random.Random(485)
    seen = []
    try:
        stores[0].ensure_schema(DIMS, "float32")
        for step in range(60):
            store = stores[rng.randrange(2)]
            action = rng.random()
            path = f"d{rng.randrange(6)}.md"
            if action < 0.45:
                n = rng.randrange(0, 6)
                store.replace_document(*_doc(path, n, [rng.random() < 0.5 for _ in range(n)], step))
            elif action < 0.6:
                store.delete_document(path)
            elif action < 0.7:
                n = rng.randrange(1, 4)
                doc, chunks = _doc(path, n, [rng.random() < 0.5 for _ in range(n)], step)
                store.import_documents([DocumentDump(doc, tuple(chunks), (), DocumentMeta())])
            else:  # the embedding pass: some of what the other server lists as pending
                todo = stores[1 - stores.index(store)].pending_vectors(rng.randrange(1, 8))
                vectors = [(p, np.ones(DIMS, np.float32)) for p in todo]
                stored = store.store_vectors(vectors + vectors[:1])  # once more: skipped
                assert stored == len(todo)
            seen.append(_agree(stores))
        assert max(seen) > 3 and seen.count(0) > 3  # pending rows came and went
        todo = stores[1].pending_vectors(1000)
        stores[0].store_vectors([(p, np.ones(DIMS, np.float32)) for p in todo])
        assert _agree(stores) == 0
        stores[1].reset(DIMS, "float32")  # a forced rebuild by the other server
        assert _agree(stores) == 0
        stores[1].replace_document(*_doc("new.md", 3, [False, True, False], 99))
        assert _agree(stores) == 2
    finally:
        for store in stores:
            store.close()


def _old_schema(store: PostgresStore) -> None:
    """The index as a release before decision 485 left it: no pending table, no triggers."""
    store._rows(
        "drop table if exists pending_vectors; drop trigger if exists lvsm_pending_chunks_added on chunks;"
        " drop trigger if exists lvsm_pending_chunks_deleted on chunks;"
        " drop trigger if exists lvsm_pending_vectors_added on vectors"
    )


def test_an_index_of_the_old_schema_is_upgraded_on_open(pg_server: PgServer) -> None:
    schema = pg_server.fresh_schema()
    old = PostgresStore(pg_server.url, schema)
    old.ensure_schema(DIMS, "float32")
    for d in range(5):
        old.replace_document(*_doc(f"d{d}.md", 4, [i % 2 == 0 for i in range(4)], d))
    _old_schema(old)
    # what a server of the old release writes meanwhile: rows only, nothing about pending ones
    old._rows(
        "insert into chunks (doc_id, ordinal, pointer, anchor, text, embedding_text_hash, tsv)"
        " select id, 9, 'p', 'a', 'late', 'h', ''::tsvector from documents where path = 'd0.md'"
    )
    old.close()
    opened = PostgresStore(pg_server.url, schema)
    other = PostgresStore(pg_server.url, schema)
    try:
        assert opened.pending_vector_count() == 11  # 2 of 4 in each of 5 documents, and the late one
        assert opened._table_exists("pending_vectors")
        assert _agree([opened, other]) == 11
        # the triggers keep it from now on, whoever writes: the adapter, or raw rows as an older
        # server writes them
        opened.replace_document(*_doc("d1.md", 2, [False, False], 7))
        other._rows("delete from documents where path = 'd2.md'")
        other._rows(
            "insert into vectors (chunk_id, embedding) select id, %s from chunks where text = 'late'",
            (np.ones(DIMS, np.float32),),
        )
        assert _agree([opened, other]) == 11 - 2 - 1  # d2's two went, the late one has its vector
        # a reindex (ensure_schema) of an old index upgrades it too, and once
        _old_schema(other)
        other.ensure_schema(DIMS, "float32")
        assert other._pending_state() == (True, True)
        assert _agree([opened, other]) == 8
        # a server of the old release that dropped the triggers with ``chunks`` and made them anew
        other._rows("drop trigger lvsm_pending_vectors_added on vectors")
        other._rows(
            "insert into vectors (chunk_id, embedding) select id, %s from chunks"
            " where doc_id = (select id from documents where path = 'd3.md') on conflict do nothing",
            (np.ones(DIMS, np.float32),),
        )
        assert _agree([opened, other]) == 8 - 2  # found without its trigger, made again
    finally:
        opened.close()
        other.close()


def test_kb_search_and_index_note_follow_another_servers_writes(tmp_path: Path, pg_server: PgServer) -> None:
    """Two workspaces on one index: the one without a working provider writes chunks it cannot
    embed; the other's kb_search says how many wait, exactly, and its pass embeds them."""
    for i in range(4):
        (tmp_path / f"n{i}.md").write_text(f"# Note {i}\n\nGardening tomatoes, note {i}.\n", encoding="utf-8")
    schema = pg_server.fresh_schema()

    def server(embedder: HashEmbedder) -> Any:
        return make_workspace(
            tmp_path,
            "local",
            embedder=embedder,
            storage__backend="postgresql",
            storage__url=pg_server.url,
            storage__schema=schema,
            server__toolsets=["kb", "chunks"],
        )

    a, down = server(HashEmbedder(DIMS)), HashEmbedder(DIMS, fail=True)
    b = server(down)
    try:
        a.indexing.reindex("all", False)
        assert a.store.pending_vector_count() == 0
        (tmp_path / "n9.md").write_text("# Late\n\nGardening tomatoes later.\n\n## More\n\nAnd more.\n", "utf-8")
        b.indexing.indexer.reconcile("n9.md")  # b's sync: the chunks go in, the provider is down
        assert b.store.pending_vector_count() == 2
        found = invoke(a, "kb_search", {"request": {"query": "gardening tomatoes", "mode": "hybrid"}})
        assert isinstance(found, dict) and "2 of 6 chunks do not have vectors yet" in found["warning"]
        a.indexing.wait_vectors(30)
        assert b.store.pending_vector_count() == 0
        down.fail = False
        (tmp_path / "n9.md").write_text("# Late\n\nRewritten.\n", "utf-8")
        done = invoke(b, "index_note", {"path": "n9.md"})
        assert isinstance(done, dict) and done["chunks"] == 1 and not done.get("warning")
        assert _agree([a.store, b.store]) == 0
    finally:
        a.close()
        b.close()


def test_a_user_who_may_not_add_the_table_counts_as_before(pg_server: PgServer) -> None:
    """A server connecting as a role that may write the rows but is not the tables' owner (it
    may not add triggers to them) answers from the anti-join, as before the table, and the
    owner's next look upgrades the index for everyone."""
    import psycopg

    schema = pg_server.fresh_schema()
    owner = PostgresStore(pg_server.url, schema)
    owner.ensure_schema(DIMS, "float32")
    for d in range(3):
        owner.replace_document(*_doc(f"d{d}.md", 3, [i == 0 for i in range(3)], d))
    _old_schema(owner)
    role = f"writer_{schema}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"create role {role} login".encode())
        conn.execute(f"grant create on database postgres to {role}".encode())
        conn.execute(f"grant usage on schema {schema} to {role}".encode())
        conn.execute(f"grant select, insert, update, delete on all tables in schema {schema} to {role}".encode())
        conn.execute(f"grant usage on all sequences in schema {schema} to {role}".encode())
    writer = PostgresStore(pg_server.url.replace("postgres@", f"{role}@"), schema)
    try:
        assert writer.pending_vector_count() == 6 and writer._pending_refused
        tries = []
        writer._add_pending = tries.append  # type: ignore[method-assign]
        # not tried again (each try holds the writers of chunks a moment)
        assert [p.chunk_id for p in writer.pending_vectors(100)] == _truth(owner) and not tries
        writer.replace_document(*_doc("d0.md", 2, [False, False], 9))
        assert writer.pending_vector_count() == 6  # 2 + 2 + 2
        assert owner.pending_vector_count() == 6 and owner._pending_state() == (True, True)
        # the writer's rows now move the table through the triggers, under the grants of chunks
        writer.replace_document(*_doc("d1.md", 3, [True, False, True], 10))
        writer.delete_document("d2.md")
        writer.store_vectors([(p, np.ones(DIMS, np.float32)) for p in writer.pending_vectors(1)])
        assert _agree([owner, writer]) == 2 + 1 + 0 - 1
    finally:
        writer.close()
        owner.close()
