"""One file's way from disk to index records, without the index.

:func:`prepare` reads a file, hashes it, parses it once and returns what the
store needs (chunks, links, tags, front matter fields), or why it cannot: the
file vanished, it is unreadable or unparsable (the reason is kept), or its
bytes equal the indexed revision. It never touches the store, so it runs the
same in the indexing process and in the parse workers of ``parallel.py``:
:func:`worker_main` is a worker's whole life (this module imports no storage
adapter, and a worker never opens the database).

Every failure is per file and comes back as :class:`Unreadable`; nothing a
file holds can stop a reindex pass (spec/decisions.md 134, 190).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

from ..errors import KbError, NotFound
from ..markdown import Document, ElementKind, parse_document
from ..markdown.front_matter import is_toml
from ..markdown.links import extract_links, graph_links, load_front_matter
from ..sourcefile import RACY_NS, os_reason, read_source
from .chunker import build_embedding_text, chunk_document, embedding_text_hash
from .chunks import document_properties
from .derive import chunk_stems, pack_body
from .pg_lexemes import chunk_lexemes
from .port import ChunkRecord, DocumentMeta, LinkRecord, pickled_by_fields

__all__ = [
    "READY",
    "ChunkSettings",
    "Outcome",
    "Prepared",
    "Task",
    "Unchanged",
    "Unreadable",
    "Vanished",
    "front_matter_properties",
    "prepare",
    "worker_main",
]

log = logging.getLogger(__name__)

READY = "ready"  # a worker's first message: its imports worked, so a later death is a file's doing
WORKER_GC_THRESHOLD = (10_000, 10, 10)  # Python's default is (700, 10, 10)


# Which storage backend's derived forms a worker works out (one per adapter, decision 566).
Derive = Literal["sqlite", "postgresql"]


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """The ``chunking`` settings a worker needs (plain data: it crosses a process boundary)."""

    max_chunk_bytes: int
    max_elements: int
    include_front_matter: bool
    include_heading_context: bool
    # the storage backend's derived forms to work out: "sqlite" (stems text, packed body) or
    # "postgresql" (the lexical columns, decision 566); each adapter ignores the other's
    derive: Derive = "sqlite"

    @classmethod
    def from_config(cls, config: Any) -> ChunkSettings:
        ch = config.chunking
        backend = str(getattr(config.storage.backend, "value", config.storage.backend))
        derive: Derive = "postgresql" if backend == "postgresql" else "sqlite"
        return cls(ch.max_chunk_bytes, ch.max_elements, ch.include_front_matter, ch.include_heading_context, derive)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Task:
    """Index ``path`` (root-relative); ``known_hash`` is the indexed revision's source hash,
    ``None`` to index the file whatever it holds (new file, ``scope="all"``)."""

    path: str
    known_hash: str | None = None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Prepared:
    path: str
    size: int
    mtime_ns: int
    source_hash: str
    chunks: list[ChunkRecord]  # vectors not set: the writer reuses stored ones
    links: list[LinkRecord]
    meta: DocumentMeta
    properties: dict[str, Any]


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Unchanged:
    """Same bytes as the indexed revision (only size or mtime moved)."""

    path: str
    size: int
    mtime_ns: int


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Unreadable:
    path: str
    reason: str


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Vanished:
    path: str


Outcome = Prepared | Unchanged | Unreadable | Vanished

#: The size recorded for a file whose stat cannot vouch for its bytes: it equals no real size.
SMUDGED_SIZE = -1


def stat_stamp(st: os.stat_result) -> int:
    """The time stored (as ``mtime_ns``) and compared beside the size: the later of the file's
    mtime and ctime. Copies that keep an old mtime (`cp -p`, rsync, archives with one fixed
    mtime) can rewrite a file at the same size and mtime; no tool sets the ctime, which every
    write, rename and metadata change moves (spec/decisions.md 463)."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


def recorded_size(st: os.stat_result, looked_ns: int) -> int:
    """The size to store beside :func:`stat_stamp` for a file stat'ed at ``looked_ns`` (wall clock).

    A reindex skips a file whose size and stamp equal the stored ones. A file changed within
    :data:`RACY_NS` of being read (or stamped in the future) may be rewritten at the same size
    within the same timestamp tick after we read it, and then keep both; git calls it "racily
    clean". Its size is stored smudged, so the next pass reads and hashes it (an equal hash only
    records the real stat, nothing is parsed) instead of trusting the stat (spec/decisions.md 401).
    """
    return SMUDGED_SIZE if stat_stamp(st) > looked_ns - RACY_NS else st.st_size


def prepare(root: Path, task: Task, settings: ChunkSettings, *, cache: bool = False) -> Outcome:
    """Read, hash, parse and chunk one file. Never raises for anything the file holds."""
    path = task.path
    full = root / path
    looked_ns = time.time_ns()  # before the stat: what is read may be newer, never older
    try:
        # lstat: a link (dangling too) is not "gone"; read_source refuses it as a link (decision 292)
        st = os.lstat(full)
        raw = read_source(full, path)
    except FileNotFoundError:
        return Vanished(path)
    except NotFound:
        return Vanished(path)
    except KbError as exc:
        return Unreadable(path, exc.message)
    except OSError as exc:  # stat refused (a loop of links, a permission on the folder)
        return Unreadable(path, f"The file system refused to read {path!r} ({os_reason(exc)}).")
    source_hash = hashlib.sha256(raw).hexdigest()
    size = recorded_size(st, looked_ns)
    if task.known_hash == source_hash:
        return Unchanged(path, size, stat_stamp(st))
    try:
        return _parse(path, raw, size, stat_stamp(st), source_hash, settings, cache)
    except (KbError, ValueError, RecursionError, MemoryError) as exc:
        # A file the parser cannot take (not UTF-8, ...) is one bad file, not a failed run.
        reason = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        return Unreadable(path, str(reason)[:300])
    except Exception as exc:  # a parser bug on odd input: report the file, keep the pass going
        log.warning("parsing %s failed", path, exc_info=True)
        return Unreadable(path, f"{type(exc).__name__}: {exc}"[:300])


