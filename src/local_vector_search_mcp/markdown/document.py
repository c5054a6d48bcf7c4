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

__all__ = ["CACHE_CHARS", "CACHE_SIZE", "clear_cache", "parse_document", "parse_edited", "parse_text"]

# A few dozen documents is plenty for read-page-edit loops. Memory is bounded by their text too:
# a parsed document weighs up to about 90 times its text (200,000 list items in 2.7 MB kept
# 250 MB), so 32 large files held many gigabytes (decision 1005). The newest document is kept
# whatever its size, so an agent paging through one file at the size limit still parses it once.
CACHE_SIZE = 32
CACHE_CHARS = 8 * 1024 * 1024  # characters of text, all cached documents together
LARGE_TEXT = 256 * 1024  # characters: a text this long is parsed with the cyclic collector paused

_cache: OrderedDict[str, Document] = OrderedDict()
_cached_chars = 0
_lock = threading.Lock()


def _cached(key: str) -> Document | None:
    with _lock:
        doc = _cache.get(key)
        if doc is not None:
            _cache.move_to_end(key)
        return doc


def _store(key: str, doc: Document) -> None:
    global _cached_chars
    with _lock:
        old = _cache.pop(key, None)
        _cached_chars -= len(old.text) if old is not None else 0
        _cache[key] = doc
        _cached_chars += len(doc.text)
        while len(_cache) > 1 and (len(_cache) > CACHE_SIZE or _cached_chars > CACHE_CHARS):
            _, evicted = _cache.popitem(last=False)
            _cached_chars -= len(evicted.text)


def clear_cache() -> None:
    global _cached_chars
    with _lock:
        _cache.clear()
        _cached_chars = 0


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
