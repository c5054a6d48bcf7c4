"""Loading a document: decode, parse, hash, with a small cache by sourceHash."""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import AbstractContextManager, nullcontext

from . import collector
from .hashing import sha256_hex, utf8
from .incremental import BlockState, build_state, reparse
from .model import Document
from .source import BOM, LineIndex, decode_markdown, detect_eol

__all__ = ["CACHE_SIZE", "clear_cache", "parse_document", "parse_edited", "parse_text"]

# A parsed 5 MB file holds tens of thousands of elements; a few dozen
# documents is plenty for read-page-edit loops and bounds memory.
CACHE_SIZE = 32
LARGE_TEXT = 256 * 1024  # characters: a text this long is parsed with the cyclic collector paused

_cache: OrderedDict[str, Document] = OrderedDict()
_lock = threading.Lock()


def _cached(key: str) -> Document | None:
    with _lock:
        doc = _cache.get(key)
        if doc is not None:
            _cache.move_to_end(key)
        return doc


def _store(key: str, doc: Document) -> None:
    with _lock:
        _cache[key] = doc
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def _collector_paused(text: str) -> AbstractContextManager[None]:
    return collector.paused() if len(text) >= LARGE_TEXT else nullcontext()


def _build(text: str, bom: bool, source_hash: str) -> Document:
    lines = LineIndex.build(text)
    with _collector_paused(text):
        elements, reserved, state = build_state(text, lines)
    return Document.create(
        text=text,
        bom=bom,
        eol=detect_eol(text),
        source_hash=source_hash,
        elements=elements,
        reserved=reserved,
        lines=lines,
        state=state,
    )


def parse_document(raw: bytes, *, cache: bool = True, keep: bool = True) -> Document:
    """Parse a file's bytes. Raises ``UnsupportedFormat`` if not UTF-8.

    Documents are cached by sourceHash, so an unchanged file is parsed once;
    ``cache=False`` neither reads nor fills the cache (a reindex pass reads
    each file once: caching would only evict the documents being edited).
    ``keep=False`` takes a cached document but keeps no new one: a sweep over
    many files (a move's link rewrites) reuses what an agent has open without
    pushing it out.
    """
    source_hash = sha256_hex(raw)
    doc = _cached(source_hash) if cache else None
    if doc is not None:
        return doc
    text, bom = decode_markdown(raw)
    doc = _build(text, bom, source_hash)
    if cache and keep:
        _store(source_hash, doc)
    return doc


def parse_text(text: str, *, bom: bool = False) -> Document:
    """Parse already decoded text (never raises; not cached).

    ``source_hash`` is that of the bytes the text would be written as.
    """
    raw = (BOM if bom else b"") + utf8(text)
    return _build(text, bom, sha256_hex(raw))


def parse_edited(old: Document, text: str, start: int, end: int) -> Document:
    """Parse ``text``, which is ``old.text`` with ``[start, end)`` replaced (same BOM).

    Only the region around the edit is re-parsed (``incremental.reparse``); the
    result equals a full parse and is cached like ``parse_document``'s.
    """
    source_hash = sha256_hex((BOM if old.bom else b"") + utf8(text))
    doc = _cached(source_hash)
    if doc is not None:
        return doc
    state = old._state
    with _collector_paused(text):
        result = reparse(old, state, text, start, end) if isinstance(state, BlockState) else None
    if result is None:
        doc = _build(text, old.bom, source_hash)
    else:
        elements, reserved, lines, new_state = result
        doc = Document.create(
            text=text,
            bom=old.bom,
            eol=detect_eol(text),
            source_hash=source_hash,
            elements=elements,
            reserved=reserved,
            lines=lines,
            state=new_state,
        )
    _store(source_hash, doc)
    return doc
