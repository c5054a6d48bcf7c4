"""kb_create, kb_move, kb_delete: whole-document mutations guarded by SHA-256."""

from __future__ import annotations

from lvsm_contract.models import (
    KbCreateRequest,
    KbCreateResult,
    KbDeleteRequest,
    KbDeleteResult,
    KbMoveRequest,
    KbMoveResult,
)

from ..errors import InvalidArgument, NotFound
from ..workspace import Workspace
from ..writer import create_new, delete_file, move_file
from .sync import mutation_result


def kb_create(ws: Workspace, request: KbCreateRequest) -> KbCreateResult:
    ws.require_writes()
    rel, target = ws.guard.resolve(request.path, markdown=True)
    sha = create_new(ws, rel, target, request.markdown.encode("utf-8"))
    return mutation_result(KbCreateResult, ws, rel, sha)


def kb_move(ws: Workspace, request: KbMoveRequest) -> KbMoveResult:
    ws.require_writes()
    src_rel, src = ws.guard.resolve(request.source_path, field="sourcePath", markdown=True)
    dst_rel, dst = ws.guard.resolve(request.target_path, field="targetPath", markdown=True)
    if src_rel == dst_rel:
        raise InvalidArgument("targetPath must differ from sourcePath.")
    if not src.is_file():
        raise NotFound(f"Document {src_rel!r} was not found.")
    sha = move_file(ws, src_rel, src, dst_rel, dst, request.expected_source_hash)
    return mutation_result(KbMoveResult, ws, dst_rel, sha, previous=src_rel)


def kb_delete(ws: Workspace, request: KbDeleteRequest) -> KbDeleteResult:
    ws.require_writes()
    rel, path = ws.guard.resolve(request.path, markdown=True)
    if not path.is_file():
        raise NotFound(f"Document {rel!r} was not found.")
    delete_file(ws, rel, path, request.expected_source_hash)
    return mutation_result(KbDeleteResult, ws, rel, None)
