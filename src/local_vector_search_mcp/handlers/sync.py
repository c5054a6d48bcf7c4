"""The index sync hook shared by every Markdown mutation (contract §9.3).

A committed mutation queues its path(s) for targeted re-indexing and reports
``indexSynchronized`` honestly: true only when nothing needs indexing (the
path is outside the indexed set), false while re-indexing is queued; an
``indexError`` when the queue could not take it (spec/decisions.md 21-22).
"""

from __future__ import annotations

import logging
from typing import TypeVar

from lvsm_contract.models import KbCreateResult, KbDeleteResult, KbMoveResult, KbPatchResult

from ..index.indexer import indexable
from ..workspace import Workspace

log = logging.getLogger(__name__)

# The four tools whose result is the spec's MutationResult (kb_create) or begins with its five fields.
MutationModel = TypeVar("MutationModel", KbCreateResult, KbMoveResult, KbDeleteResult, KbPatchResult)


def _indexed(ws: Workspace, rel: str) -> bool:
    return indexable(rel, ws.indexing.path_filter)


def mutation_result(
    model: type[MutationModel], ws: Workspace, rel: str, sha: str | None, *, previous: str | None = None
) -> MutationModel:
    paths = [p for p in (previous, rel) if p is not None and _indexed(ws, p)]
    error = None
    if paths:
        try:
            ws.indexing.schedule_sync(paths)
        except Exception as exc:  # the file is committed; say so honestly instead of failing
            log.warning("could not queue re-indexing: %s", exc)
            error = f"The change is saved but could not be queued for re-indexing: {exc}"
    return model(path=rel, source_hash=sha, index_synchronized=not paths, index_error=error, previous_path=previous)


def queue_sync(ws: Workspace, paths: list[str]) -> None:
    """Queue re-indexing of other files a mutation rewrote (their links); failures are logged only."""
    wanted = [p for p in paths if _indexed(ws, p)]
    if wanted:
        try:
            ws.indexing.schedule_sync(wanted)
        except Exception as exc:  # the files are committed; the next reindex picks them up
            log.warning("could not queue re-indexing: %s", exc)


def unchanged_result(model: type[MutationModel], ws: Workspace, rel: str, sha: str) -> MutationModel:
    """Nothing was written: the index is in sync iff it already holds this revision (decision 21)."""
    synchronized = not _indexed(ws, rel)
    if not synchronized:
        try:
            state = ws.store.document_states_of([rel]).get(rel)
            synchronized = state is not None and state.source_hash == sha
        except Exception:  # no index yet, or it cannot be read: report "not synchronized"
            synchronized = False
    return model(path=rel, source_hash=sha, index_synchronized=synchronized, index_error=None, previous_path=None)
