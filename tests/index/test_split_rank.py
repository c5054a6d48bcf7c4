"""A ranking split into rowid ranges on several threads (decision 635) returns exactly what one
ranking of the whole table returns: the same rows, scores and order, with ties, stems, scopes
and CJK; the ranges cover the ids once; failures surface; a busy pool costs nothing."""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.index import split_rank
from local_vector_search_mcp.index.port import ChunkRecord, DocumentRecord
from local_vector_search_mcp.index.query import AnyOf, PathScope, Term
from local_vector_search_mcp.index.split_rank import IdleCores, merge_ranked, row_ranges, run_all, split_parts
from local_vector_search_mcp.index.sqlite import SqliteStore

WORDS = [
    *["read", "whole", "contents", "file", "string", "error", "handle", "panic"],
    *["result", "value", "iterator", "map", "collect", "索引", "検索"],
]


@given(st.integers(-5, 10**6), st.integers(0, 10**5), st.integers(1, 8))
def test_ranges_cover_the_span_once_in_order(lo: int, width: int, parts: int) -> None:
    ranges = row_ranges((lo, lo + width), parts)
    assert ranges[0][0] == lo and ranges[-1][1] == lo + width
    assert all(a <= b for a, b in ranges)
    assert all(prev[1] + 1 == nxt[0] for prev, nxt in itertools.pairwise(ranges))
    assert len(ranges) == min(parts, width + 1)


def test_small_indexes_and_single_cores_are_not_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split_rank, "idle_cores", lambda: None)
    monkeypatch.setattr(split_rank, "available_cores", lambda: 2)
    assert split_parts(None) == 1
    assert split_parts((1, split_rank.SPLIT_MIN_SPAN - 1)) == 1
    assert split_parts((1, split_rank.SPLIT_MIN_SPAN)) == 2
    monkeypatch.setattr(split_rank, "available_cores", lambda: 64)
    assert split_parts((1, 10**6)) == split_rank.MAX_PARTS
    monkeypatch.setattr(split_rank, "available_cores", lambda: 1)
    assert split_parts((1, 10**6)) == 1


def test_a_busy_machine_is_not_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split_rank, "available_cores", lambda: 2)
    big = (1, 10**6)
    for idle, parts in [(None, 2), (1.6, 2), (split_rank.SPLIT_MIN_IDLE, 2), (0.3, 1), (0.0, 1)]:
        monkeypatch.setattr(split_rank, "idle_cores", lambda idle=idle: idle)
        assert split_parts(big) == parts, idle


def _stat(path: Path, idle: int, busy: int) -> None:
    """A /proc/stat of two cores: ``busy`` ticks of user time and ``idle`` idle ticks in all."""
    path.write_text(
        f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\nintr 1 2 3\n",
        encoding="ascii",
    )


def test_idle_cores_reads_the_share_of_idle_ticks_between_readings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [100.0]
    monkeypatch.setattr(split_rank.time, "monotonic", lambda: clock[0])
    stat = tmp_path / "stat"
    _stat(stat, idle=1000, busy=1000)
    idle = IdleCores(str(stat), period=0.5, stale=5.0)
    assert idle() is None  # one reading tells nothing yet
    _stat(stat, idle=1150, busy=1050)  # 150 of 200 ticks idle, on two cores
    clock[0] += 0.2
    assert idle() is None  # within the period: the last answer again
    clock[0] += 0.4
    assert idle() == pytest.approx(1.5)
    _stat(stat, idle=1160, busy=1240)  # 10 of 200 idle: both cores busy
    clock[0] += 0.6
    assert idle() == pytest.approx(0.1)
    _stat(stat, idle=1360, busy=1240)
    clock[0] += 60  # a quiet minute later: that reading is too old to tell the last half second
    assert idle() is None
    stat.unlink()
    clock[0] += 1
    assert idle() is None  # no /proc/stat (not Linux)
    stat.write_text("intr 1 2\n", encoding="ascii")
    assert IdleCores(str(stat))() is None


