from __future__ import annotations

import unicodedata
from itertools import pairwise

import numpy as np
import pytest
from kb_fakes import HashEmbedder, KbClient, make_workspace

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import IndexNotReady, InvalidArgument
from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.engine import rrf_fuse
from local_vector_search_mcp.search.names import named_paths


def kb_search(ws, request):
    """Through the dispatcher, as MCP and the CLI call it (generated request model)."""
    return invoke(ws, "kb_search", {"request": request})


def ready(kb, provider="none", embedder=None):
    ws = make_workspace(kb, provider, embedder=embedder)
    svc = KbClient(ws)
    svc.reindex()
    return ws, svc


def test_result_shape(kb):
    ws, _ = ready(kb)
    out = kb_search(ws, {"query": "strong_count", "mode": "lexical"})
    assert out["warning"] is None
    item = out["results"][0]
    assert item["path"] == "guide.md" and item["searchMode"] == "lexical" and item["score"] == 1.0
    logical, self_hash, subtree = item["pointer"].split("~")
    assert logical == "1.1.p1" and len(self_hash) == 16 and len(subtree) == 16
    assert item["fullPointer"] == f"guide.md::{item['pointer']}"
    assert item["headingPath"] == "Guide > Errors"
    assert "[" in item["snippet"]
    assert item["readHint"] == {"path": "guide.md", "pointer": item["pointer"], "maxElements": 20, "maxBytes": 12000}
    assert len(item["indexedSourceHash"]) == 64


@pytest.mark.parametrize(
    "request_, message",
    [
        ({"query": "  "}, "query"),
        ({"query": "x", "topK": 0}, "topK"),
        ({"query": "x", "mode": "fuzzy"}, "mode"),
        ({"query": "x", "includeGlobs": ["/abs/*.md"]}, "relative"),
        ({"query": "x", "excludeGlobs": ["../*.md"]}, ".."),
    ],
)
def test_invalid_arguments(kb, request_, message):
    ws, _ = ready(kb)
    with pytest.raises(InvalidArgument, match=message):
        kb_search(ws, request_)


def test_empty_index_is_not_ready(kb):
    ws = make_workspace(kb)
    with pytest.raises(IndexNotReady, match="kb_reindex"):
        kb_search(ws, {"query": "x"})


def test_topk_is_capped_and_mode_case_insensitive(kb):
    ws, _ = ready(kb)
    out = kb_search(ws, {"query": "the OR state 状态 天気", "mode": "LEXICAL", "topK": 500})
    assert len(out["results"]) <= 50


def test_globs_filter_inside_retrieval(kb):
    ws, _ = ready(kb, embedder=HashEmbedder())
    for mode in ("lexical", "semantic", "hybrid"):
        out = kb_search(ws, {"query": "状态 Guide 天気", "mode": mode, "includeGlobs": ["NOTES/**"]})
        assert out["results"] and all(r["path"].startswith("notes/") for r in out["results"]), mode
        out = kb_search(ws, {"query": "状态 Guide 天気", "mode": mode, "excludeGlobs": ["notes/**"]})
        assert all(r["path"] == "guide.md" for r in out["results"]), mode


def test_lexical_only_warnings_exactly(kb):
    ws, _ = ready(kb)
    assert kb_search(ws, {"query": "pip", "mode": "lexical"})["warning"] is None
    hybrid = kb_search(ws, {"query": "pip", "mode": "hybrid"})
    assert "only lexical" in hybrid["warning"] and hybrid["results"][0]["searchMode"] == "lexical"
    with pytest.raises(IndexNotReady, match="lexical"):
        kb_search(ws, {"query": "pip", "mode": "semantic"})


NO_WORD = "No indexed chunk contains any word of the query"


