"""PostgreSQL specifics the shared port suite does not cover: configuration, and that
the URL's password never shows (location, errors, settings repr)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kb_fakes import make_workspace
from pg_server import PgServer

from local_vector_search_mcp.config import CliOptions, ConfigError, load_settings
from local_vector_search_mcp.errors import IndexNotReady
from local_vector_search_mcp.index.pg_rank import plan
from local_vector_search_mcp.index.postgres import PostgresStore, safe_location, tsvector_literal
from local_vector_search_mcp.index.query import AllOf, AnyOf, CjkRun, LexicalQuery, Phrase, Prefix, Term

ENV = "LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL"
SECRET_URL = "postgresql://kb:s3cr3t-pw@db.example:6543/knowledge"


def _settings(tmp_path: Path, storage: dict[str, object], environ: dict[str, str]):  # type: ignore[no-untyped-def]
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({"storage": storage}), encoding="utf-8")
    return load_settings(CliOptions(root=".", config=str(config)), cwd=tmp_path, environ=environ)


def test_the_url_comes_from_the_environment_and_never_shows(tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"backend": "postgresql", "schema": "team_docs"}, {ENV: SECRET_URL})
    assert settings.database_url == SECRET_URL and "s3cr3t" not in repr(settings)
    store = make_workspace(tmp_path, storage__backend="postgresql", storage__url=SECRET_URL).store
    assert store.location == "postgresql://db.example:6543/knowledge#local_vector_search_mcp"
    assert safe_location(SECRET_URL, "team_docs").endswith("#team_docs")


def test_configuration_mistakes_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=ENV):
        _settings(tmp_path, {"backend": "postgresql"}, {})
    with pytest.raises(ConfigError) as bad_scheme:
        _settings(tmp_path, {"backend": "postgresql", "url": "mysql://u:s3cr3t-pw@h/d"}, {})
    assert "s3cr3t" not in str(bad_scheme.value)
    with pytest.raises(ConfigError):
        _settings(tmp_path, {"backend": "postgresql", "url": SECRET_URL, "schema": "Bad-Name"}, {})
    assert _settings(tmp_path, {}, {ENV: SECRET_URL}).database_url is None  # SQLite ignores it


def test_a_refused_connection_names_the_server_but_not_the_password() -> None:
    store = PostgresStore("postgresql://kb:s3cr3t-pw@127.0.0.1:1/knowledge", "kb")
    with pytest.raises(IndexNotReady) as refused:
        store.counts()
    assert "127.0.0.1:1/knowledge" in str(refused.value) and "s3cr3t" not in str(refused.value)
    assert refused.value.__cause__ is None  # psycopg's message (which may echo the URL) is not chained


def grouped(literal: str) -> str:
    """A tsvector literal with each lexeme's entries merged, in order of first appearance (the
    adapter lists one entry per token; PostgreSQL merges them the same way on input)."""
    merged: dict[str, list[str]] = {}
    for lexeme, positions in re.findall(r"('(?:[^']|'')*'):(\S+)", literal):
        merged.setdefault(lexeme, []).extend(positions.split(","))
    return " ".join(f"{lexeme}:{','.join(ps)}" for lexeme, ps in merged.items())


def test_text_is_tokenized_by_the_adapter_not_the_server() -> None:
    assert grouped(tsvector_literal("Use Rc::strong_count", "Rc")) == (
        "'rc':2A,5B 'use':4B 'strong':6B 'count':7B '~use':4C '~strong':5C '~count':6C"
    )  # English words also give their stem (weight C, marked "~"), as the SQLite stems table holds them
    # FTS5's unicode61 tokens (remove_diacritics 2): diacritics folded, a combining mark dropped
    # (and café's stem is its folded form's, decision 1192)
    assert grouped(tsvector_literal("Un café, n\u0308o x²", None)) == "'un':3B 'cafe':4B 'no':5B 'x²':6B '~cafe':3C"

    def atoms(query: LexicalQuery) -> list[str]:
        return [a.tsquery for a in plan(query, None).atoms()]

    assert atoms(Term("Rc::strong_count")) == ["'rc' <-> 'strong' <-> 'count'"]
    assert atoms(Term("Installing")) == ["'installing'", "'~instal'"]  # the word, and its stem apart
    assert atoms(AnyOf((Prefix("Inst"), Phrase(("a", "b"))))) == ["'inst':*", "'a' <-> 'b'"]
    assert plan(AllOf((CjkRun("東京都"), Term("--"))), None).atoms() == []  # an empty leaf matches nothing
    assert atoms(AnyOf((CjkRun("東京都"), Term("--")), row_budget=1)) == ["'東京'", "'京都'"]
    # the rows to fetch: a phrase whose word is an atom of its own adds none (and needs a recheck)
    assert plan(AnyOf((Term("quick"), Phrase(("quick", "fox")))), 10).where() == "((('quick'))) | ((('~quick')))"
    assert plan(AnyOf((Term("brown"), Phrase(("quick", "fox")))), 10).where() == (
        "((('brown') | ('quick' <-> 'fox'))) | ((('~brown')))"
    )
    # row budgets (fts5._within_budget): the rarest first; the stems' may keep nothing
    both = plan(AnyOf((Term("common"), Term("rare")), row_budget=50, keep_at_least=1), 50)
    counts = {"common": 60, "rare": 5}.__getitem__
    assert both.priced_tokens(100) == ["common", "rare"] and both.priced_tokens(25) == []  # 2 x 25 <= 50
    assert [a.tsquery for a in both.cut(counts).atoms()] == ["'rare'", "'~rare'"]
    one = plan(AnyOf((Term("common"), Phrase(("a", "b"))), row_budget=50, keep_at_least=2), 50)
    assert one.cut(lambda token: 60).stems is None and len(one.cut(lambda token: 60).atoms()) == 2
    assert grouped(tsvector_literal("it's", None)) == "'it':3B 's':4B"


def test_a_workspace_indexes_and_searches_on_postgresql(tmp_path: Path, pg_server: PgServer) -> None:
    (tmp_path / "guide.md").write_text("# Install\n\nInstall the tool with pip.\n", encoding="utf-8")
    schema = pg_server.fresh_schema()
    ws = make_workspace(tmp_path, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=schema)
    try:
        assert ws.store.location.endswith(f"#{schema}")
        ws.store.ensure_schema(None, "float32")
        assert ws.store.exists() and ws.store.counts().documents == 0
    finally:
        ws.store.close()


def test_every_session_gives_up_on_a_silent_server(tmp_path: Path, pg_server: PgServer) -> None:
    """Decision 998: a PostgreSQL that stops answering held a call for as long as the kernel's
    TCP defaults (about 15 minutes with a query sent, 2 hours idle); every session now carries
    keepalives and a TCP user timeout, so a cut network ends the call in about 30 s."""
    schema = pg_server.fresh_schema()
    ws = make_workspace(tmp_path, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=schema)
    try:
        ws.store.ensure_schema(None, "float32")
        parameters = ws.store._conn().info.get_parameters()  # type: ignore[attr-defined]
        assert parameters["keepalives_idle"] == "10" and parameters["keepalives_count"] == "3"
        assert parameters["tcp_user_timeout"] == "30000" and parameters["connect_timeout"] == "10"
    finally:
        ws.store.close()


def test_a_reindex_analyzes_only_when_autovacuum_would(tmp_path: Path, pg_server: PgServer) -> None:
    """Decision 567: the planner statistics of ``chunks`` are made after a reindex that wrote a
    new index or changed more rows than autovacuum waits for, not after one that rewrote a file."""
    for i in range(60):
        (tmp_path / f"n{i:02}.md").write_text(f"# Note {i}\n\nBody of note {i}.\n", encoding="utf-8")
    ws = make_workspace(
        tmp_path, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=pg_server.fresh_schema()
    )

    def analyzed() -> int:
        conn = ws.store._conn()
        conn.execute("select pg_stat_force_next_flush()")  # this session's writes into the view now
        row = conn.execute("select analyze_count from pg_stat_user_tables where relid = 'chunks'::regclass").fetchone()
        return int(row[0]) if row else 0

    try:
        assert ws.indexing.reindex("changed", False).indexed_files == 60
        first = analyzed()
        assert first >= 1  # a new index: analyzed at once
        (tmp_path / "n00.md").write_text("# Note 0\n\nEdited.\n", encoding="utf-8")
        assert ws.indexing.reindex("changed", False).indexed_files == 1
        assert analyzed() == first  # 2 rows changed: left to autovacuum
        for i in range(60):
            (tmp_path / f"n{i:02}.md").write_text(f"# Note {i}\n\nRewritten {i}.\n", encoding="utf-8")
        analyzed()  # the rewrites below counted in the view before the reindex looks
        assert ws.indexing.reindex("changed", False).indexed_files == 60
        assert analyzed() == first + 1  # 120 rows changed of 60: analyzed again
    finally:
        ws.store.close()


def test_one_pass_at_a_time_across_servers_and_a_killed_holder_releases(pg_server: PgServer) -> None:
    import os
    import signal
    import subprocess
    import sys

    schema = pg_server.fresh_schema()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from local_vector_search_mcp.index.postgres import PostgresStore\n"
            "with PostgresStore(sys.argv[1], sys.argv[2]).exclusive_pass('reindex', wait=True):\n"
            "    print('held', flush=True); time.sleep(600)\n",
            pg_server.url,
            schema,
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        other = PostgresStore(pg_server.url, schema)
        with other.exclusive_pass("reindex", wait=False) as held:
            assert held is False  # another server's reindex is running
        with other.exclusive_pass("embedding", wait=False) as held:
            assert held is True  # locks are per pass
        os.kill(holder.pid, signal.SIGKILL)  # the reindexer dies mid-pass
        holder.wait(30)
        import time

        deadline = time.monotonic() + 30
        while True:  # the server notices the dropped connection and releases its lock
            with other.exclusive_pass("reindex", wait=False) as held:
                if held or time.monotonic() > deadline:
                    break
            time.sleep(0.1)
        assert held is True
        other.close()
    finally:
        holder.kill()
        holder.wait(30)


def test_a_document_rewritten_by_two_servers_at_once_stays_one_document(pg_server: PgServer) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord

    schema = pg_server.fresh_schema()
    stores = [PostgresStore(pg_server.url, schema) for _ in range(2)]
    stores[0].ensure_schema(None, "float32")

    def write(i: int) -> None:
        store = stores[i % 2]
        chunks = [ChunkRecord(n, f"p{n}", f"p{n}~a~b", f"revision {i} part {n}", None, f"h{i}{n}") for n in range(5)]
        store.replace_document(DocumentRecord("a.md", f"{i:064d}", 1, 1, "2026-12-01T00:00:00.000Z"), chunks)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(40)))
    counts = stores[1].counts()
    assert (counts.documents, counts.chunks) == (1, 5)
    for store in stores:
        store.close()


def test_two_servers_writing_the_manifest_at_once_both_succeed(pg_server: PgServer) -> None:
    """Both servers of a shared index start a reindex together: each replaces the manifest."""
    from concurrent.futures import ThreadPoolExecutor

    schema = pg_server.fresh_schema()
    stores = [PostgresStore(pg_server.url, schema) for _ in range(2)]
    stores[0].ensure_schema(None, "float32")
    manifest = {f"key{k}": "v" for k in range(20)}

    def write(i: int) -> None:
        stores[i % 2].write_manifest({**manifest, "writer": str(i)})

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(60)))  # a unique violation would raise here
    assert len(stores[1].read_manifest()) == 21
    for store in stores:
        store.close()


def test_filters_and_scopes_run_in_sql_before_the_limit(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14 item 2 / issue 16 item 3: the database evaluates path globs and chunk filters, so
    only the rows they admit come back (a filter applied to rows after the limit, or in Python
    over every row, would read the 40 nearer chunks first)."""
    import numpy as np

    from local_vector_search_mcp.index.chunks import ChunkFilterSpec
    from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord
    from local_vector_search_mcp.index.query import PathScope

    store = PostgresStore(pg_server.url, pg_server.fresh_schema())
    store.ensure_schema(4, "float32")
    store.write_manifest({"embedding_dimensions": "4"})
    near, far = np.array([1, 0, 0, 0], np.float32), np.array([0.2, 1, 0, 0], np.float32)
    for i in range(41):
        path = "wanted/x.md" if i == 40 else f"other/{i:02}.md"
        props = {"tags": ["w"], "status": "ok"} if i == 40 else {"tags": ["o"]}
        record = DocumentRecord(path, "s" * 64, 1, 1, "2026-12-01T00:00:00.000Z", props)
        store.replace_document(
            record, [ChunkRecord(0, "p0", "p0~a~b", "needle", None, f"h{i}", far if i == 40 else near)]
        )
    converted: list[object] = []
    original = PostgresStore._md
    monkeypatch.setattr(PostgresStore, "_md", staticmethod(lambda row, v: converted.append(row) or original(row, v)))
    for spec in (
        ChunkFilterSpec(path_prefix="WANTED"),
        ChunkFilterSpec(path_globs=("w*/**",)),
        ChunkFilterSpec(tags=("w",)),
        ChunkFilterSpec(metadata=(("status", "ok"),)),
    ):
        converted.clear()
        assert [c.id for c, _ in store.nearest_chunks(near, 1, spec)] == ["md:wanted/x.md#0"], spec
        assert len(converted) == 1, spec
    fetched: list[str] = []
    rows = store._rows
    monkeypatch.setattr(store, "_rows", lambda q, p=(): fetched.append(q) or rows(q, p))
    assert [h.path for h in store.semantic(near, 1, PathScope(("WANTED/**",)))] == ["wanted/x.md"]
    assert [h.path for h in store.lexical(Term("needle"), 1, PathScope(("**",), ("other/**",)))] == ["wanted/x.md"]
    assert sum("~ any(cast(%(inc)s" in q for q in fetched) == 2  # each scope became a regular-expression match in SQL
    store.close()


