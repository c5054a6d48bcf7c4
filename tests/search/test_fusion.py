from __future__ import annotations

import pytest

from local_vector_search_mcp.search.fusion import KEYWORD_SHARE, is_prose, is_question, semantic_weight


@pytest.mark.parametrize(
    "query",
    [
        "How do I read the whole contents of a file into a String?",
        "guarantee that just one thread at a time can touch a shared piece of data",
        "父组件怎么调用子组件的方法",
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
