"""The team backend answers as the SQLite one (decision 310): the same corpus, indexed on SQLite and
copied to a real PostgreSQL (``index copy``: the same chunks and vectors), gives the same ranked
results in every mode, for queries that exercise each part of lexical ranking (rare against common
words, stems with the exact form first, CJK, punctuated identifiers, phrases, questions, titles,
duplicate passages with ``alsoIn``). Measured on the shared sets by ``bench/bench_pg_quality.py``."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kb_fakes import HashEmbedder, KbClient, make_workspace
from pg_server import PgServer

from local_vector_search_mcp.index import pg_rank
from local_vector_search_mcp.index.copy import copy_index
from local_vector_search_mcp.index.postgres import PostgresStore
from local_vector_search_mcp.index.query import AnyOf, Phrase, Term

DIMS = 32


class DistinctEmbedder(HashEmbedder):
    """The test bag of words plus a little of a vector drawn from the whole text, so no two chunks
    are at the same distance from a query (the engines order ties differently)."""

    def _vec(self, text: str) -> np.ndarray:
        seed = int(hashlib.md5(text.encode()).hexdigest()[:8], 16)
        v = super()._vec(text) + 0.05 * np.random.default_rng(seed).standard_normal(self.dims).astype(np.float32)
        return v / np.linalg.norm(v)


FINGERPRINT = hashlib.sha512(b"parity").hexdigest() * 6  # 768 characters, one token
BLOB = "Ж" * 1500  # 3,000 bytes
FILLER = "The index keeps the index settings of the index for every index request. "

CORPUS = {
    # a common word repeated against a rare one (BM25's idf; ts_rank has none)
    "common.md": "# Index settings\n\n" + FILLER * 6 + "\n\n## Replicas\n\nIndex replicas copy the index.\n",
    "rare.md": "# Quetzal\n\nThe quetzal plugin configures one index once.\n",
    "other.md": "# Refresh\n\nRefresh the index to see new documents. The index refresh interval is one second.\n",
    # stems: the exact form first, inflections after
    "shell/echo.md": "# Echo\n\nThe echo command prints its arguments. Echoes go to standard output.\n",
    "shell/echoing.md": "# Terminal\n\nEchoing a password is unsafe: turn echoing off while the user types.\n",
    # a hyphenated word: the exact form first, its parts' inflections after (decision 1017)
    "ml/tuned.md": "# Tuned models\n\nA fine-tuned model answers in the house style.\n",
    "ml/tuning.md": "# Training\n\nFine-tuning a model on your data takes an hour. Models, models.\n",
    # identifiers with punctuation
    "rust/rc.md": "# Reference counting\n\nCall `Rc::strong_count(&a)` to read the count. Rc is not Send.\n",
    "rust/test.md": "# Running tests\n\nRun `cargo test -- --test-threads=1` to run the tests one at a time."
    "\n\n## Filtering\n\nPass a name to `cargo test` to run only matching tests.\n",
    "rust/threads.md": "# Threads\n\nSpawn threads with `thread::spawn`; join the threads to wait."
    " Threads share data.\n",
    # CJK
    "zh/state.md": "# 状态管理\n\n在组件之间共享状态可以使用响应式 API。\n\n"
    "## 侦听器\n\n侦听器在状态变化时执行副作用。\n",
    "zh/props.md": "# 属性\n\n子组件不应该修改父组件传入的属性，应该触发事件。\n",
    # accented words: FTS5 folds diacritics (unicode61 remove_diacritics 2), so must PostgreSQL
    "fr/cafe.md": "# Le café\n\nUn café crème, une façade naïve. Crème brûlée au dessert.\n",
    "fr/menu.md": "# Cafe menu\n\nThe cafe serves coffee, creme brulee and more coffee.\n",
    # a title query
    "search/pit.md": "# Point in time\n\nA point in time keeps a consistent view of the data while you page.\n",
    "search/paging.md": "# Paging\n\nUse search after with a point in time, or scroll."
    " Each point costs memory in time.\n",
    # the same passage in two versions (collapsed, the other copy in alsoIn)
    "v1/upgrade.md": "# Upgrade\n\nStop every node, replace the binaries, then start the nodes again.\n",
    "v2/upgrade.md": "# Upgrade\n\nStop every node, replace the binaries, then start the nodes again.\n",
    # tokens past PostgreSQL's 2 KB lexeme and past the 500 characters it is given (decision 984)
    "keys/fingerprint.md": f"# Signing key\n\nThe key's fingerprint is {FINGERPRINT}.\n",
    "keys/blob.md": f"# Blob\n\nAn inline blob {BLOB} ends here.\n",
}

QUERIES = [
    # a document's path or file name (decision 795)
    "rust/rc.md",
    "ECHOING.md",
    "v2/upgrade",
    "configure quetzal index",
    "index settings",
    "echoing",
    "echo",
    "fine-tuned models",
    "fine-tuning",
    "Rc::strong_count",
    "cargo test -- --test-threads=1",
    "共享状态",
    "子组件修改父组件的属性",
    "how do I stop echoing a password while the user types",
    "point in time",
    "replace the binaries",
    "threads share data",
    "café crème",
    "naive facade",
    "creme brulee",
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, pg_server: PgServer) -> Iterator[tuple[KbClient, KbClient]]:
    root = tmp_path_factory.mktemp("parity")
    for rel, text in CORPUS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    embedder = DistinctEmbedder(DIMS)
    lite = KbClient(make_workspace(root, "local", storage=root.parent / "parity.db", embedder=embedder))
    lite.reindex()
    pg = KbClient(
        make_workspace(
            root,
            "local",
            embedder=embedder,
            storage__backend="postgresql",
            storage__url=pg_server.url,
            storage__schema=pg_server.fresh_schema(),
        )
    )
    copy_index(lite.store, pg.store)
    try:
        yield lite, pg
    finally:
        lite.store.close()
        pg.store.close()


def _answers(client: KbClient, query: str, mode: str) -> list[tuple[Any, ...]]:
    results = client.search(query=query, mode=mode, top_k=10)["results"]
    return [(r["path"], r["pointer"], tuple((a["path"], a["pointer"]) for a in r.get("alsoIn", ()))) for r in results]


def test_lexical_answers_are_the_same_on_both_backends(pair: tuple[KbClient, KbClient]) -> None:
    lite, pg = pair
    for query in QUERIES:
        expected = _answers(lite, query, "lexical")
        assert expected, query
        assert _answers(pg, query, "lexical") == expected, query


def test_a_word_longer_than_a_postgresql_lexeme_is_found_alike(pair: tuple[KbClient, KbClient]) -> None:
    """PostgreSQL refuses a lexeme of 2 KB or more and the index left tokens past 500 characters
    out: a pasted fingerprint found its page on SQLite and nothing on PostgreSQL, and a query word
    of 2,047 bytes failed the whole query there (INTERNAL_ERROR). Both sides fold such a word now."""
    lite, pg = pair
    for query, page in (
        (FINGERPRINT, "keys/fingerprint.md"),
        (BLOB, "keys/blob.md"),
        ("fingerprint " + "x" * 2100, "keys/fingerprint.md"),  # the other word still counts
        ("Ж" * 1499, None),  # folded, it is still not the document's word
    ):
        for mode in ("lexical", "hybrid"):
            expected = _answers(lite, query, mode)
            assert _answers(pg, query, mode) == expected, (query[:20], mode)
            if mode == "lexical":
                assert [hit[0] for hit in expected][:1] == ([page] if page else []), query[:20]


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_semantic_and_hybrid_answers_are_the_same_on_both_backends(pair: tuple[KbClient, KbClient], mode: str) -> None:
    lite, pg = pair
    for query in QUERIES:
        assert _answers(pg, query, mode) == _answers(lite, query, mode), query


def test_a_query_no_word_of_which_is_indexed_warns_alike(pair: tuple[KbClient, KbClient]) -> None:
    """The lexical side's miss is seen by both stores' lexical queries (decision 810)."""
    warnings = []
    for client in pair:
        seen = {mode: client.search(query="zzqxj", mode=mode, top_k=3) for mode in ("lexical", "semantic", "hybrid")}
        assert seen["lexical"]["results"] == [] and seen["lexical"]["warning"].startswith("No indexed chunk contains")
        assert len(seen["hybrid"]["results"]) == 3 and "by meaning alone" in seen["hybrid"]["warning"]
        assert seen["semantic"]["warning"] is None
        assert client.search(query="quetzal", mode="hybrid")["warning"] is None
        warnings.append({mode: out["warning"] for mode, out in seen.items()})
    assert warnings[0] == warnings[1]


def test_a_rare_word_outranks_a_repeated_common_one(pair: tuple[KbClient, KbClient]) -> None:
    for client in pair:
        assert _answers(client, "configure quetzal index", "lexical")[0][0] == "rare.md"


def test_the_exact_form_ranks_before_inflections_and_identifiers_match_as_written(
    pair: tuple[KbClient, KbClient],
) -> None:
    for client in pair:
        echoing = [a[0] for a in _answers(client, "echoing", "lexical")]
        assert echoing[0] == "shell/echoing.md" and "shell/echo.md" in echoing  # echoes/echo by stem
        assert [a[0] for a in _answers(client, "fine-tuned models", "lexical")] == ["ml/tuned.md", "ml/tuning.md"]
        assert [a[0] for a in _answers(client, "fine-tuning", "lexical")] == ["ml/tuning.md", "ml/tuned.md"]
        assert _answers(client, "Rc::strong_count", "lexical")[0][0] == "rust/rc.md"
        assert _answers(client, "cargo test -- --test-threads=1", "lexical")[0][0] == "rust/test.md"
        assert _answers(client, "共享状态", "lexical")[0][0] == "zh/state.md"
        assert _answers(client, "point in time", "lexical")[0][0] == "search/pit.md"  # the title first


def test_duplicate_passages_collapse_with_also_in(pair: tuple[KbClient, KbClient]) -> None:
    for client in pair:
        top = _answers(client, "replace the binaries", "lexical")
        upgrade = [a for a in top if a[0].endswith("upgrade.md")]
        assert len(upgrade) == 1 and upgrade[0][0] == "v1/upgrade.md"
        assert [p for p, _ in upgrade[0][2]] == ["v2/upgrade.md"]


def test_frequencies_are_fts5s_weighted_hit_counts(pair: tuple[KbClient, KbClient]) -> None:
    """``2 * ts_rank_cd({0,0,0.5,1})`` counts a heading hit twice and a body hit once, phrases by
    occurrence; ``ts_rank_cd({0,1,0,0})`` counts the stems (weight C)."""
    _, pg = pair
    store: PostgresStore = pg.store
    rows = store._rows(
        "select c.heading_path, c.text,"
        " 2 * ts_rank_cd(cast(%(w)s as real[]), c.tsv, 'index', 0),"
        " 2 * ts_rank_cd(cast(%(w)s as real[]), c.tsv, $$'index' <-> 'settings'$$, 0),"
        " ts_rank_cd(cast(%(s)s as real[]), c.tsv, '~echo', 0), c.ntok, c.nstem from chunks c",
        {"w": pg_rank.HIT_WEIGHTS, "s": pg_rank.STEM_HIT_WEIGHTS},
    )
    from local_vector_search_mcp.index.cjk import index_tokens
    from local_vector_search_mcp.index.stem import stem

    for heading, text, index_f, phrase_f, echo_f, ntok, nstem in rows:
        h, b = index_tokens(heading or ""), index_tokens(text)

        def pairs(tokens: list[str]) -> int:
            return sum(1 for x, y in itertools.pairwise(tokens) if (x, y) == ("index", "settings"))

        assert index_f == 2 * h.count("index") + b.count("index")
        assert phrase_f == 2 * pairs(h) + pairs(b)
        assert echo_f == sum(1 for t in h + b if t.isascii() and t.isalpha() and len(t) >= 3 and stem(t) == "echo")
        assert (ntok, nstem) == pg_rank.chunk_lengths(text, heading)


def test_an_index_written_before_the_lengths_gets_them(tmp_path: Path, pg_server: PgServer) -> None:
    (tmp_path / "a.md").write_text("# Alpha\n\nquetzal index index index\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# Beta\n\nquetzal once, and a longer body of other words here\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("# Gamma\n\nUn café crème\n", encoding="utf-8")
    ws = make_workspace(
        tmp_path, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=pg_server.fresh_schema()
    )
    KbClient(ws).reindex()
    store: PostgresStore = ws.store
    query = AnyOf((Term("quetzal"), Term("index"), Phrase(("quetzal", "index"))))
    before = [(h.path, h.anchor) for h in store.lexical(query, 10, None)]
    want = store._rows("select id, ntok, nstem from chunks order by id")
    # as an older release wrote it: no lengths, no token marker, an accented word as written
    store._rows("alter table chunks drop column ntok, drop column nstem")
    store._rows("drop table lexical_meta")
    store._rows("update chunks set tsv = $$'gamma':2A 'un':4B 'café':5B 'crème':6B$$ where strpos(text, 'café') > 0")
    fresh = PostgresStore(pg_server.url, store._schema)
    try:
        assert [(h.path, h.anchor) for h in fresh.lexical(query, 10, None)] == before
        assert fresh._rows("select id, ntok, nstem from chunks order by id") == want
        accented = fresh._rows("select tsv::text from chunks where strpos(text, 'café') > 0")
        # re-tokenized as FTS5 does, and stemmed as stems-4 does (decision 1192)
        assert accented == [("'cafe':5B 'creme':6B 'gamma':2A 'un':4B '~cafe':4C '~creme':5C '~gamma':2C",)]
    finally:
        fresh.close()
        store.close()


def test_row_budgets_cut_the_same_words(pair: tuple[KbClient, KbClient], monkeypatch: pytest.MonkeyPatch) -> None:
    """The OR's budget keeps the rarest words by the same chunk counts on both (the common ones
    from each store's term_stats snapshot, here every word in more than one chunk)."""
    from local_vector_search_mcp.index import postgres, sqlite

    lite, pg = pair
    for module in (postgres, sqlite):
        monkeypatch.setattr(module, "COMMON_TERM_MIN_CHUNKS", 1)
    for client in pair:
        client.store.refresh_term_stats()
    assert pg.store._rows("select count(*) from term_stats")[0][0] > 0
    words = (Term("index"), Term("the"), Term("threads"), Term("quetzal"), Term("echo"))

    def found(client: KbClient, budget: int | None) -> list[tuple[str, str]]:
        return [(h.path, h.anchor) for h in client.store.lexical(AnyOf(words, budget, 1), 20, None)]

    assert found(pg, 4) == found(lite, 4) != found(lite, None)
    assert found(pg, None) == found(lite, None)