def test_a_query_no_word_of_which_is_indexed_says_so(kb):
    """Hybrid returns the model's nearest chunks for a word no file holds: the warning says they
    match by meaning alone; lexical says why it is empty and points to hybrid; semantic never
    claims a word match, and a query whose words match gets no such note (decision 810)."""
    ws, _ = ready(kb, embedder=HashEmbedder())
    hybrid = kb_search(ws, {"query": "zzqxj", "mode": "hybrid"})
    assert hybrid["results"] and {r["searchMode"] for r in hybrid["results"]} == {"hybrid"}
    assert hybrid["warning"].startswith(f"{NO_WORD}, so these results are the model's nearest passages by meaning")
    assert "check the spelling" in hybrid["warning"] and "Glob" not in hybrid["warning"]
    lexical = kb_search(ws, {"query": "zzqxj qqxzv", "mode": "lexical"})
    assert lexical["results"] == [] and lexical["warning"].startswith(f"{NO_WORD}: check the spelling")
    assert lexical["warning"].endswith("or use hybrid mode, which also matches by meaning.")
    assert kb_search(ws, {"query": "zzqxj", "mode": "semantic"})["warning"] is None
    assert kb_search(ws, {"query": "Install pip", "mode": "hybrid"})["warning"] is None
    assert kb_search(ws, {"query": "pip zzqxj", "mode": "hybrid"})["warning"] is None  # one word matched
    scoped = kb_search(ws, {"query": "pip", "mode": "hybrid", "includeGlobs": ["notes/**"]})
    assert scoped["results"] and "among the documents the includeGlobs" in scoped["warning"]
    assert "widen includeGlobs" in scoped["warning"]
    symbols = kb_search(ws, {"query": "???", "mode": "hybrid"})
    assert symbols["results"] and symbols["warning"].startswith("The query holds no word lexical search can match")
    assert kb_search(ws, {"query": "???", "mode": "lexical"})["warning"].startswith("The query holds no word")


def test_no_word_matched_without_a_model(kb):
    """Without a model hybrid's fallback warning comes first and the note follows it; neither
    mode suggests the model it does not have."""
    ws, _ = ready(kb)
    hybrid = kb_search(ws, {"query": "zzqxj", "mode": "hybrid"})
    assert hybrid["results"] == [] and "only lexical" in hybrid["warning"]
    assert f" {NO_WORD}: check the spelling" in hybrid["warning"]
    lexical = kb_search(ws, {"query": "zzqxj", "mode": "lexical"})
    assert lexical["warning"].startswith(NO_WORD) and "hybrid" not in lexical["warning"]


def test_failing_provider_falls_back(kb):
    emb = HashEmbedder()
    ws, _ = ready(kb, embedder=emb)
    emb.fail = True
    out = kb_search(ws, {"query": "pip", "mode": "hybrid"})
    assert "Falling back to lexical search" in out["warning"]
    assert out["results"][0]["searchMode"] == "lexical"
    with pytest.raises(IndexNotReady, match="lexical"):
        kb_search(ws, {"query": "pip", "mode": "semantic"})


def test_hybrid_fuses_both(kb):
    ws, _ = ready(kb, embedder=HashEmbedder())
    out = kb_search(ws, {"query": "Install the tool with pip"})
    assert out["warning"] is None and out["results"][0]["searchMode"] == "hybrid"
    assert out["results"][0]["path"] == "guide.md"
    # first in both lists under the shipped fusion: semanticWeight 0.3 / (rrfK 20 + 1) + 1 / (20 + 1)
    assert out["results"][0]["score"] == pytest.approx(0.3 / 21 + 1 / 21)


class _TeleportEmbedder(HashEmbedder):
    """Puts every text that mentions teleport and every query about the end of the page on one
    vector: the model knows what BM25 cannot match."""

    def _vec(self, text: str):
        low = text.lower()
        if "teleport" in low or "end of the page" in low:
            v = np.zeros(self.dims, dtype=np.float32)
            v[0] = 1.0
            return v
        return super()._vec(text)


def test_a_question_keeps_a_seat_for_the_semantic_best(tmp_path):
    # twelve pages hold the question's words; the answer holds none of them (decision 416)
    for i in range(12):
        (tmp_path / f"filler{i:02d}.md").write_text(
            f"# Dialog {i}\n\nA dialog can move inside the page layout {i}.\n", "utf-8"
        )
    (tmp_path / "portal.md").write_text("# Portal\n\nTeleport renders its slot into body.\n", "utf-8")
    ws, _ = ready(tmp_path, embedder=_TeleportEmbedder())
    question = kb_search(ws, {"query": "How can I move the dialog to the end of the page?", "topK": 10})
    paths = [r["path"] for r in question["results"]]
    assert question["results"][0]["searchMode"] == "hybrid" and "portal.md" in paths[8:]
    scores = [r["score"] for r in question["results"]]
    assert scores == sorted(scores, reverse=True)
    # a task description is prose but not a question: fusion alone, BM25's pages fill the ten
    task = kb_search(ws, {"query": "move the dialog to the end of the page", "topK": 10})
    assert "portal.md" not in [r["path"] for r in task["results"]]
    # below five results there are no seats
    small = kb_search(ws, {"query": "How can I move the dialog to the end of the page?", "topK": 4})
    assert "portal.md" not in [r["path"] for r in small["results"]]


