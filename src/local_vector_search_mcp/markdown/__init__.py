"""The Markdown engine: element model, pointers, hashes, slices, outline, patching.

Pure functions over a decoded document; no I/O and no MCP here.

Reading a document: ``source`` (decoding, line index) -> ``document`` (parse
cache) -> ``incremental`` (full and incremental builds) over ``scan`` (block
records), ``assemble`` (section numbering), ``numbering`` (paragraph ordinals,
§4.6) and ``elements`` (hashed elements). Addressing: ``pointers``,
``resolve``, ``slices``, ``tables``. Editing: ``patch`` (entry points) over
``edits``, ``list_markers``, ``fragments``, ``planning`` and ``validate``;
``table_edit`` for cell edits.
"""

from __future__ import annotations

from .document import clear_cache, parse_document, parse_text
from .hashing import framed_hash, segments_hash, sha256_hex, span_hash
from .kinds import ElementKind
from .model import Document, Element
from .pointers import (
    DOCUMENT,
    FRONT_MATTER,
    Anchor,
    containing_section,
    format_anchor,
    is_valid_pointer,
    parent_item,
    parse_anchor,
    pointer_kind,
)
from .resolve import MutationScope, check_subtree, resolve, resolve_for_mutation, resolve_pointer
from .slices import Outline, OutlineNode, Slice, outline, read_slice
from .tables import (
    ProjectedColumn,
    ProjectedRow,
    TableCell,
    TableProjection,
    TableRow,
    TableSource,
    cell_display_text,
    table_projection,
    table_source,
)

__all__ = [
    "DOCUMENT",
    "FRONT_MATTER",
    "Anchor",
    "Document",
    "Element",
    "ElementKind",
    "MutationScope",
    "Outline",
    "OutlineNode",
    "ProjectedColumn",
    "ProjectedRow",
    "Slice",
    "TableCell",
    "TableProjection",
    "TableRow",
    "TableSource",
    "cell_display_text",
    "check_subtree",
    "clear_cache",
    "containing_section",
    "format_anchor",
    "framed_hash",
    "is_valid_pointer",
    "outline",
    "parent_item",
    "parse_anchor",
    "parse_document",
    "parse_text",
    "pointer_kind",
    "read_slice",
    "resolve",
    "resolve_for_mutation",
    "resolve_pointer",
    "segments_hash",
    "sha256_hex",
    "span_hash",
    "table_projection",
    "table_source",
]
