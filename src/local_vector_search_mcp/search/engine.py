"""kb_search: lexical, semantic and hybrid retrieval over the index (contract §2.3).

* lexical: BM25 over chunk text and heading path (heading weighted 2x). All
  query terms are tried first (AND); when that yields fewer than the needed
  candidates, chunks matching any term (OR) follow, each group in BM25 order.
  The OR query keeps only the rarest terms whose chunk counts sum to at most
  ``LOOSE_ROW_BUDGET`` (FTS5 scores every row an OR matches before sorting, so
  common words made questions slow on a large index; BM25 weighs them near
  zero anyway); the ``KEEP_RAREST_TERMS`` rarest always stay.
* semantic: k-nearest chunks to the query embedding (sqlite-vec).
* hybrid: weighted reciprocal rank fusion of both candidate pools,
  ``score = sum(weight / (rrfK + rank))`` (lexical weight 1, semantic
  ``search.semanticWeight``), ties by chunk id ascending. ``rrfK 60`` and
  ``semanticWeight 1`` give the reference's plain RRF; the defaults (10, 0.5)
  were chosen on the dev sets because the bundled model ranks below BM25.

Include/exclude globs become one path predicate applied inside each retrieval
before its limit. Lexical and semantic scores are ``1/rank``.

Embeddings off: lexical runs silently, hybrid runs lexical only with a warning,
semantic is ``INDEX_NOT_READY``. Provider failing: hybrid falls back to
lexical with a warning containing "Falling back to lexical search", semantic
is ``INDEX_NOT_READY`` suggesting lexical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import IndexNotReady, InvalidArgument
from ..globs import compile_glob
from ..index.port import ChunkHit, IndexStore
from .text import build_lexical_query, make_snippet

__all__ = ["MAX_TOP_K", "READ_HINT_MAX_BYTES", "READ_HINT_MAX_ELEMENTS", "SearchEngine", "rrf_fuse"]

MAX_TOP_K = 50
READ_HINT_MAX_ELEMENTS = 20
READ_HINT_MAX_BYTES = 12000
MODES = ("lexical", "semantic", "hybrid")
LOOSE_ROW_BUDGET = 2000  # the OR query keeps its rarest terms while their chunk counts add up to this...
KEEP_RAREST_TERMS = 2  # ...but always at least this many


def rrf_fuse(
    lists: Sequence[Sequence[ChunkHit]], k: int, weights: Sequence[float] | None = None
) -> list[tuple[ChunkHit, float]]:
    """Weighted reciprocal rank fusion: ``sum(weight / (k + rank))``, ties by chunk id."""
    scores: dict[int, float] = {}
    hits: dict[int, ChunkHit] = {}
    for i, ranked in enumerate(lists):
        weight = 1.0 if weights is None else float(weights[i])
        for rank, hit in enumerate(ranked, start=1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + weight / (k + rank)
            hits.setdefault(hit.chunk_id, hit)
    order = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return [(hits[cid], scores[cid]) for cid in order]


def build_path_filter(include: Sequence[str] | None, exclude: Sequence[str] | None) -> Callable[[str], bool] | None:
    inc = [compile_glob(p, "includeGlobs") for p in (include or [])]
    exc = [compile_glob(p, "excludeGlobs") for p in (exclude or [])]
    if not inc and not exc:
        return None
    if not inc:
        inc = [compile_glob("**/*.md")]
    return lambda path: any(m(path) for m in inc) and not any(m(path) for m in exc)


@dataclass
class SearchEngine:
    store: IndexStore
    search_config: Any
    embedder_provider: Callable[[], Any]  # returns the embedder or None (lexical mode)

    def lexical_hits(self, query: str, limit: int, path_filter: Callable[[str], bool] | None) -> list[ChunkHit]:
        lq = build_lexical_query(query)
        if len(lq.parts) > KEEP_RAREST_TERMS:
            lq = lq.with_loose_budget(self.store.document_frequencies(lq.tokens()), LOOSE_ROW_BUDGET, KEEP_RAREST_TERMS)
        strict, loose = lq.strict, lq.loose
        if strict is None or loose is None:
            return []
        hits = self.store.lexical(strict, limit, path_filter)
        if len(hits) < limit and loose != strict:
            seen = {h.chunk_id for h in hits}
            for h in self.store.lexical(loose, limit, path_filter):
                if h.chunk_id not in seen:
                    hits.append(h)
                    if len(hits) >= limit:
                        break
        return hits

    def semantic_hits(
        self, embedder: Any, query: str, limit: int, path_filter: Callable[[str], bool] | None
    ) -> list[ChunkHit]:
        vector = embedder.embed_query(query)
        return self.store.semantic(vector, limit, path_filter)

    def validate(
        self,
        query: str | None,
        mode: str | None = None,
        top_k: int | None = None,
        include_globs: Sequence[str] | None = None,
        exclude_globs: Sequence[str] | None = None,
    ) -> tuple[str, str, int, Callable[[str], bool] | None]:
        """Check the arguments; ``(query, mode, top_k, path_filter)`` or InvalidArgument."""
        if query is None or not query.strip():
            raise InvalidArgument("query must not be blank.")
        cfg = self.search_config
        mode = str(getattr(mode, "value", mode) or getattr(cfg.default_mode, "value", cfg.default_mode)).lower()
        if mode not in MODES:
            raise InvalidArgument(f"mode must be one of lexical, semantic, hybrid (got {mode!r}).")
        if top_k is None:
            top_k = int(cfg.max_results)
        if isinstance(top_k, bool) or top_k <= 0:
            raise InvalidArgument("topK must be a positive integer.")
        return query, mode, min(top_k, MAX_TOP_K), build_path_filter(include_globs, exclude_globs)

    def search(
        self,
        query: str | None,
        mode: str | None = None,
        top_k: int | None = None,
        include_globs: Sequence[str] | None = None,
        exclude_globs: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        query, mode, top_k, path_filter = self.validate(query, mode, top_k, include_globs, exclude_globs)
        cfg = self.search_config
        embedder = self.embedder_provider()
        warning: str | None = None
        effective = mode
        lexical_pool = max(top_k, int(cfg.lexical_candidate_pool_size))
        semantic_pool = max(top_k, int(cfg.semantic_candidate_pool_size))

        if mode == "lexical":
            scored = [(h, 1.0 / r) for r, h in enumerate(self.lexical_hits(query, top_k, path_filter), 1)]
        elif mode == "semantic":
            if embedder is None or not self.store.has_vectors():
                raise IndexNotReady(
                    "Semantic search needs embeddings, but the index is lexical only "
                    "(embedding.provider is none or the index was built without vectors). Use mode lexical."
                )
            try:
                hits = self.semantic_hits(embedder, query, top_k, path_filter)
            except Exception as exc:
                raise IndexNotReady(
                    f"The embedding provider failed ({_reason(exc)}); semantic search is unavailable. Use mode lexical."
                ) from exc
            scored = [(h, 1.0 / r) for r, h in enumerate(hits, 1)]
        else:
            lexical = self.lexical_hits(query, lexical_pool, path_filter)
            semantic: list[ChunkHit] | None = None
            if embedder is None or not self.store.has_vectors():
                warning = (
                    "Embeddings are disabled (embedding.provider: none), so only lexical search ran; "
                    "results are lexical."
                )
            else:
                try:
                    semantic = self.semantic_hits(embedder, query, semantic_pool, path_filter)
                except Exception as exc:
                    warning = f"The embedding provider failed ({_reason(exc)}). Falling back to lexical search."
            if semantic is None:
                effective = "lexical"
                scored = [(h, 1.0 / r) for r, h in enumerate(lexical[:top_k], 1)]
            else:
                weight = float(getattr(cfg, "semantic_weight", 1.0))
                scored = rrf_fuse([semantic, lexical], int(cfg.rrf_k), [weight, 1.0])[:top_k]
        terms = build_lexical_query(query).terms
        return {
            "results": [self._item(h, score, effective, terms) for h, score in scored],
            "warning": warning,
        }

    @staticmethod
    def _item(hit: ChunkHit, score: float, mode: str, terms: tuple[str, ...]) -> dict[str, Any]:
        return {
            "path": hit.path,
            "pointer": hit.anchor,
            "fullPointer": f"{hit.path}::{hit.anchor}",
            "score": score,
            "searchMode": mode,
            "headingPath": hit.heading_path,
            "snippet": make_snippet(hit.text, terms),
            "readHint": {
                "path": hit.path,
                "pointer": hit.anchor,
                "maxElements": READ_HINT_MAX_ELEMENTS,
                "maxBytes": READ_HINT_MAX_BYTES,
            },
            "indexedSourceHash": hit.source_hash,
        }


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."
