"""kb_search: lexical, semantic and hybrid retrieval over the index (contract §2.3).

* lexical: BM25 over chunk text and heading path (heading weighted 2x), the
  query's words OR-ed after dropping stop words (``stopwords.py``; kept when
  the query has nothing else), plus each pair of adjacent content words as a
  phrase (proximity). English words also match by stem at a quarter weight
  (``index/stem.py``), so ``echoing`` finds ``echo`` while the exact form
  ranks first; identifiers are never stemmed, but a hyphenated word's parts are, as a phrase
  (``fine-tuned`` finds ``fine-tuning``). Every remaining word takes part in scoring at
  any index size: an earlier row budget kept only the rarest words of an OR
  and, on a 50k-chunk index, threw away the words that mattered (issue 9).
  The OR carries a cost bound, ``ROW_BUDGET`` rows: an adapter that scores
  every row an OR matches before sorting (FTS5) may drop the most common
  alternatives while the rest add up to more (ten times the old budget: on the
  three shared sets nothing that matters is dropped, and long CJK questions,
  made of many common bigrams, stay inside the 20 ms p95 goal at 50k chunks). A punctuated
  piece is matched as written (its tokens adjacent); when that finds fewer
  than the needed chunks, its words on their own follow. An English question
  of three or more words (``fusion.is_question``) asks the store to rescore its
  best candidates by the share of the question's words each holds
  (``index/coverage.py``, decision 220); other prose of as many words (a task told in
  other words than the documentation's) by that share with each word weighed by its
  rarity, so common words count little (decision 1070), and so is a list of as many keywords
  (decision 1090; :func:`coverage_hint`). A page's table of contents (a list of
  links to its own sections) goes after that page's other hits (``contents.py``,
  decision 1021), as does a list of links to other documents (a book's summary) after
  the last hit of a document it lists (decision 1071), and a change log's entries (chunks
  under a release heading such as ``## 1.2.0 (2024-01-01)``) after the other hits that hold
  as many of the query's words, unless the query asks about versions or changes (``changelog.py``, decision 1044). Any
  other query of a few words that is exactly a document's title puts that document's first chunk ahead
  (``titles.py``, decision 260), and one of two words or more that is exactly a
  section's heading puts that section's best chunk ahead of the other hits (decision 665), as
  does a one-word identifier that is a section's code heading (``setErrorHandler``, decision 1022).
  An acronym alone (``ISM``) names the page titled with what the hits define it as
  (``Index State Management (ISM)``; ``acronyms.py``, decision 1018).
* semantic: k-nearest chunks to the query embedding (the store's vector search).
* hybrid: weighted reciprocal rank fusion of both candidate pools,
  ``score = sum(weight / (rrfK + rank))`` (lexical weight 1, semantic
  ``search.semanticWeight`` for prose queries and a tenth of it for keyword,
  identifier and code queries, ``fusion.py``), ties by chunk id ascending. ``rrfK 60`` and
  ``semanticWeight 1`` give the reference's plain RRF; the defaults (20, 0.3)
  were chosen on the three labelled sets together because the bundled model
  ranks below BM25 (decision 182). Under them a chunk only the model found can
  never reach the top, so a question (``fusion.is_question``) keeps the last fifth of ``topK``
  for the semantic list's best chunks when the fusion ranked them lower
  (``fusion.seat_semantic``, decision 416).

Every mode collapses duplicate passages (``duplicates.py``): it ranks a pool
larger than ``topK`` (hybrid: the fusion pools; a single mode: ``3 x topK``,
at most the configured pool) and keeps the first ``topK`` distinct passages,
each shown from the largest document holding it (decision 1080), the other copies
in ``alsoIn``; a section's second chunk comes after every section's first (decision
1082). A candidate list that came back full while
holding fewer than ``topK`` distinct passages (many copies of one page ranked
first) is fetched again, twice as long, up to ``POOL_CEILING`` (decision 690):
copies never cost results that exist.

Include/exclude globs reach the store as data (:class:`PathScope`), which it
applies inside each retrieval before its limit. Lexical and semantic scores
are ``1/rank``.

Embeddings off: lexical runs silently, hybrid runs lexical only with a warning,
semantic is ``INDEX_NOT_READY``. Provider failing: hybrid falls back to
lexical with a warning containing "Falling back to lexical search", semantic
is ``INDEX_NOT_READY`` suggesting lexical.

A lexical side that found no chunk is said in ``warning`` (``no_match.py``):
hybrid's results are then the model's alone, lexical's are none.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..embeddings import Embedder, ModelChanged
from ..embeddings.base import Vectors
from ..errors import IndexNotReady, InvalidArgument
from ..index.port import ChunkHit, IndexStore
from ..index.query import PathScope
from .acronyms import acronym, expansions
from .changelog import ChangeLogPages, demote_changelog
from .contents import demote_contents, demote_navigation
from .definitions import promote_defined
from .duplicates import collapse, passage_key, sections_first, shown_from_largest
from .fusion import KEYWORD_SHARE, is_prose, is_question, seat_semantic, semantic_weight
from .meaning import semantic_worthy
from .names import named_hits
from .no_match import no_match_note
from .query_vectors import QueryVectors
from .stopwords import reads_as_question
from .text import build_lexical_query, composed, make_snippet
from .titles import front_matter_titled, promote_headed, promote_titles, titled_by_content, titled_hits

__all__ = [
    "MAX_TOP_K",
    "READ_HINT_MAX_BYTES",
    "READ_HINT_MAX_ELEMENTS",
    "SearchEngine",
    "SearchItem",
    "SearchOutcome",
    "SearchRequest",
    "coverage_hint",
    "rrf_fuse",
]

MAX_TOP_K = 50
READ_HINT_MAX_ELEMENTS = 20
READ_HINT_MAX_BYTES = 12000
MODES = ("lexical", "semantic", "hybrid")
Mode = Literal["lexical", "semantic", "hybrid"]
_MODE_NAMES: dict[str, Mode] = {"lexical": "lexical", "semantic": "semantic", "hybrid": "hybrid"}
DUPLICATE_HEADROOM = 3  # a single mode ranks 3 x topK chunks so copies cannot starve the results
POOL_CEILING = 1000  # a list grown past its pool for copies stops here, the largest pool the configuration admits
ROW_BUDGET = 20_000  # rows an OR query may score (see the module docstring); the 2 rarest words always stay
QUESTION_COVERAGE = 1.0  # a question's candidates: bm25 * (share of its words held) ** this (decision 220)
QUESTION_MIN_WORDS = 3  # ... when it has at least this many plain words
# any other query of as many words but a question holding code: the share by rarity (decisions 1070, 1090)
PROSE_COVERAGE = 1.0


def coverage_hint(query: str, word_count: int, question: bool) -> tuple[float, bool]:
    """How lexical search rescores the best candidates of ``query`` (``AnyOf.coverage``,
    ``AnyOf.by_rarity``): a question of :data:`QUESTION_MIN_WORDS` plain words or more by the share
    of its words a chunk holds (decision 220); any other query of as many words by that share
    with each word weighed by its rarity (decision 1070: a task told in other words; decision
    1090: a list of keywords, ``restore snapshot rename_pattern index name conflict``, whose best
    chunk holds its rare words together, where summed BM25 let one rare word carry a chunk); no
    rescoring for shorter queries, nor for a question holding code (``When should I use Arc<T>
    instead of Rc<T>?``, not prose for the fusion), where either share ranked worse."""
    if word_count < QUESTION_MIN_WORDS:
        return 0.0, False
    if question:
        return QUESTION_COVERAGE, False
    if is_prose(query) or not reads_as_question(query):
        return PROSE_COVERAGE, True
    return 0.0, False


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


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A validated search: mode and topK resolved against the configuration."""

    query: str
    mode: Mode
    top_k: int
    scope: PathScope | None


