"""kb_patch (contract §5): operations in, new document text out.

Pure functions over a parsed :class:`Document`. The steps live in their own
modules: what operations and splices are (``edits.py``), fragment
pre-validation (``fragments.py``, §5.3), planning each operation into a splice
(``planning.py``, §5.2) and the structural validator over the re-parsed result
(``validate.py``, §5.4). Any refusal raises a :class:`KbError`; the caller then
writes nothing. The BOM is the caller's business (it is not part of
``Document.text``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from .document import parse_edited
from .edits import Edit, Op, PatchOperation, normalize_eol
from .list_markers import list_marker
from .model import Document
from .planning import apply_edits, plan_edits, seal_joins
from .resolve import ChangedKey
from .validate import validate_structure

__all__ = [
    "Edit",
    "Op",
    "PatchOperation",
    "apply_edits",
    "list_marker",
    "normalize_eol",
    "patch_text",
    "plan_edits",
    "plan_patch",
    "seal_joins",
    "validate_structure",
]


def patch_text(
    doc: Document,
    path: str,
    operations: Sequence[PatchOperation],
    changed: Collection[ChangedKey] = (),
) -> tuple[str, Document]:
    """Plan, apply and validate; return the new text and its parsed document."""
    edits = seal_joins(doc.text, plan_edits(doc, path, operations, changed))
    text = apply_edits(doc.text, edits)
    text.encode("utf-8")  # the text must be writable as UTF-8 (raises on a lone surrogate)
    # Only the region around the edits is re-parsed; the result lands in the
    # parse cache, so the re-read that usually follows a patch is free.
    new = parse_edited(doc, text, edits[0].start, max(edit.end for edit in edits))
    if doc.text:
        validate_structure(doc, new, edits)
    return text, new


def plan_patch(doc: Document, path: str, operations: Sequence[PatchOperation]) -> str:
    """The document text after ``operations`` (BOM not included; EOLs preserved)."""
    return patch_text(doc, path, operations)[0]
