"""Chunker v9 and the embedding text builder v1 (contract §8.1).

* Indexable elements: every element but headings (heading text reaches the
  index through ``headingPath``); front matter only with
  ``chunking.includeFrontMatter``.
* v7: a document that gives no chunk but front matter gives its headings instead,
  grouped by the same limits (not cut by sections); the first heading is the
  chunk's pointer and ``headingPath`` (decision 781).
* v8: the visible text of each top-level HTML block (``markdown.html_text``: tags,
  comments, ``<script>`` and ``<style>`` dropped, character references decoded) is a
  piece of the chunk its position falls in, as an element's text would be, though
  it is no element; a chunk of such text alone points to its section's heading (at
  the document's root: the next element, else the one before) (decision 1025). A
  document without such a block is chunked as v7 chunked it, byte for byte.
* v9: the element model makes a top-level footnote definition that CommonMark
  reads as a reference definition (``[^1]: https://example.org/paper``) a
  paragraph (``markdown/footnotes.py``, decision 1194), so its text is a piece
  as any paragraph's. A document without one is chunked as v8 chunked it.
* Greedy grouping in source order; a new chunk starts when the containing
  section changes (document root and every heading section are separate), when
  one more piece would exceed ``maxElements``, or when the UTF-8 size of the
  joined text would exceed ``maxChunkBytes``. An oversized piece forms its
  own chunk; code blocks, tables and an HTML block's text are never split.
* Chunk text: piece texts, each stripped, joined with a blank line. A list
  item contributes its own text only (nested items are elements of their own).
* Chunk pointer: the first element (its v2 anchor is stored); ``headingPath``:
  the last non-null heading path among its pieces.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from ..markdown import Document, Element, ElementKind, containing_section
from ..markdown.html_text import html_block_texts

__all__ = [
    "CHUNKER_VERSION",
    "CONTRACT_CHUNKER_VERSION",
    "EMBEDDING_TEXT_BUILDER_VERSION",
    "Chunk",
    "build_embedding_text",
    "chunk_document",
    "embedding_text_hash",
]

CHUNKER_VERSION = "9"
# What kb_status reports as ``chunkerVersion``: the contract's chunk format, v6 (notes §2.1, §8.1).
# Our revisions 7, 8 and 9 (decisions 781, 1025, 1194) make v6's chunks byte for byte for every
# document without a top-level HTML block showing text or a top-level footnote definition of one
# token, and add chunks only to documents v6 leaves without any; the index manifest keeps the
# revision, for its in-place upgrade (630).
CONTRACT_CHUNKER_VERSION = "6"
EMBEDDING_TEXT_BUILDER_VERSION = "1"


@dataclass(frozen=True, slots=True)
class Chunk:
    ordinal: int
    pointer: str
    anchor: str
    text: str
    heading_path: str | None
    elements: tuple[str, ...]


# One text a chunk is made of: ``(text, section, heading path, element, host)``, an element's
# or an HTML block's visible text (element None), which points through its host, the element a
# chunk of such text alone points to. A plain tuple: a cold pass makes one per element (715).
_Piece = tuple[str, str | None, str | None, Element | None, Element | None]


# The section of a pointer: the same few thousand pointers ("1.2.p3", "1.li4") recur in every
# document of a tree, and a cold pass asks for 63 k of them (decision 715).
_section = lru_cache(maxsize=8192)(containing_section)


_FRONT_MATTER = "frontmatter"  # the front matter element's pointer


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _indexable(e: Element, include_front_matter: bool) -> bool:
    if e.kind is ElementKind.HEADING:
        return False
    if e.kind is ElementKind.FRONT_MATTER:
        return include_front_matter
    return True


def chunk_document(
    doc: Document, *, max_chunk_bytes: int = 4096, max_elements: int = 20, include_front_matter: bool = True
) -> list[Chunk]:
    html = html_block_texts(doc)
    pieces = _pieces(doc, html, include_front_matter)
    chunks = _chunks(_groups(pieces, max_chunk_bytes, max_elements, by_section=True), 0, at_start=False)
    if any(pointer != _FRONT_MATTER for c in chunks for pointer in c.elements):
        return chunks
    # v7: a document with no chunk of its own (an index page, a stub, an outline; beside its front
    # matter at most) is its headings, grouped by the same limits but across sections, so each
    # of its words is found; its HTML blocks' texts join them where they sit (decisions 781, 1025).
    kept = [c for c in chunks if c.elements]  # the front matter's
    headings = _pieces(doc, html, None)
    return kept + _chunks(_groups(headings, max_chunk_bytes, max_elements, by_section=False), len(kept), at_start=True)


def _pieces(doc: Document, html: list[tuple[int, str]], include_front_matter: bool | None) -> Iterator[_Piece]:
    """The indexable elements' texts (``include_front_matter`` None: the headings') and the HTML
    blocks' visible texts, in source order."""
    blocks = iter(html)
    block = next(blocks, None)
    heading: Element | None = None  # the heading of the section being read
    previous: Element | None = None
    for e in doc.elements:
        while block is not None and block[0] < e.start:
            yield _html_piece(block[1], heading, heading or e)
            block = next(blocks, None)
        if e.kind is ElementKind.HEADING:
            heading = e
        previous = e
        if include_front_matter is None:
            if e.kind is not ElementKind.HEADING:
                continue
        elif not _indexable(e, include_front_matter):
            continue
        text = e.text.strip()
        if text:
            own_section = None if e.kind is ElementKind.FRONT_MATTER else _section(e.pointer)
            yield (text, own_section, e.heading_path, e, None)
    host = heading or (previous if previous is not None and previous.kind is not ElementKind.FRONT_MATTER else None)
    while block is not None:
        # a document of HTML alone (front matter aside) has no pointer: its front matter's would put
        # the page's body in a metadata chunk, which the semantic list skips (decision 1025)
        if host is not None:
            yield _html_piece(block[1], heading, host)
        block = next(blocks, None)


