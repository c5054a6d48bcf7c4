from __future__ import annotations

import pytest

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.engine import rrf_fuse
from local_vector_search_mcp.search.fusion import (
    KEYWORD_SHARE,
    is_prose,
    is_question,
    seat_count,
    seat_semantic,
    semantic_weight,
)


@pytest.mark.parametrize(
    "query",
    [
        "How do I read the whole contents of a file into a String?",
        "guarantee that just one thread at a time can touch a shared piece of data",
        "父组件怎么调用子组件的方法",
        # hyphenated words and file names are words of a sentence (decision 1029)
        "How do I turn on two-factor authentication for my npm account?",
        "How do I install a package without adding it to package.json?",
        "Which version of Node.js do I need?",
    ],
)
def test_prose_fuses_with_the_configured_weight(query):
    assert is_prose(query)
    assert semantic_weight(query, 0.5) == 0.5


@pytest.mark.parametrize(
    "query",
    [
        "Rc::strong_count",
        "static mut COUNTER",
        "opensearch-benchmark run --test-mode",
        "What does nodePools[].additionalConfig do?",  # prose around code is still about the code
        "how does reply.send work?",  # a member, not a file name
        "what is v-if for",  # a one-letter part: a directive
        "cross-cluster replication setup",  # no stop word: keywords, as before
        "生命周期",
        "KeepAlive 缓存 include exclude",
    ],
)
def test_keyword_and_code_queries_lean_on_lexical(query):
    assert not is_prose(query)
    assert semantic_weight(query, 0.5) == pytest.approx(0.5 * KEYWORD_SHARE)


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("How do I change the number of replicas?", True),
        ("can I back up my indexes to S3", True),
        ("My search stops at 10000 hits, how do I page through all of the results?", True),
        ("get rid of old log data automatically once it is a week old", False),  # a task, not a question
        ("replicas number change", False),  # keywords
        ("How does Rc::strong_count work?", False),  # code: not prose
        ("为什么解构 reactive 对象之后就失去响应性了？", True),
        ("生命周期", False),
    ],
)
def test_is_question(query, question):
    assert is_question(query) is question


def _hit(i: int) -> ChunkHit:
    return ChunkHit(i, f"{i}.md", "p1~0~0", None, "", "h")


@pytest.mark.parametrize(("top_k", "seats"), [(1, 0), (4, 0), (5, 1), (10, 2), (50, 10)])
def test_a_fifth_of_top_k_is_seated(top_k, seats):
    assert seat_count(top_k) == seats


def test_seats_lift_the_semantic_best_the_fusion_left_out():
    lexical = [_hit(i) for i in range(100, 150)]  # fifty lexical hits the model does not know
    semantic = [_hit(1), _hit(2), _hit(3)]
    fused = rrf_fuse([semantic, lexical], 20, [0.3, 1.0])
    assert 1 not in [h.chunk_id for h, _ in fused[:10]]  # 0.3 / 21 is below every lexical rank up to 49
    seated = seat_semantic(fused, semantic, 10)
    ids = [h.chunk_id for h, _ in seated]
    assert ids[:8] == list(range(100, 108)) and ids[8:10] == [1, 2]  # the last fifth, best first
    assert 3 not in ids[:10] and sorted(ids) == sorted(h.chunk_id for h, _ in fused)  # nothing lost
    scores = [s for _, s in seated]
    assert scores == sorted(scores, reverse=True)  # a seat takes the score of the place it fills


def test_seats_leave_hits_the_fusion_already_ranked_high():
    lexical = [_hit(1)] + [_hit(i) for i in range(100, 120)]
    semantic = [_hit(1), _hit(2)]
    fused = rrf_fuse([semantic, lexical], 20, [0.3, 1.0])
    seated = seat_semantic(fused, semantic, 10)
    ids = [h.chunk_id for h, _ in seated]
    assert ids[0] == 1 and ids.index(2) == 9  # the first stays first; only the second needed its seat
    assert seat_semantic(fused, semantic, 4) == fused  # below five results there are no seats


def test_a_chinese_question_is_prose_and_a_question_however_short() -> None:
    """Decision 718: ``Suspense 是什么`` held no clause of six characters, so it fused as a
    keyword query and got no semantic seats, although the model ranked the page first."""
    from local_vector_search_mcp.search.fusion import is_prose, is_question

    for query in ("Suspense 是什么", "Teleport 怎么用", "为什么要加 key", "什么是组合式 API"):
        assert is_prose(query) and is_question(query), query
    for query in ("生命周期", "响应式 API", "Suspense", "KeepAlive 怎么用"):  # a code-like piece: not prose
        assert not is_question(query), query


def test_a_japanese_question_is_prose_and_a_question_without_its_question_mark() -> None:
    """Decision 1175: a Japanese question asks with an interrogative or a final か, not always with
    ``？``; ``Vite とは何`` held no clause of six characters and fused as a keyword query."""
    from local_vector_search_mcp.search.fusion import is_prose, is_question
    from local_vector_search_mcp.search.stopwords import asks_in_japanese

    for query in ("ESLint v8 で使えますか", "Vite とは何", "なぜ必要なのか", "どのルール", "設定方法はどうする"):
        assert asks_in_japanese(query) and is_prose(query) and is_question(query), query
    for query in ("画像の代替テキスト", "ESLint のルール", "ボタンを押したい", "ルールを追加する 方法", "是什么"):
        assert not asks_in_japanese(query), query
    assert not is_question("FormControlを使えますか")  # a code-like piece: not prose, as in English
