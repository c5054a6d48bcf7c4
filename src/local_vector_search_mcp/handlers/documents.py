"""kb_create, kb_move, kb_delete: whole-document mutations guarded by SHA-256."""

from __future__ import annotations

import os
from pathlib import Path

from lvsm_contract.models import (
    KbCreateRequest,
    KbCreateResult,
    KbDeleteRequest,
    KbDeleteResult,
    KbMoveRequest,
    KbMoveResult,
    SkippedEntry,
)

from ..errors import AlreadyExists, InvalidPath, UnsupportedFormat
from ..index.port import DocumentMeta
from ..index.relink import markdown_files, plan_move
from ..markdown import parse_text
from ..markdown.source import decode_markdown
from ..paths import shown_name
from ..sourcefile import read_source, require_regular_file
from ..workspace import Workspace
from ..writer import create_new, delete_file, match_hash, move_file, move_with_rewrites
from .files import MAX_LISTED_SKIPPED
from .link_breaks import broken_by_create, broken_by_delete, broken_by_move, reported
from .markdown_text import require_text
from .sync import mutation_result, queue_sync


def kb_create(ws: Workspace, request: KbCreateRequest) -> KbCreateResult:
    ws.require_writes()
    rel, target = ws.guard.resolve(request.path, markdown=True)
    require_text(request.markdown, "markdown")
    sha = create_new(ws, rel, target, request.markdown.encode("utf-8"))
    # before the index is told: the graph still opens, by their names, the notes the new one may take
    # wikilinks from (decision 1200)
    breaks = broken_by_create(ws, rel, parse_text(request.markdown.removeprefix("\ufeff")))
    return reported(mutation_result(KbCreateResult, ws, rel, sha), breaks)


def kb_move(ws: Workspace, request: KbMoveRequest) -> KbMoveResult:
    ws.require_writes()
    src_rel, src = ws.guard.resolve(request.source_path, field="sourcePath", markdown=True)
    dst_rel, dst = ws.guard.resolve(request.target_path, field="targetPath", markdown=True)
    if src_rel == dst_rel:
        dst_rel, dst = ws.guard.respelled(src_rel, request.target_path)  # or INVALID_ARGUMENT: the same file
    # a folder or a FIFO named like a document is refused as kb_read refuses it (decisions 409, 702)
    require_regular_file(src, src_rel)
    if not request.update_links:
        sha = move_file(ws, src_rel, src, dst_rel, dst, request.expected_source_hash)
        # after the move, which stands whatever the report says, and before the index is told: the
        # graph still holds the document at its old path and every link that reached it there
        breaks = broken_by_move(ws, src_rel, dst_rel, {}, own_links_kept=True)
        return reported(mutation_result(KbMoveResult, ws, dst_rel, sha, previous=src_rel), breaks)
    # its own links are rewritten too: it must be a document that can be read (not a FIFO, not over
    # the cap) and decoded (decision 701)
    current = read_source(src, src_rel)
    # a taken target is the answer before the hash (decision 891) and before planning: not a link it
    # cannot rewrite
    if os.path.lexists(dst):
        raise AlreadyExists(f"Target {dst_rel!r} already exists; a move never overwrites. Choose another targetPath.")
    _must_be_text(current, src_rel)
    match_hash(src_rel, current, request.expected_source_hash)
    unlisted: list[tuple[str, str]] = []
    plan = plan_move(ws.root, _linking_files(ws, unlisted), _aliases(ws), src_rel, dst_rel)
    _add_unchecked(unlisted, plan.unchecked)
    rewrites = _rewrites(ws, plan.edits)
    move = (src_rel, src, dst_rel, dst, request.expected_source_hash)
    sha = move_with_rewrites(ws, move, plan.moved, rewrites)
    breaks = broken_by_move(ws, src_rel, dst_rel, plan.edits)  # what the rewrite left broken: normally none
    queue_sync(ws, sorted(rewrites))
    updated = sorted([*rewrites, *([dst_rel] if plan.moved is not None else [])])
    result = mutation_result(KbMoveResult, ws, dst_rel, sha, previous=src_rel)
    result.updated_paths = updated
    result.skipped_folders, result.skipped = skipped_entries(unlisted)
    return reported(result, breaks)