class _AnchorEmbedder(HashEmbedder):
    """Puts every query and every markup-only chunk on one vector, and prose a little off it: what
    a real model does with a typo it cannot read and a chunk that says nothing (decision 790)."""

    def _vec(self, text: str):
        v = np.zeros(self.dims, dtype=np.float32)
        v[0] = 1.0
        if "</a>" not in text and "-->" not in text and "aside:" not in text and not text.startswith("query: "):
            v[1] = 0.5 if "borrowing" in text.lower() else 2.0
        return v / np.linalg.norm(v)

    def embed_query(self, text: str):
        return self._vec("query: " + text)


def test_markup_only_chunks_never_take_a_semantic_place(tmp_path):
    # mdBook's legacy link targets: a chunk of an anchor alone before each page's first heading
    for i in range(4):
        (tmp_path / f"old{i}.md").write_text(f'<a id="old-name-{i}"></a>\n\n# Chapter {i}\n\nText {i}.\n', "utf-8")
    (tmp_path / "note.md").write_text("<!-- draft -->\n\n# Note\n\nAbout nothing.\n", "utf-8")
    (tmp_path / "borrow.md").write_text("# References\n\nBorrowing lends a value.\n", "utf-8")
    ws, _ = ready(tmp_path, embedder=_AnchorEmbedder())
    # the five markup-only chunks are the nearest; topK 1 asks for 3 candidates, so the list is refilled
    one = kb_search(ws, {"query": "borowing", "mode": "semantic", "topK": 1})["results"]
    assert [(r["path"], r["headingPath"]) for r in one] == [("borrow.md", "References")]
    every = kb_search(ws, {"query": "borowing", "mode": "hybrid", "topK": 50})["results"]
    assert every and all(r["headingPath"] is not None for r in every)
    assert all("</a>" not in r["snippet"] and "-->" not in r["snippet"] for r in every)
    # a word of the anchor is still a lexical match: that is a reason, shown as one
    found = kb_search(ws, {"query": "old-name-2", "mode": "lexical"})["results"]
    assert found[0]["path"] == "old2.md" and found[0]["pointer"].startswith("p1~")


def test_front_matter_takes_no_semantic_place(tmp_path):
    # VitePress pages open with `aside: false`, and English keys (`outline: deep`) were the nearest
    # passage to English questions on Chinese pages: a front matter chunk is metadata (decision 1014)
    for i in range(4):
        (tmp_path / f"page{i}.md").write_text(
            f"---\naside: false\nnav_order: {i}\n---\n\n# Page {i}\n\nText.\n", "utf-8"
        )
    (tmp_path / "titled.md").write_text("---\ntitle: Lending values\naside: false\n---\n\n# Lend\n\nText.\n", "utf-8")
    (tmp_path / "borrow.md").write_text("# References\n\nBorrowing lends a value.\n", "utf-8")
    ws, _ = ready(tmp_path, embedder=_AnchorEmbedder())
    # the five front matter chunks are the nearest; every one is skipped and the list refilled
    two = kb_search(ws, {"query": "borowing", "mode": "semantic", "topK": 2})["results"]
    assert (two[0]["path"], two[0]["pointer"].split("~")[0]) == ("borrow.md", "1.p1")
    assert all(not r["pointer"].startswith("frontmatter") for r in two)
    # lexical search still finds a front matter's words
    found = kb_search(ws, {"query": "Lending values", "mode": "lexical"})["results"]
    assert found[0]["path"] == "titled.md"


