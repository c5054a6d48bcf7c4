"""kb_read and kb_outline: read the current source file (never the index)."""

from __future__ import annotations

from typing import Literal

from lvsm_contract.models import (
    KbOutlineRequest,
    KbOutlineResult,
    KbReadRequest,
    KbReadResult,
    OutlineHeading,
    ReadElement,
    TableColumn,
    TableProjection,
    TableRow,
)

from ..errors import InvalidArgument, NotFound
from ..index.graph import FragmentTargets
from ..markdown import Document, Element, ElementKind, OutlineNode, outline, parse_document, read_slice
from ..markdown import TableProjection as Projection
from ..markdown.links import marked_block
from ..markdown.pointers import is_valid_pointer
from ..sourcefile import read_source
from ..workspace import Workspace

# The wire names of element kinds and column alignments (the models' Literal types).
WireKind = Literal[
    "document", "front_matter", "heading", "paragraph", "code_block", "list_item", "table", "block_quote"
]
_KINDS: dict[ElementKind, WireKind] = {
    ElementKind.FRONT_MATTER: "front_matter",
    ElementKind.HEADING: "heading",
    ElementKind.PARAGRAPH: "paragraph",
    ElementKind.CODE_BLOCK: "code_block",
    ElementKind.LIST_ITEM: "list_item",
    ElementKind.TABLE: "table",
    ElementKind.BLOCK_QUOTE: "block_quote",
}
Alignment = Literal["none", "left", "center", "right"]
_ALIGNMENTS: dict[str, Alignment] = {"none": "none", "left": "left", "center": "center", "right": "right"}


def load_document(ws: Workspace, path: str) -> tuple[str, Document]:
    """Resolve a Markdown path through the guard and parse the file as it is now."""
    rel, target = ws.guard.resolve(path, markdown=True)
    try:
        source = read_source(target, rel)
    except NotFound as exc:
        raise _gone_since_indexed(ws, rel) or exc from None
    return rel, parse_document(source)


def _gone_since_indexed(ws: Workspace, rel: str) -> NotFound | None:
    """A missing document the index still holds (deleted or moved by another program while no
    watcher ran: kb_search still returns it) is queued for re-indexing, which drops it, and the
    answer says so (decision 697). ``None`` when the index never had it, or cannot be asked."""
    try:
        if rel not in ws.store.document_states_of([rel]):
            return None
        ws.indexing.schedule_sync([rel])
    except Exception:  # only a better message is at stake: an index that is busy,
        # damaged, of another layout or on a lost server (apsw's, psycopg's errors) gives the plain answer
        return None
    return NotFound(
        f"Document {rel!r} was not found: it was deleted or moved since it was indexed, so the index is "
        "dropping it now. kb_list_files lists the documents that exist; kb_search finds a moved one again "
        "once it is re-indexed (kb_reindex)."
    )


def _element(element: Element) -> ReadElement:
    return ReadElement(
        pointer=element.anchor, kind=_KINDS[element.kind], text=element.text, heading_path=element.heading_path
    )


def _table(table: Projection) -> TableProjection:
    return TableProjection(
        column_count=table.column_count,
        row_count=table.row_count,
        columns=[TableColumn(index=c.index, name=c.name, alignment=_ALIGNMENTS[c.alignment]) for c in table.columns],
        rows=[TableRow(index=r.index, cells=list(r.cells)) for r in table.rows],
        editable=table.editable,
    )


def _named_heading(doc: Document, value: str) -> Element | None:
    """The heading a link's fragment ``value`` names (``#設定方法``, ``#install-1``, percent-encoded
    or as a wikilink writes it), as kb_links finds it; ``None`` when it names none or is a pointer."""
    fragment = value.removeprefix("#")
    headings = doc.headings
    if not fragment.strip() or is_valid_pointer(fragment.split("~")[0]) or not headings:
        return None
    targets = FragmentTargets(tuple(h.title or "" for h in headings), ())
    found = [i for i in (targets.heading(fragment, wiki=False), targets.heading(fragment, wiki=True)) if i is not None]
    return headings[min(found)] if found else None


# what a marked block is called in a hint
_BLOCK_KINDS = {
    ElementKind.PARAGRAPH: "the paragraph",
    ElementKind.LIST_ITEM: "the list item",
    ElementKind.TABLE: "the table",
    ElementKind.BLOCK_QUOTE: "the quote",
    ElementKind.HEADING: "the heading",
    ElementKind.CODE_BLOCK: "the code block",
}


def _pointer_hint(exc: InvalidArgument, doc: Document, rel: str, value: str | None) -> InvalidArgument:
    """``exc`` saying what to send when the pointer was a link's heading fragment (decision 1182):
    agents following `[...](page.md#設定方法)` pass the fragment, and the message alone named no way on."""
    if value is None or not exc.message.startswith("Invalid semantic pointer:"):
        return exc
    ident = value.strip().removeprefix("#")
    if ident.startswith("^") and len(ident) > 1:
        # an Obsidian block reference (`[[note#^id]]`, decision 1198): the block that carries the marker
        block = marked_block(doc, ident[1:])
        if block is not None:
            whole_list = block.end > block.element.end  # a marker after a list names all of it
            what = "the list whose first item is" if whole_list else _BLOCK_KINDS.get(block.element.kind, "the block")
            return InvalidArgument(
                f"{exc.message} (it names the block marked {ident} as a wikilink's #^fragment does, but a pointer "
                f"is what kb_read and kb_outline take: that block is {what} at `{block.element.anchor}`)"
            )
        return InvalidArgument(
            f"{exc.message} (a link's #^fragment is no pointer, and no block of {rel!r} is marked {ident}; "
            "kb_read shows the blocks and their pointers)"
        )
    heading = _named_heading(doc, value)
    if heading is not None:
        return InvalidArgument(
            f"{exc.message} (it names the heading {heading.title!r} as a link's #fragment does, but a "
            f"pointer is what kb_read and kb_outline take: that heading's is `{heading.anchor}`; kb_outline "
            "lists every heading's pointer)"
        )
    if value.startswith("#"):
        return InvalidArgument(
            f"{exc.message} (a link's #fragment is no pointer, and no heading of {rel!r} has that anchor; "
            "kb_outline lists its headings and their pointers)"
        )
    return exc


def kb_read(ws: Workspace, request: KbReadRequest) -> KbReadResult:
    rel, doc = load_document(ws, request.path)
    try:
        page = read_slice(doc, rel, request.pointer, request.max_elements, request.max_bytes)
    except InvalidArgument as exc:
        raise _pointer_hint(exc, doc, rel, request.pointer) from None
    return KbReadResult(
        path=page.path,
        pointer=page.pointer,
        elements=[_element(e) for e in page.elements],
        markdown=page.markdown,
        next_pointer=page.next_pointer,
        source_hash=page.source_hash,
        table=None if page.table is None else _table(page.table),
    )


def _heading(node: OutlineNode) -> OutlineHeading:
    children = [_heading(child) for child in node.children]
    return OutlineHeading(pointer=node.pointer, level=node.level, title=node.title, children=children)


def kb_outline(ws: Workspace, request: KbOutlineRequest) -> KbOutlineResult:
    rel, doc = load_document(ws, request.path)
    try:
        tree = outline(doc, rel, request.pointer, request.max_headings, request.max_bytes)
    except InvalidArgument as exc:
        raise _pointer_hint(exc, doc, rel, request.pointer) from None
    return KbOutlineResult(
        path=tree.path,
        source_hash=tree.source_hash,
        headings=[_heading(h) for h in tree.headings],
        next_pointer=tree.next_pointer,
    )
