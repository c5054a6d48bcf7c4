"""The PostgreSQL + pgvector adapter of the storage port (``storage.backend: postgresql``).

One knowledge base lives in one schema (``storage.schema``), so several share a
database. Every thread gets its own connection; a document's rows change in one
transaction, as on SQLite.

Lexical search uses PostgreSQL full-text search, but never its parser: the
adapter tokenizes chunks and queries itself with the SQLite side's own FTS5
tokenizer (``cjk.index_tokens``: unicode61 with diacritics folded, CJK runs as
bigrams; decision 311) and writes ``tsvector``/``tsquery`` literals directly. Index and query sides
therefore agree whatever locale the server runs with. The heading's tokens
carry weight A and the body's weight B; English stems (``stem.py``) ride along
as ``~stem`` lexemes of weight C. Matches are found by the GIN index and ranked
with FTS5's BM25 as the SQLite adapter ranks them (``pg_rank.py``, decision
310): heading hits count twice, stems form a second list at a quarter weight,
each chunk's token and stem counts are kept in ``chunks.ntok``/``nstem``.

Semantic search uses an HNSW index (cosine) with ``hnsw.ef_search`` raised and
iterative scans on, so a path scope filters before the limit instead of
starving it. How vectors are stored and compared per ``embedding.vectorStorage``
(float32, float16 as ``halfvec``, int8 codes in ``bytea``, binary) is
``pg_vectors.VectorLayout``.

The URL may carry a password: :attr:`PostgresStore.location` and every error
this module raises show host, port and database only.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import re
import select
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import numpy as np
import numpy.typing as npt
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from ..errors import IndexNotReady
from ..globs import posix_regex, posix_regex_literal
from . import pg_pending, pg_rank
from .chunks import (
    MARKDOWN,
    ChunkFilterSpec,
    ExternalChunk,
    OtherCollection,
    StoredChunk,
    markdown_chunk_id,
    markdown_metadata,
    unit,
)
from .cjk import index_tokens
from .coverage import COVERAGE_DEPTH, rerank, wants_coverage
from .fts5 import COMMON_TERM_MIN_CHUNKS, STEM_BUDGET, STEM_DEPTH, stem_counts, stem_prices
from .pg_batch import PipelinedBatch
from .pg_lexemes import chunk_lexemes, lexeme
from .pg_lexemes import quoted_lexeme as _lexeme
from .pg_vectors import MAX_EF_SEARCH, VectorLayout, to_numpy
from .port import (
    ChunkHit,
    ChunkRecord,
    DocumentDump,
    DocumentMeta,
    DocumentRecord,
    DocumentState,
    IndexUnavailable,
    LinkRecord,
    PendingChunk,
    RefusedChunk,
    StoreCounts,
    StoredLink,
    WriteBatch,
    normalize_tag,
    tag_prefixes,
    utc_now,
)
from .quantized import CENTRE_SAMPLE
from .query import LexicalQuery, PathScope

__all__ = ["EF_SEARCH", "PostgresStore", "safe_location"]

log = logging.getLogger(__name__)

# libpq's socket options for every session (decision 998): a server that stops answering (a network
# cut, a host gone) is given up after about 30 s, where the kernel's defaults held a call for about
# 15 minutes (a query sent) or 2 hours (an idle session). Keepalive probes are answered by the
# server's kernel even while a long query (an HNSW build) runs, so that is never cut.
CONNECT_OPTIONS: dict[str, Any] = {  # libpq conninfo keys, passed through to the connection string
    "connect_timeout": 10,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,  # ms: data sent and never acknowledged
}

EF_SEARCH = 400  # measured: recall@10 0.98 on hard synthetic 384-d data (0.79 at 100); decision 150
TOKENS_VERSION = "fts5-unicode61-1"  # lexical_meta: the tsvectors hold FTS5's tokens (decision 311)
FIRST_ROWS = 200  # chunks of the most valuable atoms fetched first, to set the MaxScore threshold (decision 455)
STATS_TTL = 2.0  # seconds the corpus totals of the ranking are reused (other servers' writes)
STEM_COUNTS_TTL = 60.0  # seconds the stems' prices are reused (_stem_counts)
# chunks changed since the last analyze before a reindex analyzes again: autovacuum's defaults
# (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor)
ANALYZE_BASE, ANALYZE_SHARE = 50, 0.1

# The term counts (``term_stats``: every lexeme's chunk count; searches read those above
# ``COMMON_TERM_MIN_CHUNKS``) are kept by every write while ``lexical_meta`` holds this key: each
# document's transaction moves the counts of its lexemes, so the table is at every commit what a
# full refresh would make (decision 610). A write that does not keep it deletes the key (an
# import), and the next refresh rebuilds the table in full and sets the key again.
_TERMS_KEPT = b"exists (select 1 from lexical_meta where key = 'term_stats' and value = 'every lexeme')"
# a document's lexemes and in how many of its chunks each is
_DOCUMENT_LEXEMES = (
    b"select u.lexeme, count(*) as n from chunks c, unnest(tsvector_to_array(c.tsv)) u(lexeme)"
    b" where c.doc_id = (select id from documents where path = %(path)s) group by u.lexeme"
)
# A document's write moves the counts by its new chunks' lexemes less its old chunks', only where
# they differ (an edit of a line moves a few counts, not every lexeme of the document twice). The
# old ones are noted before the delete in a setting of the transaction (no answer to wait for, no
# temporary table), then taken with the new ones once inserted. Without the key (a cold index)
# the gate is a one-time filter and no lexeme is read.
_OLD_TERMS = (
    b"select set_config('local_vector_search_mcp.old_lexemes', coalesce(array_agg(o.lexeme)::text, '{}'), true),"
    b" set_config('local_vector_search_mcp.old_counts', coalesce(array_agg(o.n)::text, '{}'), true)"
    b" from (" + _DOCUMENT_LEXEMES + b") o where " + _TERMS_KEPT
)
_COUNT_CHANGE = (
    b"with new as (" + _DOCUMENT_LEXEMES + b"),"
    b" old as (select * from unnest(cast(current_setting('local_vector_search_mcp.old_lexemes') as text[]),"
    b" cast(current_setting('local_vector_search_mcp.old_counts') as integer[])) o(lexeme, n)),"
    b" change as (select lexeme, sum(n) as n from (select lexeme, n from new union all"
    b" select lexeme, -n from old) x group by lexeme having sum(n) <> 0)"
    b" insert into term_stats (lexeme, ndoc) select lexeme, n from change where "
    + _TERMS_KEPT
    + b" on conflict (lexeme) do update set ndoc = term_stats.ndoc + excluded.ndoc"
)

# the writers of the snapshot take turns from their first count to their commit (a count of a
# lexeme then sees every committed write already counted, and none half-way); a table lock, not
# row locks, so nothing is taken in a different order by two of them
_TERMS_LOCK = b"lock table term_stats in share row exclusive mode"
# the pending chunk ids by their definition (decision 150), where the pending table cannot be added
_PENDING_SCAN = (
    "(select c.id as chunk_id from chunks c where not exists (select 1 from vectors v where v.chunk_id = c.id))"
)
_REFUSED_TABLE = (
    b"create table if not exists refused_vectors ("
    b"chunk_id bigint primary key references chunks(id) on delete cascade, reason text not null)"
)
_DERIVED = (
    "refused_vectors",
    "unreadable_files",
    "links",
    "doc_meta",
    "pending_vectors",
    "vectors",
    "vector_centre",
    "term_stats",
    "lexical_meta",
    "chunks",
    "documents",
    "manifest",
)


def safe_location(url: str, schema: str) -> str:
    """``postgresql://host:port/database#schema``: never the user's password."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = parts.port or 5432
    database = parts.path.lstrip("/") or "postgres"
    return f"postgresql://{host}:{port}/{database}#{schema}"


def _scrubbed(exc: psycopg.Error, url: str) -> str:
    """The driver's reason on one line, without the URL or its password (a malformed URL is
    echoed in the message)."""
    text = " ".join(str(exc).split())
    secrets = [url]
    with contextlib.suppress(ValueError):
        password = urlsplit(url).password
        if password:
            secrets += [password, unquote(password)]
    for secret in sorted(set(secrets), key=len, reverse=True):
        text = text.replace(secret, "***")
    text = text[:300] or type(exc).__name__
    return text if text.endswith((".", "?", "!")) else text + "."


def connect_failure(exc: psycopg.Error, url: str, location: str) -> IndexUnavailable:
    """A failed connection, with the server's reason and what to check (never the password)."""
    return IndexUnavailable(
        f"Cannot connect to PostgreSQL at {location}: {_scrubbed(exc, url)} Check storage.url or "
        "LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL (host, port, user, password, database) and that the "
        "server is running and reachable."
    )


def setup_failure(exc: psycopg.Error, url: str, location: str, schema: str) -> IndexNotReady:
    """The first connection could not prepare the database: say what is missing and who can add it."""
    reason = _scrubbed(exc, url)
    if isinstance(exc, psycopg.errors.FeatureNotSupported | psycopg.errors.UndefinedFile) or (
        "vector" in reason and "not available" in reason
    ):
        advice = (
            "The pgvector extension is not installed on that PostgreSQL server: install it there (e.g. the "
            "postgresql-NN-pgvector package of the PGDG apt repository, or the pgvector/pgvector Docker "
            "image), then start again."
        )
    elif isinstance(exc, psycopg.errors.InsufficientPrivilege):
        advice = (
            f"The user may not create the pgvector extension or the schema {schema!r}: have the database's "
            f"owner run `create extension if not exists vector; create schema if not exists {schema};` "
            "once (and grant this user rights on the schema), or connect as the owner."
        )
    else:
        advice = "The server's log has the details."
    return IndexNotReady(f"PostgreSQL at {location} could not be prepared for the index: {reason} {advice}")


@dataclass(frozen=True, slots=True)
class _TokenCounts:
    """Chunk counts of tokens for the row budgets (``counts``, the snapshot's for common ones) and
    the ones counted just now (``live``, by tsquery: exact, reused for the idf)."""

    counts: dict[str, int]
    live: dict[str, int]


def _any_of(atoms: Sequence[pg_rank.Atom], chosen: Collection[int], held: Collection[int]) -> str:
    """The tsquery of the rows holding one of the ``chosen`` atoms; a phrase one of whose tokens is
    an atom chosen or ``held`` is left out (its rows are that atom's: as :meth:`RankPlan.where`)."""
    single = {
        atoms[i].tsquery
        for i in (*chosen, *held)
        if len(atoms[i].tokens) == 1 and atoms[i].tsquery == _lexeme(atoms[i].tokens[0])
    }
    kept = [
        i
        for i in sorted(chosen)
        if not (len(atoms[i].tokens) > 1 and any(_lexeme(t) in single for t in atoms[i].tokens))
    ]
    return " | ".join(f"({atoms[i].tsquery})" for i in kept)


def plain_lexeme(tsquery: str) -> str | None:
    """The lexeme a tsquery of one plain lexeme (as :func:`_lexeme` writes it) matches; ``None``
    for anything else (a phrase, a prefix, a weight): what ``term_stats`` can count."""
    if len(tsquery) < 2 or tsquery[0] != "'" or tsquery[-1] != "'":
        return None
    word = re.sub(r"''|\\\\", lambda m: m.group(0)[0], tsquery[1:-1])
    return word if word and _lexeme(word) == tsquery else None


def tsvector_literal(text: str, heading: str | None) -> str:
    """The chunk's tsvector as text (``pg_lexemes.chunk_lexemes``): heading tokens (weight A),
    body tokens (weight B), the tokens of the SQLite adapter's FTS5 index; each part's stems as
    ``~stem`` (weight C)."""
    return chunk_lexemes(text, heading)[0]