def test_a_query_naming_a_file_finds_that_file_first(tmp_path):
    # the table of contents names the file in every line; the file itself says "setup" once
    (tmp_path / "SUMMARY.md").write_text(
        "# Contents\n\n" + "".join(f"- [Setup {i}](guide/setup.md) setup setup\n" for i in range(12)), "utf-8"
    )
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "setup.md").write_text("# Installing\n\nRun the installer, then the setup wizard.\n", "utf-8")
    for i in range(12):
        (tmp_path / f"index{i}").mkdir()
        (tmp_path / f"index{i}" / "index.md").write_text(f"# Section {i}\n\nSee setup.md and index.md.\n", "utf-8")
    ws, svc = ready(tmp_path)
    for query in ("guide/setup.md", "./guide/setup", "/guide/setup.md", "setup.md", "SETUP.MD", "`setup.md`"):
        results = kb_search(ws, {"query": query, "mode": "lexical"})["results"]
        assert results[0]["path"] == "guide/setup.md", query
    assert kb_search(ws, {"query": "guide/setup.md", "mode": "hybrid"})["results"][0]["path"] == "guide/setup.md"
    # a scope that leaves the file out still leaves it out
    scoped = kb_search(ws, {"query": "setup.md", "mode": "lexical", "excludeGlobs": ["guide/**"]})["results"]
    assert "guide/setup.md" not in [r["path"] for r in scoped]
    # twelve index.md files: the name means no one page; a word alone names no file
    assert named_paths(svc.store, "index.md", None) == [] and named_paths(svc.store, "index0/index", None)
    assert kb_search(ws, {"query": "setup", "mode": "lexical"})["results"][0]["path"] == "SUMMARY.md"


def test_a_query_naming_a_file_a_mac_named_decomposed_finds_it_first(tmp_path):
    # decision 1101: ガイド/ブック.md written NFD (dakuten as U+3099), as a Mac names it; the page
    # with its name as its title says the word more often, the named file once
    nfd = unicodedata.normalize("NFD", "ガイド/ブック.md")
    (tmp_path / nfd).parent.mkdir()
    (tmp_path / nfd).write_text("# 本\n\n本のブックです。\n", "utf-8")
    (tmp_path / "其他.md").write_text("# ブック\n\nブック ブック ブック の一覧。\n", "utf-8")
    korean = unicodedata.normalize("NFD", "한글/설치.md")
    (tmp_path / korean).parent.mkdir()
    (tmp_path / korean).write_text("# 안내\n\n설치 방법.\n", "utf-8")
    (tmp_path / "기타.md").write_text("# 설치\n\n설치 설치 설치.\n", "utf-8")
    ws, svc = ready(tmp_path)
    for query in ("ガイド/ブック.md", "ガイド/ブック", "ブック.md", unicodedata.normalize("NFD", "ブック.md")):
        assert kb_search(ws, {"query": query, "mode": "lexical"})["results"][0]["path"] == nfd, query
    assert named_paths(svc.store, "ガイド/ブック", None) == [nfd]
    for query in ("한글/설치.md", "설치.md"):
        assert kb_search(ws, {"query": query, "mode": "lexical"})["results"][0]["path"] == korean, query


def test_a_query_naming_a_file_written_in_half_width_katakana_finds_it_first(tmp_path):
    # decision 1113: the query is composed full-width, the name compared as the query reads it
    (tmp_path / "ﾏﾆｭｱﾙ").mkdir()
    (tmp_path / "ﾏﾆｭｱﾙ" / "ｶﾞｲﾄﾞ.md").write_text("# 本\n\n本のｶﾞｲﾄﾞです。\n", "utf-8")
    (tmp_path / "其他.md").write_text("# ガイド\n\nガイド ガイド ガイド の一覧。\n", "utf-8")
    ws, _svc = ready(tmp_path)
    for query in ("ｶﾞｲﾄﾞ.md", "ガイド.md", "ﾏﾆｭｱﾙ/ｶﾞｲﾄﾞ.md", "マニュアル/ガイド"):
        assert kb_search(ws, {"query": query, "mode": "lexical"})["results"][0]["path"] == "ﾏﾆｭｱﾙ/ｶﾞｲﾄﾞ.md", query


def test_rrf_ties_broken_by_chunk_id():
    def hit(i):
        return ChunkHit(i, "a.md", "p1~0~0", None, "", "h")

    fused = rrf_fuse([[hit(5), hit(3)], [hit(3), hit(5)]], 60)
    assert [h.chunk_id for h, _ in fused] == [3, 5]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


