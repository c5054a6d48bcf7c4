"""``pg_lexemes.chunk_lexemes`` stores what the two functions it replaced stored (decision 565).

The reference below is the code of ``postgres.tsvector_literal`` and ``pg_rank.chunk_lengths``
before they were fused: each lexeme's positions grouped in Python, the first 256 kept. The new
literal lists one entry per token and leaves the grouping to PostgreSQL's ``tsvector`` input,
so the literals differ as text; what must be equal is the value stored (compared as the
server's canonical text and with ``=``) and the lengths.
"""

from __future__ import annotations

import random
from pathlib import Path

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pg_server import PgServer
from shared_data import CORPORA

from local_vector_search_mcp.index.chunker import chunk_document
from local_vector_search_mcp.index.cjk import index_tokens
from local_vector_search_mcp.index.pg_lexemes import chunk_lexemes, lexeme
from local_vector_search_mcp.index.pg_rank import chunk_lengths
from local_vector_search_mcp.index.stem import STEM_MARK, stem_index_text, text_language
from local_vector_search_mcp.markdown import parse_document


def reference_literal(text: str, heading: str | None) -> str:
    """The literal as the adapter wrote it before decision 565 (verbatim, but for 984's folding)."""
    positions: dict[str, list[str]] = {}
    pos = 0
    language = text_language(heading or "", text)
    for part, weight in ((heading or "", "A"), (text, "B")):
        pos += 1
        start = pos
        for token in index_tokens(part):
            pos = min(pos + 1, 16383)
            # decision 984: a token past 500 characters is folded, no longer left out
            positions.setdefault(lexeme(token), []).append(f"{pos}{weight}")
        for i, word in enumerate(stem_index_text(part, language=language).split()):
            positions.setdefault(lexeme(STEM_MARK + word), []).append(f"{min(start + 1 + i, 16383)}C")

    def quoted(token: str) -> str:
        return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"

    return " ".join(f"{quoted(tok)}:{','.join(ps[:256])}" for tok, ps in positions.items())


# what stresses the literal: repeats past 256, positions past 16383 in either part, tokens past
# 500 characters, other scripts, another language's stems, nothing at all
HOSTILE = [
    ("", None),
    ("", ""),
    ("just a body", None),
    ("word " * 300 + "other words here", "word heading word"),
    ("body " * 17000 + "tail", "Heading"),
    ("after", "head " * 17000),
    ("x" * 501 + " short " + "y" * 500 + " " + "z" * 501, "q" * 600),
    ("\U0001d518" * 700 + " Ж" * 3 + "ж" * 1500, "walking" * 80),  # 4-byte letters; a long word with a stem
    ("Die Installation ist nicht schwer und die Konfiguration wird mit den Dateien gemacht", "Einrichtung"),
    ("Установка и настройка ёлки, елки", "Руководство"),
    ("機器學習很有趣 東京都 ติดตั้งโปรแกรม 검색합니다 café naïve n\u0308o", "日本語の見出し"),
    ("it's O'Reilly's back\\slash 'quoted' \"double\"", "Don't"),
    ("\ufffd control \x01\x02 chars and emoji 🤖 x² ½", None),
]


def corpus_chunks(per_corpus: int = 6) -> list[tuple[str, str | None]]:
    """The chunks of a few files of each shared corpus, picked at random (seeded)."""
    out: list[tuple[str, str | None]] = []
    rng = random.Random(565)
    for corpus in ("rust-book", "vue-docs-zh-cn", "opensearch-docs"):
        files = sorted((CORPORA / corpus).rglob("*.md"))
        for path in rng.sample(files, min(per_corpus, len(files))) if files else []:
            doc = parse_document(Path(path).read_bytes())
            out.extend((c.text, c.heading_path) for c in chunk_document(doc))
    return out


def stored(conn: psycopg.Connection, literals: list[str]) -> list[str]:
    rows = conn.execute(
        "select cast(l as tsvector)::text from unnest(cast(%s as text[])) with ordinality u(l, i) order by i",
        (literals,),
    ).fetchall()
    return [r[0] for r in rows]