def skipped_entries(unlisted: list[tuple[str, str]]) -> tuple[int, list[SkippedEntry]]:
    """Folders a link walk could not list, for a result's ``skippedFolders``/``skipped`` (decision 245)."""
    return len(unlisted), [SkippedEntry(path=path, reason=reason) for path, reason in unlisted[:MAX_LISTED_SKIPPED]]


def relink_rewrites(
    ws: Workspace, src_rel: str, dst_rel: str, *, is_document: bool, unlisted: list[tuple[str, str]] | None = None
) -> dict[str, tuple[Path, bytes, bytes]]:
    """The documents whose links a move of ``src_rel`` to ``dst_rel`` would break, and their new bytes
    (folders that could not be searched go to ``unlisted``)."""
    plan = plan_move(ws.root, _linking_files(ws, unlisted), _aliases(ws), src_rel, dst_rel, is_document=is_document)
    if unlisted is not None:
        _add_unchecked(unlisted, plan.unchecked)
    return _rewrites(ws, plan.edits)


def _must_be_text(raw: bytes, rel: str) -> None:
    try:
        decode_markdown(raw)
    except UnsupportedFormat:
        raise UnsupportedFormat(
            f"{rel!r} is not valid UTF-8 text, so updateLinks cannot rewrite its own links; move it without "
            "updateLinks (links to it from other documents are then left as they are)."
        ) from None


def _add_unchecked(unlisted: list[tuple[str, str]], unchecked: list[tuple[str, str]]) -> None:
    """Documents whose links the plan could not look at join the folders that could not be listed,
    in the same order (decisions 283, 701): the move happened, those links may now be broken."""
    unlisted.extend((shown_name(rel), reason) for rel, reason in unchecked)
    unlisted.sort(key=lambda item: (item[0].lower(), item[0]))


def _linking_files(ws: Workspace, unlisted: list[tuple[str, str]] | None) -> list[str]:
    """The documents whose links a move may rewrite: every `.md` file the tools can address. One
    whose name the path guard refuses (`nul.md`, a name that is not UTF-8) cannot be rewritten;
    it is named with the unlisted folders instead of failing the whole move (decision 283)."""
    found = []
    for rel in markdown_files(ws.root, unlisted):
        try:
            ws.guard.normalise(rel)
        except InvalidPath as refused:
            if unlisted is not None:
                unlisted.append((shown_name(rel), f"{refused.message} Its links were not checked."))
            continue
        found.append(rel)
    if unlisted is not None:
        unlisted.sort(key=lambda item: (item[0].lower(), item[0]))
    return found


def _rewrites(ws: Workspace, edits: dict[str, tuple[bytes, bytes]]) -> dict[str, tuple[Path, bytes, bytes]]:
    return {rel: (_safe(ws, rel), old, new) for rel, (old, new) in edits.items()}


def _aliases(ws: Workspace) -> dict[str, DocumentMeta]:
    """Front-matter aliases from the index (wikilinks resolve through them); none without an index."""
    try:
        return ws.store.document_meta()
    except Exception:  # no index yet or unreadable: names and paths still resolve
        return {}


def _safe(ws: Workspace, rel: str) -> Path:
    _, path = ws.guard.resolve(rel, markdown=True)
    return path


def kb_delete(ws: Workspace, request: KbDeleteRequest) -> KbDeleteResult:
    ws.require_writes()
    rel, path = ws.guard.resolve(request.path, markdown=True)
    require_regular_file(path, rel)  # decisions 409, 702
    delete_file(ws, rel, path, request.expected_source_hash)
    # after the delete, which stands whatever the report says, and before the index is told: the
    # graph still holds the document and every link that reached it
    breaks = broken_by_delete(ws, rel)
    return reported(mutation_result(KbDeleteResult, ws, rel, None), breaks)