def verify(root: Path, path: str, known_hash: str) -> Unchanged | None:
    """The stat to record for a file whose bytes still hash to ``known_hash``; ``None`` when they
    do not or it cannot be read (re-indexing it then says why). Nothing is parsed."""
    looked_ns = time.time_ns()
    full = root / path
    try:
        st = os.lstat(full)
        raw = read_source(full, path)
    except (KbError, OSError):
        return None
    if hashlib.sha256(raw).hexdigest() != known_hash:
        return None
    return Unchanged(path, recorded_size(st, looked_ns), stat_stamp(st))


def _parse(
    path: str, raw: bytes, size: int, mtime_ns: int, source_hash: str, settings: ChunkSettings, cache: bool
) -> Prepared:
    doc = parse_document(raw, cache=cache)
    chunks = chunk_document(
        doc,
        max_chunk_bytes=settings.max_chunk_bytes,
        max_elements=settings.max_elements,
        include_front_matter=settings.include_front_matter,
    )
    scrub: Any = _scrub if b"\x00" in raw else _same
    derived = _for_postgresql if settings.derive == "postgresql" else _for_sqlite
    records = []
    for c in chunks:
        text, heading = scrub(c.text), scrub(c.heading_path)
        records.append(
            ChunkRecord(
                ordinal=c.ordinal,
                pointer=c.pointer,
                anchor=c.anchor,
                text=text,
                heading_path=heading,
                embedding_text_hash=embedding_text_hash(
                    build_embedding_text(path, text, heading, settings.include_heading_context)
                ),
                **derived(text, heading),
            )
        )
    graph = extract_links(doc, spans=False)  # the index keeps no span
    links = [
        LinkRecord(ln.kind, scrub(ln.destination), scrub(ln.text), ln.pointer) for ln in graph_links(doc, graph.links)
    ]
    meta = DocumentMeta(*(scrub(part) for part in (graph.tags, graph.aliases, graph.headings, graph.block_ids)))
    return Prepared(path, size, mtime_ns, source_hash, records, links, meta, scrub(front_matter_properties(doc)))


def _for_sqlite(text: str, heading: str | None) -> dict[str, Any]:
    return {"stems": chunk_stems(text, heading), "packed_body": pack_body(text)}


def _for_postgresql(text: str, heading: str | None) -> dict[str, Any]:
    return {"lexemes": chunk_lexemes(text, heading)}


def _same(value: Any) -> Any:
    return value


def _scrub(value: Any) -> Any:
    """``value`` with every U+0000 replaced by U+FFFD, as CommonMark renders it (decision 360):
    PostgreSQL's text and jsonb cannot hold the character, and both engines must index the
    same text. Only what the index stores changes; the file, kb_read and the pointers do not."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, tuple | list):
        return type(value)(_scrub(v) for v in value)
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def front_matter_properties(doc: Document) -> dict[str, Any]:
    """The document's front matter fields for chunk filters (empty without front matter or
    when it is not a mapping: a bad header never stops indexing)."""
    first = doc.elements[0] if doc.elements else None
    if first is None or first.kind is not ElementKind.FRONT_MATTER:
        return {}
    lines = first.text.splitlines()[1:-1]
    try:
        data = load_front_matter("\n".join(lines), toml=is_toml(first.text))
    except ValueError:
        return {}
    return document_properties(data) if isinstance(data, dict) else {}


def worker_main(read_fd: int, write_fd: int) -> None:
    """A parse worker's life (``parallel.py`` starts it as ``python -c``, never through
    multiprocessing's spawn, which would run the host's main module again): receive
    ``(root, settings, nice)``, then answer each :class:`Task` with its :data:`Outcome`, in
    order, until told to stop (``None``) or the parent is gone (its pipe closes)."""
    # Ctrl-C reaches the whole process group; the parent decides and stops its workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    inbox = Connection(read_fd, writable=False)
    outbox = Connection(write_fd, readable=False)
    try:
        root, settings, nice = inbox.recv()
        if nice > 0:
            _lower_priority(nice)
        # A worker allocates millions of short-lived objects (tokens, elements) that reference
        # counting frees; the cyclic collector's frequent young-generation passes over them, and
        # over everything imported, were ~3 % of its CPU (decision 278).
        gc.freeze()
        gc.set_threshold(*WORKER_GC_THRESHOLD)
        base = Path(root)
        outbox.send(READY)
        while (task := inbox.recv()) is not None:
            outcome = prepare(base, task, settings)
            try:
                outbox.send(outcome)
            except (OSError, EOFError):
                raise
            except Exception as exc:  # e.g. a value that does not pickle: still one file's problem
                outbox.send(Unreadable(task.path, f"{type(exc).__name__}: {exc}"[:300]))
    except (OSError, EOFError):
        return  # the parent went away
    # Told to stop: every outcome is sent (the pipe writes are synchronous) and nothing else is
    # buffered, so skip the interpreter's teardown, which the parent would wait for (decision 252).
    os._exit(0)


def _lower_priority(nice: int) -> None:
    """Run below the server: this process's nice value, and its session's where Linux groups
    scheduling by session (autogroup; a process's own nice only counts inside its group)."""
    with contextlib.suppress(OSError):  # not permitted here: run at the parent's priority
        os.nice(nice)
    with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as group:
        group.write(str(nice))