def assert_same(conn: psycopg.Connection, chunks: list[tuple[str, str | None]]) -> None:
    new = [chunk_lexemes(text, heading) for text, heading in chunks]
    old = [reference_literal(text, heading) for text, heading in chunks]
    assert [n[1:] for n in new] == [chunk_lengths(text, heading) for text, heading in chunks]
    assert stored(conn, [n[0] for n in new]) == stored(conn, old)
    (equal,) = conn.execute(
        "select bool_and(cast(a as tsvector) = cast(b as tsvector)) from unnest(cast(%s as text[]), cast(%s as text[]))"
        " u(a, b)",
        ([n[0] for n in new], old),
    ).fetchone() or (None,)
    assert equal is not False


def test_the_stored_tsvectors_and_lengths_are_those_of_before(pg_server: PgServer) -> None:
    chunks = HOSTILE + corpus_chunks()
    assert len(chunks) > len(HOSTILE) or not CORPORA.is_dir()
    with psycopg.connect(pg_server.url) as conn:
        assert_same(conn, chunks)
        # and the cases that matter are there: the cap of 256 and of the position 16383 applied
        capped = stored(conn, [chunk_lexemes(*HOSTILE[4])[0]])[0]
        assert "16383" in capped and capped.count(",") >= 255


@pytest.fixture(scope="module")
def conn(pg_server: PgServer) -> psycopg.Connection:
    with psycopg.connect(pg_server.url) as connection:
        yield connection


_WORDS = st.sampled_from(
    ["index", "indexes", "Indexing", "the", "a", "café", "Straße", "東京", "ёлка", "'", "\\", "x²", "--", "\n", " "]
)


@settings(max_examples=60, deadline=None)
@given(
    body=st.lists(st.one_of(_WORDS, st.text(max_size=8)), max_size=40).map(" ".join),
    heading=st.none() | st.lists(_WORDS, max_size=6).map(" ".join),
)
def test_random_texts_store_what_they_stored_before(conn: psycopg.Connection, body: str, heading: str | None) -> None:
    text, head = (s if s is None else s.replace("\x00", "\ufffd") for s in (body, heading))
    assert text is not None
    assert_same(conn, [(text, head)])


def test_parse_workers_derive_the_lexemes_and_the_writer_stores_them(
    tmp_path: Path, pg_server: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 566: on PostgreSQL the parse workers work out each chunk's lexical columns
    (instead of SQLite's stems text and packed body, which this adapter never reads), so the one
    writer only runs SQL; the rows stored are those the writer derived before."""
    from kb_fakes import make_workspace

    from local_vector_search_mcp.index import parallel, postgres
    from local_vector_search_mcp.index.prepare import ChunkSettings, Prepared, Task, prepare

    monkeypatch.setattr(parallel, "MIN_PARALLEL_FILES", 0)  # workers however small the tree
    texts = {f"n{i}.md": f"# Note {i} café\n\nIndexing notes, {i} of them; 東京 and naïve words.\n" for i in range(12)}
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    ws = make_workspace(
        tmp_path,
        storage__backend="postgresql",
        storage__url=pg_server.url,
        storage__schema=pg_server.fresh_schema(),
        knowledge_base__index_workers=2,
    )
    settings = ChunkSettings.from_config(ws.config)
    assert settings.derive == "postgresql"
    prepared = prepare(tmp_path, Task("n0.md"), settings)
    assert isinstance(prepared, Prepared)
    for c in prepared.chunks:
        assert c.lexemes == chunk_lexemes(c.text, c.heading_path) and c.stems is None and c.packed_body is None

    def never(*_: object) -> tuple[str, int, int]:
        raise AssertionError("the writer derived a chunk's lexemes itself")

    monkeypatch.setattr(postgres, "chunk_lexemes", never)  # the writer's process only
    try:
        assert ws.indexing.reindex("changed", False).indexed_files == len(texts)
        rows = ws.store._rows("select text, heading_path, tsv::text, ntok, nstem from chunks order by id")
        assert len(rows) >= len(texts)
        expected = stored(ws.store._conn(), [reference_literal(text, heading) for text, heading, *_ in rows])
        assert [r[2] for r in rows] == expected
        assert [(r[3], r[4]) for r in rows] == [chunk_lengths(r[0], r[1]) for r in rows]
    finally:
        ws.store.close()
