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

from lvsm_contract.models import KbReindexRequest, KbReindexResult

from ..errors import KbError
from ..index.indexer import Progress
from ..index.service import IndexService
from ..workspace import Workspace

__all__ = ["kb_reindex", "reindex_cli"]


def kb_reindex(ws: Workspace, request: KbReindexRequest) -> KbReindexResult:
    # The index area still answers in wire JSON; validated into the result model here.
    return KbReindexResult.model_validate(ws.service(IndexService).start_reindex(request.scope, request.force))


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
        name = (progress.current_path or "")[-40:]
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
        result = ws.service(IndexService).reindex("changed", force, on_progress=bar)
    except KbError as exc:
        bar.close()
        print(f"local-vector-search-mcp: {exc.message}", file=sys.stderr)
        return 1
    finally:
        ws.close()
    bar.close()
    print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0
