"""kb_reindex (asynchronous, single-flight, §2.2) and the synchronous ``--reindex`` CLI.

Both index every file lexically first and then embed the chunks (vector
mode); the CLI waits for both passes and shows a progress bar for each, the
MCP tool returns at once and the work shows in ``kb_status.indexing``.
Compatibility and embedding failures are not tool errors: they end up in
``kb_status.indexing.last`` (``outcome: failed``) or in ``result.warning``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TextIO

from lvsm_contract.models import KbReindexRequest, KbReindexResult, ReindexProgress, UnreadableFile
from lvsm_contract.models import ReindexResult as ReindexResultModel

from ..errors import KbError
from ..index.indexer import Progress, ReindexResult
from ..workspace import Workspace

__all__ = ["kb_reindex", "progress_model", "reindex_cli", "reindex_result_model"]


def kb_reindex(ws: Workspace, request: KbReindexRequest) -> KbReindexResult:
    start = ws.indexing.start_reindex(request.scope, request.force)
    return KbReindexResult(started=start.started, current=progress_model(start.current))


def progress_model(progress: Progress) -> ReindexProgress:
    return ReindexProgress(
        scope=progress.scope,
        force=progress.force,
        started_at_utc=progress.started_at_utc,
        processed_files=progress.processed_files,
        total_files=progress.total_files,
        current_path=progress.current_path,
        is_destructive_rebuild=progress.is_destructive_rebuild,
    )


def reindex_result_model(result: ReindexResult) -> ReindexResultModel:
    return ReindexResultModel(
        scanned_files=result.scanned_files,
        indexed_files=result.indexed_files,
        skipped_files=result.skipped_files,
        deleted_files=result.deleted_files,
        chunks_indexed=result.chunks_indexed,
        warning=result.warning,
        unreadable_files=result.unreadable_files,
        unreadable=[UnreadableFile(path=path, reason=reason) for path, reason in result.unreadable],
    )


class _ProgressBar:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self._last = 0.0

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < 0.1:
            return
        self._last = now
        if progress.phase == "vectors":
            done = progress.embedded_chunks
            total = done + (progress.pending_chunks or 0)
            label = "vectors"
        else:
            total = progress.total_files or 0
            done = progress.processed_files
            label = "files"
        width = 30
        filled = int(width * done / total) if total else 0
        name = progress.current_path or ""
        if len(name) > 40:  # its end, marked as cut ("de/essentials/x.md" read as a folder "de")
            name = "..." + name[-37:]
        self.stream.write(f"\r{label:<7} [{'#' * filled}{'.' * (width - filled)}] {done}/{total or '?'} {name:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 90 + "\r")
            self.stream.flush()


def reindex_cli(ws: Workspace, *, force: bool) -> int:
    """Reindex changed files now; JSON result on stdout, exit 1 with a message on failure."""
    bar = _ProgressBar(sys.stderr)
    try:
        result = ws.indexing.reindex("changed", force, on_progress=bar)
    except KbError as exc:
        bar.close()
        print(f"local-vector-search-mcp: {exc.message}", file=sys.stderr)
        return 1
    finally:
        ws.close()
    bar.close()
    print(json.dumps(reindex_result_model(result).model_dump(by_alias=True), ensure_ascii=False, indent=2))
    if result.unreadable_files:
        # Still exit 0: every other file is indexed. Say so where a person running it looks.
        shown = ", ".join(path for path, _ in result.unreadable[:5])
        more = "" if result.unreadable_files <= 5 else f" and {result.unreadable_files - 5} more"
        print(
            f"local-vector-search-mcp: {result.unreadable_files} file(s) could not be indexed and were skipped "
            f'({shown}{more}); see "unreadable" for the reasons.',
            file=sys.stderr,
        )
    return 0
