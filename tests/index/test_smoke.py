from __future__ import annotations

from kb_fakes import FakeWorkspace, make_config

from local_vector_search_mcp.index.service import IndexService


def test_lexical_reindex_and_search(kb):
    ws = FakeWorkspace(kb, make_config("none"))
    svc = IndexService(ws)
    result = svc.reindex()
    assert result["indexedFiles"] == 3
    out = svc.search(query="strong_count", mode="lexical")
    assert out["results"][0]["path"] == "guide.md"
