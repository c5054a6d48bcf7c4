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
from ..errors import IndexNotReady
from ..index.activity import IndexActivity
from ..index.manifest import incompatible_message, index_problems
from ..index.port import IndexStore
from ..index.query import PathScope
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
        if tags:  # documents carrying every tag, as exact paths in the scope (filtered before ranking)
            scope = request.scope or PathScope()
            tagged = frozenset(self.store.paths_with_tags(tags))
            request = replace(request, scope=replace(scope, paths=tagged))
        if self.embedders.get() is not None and not self.store.has_vectors():
            # no vector table yet: the provider has not answered; try again, before a semantic
            # search refuses for want of vectors too (it said they come, and nothing asked: 1089)
            self.on_pending_vectors()
            return self.engine.search(request)
        outcome = self.engine.search(request)
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

    def check_ready(self, need_chunks: bool = True) -> None:
        """IndexNotReady unless the index can answer: no forced rebuild running, built with
        the running settings, not empty (``need_chunks``: holding searchable text, not only
        documents: the link graph needs documents alone)."""
        if self.activity.rebuild_in_progress:
            raise IndexNotReady("Index rebuild in progress (a forced kb_reindex); check kb_status and retry.")
        problems = index_problems(self.config, self.embedders.get(), self.store)
        if problems:
            raise IndexNotReady(incompatible_message(problems))
        if not self.store.has_chunks():
            documents = self.store.counts().documents
            if documents and self.store.has_chunks():
                # a reindex committed between the two reads: the index holds text now, it is not
                # "documents without searchable text" (a search during a reindex was told so)
                return
            running = self.activity.current
            if not documents and running is not None:  # sending the agent to kb_reindex would loop
                total = running.total_files
                of = "" if total is None else f", {running.processed_files} of {total} files"
                raise IndexNotReady(
                    f"The index is being built (a reindex is running{of}); retry shortly, kb_status shows its progress."
                )
            last = self.activity.last
            if not documents and last is not None and last.result is not None and not last.result.scanned_files:
                # the reindex it would send the agent to has just found nothing: a loop (decision 554)
                # its warning names the root's absolute path, which an error message never carries (errors.py)
                why = " (its warning in kb_status.indexing.last says why)" if last.result.warning else ""
                raise IndexNotReady(
                    f"The index is empty: the last reindex found no Markdown file to index{why}. Another kb_reindex "
                    "finds nothing more until Markdown files are added under the knowledge-base root or the "
                    "configuration (its root, its include globs) is corrected."
                )
            if not documents and last is not None and last.outcome == "failed":
                # the same reindex would fail the same way (an index folder that cannot be made, a
                # database that cannot be opened): point at its error, not back at it (decision 853)
                raise IndexNotReady(
                    "The index is empty: the last reindex failed (kb_status indexing.last.error says why and "
                    "what to fix). Fix that, then run kb_reindex again."
                )
            if not documents:
                # a reindex run by another process (`--reindex`, then `call kb_search`) left no record
                # here: say what an empty result of it means, or the agent runs it again (decision 1084)
                raise IndexNotReady(
                    "The index is empty. Run kb_reindex (CLI: --reindex) and follow progress with kb_status. "
                    "If a reindex already ran and indexed nothing, the knowledge-base root holds no Markdown "
                    "file (`.md`) that knowledgeBase.include matches: its warning says which, and another "
                    "reindex finds nothing until that changes."
                )
            if need_chunks:  # a reindex ran: sending the agent back to it would loop
                raise IndexNotReady(
                    f"The index holds {documents} document(s) but no searchable text (only headings, or empty "
                    "files): there is nothing to search yet; kb_status shows what was indexed."
                )