def _other_server_holds(pg_server: PgServer, statement: str, schema: str):  # type: ignore[no-untyped-def]
    """A second server's write of the chunk ``x``, sent but not committed: it holds the row."""
    import psycopg
    from psycopg import sql

    other = psycopg.connect(pg_server.url)
    other.execute(sql.SQL(statement).format(sql.Identifier(schema)))
    return other


def _update_waiting_for_the_row(control, deadline: float, opening: str = "update external_chunks") -> None:  # type: ignore[no-untyped-def]
    """Until one statement beginning ``opening`` waits for a lock (the other server's row)."""
    import time

    waiting = "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and query like %s"
    while control.execute(waiting, (opening + "%",)).fetchone() != (1,):
        assert time.monotonic() < deadline, f"{opening} never waited for the other server's row"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("delete from {}.external_chunks where id = 'x'", None),
        ("update {}.external_chunks set metadata = '{{\"owner\": \"b\"}}' where id = 'x'", {"owner": "b"}),
    ],
    ids=["a delete", "an update of other fields"],
)
def test_an_update_waits_for_another_servers_write_of_the_row_and_builds_on_it(
    pg_server: PgServer, statement: str, expected: dict[str, str] | None
) -> None:
    """Decision 780, across servers of one schema: update_chunk's one statement waits for the
    other server's uncommitted write of the row, then applies to the row as that write left it
    (READ COMMITTED re-reads it): a deleted chunk stays deleted, another field's change is kept."""
    import threading
    import time

    import numpy as np
    import psycopg

    from local_vector_search_mcp.index.chunks import ExternalChunk

    schema = pg_server.fresh_schema()
    store = PostgresStore(pg_server.url, schema)
    store.ensure_schema(None, "float32")
    store.put_external(ExternalChunk("x", "external", "a.txt", 0, "old", {"owner": "a"}, np.ones(4, np.float32) / 2))
    other = _other_server_holds(pg_server, statement, schema)
    control = psycopg.connect(pg_server.url, autocommit=True)
    outcome: list[object] = []
    updating = threading.Thread(target=lambda: outcome.append(store.update_external("x", "new", None, None)))
    try:
        updating.start()
        _update_waiting_for_the_row(control, time.monotonic() + 30)
        other.commit()
        updating.join(30)
    finally:
        other.close()
        control.close()
    assert not updating.is_alive() and len(outcome) == 1
    stored = store.external_chunk("x")
    if expected is None:
        assert outcome == [None] and stored is None
    else:
        assert stored is not None and (stored.content, stored.metadata, stored.stale) == ("new", expected, True)
    store.close()