def jsonb_text(value: Any) -> str:
    """``value`` as JSON for a jsonb column, keeping a float a float (decision 733): jsonb stores
    numbers as numeric and prints a whole one without exponent or fraction, so ``1e+20`` came
    back as the integer 100000000000000000000. Such a float is written ``100000000000000000000.0``
    (the fraction's scale is kept, so it is read back as the same float); the rest as json.dumps."""
    if isinstance(value, float) and value.is_integer() and "e" in repr(value):
        return f"{int(value)}.0"
    if isinstance(value, dict):
        # keys as json.dumps writes them (front matter may have `1:` or `true:` keys)
        keys = [k if isinstance(k, str) else next(iter(json.loads(json.dumps({k: 0})))) for k in value]
        return (
            "{"
            + ", ".join(f"{json.dumps(k)}: {jsonb_text(v)}" for k, v in zip(keys, value.values(), strict=True))
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ", ".join(jsonb_text(v) for v in value) + "]"
    return json.dumps(value)


def _json_alternatives(value: Any) -> list[str]:
    """JSON texts equal to ``value`` the way Python compares (``True == 1 == 1.0``); jsonb compares
    numbers by value already (``1 = 1.0``) but never a boolean with a number. Written as the stored
    values are (``jsonb_text``, decision 987): a whole float past 1e16 as its exact digits, since
    json.dumps's ``1e+23`` is read as exactly 10^23, which neither the stored 1e23 nor 2^63 equals."""
    alternatives = [value]
    if isinstance(value, bool):
        alternatives.append(int(value))
    elif isinstance(value, int | float) and value in (0, 1):
        alternatives.append(bool(value))
    return [jsonb_text(v) for v in alternatives]


def chunk_filter_sql(spec: ChunkFilterSpec, path: str, fields: str, utf8: bool = True) -> tuple[str, dict[str, Any]]:
    """``spec``'s path, tag and metadata conditions as `` and ...`` clauses over the text column
    ``path`` and the jsonb column ``fields``; the rows ``ChunkFilterSpec.path_ok`` and ``fields_ok``
    admit (tags as ``chunks._tags`` reads them: a string or the scalars of a list). Globs and the
    prefix compare the path in NFC (``nfc_sql``, decisions 529 and 1100)."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if spec.prefixes:
        clauses.append(f"{nfc_sql(path, utf8)} ~ %(prefix)s")
        params["prefix"] = "^(?:" + "|".join(posix_regex_literal(p) for p in spec.prefixes) + ")(?:/.*)?$"
    if spec.path_globs:
        clauses.append(f"{nfc_sql(path, utf8)} ~ any(cast(%(globs)s as text[]))")
        params["globs"] = [posix_regex(g, "filter.pathGlobs") for g in spec.path_globs]
    if spec.tags:
        tags = f"{fields} -> 'tags'"
        clauses.append(
            f"cast(%(tags)s as text[]) <@ (case jsonb_typeof({tags}) when 'string' then array[{fields} ->> 'tags']"
            f" when 'array' then array(select case jsonb_typeof(t) when 'boolean' then initcap(t #>> '{{}}')"
            f" else t #>> '{{}}' end from jsonb_array_elements({tags}) t"
            " where jsonb_typeof(t) in ('string', 'number', 'boolean')) else array[]::text[] end)"
        )
        params["tags"] = list(spec.tags)
    for i, (key, value) in enumerate(spec.metadata):
        clauses.append(f"coalesce({fields} -> %(mk{i})s, 'null'::jsonb) = any(cast(%(mv{i})s as jsonb[]))")
        params[f"mk{i}"] = key
        params[f"mv{i}"] = _json_alternatives(value)
    return "".join(f" and {c}" for c in clauses), params


def nfc_sql(column: str, utf8: bool) -> str:
    """``column`` in NFC, as globs compare paths (``globs.nfc``, decision 529). An ASCII path (as
    many bytes as characters) skips ``normalize``, which doubled a glob's scan of 20,000 paths;
    it needs a UTF8 database, and in another encoding a path is compared as stored."""
    if not utf8:
        return column
    return f"(case when octet_length({column}) = char_length({column}) then {column} else normalize({column}, NFC) end)"


class PostgresStore:
    def __init__(self, url: str, schema: str = "local_vector_search_mcp") -> None:
        self._url = url
        self._schema = schema
        self._location = safe_location(url, schema)
        self._local = threading.local()
        self._connections: list[psycopg.Connection[Any]] = []
        self._lock = threading.RLock()
        self._ready = False
        self._layout_cache: VectorLayout | None = None
        self._centre_settled = False  # no recentring to look for (not binary, or the centre is fixed)
        self._stats_cache: tuple[float, pg_rank.CorpusStats] | None = None
        self._stem_counts_cache: tuple[float, dict[str, int]] | None = None
        self._lengths_ready = False
        self._pending_refused = False  # this user may not add the pending table (logged once)
        self._schema_losses = 0  # our schema or tables found dropped under the store (decision 499)

    @property
    def location(self) -> str:
        return self._location

    # sessions ------------------------------------------------------------------
    def _conn(self) -> psycopg.Connection[Any]:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None and not conn.closed:
            return conn
        conn = self._connect()
        self._local.conn = conn
        return conn

    def _connect(self) -> psycopg.Connection[Any]:
        """A new session for this thread, set up (closed by :meth:`close`)."""
        try:
            conn = psycopg.connect(self._url, autocommit=True, **CONNECT_OPTIONS)
        except psycopg.Error as exc:
            raise connect_failure(exc, self._url, self._location) from None
        try:
            with conn.transaction(), conn.cursor() as cur:
                self._ddl_lock(cur)
                cur.execute("create extension if not exists vector")
                cur.execute(sql.SQL("create schema if not exists {}").format(sql.Identifier(self._schema)))
        except psycopg.Error as exc:
            # `create ... if not exists` needs the right to create even when both exist: a user the
            # owner granted only rights on the schema (a reader of a team's index) was refused
            if not (isinstance(exc, psycopg.errors.InsufficientPrivilege) and self._prepared(conn)):
                conn.close()
                raise setup_failure(exc, self._url, self._location, self._schema) from None
        conn.execute(sql.SQL("set search_path to {}, public").format(sql.Identifier(self._schema)))
        register_vector(conn)
        with self._lock:
            self._connections.append(conn)
        return conn

    def _batch_session(self) -> psycopg.Connection[Any]:
        """A write batch's session, closed by the batch. Lighter than :meth:`_connect`: the batch
        sends a document only once this thread's session has found the index's tables (so the
        extension and the schema exist), and never a vector (a document with vectors is written
        on the thread's session), so it needs the search path only, not the set-up's four round
        trips nor the vector type's look-up (decision 720)."""
        try:
            conn = psycopg.connect(self._url, autocommit=True, **CONNECT_OPTIONS)
        except psycopg.Error as exc:
            raise connect_failure(exc, self._url, self._location) from None
        try:
            conn.execute(sql.SQL("set search_path to {}, public").format(sql.Identifier(self._schema)))
        except BaseException:
            conn.close()
            raise
        return conn

    def _utf8(self) -> bool:
        """Whether the database holds UTF-8 text (read from the session's start-up parameters:
        no round trip)."""
        return self._conn().info.parameter_status("server_encoding") == "UTF8"

    def _prepared(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether the extension and the schema exist already (decision 499)."""
        try:
            row = conn.execute(
                b"select exists(select 1 from pg_extension where extname = 'vector')"
                b" and to_regnamespace(%s) is not null",
                (sql.Identifier(self._schema).as_string(conn),),
            ).fetchone()
        except psycopg.Error:
            return False
        return bool(row and row[0])

    @staticmethod
    def _ddl_lock(cur: psycopg.Cursor[Any]) -> None:
        """Servers starting together must not race on ``create ... if not exists`` (it is not
        atomic in PostgreSQL): schema changes take one database-wide transaction lock."""
        cur.execute(b"select pg_advisory_xact_lock(hashtextextended('local-vector-search-mcp:ddl', 0))")

    def _rows(self, query: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        with self._conn().cursor() as cur:
            cur.execute(query.encode(), params)
            return cur.fetchall() if cur.description else []

    def _table_exists(self, name: str) -> bool:
        """From the catalog itself (``information_schema.tables`` costs a millisecond a call, and
        :meth:`has_vectors` is asked twice per search)."""
        rows = self._rows(
            "select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace"
            " where n.nspname = %s and c.relname = %s and c.relkind in ('r', 'p', 'v', 'f')",
            (self._schema, name),
        )
        return bool(rows)

    # lifecycle and manifest -------------------------------------------------
    def exists(self) -> bool:
        if not self._ready:
            self._ready = self._table_exists("manifest")
        return self._ready

    def ensure_schema(self, vector_dimensions: int | None, vector_storage: str) -> None:
        with self._lock, self._conn().transaction():
            self._create(vector_dimensions, vector_storage)

    def _create(self, dims: int | None, storage: str = "float32") -> None:
        """Create what is missing; always inside the caller's transaction."""
        conn = self._conn()
        with conn.cursor() as cur:
            self._ddl_lock(cur)
        conn.execute(
            b"""
            create table if not exists manifest (key text primary key, value text not null);
            create table if not exists documents (
                id bigserial primary key, path text not null unique, source_hash text not null,
                size bigint not null, mtime_ns bigint not null, indexed_at_utc text not null, properties jsonb);
            create table if not exists chunks (
                id bigserial primary key, doc_id bigint not null references documents(id) on delete cascade,
                ordinal integer not null, pointer text not null, anchor text not null, text text not null,
                heading_path text, embedding_text_hash text not null, tsv tsvector not null,
                ntok integer, nstem integer, unique (doc_id, ordinal));
            create index if not exists chunks_tsv on chunks using gin (tsv);
            create table if not exists links (
                doc_id bigint not null references documents(id) on delete cascade, ordinal integer not null,
                kind text not null, destination text not null, text text, anchor text,
                primary key (doc_id, ordinal));
            create table if not exists doc_meta (
                doc_id bigint primary key references documents(id) on delete cascade,
                tags text[] not null, aliases text[] not null, headings text[] not null,
                block_ids text[] not null, tag_keys text[] not null);
            create index if not exists doc_meta_tags on doc_meta using gin (tag_keys);
            create table if not exists unreadable_files (path text primary key, reason text not null);
            create table if not exists index_clock (
                id smallint primary key check (id = 1), removed_at_utc text not null);
            create table if not exists refused_vectors (
                chunk_id bigint primary key references chunks(id) on delete cascade, reason text not null);
            create table if not exists term_stats (lexeme text primary key, ndoc integer not null);
            create table if not exists external_chunks (
                id text primary key, collection text not null, source_path text not null,
                chunk_index integer not null, content text not null, metadata jsonb not null,
                embedding vector not null, stale boolean not null default false);
            """
        )
        self._add_lengths(conn)
        if dims and not self._table_exists("vectors"):
            conn.execute(VectorLayout.new(storage, int(dims)).create(self._extension_schema()))
            self._add_pending(conn)
        elif dims and self._table_exists("vectors"):
            self._layout_cache = None
            old = self._layout()
            if old.storage == "binary" and not old.centred:  # from before decision 380: centred in place
                self._centre_lock(conn)
                old.centred_upgrade(conn, self._extension_schema())
            if not self._pending_state()[1]:  # an index from before decision 485
                self._add_pending(conn)
        self._layout_cache = None
        self._centre_settled = False
        self._ready = True

    def _extension_schema(self) -> str:
        (extension,) = self._conn().execute(
            b"select extnamespace::regnamespace::text from pg_extension where extname = 'vector'"
        ).fetchone() or ("public",)
        return str(extension).strip('"')

    def reset(self, vector_dimensions: int | None, vector_storage: str) -> None:
        with self._lock, self._conn().transaction():
            for table in _DERIVED:  # external chunks survive, as on SQLite
                self._conn().execute(sql.SQL("drop table if exists {} cascade").format(sql.Identifier(table)))
            self._create(vector_dimensions, vector_storage)

    def check(self) -> None:
        """Nothing to do: PostgreSQL guards its own pages (and reports damage as errors)."""

    def read_manifest(self) -> dict[str, str]:
        if not self.exists():
            return {}
        return dict(self._rows("select key, value from manifest"))

    def write_manifest(self, values: dict[str, str]) -> None:
        with self._lock, self._conn().transaction():
            if not self.exists():
                self._create(None)
            conn = self._conn()
            # two servers writing the manifest at once (both starting a reindex) would both delete,
            # then both insert: one unique violation. One writer at a time, until commit.
            conn.execute(b"select pg_advisory_xact_lock(hashtextextended('local-vector-search-mcp:manifest', 0))")
            conn.execute(b"delete from manifest")
            with conn.cursor() as cur:
                cur.executemany(b"insert into manifest (key, value) values (%s, %s)", list(values.items()))

    def has_vectors(self) -> bool:
        return self.exists() and self._table_exists("vectors")

    def _layout(self) -> VectorLayout:
        """How the ``vectors`` table stores its vectors (read once; this process's reset forgets it)."""
        if self._layout_cache is None:
            rows = self._rows(
                "select obj_description(a.attrelid, 'pg_class'), format_type(a.atttypid, a.atttypmod),"
                " coalesce((select indexdef from pg_indexes where schemaname = %s and indexname = 'vectors_hnsw'),"
                " ''), a.atttypmod from pg_attribute a where a.attrelid = to_regclass(%s) and a.attname = 'embedding'",
                (self._schema, f'"{self._schema}".vectors'),
            )
            if not rows:
                raise IndexNotReady(f"the vector table of {self._location} is missing; rebuild the index")
            self._layout_cache = VectorLayout.from_catalog(*rows[0])
        return self._layout_cache

    # documents ----------------------------------------------------------------
    def document_states(self) -> dict[str, DocumentState]:
        if not self.exists():
            return {}
        rows = self._rows("select id, path, source_hash, size, mtime_ns from documents")
        return {r[1]: DocumentState(*r) for r in rows}

    def documents_without_own_chunks(self) -> list[str]:
        if not self.exists():
            return []
        rows = self._rows(
            "select path from documents d where not exists (select 1 from chunks c"
            " where c.doc_id = d.id and c.pointer <> 'frontmatter') order by path"
        )
        return [r[0] for r in rows]

    def document_states_of(self, paths: Collection[str]) -> dict[str, DocumentState]:
        if not paths or not self.exists():
            return {}
        rows = self._rows(
            "select id, path, source_hash, size, mtime_ns from documents where path = any(%s)", (sorted(set(paths)),)
        )
        return {r[1]: DocumentState(*r) for r in rows}

    def chunk_counts(self, paths: Collection[str]) -> dict[str, int]:
        if not paths or not self.exists():
            return {}
        rows = self._rows(
            "select d.path, (select count(*) from chunks c where c.doc_id = d.id) from documents d"
            " where d.path = any(%s)",
            (sorted(set(paths)),),
        )
        return {str(path): int(n) for path, n in rows}

    def document_states_under(self, prefix: str) -> dict[str, DocumentState]:
        if not self.exists():
            return {}
        # starts_with compares characters (not LIKE's wildcards, nor the collation's order, which
        # a range would follow: under en_US "a/" < "a0" < "a/b" is not byte order) (decision 351)
        rows = self._rows(
            "select id, path, source_hash, size, mtime_ns from documents where starts_with(path, %s)", (prefix,)
        )
        return {r[1]: DocumentState(*r) for r in rows}

    def unreadable_files(self) -> dict[str, str]:
        if not self.exists() or not self._table_exists("unreadable_files"):
            return {}  # an index from before the table: nothing recorded yet
        return dict(self._rows("select path, reason from unreadable_files"))

    def set_unreadable(self, path: str, reason: str | None) -> None:
        if reason is None:
            self._rows("delete from unreadable_files where path = %s", (path,))
        else:
            self._rows(
                "insert into unreadable_files (path, reason) values (%s, %s)"
                " on conflict (path) do update set reason = excluded.reason",
                (path, reason),
            )

    def touch_document(self, path: str, size: int, mtime_ns: int) -> None:
        self._rows("update documents set size = %s, mtime_ns = %s where path = %s", (size, mtime_ns, path))

    def replace_document(
        self,
        doc: DocumentRecord,
        chunks: Sequence[ChunkRecord],
        links: Sequence[LinkRecord] = (),
        meta: DocumentMeta | None = None,
    ) -> int:
        if self.exists():
            self._ensure_lengths()  # lexical_meta, which says whether the snapshot is kept
        n = self._replace(doc, chunks, links, meta, exact=False, batch=self._batch())
        self._recentre()
        return n

    def _replace(
        self,
        doc: DocumentRecord,
        chunks: Sequence[ChunkRecord],
        links: Sequence[LinkRecord],
        meta: DocumentMeta | None,
        exact: bool,
        terms: Literal["keep", "none"] = "keep",
        batch: PipelinedBatch | None = None,
    ) -> int:
        """``exact``: store vectors as given (an imported index), else normalised. ``terms``: keep
        the term-count snapshot (decision 610), or not (the caller stops keeping it at the end of
        its transaction). ``batch``: this thread's write batch, which sends the document's
        transaction without waiting for it (decision 680)."""
        # everything is computed before the transaction: a bad record leaves the old revision in place
        rows = [
            (
                c.ordinal,
                c.pointer,
                c.anchor,
                c.text,
                c.heading_path,
                c.embedding_text_hash,
                *(c.lexemes or chunk_lexemes(c.text, c.heading_path)),  # tsv, ntok, nstem (decision 566)
                c.vector,
            )
            for c in chunks
        ]
        link_rows = [(i, ln.kind, ln.destination, ln.text, ln.anchor) for i, ln in enumerate(links)]
        self._stats_cache = None
        conn = self._conn()
        if not self.exists():  # its statements are not all pipelinable (several in one string)
            if batch is not None:
                batch.flush()
            with self._lock, conn.transaction():
                self._create(None)
        with_vectors = any(row[-1] is not None for row in rows)
        if batch is not None and not with_vectors:
            # the chunks' ids are not needed: nothing to wait for before the next document
            batch.send(
                doc.path,
                partial(self._send, doc=doc, rows=rows, link_rows=link_rows, meta=meta, terms=terms, ids=False),
                partial(self.replace_document, doc, chunks, links, meta),
            )
            return len(chunks)
        if batch is not None:  # this one waits for its chunks' ids: the sent ones are confirmed first
            batch.flush()
        # the vector table, looked up only when there are vectors to store (another server's
        # embedding pass may have made it since: never remembered), and before the pipeline,
        # where a statement's rows come only once asked for
        layout = self._layout() if with_vectors and self._table_exists("vectors") else None
        # One round trip per document, not one per statement (or per chunk, as before): the
        # statements are pipelined and none needs an answer before the commit, since each finds
        # the new document's id by its path. Under load every round trip waits for a core.
        with self._lock, conn.pipeline(), conn.transaction():
            inserted = self._send(conn, doc, rows, link_rows, meta, terms, ids=layout is not None)
            if layout is not None and inserted is not None:  # the ids are needed: wait for them
                chunk_ids = {ordinal: chunk_id for chunk_id, ordinal in inserted.fetchall()}
                vectors = [(chunk_ids[row[0]], row[-1]) for row in rows if row[-1] is not None]
                with conn.cursor() as cur:
                    cur.executemany(
                        f"insert into vectors (chunk_id, {layout.insert_columns})"
                        f" values (%s, {layout.insert_marks})".encode(),
                        [(chunk_id, *layout.row(vector, normalise=not exact)) for chunk_id, vector in vectors],
                    )
        return len(chunks)

    def _send(
        self,
        conn: psycopg.Connection[Any],
        doc: DocumentRecord,
        rows: list[tuple[Any, ...]],
        link_rows: list[tuple[Any, ...]],
        meta: DocumentMeta | None,
        terms: Literal["keep", "none"],
        ids: bool,
    ) -> psycopg.Cursor[Any] | None:
        """Queue one document's statements in the caller's transaction and pipeline; none waits for
        an answer. Returns the cursor of the chunks' insert, which returns their ids and ordinals
        when ``ids`` (else None)."""
        doc_id = b"(select id from documents where path = %s)"  # this transaction's new row
        # two servers replacing one document: the second waits here, then its delete (a new
        # statement, a new snapshot) sees the first one's row instead of colliding with it
        conn.execute(b"select pg_advisory_xact_lock(hashtextextended(%s, 0))", (self._doc_key(doc.path),))
        if terms == "keep":
            conn.execute(_TERMS_LOCK)
            conn.execute(_OLD_TERMS, {"path": doc.path})  # the counts' change: see _COUNT_CHANGE
        conn.execute(b"delete from documents where path = %s", (doc.path,))
        conn.execute(
            b"insert into documents (path, source_hash, size, mtime_ns, indexed_at_utc, properties)"
            b" values (%s, %s, %s, %s, %s, %s)",
            (
                doc.path,
                doc.source_hash,
                doc.size,
                doc.mtime_ns,
                doc.indexed_at_utc,
                None if doc.properties is None else jsonb_text(doc.properties),
            ),
        )
        inserted: psycopg.Cursor[Any] | None = None
        if rows:  # every chunk in one statement, ids given in ordinal order as before
            columns = list(zip(*rows, strict=True))
            inserted = conn.execute(
                b"insert into chunks (doc_id, ordinal, pointer, anchor, text, heading_path,"
                b" embedding_text_hash, tsv, ntok, nstem) select " + doc_id + b", u.ordinal, u.pointer,"
                b" u.anchor, u.text, u.heading, u.hash, cast(u.tsv as tsvector), u.ntok, u.nstem"
                b" from unnest(cast(%b as integer[]), cast(%b as text[]), cast(%b as text[]),"
                b" cast(%b as text[]), cast(%b as text[]), cast(%b as text[]), cast(%b as text[]),"
                b" cast(%b as integer[]), cast(%b as integer[])) with ordinality"
                b" u(ordinal, pointer, anchor, text, heading, hash, tsv, ntok, nstem, n)"
                b" order by u.n" + (b" returning id, ordinal" if ids else b""),
                (doc.path, *(list(column) for column in columns[:-1])),
            )
        if link_rows:
            conn.execute(
                b"insert into links (doc_id, ordinal, kind, destination, text, anchor) select "
                + doc_id
                + b", u.* from unnest(cast(%b as integer[]), cast(%b as text[]), cast(%b as text[]),"
                b" cast(%b as text[]), cast(%b as text[])) u",
                (doc.path, *(list(column) for column in zip(*link_rows, strict=True))),
            )
        if meta is not None and meta != DocumentMeta():
            conn.execute(
                b"insert into doc_meta (doc_id, tags, aliases, headings, block_ids, tag_keys)"
                b" values (" + doc_id + b", %s, %s, %s, %s, %s)",
                (
                    doc.path,
                    list(meta.tags),
                    list(meta.aliases),
                    list(meta.headings),
                    list(meta.block_ids),
                    tag_prefixes(meta.tags),
                ),
            )
        if terms == "keep":
            conn.execute(_COUNT_CHANGE, {"path": doc.path})
        return inserted if ids else None

    def _count_removed(self, conn: psycopg.Connection[Any], path: str) -> None:
        """Delete the document at ``path`` (its chunks by the cascade, after the statement) and take
        its chunks' lexemes off the counts: the statement still sees the chunks it deletes, so these
        are exactly the rows gone, whoever wrote them. A count that falls to 0 stays (a lexeme
        written again soon needs no insert; a rebuild drops it). Under :data:`_TERMS_LOCK`."""
        conn.execute(
            b"with gone as (delete from documents where path = %(path)s returning id),"
            b" old as (select u.lexeme, count(*) as n from chunks c join gone on c.doc_id = gone.id,"
            b" unnest(tsvector_to_array(c.tsv)) u(lexeme) group by u.lexeme)"
            b" update term_stats t set ndoc = t.ndoc - old.n from old where t.lexeme = old.lexeme and " + _TERMS_KEPT,
            {"path": path},
        )

    @staticmethod
    def _drop_term_counts(conn: psycopg.Connection[Any]) -> None:
        """The snapshot is no longer kept: the next :meth:`refresh_term_stats` rebuilds it. Under
        the lock, so a refresh in progress never marks as kept a table that misses this write."""
        conn.execute(_TERMS_LOCK)
        conn.execute(b"delete from lexical_meta where key = 'term_stats'")

    def _doc_key(self, path: str) -> str:
        return f"local-vector-search-mcp:{self._schema}:doc:{path}"

    def pending_vectors(self, limit: int, paths: Collection[str] | None = None) -> list[PendingChunk]:
        source = self._pending_source()
        if source is None:
            return []
        where, params = ("", ()) if paths is None else (" where d.path = any(%s)", (sorted(paths),))
        rows = self._rows(
            f"select c.id, d.path, c.text, c.heading_path, c.embedding_text_hash from {source} p"
            f" join chunks c on c.id = p.chunk_id join documents d on d.id = c.doc_id{where}"
            " order by p.chunk_id limit %s",
            (*params, limit),
        )
        return [PendingChunk(*r) for r in rows]

    def _pending_state(self) -> tuple[bool, bool]:
        """(the ``vectors`` table exists, the pending table and its triggers do: ``pg_pending``)."""
        query, params = pg_pending.state_query(self._schema)
        ((vectors, ready),) = self._conn().execute(query, params).fetchall()
        return bool(vectors), bool(ready)

    def _pending_source(self) -> str | None:
        """The relation of the pending chunk ids (``p.chunk_id``): ``None`` when no chunk can be
        pending (no vector table), else the pending table. An index without it (before decision
        485) or without its triggers (dropped with ``chunks`` by a server of an older release)
        gets them first; a user who may not add them (not the tables' owner) reads the anti-join
        of chunks and vectors, as before, until a server that may has done it. Looked at on
        every call, never remembered: another server may rebuild the index meanwhile."""
        if not self.exists():
            return None
        vectors, ready = self._pending_state()
        if not vectors:
            return None
        if not ready and self._pending_refused:  # not asked again: each try holds writers a moment
            return self._pending_scan()
        if not ready:
            try:
                with self._lock, self._conn().transaction():
                    self._add_pending(self._conn())
            except psycopg.errors.InsufficientPrivilege as exc:
                log.warning(
                    "%s: cannot add the table of chunks waiting for vectors (%s); counting them from the "
                    "whole index on every search until the tables' owner runs this server once",
                    self._location,
                    _scrubbed(exc, self._url),
                )
                self._pending_refused = True
                return self._pending_scan()
        return "pending_vectors"

    def _pending_scan(self) -> str:
        """The anti-join, without the chunks the provider refused (decision 510)."""
        if not self._table_exists("refused_vectors"):
            return _PENDING_SCAN
        return _PENDING_SCAN[:-1] + " and not exists (select 1 from refused_vectors r where r.chunk_id = c.id))"

    def _add_pending(self, conn: psycopg.Connection[Any]) -> None:
        """The pending table and its triggers, filled once by the anti-join; in the caller's
        transaction, under the schema lock, done once when several servers open an old index
        together (the second finds it made)."""
        with conn.cursor() as cur:
            self._ddl_lock(cur)
        if self._pending_state()[1]:
            return
        conn.execute(pg_pending.lock(self._schema))
        conn.execute(pg_pending.ddl(self._schema))
        for privilege, role in conn.execute(*pg_pending.grants(self._schema)).fetchall():
            conn.execute(pg_pending.grant(self._schema, privilege, role))
        conn.execute(pg_pending.fill(self._schema))

    def store_vectors(self, vectors: Sequence[tuple[PendingChunk, npt.NDArray[np.float32]]]) -> int:
        if not vectors or not self.has_vectors():
            return 0
        stored = 0
        layout = self._layout()
        query = (
            f"insert into vectors (chunk_id, {layout.insert_columns}) select id, {layout.insert_marks}"
            " from chunks where id = %s and embedding_text_hash = %s on conflict (chunk_id) do nothing"
        ).encode()
        with self._lock, self._conn().transaction(), self._conn().cursor() as cur:
            for chunk, vector in vectors:
                # ids come from a sequence here, never reused; the text is checked as on SQLite (decision 801)
                cur.execute(query, (*layout.row(vector), chunk.chunk_id, chunk.embedding_text_hash))
                stored += cur.rowcount
        self._recentre()
        return stored

    def _centre_lock(self, conn: psycopg.Connection[Any]) -> None:
        """One recentring of this knowledge base at a time (two would race on the function)."""
        conn.execute(
            b"select pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"local-vector-search-mcp:{self._schema}:centre",),
        )

    def _recentre(self) -> None:
        """Binary: while the centre was made from fewer than CENTRE_SAMPLE vectors, make it again
        (the mean of every stored vector, the function, the index) once their count has doubled.
        Bounded: the index is rebuilt about ten times over at most about 2 x CENTRE_SAMPLE rows."""
        if self._centre_settled:
            return
        if not self.has_vectors():  # the vector table comes with ``_create``, which unsettles
            self._centre_settled = True
            return
        layout = self._layout()
        if not layout.centred:
            self._centre_settled = True
            return
        conn = self._conn()
        with self._lock, conn.transaction():
            for locked in (False, True):  # looked at, then (if due) looked at again under the lock
                ((made, count),) = conn.execute(
                    b"select vectors, (select count(*) from vectors) from vector_centre"
                ).fetchall()
                if made >= CENTRE_SAMPLE:
                    self._centre_settled = True
                    return
                if count == 0 or count < 2 * made:
                    return
                if not locked:
                    self._centre_lock(conn)
            layout.recentre(conn, self._extension_schema(), "reindex")

    def delete_document(self, path: str) -> bool:
        if not self.exists():
            return False
        self._stats_cache = None
        self._ensure_lengths()
        conn = self._conn()
        with self._lock, conn.transaction():
            # as a replacement of the path does: one writer of it at a time, then the snapshot's turn
            conn.execute(b"select pg_advisory_xact_lock(hashtextextended(%s, 0))", (self._doc_key(path),))
            conn.execute(_TERMS_LOCK)
            row = conn.execute(b"select indexed_at_utc from documents where path = %s", (path,)).fetchone()
            if row is None:
                return False
            self._stamp_removal(conn, row[0], made=self._table_exists("index_clock"))
            self._count_removed(conn, path)
            return True

    def _stamp_removal(self, conn: psycopg.Connection[Any], indexed_at: str, made: bool) -> None:
        """Removing a document changes the index but leaves no row saying when: stamped here
        (decision 770), never earlier than the document's own time. An index from before the
        table gets it here (a removal may come before any ``ensure_schema``), under the DDL lock."""
        if not made:
            with conn.cursor() as cur:
                self._ddl_lock(cur)
            conn.execute(
                b"create table if not exists index_clock"
                b" (id smallint primary key check (id = 1), removed_at_utc text not null)"
            )
        conn.execute(
            b"insert into index_clock (id, removed_at_utc) values (1, %s) on conflict (id)"
            b" do update set removed_at_utc = greatest(index_clock.removed_at_utc, excluded.removed_at_utc)",
            (max(utc_now(), indexed_at),),
        )

    def vectors_by_text_hash(self, path: str) -> dict[str, npt.NDArray[np.float32]]:
        batch = self._batch()
        if batch is not None:  # asked before each document's write: no round trip of its own
            if batch.holds(path):
                batch.flush()  # its stored rows are those the batch sent
            if batch.vectors is None:  # once per window: a table made meanwhile only delays reuse
                batch.vectors = self.has_vectors()
            if not batch.vectors:
                return {}
        if not self.has_vectors():
            return {}
        rows = self._rows(
            f"select c.embedding_text_hash, {self._layout().read_expr('v')} from chunks c"
            " join documents d on d.id = c.doc_id join vectors v on v.chunk_id = c.id where d.path = %s",
            (path,),
        )
        return {h: unit(to_numpy(v)) for h, v in rows}

    # moving an index between engines ---------------------------------------------------
    def export_documents(self, after: str | None, limit: int) -> list[DocumentDump]:
        if not self.exists():
            return []
        vectors = self.has_vectors()
        restore = vectors and self._layout().storage == "int8"
        conn = self._conn()
        with self._lock, conn.transaction():
            conn.execute(b"set transaction isolation level repeatable read")  # one snapshot per page
            docs = conn.execute(
                b"select id, path, source_hash, size, mtime_ns, indexed_at_utc, properties from documents"
                b' where %(after)s::text is null or path collate "C" > %(after)s order by path collate "C"'
                b" limit %(limit)s",
                {"after": after, "limit": limit},
            ).fetchall()
            ids = [d[0] for d in docs]
            chunk_rows = conn.execute(
                b"select c.doc_id, c.ordinal, c.pointer, c.anchor, c.text, c.heading_path, c.embedding_text_hash, "
                + (self._layout().read_expr("v").encode() if vectors else b"null")
                + b" from chunks c"
                + (b" left join vectors v on v.chunk_id = c.id" if vectors else b"")
                + b" where c.doc_id = any(%s) order by c.doc_id, c.ordinal",
                (ids,),
            ).fetchall()
            link_rows = conn.execute(
                b"select doc_id, kind, destination, text, anchor from links where doc_id = any(%s)"
                b" order by doc_id, ordinal",
                (ids,),
            ).fetchall()
            meta_rows = conn.execute(
                b"select doc_id, tags, aliases, headings, block_ids from doc_meta where doc_id = any(%s)", (ids,)
            ).fetchall()
        chunks: dict[int, list[ChunkRecord]] = {i: [] for i in ids}
        for doc_id, ordinal, pointer, anchor, text, heading, text_hash, embedding in chunk_rows:
            vector = None if embedding is None else to_numpy(embedding)
            if vector is not None and restore:  # int8: the codes / 127 as SQLite gives them (port.DocumentDump):
                vector = vector / np.float32(127.0)  # re-quantizing yields the same codes, bit for bit
            chunks[doc_id].append(ChunkRecord(ordinal, pointer, anchor, text, heading, text_hash, vector))
        links: dict[int, list[LinkRecord]] = {i: [] for i in ids}
        for doc_id, *fields in link_rows:
            links[doc_id].append(LinkRecord(*fields))
        metas = {r[0]: DocumentMeta(*(tuple(v) for v in r[1:])) for r in meta_rows}
        return [
            DocumentDump(
                DocumentRecord(path, source_hash, size, mtime_ns, indexed_at, properties),
                tuple(chunks[doc_id]),
                tuple(links[doc_id]),
                metas.get(doc_id, DocumentMeta()),
            )
            for doc_id, path, source_hash, size, mtime_ns, indexed_at, properties in docs
        ]

    def import_documents(self, dumps: Sequence[DocumentDump]) -> int:
        if self.exists():
            self._ensure_lengths()
        with self._lock, self._conn().transaction():
            n = sum(self._replace(d.document, d.chunks, d.links, d.meta, exact=True, terms="none") for d in dumps)
            # many documents in one transaction: the snapshot's lock last (after every document's
            # own), and a full refresh after the copy (``copy.py``) instead of counts per document
            self._drop_term_counts(self._conn())
        self._recentre()
        return n

    def counts(self) -> StoreCounts:
        if not self.exists():
            return StoreCounts(0, 0, None, 0)
        clock = "(select removed_at_utc from index_clock)" if self._table_exists("index_clock") else "null"
        ((documents, last),) = self._rows(f"select count(*), greatest(max(indexed_at_utc), {clock}) from documents")
        ((chunks,),) = self._rows("select count(*) from chunks")
        return StoreCounts(documents, chunks, last, self.pending_vector_count())

    def has_chunks(self) -> bool:
        return self.exists() and bool(self._rows("select 1 from chunks limit 1"))

    def documents_holding_letters(self, letters: str) -> list[str]:
        """A scan of the chunk texts (asked by a reindex of an index an earlier release wrote)."""
        if not self.exists():
            return []
        rows = self._rows(
            "select distinct d.path from chunks c join documents d on d.id = c.doc_id"
            " where c.text ~ %(p)s or coalesce(c.heading_path, '') ~ %(p)s order by d.path",
            {"p": f"[{letters}]"},
        )
        return [path for (path,) in rows]

    def refuse_vectors(self, refusals: Sequence[tuple[PendingChunk, str]]) -> int:
        """A refused chunk has a row in ``refused_vectors`` (its reason) and none in the pending
        table; the row goes with its chunk, and a chunk stored again is pending again (the
        pending table's trigger), so it is tried once more (decision 510)."""
        if not refusals or not self.has_vectors():
            return 0
        done = 0
        with self._lock, self._conn().transaction(), self._conn().cursor() as cur:
            if not self._table_exists("refused_vectors"):  # an index from before decision 510
                self._ddl_lock(cur)
                cur.execute(_REFUSED_TABLE)
            recorded: list[int] = []
            for chunk, reason in refusals:
                cur.execute(
                    b"insert into refused_vectors (chunk_id, reason) select c.id, %s from chunks c where c.id = %s"
                    b" and c.embedding_text_hash = %s and not exists (select 1 from vectors v where v.chunk_id = c.id)"
                    b" on conflict (chunk_id) do update set reason = excluded.reason",
                    (reason, chunk.chunk_id, chunk.embedding_text_hash),
                )
                done += cur.rowcount
                if cur.rowcount:
                    recorded.append(chunk.chunk_id)
            if self._pending_state()[1] and recorded:
                cur.execute(b"delete from pending_vectors where chunk_id = any(%s)", (recorded,))
        return done

    def refused_vectors(self, limit: int) -> tuple[int, list[RefusedChunk]]:
        if not self.exists() or not self._table_exists("refused_vectors"):
            return 0, []
        ((count,),) = self._rows("select count(*) from refused_vectors")
        rows = self._rows(
            "select d.path, c.ordinal, c.heading_path, r.reason from refused_vectors r"
            " join chunks c on c.id = r.chunk_id join documents d on d.id = c.doc_id"
            ' order by d.path collate "C", c.ordinal limit %s',
            (limit,),
        )
        return int(count), [RefusedChunk(p, int(o), h, r) for p, o, h, r in rows]

    def mark_all_vectors_pending(self) -> None:
        """Nothing to do: a chunk is pending exactly while it has no row in ``vectors``, and the
        pending table was filled with every chunk when the vector table came."""

    def pending_vector_count(self, paths: Collection[str] | None = None) -> int:
        """The rows of the pending table (``pg_pending``): as many as chunks wait, not as many as
        the index holds (decision 485)."""
        source = self._pending_source()
        if source is None:
            return 0
        if paths is None:
            ((n,),) = self._rows(f"select count(*) from {source} p")
        else:
            ((n,),) = self._rows(
                f"select count(*) from {source} p join chunks c on c.id = p.chunk_id"
                " join documents d on d.id = c.doc_id where d.path = any(%s)",
                (sorted(paths),),
            )
        return int(n)

    # link graph -----------------------------------------------------------------
    def links(self, paths: Collection[str] | None = None) -> list[StoredLink]:
        if not self.exists():
            return []
        where, params = ("", ()) if paths is None else (" where d.path = any(%s)", (sorted(paths),))
        rows = self._rows(
            "select d.path, l.ordinal, l.kind, l.destination, l.text, l.anchor from links l"
            f' join documents d on d.id = l.doc_id{where} order by d.path collate "C", l.ordinal',
            params,
        )
        return [StoredLink(*r) for r in rows]

    def snapshot_key(self) -> None:
        """Other servers write the same schema and PostgreSQL has no cheap change counter:
        whole-table reads are never cached."""
        return None

    def document_meta(self, paths: Collection[str] | None = None) -> dict[str, DocumentMeta]:
        if not self.exists():
            return {}
        where, params = ("", ()) if paths is None else (" where d.path = any(%s)", (sorted(paths),))
        rows = self._rows(
            "select d.path, m.tags, m.aliases, m.headings, m.block_ids"
            f" from doc_meta m join documents d on d.id = m.doc_id{where}",
            params,
        )
        return {r[0]: DocumentMeta(*(tuple(v) for v in r[1:])) for r in rows}

    def paths_with_tags(self, tags: Sequence[str]) -> set[str]:
        wanted = sorted({normalize_tag(t) for t in tags})
        if not wanted or not self.exists():
            return set()
        rows = self._rows(
            "select d.path from doc_meta m join documents d on d.id = m.doc_id where m.tag_keys @> %s", (wanted,)
        )
        return {r[0] for r in rows}

    # retrieval ----------------------------------------------------------------
    def _scope_ids(self, scope: PathScope | None) -> list[int] | None:
        """Document ids inside ``scope`` (``None``: everything), selected by PostgreSQL itself: the
        globs become case-insensitive POSIX regular expressions (``globs.posix_regex``, the same
        matches as the SQLite side's Python predicate); the id list then filters chunks before the limit."""
        if scope is None or scope.is_everything:
            return None
        include = [posix_regex(p, "includeGlobs") for p in scope.include] or [posix_regex("**/*.md")]
        exclude = [posix_regex(p, "excludeGlobs") for p in scope.exclude]
        path = nfc_sql("path", self._utf8())
        rows = self._rows(
            f"select id from documents where {path} ~ any(cast(%(inc)s as text[]))"
            f" and not ({path} ~ any(cast(%(exc)s as text[])))"
            " and (cast(%(paths)s as text[]) is null or path = any(%(paths)s))",
            {"inc": include, "exc": exclude, "paths": None if scope.paths is None else sorted(scope.paths)},
        )
        return [r[0] for r in rows]

    def _hits(self, rows: list[tuple[Any, ...]], with_distance: bool) -> list[ChunkHit]:
        return [ChunkHit(r[0], r[1], r[2], r[3], r[4], r[5], float(r[6]) if with_distance else None) for r in rows]

    def lexical(self, query: LexicalQuery, limit: int, scope: PathScope | None) -> list[ChunkHit]:
        """Ranked as the SQLite adapter ranks (``pg_rank.py``, decision 310): FTS5's bm25 over the
        exact tokens plus a quarter of the stems' bm25; a question rescored by coverage (decision 220)."""
        if not self.exists():
            return []
        query_plan = pg_rank.plan(query, STEM_BUDGET)
        if not query_plan.atoms():
            return []
        self._ensure_lengths()
        # the row budgets first, from the chunk counts of the query's tokens (as the SQLite adapter
        # cuts its MATCH): a very common word's rows are then never fetched. For an OR the same
        # round trip reads its lexemes' counts where they are known without counting (decision
        # 671): then only the phrases and prefixes the cut keeps are counted before the fetch (an
        # AND counts its atoms after it, as before: measured no faster the other way)
        lexemes = [
            word
            for atom in query_plan.atoms()
            if query_plan.counts_in_rows() and (word := plain_lexeme(atom.tsquery)) is not None
        ]
        tokens = query_plan.priced_tokens(self._corpus_stats().rows)
        counted = self._token_frequencies(tokens, lexemes)
        stems = self._stem_counts() if query_plan.stems is not None else {}
        priced = stem_prices(tokens, counted.counts, stems)
        query_plan = query_plan.cut(lambda token: counted.counts.get(token, 0), lambda token: priced.get(token, 0))
        atoms = query_plan.atoms()
        if not atoms:
            return []
        ids = self._scope_ids(scope)
        n_exact = len(query_plan.exact.atoms) if query_plan.exact else 0
        stats = self._corpus_stats()
        depth = max(limit, STEM_DEPTH)

        def in_scope(rows: pg_rank.Matched) -> npt.NDArray[np.bool_]:
            return np.ones(len(rows.ids), dtype=bool) if ids is None else np.isin(rows.doc_ids, ids)

        if query_plan.counts_in_rows():  # an OR: only the rows that can reach the best ``depth``
            counts = self._live_counts([a.tsquery for a in atoms], counted.live)
            rows = self._top_rows(query_plan, pg_rank.TopBounds(query_plan, stats, tuple(counts), depth), in_scope)
        else:
            rows = self._fetch(atoms, n_exact, query_plan.where())
            counts = self._atom_counts(atoms)
        scored = pg_rank.rank(query_plan, rows, stats, depth, in_scope(rows), counts)
        if wants_coverage(query):  # a question: its best rows by the share of its words they hold
            bm25 = dict(scored[:COVERAGE_DEPTH])
            top = self._hits_by_id([rid for rid, _ in scored[:COVERAGE_DEPTH]])
            ranked = rerank(
                query,
                top,
                lambda h: bm25[h.chunk_id],
                lambda h: f"{h.heading_path or ''}\n{h.text}",
                lambda tokens: (self._token_frequencies(tokens).counts, self._corpus_stats().rows),
            )
            return ranked[:limit] + self._hits_by_id([rid for rid, _ in scored[COVERAGE_DEPTH:limit]])
        return self._hits_by_id([rid for rid, _ in scored[:limit]])

    def _fetch(
        self,
        atoms: Sequence[pg_rank.Atom],
        n_exact: int,
        where: str,
        columns: Sequence[int] | None = None,
        held: npt.NDArray[np.int64] | None = None,
    ) -> pg_rank.Matched:
        """The rows ``where`` matches but the ``held`` ids, with the frequency of each atom of
        ``columns`` (``None``: every atom; the others are known absent from these rows).
        One detoasted copy of each matched tsvector per row (``setweight`` with no lexemes returns
        the value unchanged, decompressed once; the lateral subquery keeps it for every atom;
        decision 331), then each atom's frequency where it occurs. The tsquery is a subquery, so
        the planner cannot judge it common and read every chunk instead of asking the GIN index
        (decision 456)."""
        tested = range(len(atoms)) if columns is None else columns
        ranks = "".join(
            f", case when m.t @@ cast(%(a{i})s as tsquery)"
            f" then ts_rank_cd(cast(%(w{int(i >= n_exact)})s as real[]), m.t, cast(%(a{i})s as tsquery), 0) else 0 end"
            for i in tested
        )
        params: dict[str, Any] = {f"a{i}": atoms[i].tsquery for i in tested}
        params |= {"w0": pg_rank.HIT_WEIGHTS, "w1": pg_rank.STEM_HIT_WEIGHTS, "q": where}
        skip = ""
        if held is not None and len(held):  # a bigint[] literal: hashed by the server, built fast here
            params["held"] = "{" + ",".join(map(str, held.tolist())) + "}"
            skip = " and not c.id = any(cast(%(held)s as bigint[]))"
        found = self._rows(
            f"select c.id, c.doc_id, c.ntok, c.nstem{ranks} from chunks c cross join lateral"
            " (select setweight(c.tsv, 'A', '{}'::text[]) as t offset 0) m"
            f" where c.tsv @@ (select cast(%(q)s as tsquery)){skip}",
            params,
        )
        return pg_rank.Matched.from_rows(found, n_exact, len(atoms), columns)

    def _top_rows(
        self,
        query_plan: pg_rank.RankPlan,
        bounds: pg_rank.TopBounds,
        in_scope: Callable[[pg_rank.Matched], npt.NDArray[np.bool_]],
    ) -> pg_rank.Matched:
        """Every row that may be in a list's best ``depth`` (MaxScore, decision 455): the rows of
        the atoms that can add most first, then, from the ``theta`` they set, the rows of every atom
        still essential, until none is left unfetched. A later fetch leaves out the rows held (by
        id) and does not look for the atoms fetched before in the rows it adds: a row holding one
        was fetched with it."""
        atoms = query_plan.atoms()
        n_exact = len(query_plan.exact.atoms) if query_plan.exact else 0
        fetched: set[int] = set()
        parts: list[pg_rank.Matched] = []
        rows = pg_rank.concat(parts, len(atoms))
        batch = bounds.first(FIRST_ROWS)
        while batch:
            where = _any_of(atoms, batch, fetched)
            if where:  # else phrases whose rows are held already
                columns = [i for i in range(len(atoms)) if i not in fetched]
                parts.append(self._fetch(atoms, n_exact, where, columns if fetched else None, rows.ids))
                rows = pg_rank.concat(parts, len(atoms))
            fetched |= batch
            batch = bounds.essential(rows, in_scope(rows)) - fetched
        return rows

    def _live_counts(self, tsqueries: Sequence[str], known: dict[str, int] | None = None) -> list[int]:
        """How many chunks each tsquery matches now (``known``: counted already, by tsquery). A
        single lexeme's count is its ``term_stats`` row where every write keeps that table (decision
        610: at every commit what counting the chunks gives, 0 for a lexeme without a row); a GIN
        count visits the heap row of every match for its visibility, most of the counting's time
        (decision 671). Otherwise, and for a phrase or a prefix, one GIN scan each (the tsquery
        comes from the outer row: the planner cannot pick a sequential scan for a common word, and
        plans one subquery, not one per atom)."""
        known = known or {}
        todo = list(dict.fromkeys(q for q in tsqueries if q not in known))
        found = dict(known)
        if todo:
            rows = self._rows(
                "select case when k.kept and u.l is not null"
                " then coalesce((select t.ndoc from term_stats t where t.lexeme = u.l), 0)"
                " else (select count(*) from chunks where tsv @@ u.q) end"
                f" from (select {_TERMS_KEPT.decode()} as kept) k,"
                " unnest(cast(%s as tsquery[]), cast(%s as text[])) with ordinality u(q, l, i) order by u.i",
                (todo, [plain_lexeme(q) for q in todo]),
            )
            found.update({q: int(n) for q, (n,) in zip(todo, rows, strict=True)})
        return [found[q] for q in tsqueries]

    def _hits_by_id(self, ids: Sequence[int]) -> list[ChunkHit]:
        if not ids:
            return []
        rows = self._rows(
            "select c.id, d.path, c.anchor, c.heading_path, c.text, d.source_hash from chunks c"
            " join documents d on d.id = c.doc_id where c.id = any(%s)",
            (list(ids),),
        )
        by_id = {r[0]: r for r in rows}
        return self._hits([by_id[i] for i in ids if i in by_id], False)

    def _token_frequencies(self, tokens: Sequence[str], lexemes: Sequence[str] = ()) -> _TokenCounts:
        """How many chunks hold each token (absent: none), as the SQLite adapter counts them for its
        row budgets: common tokens (in more than ``COMMON_TERM_MIN_CHUNKS`` chunks) from
        ``term_stats``, the others counted now, as SQLite reads its snapshot. Where every write
        keeps ``term_stats`` (decision 610) its row is the count now, of every lexeme: then each
        token's and each of ``lexemes``' count is known exactly (``live``, by tsquery: the idf
        of an atom needs no other count, decision 671); elsewhere a rare token is counted through
        the GIN index (it is rare) and ``lexemes`` are not counted."""
        if not tokens and not lexemes:
            return _TokenCounts({}, {})
        # one round trip, planned once for any number of words (a scalar subquery per word cost
        # up to 2.6 ms of planning): the snapshot's count, then the count now where it is known
        # or (the subquery runs only then) where a priced token is rare
        rows = self._rows(
            "select case when s.ndoc > %(common)s then s.ndoc end,"
            " case when k.kept then coalesce(s.ndoc, 0)"
            " when u.priced and not coalesce(s.ndoc > %(common)s, false)"
            " then (select count(*) from chunks where tsv @@ u.q) end"
            f" from (select {_TERMS_KEPT.decode()} as kept) k"
            " cross join unnest(cast(%(l)s as text[]), cast(%(q)s as tsquery[]), cast(%(p)s as boolean[]))"
            " with ordinality u(l, q, priced, i) left join term_stats s on s.lexeme = u.l order by u.i",
            {
                "l": [lexeme(t) for t in (*tokens, *lexemes)],  # as term_stats holds them (folded, 984)
                "q": [_lexeme(t) for t in (*tokens, *lexemes)],
                "p": [True] * len(tokens) + [False] * len(lexemes),
                "common": COMMON_TERM_MIN_CHUNKS,
            },
        )
        found: dict[str, int] = {}
        live: dict[str, int] = {}
        for i, (common, now) in enumerate(rows):
            word = tokens[i] if i < len(tokens) else lexemes[i - len(tokens)]
            if i < len(tokens):
                found[word] = int(common if now is None else now)
            if now is not None:
                live[_lexeme(word)] = int(now)
        return _TokenCounts({t: n for t, n in found.items() if n}, live)

    def _atom_counts(self, atoms: Sequence[pg_rank.Atom]) -> list[int]:
        """Each atom's chunk count when the fetched rows do not hold them all (an AND): a single
        lexeme's as :meth:`_token_frequencies` counts it (a common one from the snapshot), a
        phrase's or prefix's counted now (all of them in one round trip, not one each)."""
        # one rule for what a plain lexeme is, the pricing's and ``_live_counts``' (a quoted one too)
        single = {word: atom.tsquery for atom in atoms if (word := plain_lexeme(atom.tsquery)) is not None}
        known = self._token_frequencies(list(single)).counts
        by_query = {tsquery: known.get(word, 0) for word, tsquery in single.items()}
        rest = list(dict.fromkeys(a.tsquery for a in atoms if a.tsquery not in by_query))
        by_query |= dict(zip(rest, self._live_counts(rest), strict=True))
        return [by_query[a.tsquery] for a in atoms]

    def _stem_counts(self) -> dict[str, int]:
        """``fts5.stem_counts`` of the common lexemes of ``term_stats``: the stems list's prices
        (decision 636), reused for :data:`STEM_COUNTS_TTL` seconds (one scan of the table; a
        price a minute old cuts the same words but where a count crossed a budget)."""
        cached = self._stem_counts_cache
        if cached is not None and time.monotonic() - cached[0] < STEM_COUNTS_TTL:
            return cached[1]
        rows = self._rows("select lexeme, ndoc from term_stats where ndoc > %s", (COMMON_TERM_MIN_CHUNKS,))
        counts = stem_counts((str(lexeme), int(n)) for lexeme, n in rows)
        self._stem_counts_cache = (time.monotonic(), counts)
        return counts

    def _corpus_stats(self) -> pg_rank.CorpusStats:
        """Row and token totals (FTS5 keeps them in its index; here a query of the lengths, an
        index-only scan of ``chunks_lengths`` where the table is vacuumed, reused for
        :data:`STATS_TTL` seconds and dropped on this process's writes)."""
        cached = self._stats_cache
        if cached is not None and time.monotonic() - cached[0] < STATS_TTL:
            return cached[1]
        ((rows, tokens, sized, stem_rows, stems),) = self._rows(
            "select count(*), coalesce(sum(ntok), 0), count(ntok), count(*) filter (where nstem > 0),"
            " coalesce(sum(nstem), 0) from chunks"
        )
        # a row written without lengths (by an older server) counts as average
        stats = pg_rank.CorpusStats(
            int(rows), round(int(tokens) * rows / sized) if sized else 0, int(stem_rows), int(stems)
        )
        self._stats_cache = (time.monotonic(), stats)
        return stats

    def _ensure_lengths(self) -> None:
        """An index written before chunks had their token counts gets them once, and the
        ``term_stats`` table (decision 310)."""
        if self._lengths_ready:
            return
        if not self._table_exists("lexical_meta"):
            with self._lock, self._conn().transaction():
                self._add_lengths(self._conn())
        self._lengths_ready = True

    def _column_exists(self, table: str, column: str) -> bool:
        rows = self._rows(
            "select 1 from information_schema.columns where table_schema = %s and table_name = %s and column_name = %s",
            (self._schema, table, column),
        )
        return bool(rows)

    def _add_lengths(self, conn: psycopg.Connection[Any]) -> None:
        """Inside the caller's transaction, what an index written by an earlier release lacks:
        ``chunks.ntok``/``nstem``, filled from the stored tsvectors (their A and B positions, their
        C positions); the ``term_stats`` table (empty until the next full reindex: every token is
        counted meanwhile); and FTS5's own tokens for the chunks with non-ASCII text, re-tokenized
        once (decision 311: diacritics folded; ASCII text tokenizes as before)."""
        with conn.cursor() as cur:
            self._ddl_lock(cur)
        conn.execute(b"create table if not exists term_stats (lexeme text primary key, ndoc integer not null)")
        if not self._column_exists("chunks", "ntok"):
            conn.execute(
                b"alter table chunks add column if not exists ntok integer, add column if not exists nstem integer"
            )
            conn.execute(
                b"update chunks set"
                b" ntok = (select count(*) from unnest(tsv) u, unnest(u.weights) w where w <> 'C'),"
                b" nstem = (select count(*) from unnest(tsv) u, unnest(u.weights) w where w = 'C') where ntok is null"
            )
            self._stats_cache = None
        # the corpus totals of the ranking (:meth:`_corpus_stats`) by an index-only scan (decision 457)
        conn.execute(b"create index if not exists chunks_lengths on chunks (ntok, nstem)")
        if self._table_exists("lexical_meta"):
            return
        rows = conn.execute(
            b"select id, text, heading_path from chunks where text ~ %(wide)s or coalesce(heading_path, '') ~ %(wide)s",
            {"wide": r"[^\x01-\x7f]"},
        ).fetchall()
        with conn.cursor() as cur:
            cur.executemany(
                b"update chunks set tsv = %s::tsvector, ntok = %s, nstem = %s where id = %s",
                [(*chunk_lexemes(text, heading), cid) for cid, text, heading in rows],
            )
        conn.execute(b"create table if not exists lexical_meta (key text primary key, value text not null)")
        conn.execute(b"insert into lexical_meta (key, value) values ('tokens', %s)", (TOKENS_VERSION,))
        self._stats_cache = None

    def titled(self, words: Sequence[str], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        """As the SQLite adapter's: the chunks whose heading path begins with the words (as a phrase
        of its tokens, CJK runs as bigrams), each document's first such chunk, by chunk id."""
        tokens = index_tokens(" ".join(words))
        if not tokens or not self.exists():
            return []
        phrase = " <-> ".join(f"{_lexeme(t)}:A" for t in tokens)  # in the heading (weight A)
        rows = self._rows(
            "select c.id, c.doc_id, c.heading_path from chunks c where c.tsv @@ cast(%(q)s as tsquery)"
            " and strpos(lower(split_part(c.heading_path, ' > ', 1)), %(first)s) > 0"  # cheap: then exactly
            " and (cast(%(ids)s as bigint[]) is null or c.doc_id = any(%(ids)s)) order by c.id",
            {"q": phrase, "first": tokens[0], "ids": self._scope_ids(scope)},
        )
        first: dict[int, int] = {}
        for chunk_id, doc_id, heading in rows:
            if doc_id not in first and index_tokens(heading or "")[: len(tokens)] == tokens:
                first[doc_id] = chunk_id
        return self._hits_by_id(sorted(first.values())[:limit])

    def forget_term_stats(self) -> None:
        """Nothing to forget: each write moves the counts by the stored tsvectors of its chunks, the
        old ones as the earlier tokenizer wrote them, so they are right after any pass (decision 1011)."""

    def tidy_lexical(self) -> bool:
        """Nothing to do: PostgreSQL folds a GIN index's pending entries in itself (vacuum, or a
        full pending list)."""
        return False

    def refresh_term_stats(self) -> None:
        """Planner statistics, and the chunk count of every lexeme (``term_stats``; searches read
        those in more than ``COMMON_TERM_MIN_CHUNKS`` chunks, as the SQLite adapter snapshots).
        Each write keeps the counts while ``lexical_meta`` says they are kept (decision 610), so
        this rebuilds them only where writes did not (a new index, an import, an index of an
        earlier release): ``ts_stat`` reads every tsvector once, 0.7 s for 17,861 chunks."""
        if not self.exists():
            return
        if self._analyze_due():
            self._rows("analyze chunks")
        conn = self._conn()
        with self._lock, conn.transaction():
            # on its own: its `create index if not exists` locks `chunks` against writers, who may
            # hold the snapshot's lock (taken here next) and wait for it
            self._add_lengths(conn)
        with self._lock, conn.transaction():
            conn.execute(_TERMS_LOCK)  # writes in flight commit first and are counted, later ones wait
            (kept,) = conn.execute(b"select " + _TERMS_KEPT).fetchone() or (False,)
            if kept:
                return
            conn.execute(b"delete from term_stats")
            conn.execute(
                b"insert into term_stats (lexeme, ndoc) select word, ndoc from ts_stat('select tsv from chunks')"
            )
            conn.execute(
                b"insert into lexical_meta (key, value) values ('term_stats', 'every lexeme')"
                b" on conflict (key) do update set value = excluded.value"
            )

    def _analyze_due(self) -> bool:
        """Whether ``chunks`` has planner statistics to make now: never analyzed (a new index), or
        changed by more rows since than autovacuum waits for (50 + 10 %; it would analyze within a
        minute anyway). A reindex that rewrote one file skips the 0.5 s of reading a sample of a
        large index again (decision 567)."""
        if self._conn().info.server_version >= 150000:
            # this session's own recent writes are counted in the view from the next statement
            # on (else up to a second of them would be, after the analyze, as changes since)
            self._rows("select pg_stat_force_next_flush()")
        rows = self._rows(
            "select c.reltuples, coalesce(s.n_mod_since_analyze, 0) from pg_class c"
            " left join pg_stat_all_tables s on s.relid = c.oid where c.oid = to_regclass('chunks')"
        )
        if not rows:
            return True
        tuples, changed = float(rows[0][0]), int(rows[0][1])
        return tuples < 0 or changed > ANALYZE_BASE + ANALYZE_SHARE * tuples

    def semantic(self, vector: npt.NDArray[np.float32], limit: int, scope: PathScope | None) -> list[ChunkHit]:
        if not self.has_vectors():
            return []
        ids = self._scope_ids(scope)
        layout = self._layout()
        exact, ann = layout.exact_distance("v"), layout.ann_distance("v")
        conn = self._conn()
        with self._lock, conn.transaction():
            candidates = layout.candidates(limit, self._vector_rows() if layout.storage == "binary" else 0)
            ef_search = min(max(EF_SEARCH, candidates), MAX_EF_SEARCH)
            conn.execute(sql.SQL("set local hnsw.ef_search = {}").format(sql.Literal(ef_search)))
            conn.execute(b"set local hnsw.iterative_scan = strict_order")
            # unscoped: the HNSW index proposes candidates (binary, int8: a larger pool, re-scored by
            # the layout's exact distance); scoped: an exact scan of the scope's rows
            query = (
                "select c.id, d.path, c.anchor, c.heading_path, c.text, d.source_hash, v.distance from"
                f" (select v.chunk_id, {exact} as distance from vectors v order by {ann} limit %(k)s) v"
                " join chunks c on c.id = v.chunk_id join documents d on d.id = c.doc_id"
                " order by v.distance, c.id limit %(n)s"
                if ids is None
                else f"select c.id, d.path, c.anchor, c.heading_path, c.text, d.source_hash, {exact} as distance"
                " from vectors v join chunks c on c.id = v.chunk_id join documents d on d.id = c.doc_id"
                f" where c.doc_id = any(%(ids)s) order by {exact}, c.id limit %(n)s"
            )
            params = {**layout.probe(vector), "k": candidates, "n": limit, "ids": ids}
            rows = conn.execute(query.encode(), params).fetchall()
        return self._hits(rows, True)

    def _vector_rows(self) -> int:
        """About how many vectors the table holds (binary's pool grows with it, decision 430), as
        the planner estimates a table: the rows per page of the last ANALYZE / VACUUM times the
        pages it has now, so rows written since count; an exact count before any statistics."""
        row = (
            self._conn()
            .execute(
                b"select case when relpages > 0 and reltuples >= 0 then reltuples / relpages"
                b" * (pg_relation_size(oid) / current_setting('block_size')::int) end"
                b" from pg_class where oid = 'vectors'::regclass"
            )
            .fetchone()
        )
        if row is None or row[0] is None:
            row = self._conn().execute(b"select count(*) from vectors").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # the chunk and vector API ---------------------------------------------------------
    def _md_columns(self) -> str:
        vector = self._layout().read_expr("v") if self.has_vectors() else "v.embedding"
        return f"d.path, c.ordinal, c.text, c.heading_path, c.anchor, d.properties, d.source_hash, {vector}"

    def _md_from(self) -> str:
        vectors = (
            "left join vectors v on v.chunk_id = c.id"
            if self.has_vectors()
            else "left join (select null::bigint as chunk_id, null::vector as embedding) v on false"
        )
        return f" from chunks c join documents d on d.id = c.doc_id {vectors}"

    @staticmethod
    def _md(row: tuple[Any, ...], with_vector: bool) -> StoredChunk:
        path, ordinal, text, heading, anchor, properties, source_hash, embedding = row
        vector = None if embedding is None else unit(to_numpy(embedding))
        return StoredChunk(
            markdown_chunk_id(path, ordinal),
            MARKDOWN,
            path,
            ordinal,
            text,
            markdown_metadata(heading, anchor, properties or {}, source_hash),
            None if vector is None else len(vector),
            False,
            vector if with_vector else None,
        )

    def markdown_chunks(
        self, path: str | None, after: tuple[str, int] | None, limit: int, with_vector: bool = False
    ) -> list[StoredChunk]:
        if not self.exists():
            return []
        rows = self._rows(
            f"select {self._md_columns()}{self._md_from()}"
            " where (cast(%(path)s as text) is null or d.path = %(path)s)"
            ' and (cast(%(ap)s as text) is null or (d.path collate "C", c.ordinal) > (%(ap)s, %(ao)s))'
            ' order by d.path collate "C", c.ordinal limit %(limit)s',
            {"path": path, "ap": after[0] if after else None, "ao": after[1] if after else 0, "limit": limit},
        )
        return [self._md(r, with_vector) for r in rows]

    @staticmethod
    def _ext(row: tuple[Any, ...], with_vector: bool) -> StoredChunk:
        chunk_id, collection, source_path, index, content, metadata, embedding, stale = row
        vector = to_numpy(embedding)
        return StoredChunk(
            chunk_id,
            collection,
            source_path,
            index,
            content,
            dict(metadata),
            len(vector),
            stale,
            vector if with_vector else None,
        )

    _EXT_COLUMNS = "id, collection, source_path, chunk_index, content, metadata, embedding, stale"

    def put_external(self, chunk: ExternalChunk, keep_collection: bool = False) -> bool:
        with self._lock, self._conn().transaction():
            if not self.exists():
                self._create(None)
            # The collection is compared by the statement itself (decision 988): an insert racing
            # another server's insert of the id waits for it, then updates only a row of the same
            # collection (or any, when none was named) and keeps the stored collection.
            row = (
                self._conn()
                .execute(
                    b"insert into external_chunks (id, collection, source_path, chunk_index, content, metadata,"
                    b" embedding, stale) values (%(id)s, %(c)s, %(s)s, %(i)s, %(t)s, %(m)s, %(v)s, %(stale)s)"
                    b" on conflict (id) do update set"
                    b" source_path = excluded.source_path, chunk_index = excluded.chunk_index,"
                    b" content = excluded.content, metadata = excluded.metadata, embedding = excluded.embedding,"
                    b" stale = excluded.stale"
                    b" where cast(%(keep)s as boolean) or external_chunks.collection = excluded.collection"
                    b" returning (xmax = 0)",
                    {
                        "id": chunk.id,
                        "c": chunk.collection,
                        "s": chunk.source_path,
                        "i": chunk.chunk_index,
                        "t": chunk.content,
                        "m": jsonb_text(chunk.metadata),
                        "v": np.asarray(chunk.vector, dtype=np.float32),
                        "stale": chunk.stale,
                        "keep": keep_collection,
                    },
                )
                .fetchone()
            )
            if row is None:  # refused; the row stays locked until this transaction ends, so it is still there
                stored = self._rows("select collection from external_chunks where id = %s", (chunk.id,))
                raise OtherCollection(stored[0][0])
        return bool(row[0])

    def update_external(
        self,
        chunk_id: str,
        content: str | None,
        metadata: Mapping[str, Any] | None,
        vector: npt.NDArray[np.float32] | None,
    ) -> StoredChunk | None:
        if not self.exists():
            return None
        # One statement: under READ COMMITTED an UPDATE waits for a concurrent writer of the row and
        # then evaluates SET and WHERE on its newest version, so a row another server deleted
        # meanwhile is not found, and staleness follows the text as it is now.
        with self._lock, self._conn().transaction():
            rows = self._rows(
                "update external_chunks set content = coalesce(cast(%(c)s as text), content),"
                " metadata = coalesce(cast(%(m)s as jsonb), metadata),"
                " embedding = coalesce(%(v)s, embedding),"
                " stale = case when cast(%(given)s as boolean) then false"
                " else stale or (cast(%(c)s as text) is not null and content is distinct from cast(%(c)s as text)) end"
                f" where id = %(id)s returning {self._EXT_COLUMNS}",
                {
                    "c": content,
                    "m": None if metadata is None else jsonb_text(dict(metadata)),
                    "v": None if vector is None else np.asarray(vector, dtype=np.float32),
                    "given": vector is not None,
                    "id": chunk_id,
                },
            )
        return self._ext(rows[0], False) if rows else None

    def external_chunk(self, chunk_id: str, with_vector: bool = False) -> StoredChunk | None:
        if not self.exists():
            return None
        rows = self._rows(f"select {self._EXT_COLUMNS} from external_chunks where id = %s", (chunk_id,))
        return self._ext(rows[0], with_vector) if rows else None

    def external_chunks(
        self, collection: str | None, source_path: str | None, after: tuple[str, str] | None, limit: int
    ) -> list[StoredChunk]:
        if not self.exists():
            return []
        rows = self._rows(
            f"select {self._EXT_COLUMNS} from external_chunks"
            " where (cast(%(c)s as text) is null or collection = %(c)s)"
            " and (cast(%(s)s as text) is null or source_path = %(s)s)"
            " and (cast(%(ac)s as text) is null"
            '      or (collection collate "C", id collate "C") > (%(ac)s, %(ai)s))'
            ' order by collection collate "C", id collate "C" limit %(limit)s',
            {
                "c": collection,
                "s": source_path,
                "ac": after[0] if after else None,
                "ai": after[1] if after else "",
                "limit": limit,
            },
        )
        return [self._ext(r, False) for r in rows]

    def delete_external(self, chunk_id: str) -> bool:
        if not self.exists():
            return False
        with self._lock, self._conn().transaction(), self._conn().cursor() as cur:
            cur.execute(b"delete from external_chunks where id = %s", (chunk_id,))
            return cur.rowcount > 0

    def vector_dimensions(self) -> int | None:
        if self.has_vectors() and self._layout().dimensions > 0:
            return self._layout().dimensions
        if not self.exists():
            return None
        rows = self._rows("select vector_dims(embedding) from external_chunks limit 1")
        return int(rows[0][0]) if rows else None

    def nearest_chunks(
        self, vector: npt.NDArray[np.float32], limit: int, spec: ChunkFilterSpec
    ) -> list[tuple[StoredChunk, float]]:
        """Exact cosine over both kinds (ordered by similarity, an expression the HNSW index does
        not serve); ``spec`` is a WHERE clause (``chunk_filter_sql``), so it filters before the limit."""
        if not self.exists() or limit <= 0:
            return []
        probe = unit(vector)
        scored: list[tuple[StoredChunk, float]] = []
        if spec.wants(MARKDOWN) and self.has_vectors() and self.vector_dimensions() == len(probe):
            layout = self._layout()
            exact = layout.exact_distance("v")  # int8: the float query against the codes, as SQLite
            where, params = chunk_filter_sql(spec, "d.path", "d.properties", self._utf8())
            rows = self._rows(
                f"select {self._md_columns()}, 1 - ({exact}) as score{self._md_from()}"
                f" where v.embedding is not null{where}"
                ' order by score desc, d.path collate "C", c.ordinal limit %(limit)s',
                {**params, **layout.probe(probe), "limit": limit},
            )
            scored += [(self._md(row[:-1], False), float(row[-1])) for row in rows]
        where, params = chunk_filter_sql(spec, "source_path", "metadata", self._utf8())
        if spec.collections is not None:
            where += " and collection = any(cast(%(collections)s as text[]))"
            params["collections"] = list(spec.collections)
        rows = self._rows(
            f"select {self._EXT_COLUMNS}, 1 - (embedding <=> %(v)s) as score from external_chunks"
            f" where not stale and vector_dims(embedding) = %(n)s{where}"
            ' order by score desc, collection collate "C", id collate "C" limit %(limit)s',
            {**params, "v": probe, "n": len(probe), "limit": limit},
        )
        scored += [(self._ext(row[:-1], False), float(row[-1])) for row in rows]
        scored.sort(key=lambda pair: (-pair[1], pair[0].collection, pair[0].id))
        return [(replace(c, vector=None), s) for c, s in scored[:limit]]

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        with self._lock:
            yield

    @contextmanager
    def write_batch(
        self, hold: AbstractContextManager[Any] | None = None, parsing: bool = False
    ) -> Iterator[WriteBatch]:
        """This thread's document writes are sent without waiting for each, each still its own
        transaction, until the batch is flushed (:mod:`.pg_batch`, decision 680). Any other port
        call of the thread flushes it first (:func:`_reconnecting`), so it sees them written.
        Also while the caller parses between writes (``parsing``): each document commits on its
        own, so no lock of the server is held across a parse, only ``hold`` (decision 720)."""
        if getattr(self._local, "batch", None) is not None:
            raise RuntimeError("write batches do not nest")

        def active(batch: PipelinedBatch | None) -> None:
            self._local.batch = batch

        batch = PipelinedBatch(self._batch_session, hold, active)
        self._local.batch = batch
        try:
            yield batch
        finally:
            try:
                batch.close()  # may write its last window again (which routes around the batch)
            finally:
                self._local.batch = None

    def _batch(self) -> PipelinedBatch | None:
        batch: PipelinedBatch | None = getattr(self._local, "batch", None)
        return batch

    @contextmanager
    def exclusive_pass(self, name: str, wait: bool) -> Iterator[bool]:
        """A session advisory lock on a connection of its own: PostgreSQL releases it when the
        pass ends or the holding server dies (its connection drops), so a killed reindexer never
        leaves the lock behind. A lock whose session was lost while the pass runs is taken again
        by the pass's next port call, or the pass stops (:meth:`_keep_passes`, decision 526)."""
        key = f"local-vector-search-mcp:{self._schema}:{name}"
        conn = self._lock_session()
        try:
            if wait:
                conn.execute(b"select pg_advisory_lock(hashtextextended(%s, 0))", (key,))
                held = True
            else:
                held = self._try_lock(conn, key)
        except BaseException:
            conn.close()
            raise
        lock = _PassLock(name, key, conn)
        passes: list[_PassLock] = self._local.__dict__.setdefault("passes", [])
        if held:
            passes.append(lock)
        try:
            yield held
        finally:
            if held:
                passes.remove(lock)
            lock.conn.close()

    def _lock_session(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self._url, autocommit=True, **CONNECT_OPTIONS)
        except psycopg.Error as exc:
            raise connect_failure(exc, self._url, self._location) from None

    @staticmethod
    def _try_lock(conn: psycopg.Connection[Any], key: str) -> bool:
        row = conn.execute(b"select pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()
        return bool(row and row[0])

    def _keep_passes(self) -> None:
        """The passes this thread runs still hold their locks, else take them again or stop.

        A session the server ended (pg_terminate_backend, a restart) released its advisory lock,
        and the pass's own calls reconnect on their own (decision 499), so a second reindexer
        could start alongside. An idle lock session receives nothing unless the server ended it
        (it then sends its error and closes), so a readable socket is the cheap sign: one
        `select` per port call of the pass, a round trip only then."""
        for lock in self._local.__dict__.get("passes", ()):
            if not lock.conn.closed and not _readable(lock.conn):
                continue
            try:
                lock.conn.execute(b"select 1")
                continue  # something else was waiting on the socket: the session stands
            except psycopg.Error:
                lock.conn.close()
            conn = self._lock_session()
            try:
                retaken = self._try_lock(conn, lock.key)
            except psycopg.Error as exc:
                conn.close()
                raise IndexUnavailable(
                    f"The {lock.name} pass lost its lock at {self._location} ({_scrubbed(exc, self._url)}) "
                    "and stopped. Your Markdown is not affected."
                ) from None
            if not retaken:
                conn.close()
                raise IndexUnavailable(
                    f"The {lock.name} pass stopped: its PostgreSQL session at {self._location} was lost "
                    "and another server has started that pass meanwhile (it goes on). "
                    "Your Markdown is not affected."
                )
            lock.conn = conn
            log.warning("the PostgreSQL session holding the %s pass's lock was lost; lock taken again", lock.name)

    def _refused(self, reason: str) -> IndexNotReady:
        return IndexNotReady(
            f"The PostgreSQL user may not do this on the index at {self._location} ({reason}) Have the "
            f"schema's owner grant it rights on the schema {self._schema!r} and its tables (reading needs "
            "usage and select; indexing and edits also insert, update, delete and create), or connect as "
            "the owner. Your Markdown is not affected."
        )

    def _schema_refused(self) -> bool:
        """The schema exists but this user may not use it (its tables then look missing)."""
        try:
            rows = self._rows(
                "select has_schema_privilege(n.oid, 'USAGE') from pg_namespace n where n.nspname = %s",
                (self._schema,),
            )
        except psycopg.Error:
            return False
        return bool(rows) and not rows[0][0]

    @property
    def file_replacements(self) -> int:
        """How often the index's schema or tables were found dropped under this store."""
        return self._schema_losses

    def _forget_schema(self) -> None:
        """Our tables are gone (a `drop schema` from outside): every session is closed, so the
        next one creates the schema again before any table (with the schema missing, a table
        would land in the next schema of the search path, ``public``), and what this process
        cached about the tables is dropped."""
        self.close()
        self._ready = False
        self._layout_cache = None
        self._centre_settled = False
        self._stats_cache = None
        self._lengths_ready = False
        self._schema_losses += 1

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()


# The port's methods that run SQL. A session the server ended (a restart, pg_terminate_backend, a
# dropped network link) failed the next call of every thread that held one, with a traceback on
# the wire (INTERNAL_ERROR); our tables dropped underneath failed every call until a restart.
# The outermost call of a thread now retries once on a new session, and a dropped schema is
# INDEX_NOT_READY naming the reindex that builds it again (decision 499).
_NO_SQL = frozenset({"close", "write_lock", "write_batch", "exclusive_pass", "check"})
_GONE = (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName)
# the calls a writer makes for each document inside a write batch, which does not flush for them
_BATCHED = frozenset({"replace_document", "vectors_by_text_hash", "exists"})


@dataclass(slots=True)
class _PassLock:
    name: str
    key: str
    conn: psycopg.Connection[Any]


def _readable(conn: psycopg.Connection[Any]) -> bool:
    try:
        ready, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(ready)


def _reconnecting(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        local = self._local
        if getattr(local, "outer", False):  # an inner call: its transaction belongs to the outer one
            return method(self, *args, **kwargs)
        local.outer = True
        try:
            batch = getattr(local, "batch", None) if method.__name__ not in _BATCHED else None
            for attempt in (1, 2):
                try:
                    self._keep_passes()
                    if batch is not None:
                        batch.flush()  # what this call reads or writes comes after the documents sent
                    return method(self, *args, **kwargs)
                except psycopg.OperationalError as exc:
                    conn = getattr(local, "conn", None)
                    if conn is None or not conn.closed:
                        raise  # the session still stands (a cancelled statement): not ours to retry
                    reason = _scrubbed(exc, self._url)
                    if attempt == 2:
                        raise IndexUnavailable(
                            f"The connection to PostgreSQL at {self._location} was lost twice in a row ({reason}) "
                            "Retry shortly; check that the server is running. Your Markdown is not affected."
                        ) from None
                    # nothing of an aborted transaction was committed, and every port write sets a
                    # state (replace, store, delete by key): running the call again is safe
                    log.warning("the PostgreSQL session was lost (%s); reconnecting", reason)
                except psycopg.errors.InsufficientPrivilege as exc:
                    # the statement's text (PostgreSQL's "LINE 2: ...") says nothing to the reader
                    raise self._refused(_scrubbed(exc, self._url).split(" LINE ")[0]) from None
                except _GONE:
                    if self._schema_refused():  # without usage the search path skips the schema
                        raise self._refused(f"permission denied for schema {self._schema}.") from None
                    self._forget_schema()
                    raise IndexNotReady(
                        f"The index's tables at {self._location} are gone (dropped from outside the server). "
                        "Run kb_reindex (CLI: --reindex) to build the index again; your Markdown is not affected."
                    ) from None
            raise AssertionError("unreachable")
        finally:
            local.outer = False

    return call


for _name, _method in inspect.getmembers(PostgresStore, inspect.isfunction):
    if not _name.startswith("_") and _name not in _NO_SQL:
        setattr(PostgresStore, _name, _reconnecting(_method))