def test_kb_reindex_handler(kb):
    ws = make_workspace(kb)
    out = invoke(ws, "kb_reindex", {"request": {"scope": "ALL", "force": False}})
    assert out["started"] is True and out["current"]["scope"] == "all"
    ws.indexing.wait_reindex(30)
    with pytest.raises(InvalidArgument):
        invoke(ws, "kb_reindex", {"request": {"scope": "some"}})


def test_lexical_scores_every_word_and_never_returns_nothing_when_words_exist(tmp_path):
    (tmp_path / "a.md").write_text("# Hashing\n\nThe title field hashed with SHA-512 here.\n", "utf-8")
    (tmp_path / "b.md").write_text("# Other\n\nNothing about that at all, only prose.\n", "utf-8")
    ws, _ = ready(tmp_path)
    # written as one identifier that occurs nowhere as such: its words still find the page
    out = kb_search(ws, {"query": "title::SHA-512", "mode": "lexical"})
    assert [r["path"] for r in out["results"]] == ["a.md"]
    # a long question: the stop words neither decide nor block the match
    out = kb_search(ws, {"query": "how do I get the hashed title of a field?", "mode": "lexical"})
    assert out["results"][0]["path"] == "a.md"
    assert "[the]" not in out["results"][0]["snippet"]


def test_a_name_written_as_words_with_a_stop_word_finds_its_page(tmp_path):
    # `search after` is `search_after` written as words: `after` is a stop word, and searching
    # `search` alone ranked the pages that say "search" most above the one about the parameter
    (tmp_path / "paginate.md").write_text("# Paginate\n\nUse the search_after parameter to page.\n", "utf-8")
    for i in range(3):
        (tmp_path / f"s{i}.md").write_text(f"# Search {i}\n\nSearch, search and search again.\n", "utf-8")
    ws, _ = ready(tmp_path)
    out = kb_search(ws, {"query": "search after", "mode": "lexical"})
    assert out["results"][0]["path"] == "paginate.md"


def test_two_words_of_a_name_with_a_stop_word_between_find_its_page(tmp_path):
    # `search after parameter`: the stop word joins the two others in a phrase (decision 1019),
    # where pages saying "search" and "parameter" often, apart, ranked first
    (tmp_path / "paginate.md").write_text(
        "# Paginate\n\nSorted results page on with the search_after parameter, from the last hit's sort values.\n",
        "utf-8",
    )
    for i in range(3):
        (tmp_path / f"s{i}.md").write_text(
            f"# Search {i}\n\nEach search parameter: a search parameter after a search parameter.\n", "utf-8"
        )
    ws, _ = ready(tmp_path)
    out = kb_search(ws, {"query": "search after parameter", "mode": "lexical"})
    assert out["results"][0]["path"] == "paginate.md"


def test_a_hyphenated_query_word_ranks_its_inflected_form_next_to_the_exact_one(tmp_path):
    # `fine-tuned models` matched `fine-tuning` by `model` alone, below every page repeating
    # `model`: the hyphenated word had no stems (decision 1017)
    (tmp_path / "tuned.md").write_text("# Tuned\n\nA fine-tuned model answers in the house style.\n", "utf-8")
    (tmp_path / "tuning.md").write_text("# Training\n\nFine-tuning a model on your data takes an hour.\n", "utf-8")
    for i in range(3):
        (tmp_path / f"serving{i}.md").write_text(f"# Serving {i}\n\nModels, models: the model server.\n", "utf-8")
    ws, _ = ready(tmp_path)
    out = kb_search(ws, {"query": "fine-tuned models", "mode": "lexical"})
    assert [r["path"] for r in out["results"]][:2] == ["tuned.md", "tuning.md"]


def test_the_same_passage_in_several_files_is_one_result_with_also_in(tmp_path):
    page = "# Install\n\nRun the installer with the --quiet flag to skip prompts.\n"
    for version in ("1.0", "2.0", "latest"):
        (tmp_path / version).mkdir()
        (tmp_path / version / "install.md").write_text(page, "utf-8")
    # same words, one differs: a different passage, never merged
    (tmp_path / "other.md").write_text(
        "# Install\n\nRun the installer with the --loud flag to skip prompts.\n", "utf-8"
    )
    ws, _ = ready(tmp_path)
    out = kb_search(ws, {"query": "installer quiet flag", "mode": "lexical", "topK": 5})
    results = out["results"]
    assert [r["path"] for r in results] == ["1.0/install.md", "other.md"]
    assert [r["score"] for r in results] == [1.0, 0.5]
    also = results[0]["alsoIn"]
    assert sorted(a["path"] for a in also) == ["2.0/install.md", "latest/install.md"]
    assert all(a["pointer"] == results[0]["pointer"] for a in also)
    assert results[1]["alsoIn"] == []