def test_idle_cores_on_this_machine_is_a_number_of_cores() -> None:
    idle = IdleCores(period=0.0)
    first = idle()
    threading.Event().wait(0.05)
    second = idle()
    if Path("/proc/stat").exists():
        assert first is None and second is not None and 0.0 <= second <= 1024
    else:
        assert second is None


@given(st.lists(st.lists(st.tuples(st.integers(0, 50), st.sampled_from([-3.0, -2.0, -1.0])), max_size=8), max_size=4))
def test_merge_keeps_the_best_with_ties_in_part_order(parts: list[list[tuple[int, float]]]) -> None:
    ranked = [sorted(p, key=lambda r: r[1]) for p in parts]
    merged = merge_ranked(ranked, 5)
    flat = [r for p in ranked for r in p]
    assert merged == sorted(flat, key=lambda r: r[1])[:5]


def test_run_all_returns_in_order_and_raises_after_everything_ended() -> None:
    assert run_all([lambda i=i: i * i for i in range(6)]) == [0, 1, 4, 9, 16, 25]
    ended: list[int] = []

    def fails() -> int:
        raise ValueError("part 2")

    def slow(i: int) -> int:
        threading.Event().wait(0.05)
        ended.append(i)
        return i

    with pytest.raises(ValueError, match="part 2"):
        run_all([lambda: slow(0), lambda: slow(1), fails, lambda: slow(3)])
    assert 0 in ended  # the caller's own part ran to its end before the error was raised


def test_a_busy_pool_hands_the_parts_back_to_the_caller() -> None:
    gate = threading.Event()
    blockers = [split_rank._executor().submit(gate.wait) for _ in range(split_rank.MAX_PARTS)]
    try:
        threads: set[str] = set()
        results = run_all([lambda i=i: (threads.add(threading.current_thread().name), i)[1] for i in range(3)])
        assert results == [0, 1, 2]
        assert threads == {threading.current_thread().name}  # every pool thread was taken
    finally:
        gate.set()
        for b in blockers:
            b.result()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "index.db")
    s.ensure_schema(None, "float32")
    rng = random.Random(7)
    for d in range(60):
        chunks = []
        for i in range(10):
            text = " ".join(rng.choices(WORDS, k=rng.randint(3, 30)))
            if i % 4 == 0:
                text = "read the whole file into a string"  # identical rows: ties across ranges
            heading = rng.choice([None, "Reading files", "Errors", "索引"])
            chunks.append(ChunkRecord(i, f"p{i}", f"a{i}", text, heading, f"h{d}-{i}"))
        s.replace_document(DocumentRecord(f"dir{d % 3}/doc{d}.md", f"{d:064d}", 1, 1, "2026-12-03T00:00:00Z"), chunks)
    try:
        yield s
    finally:
        s.close()


QUERIES = [
    AnyOf((Term("read"), Term("whole"), Term("file"))),
    AnyOf((Term("reading"), Term("errors"), Term("handles"), Term("panics")), coverage=1.0),
    Term("string"),
    AnyOf((Term("索引"), Term("iterator"))),
]


@pytest.mark.parametrize("query", QUERIES, ids=["or", "stemmed-question", "term", "cjk"])
@pytest.mark.parametrize("scope", [None, PathScope(("dir1/**",), ())], ids=["all", "scoped"])
def test_a_split_ranking_returns_what_one_ranking_returns(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch, query: AnyOf | Term, scope: PathScope | None
) -> None:
    whole = [(h.chunk_id, h.path) for h in store.lexical(query, 40, scope)]
    assert whole
    splits: list[int] = []
    real = split_rank.row_ranges
    monkeypatch.setattr(split_rank, "SPLIT_MIN_SPAN", 2)
    monkeypatch.setattr(split_rank, "idle_cores", lambda: None)  # whatever else this machine runs
    monkeypatch.setattr(split_rank, "available_cores", lambda: 3)
    monkeypatch.setattr(
        "local_vector_search_mcp.index.sqlite.row_ranges", lambda span, parts: splits.append(parts) or real(span, parts)
    )
    assert [(h.chunk_id, h.path) for h in store.lexical(query, 40, scope)] == whole
    assert splits == [3]
    ranked = store._rank_all([("chunks_fts", '"read" OR "file"')], 40, scope)[0]
    monkeypatch.setattr(split_rank, "SPLIT_MIN_SPAN", 10**9)
    assert store._rank_all([("chunks_fts", '"read" OR "file"')], 40, scope)[0] == ranked  # scores too


