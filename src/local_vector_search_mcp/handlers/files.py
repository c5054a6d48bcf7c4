"""kb_list_files: walk the knowledge-base root."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import stat
from datetime import UTC, datetime
from functools import lru_cache

from lvsm_contract.models import FileEntry, KbListFilesRequest, KbListFilesResult, SkippedEntry

from ..errors import PermissionDenied
from ..globs import compile_glob, nfc, validate_glob
from ..paths import not_utf8, shown_name
from ..sourcefile import os_reason, unlisted_folder
from ..workspace import Workspace
from ..writer import is_temp_name


@lru_cache(maxsize=1 << 16)
def utc_iso(timestamp: float) -> str:
    """``timestamp`` as ISO 8601 UTC with milliseconds and a ``Z``; kept for the next listing, which
    meets the same modification times again (decision 951)."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


MAX_LISTED_SKIPPED = 100
# one kb_list_files page (decision 774): about 300 kB of JSON, kb_read's largest page being about 200 kB
MAX_LISTED_FILES = 2000
# the longest root-relative path the contract's RelativePath takes (spec/defs.yaml): a longer one
# would make the answer fail its own schema
MAX_PATH_CHARS = next(
    m.max_length for m in FileEntry.model_fields["relative_path"].metadata if getattr(m, "max_length", None)
)


def walk_files(
    ws: Workspace, prefix: str = "", skipped: list[tuple[str, str]] | None = None, folders: list[str] | None = None
) -> list[tuple[str, os.stat_result]]:
    """Every regular file at or under ``prefix`` (root-relative, compared case-insensitively),
    skipping links, .git, the index's files and the server's temporary files, sorted
    case-insensitively.

    ``folders``: the literal folder names a glob's path starts with (``docs/api`` of
    ``docs/api/**/*.md``): only those folders are walked down to, matched as the glob matches
    them (case-insensitive, in NFC), and nothing beside them is looked at (decision 953).

    A folder that cannot be listed, an entry that cannot be inspected, and a file or folder whose
    name the path guard refuses are left out and appended to ``skipped`` as ``(path, reason)``;
    the rest is still listed.
    """
    lowered = prefix.lower()
    skipped = [] if skipped is None else skipped
    on_the_way = [re.compile(re.escape(name), re.IGNORECASE | re.DOTALL) for name in folders or ()]

    def wanted(rel: str, is_dir: bool) -> bool:
        low = rel.lower()
        if not lowered or low == lowered or low.startswith(lowered + "/"):
            return True
        # a folder on the way down to the prefix
        return is_dir and lowered.startswith(low + "/")

    found: list[tuple[str, os.stat_result]] = []
    root = str(ws.root)
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        depth = rel_dir.count("/") + 1 if rel_dir else 0  # of this folder's entries
        way = on_the_way[depth] if depth < len(on_the_way) else None
        abs_dir = os.path.join(root, rel_dir) if rel_dir else root
        try:
            with os.scandir(abs_dir) as entries:
                items = list(entries)
        except OSError as exc:
            skipped.append((rel_dir or ".", unlisted_folder(exc)))
            continue
        for entry in items:
            if way is not None and (way.fullmatch(nfc(entry.name)) is None or not entry.is_dir(follow_symlinks=False)):
                continue  # no path the glob matches is in it or is it
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not_utf8(entry.name):  # no tool could name it, and JSON cannot carry it (decision 284)
                if wanted(rel, entry.is_dir(follow_symlinks=False)):
                    skipped.append((shown_name(rel), "its name is not valid UTF-8; rename it to reach it"))
                continue
            if entry.name.lower() == ".git" or is_temp_name(entry.name):
                continue
            refused = ws.guard.refusal_in(rel_dir, entry.name)  # rel_dir itself passed (decision 951)
            if refused is not None and refused.internal:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                if not isinstance(exc, FileNotFoundError):  # deleted meanwhile: simply not there
                    skipped.append((rel, f"it could not be inspected ({os_reason(exc)})"))
                continue
            if refused is not None:  # nul.md, what?.md, dir./: no tool can name it (decisions 283, 291)
                is_dir = stat.S_ISDIR(st.st_mode)
                if (is_dir or stat.S_ISREG(st.st_mode)) and wanted(rel, is_dir):
                    what = "it or anything in it" if is_dir else "it"
                    skipped.append((rel, f"the tools cannot address {what}: {refused.why}; rename it to reach it"))
                continue
            if len(rel) > MAX_PATH_CHARS:  # no tool takes such a path, and no answer may carry it (decision 952)
                is_dir = stat.S_ISDIR(st.st_mode)
                if (is_dir or stat.S_ISREG(st.st_mode)) and wanted(rel, is_dir):
                    what = "its path and the paths in it are" if is_dir else "its path is"
                    skipped.append(
                        (rel, f"{what} longer than the {MAX_PATH_CHARS} characters the tools take; move it higher")
                    )
                continue
            if stat.S_ISDIR(st.st_mode):
                if wanted(rel, True):
                    pending.append(rel)
            elif stat.S_ISREG(st.st_mode) and wanted(rel, False):
                found.append((rel, st))
    found.sort(key=lambda item: _order(item[0]))
    skipped.sort(key=lambda item: (item[0].lower(), item[0]))
    return found


def kb_list_files(ws: Workspace, request: KbListFilesRequest) -> KbListFilesResult:
    # a blank filter is no filter, as the reference reads both (IsNullOrWhiteSpace: decision 894)
    glob = request.include_glob if request.include_glob is not None and request.include_glob.strip() else "**/*"
    include = compile_glob(glob, "includeGlob")
    prefix = ""
    if request.path_prefix is not None and request.path_prefix.strip():
        prefix = ws.guard.normalise(request.path_prefix.rstrip("/\\") or "/", field="pathPrefix")
        with contextlib.suppress(PermissionDenied):  # a folder on the way it cannot look into: named in skipped
            prefix, _ = ws.guard.resolve(prefix, field="pathPrefix")  # a folder a Mac named (NFD) as typed (NFC)
    limit = max(1, min(MAX_LISTED_FILES, request.max_files))
    # a page starts after the cursor's place in the sort order, not at a position: files created
    # or deleted before it do not shift the rest (decision 774)
    after = None if request.cursor is None else _order(request.cursor)
    files: list[FileEntry] = []
    skipped: list[tuple[str, str]] = []
    next_cursor: str | None = None
    segments = validate_glob(glob, "includeGlob").split("/")
    folders = list(itertools.takewhile(lambda name: "*" not in name and "?" not in name, segments[:-1]))
    for rel, st in walk_files(ws, prefix, skipped, folders):
        if not include(rel) or (after is not None and _order(rel) <= after):
            continue
        if len(files) == limit:
            next_cursor = files[-1].relative_path
            break
        files.append(
            FileEntry(
                relative_path=rel,
                kind="markdown" if rel.lower().endswith(".md") else "asset",
                size=st.st_size,
                last_write_time_utc=utc_iso(st.st_mtime),
            )
        )
    return KbListFilesResult(
        files=files,
        skipped_folders=len(skipped),
        skipped=[SkippedEntry(path=path, reason=reason) for path, reason in skipped[:MAX_LISTED_SKIPPED]],
        next_cursor=next_cursor,
    )


def _order(rel: str) -> tuple[str, str]:
    """The listing's sort key (contract §7.3): case-insensitive, then ordinal."""
    return (rel.lower(), rel)