@pytest.mark.parametrize("mode", ["lexical", "semantic", "hybrid"])
def test_copies_that_fill_the_ranked_pool_do_not_cost_results(tmp_path, mode):
    """Eight copies of one page rank above the one other passage; a search for two results
    must still return both passages, whatever the pool it ranked first (3 x topK for a single
    mode, the configured pools for hybrid, here 4)."""
    page = "# Install\n\nRun the quokka installer with the flag.\n"
    for version in range(8):
        (tmp_path / f"v{version}").mkdir()
        (tmp_path / f"v{version}" / "install.md").write_text(page, "utf-8")
    (tmp_path / "other.md").write_text("# Other\n\nThe quokka is a marsupial, not an installer.\n", "utf-8")
    ws = make_workspace(
        tmp_path,
        "local",
        embedder=HashEmbedder(),
        search__lexical_candidate_pool_size=4,
        search__semantic_candidate_pool_size=4,
    )
    KbClient(ws).reindex()
    out = kb_search(ws, {"query": "Run the quokka installer with the flag", "mode": mode, "topK": 2})
    results = out["results"]
    assert len(results) == 2 and results[1]["path"] == "other.md", results
    # every copy ranked above the second passage: one is the result (equal vectors tie in any
    # order), the others ride along with it
    copies = [results[0]["path"]] + [a["path"] for a in results[0]["alsoIn"]]
    assert sorted(copies) == [f"v{v}/install.md" for v in range(8)]


def test_a_pool_full_of_copies_grows_by_the_share_of_distinct_passages():
    """Every passage in 40 copies: ten distinct passages need 400 rows. Doubling from 30 took five
    fetches (30, 60, ... 480), each ranking the whole match again; sized by the distinct share
    of the short list, it takes three at most (decision 628)."""
    from local_vector_search_mcp.search.engine import _distinct_enough

    ranked = [ChunkHit(i, f"v{i % 40}/p{i // 40}.md", "1.p1", None, f"passage {i // 40}", "h") for i in range(4000)]
    asked = []

    def fetch(n):
        asked.append(n)
        return ranked[:n]

    hits = _distinct_enough(fetch, 30, 10)
    assert len({h.text for h in hits}) >= 10
    assert len(asked) <= 3, asked
    assert asked[0] == 30 and all(b >= 2 * a for a, b in pairwise(asked))

    # a list that was not short is fetched once, so such a search ranks as before
    distinct = [ChunkHit(i, f"p{i}.md", "1.p1", None, f"passage {i}", "h") for i in range(100)]
    asked.clear()
    assert _distinct_enough(lambda n: (asked.append(n), distinct[:n])[1], 30, 10) == distinct[:30]
    assert asked == [30]


def _question_corpus(root):
    """One short page holding the question's rarest word twice, one long section holding
    most of its words once, each of those words also alone on a few pages."""
    (root / "exists.md").write_text("# Exists\n\nCheck that it exists, exists.\n", "utf-8")
    for word in ("change", "number", "replicas", "index"):
        for i in range(3):
            (root / f"{word}{i}.md").write_text(f"# About {word}\n\nSome {word} here, the {word} again.\n", "utf-8")
    (root / "settings.md").write_text(
        "# Update settings\n\nTo change the number of replicas of an index, update the index settings with a "
        "request body naming the new value; shards are then copied across nodes as the cluster allocates them. "
        "The allocation waits for free disk space, respects awareness attributes and throttles recoveries so "
        "that searches keep running while new copies are built on other machines of the cluster.\n",
        "utf-8",
    )
    for i in range(12):
        text = f"# Topic {i}\n\nUnrelated prose about topic {i} and nothing else.\n"
        (root / f"other{i}.md").write_text(text, "utf-8")