def test_a_ranking_inside_a_transaction_is_not_split(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(split_rank, "SPLIT_MIN_SPAN", 2)
    monkeypatch.setattr(split_rank, "idle_cores", lambda: None)  # whatever else this machine runs
    monkeypatch.setattr(split_rank, "available_cores", lambda: 2)
    called: list[object] = []
    monkeypatch.setattr("local_vector_search_mcp.index.sqlite.run_all", called.append)
    with store._write():
        assert store._rank_all([("chunks_fts", '"file"')], 10, None)[0]
    assert not called


def test_a_ranking_while_another_runs_is_not_split(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many searches at once already use every core: splitting them only adds the ranges' idf
    recounts (decision 635)."""
    monkeypatch.setattr(split_rank, "SPLIT_MIN_SPAN", 2)
    monkeypatch.setattr(split_rank, "idle_cores", lambda: None)  # whatever else this machine runs
    monkeypatch.setattr(split_rank, "available_cores", lambda: 2)
    split: list[object] = []
    real = split_rank.run_all
    monkeypatch.setattr("local_vector_search_mcp.index.sqlite.run_all", lambda calls: split.append(1) or real(calls))
    with split_rank.alone() as only:
        assert only
        assert store._rank_all([("chunks_fts", '"file"')], 10, None)[0]
    assert not split
    assert store._rank_all([("chunks_fts", '"file"')], 10, None)[0]
    assert split == [1]


def _vm_steps(store: SqliteStore, run: Callable[[], object]) -> int:
    """Tens of SQLite virtual-machine steps ``run`` takes on the store's connection: a count that
    does not depend on the machine's speed."""
    count = [0]

    def tick() -> bool:
        count[0] += 1
        return False  # go on

    conn = store._conn()
    conn.set_progress_handler(tick, 10)  # called every 10 steps
    try:
        run()
    finally:
        conn.set_progress_handler(None)
    return count[0]


def test_the_id_span_seeks_instead_of_reading_every_chunk(store: SqliteStore) -> None:
    """Every lexical search on a large index asks for the lowest and highest chunk id. SQLite
    seeks for a lone min() or max(), but with both in one SELECT it scanned every chunk: 3.4 ms
    of a 16 ms search at 50k chunks (decision 656)."""
    span: list[object] = []
    steps = _vm_steps(store, lambda: span.append(store._id_span()))
    assert span == [(1, 600)]
    assert steps < 20  # a scan of the 600 chunks takes hundreds


def _by_rank(store: SqliteStore, table: str, match: str, limit: int) -> list[tuple[int, float]]:
    sql = f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?"
    return [(r[0], r[1]) for r in store._conn().execute(sql, (match, limit))]


@pytest.mark.parametrize("limit", [1, 10, 50, 1000])
@pytest.mark.parametrize(
    ("table", "match"),
    [
        ("chunks_fts", '"read" OR "whole" OR "file"'),
        ("chunks_fts", '"string"'),
        ("chunks_fts", '"索引" OR "iterator" OR "errors"'),
        ("chunks_stems", '"read" OR "error"'),
    ],
)
def test_ranking_by_name_is_fts5s_rank(store: SqliteStore, table: str, match: str, limit: int) -> None:
    """An unscoped ranking calls each table's bm25 by name (decision 657): the rows, scores and
    order of FTS5's own ``ORDER BY rank`` (the weights the table was made with), ties included:
    every fourth chunk of the store is the same sentence."""
    assert store._ranked(table, match, limit, None) == _by_rank(store, table, match, limit)


def test_ranking_by_name_sorts_only_what_the_limit_keeps(store: SqliteStore) -> None:
    """``ORDER BY rank`` had FTS5 sort every match before the LIMIT; by name, SQLite keeps only
    the best ``limit`` (a third less CPU at 50k). Counted in virtual-machine steps."""
    match = '"read" OR "whole" OR "file" OR "string" OR "error"'
    by_name = _vm_steps(store, lambda: store._ranked("chunks_fts", match, 10, None))
    by_rank = _vm_steps(store, lambda: _by_rank(store, "chunks_fts", match, 10))
    assert by_name < by_rank, (by_name, by_rank)


# ------------------------------------------------------------- narrow scopes (decision 658)
NARROW = [
    PathScope(("dir1/doc1.md",)),  # one document: one run of ids
    PathScope(("dir1/doc1*.md",)),  # doc1, doc10, doc13, doc16, doc19: five runs
    PathScope(("dir2/doc5*.md",), ("**/doc59.md",)),  # an exclude too: doc5, doc50, doc53, doc56
    PathScope(paths=frozenset({"dir0/doc3.md", "dir2/doc5.md"})),  # a tag filter's paths
]
RANKINGS = [
    ("chunks_fts", '"read" OR "whole" OR "file"'),
    ("chunks_fts", '"索引" OR "iterator"'),
    ("chunks_stems", '"read" OR "error"'),
]


@pytest.mark.parametrize("scope", NARROW, ids=["one", "five", "excluded", "paths"])
@pytest.mark.parametrize("limit", [1, 10, 200])
def test_a_narrow_scope_ranked_by_its_id_runs_is_the_join(store: SqliteStore, scope: PathScope, limit: int) -> None:
    """A scope admitting few documents ranks their chunks' id runs without a join: the rows,
    scores and order of the join over FTS5's ``rank`` (ties included: every fourth chunk is the
    same sentence)."""
    runs = store._scope_ranges(scope)
    assert runs is not None and 1 <= len(runs) <= 8
    for table, match in RANKINGS:
        assert store._rank_all([(table, match)], limit, scope)[0] == store._ranked(table, match, limit, scope)


def test_wide_or_scattered_scopes_keep_the_join(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from local_vector_search_mcp.index import sqlite

    assert store._scope_ranges(PathScope(("dir1/**",))) is None  # a third of the documents
    assert store._scope_ranges(None) is None and store._scope_ranges(PathScope()) is None
    monkeypatch.setattr(sqlite, "SCOPE_RANGES", 4)
    assert store._scope_ranges(PathScope(("dir1/doc1*.md",))) is None  # five runs
    scope = PathScope(("dir1/doc1*.md",))
    match = '"read" OR "whole" OR "file"'
    assert store._rank_all([("chunks_fts", match)], 50, scope)[0] == store._ranked("chunks_fts", match, 50, scope)


def test_a_wide_scope_is_known_after_an_eighth_of_the_documents(store: SqliteStore) -> None:
    """``**/*.md`` or an exclude admits nearly everything: testing every path (about 5 ms at
    9,000 documents, again after each edit) to learn that would tax every such search."""
    scope = PathScope(("**/*.md",), ("dir0/doc3.md",))
    key = store._scope_key(scope)
    real, tested = store._scopes[key], []
    store._scopes[key] = lambda path: tested.append(path) or real(path)
    assert store._scope_ranges(scope) is None
    assert len(tested) <= 60 // 8 + 2  # eight admitted (one of the first is excluded), not all 60


def test_a_narrow_scopes_runs_follow_the_index(store: SqliteStore) -> None:
    """Kept per scope until the index changes: a document written again takes new ids."""
    scope = PathScope(("dir1/doc1*.md",))
    before = store._scope_ranges(scope)
    store.replace_document(
        DocumentRecord("dir1/doc10.md", "f" * 64, 1, 1, "2026-12-04T00:00:00Z"),
        [ChunkRecord(0, "p0", "a0", "read the whole file anew", None, "new-0")],
    )
    after = store._scope_ranges(scope)
    assert after is not None and after != before
    assert max(hi for _, hi in after) == store._id_span()[1]  # type: ignore[index]
    match = '"read" OR "anew"'
    ranked = store._rank_all([("chunks_fts", match)], 50, scope)[0]
    assert ranked == store._ranked("chunks_fts", match, 50, scope)
    assert ranked[0][0] == store._id_span()[1]  # type: ignore[index]
