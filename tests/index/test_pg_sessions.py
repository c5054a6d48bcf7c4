"""A running server on PostgreSQL whose sessions or tables go away under it (decision 499):
sessions ended by the server (pg_terminate_backend, as a restart does) are reopened by the next
call, and a dropped schema is INDEX_NOT_READY, then built again by the server's next call."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest
from kb_fakes import make_workspace
from pg_server import PgServer

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.errors import IndexNotReady
from local_vector_search_mcp.workspace import Workspace


def _serving(root: Path, pg_server: PgServer, schema: str) -> Workspace:
    for i in range(20):
        (root / f"d{i}.md").write_text(f"# Doc {i}\n\nword{i} and some filler\n", "utf-8")
    ws = make_workspace(root, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=schema)
    ws.start_serving()
    ws.indexing.reindex()
    # A server's first tool call starts its catch-up in a thread (decision 205). Left to the
    # test's first search, it compared the files only after the test had dropped the schema,
    # found the tables gone and had the next call start the rebuild: that search then read
    # "being built" instead of the dropped schema's message (1 run in 3). Done here, first.
    ws.catch_up_once()
    ws.indexing.wait_catch_up(60)
    return ws


def _search(ws: Workspace, query: str) -> list[str]:
    found = dispatch.invoke(ws, "kb_search", {"request": {"query": query, "mode": "lexical"}})
    assert isinstance(found, dict)
    return [hit["path"] for hit in found["results"]]


def _terminate_sessions(pg_server: PgServer) -> int:
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        rows = conn.execute(
            "select pg_terminate_backend(pid) from pg_stat_activity"
            " where pid <> pg_backend_pid() and backend_type = 'client backend'"
        ).fetchall()
    return len(rows)


def test_sessions_ended_by_the_server_are_reopened_by_the_next_call(tmp_path: Path, pg_server: PgServer) -> None:
    ws = _serving(tmp_path, pg_server, pg_server.fresh_schema())
    try:
        assert _search(ws, "word3") == ["d3.md"]
        answers: list[list[str]] = []
        other = threading.Thread(target=lambda: answers.append(_search(ws, "word4")))  # a second session
        other.start()
        other.join()
        assert _terminate_sessions(pg_server) >= 2
        assert _search(ws, "word3") == ["d3.md"]  # was AdminShutdown, INTERNAL_ERROR on the wire
        status = dispatch.invoke(ws, "kb_status", None)
        assert isinstance(status, dict) and status["project"]["documents"] == 20
        _terminate_sessions(pg_server)
        (tmp_path / "d3.md").write_text("# Doc 3\n\nword3 zebra\n", "utf-8")
        ws.indexing.reindex()  # the writer's session was ended too
        assert _search(ws, "zebra") == ["d3.md"]
    finally:
        ws.close()


def test_a_dropped_schema_is_index_not_ready_and_the_next_call_builds_it_again(
    tmp_path: Path, pg_server: PgServer
) -> None:
    schema = pg_server.fresh_schema()
    ws = _serving(tmp_path, pg_server, schema)
    try:
        assert _search(ws, "word3") == ["d3.md"]
        with psycopg.connect(pg_server.url, autocommit=True) as conn:
            conn.execute(f"drop schema {schema} cascade")
        with pytest.raises(IndexNotReady, match="kb_reindex"):  # was UndefinedTable on every call until a restart
            _search(ws, "word3")
        dispatch.invoke(ws, "kb_status", None)  # the next call starts the rebuild
        ws.indexing.wait_reindex(60)
        last = ws.activity.last
        assert last is not None and last.outcome == "succeeded"
        assert _search(ws, "word3") == ["d3.md"]
    finally:
        ws.close()
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        where = conn.execute(
            "select table_schema from information_schema.tables where table_name = 'manifest'"
            " and table_schema in (%s, 'public')",
            (schema,),
        ).fetchall()
    assert where == [(schema,)]  # built in its own schema again, never in public


def test_a_user_with_read_rights_searches_and_one_without_is_told_what_to_grant(
    tmp_path: Path, pg_server: PgServer
) -> None:
    """A reader of a team's index (usage and select granted by the owner) was refused at every
    call: preparing a session ran `create ... if not exists`, which needs the right to create.
    Writes it may not make, and a schema it may not use, are INDEX_NOT_READY saying what to grant."""
    schema = pg_server.fresh_schema()
    _serving(tmp_path, pg_server, schema).close()
    role = "reader_" + schema
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"create role {role} login")
    url = pg_server.url.replace("postgres@", f"{role}@")

    def workspace() -> Workspace:
        return make_workspace(tmp_path, storage__backend="postgresql", storage__url=url, storage__schema=schema)

    ws = workspace()
    try:
        with pytest.raises(IndexNotReady, match=f"permission denied for schema {schema}.*grant"):
            _search(ws, "word3")
        status = dispatch.invoke(ws, "kb_status", None)
        assert isinstance(status, dict) and "permission denied" in status["compatibility"]["problems"][0]
    finally:
        ws.close()
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"grant usage on schema {schema} to {role}")
        conn.execute(f"grant select on all tables in schema {schema} to {role}")
    ws = workspace()
    try:
        assert _search(ws, "word3") == ["d3.md"]
        (tmp_path / "d3.md").write_text("# Doc 3\n\nword3 zebra\n", "utf-8")
        with pytest.raises(IndexNotReady, match=r"may not do this.*grant"):
            ws.indexing.reindex()
        assert _search(ws, "word3") == ["d3.md"]
    finally:
        ws.close()


def _end_sessions_and_wait(pg_server: PgServer) -> None:
    """pg_terminate_backend only signals: wait until the sessions (and their locks) are gone."""
    import time

    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        pids = [
            row[0]
            for row in conn.execute(
                "select pid from pg_stat_activity where pid <> pg_backend_pid() and backend_type = 'client backend'"
            ).fetchall()
        ]
        conn.execute("select pg_terminate_backend(pid) from unnest(%s::int[]) as pid", (pids,))
        deadline = time.monotonic() + 30
        while conn.execute("select count(*) from pg_stat_activity where pid = any(%s)", (pids,)).fetchone() != (0,):
            assert time.monotonic() < deadline
            time.sleep(0.02)


def test_a_pass_whose_lock_session_was_ended_takes_the_lock_again_or_stops(pg_server: PgServer) -> None:
    """Decision 499 reopened the pass's own sessions but not the one holding its advisory lock, so
    after a restart a second reindexer ran alongside the first (decision 526)."""
    from local_vector_search_mcp.index.port import IndexUnavailable
    from local_vector_search_mcp.index.postgres import PostgresStore

    schema = pg_server.fresh_schema()
    first, second = PostgresStore(pg_server.url, schema), PostgresStore(pg_server.url, schema)
    try:
        first.has_vectors()
        with first.exclusive_pass("reindex", wait=True) as held:
            assert held
            _end_sessions_and_wait(pg_server)
            first.has_vectors()  # the pass goes on: its next call reconnects and takes its lock again
            with second.exclusive_pass("reindex", wait=False) as other:
                assert other is False  # was True: two reindexers at once
            with second.exclusive_pass("embedding", wait=False) as other:
                assert other is True  # locks stay per pass

        with first.exclusive_pass("reindex", wait=True) as held:
            assert held
            _end_sessions_and_wait(pg_server)
            with second.exclusive_pass("reindex", wait=False) as other:
                assert other is True  # another server came first: its pass goes on ...
                with pytest.raises(IndexUnavailable, match="another server has started that pass"):
                    first.has_vectors()  # ... and this one stops at its next call (went on before)
        first.has_vectors()  # calls outside a pass are served as before
    finally:
        first.close()
        second.close()