def test_a_question_ranks_the_section_holding_most_of_its_words_first(tmp_path):
    _question_corpus(tmp_path)
    ws, _ = ready(tmp_path)
    question = "How do I change the number of replicas on an index that already exists?"
    out = kb_search(ws, {"query": question, "mode": "lexical", "topK": 3})
    assert [r["path"] for r in out["results"]][:2] == ["settings.md", "exists.md"]
    # the same words as keywords: rescored by rarity (decision 1090), where plain BM25 let the rare
    # word decide (exists.md first): the section holding most of them comes first
    out = kb_search(ws, {"query": "change number replicas index already exists", "mode": "lexical", "topK": 3})
    assert [r["path"] for r in out["results"]][:2] == ["settings.md", "exists.md"]


def test_coverage_is_a_hint_the_store_applies_to_an_or_query(tmp_path):
    from local_vector_search_mcp.search.text import build_lexical_query

    _question_corpus(tmp_path)
    _, svc = ready(tmp_path)
    parsed = build_lexical_query("How do I change the number of replicas on an index that already exists?")
    plain = [h.path for h in svc.store.lexical(parsed.ranked(20_000), 3, None)]
    covered = [h.path for h in svc.store.lexical(parsed.ranked(20_000, 1.0), 3, None)]
    assert plain[0] == "exists.md" and covered[0] == "settings.md"
    # limits beyond the rescored depth keep every row, each once
    many = svc.store.lexical(parsed.ranked(20_000, 1.0), 50, None)
    assert len(many) == len({h.chunk_id for h in many}) == len(svc.store.lexical(parsed.ranked(20_000), 50, None))


@pytest.mark.parametrize(
    ("query", "coverage", "by_rarity"),
    [
        ("How do I get rid of old log data?", 1.0, False),  # a question: every word once (decision 220)
        ("get rid of old log data without a cron job", 1.0, True),  # other prose: by rarity (1070)
        ("old log data cron", 1.0, True),  # keywords: by rarity too (1090)
        ("restore snapshot rename_pattern index name conflict", 1.0, True),  # keywords holding code (1090)
        ("When should I use Arc<T> instead of Rc<T>?", 0.0, False),  # a question holding code: plain BM25
        ("delete the logs", 0.0, False),  # two plain words: too few to count shares of
        ("rename_pattern conflict", 0.0, False),
    ],
)
def test_every_query_of_three_words_but_a_question_asks_for_the_share_by_rarity(
    kb, monkeypatch, query, coverage, by_rarity
):
    from local_vector_search_mcp.index.query import AnyOf

    ws, _ = ready(kb)
    asked = []
    real = ws.store.lexical

    def recording(q, limit, scope):
        asked.append(q)
        return real(q, limit, scope)

    monkeypatch.setattr(ws.store, "lexical", recording)
    kb_search(ws, {"query": query, "mode": "lexical"})
    first = asked[0]
    assert isinstance(first, AnyOf)
    assert (first.coverage, first.by_rarity) == (coverage, by_rarity)


def test_a_reindex_committing_between_the_readiness_reads_is_not_reported_as_no_text(kb, monkeypatch):
    """The readiness check reads "any chunk?" and then the document count: a reindex committing
    between them made a search answer "holds 1 document(s) but no searchable text" while the index
    was filling (seen under load in the conformance suite); it reads the chunks again."""
    ws, _ = ready(kb)
    real = ws.store.has_chunks
    reads = []

    def before_the_commit_once():
        reads.append(1)
        return len(reads) > 1 and real()  # the first read saw the index before the reindex's commit

    monkeypatch.setattr(ws.store, "has_chunks", before_the_commit_once)
    out = kb_search(ws, {"query": "strong_count", "mode": "lexical"})
    assert out["results"] and len(reads) == 2


