from __future__ import annotations

import numpy as np
from kb_fakes import client

from local_vector_search_mcp.embeddings.local import LOCAL_MODEL, LocalEmbedder


def test_local_model_is_multilingual():
    emb = LocalEmbedder()
    passages = emb.embed_passages(["东京的天气很好", "Rust ownership and borrowing rules", "东京都の天気は晴れです"])
    assert passages.shape == (3, 384) and np.allclose(np.linalg.norm(passages, axis=1), 1, atol=1e-4)
    assert int(np.argmax(passages[[0, 1]] @ emb.embed_query("今天东京天气怎么样"))) == 0
    assert int(np.argmax(passages[[0, 1]] @ emb.embed_query("what are the borrowing rules"))) == 1


def test_default_provider_gives_hybrid_offline(kb):
    svc = client(kb, "local")
    assert svc.reindex()["indexedFiles"] == 3
    status = svc.status_fields()
    assert status["embeddingModel"] == LOCAL_MODEL and status["indexMode"] == "vector-enabled"
    out = svc.search(query="组件共享状态", mode="hybrid")
    assert out["warning"] is None and out["results"][0]["path"] == "notes/zh.md"