@dataclass(frozen=True, slots=True)
class SearchItem:
    """One ranked chunk (the handler turns it into a kb_search result item)."""

    path: str
    pointer: str
    score: float
    search_mode: Mode
    heading_path: str | None
    snippet: str
    indexed_source_hash: str
    also_in: tuple[tuple[str, str], ...] = ()  # (path, pointer) of the same passage elsewhere


@dataclass(slots=True)
class SearchOutcome:
    items: list[SearchItem]
    warning: str | None
    effective_mode: Mode


@dataclass
class SearchEngine:
    store: IndexStore
    search_config: Any
    embedder_provider: Callable[[], Embedder | None]  # the embedder, or None (lexical mode)
    query_vectors: QueryVectors = field(default_factory=QueryVectors)
    # told when the provider's query vector is another size than the index's (decision 977)
    on_model_changed: Callable[[ModelChanged], None] | None = None
    changelogs: ChangeLogPages = field(default_factory=ChangeLogPages)  # which pages are change logs (1044)

    def lexical_hits(self, query: str, limit: int, scope: PathScope | None) -> list[ChunkHit]:
        return self._lexical(composed(query), limit, scope)[0]

    def _lexical(self, query: str, limit: int, scope: PathScope | None) -> tuple[list[ChunkHit], bool]:
        """The lexical hits, and whether ``query`` names a document (its title or file name) or a
        section (its heading) among them."""
        parsed = build_lexical_query(query)
        if not parsed.leaves:
            return [], False
        question = is_question(query)
        cover, by_rarity = coverage_hint(query, parsed.word_count, question)
        hits = self.store.lexical(parsed.ranked(ROW_BUDGET, cover, by_rarity), limit, scope)
        fallback = parsed.words() if len(hits) < limit else None
        if fallback is not None:
            seen = {h.chunk_id for h in hits}
            more = [h for h in self.store.lexical(fallback, limit, scope) if h.chunk_id not in seen]
            hits += more[: limit - len(hits)]
        headed = False
        if not question:  # a question never names a heading or a title
            hits, headed = promote_headed(promote_defined(hits, query), query)
        # after the headings: a change-log entry headed by a name (``app.url_path_for()`` under
        # ``0.6.0``) is news about it, not its definition, and goes behind it (decision 1049)
        hits = demote_changelog(
            demote_navigation(demote_contents(hits)), query, parsed, self.changelogs, self._page_headings
        )
        titled = [] if question else self._titled(query, hits, scope)
        # a title given only in the front matter: after the visible titles (decision 1081)
        fronted = [] if question else front_matter_titled(self.store, query, scope, {h.path for h in titled})
        hits = promote_titles(hits, fronted, limit)
        named = named_hits(self.store, query, scope)  # a document's path or file name goes first
        named_any = bool(titled or fronted or named or headed)
        return promote_titles(promote_titles(hits, titled, limit), named, limit), named_any

    def _page_headings(self, paths: Collection[str]) -> dict[str, tuple[str, ...]]:
        return {path: meta.headings for path, meta in self.store.document_meta(paths).items()}

    def _titled(self, query: str, hits: Sequence[ChunkHit], scope: PathScope | None) -> list[ChunkHit]:
        """The first chunk of each document ``query`` names by its title, or, for an acronym
        alone, by the name ``hits`` define it as (``acronyms.py``)."""
        titled = titled_hits(self.store, query, scope)
        seen = {h.chunk_id for h in titled}
        titled += [h for h in titled_by_content(self.store, query, hits, scope) if h.chunk_id not in seen]
        short = acronym(query)
        if short is None:
            return titled
        seen = {h.chunk_id for h in titled}
        for name in expansions(short, hits):
            titled += [h for h in titled_hits(self.store, name, scope) if h.chunk_id not in seen]
            seen.update(h.chunk_id for h in titled)
        return titled

    def semantic_hits(self, embedder: Embedder, query: str, limit: int, scope: PathScope | None) -> list[ChunkHit]:
        return self.store.semantic(self._query_vector(embedder, query), limit, scope)

    def _query_vector(self, embedder: Embedder, query: str) -> Vectors:
        try:
            vector = self.query_vectors.get(embedder, query)  # an endpoint's embedder checks the size itself
            dims = self.store.vector_dimensions()
            if dims is not None and vector.shape[-1] != dims:  # another model's query: never compared (decision 512)
                raise ModelChanged(int(vector.shape[-1]), dims, provider=embedder.provider)
        except ModelChanged as changed:
            if self.on_model_changed is not None:
                self.on_model_changed(changed)
            raise
        return vector

    def _semantic_candidates(
        self, embedder: Embedder, query: str, limit: int, top_k: int, scope: PathScope | None
    ) -> list[ChunkHit]:
        vector = self._query_vector(embedder, query)  # once: a grown list asks the store again, not the model

        def fetch(n: int) -> list[ChunkHit]:
            # n chunks worth ranking: markup-only ones are skipped (decision 790), so a list they cut
            # short is asked again for as many more as they took, until the index has no more
            want = n
            while True:
                hits = self.store.semantic(vector, want, scope)
                worthy = [h for h in hits if semantic_worthy(h)]
                if len(worthy) >= n or len(hits) < want or want >= POOL_CEILING:
                    return worthy[:n]
                want += n - len(worthy)

        return _distinct_enough(fetch, limit, top_k)

    def _lexical_candidates(
        self, query: str, limit: int, top_k: int, scope: PathScope | None
    ) -> tuple[list[ChunkHit], bool]:
        titled = False

        def fetch(n: int) -> list[ChunkHit]:
            nonlocal titled
            hits, titled = self._lexical(query, n, scope)
            return hits

        return _distinct_enough(fetch, limit, top_k), titled

    def validate(
        self,
        query: str | None,
        mode: str | None = None,
        top_k: int | None = None,
        include_globs: Sequence[str] | None = None,
        exclude_globs: Sequence[str] | None = None,
    ) -> SearchRequest:
        """Check the arguments (InvalidArgument when one is wrong)."""
        if query is None or not query.strip():
            raise InvalidArgument("query must not be blank.")
        cfg = self.search_config
        name = str(getattr(mode, "value", mode) or getattr(cfg.default_mode, "value", cfg.default_mode)).lower()
        resolved = _MODE_NAMES.get(name)
        if resolved is None:
            raise InvalidArgument(f"mode must be one of lexical, semantic, hybrid (got {name!r}).")
        if top_k is None:
            top_k = int(cfg.max_results)
        if isinstance(top_k, bool) or top_k <= 0:
            raise InvalidArgument("topK must be a positive integer.")
        scope = PathScope(tuple(include_globs or ()), tuple(exclude_globs or ()))
        scope.matcher()  # validates every pattern now, whatever the store does with them
        return SearchRequest(query, resolved, min(top_k, MAX_TOP_K), None if scope.is_everything else scope)

    def _selects_any(self, scope: PathScope) -> bool:
        """Whether ``scope`` keeps any indexed document (asked only of a search that found nothing)."""
        keeps = scope.matcher()
        return any(keeps(path) for path in self.store.document_states())

    def _built_with(self) -> str | None:
        """The model of an index built with embeddings, which a run without them uses lexically
        (decision 630); ``None`` for a lexical index."""
        manifest = self.store.read_manifest()
        return manifest.get("embedding_model") if manifest.get("index_mode") == "vector-enabled" else None

    def search(self, request: SearchRequest) -> SearchOutcome:
        # composed once for every side: titles, headings and file names are matched against it too
        query, mode, top_k, scope = composed(request.query), request.mode, request.top_k, request.scope
        cfg = self.search_config
        embedder = self.embedder_provider()
        warning: str | None = None
        effective: Mode = mode
        lexical_pool = max(top_k, int(cfg.lexical_candidate_pool_size))
        semantic_pool = max(top_k, int(cfg.semantic_candidate_pool_size))
        single_pool = min(DUPLICATE_HEADROOM * top_k, lexical_pool)  # a single mode ranks no fusion pool
        parsed = build_lexical_query(query)
        lexical_found: bool | None = None  # whether the lexical side found a chunk (None: it did not run)

        if mode == "lexical":
            scored = [(h, 0.0) for h in self._lexical_candidates(query, single_pool, top_k, scope)[0]]
            lexical_found = bool(scored)
        elif mode == "semantic":
            if embedder is None:
                built = self._built_with()
                if built is not None:
                    raise IndexNotReady(
                        f"Semantic search needs embeddings and this run has none (embedding.provider none), although "
                        f"the index was built with '{built}': run with the provider it was built with for semantic "
                        "search (its vectors are kept), or use lexical mode."
                    )
                raise IndexNotReady(
                    "Semantic search needs embeddings, but the index is lexical only "
                    "(embedding.provider is none or the index was built without vectors); use lexical mode."
                )
            if not self.store.has_vectors():
                raise IndexNotReady(
                    "Semantic search needs vectors, but the index has no vectors yet (the embedding provider "
                    "has not answered so far; vectors are added once it does); use lexical or hybrid mode."
                )
            try:
                hits = self._semantic_candidates(
                    embedder, query, min(DUPLICATE_HEADROOM * top_k, semantic_pool), top_k, scope
                )
            except IndexNotReady:
                raise  # the index's own state (damaged, busy, gone): its message names the fix
            except ModelChanged as exc:
                raise IndexNotReady(f"{exc} Until then semantic search is unavailable; use lexical mode.") from exc
            except Exception as exc:
                raise IndexNotReady(
                    f"The embedding provider failed ({_reason(exc)}); semantic search is unavailable, use lexical mode."
                ) from exc
            scored = [(h, 0.0) for h in hits]
        else:
            lexical, titled = self._lexical_candidates(query, lexical_pool, top_k, scope)
            lexical_found = bool(lexical)
            semantic: list[ChunkHit] | None = None
            if embedder is None:
                built = self._built_with()
                warning = (
                    "Embeddings are disabled (embedding.provider: none), so only lexical search ran; "
                    "results are lexical."
                    if built is None
                    else "Embeddings are disabled in this run (embedding.provider: none), so only lexical search "
                    f"ran; results are lexical. The index was built with '{built}': a run with that provider "
                    "uses its vectors."
                )
            elif not self.store.has_vectors():
                warning = (
                    "The index has no vectors yet (the embedding provider has not answered so far; vectors are "
                    "added once it does). Falling back to lexical search: results are lexical."
                )
            else:
                try:
                    semantic = self._semantic_candidates(embedder, query, semantic_pool, top_k, scope)
                except IndexNotReady as exc:
                    warning = f"{exc.message} Falling back to lexical search."
                except ModelChanged as exc:
                    warning = f"{exc} Falling back to lexical search."
                except Exception as exc:
                    warning = f"The embedding provider failed ({_reason(exc)}). Falling back to lexical search."
            if semantic is None:
                effective = "lexical"
                scored = [(h, 0.0) for h in lexical]
            else:
                configured = float(cfg.semantic_weight)
                # a query naming a document's title or a section's heading is a name, not prose (titles.py)
                prose = not titled and is_prose(query)
                weight = semantic_weight(query, configured) if prose else configured * KEYWORD_SHARE
                scored = rrf_fuse([semantic, lexical], int(cfg.rrf_k), [weight, 1.0])
                if prose and is_question(query):  # the model's best keep the last fifth of topK (decision 416)
                    scored = seat_semantic(scored, semantic, top_k)
        kept = collapse(sections_first(scored), top_k)
        copied = {h.path for c in kept if c.also_in for h in (c.hit, *c.also_in)}
        if copied:  # a passage in several documents is shown from the largest (decision 1080)
            shown_from_largest(kept, self.store.chunk_counts(copied))
        if (lexical_found is False or not kept) and scope is not None and not self._selects_any(scope):
            # nothing was searched: "check the spelling" would send the agent after the wrong cause (719)
            note = SCOPE_SELECTS_NOTHING
            warning = f"{warning} {note}" if warning else note
        elif lexical_found is False:  # a misspelt name must not pass for an answer (decision 810)
            note = no_match_note(
                has_words=bool(parsed.leaves),
                scoped=scope is not None,
                by_meaning=effective == "hybrid" and bool(kept),
                can_mean=mode == "lexical" and embedder is not None,  # hybrid already tried the model
            )
            warning = f"{warning} {note}" if warning else note
        terms = parsed.terms
        items = [
            SearchItem(
                c.hit.path,
                c.hit.anchor,
                c.score if effective == "hybrid" else 1.0 / rank,  # single modes: 1/rank among distinct passages
                effective,
                c.hit.heading_path,
                make_snippet(c.hit.text, terms),
                c.hit.source_hash,
                tuple((d.path, d.anchor) for d in c.also_in),
            )
            for rank, c in enumerate(kept, 1)
        ]
        return SearchOutcome(items, warning, effective)