@pytest.mark.parametrize(("collection", "refused"), [("c2", True), (None, False)], ids=["another", "none named"])
def test_an_upsert_waits_for_another_servers_insert_of_the_id_and_keeps_its_collection(
    pg_server: PgServer, collection: str | None, refused: bool
) -> None:
    """Decision 988, across servers of one schema: an upsert of an id another server is inserting
    waits for that insert, then is refused if it named another collection (it moved the chunk
    there), or replaces the chunk in the stored collection when it named none (it moved it to
    `external`); it is never told ``created``."""
    import threading
    import time

    import psycopg
    from test_store_port import _chunk_api

    from local_vector_search_mcp.errors import InvalidArgument

    schema = pg_server.fresh_schema()
    store = PostgresStore(pg_server.url, schema)
    store.ensure_schema(None, "float32")
    other = _other_server_holds(
        pg_server,
        "insert into {}.external_chunks (id, collection, source_path, chunk_index, content, metadata, embedding)"
        " values ('x', 'c1', 'a.txt', 0, 'A', '{{}}', '[0.5, 0.5, 0.5, 0.5]')",
        schema,
    )
    control = psycopg.connect(pg_server.url, autocommit=True)
    outcome: list[object] = []

    def upsert() -> None:
        try:
            outcome.append(_chunk_api(store).upsert("x", "b.txt", 1, "B", [0, 0, 0, 1], None, collection))
        except InvalidArgument as refusal:
            outcome.append(refusal.message)

    upserting = threading.Thread(target=upsert)
    try:
        upserting.start()
        _update_waiting_for_the_row(control, time.monotonic() + 30, "insert into external_chunks")
        other.commit()
        upserting.join(30)
    finally:
        other.close()
        control.close()
    assert not upserting.is_alive()
    stored = store.external_chunk("x")
    assert stored is not None and stored.collection == "c1"
    if refused:
        assert outcome == [
            "Chunk 'x' is in collection 'c1'; delete it first (delete_chunk) to move it to 'c2', "
            "or send collection 'c1'."
        ]
        assert stored.content == "A"
    else:
        assert outcome == [("x", False)] and stored.content == "B"
    store.close()
