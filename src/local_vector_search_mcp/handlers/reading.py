"""kb_read and kb_outline: read the current source file (never the index)."""

from __future__ import annotations

from lvsm_contract.models import KbOutlineRequest, KbOutlineResult, KbReadRequest, KbReadResult

from ..errors import InvalidArgument, NotFound, PermissionDenied
from ..markdown import Document, outline, parse_document, read_slice
from ..workspace import Workspace


def load_document(ws: Workspace, path: str) -> tuple[str, Document]:
    """Resolve a Markdown path through the guard and parse the file as it is now."""
    rel, target = ws.guard.resolve(path, markdown=True)
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        raise NotFound(f"Document {rel!r} was not found.") from None
    except IsADirectoryError:
        raise InvalidArgument(f"{rel!r} is a folder, not a Markdown document.") from None
    except PermissionError:
        raise PermissionDenied(f"The operating system refused to read {rel!r}.") from None
    return rel, parse_document(raw)


def kb_read(ws: Workspace, request: KbReadRequest) -> KbReadResult:
    rel, doc = load_document(ws, request.path)
    return KbReadResult.model_validate(read_slice(doc, rel, request.pointer, request.max_elements, request.max_bytes))


def kb_outline(ws: Workspace, request: KbOutlineRequest) -> KbOutlineResult:
    rel, doc = load_document(ws, request.path)
    return KbOutlineResult.model_validate(outline(doc, rel))
