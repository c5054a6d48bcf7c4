from __future__ import annotations

from kb_fakes import client


def test_lexical_reindex_and_search(kb):
    svc = client(kb)
    result = svc.reindex()
    assert result["indexedFiles"] == 3
    out = svc.search(query="strong_count", mode="lexical")
    assert out["results"][0]["path"] == "guide.md"