SCOPE_SELECTS_NOTHING = (
    "No indexed document is selected by the includeGlobs, excludeGlobs and tags given, so nothing was searched: "
    "globs match root-relative paths such as `guide/setup.md` (case-insensitive; `*` stays inside a folder, `**` "
    "crosses folders, `{a,b}` and `[...]` are literal), and tags must all be carried; kb_list_files shows the paths."
)


def _distinct_enough(fetch: Callable[[int], list[ChunkHit]], limit: int, top_k: int) -> list[ChunkHit]:
    """``fetch(limit)``, fetched again, longer (up to ``POOL_CEILING``), while it comes back full
    yet holds fewer than ``top_k`` distinct passages: copies of one page ranked first would
    otherwise leave results out that exist (decision 690). A list that was not short is fetched
    once, as before, so such a search ranks exactly as it did.

    The longer list is sized by the share of distinct passages the short one held (with a quarter
    more, for pages copied unevenly), at least twice as long: every fetch ranks the whole match
    again, so doubling from 30 took six of them to reach a pool of 1,000 when each page had
    dozens of copies (decision 628)."""
    while True:
        hits = fetch(limit)
        if len(hits) < limit or limit >= POOL_CEILING:
            return hits
        distinct = len({passage_key(h.text) for h in hits})
        if distinct >= top_k:
            return hits
        needed = -(-limit * top_k * 5 // (4 * max(distinct, 1)))  # ceil(limit * top_k / distinct * 1.25)
        limit = min(max(2 * limit, needed), POOL_CEILING)


def _reason(exc: Exception) -> str:
    text = (str(exc) or type(exc).__name__).rstrip(".")  # it sits inside a sentence
    return text if len(text) <= 300 else text[:300] + "..."
