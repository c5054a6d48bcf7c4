"""kb_read and kb_outline: read the current source file (never the index)."""

from __future__ import annotations

from typing import Any

from ..markdown import Document, outline, parse_document, read_slice
from ..sourcefile import read_source
from ..workspace import Workspace


def load_document(ws: Workspace, path: str) -> tuple[str, Document]:
    """Resolve a Markdown path through the guard and parse the file as it is now."""
    rel, target = ws.guard.resolve(path, markdown=True)
    return rel, parse_document(read_source(target, rel))


def kb_read(ws: Workspace, request: Any) -> dict[str, Any]:
    rel, doc = load_document(ws, request.path)
    return read_slice(doc, rel, request.pointer, request.max_elements, request.max_bytes)


def kb_outline(ws: Workspace, request: Any) -> dict[str, Any]:
    rel, doc = load_document(ws, request.path)
    return outline(doc, rel)
