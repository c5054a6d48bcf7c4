"""kb_patch and kb_edit_table: element-level edits through the atomic writer.

Both plan against the bytes the writer hands them (re-planned when the file
changed in between, contract §5.1 step 9), so an anchor is always checked
against the revision that is actually replaced. A planned result identical to
the current file is not written.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from lvsm_contract.models import (
    KbEditTableArguments,
    KbEditTableResult,
    KbPatchRequest,
    KbPatchResult,
    TableRowMatch,
)

from ..errors import InvalidArgument
from ..markdown import Document, Element, ElementKind, parse_anchor, parse_document, resolve_for_mutation
from ..markdown.patch import patch_text
from ..markdown.resolve import ChangedKey, MutationScope
from ..markdown.source import BOM
from ..markdown.table_edit import CellUpdate, RowMatch, TableEdit, edit_table
from ..sourcefile import require_regular_file
from ..workspace import Workspace
from ..writer import mutate, sha256_hex
from .changed_elements import ChangedElements
from .link_breaks import NONE_BROKEN, broken_links, reported
from .markdown_text import require_text
from .sync import mutation_result, unchanged_result


class _Unchanged(Exception):
    """The planned text equals the current one: nothing to write."""

    def __init__(self, raw: bytes, doc: Document) -> None:
        super().__init__()
        self.raw = raw
        self.doc = doc


def _target(ws: Workspace, path: str) -> tuple[str, Path]:
    ws.require_writes()
    rel, target = ws.guard.resolve(path, markdown=True)
    require_regular_file(target, rel)  # a folder or a FIFO is named as kb_read names it (decision 702)
    return rel, target


def _encode(doc: Document, text: str) -> bytes:
    return (BOM if doc.bom else b"") + text.encode("utf-8")


def kb_patch(ws: Workspace, request: KbPatchRequest) -> KbPatchResult:
    rel, target = _target(ws, request.path)
    operations = list(request.operations)
    changed = ws.service(ChangedElements)
    planned: list[tuple[Document, Document]] = []  # the revision replaced and its result

    def plan(raw: bytes) -> bytes:
        doc = parse_document(raw)
        for i, operation in enumerate(operations):
            # against the revision replaced: a control character it holds may be written back as
            # read (a stray backspace in a real page refused the element's own text, decision 1092)
            require_text(operation.markdown, f"operations[{i}].markdown", doc.text)
        text, new = patch_text(doc, rel, operations, changed.of(rel))
        if text == doc.text:
            raise _Unchanged(raw, doc)
        # noted under the file's edit lock, before the write: an edit planned after this one
        # never relocates to a twin of what it changes (a write that fails only adds caution)
        changed.record(rel, doc, new)
        planned[:] = [(doc, new)]
        # patch_text already left the parsed result in the cache (keyed by the
        # sourceHash of exactly these bytes), so the re-read that follows is free.
        return _encode(doc, text)

    try:
        _, sha = mutate(ws, rel, target, plan)
    except _Unchanged as same:
        sha = sha256_hex(same.raw)
        return reported(unchanged_result(KbPatchResult, ws, rel, sha), NONE_BROKEN)  # nothing changed
    # after the write, which stands whatever the report says (the edit is never refused for it), and
    # before its re-indexing is queued: a graph read while that commits is built whole and not kept
    before, after = planned[0]
    breaks = broken_links(ws, rel, before, after)
    return reported(mutation_result(KbPatchResult, ws, rel, sha), breaks)


def _table_request(request: KbEditTableArguments) -> TableEdit:
    updates = None
    if request.updates is not None:
        updates = [
            CellUpdate(
                value=u.value,
                row_index=u.row_index,
                where=_match(u.where),
                column=u.column,
                column_index=u.column_index,
                value_format=u.value_format,
            )
            for u in request.updates
        ]
    return TableEdit(
        action=request.action,
        updates=updates,
        row_index=request.row_index,
        where=_match(request.where),
        column=request.column,
        column_index=request.column_index,
        values=list(request.values) if request.values is not None else None,
        values_by_column=dict(request.values_by_column) if request.values_by_column is not None else None,
        before_row_index=request.before_row_index,
        before_column=request.before_column,
        before_column_index=request.before_column_index,
        name=request.name,
        new_name=request.new_name,
        default_value=request.default_value,
        alignment=request.alignment,
        value_format=request.value_format,
    )


def _match(where: TableRowMatch | None) -> RowMatch | None:
    if where is None:
        return None
    return RowMatch(column=where.column, column_index=where.column_index, equals=where.equals)


def _resolve_table(doc: Document, rel: str, pointer: str, changed: Collection[ChangedKey]) -> Element:
    anchor = parse_anchor(pointer)
    if anchor.is_document or anchor.kind is not ElementKind.TABLE:
        raise InvalidArgument(f"kb_edit_table needs the anchor of a standalone table (`tN~...`); got '{pointer}'.")
    element = resolve_for_mutation(doc, anchor, rel, MutationScope.SELF, changed)
    if element is None or element.kind is not ElementKind.TABLE:  # pragma: no cover - kinds are checked above
        raise InvalidArgument(f"'{pointer}' does not name a table.")
    return element


def kb_edit_table(ws: Workspace, request: KbEditTableArguments) -> KbEditTableResult:
    rel, target = _target(ws, request.path)
    edit = _table_request(request)
    planned_start: list[int] = []
    changed = ws.service(ChangedElements)

    def plan(raw: bytes) -> bytes:
        doc = parse_document(raw)
        element = _resolve_table(doc, rel, request.pointer, changed.of(rel))
        text = edit_table(doc, element, edit)
        planned_start[:] = [element.start]
        if text == doc.text:
            raise _Unchanged(raw, doc)
        data = _encode(doc, text)
        changed.record(rel, doc, parse_document(data))  # under the edit lock, as kb_patch notes it
        return data

    try:
        data, sha = mutate(ws, rel, target, plan)
        committed = parse_document(data)  # parsed in the plan: from the cache
        result = mutation_result(KbPatchResult, ws, rel, sha)
    except _Unchanged as same:
        committed = same.doc
        sha = sha256_hex(same.raw)
        result = unchanged_result(KbPatchResult, ws, rel, sha)
    start = planned_start[0]
    table = next((e for e in committed.elements if e.kind is ElementKind.TABLE and e.start == start), None)
    if table is None:  # pragma: no cover - the table editor re-parses and checks this
        raise InvalidArgument("The edited table could not be found again; re-read the document.")
    return KbEditTableResult(
        path=rel,
        pointer=table.anchor,
        source_hash=sha,
        index_synchronized=result.index_synchronized,
        index_error=result.index_error,
    )
