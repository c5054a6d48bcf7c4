"""Which chunks of a PostgreSQL index still wait for a vector, kept by the database itself.

A chunk is pending exactly while it has no row in ``vectors`` (decision 150). Counting that
as an anti-join of ``chunks`` and ``vectors`` reads both tables whole: 80 ms at 100k chunks,
linear in the index, and every kb_search with an embedder asks it (decision 485). So the
answer is kept in a table of its own, ``pending_vectors`` (one row per pending chunk),
whose size is the number of chunks pending, nearly always none.

Triggers keep it, not the adapter's writes: every process writing the schema (another server,
one of an older release, a bulk ``COPY``) moves it in the same transaction as the rows it
writes, so the count is exact and live for every server sharing the index (decision 152):

- chunks inserted: the ones without a vector become pending (a statement that inserts the
  vector with its chunk leaves none);
- chunks deleted: they stop being pending;
- vectors inserted: their chunks stop being pending.

Vectors are never deleted on their own (their chunk's deletion takes them, and a reset drops
the tables), so no trigger watches that. Statement triggers with transition tables: one
call per statement, whatever its rows (a ``COPY`` of 50,000 chunks is one insert here).

The machinery comes with the ``vectors`` table; an index written before it (or whose triggers
a server of an older release dropped with ``chunks``) gets it on the next look, filled by the
anti-join once, under locks that hold writers of ``chunks`` and ``vectors`` meanwhile.
"""

from __future__ import annotations

import re

__all__ = ["TRIGGERS", "ddl", "fill", "grant", "grants", "lock", "state_query"]

# (trigger, table, event, transition table) of the machinery; all present = ready
TRIGGERS = (
    ("lvsm_pending_chunks_added", "chunks", "insert", "new table as added"),
    ("lvsm_pending_chunks_deleted", "chunks", "delete", "old table as deleted"),
    ("lvsm_pending_vectors_added", "vectors", "insert", "new table as added"),
)

_BODIES = {
    # inserted chunks without a vector (one inserted by the same statement counts as there)
    "lvsm_pending_chunks_added": "insert into {s}.pending_vectors (chunk_id) select a.id from added a"
    " where not exists (select 1 from {s}.vectors v where v.chunk_id = a.id)",
    "lvsm_pending_chunks_deleted": "delete from {s}.pending_vectors p using deleted d where p.chunk_id = d.id",
    "lvsm_pending_vectors_added": "delete from {s}.pending_vectors p using added a where p.chunk_id = a.chunk_id",
}


def _quoted(schema: str) -> str:
    return '"' + schema.replace('"', '""') + '"'


def ddl(schema: str) -> bytes:
    """The table, its trigger functions and triggers, made anew (an older table's rows are
    dropped: :func:`fill` gives the true ones). Run in the caller's transaction, after
    :func:`lock`; names are schema-qualified, so the triggers work whatever the writing
    session's ``search_path``."""
    s = _quoted(schema)
    parts = [
        f"drop table if exists {s}.pending_vectors",
        f"create table {s}.pending_vectors (chunk_id bigint primary key)",
    ]
    for name, table, event, transition in TRIGGERS:
        body = _BODIES[name].format(s=s)
        parts += [
            f"create or replace function {s}.{name}() returns trigger language plpgsql as"
            f" $$ begin {body}; return null; end $$",
            f"drop trigger if exists {name} on {s}.{table}",
            f"create trigger {name} after {event} on {s}.{table} referencing {transition}"
            f" for each statement execute function {s}.{name}()",
        ]
    return "; ".join(parts).encode()


# what a role may do on ``chunks`` it may do on the pending table: the triggers run as the role
# writing the chunks, and a reader counts it (roles granted rows but not the tables' ownership).
# The privileges are the server's own words (``aclexplode``: SELECT ... MAINTAIN), one keyword each.
_PRIVILEGE = re.compile(r"[A-Z]+")


def grants(schema: str) -> tuple[bytes, tuple[str]]:
    """(privilege, grantee role or ``None`` for PUBLIC) of every grant on ``chunks``."""
    return (
        b"select a.privilege_type, r.rolname from aclexplode((select relacl from pg_class where oid = to_regclass(%s)))"
        b" a left join pg_roles r on r.oid = a.grantee order by 2, 1",
        (f"{_quoted(schema)}.chunks",),
    )


def grant(schema: str, privilege: str, role: str | None) -> bytes:
    """The GRANT of one of :func:`grants`' rows on the pending table."""
    if not _PRIVILEGE.fullmatch(privilege):
        raise ValueError(f"unexpected privilege {privilege!r}")
    grantee = "public" if role is None else _quoted(role)
    return f"grant {privilege} on {_quoted(schema)}.pending_vectors to {grantee}".encode()


def lock(schema: str) -> bytes:
    """Writers of chunks and vectors wait until the caller commits (and the caller for the ones
    in flight), so no row is written between the fill and the triggers."""
    s = _quoted(schema)
    return f"lock table {s}.chunks, {s}.vectors in share row exclusive mode".encode()


def fill(schema: str) -> bytes:
    """The pending chunks by the anti-join, once (after :func:`ddl`, under :func:`lock`)."""
    s = _quoted(schema)
    return (
        f"insert into {s}.pending_vectors (chunk_id) select c.id from {s}.chunks c"
        f" where not exists (select 1 from {s}.vectors v where v.chunk_id = c.id)"
    ).encode()


def state_query(schema: str) -> tuple[bytes, tuple[object, ...]]:
    """One catalog look: whether ``vectors`` exists, and whether the pending table and every
    trigger of it do (enabled)."""
    s = _quoted(schema)
    query = (
        b"select to_regclass(%s) is not null, to_regclass(%s) is not null and (select count(*) from pg_trigger"
        b" where tgrelid in (to_regclass(%s), to_regclass(%s)) and tgname = any(%s) and tgenabled <> 'D') = %s"
    )
    names = [name for name, *_ in TRIGGERS]
    return query, (f"{s}.vectors", f"{s}.pending_vectors", f"{s}.chunks", f"{s}.vectors", names, len(names))
