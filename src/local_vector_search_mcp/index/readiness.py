"""Whether the index can answer: the readiness check every query tool makes first.

Kept apart from the search stack (``search/service.py`` imports the ranking
engine, its regular expressions and numpy, ~80 ms): kb_links needs only this
check and the link graph, and its first call in a server paid that import
(decision 1098).
"""

from __future__ import annotations

from typing import Any

from ..embeddings import EmbedderSlot
from ..errors import IndexNotReady
from .activity import IndexActivity
from .manifest import incompatible_message, index_problems
from .port import IndexStore

__all__ = ["check_ready"]


def check_ready(
    config: Any, embedders: EmbedderSlot, store: IndexStore, activity: IndexActivity, need_chunks: bool = True
) -> None:
    """IndexNotReady unless the index can answer: no forced rebuild running, built with
    the running settings, not empty (``need_chunks``: holding searchable text, not only
    documents: the link graph needs documents alone)."""
    if activity.rebuild_in_progress:
        raise IndexNotReady("Index rebuild in progress (a forced kb_reindex); check kb_status and retry.")
    problems = index_problems(config, embedders.get(), store)
    if problems:
        raise IndexNotReady(incompatible_message(problems))
    if not store.has_chunks():
        documents = store.counts().documents
        if documents and store.has_chunks():
            # a reindex committed between the two reads: the index holds text now, it is not
            # "documents without searchable text" (a search during a reindex was told so)
            return
        running = activity.current
        if not documents and running is not None:  # sending the agent to kb_reindex would loop
            total = running.total_files
            of = "" if total is None else f", {running.processed_files} of {total} files"
            raise IndexNotReady(
                f"The index is being built (a reindex is running{of}); retry shortly, kb_status shows its progress."
            )
        last = activity.last
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