def _html_piece(text: str, heading: Element | None, host: Element | None) -> _Piece:
    """An HTML block's text in the section of ``heading`` (the root's without one)."""
    section = None if heading is None else _section(heading.pointer)
    return (text, section, None if heading is None else heading.heading_path, None, host)


def _groups(
    pieces: Iterator[_Piece], max_chunk_bytes: int, max_elements: int, by_section: bool
) -> Iterator[list[_Piece]]:
    """Greedy grouping in source order (see the module docstring)."""
    group: list[_Piece] = []
    size = 0
    section: str | None = None
    for piece in pieces:
        text, own_section = piece[0], piece[1]
        added = _utf8_size(text) + (2 if group else 0)
        if group and (
            (by_section and own_section != section)
            or len(group) >= max_elements
            or size + added > max_chunk_bytes
            or (piece[3] is None and _is_front_matter(group[0]))
        ):
            yield group
            group = []
            added -= 2
            size = 0
        section = own_section
        group.append(piece)
        size += added
    if group:
        yield group


def _is_front_matter(piece: _Piece) -> bool:
    """Whether ``piece`` is the front matter's text. HTML text never joins its chunk, the page's
    metadata, which the semantic list leaves out (decision 1014), as root paragraphs do (v6)."""
    element = piece[3]
    return element is not None and element.kind is ElementKind.FRONT_MATTER


def _chunks(groups: Iterator[list[_Piece]], first_ordinal: int, at_start: bool) -> list[Chunk]:
    """One chunk per group; ``at_start``: its ``headingPath`` is where it starts (a chunk of
    headings), not the last one listed."""
    chunks = []
    for ordinal, group in enumerate(groups, first_ordinal):
        elements = [element for _, _, _, element, _ in group if element is not None]
        first = elements[0] if elements else group[0][4]  # else the host of the HTML text it starts with
        assert first is not None  # a piece without an element always has a host (``_pieces``)
        paths = [path for _, _, path, _, _ in group if path]
        chunks.append(
            Chunk(
                ordinal=ordinal,
                pointer=first.pointer,
                anchor=first.anchor,
                text="\n\n".join(text for text, *_ in group),
                heading_path=(paths[0] if at_start else paths[-1]) if paths else None,
                elements=tuple(e.pointer for e in elements),
            )
        )
    return chunks


def build_embedding_text(path: str, chunk_text: str, heading_path: str | None, include_heading: bool) -> str:
    head = f"Path: {path}\n"
    if include_heading and heading_path:
        head += f"Heading: {heading_path}\n"
    return head + "\n" + chunk_text.strip()


def embedding_text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chunk_corpus_for_bench(root: object, **options: int | bool) -> list[tuple[str, str | None, str]]:
    """``(path, heading_path, chunk_text)`` for every ``.md`` under ``root`` (bench helper)."""
    from pathlib import Path

    from ..markdown import parse_document

    out = []
    base = Path(str(root))
    for f in sorted(base.rglob("*.md"), key=lambda p: p.as_posix().lower()):
        rel = f.relative_to(base).as_posix()
        for ch in chunk_document(parse_document(f.read_bytes()), **options):  # type: ignore[arg-type]
            out.append((rel, ch.heading_path, ch.text))
    return out