def test_a_chinese_what_is_question_finds_the_page_about_its_subject(tmp_path):
    """Decision 718: the bigrams of 是什么 are rare as a pair, so passages saying 是什么 (a FAQ)
    ranked above the page about Suspense for ``Suspense 是什么``."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "suspense.md").write_text(
        "# Suspense\n\n" + "Suspense 组件用来在组件树中协调对异步依赖的处理。" * 8 + "\n", "utf-8"
    )
    (root / "faq.md").write_text(
        "# 常见问题\n\n## 是什么\n\nVue 是什么？它是什么框架？Suspense 也在这里提到。\n", "utf-8"
    )
    for i in range(12):  # the words of the subject are common; 是什么 is not
        (root / f"page{i}.md").write_text(f"# 页面 {i}\n\n这一页提到 Suspense 和异步组件。\n", "utf-8")
    svc = KbClient(make_workspace(root))
    svc.reindex()
    found = svc.search(query="Suspense 是什么", mode="lexical", top_k=3)["results"]
    assert found[0]["path"] == "suspense.md", found
    assert "[是什么]" not in " ".join(hit["snippet"] for hit in found)


def test_a_scope_that_selects_no_document_says_so_not_check_the_spelling(kb):
    """Decision 719: globs or tags that keep no indexed document answered "check the spelling of
    names", which sends an agent after the wrong cause; the words were never searched. Decision
    1201: tags that select nothing are named, the agent having no list of the tags there are."""
    ws, _ = ready(kb, embedder=HashEmbedder())
    for mode in ("lexical", "semantic", "hybrid"):
        for scope in ({"includeGlobs": ["{guide,notes}/**"]}, {"tags": ["nonexistent"]}):
            out = kb_search(ws, {"query": "strong_count", "mode": mode, **scope})
            assert out["results"] == [], (mode, scope)
            assert "selected by the includeGlobs" in out["warning"] and "spelling" not in out["warning"], out
        # decision 1201: which tag no document carries, or that none carries them all
        assert "No indexed document carries the tag `nonexistent`" in out["warning"], out
    (kb / "tagged.md").write_text("---\ntags: [café/menü]\n---\n# Tagged\n\nWords. #Other\n", "utf-8")
    (kb / "alone.md").write_text("# Alone\n\nMore words. #solo\n", "utf-8")
    ws, _ = ready(kb)
    out = kb_search(ws, {"query": "words", "mode": "lexical", "tags": ["#Café", "cafe", "menü", "other", "#ghost"]})
    assert out["results"] == []
    assert "carries the tags `cafe`, `menü`, `#ghost` (" in out["warning"], out["warning"]
    out = kb_search(ws, {"query": "words", "mode": "lexical", "tags": ["café", "solo"]})
    assert out["results"] == [] and "but no document carries them all" in out["warning"], out["warning"]
    out = kb_search(ws, {"query": "words", "mode": "lexical", "tags": ["CAFÉ", "other"]})
    assert [r["path"] for r in out["results"]] == ["tagged.md"] and out["warning"] is None
    # a scope that keeps documents, none holding the word: the spelling note, as before (decision 810)
    out = kb_search(ws, {"query": "zzqxj", "mode": "lexical", "includeGlobs": ["notes/**"]})
    assert "spelling" in out["warning"] and "selected by" not in out["warning"]


HTML_PAGE = """# Page

<Callout type="warning">
  Never store the zebra token in source control.
</Callout>

<figure>
<img src="x.svg" alt="an aardvark diagram">
<figcaption>Figure 1: a concurrent quokka workflow</figcaption>
</figure>

<details>
<summary>Click to expand the wombat notes</summary>

Body paragraph about koalas.

</details>

<!-- a comment about the platypus -->

<script>const echidna = 1</script>
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_words_a_reader_sees_in_an_html_block_are_found(tmp_path, request, backend):
    """Decision 1025: the words of an MDX callout, a figure caption and a details summary were in no
    chunk ("No indexed chunk contains any word of the query"). They are found now, in the chunk of
    their section, and the snippet shows them without tags; a comment's, a script's and an
    attribute's words are not."""
    (tmp_path / "page.md").write_text(HTML_PAGE, "utf-8")
    storage = {}
    if backend == "postgresql":
        pg = request.getfixturevalue("pg_server")
        storage = {"storage__backend": "postgresql", "storage__url": pg.url, "storage__schema": pg.fresh_schema()}
    ws = make_workspace(tmp_path, "none", **storage)
    KbClient(ws).reindex()
    for word in ("zebra", "quokka", "wombat", "koalas"):
        results = kb_search(ws, {"query": word, "mode": "lexical"})["results"]
        assert [(r["path"], r["pointer"].split("~")[0], r["headingPath"]) for r in results] == [
            ("page.md", "1.p1", "Page")
        ]
    snippet = kb_search(ws, {"query": "quokka", "mode": "lexical"})["results"][0]["snippet"]
    assert "quokka" in snippet and "<" not in snippet
    for word in ("platypus", "echidna", "aardvark", "figcaption", "warning"):
        out = kb_search(ws, {"query": word, "mode": "lexical"})
        assert out["results"] == [], word
