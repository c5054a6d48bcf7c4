"""``kb_read`` slices and ``kb_outline`` trees (contract §7.1, §7.2, §2.4).

Pages are cut at line starts of elements, so consecutive pages concatenate to
exactly the document text (without BOM) and every element appears once.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hashing import utf8
from .kinds import ElementKind
from .model import Document, Element
from .pointers import DOCUMENT, parse_anchor
from .resolve import resolve
from .tables import TableProjection, table_projection

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ELEMENTS",
    "MAX_BYTES_LIMIT",
    "MAX_ELEMENTS_LIMIT",
    "MAX_OUTLINE_BYTES",
    "MAX_OUTLINE_HEADINGS",
    "Outline",
    "OutlineNode",
    "Slice",
    "outline",
    "read_slice",
]

DEFAULT_MAX_ELEMENTS = 20
DEFAULT_MAX_BYTES = 12_000
MAX_ELEMENTS_LIMIT = 100
MAX_BYTES_LIMIT = 100_000
# An outline page (decision 771): a summary an agent takes whole, so the defaults are the limits.
# 1000 headings with short titles answer about 150 kB of JSON, kb_read's largest page being about
# twice its 100,000 bytes of Markdown (the slice and the elements' texts).
MAX_OUTLINE_HEADINGS = 1000
MAX_OUTLINE_BYTES = 100_000


def _clamp(value: int | None, default: int, upper: int) -> int:
    if value is None:
        return default
    return max(1, min(upper, value))


@dataclass(frozen=True, slots=True)
class Slice:
    """One page of a document: ``markdown`` is the exact source text of ``elements``."""

    path: str
    pointer: str  # ``document`` or the v2 anchor of the first element
    elements: tuple[Element, ...]
    markdown: str
    next_pointer: str | None  # v2 anchor of the first element not included
    source_hash: str
    table: TableProjection | None  # when the page starts at an addressed table


@dataclass(frozen=True, slots=True)
class OutlineNode:
    pointer: str
    level: int
    title: str
    children: list[OutlineNode]


@dataclass(frozen=True, slots=True)
class Outline:
    path: str
    source_hash: str
    headings: list[OutlineNode]
    next_pointer: str | None = None  # v2 anchor of the first heading not in this page


def read_slice(
    doc: Document,
    path: str,
    pointer: str | None = None,
    max_elements: int | None = None,
    max_bytes: int | None = None,
) -> Slice:
    """One page of source Markdown starting at ``pointer`` (default ``document``).

    Raises ``InvalidArgument`` for a malformed or unknown unhashed pointer and
    ``Conflict`` for a stale hashed one (§3.4).
    """
    limit = _clamp(max_elements, DEFAULT_MAX_ELEMENTS, MAX_ELEMENTS_LIMIT)
    budget = _clamp(max_bytes, DEFAULT_MAX_BYTES, MAX_BYTES_LIMIT)
    anchor = parse_anchor(DOCUMENT if pointer is None else pointer)
    target = resolve(doc, anchor, path)
    elements = doc.readable
    text = doc.text
    if target is None:
        first, boundary = 0, 0
    else:
        index = doc.readable_index(target.pointer)
        first = len(elements) if index is None else index
        boundary = doc.line_start(target.start)
    if not elements:
        return Slice(path, DOCUMENT, (), text, None, doc.source_hash, None)
    included: list[Element] = []
    end = boundary
    size = 0
    for i in range(first, min(first + limit, len(elements))):
        stop = doc.line_start(elements[i + 1].start) if i + 1 < len(elements) else len(text)
        stop = max(stop, end)
        grown = size + len(utf8(text[end:stop]))
        if grown > budget and included:
            break
        included.append(elements[i])
        end, size = stop, grown
    following = first + len(included)
    table = None
    if target is not None and included and included[0].kind is ElementKind.TABLE:
        table = table_projection(doc, included[0])
    return Slice(
        path=path,
        pointer=DOCUMENT if target is None else included[0].anchor,
        elements=tuple(included),
        markdown=text[boundary:end],
        next_pointer=elements[following].anchor if following < len(elements) else None,
        source_hash=doc.source_hash,
        table=table,
    )


def outline(
    doc: Document,
    path: str,
    pointer: str | None = None,
    max_headings: int | None = None,
    max_bytes: int | None = None,
) -> Outline:
    """One page of the heading tree, from the first heading at or after ``pointer`` (default
    ``document``): each heading holds the deeper headings that follow it in the page; one whose
    parent is on an earlier page is a root of this one. The page stops before ``max_headings``
    headings or before its titles and pointers pass ``max_bytes`` (the first always included), as
    :func:`read_slice` pages the text; pointers resolve as there (``InvalidArgument``,
    ``Conflict``)."""
    limit = _clamp(max_headings, MAX_OUTLINE_HEADINGS, MAX_OUTLINE_HEADINGS)
    budget = _clamp(max_bytes, MAX_OUTLINE_BYTES, MAX_OUTLINE_BYTES)
    target = resolve(doc, parse_anchor(DOCUMENT if pointer is None else pointer), path)
    first = 0 if target is None else doc.index_of(target.pointer) or 0
    page: list[Element] = []
    size = 0
    next_pointer: str | None = None
    for element in doc.elements[first:]:
        if element.kind is not ElementKind.HEADING:
            continue
        grown = size + len(utf8(element.anchor)) + len(utf8(element.title or ""))
        if page and (len(page) == limit or grown > budget):
            next_pointer = element.anchor
            break
        page.append(element)
        size = grown
    roots: list[OutlineNode] = []
    stack: list[OutlineNode] = []
    for heading in page:
        node = OutlineNode(pointer=heading.anchor, level=heading.level or 1, title=heading.title or "", children=[])
        while stack and stack[-1].level >= node.level:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return Outline(path=path, source_hash=doc.source_hash, headings=roots, next_pointer=next_pointer)
