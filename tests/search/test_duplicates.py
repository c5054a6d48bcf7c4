from __future__ import annotations

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.duplicates import collapse, passage_key


def hit(cid: int, path: str, text: str) -> ChunkHit:
    return ChunkHit(cid, path, f"1.p1~{cid:016x}~{cid:016x}", None, text, "0" * 64)


def test_only_the_same_text_is_the_same_passage():
    assert passage_key("Hello World\n") == passage_key("Hello World")
    assert passage_key("Hello World") != passage_key("hello world")
    assert passage_key("status 404") != passage_key("status 500")
    assert passage_key("a b") != passage_key("a c")


def test_collapse_keeps_the_best_copy_and_fills_the_limit_with_distinct_passages():
    ranked = [
        (hit(1, "a.md", "x"), 3.0),
        (hit(2, "b.md", "x "), 2.0),
        (hit(3, "c.md", "y"), 1.0),
        (hit(4, "d.md", "z"), 0.5),
    ]
    kept = collapse(ranked, 2)
    assert [(c.hit.chunk_id, c.score, [d.chunk_id for d in c.also_in]) for c in kept] == [(1, 3.0, [2]), (3, 1.0, [])]