def test_stem_budgets_cut_the_same_words(pair: tuple[KbClient, KbClient], monkeypatch: pytest.MonkeyPatch) -> None:
    """The stems list's budget prices a word by its stem's common forms on both (decision 636):
    ``echo`` is in one chunk as written and in two with ``echoes`` and ``echoing``, so a budget of
    two stems rows keeps ``quetzal`` and drops it, where the word's own count kept both."""
    from local_vector_search_mcp.index import fts5, postgres, sqlite

    lite, pg = pair
    for module in (postgres, sqlite):
        monkeypatch.setattr(module, "COMMON_TERM_MIN_CHUNKS", 0)
        monkeypatch.setattr(module, "STEM_BUDGET", 2)
    for client in pair:
        client.store.refresh_term_stats()
    pg.store._stem_counts_cache = None
    stems: list[str | None] = []

    def render_stems(*args: Any) -> str | None:
        stems.append(fts5.render_stems(*args))
        return stems[-1]

    monkeypatch.setattr(sqlite, "render_stems", render_stems)
    words = AnyOf((Term("echo"), Term("quetzal")), 1_000, 1)
    found = [[(h.path, h.anchor) for h in client.store.lexical(words, 20, None)] for client in pair]
    assert stems == ['"quetzal"']
    assert found[0] == found[1]
    assert {path for path, _ in found[0]} == {"shell/echo.md", "rare.md"}  # echoing.md came by its stem
    assert lite.store._stem_frequencies(["echo", "quetzal"]) == {"echo": 3, "quetzal": 1}


def test_tokens_are_fts5s_own() -> None:
    """``cjk.index_tokens`` is unicode61's tokenizer itself; its ASCII shortcut splits the same."""
    import apsw

    from local_vector_search_mcp.index.cjk import index_tokens

    connection = apsw.Connection(":memory:")
    unicode61 = connection.fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
    texts = ["".join(chr(c) for c in range(1, 128)), "Rc::strong_count(&a) -> x_y.z@v2 $HOME #tag", "a+b=c|d^e~f`g"]
    for text in texts:
        assert index_tokens(text) == unicode61(
            text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False, include_colocated=False
        )
    assert index_tokens("Crème brûlée, n\u0308o, Ærø, 机器") == ["creme", "brulee", "no", "ærø", "机器", "器"]
