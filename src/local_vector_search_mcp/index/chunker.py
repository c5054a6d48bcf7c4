"""Chunker v7 and the embedding text builder v1 (contract §8.1).

* Indexable elements: every element but headings (heading text reaches the
  index through ``headingPath``); front matter only with
  ``chunking.includeFrontMatter``.
* v7: a document that gives no chunk but front matter gives its headings instead,
  grouped by the same limits (not cut by sections); the first heading is the
  chunk's pointer and ``headingPath`` (decision 781). Others are v6's exactly.
* Greedy grouping in source order; a new chunk starts when the containing
  section changes (document root and every heading section are separate), when
  one more element would exceed ``maxElements``, or when the UTF-8 size of the
  joined text would exceed ``maxChunkBytes``. An oversized element forms its
  own chunk; code blocks and tables are never split.
* Chunk text: element texts, each stripped, joined with a blank line. A list
  item contributes its own text only (nested items are elements of their own).
* Chunk pointer: the first element (its v2 anchor is stored); ``headingPath``:
  the last non-null heading path among its elements.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

from ..markdown import Document, Element, ElementKind, containing_section

__all__ = [
    "CHUNKER_VERSION",
    "CONTRACT_CHUNKER_VERSION",
    "EMBEDDING_TEXT_BUILDER_VERSION",
    "Chunk",
    "build_embedding_text",
    "chunk_document",
    "embedding_text_hash",
]

CHUNKER_VERSION = "7"
# What kb_status reports as ``chunkerVersion``: the contract's chunk format, v6 (notes §2.1, §8.1).
# Our revision 7 (decision 781) makes v6's chunks byte for byte and adds chunks only to documents
# v6 leaves without any; the index manifest keeps the revision, for its in-place upgrade (630).
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
    chunks: list[Chunk] = []
    group: list[tuple[Element, str]] = []
    size = 0
    section: str | None = None

    def flush(headings: bool = False) -> None:
        nonlocal size
        if not group:
            return
        first = group[0][0]
        if headings:  # where the chunk starts: its first heading, not the last one listed
            heading = first.heading_path
        else:
            heading = next((e.heading_path for e, _ in reversed(group) if e.heading_path), None)
        chunks.append(
            Chunk(
                ordinal=len(chunks),
                pointer=first.pointer,
                anchor=first.anchor,
                text="\n\n".join(t for _, t in group),
                heading_path=heading,
                elements=tuple(e.pointer for e, _ in group),
            )
        )
        group.clear()
        size = 0

    for e in doc.elements:
        if not _indexable(e, include_front_matter):
            continue
        text = e.text.strip()
        if not text:
            continue
        own_section = None if e.kind is ElementKind.FRONT_MATTER else _section(e.pointer)
        added = _utf8_size(text) + (2 if group else 0)
        if group and (own_section != section or len(group) >= max_elements or size + added > max_chunk_bytes):
            flush()
            added = _utf8_size(text)
        section = own_section
        group.append((e, text))
        size += added
    flush()
    if any(c.elements != (_FRONT_MATTER,) for c in chunks):
        return chunks
    # v7: a document with no chunk of its own (an index page, a stub, an outline; beside its front
    # matter at most) is its headings, grouped by the same limits but across sections, so each
    # of its words is found. Every other document keeps v6's chunks byte for byte (decision 781).
    for e in doc.elements:
        text = e.text.strip() if e.kind is ElementKind.HEADING else ""
        if not text:
            continue
        added = _utf8_size(text) + (2 if group else 0)
        if group and (len(group) >= max_elements or size + added > max_chunk_bytes):
            flush(headings=True)
            added = _utf8_size(text)
        group.append((e, text))
        size += added
    flush(headings=True)
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
