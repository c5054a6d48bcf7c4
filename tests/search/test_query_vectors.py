"""Query vectors kept per embedder (``search/query_vectors.py``, decision 659)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kb_fakes import HashEmbedder, client

from local_vector_search_mcp.search.query_vectors import QueryVectors


class Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return super().embed_query(text)


def test_a_query_asked_again_is_not_embedded_again() -> None:
    kept, model = QueryVectors(), Counting()
    first = kept.get(model, "how do closures capture values")
    again = kept.get(model, "how do closures capture values")
    assert model.queries == ["how do closures capture values"]
    assert again is first and np.array_equal(first, model.embed_query("how do closures capture values"))
    with pytest.raises(ValueError):
        first[0] = 1.0  # shared by every search that asks the same: read-only
    kept.clear()  # as the benches do, to time each search with its embedding
    kept.get(model, "how do closures capture values")
    assert len(model.queries) == 3


def test_a_query_is_embedded_with_its_whitespace_collapsed() -> None:
    # the model read a trailing newline as a token: seven of ten semantic results moved (decision 1008)
    kept, model = QueryVectors(), Counting()
    first = kept.get(model, "what is a trait object")
    assert kept.get(model, "what is a trait object\n") is first
    assert kept.get(model, "  what is a\ttrait  object ") is first
    assert model.queries == ["what is a trait object"]


def test_another_embedder_starts_afresh_and_the_oldest_go_first() -> None:
    kept, old, new = QueryVectors(kept=2), Counting(), Counting()
    kept.get(old, "a")
    kept.get(new, "a")  # a model or endpoint changed: its own vector
    assert old.queries == ["a"] and new.queries == ["a"]
    kept.get(new, "b")
    kept.get(new, "a")  # used: now the newest
    kept.get(new, "c")  # "b" goes
    kept.get(new, "a")
    kept.get(new, "b")
    assert new.queries == ["a", "b", "c", "b"]


def test_a_failed_embedding_is_not_kept() -> None:
    kept, model = QueryVectors(), Counting()
    model.fail = True
    with pytest.raises(Exception, match="provider down"):
        kept.get(model, "q")
    model.fail = False
    kept.get(model, "q")
    assert kept.get(model, "q") is kept.get(model, "q")


def test_modes_of_one_question_embed_it_once(kb: Path) -> None:
    model = Counting()
    svc = client(kb, "local", embedder=model)
    try:
        svc.reindex()
        svc.wait_vectors(30)
        for mode in ("semantic", "hybrid", "semantic"):
            assert svc.search(query="sharing state between components", mode=mode, top_k=3)["results"]
        assert model.queries == ["sharing state between components"]
    finally:
        svc.shutdown()
