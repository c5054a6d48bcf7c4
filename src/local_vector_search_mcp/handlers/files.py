"""kb_list_files: walk the knowledge-base root."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime

from lvsm_contract.models import FileEntry, KbListFilesRequest, KbListFilesResult

from ..errors import PermissionDenied
from ..globs import compile_glob
from ..workspace import Workspace
from ..writer import is_temp_name


def utc_iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def walk_files(ws: Workspace, prefix: str = "") -> list[tuple[str, os.stat_result]]:
    """Every regular file at or under ``prefix`` (root-relative, compared case-insensitively),
    skipping links, .git and the index's files, sorted case-insensitively.

    Raises PermissionDenied instead of returning a silently incomplete list.
    """
    lowered = prefix.lower()

    def wanted(rel: str, is_dir: bool) -> bool:
        low = rel.lower()
        if not lowered or low == lowered or low.startswith(lowered + "/"):
            return True
        # a folder on the way down to the prefix
        return is_dir and lowered.startswith(low + "/")

    found: list[tuple[str, os.stat_result]] = []
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        abs_dir = ws.root / rel_dir if rel_dir else ws.root
        try:
            with os.scandir(abs_dir) as entries:
                items = list(entries)
        except OSError as exc:
            raise PermissionDenied(f"Could not list folder {rel_dir or '.'!r}: {exc.strerror}.") from None
        for entry in items:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name.lower() == ".git" or ws.guard.is_internal(rel) or is_temp_name(entry.name):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                raise PermissionDenied(f"Could not inspect {rel!r}: {exc.strerror}.") from None
            if stat.S_ISDIR(st.st_mode):
                if wanted(rel, True):
                    pending.append(rel)
            elif stat.S_ISREG(st.st_mode) and wanted(rel, False):
                found.append((rel, st))
    found.sort(key=lambda item: (item[0].lower(), item[0]))
    return found


def kb_list_files(ws: Workspace, request: KbListFilesRequest) -> KbListFilesResult:
    include = compile_glob(request.include_glob or "**/*", "includeGlob")
    prefix = ""
    if request.path_prefix is not None:
        prefix = ws.guard.normalise(request.path_prefix.rstrip("/\\") or "/", field="pathPrefix")
        ws.guard.resolve(prefix, field="pathPrefix")
    files = []
    for rel, st in walk_files(ws, prefix):
        if not include(rel):
            continue
        files.append(
            FileEntry(
                relative_path=rel,
                kind="markdown" if rel.lower().endswith(".md") else "asset",
                size=st.st_size,
                last_write_time_utc=utc_iso(st.st_mtime),
            )
        )
    return KbListFilesResult(files=files)
