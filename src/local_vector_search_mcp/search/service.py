"""SearchService: readiness, warnings and ranking of kb_search over the storage port.

It reads what indexing is doing (``index/activity.py``) and never talks to the
indexing service: when chunks still lack vectors it says so in ``warning``
and calls ``on_pending_vectors`` (wired by the workspace to start the
background embedding pass).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..embeddings import EmbedderSlot, ModelChanged
from ..index.activity import IndexActivity
from ..index.port import IndexStore
from ..index.query import PathScope
from ..index.readiness import check_ready
from .engine import SearchEngine, SearchOutcome

__all__ = ["SearchService"]


class SearchService:
    def __init__(
        self,
        config: Any,
        store: IndexStore,
        embedders: EmbedderSlot,
        activity: IndexActivity,
        on_pending_vectors: Callable[[], object] = lambda: None,
    ) -> None:
        self.config = config
        self.store = store
        self.embedders = embedders
        self.activity = activity
        self.on_pending_vectors = on_pending_vectors
        self.engine = SearchEngine(store, config.search, embedders.get, on_model_changed=self._model_changed)

    def _model_changed(self, exc: ModelChanged) -> None:
        """A query found the provider answering with another model (decision 977): kb_status says
        so in ``vectors.lastError`` (its ``compatibility`` compares the configuration, which did not
        change), until an embedding pass or a reindex succeeds."""
        self.activity.vector_error = str(exc)

    def search(
        self,
        query: str | None,
        mode: str | None = None,
        top_k: int | None = None,
        include_globs: Sequence[str] | None = None,
        exclude_globs: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
    ) -> SearchOutcome:
        request = self.engine.validate(query, mode, top_k, include_globs, exclude_globs)
        self.check_ready()
        tags_note = None
        if tags:  # documents carrying every tag, as exact paths in the scope (filtered before ranking)
            scope = request.scope or PathScope()
            tagged = frozenset(self.store.paths_with_tags(tags))
            request = replace(request, scope=replace(scope, paths=tagged))
            if not tagged:
                tags_note = self._tags_note(tags)
        if self.embedders.get() is not None and not self.store.has_vectors():
            # no vector table yet: the provider has not answered; try again, before a semantic
            # search refuses for want of vectors too (it said they come, and nothing asked: 1089)
            self.on_pending_vectors()
            return _noted(self.engine.search(request), tags_note)
        outcome = _noted(self.engine.search(request), tags_note)
        pending = self.store.pending_vector_count() if self.embedders.get() is not None else 0
        if not pending:
            return outcome
        counts = self.store.counts()
        missing = f"{counts.pending_vectors} of {counts.chunks} chunks do not have vectors yet"
        if counts.pending_vectors and request.mode == "semantic":
            # no lexical list in this answer: "lexical matches cover every chunk" told a semantic
            # search's caller the rest was covered (decision 1008)
            note = f"{missing} ({self.activity.vector_note()}); semantic search covers only the embedded chunks."
            if outcome.items or not outcome.warning:
                outcome.warning = f"{outcome.warning} {note}" if outcome.warning else note
        elif counts.pending_vectors and outcome.items and outcome.effective_mode != "lexical":
            note = (
                f"{missing} ({self.activity.vector_note()}); semantic matches cover only the embedded chunks, "
                "lexical matches cover every chunk."
            )
            outcome.warning = f"{outcome.warning} {note}" if outcome.warning else note
        if counts.pending_vectors:
            self.on_pending_vectors()
        return outcome

    def _tags_note(self, tags: Sequence[str]) -> str:
        """Which of ``tags`` no indexed document carries, or that none carries them all (decision
        1201): the scope's note named globs and tags together, and the agent could not tell which
        tag was wrong, nor list the ones there are."""
        unknown = list(dict.fromkeys(t for t in tags if not self.store.paths_with_tags([t])))
        if not unknown:
            return "Each of the tags is carried by some document, but no document carries them all."
        named = ", ".join(f"`{t}`" for t in unknown)
        return (
            f"No indexed document carries the tag{'s' if len(unknown) > 1 else ''} {named} (a tag is matched as "
            "written, case aside and with or without `#`, accents included; a parent `a` also matches the nested "
            "`a/b`, not the reverse); kb_read shows a document's front matter `tags` and its inline `#tags`."
        )

    def check_ready(self, need_chunks: bool = True) -> None:
        """IndexNotReady unless the index can answer (:func:`~..index.readiness.check_ready`)."""
        check_ready(self.config, self.embedders, self.store, self.activity, need_chunks)


def _noted(outcome: SearchOutcome, note: str | None) -> SearchOutcome:
    """``outcome`` with ``note`` after its warning."""
    if note is not None:
        outcome.warning = f"{outcome.warning} {note}" if outcome.warning else note
    return outcome
