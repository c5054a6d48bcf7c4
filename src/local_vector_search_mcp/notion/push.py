"""One-way push of the knowledge base's Markdown to Notion pages (the ``notion push`` command).

One page per document under the configured parent page. The page id of each
document and the id and hash of each first-level block pushed are kept in
``notion-pages.json`` in the state folder (decision 130), so a later push updates
the same page in place: it keeps the leading and the trailing blocks that are unchanged
(same hash, still there in Notion), deletes the blocks between them, and inserts the new
ones there (decision 1151).
A document whose bytes did not change since its last push costs no request. A
document that left the knowledge base has its page archived (Notion's trash).

The Markdown is only read. Blocks are cut into requests within Notion's limits:
at most 100 children and about 1,000 block elements per append, one level of
children sent with their parent and deeper levels appended to the created blocks.

A request that failed but may have been applied (``NotionError.ambiguous``) is not sent
again blindly: the pusher lists what is there and adopts what was made (decision 466). A
document that fails is named in the report and the push goes on with the next one
(decision 467); a page found in Notion's trash is restored (decision 468).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from ..sourcefile import os_reason
from .blocks import Block, Resolve, Upload, convert, truncate, uploaded_image, without_images
from .client import NotionError, NotionPort, encode_body
from .ids import page_id

__all__ = ["DryRunPort", "Mapping", "PageEntry", "PushReport", "Pusher", "block_hash", "link_target", "page_url"]

MAX_CHILDREN = 100
# Notion's documented ceiling is 1,000 block elements and 500 KB per request; stay below both
# (the payload in UTF-8 bytes as sent, not characters: decision 469).
MAX_ELEMENTS = 900
MAX_PAYLOAD = 400_000
MAPPING_VERSION = 1


def block_hash(block: Block) -> str:
    raw = json.dumps(block, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def source_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def page_url(page_id: str, block_id: str | None = None) -> str:
    """The URL Notion gives a page (and with ``block_id`` one of its blocks: "Copy link to block")."""
    url = f"https://www.notion.so/{page_id.replace('-', '')}"
    return f"{url}#{block_id.replace('-', '')}" if block_id else url


def link_target(path: str, href: str) -> str | None:
    """The document a relative link of ``path`` names, as ``target.md`` or ``target.md#anchor``; else None.

    Resolved against the linking document's folder (a leading ``/`` from the knowledge-base root),
    percent-escapes undone; ``#anchor`` alone names ``path`` itself. A link with a scheme or a host,
    to a file that is no ``.md`` document, or out of the root names no document (decision 1167).
    """
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return None
    target, anchor = unquote(parts.path), unquote(parts.fragment).strip().lower()
    if not target:
        if not anchor:
            return None
        target = path
    elif target.startswith("/"):
        target = posixpath.normpath(target.lstrip("/"))
    else:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if target == ".." or target.startswith("../") or not target.lower().endswith(".md"):
        return None
    return f"{target}#{anchor}" if anchor else target


def _local_file(root: Path, path: str, src: str) -> Path | None:
    """The file a relative image source of ``path`` names, if it is a file inside the knowledge base.

    Resolved as links are (:func:`link_target`); symbolic links are followed and must stay inside
    the root too, so a document cannot make the push upload a file from elsewhere (decision 1170).
    """
    parts = urlsplit(src)
    target = unquote(parts.path)
    if parts.scheme or parts.netloc or not target:
        return None
    rel = posixpath.normpath(
        target.lstrip("/") if target.startswith("/") else posixpath.join(posixpath.dirname(path), target)
    )
    if rel == ".." or rel.startswith("../"):
        return None
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, *rel.split("/")))
    if not real.startswith(real_root + os.sep) or not os.path.isfile(real):
        return None
    return Path(real)


# ----------------------------------------------------------------------------- the mapping file
@dataclass
class PageEntry:
    page_id: str
    title: str
    source_hash: str
    blocks: list[tuple[str, str]] = field(default_factory=list)  # (block id, block hash), first level
    # link target (``a.md``, ``a.md#part``) -> the URL it was pushed with, "" when it named no page;
    # None: pushed by a version that did not link documents, to be looked at once (1167)
    links: dict[str, str] | None = None
    anchors: dict[str, str] = field(default_factory=dict)  # heading anchor -> its first-level block id

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "pageId": self.page_id,
            "title": self.title,
            "sourceHash": self.source_hash,
            "blocks": [list(b) for b in self.blocks],
        }
        if self.links is not None:
            data["links"] = dict(self.links)
        if self.anchors:
            data["anchors"] = dict(self.anchors)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PageEntry:
        return cls(
            str(data["pageId"]),
            str(data.get("title", "")),
            str(data.get("sourceHash", "")),
            [(str(i), str(h)) for i, h in data.get("blocks", [])],
            None if "links" not in data else {str(k): str(v) for k, v in data["links"].items()},
            {str(k): str(v) for k, v in data.get("anchors", {}).items()},
        )


class Mapping:
    """``notion-pages.json``: for each parent page, document path -> its page and pushed blocks.

    A push changes one document at a time, so each change is appended to a journal beside the
    snapshot (``notion-pages.json.journal``, one JSON line per document, flushed to disk) and the
    snapshot is rewritten once, by :meth:`compact`, when the push ends. Rewriting the whole
    snapshot after every document made a push quadratic: on opensearch-docs (1,758 documents,
    an 8 MB mapping) saving took longer than talking to Notion (decision 860). An interrupted
    push loses at most the blocks of the document in flight, which the next push replaces: the
    next :class:`Mapping` replays the journal (a torn last line, from a crash while it was being
    written, is ignored) and compacts it.
    """

    def __init__(self, path: Path, persist: bool = True) -> None:
        self.path = path
        self.journal = path.with_name(path.name + ".journal")
        self.persist = persist
        self.parents: dict[str, dict[str, PageEntry]] = {}
        # SHA-256 of an image's bytes -> the file upload attached with them (decision 1170): the
        # workspace's, whatever the parent, so an unchanged image is not uploaded again
        self.uploads: dict[str, str] = {}
        if path.is_file():
            self._load()
        self._replay()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise self._unreadable(os_reason(exc)) from None
        except ValueError as exc:  # not JSON, empty, not UTF-8
            raise self._unreadable(str(exc)) from None
        if not isinstance(data, dict) or data.get("version") != MAPPING_VERSION:
            raise self._unreadable("it has an unknown format")
        try:
            stored = {str(parent): _entries(pages) for parent, pages in data.get("parents", {}).items()}
            self.uploads = {str(k): str(v) for k, v in data.get("uploads", {}).items()}
        except (AttributeError, KeyError, TypeError, ValueError):
            raise self._unreadable("it has an unknown format") from None
        self.parents = _merge_spellings(stored)

    def _unreadable(self, reason: str) -> NotionError:
        # Starting over forgets which pages were made: the next push makes new ones beside them.
        return NotionError(
            f"The Notion page mapping {self.path.parent.name}/{self.path.name} cannot be read: {reason}; "
            "move it away to start over (the next push then creates every page again: archive the old ones "
            "in Notion)."
        )

    def _replay(self) -> None:
        """Apply what an interrupted push journaled after the snapshot was written."""
        try:
            lines = self.journal.read_bytes().split(b"\n")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise NotionError(f"The Notion page journal {self.journal.name} cannot be read: {exc}") from None
        for line in lines:
            try:
                change = json.loads(line)
                if "upload" in change:
                    self.uploads[str(change["upload"])] = str(change["id"])
                    continue
                parent, path, entry = change["parent"], change["path"], change["entry"]
            except (ValueError, KeyError, TypeError):
                continue  # the torn end of a line written when the push was killed
            pages = self.pages(_key(str(parent)))  # a journal left by a version that kept the spelling
            if entry is None:
                pages.pop(str(path), None)
            else:
                pages[str(path)] = PageEntry.from_json(entry)
        if self.persist:
            self.compact()

    def pages(self, parent: str) -> dict[str, PageEntry]:
        return self.parents.setdefault(parent, {})

    def record(self, parent: str, path: str) -> None:
        """Journal the document's entry as it is now (or its removal), durably, before going on."""
        if not self.persist:
            return
        entry = self.parents.get(parent, {}).get(path)
        line = json.dumps(
            {"parent": parent, "path": path, "entry": None if entry is None else entry.to_json()},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.journal, "a", encoding="utf-8") as out:
            out.write("\n" + line + "\n")  # a leading newline ends a line torn by an earlier crash
            out.flush()
            os.fsync(out.fileno())

    def record_upload(self, digest: str, upload_id: str) -> None:
        """Keep (and journal) the file upload attached with the image bytes of SHA-256 ``digest``."""
        self.uploads[digest] = upload_id
        if not self.persist:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.journal, "a", encoding="utf-8") as out:
            out.write("\n" + json.dumps({"upload": digest, "id": upload_id}) + "\n")
            out.flush()
            os.fsync(out.fileno())

    def forget_upload(self, upload_id: str) -> None:
        for digest in [d for d, i in self.uploads.items() if i == upload_id]:
            del self.uploads[digest]

    def compact(self) -> None:
        """Write the snapshot atomically (temporary file + rename), then drop the journal it holds."""
        if not self.persist:
            return
        data = {
            "version": MAPPING_VERSION,
            "parents": {
                parent: {p: e.to_json() for p, e in sorted(pages.items())} for parent, pages in self.parents.items()
            },
        }
        if self.uploads:
            data["uploads"] = dict(sorted(self.uploads.items()))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".notion-pages.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False, indent=1)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.journal.unlink(missing_ok=True)


def _entries(pages: dict[str, Any]) -> dict[str, PageEntry]:
    return {str(p): PageEntry.from_json(e) for p, e in pages.items()}


def _key(parent: str) -> str:
    """The parent's key: its normalised page id; a key that is no page id is kept as it is."""
    return page_id(parent) or parent


def _merge_spellings(stored: dict[str, dict[str, PageEntry]]) -> dict[str, dict[str, PageEntry]]:
    """One key per parent page for a mapping written when each spelling of the id was a key of its own.

    Before decision 708 `--parent 1111...` and `--parent 1111-...` kept two sets of pages. Their
    documents are merged under the normalised id so the next push updates them, not a copy. A
    document under several spellings keeps the page recorded under the normalised id, else
    under the first spelling; the other pages (copies the old versions made) stay recorded under
    their spelling, which no push uses any more, so the mapping still names them.
    """
    merged: dict[str, dict[str, PageEntry]] = {}
    left: dict[str, dict[str, PageEntry]] = {}
    # the normalised keys first: their entries win over the other spellings'
    for parent in sorted(stored, key=lambda k: _key(k) != k):
        pages = merged.setdefault(_key(parent), {})
        for path, entry in stored[parent].items():
            if path in pages:
                left.setdefault(parent, {})[path] = entry
            else:
                pages[path] = entry
    return {**merged, **left}


# ----------------------------------------------------------------------------- dry run
class DryRunPort:
    """A port that sends nothing: counts the requests a push would make and invents ids.

    ``list_children`` answers from the mapping (what the last push left), so a dry
    run plans the same updates a real push would when nobody edited the pages.
    """

    def __init__(self, known_children: Callable[[str], list[str]]) -> None:
        self._known = known_children
        self._children: dict[str, list[str]] = {}  # blocks created during this run -> their children
        self._next = 0
        self.calls: dict[str, int] = {}

    def _id(self) -> str:
        self._next += 1
        return f"dry-run-{self._next:08d}"

    def _count(self, name: str, n: int = 1) -> None:
        self.calls[name] = self.calls.get(name, 0) + n

    def create_page(self, parent_page_id: str, title: str) -> str:
        self._count("createPage")
        return self._id()

    def set_title(self, page_id: str, title: str) -> None:
        self._count("updatePage")

    def archive_page(self, page_id: str) -> None:
        self._count("archivePage")

    def page_archived(self, page_id: str) -> bool:
        self._count("retrievePage")
        return False

    def restore_page(self, page_id: str) -> None:
        self._count("updatePage")

    def child_pages(self, page_id: str) -> list[tuple[str, str, bool]]:
        self._count("listChildren")
        return []

    def list_children(self, block_id: str) -> list[str]:
        known = self._children.get(block_id)
        if known is None:
            known = self._known(block_id)
        self._count("listChildren", 1 + max(0, (len(known) - 1) // 100))
        return list(known)

    def append_children(self, block_id: str, children: list[dict[str, Any]], after: str | None = None) -> list[str]:
        self._count("appendChildren")
        ids = []
        for child in children:
            child_id = self._id()
            self._children[child_id] = [self._id() for _ in _children(child)]
            ids.append(child_id)
        known = self._children.get(block_id)
        if known is None:
            known = self._children[block_id] = list(self._known(block_id))
        at = known.index(after) + 1 if after in known else len(known)
        known[at:at] = ids
        return ids

    def delete_block(self, block_id: str) -> None:
        self._count("deleteBlock")

    def update_block(self, block_id: str, block: dict[str, Any]) -> None:
        self._count("updateBlock")

    def upload_limit(self) -> int | None:
        self._count("retrieveBotUser")
        return None

    def upload_file(self, filename: str, content_type: str, data: bytes) -> str:
        self._count("createFileUpload")
        self._count("sendFileUpload")
        return self._id()


# ----------------------------------------------------------------------------- appending a tree
def _children(block: Block) -> list[Block]:
    children = block[block["type"]].get("children")
    return children if isinstance(children, list) else []


def _head(block: Block) -> int:
    """How many of ``block``'s children are sent with it: at most 100, and within the payload limit.

    At least one (a table is created with a row); the others are appended to it afterwards.
    """
    kids = _children(block)
    if not kids:
        return 0
    size = len(encode_body(_strip(block, rows=False)))
    for n, kid in enumerate(kids[:MAX_CHILDREN]):
        size += len(encode_body(_strip(kid))) + 1
        if n and size > MAX_PAYLOAD:
            return n
    return min(len(kids), MAX_CHILDREN)


def _shallow(block: Block) -> Block:
    """``block`` as sent: its first children (:func:`_head`), and none of theirs but a table's rows."""
    kids = _children(block)
    if not kids:
        return block
    body = dict(block[block["type"]])
    body["children"] = [_strip(k) for k in kids[: _head(block)]]
    return {**block, block["type"]: body}


def _strip(block: Block, *, rows: bool = True) -> Block:
    """A child as sent with its parent: without children, except that a table keeps its first 100 rows.

    Notion creates a table only together with its rows (block reference, table: "at least one
    table_row"), and a table under a list item still fits the two levels one request may nest.
    """
    kids = _children(block)
    if not kids:
        return block
    body = {k: v for k, v in block[block["type"]].items() if k != "children"}
    if rows and block["type"] == "table":
        body["children"] = kids[:MAX_CHILDREN]
    return {**block, block["type"]: body}


def _later(block: Block) -> list[Block]:
    """The children of a child that were not sent with it (see :func:`_strip`)."""
    kids = _children(block)
    return kids[MAX_CHILDREN:] if block["type"] == "table" else kids


def _shape(block: Block) -> tuple[Any, ...]:
    """A block's type and its children's shapes: what an update in place cannot change."""
    return (block["type"], *(_shape(kid) for kid in _children(block)))


def _count(sent: Block) -> int:
    return 1 + sum(_count(k) for k in _children(sent))


def _weight(block: Block) -> tuple[int, int]:
    """(block elements, JSON bytes) of ``block`` as sent."""
    sent = _shallow(block)
    return _count(sent), len(encode_body(sent))


def _batches(blocks: Sequence[Block]) -> Iterable[list[Block]]:
    batch: list[Block] = []
    elements = size = 0
    for block in blocks:
        count, nbytes = _weight(block)
        if batch and (len(batch) >= MAX_CHILDREN or elements + count > MAX_ELEMENTS or size + nbytes > MAX_PAYLOAD):
            yield batch
            batch, elements, size = [], 0, 0
        batch.append(block)
        elements += count
        size += nbytes
    if batch:
        yield batch


MAX_RESENDS = 3  # an append that failed without being applied is sent again at most this often


def _append(
    port: NotionPort, parent_id: str, children: list[Block], existing: int, resent: list[str], after: str | None
) -> list[str]:
    """Append ``children`` under ``parent_id``, which has ``existing`` children, at the end or after ``after``.

    An append whose answer was lost (5xx, no answer) may have been applied: the children are
    listed, and the blocks it made are adopted if they are there, or it is sent again if the
    count did not move (decision 466): then ``parent_id`` goes to ``resent``, since Notion may
    still apply the lost request later. Anything else means someone else is editing the page.
    """
    degraded = False
    for attempt in range(MAX_RESENDS + 1):
        try:
            return port.append_children(parent_id, children, after)
        except NotionError as exc:
            if exc.status == 400 and "image" in str(exc).lower() and not degraded:
                # Notion would not take an external image (decision 1153): its link instead
                plain = [without_images(child) for child in children]
                if plain != children:
                    degraded, children = True, plain
                    continue
            if not exc.ambiguous or attempt == MAX_RESENDS:
                raise
            now = port.list_children(parent_id)
            at = existing if after is None else now.index(after) + 1 if after in now else -1
            if len(now) == existing + len(children) and at >= 0:
                return now[at : at + len(children)]  # applied: its answer was lost
            if len(now) == existing:
                resent.append(parent_id)
                continue
            raise NotionError(
                f"An append failed ({exc}) and the block now has {len(now)} children where "
                f"{existing} or {existing + len(children)} were expected; push again.",
                exc.status,
                exc.code,
            ) from None
    raise AssertionError("unreachable")


def append_blocks(
    port: NotionPort,
    parent_id: str,
    blocks: Sequence[Block],
    existing: int = 0,
    resent: list[str] | None = None,
    after: str | None = None,
) -> list[str]:
    """Append ``blocks`` (any size, any depth) under ``parent_id``, which has ``existing`` children.

    At the end, or with ``after`` just after that child, in order (decision 1151). The ids of the
    first-level blocks created; ``resent`` collects the blocks an append was sent to again after
    its answer was lost (see :func:`_append`).
    """
    resent = [] if resent is None else resent
    ids: list[str] = []
    for batch in _batches(blocks):
        created = _append(port, parent_id, [_shallow(b) for b in batch], existing + len(ids), resent, after)
        if len(created) != len(batch):
            raise NotionError(f"Notion created {len(created)} blocks where {len(batch)} were sent.")
        ids.extend(created)
        after = created[-1] if after is not None else None
        for block, block_id in zip(batch, created, strict=True):
            kids = _children(block)
            head = _head(block)
            sent = kids[:head]
            if any(_later(k) for k in sent):
                kid_ids = port.list_children(block_id)
                for kid, kid_id in zip(sent, kid_ids, strict=False):
                    if _later(kid):
                        append_blocks(port, kid_id, _later(kid), len(_children(kid)) - len(_later(kid)), resent)
            if len(kids) > head:
                append_blocks(port, block_id, kids[head:], head, resent)
    return ids


# ----------------------------------------------------------------------------- the push
@dataclass
class PushReport:
    dry_run: bool
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    blocks_sent: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why): not pushed, tried again next time

    def to_wire(self) -> dict[str, Any]:
        return {
            "dryRun": self.dry_run,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "archived": self.archived,
            "blocksSent": self.blocks_sent,
            "requests": self.requests,
            "skippedCount": len(self.skipped),
            "skipped": [{"path": path, "reason": reason} for path, reason in self.skipped],
            "failedCount": len(self.failed),
            "failed": [{"path": path, "reason": reason} for path, reason in self.failed],
        }


def _count_blocks(blocks: Sequence[Block]) -> int:
    return sum(1 + _count_blocks(_children(b)) for b in blocks)


DOWN_AFTER = 3  # documents failing in a row without an answer (or with 5xx): Notion is down, stop


@dataclass(frozen=True)
class _Written:
    """What one document is pushed as: its blocks, its headings' anchors, the links it resolved."""

    blocks: list[Block]
    anchors: list[tuple[int, str]]
    links: dict[str, str]
    uploads: list[tuple[str, str]] = field(default_factory=list)  # (SHA-256 of the image, file upload id)
    incomplete: bool = False  # an image could not be uploaded now: the document is pushed again next time


# Notion's image types (working-with-files-and-media, "Supported file types") by extension.
IMAGE_TYPES = {
    ".gif": "image/gif",
    ".heic": "image/heic",
    ".jpeg": "image/jpeg",
    ".jpg": "image/jpeg",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".webp": "image/webp",
    ".ico": "image/vnd.microsoft.icon",
}
MAX_SINGLE_PART = 20 * 1024 * 1024  # uploading-small-files: a single-part upload holds at most 20 MB


class Pusher:
    def __init__(self, port: NotionPort, mapping: Mapping, parent_page_id: str, root: Path | None = None) -> None:
        self.port = port
        self.mapping = mapping
        self.parent = parent_page_id
        self.pages = mapping.pages(parent_page_id)
        self.root = root  # the knowledge base: local images under it are uploaded (decision 1170)
        self._uploaded: dict[str, str] = {}  # image SHA-256 -> file upload made in this push, not yet attached
        self._limit: int | None = None
        self._down = 0  # documents failed in a row without an answer (see DOWN_AFTER)

    def push(self, documents: Iterable[tuple[str, bytes | None]], report: PushReport, *, prune: bool) -> PushReport:
        """Push ``(path, raw bytes)`` documents; with ``prune``, archive pages of documents not among them.

        ``None`` bytes mark a document that could not be read (the caller named it in
        ``report.skipped``): it is still there, so its page is neither pushed nor archived;
        nor is any page under a folder named in ``report.skipped`` with a trailing ``/``.
        A document Notion refuses goes to ``report.failed`` and the next one is pushed; a
        failure no later request can escape (see :meth:`_stops`) ends the push (decision 467).
        """
        seen: set[str] = set()
        linking: dict[str, bytes] = {}  # documents with links to documents: looked at again at the end
        self._down = 0
        for path, raw in documents:
            seen.add(path)
            if raw is None:
                continue
            self._push_or_fail(path, raw, report)
            entry = self.pages.get(path)
            if entry is not None and entry.links:
                linking[path] = raw
        if prune:
            self._prune(seen, report)
        # Second pass (decision 1167): a link to a document whose page was made later in this push, or
        # archived by it, or to a heading pushed since, points elsewhere now; only the blocks whose
        # links changed are sent again (the kept-ends rule of decision 1151).
        for path, raw in linking.items():
            entry = self.pages.get(path)
            if entry is None or not entry.source_hash or not self._links_moved(entry):
                continue
            self._push_or_fail(path, raw, report)
            if path in report.updated and path in report.unchanged:
                report.unchanged.remove(path)
            if path in report.updated and path in report.created:
                report.updated.remove(path)
        return report

    def _push_or_fail(self, path: str, raw: bytes, report: PushReport) -> None:
        try:
            self.push_one(path, raw, report)
            self._down = 0
        except NotionError as exc:
            self.mapping.record(self.parent, path)  # a page created before the failure is known next time
            self._down = self._down + 1 if exc.status == 0 or exc.status >= 500 else 0
            if self._stops(exc) or self._down >= DOWN_AFTER:
                raise
            report.failed.append((path, str(exc)))

    def _prune(self, seen: set[str], report: PushReport) -> None:
        hidden = tuple(path for path, _ in report.skipped if path.endswith("/"))
        for path in sorted(set(self.pages) - seen):
            if hidden and (path.startswith(hidden) or "./" in hidden):
                continue  # in a folder that could not be listed: not known to be gone
            entry = self.pages.pop(path)
            if not entry.page_id:  # its creation was never confirmed: nothing known to archive
                self.mapping.record(self.parent, path)
                continue
            try:
                self.port.archive_page(entry.page_id)
            except NotionError as exc:
                if exc.status != 404:  # already gone in Notion: nothing to archive
                    self.pages[path] = entry
                    if self._stops(exc):
                        raise
                    report.failed.append((path, str(exc)))
                    continue
            report.archived.append(path)
            self.mapping.record(self.parent, path)

    def _target_url(self, target: str) -> str | None:
        """The URL of a link target (see :func:`link_target`): its page, at its heading when known."""
        doc, _, anchor = target.partition("#")
        entry = self.pages.get(doc)
        if entry is None or not entry.page_id:
            return None
        return page_url(entry.page_id, entry.anchors.get(anchor) if anchor else None)

    def _links_moved(self, entry: PageEntry) -> bool:
        """Whether a link the page was pushed with would now point elsewhere (or somewhere, or nowhere)."""
        if entry.links is None:
            return True  # not known yet: the page is looked at once
        return any((self._target_url(target) or "") != url for target, url in entry.links.items())

    def _resolver(self, path: str, links: dict[str, str]) -> Resolve:
        def resolve(href: str) -> str | None:
            target = link_target(path, href)
            if target is None:
                return None
            url = self._target_url(target)
            links[target] = url or ""
            return url

        return resolve

    def _stops(self, exc: NotionError) -> bool:
        """Failures that every later request would meet too: the token, the parent page, Notion itself."""
        return exc.fatal or exc.status in (401, 403) or exc.code == "parent_not_found"

    def push_one(self, path: str, raw: bytes, report: PushReport) -> None:
        digest = source_hash(raw)
        entry = self.pages.get(path)
        text = raw.decode("utf-8-sig", errors="replace")
        if entry is not None and entry.source_hash == digest:
            if not self._links_moved(entry):
                if path not in report.unchanged:
                    report.unchanged.append(path)
                return
            relinked = self._relinked(path, entry, text)
            if relinked is not None:
                listed = report.updated if relinked else report.unchanged
                if path not in listed:
                    listed.append(path)
                return
        written, title = self._convert(path, text)
        for attempt in range(2):
            try:
                self._write_restoring(path, entry, title, written, digest, report)
                return
            except NotionError as exc:
                # A file upload kept from an earlier push that Notion no longer takes (expired before
                # it was attached, or of another workspace): forget it, upload the image again, once.
                if attempt or exc.status != 400 or "file_upload" not in str(exc) or not written.uploads:
                    raise
                for _, upload_id in written.uploads:
                    self.mapping.forget_upload(upload_id)
                    self._uploaded = {d: i for d, i in self._uploaded.items() if i != upload_id}
                entry = self.pages.get(path)
                written, title = self._convert(path, text)

    def _write_restoring(
        self, path: str, entry: PageEntry | None, title: str, written: _Written, digest: str, report: PushReport
    ) -> None:
        try:
            self._write(path, entry, title, written, digest, report)
        except NotionError as exc:
            # A page in Notion's trash refuses every edit: restore it and push again (decision 468).
            if exc.fatal or entry is None or not entry.page_id or exc.status != 400:
                raise
            if not self._restored(entry.page_id):
                raise
            self._write(path, entry, title, written, digest, report)

    def _relinked(self, path: str, entry: PageEntry, text: str) -> bool | None:
        """Point the links of an unchanged document at their targets' pages now, block by block (1167).

        The document as pushed is converted again with the URLs its links were pushed with; each
        block whose text differs only by its links' URLs is updated in place (``PATCH
        /v1/blocks/{id}``, the children listed only where a nested block changed), so its id,
        its children and the headings other pages link to stay. True when blocks were updated,
        False when none had to be (a page pushed by an earlier version whose links name no page:
        its links and anchors are recorded now); None when the page is not known block by block
        (an append whose answer was lost, an image owed, another conversion): then it is pushed
        whole as any changed document.
        """
        pushed = entry.links or {}
        if any(not h for _, h in entry.blocks):
            return None
        kept = self._uploader(path, [], [], send=False)  # the uploads the images were attached with
        before = convert(text, lambda href: pushed.get(link_target(path, href) or "") or None, kept)
        if [block_hash(b) for b in before.blocks] != [h for _, h in entry.blocks]:
            return None  # not the page as the mapping knows it
        written, _ = self._convert(path, text)
        if written.incomplete or [_shape(b) for b in written.blocks] != [_shape(b) for b in before.blocks]:
            return None  # more than links differ (an image found since its placeholder): push it whole
        changed = before.blocks != written.blocks
        digest = entry.source_hash
        if changed:  # from here the page changes: a push that fails or is killed pushes it again
            entry.source_hash = ""
            self.mapping.record(self.parent, path)
        for (block_id, _), old, new in zip(entry.blocks, before.blocks, written.blocks, strict=True):
            self._update_tree(block_id, old, new)
        entry.blocks = [
            (block_id, block_hash(b)) for (block_id, _), b in zip(entry.blocks, written.blocks, strict=True)
        ]
        entry.links = written.links
        entry.anchors = {}
        for index, anchor in written.anchors:
            entry.anchors.setdefault(anchor, entry.blocks[index][0])
        entry.source_hash = digest
        self.mapping.record(self.parent, path)
        return changed

    def _update_tree(self, block_id: str, old: Block, new: Block) -> None:
        if old == new:
            return
        kind = new["type"]
        if old["type"] != kind:
            raise NotionError(f"Block {block_id} changed type ({old['type']} -> {kind}); push again.")
        if {k: v for k, v in old[kind].items() if k != "children"} != {
            k: v for k, v in new[kind].items() if k != "children"
        }:
            self.port.update_block(block_id, new)
        old_kids, new_kids = _children(old), _children(new)
        if old_kids != new_kids:
            kid_ids = self.port.list_children(block_id)
            if len(kid_ids) != len(new_kids) or len(old_kids) != len(new_kids):
                raise NotionError(f"Block {block_id} has {len(kid_ids)} children where {len(new_kids)} were pushed.")
            for kid_id, old_kid, new_kid in zip(kid_ids, old_kids, new_kids, strict=True):
                self._update_tree(kid_id, old_kid, new_kid)

    def _convert(self, path: str, text: str) -> tuple[_Written, str]:
        links: dict[str, str] = {}
        uploads: list[tuple[str, str]] = []
        failed: list[str] = []
        converted = convert(text, self._resolver(path, links), self._uploader(path, uploads, failed))
        written = _Written(converted.blocks, converted.anchors, links, uploads, bool(failed))
        return written, converted.title or PurePosixPath(path).stem

    def _uploader(
        self, path: str, used: list[tuple[str, str]], failed: list[str], *, send: bool = True
    ) -> Upload | None:
        """The image blocks of ``path``'s local images: each file uploaded once, its upload kept (1170).

        An image outside the knowledge base, missing, of a type Notion does not take or over the
        size limit stays a placeholder; one whose upload failed too, and the document is pushed
        again next time (``failed``).
        """
        if self.root is None:
            return None
        root = self.root

        def upload(src: str, alt: str) -> Block | None:
            file = _local_file(root, path, src)
            content_type = IMAGE_TYPES.get(file.suffix.lower()) if file is not None else None
            if file is None or content_type is None:
                return None
            try:
                if file.stat().st_size > MAX_SINGLE_PART:
                    return None
                data = file.read_bytes()
            except OSError:
                return None
            digest = hashlib.sha256(data).hexdigest()
            upload_id = self.mapping.uploads.get(digest) or self._uploaded.get(digest)
            if upload_id is None and not send:
                return None
            if upload_id is None:
                if len(data) > self._upload_limit():
                    return None
                try:
                    upload_id = self.port.upload_file(file.name, content_type, data)
                except NotionError as exc:
                    if self._stops(exc):
                        raise
                    failed.append(src)
                    return None
                self._uploaded[digest] = upload_id
            used.append((digest, upload_id))
            return uploaded_image(upload_id, alt)

        return upload

    def _upload_limit(self) -> int:
        """The largest file this push uploads: the workspace's limit, within the single-part 20 MB."""
        if self._limit is None:
            try:
                limit = self.port.upload_limit()
            except NotionError as exc:
                if self._stops(exc):
                    raise
                limit = None
            self._limit = min(limit or MAX_SINGLE_PART, MAX_SINGLE_PART)
        return self._limit

    def _deleted_already(self, exc: NotionError, page_id: str) -> bool:
        """Whether a refused DELETE means the block is gone already (a lost answer, or deleted by hand).

        Notion answers 404, or for a block already in the trash the 400 "Can't edit block that
        is archived", which is also its answer for every block of a page in the trash: that one
        is not gone, the page is to be restored (decision 468), so the page is looked at (864).
        """
        if exc.status == 404:
            return True
        return exc.status == 400 and "archived" in str(exc).lower() and not self.port.page_archived(page_id)

    def _restored(self, page_id: str) -> bool:
        """Restore the page if it is in the trash; whether it was."""
        if not self.port.page_archived(page_id):
            return False
        self.port.restore_page(page_id)
        return True

    def _write(
        self, path: str, entry: PageEntry | None, title: str, written: _Written, digest: str, report: PushReport
    ) -> None:
        blocks = written.blocks
        hashes = [block_hash(b) for b in blocks]
        pending = entry is not None and not entry.page_id  # an earlier creation's answer was lost
        lost: PageEntry | None = None  # the page Notion no longer shows us
        last = 0  # blocks kept at the end of the page (decision 1151)
        if entry is not None and not pending:
            try:
                actual = self.port.list_children(entry.page_id)
            except NotionError as exc:
                if exc.status != 404:
                    raise
                lost, entry = entry, None  # the page was deleted in Notion (or is not shared): create it again
        if entry is None or pending:
            if not pending:
                # Journaled before it is asked for: a push killed after Notion made the page but
                # before its id was recorded leaves this pending entry, and the next push adopts
                # that page instead of making a second one (decision 861).
                self.pages[path] = PageEntry("", title, "", [])
                self.mapping.record(self.parent, path)
            try:
                page_id = self._create(path, title, look_first=pending)
            except NotionError as exc:
                if lost is not None and not exc.ambiguous:
                    # No page was made: the old one stays recorded. A 404 on it and on the parent
                    # is a parent no longer shared, and the page comes back with it (decision 1145).
                    self.pages[path] = lost
                raise
            entry = PageEntry(page_id, title, "", [])
            self.pages[path] = entry
            self.mapping.record(self.parent, path)
            actual, keep = [], 0
            if path not in report.created:
                report.created.append(path)
        else:
            if entry.source_hash:
                # The page stops matching any bytes before its first block is deleted: a push that
                # fails or is killed past here leaves the document to be pushed again, even when
                # its bytes go back to those of the last push (decision 1148).
                entry.source_hash = ""
                self.mapping.record(self.parent, path)
            keep = 0
            limit = min(len(actual), len(entry.blocks), len(blocks))
            while keep < limit and actual[keep] == entry.blocks[keep][0] and entry.blocks[keep][1] == hashes[keep]:
                keep += 1
            # The unchanged end stays too, when there is a kept block to insert the new middle after
            # (decision 1151): an edit near the top of a long page cost a DELETE per later block.
            while (
                keep
                and last < limit - keep
                and actual[-1 - last] == entry.blocks[-1 - last][0]
                and entry.blocks[-1 - last][1] == hashes[-1 - last]
            ):
                last += 1
            for block_id in actual[keep : len(actual) - last]:
                try:
                    self.port.delete_block(block_id)
                except NotionError as exc:
                    if not self._deleted_already(exc, entry.page_id):
                        raise
            if entry.title != title:
                self.port.set_title(entry.page_id, title)
                entry.title = title
            if path not in report.updated:
                report.updated.append(path)
        tail = blocks[keep : len(blocks) - last]
        resent: list[str] = []
        after = actual[keep - 1] if last else None
        new_ids = append_blocks(self.port, entry.page_id, tail, keep + last, resent, after)
        report.blocks_sent += _count_blocks(tail)
        sent = hashes[keep : len(hashes) - last]
        if resent:
            # Notion may still apply a lost append we sent again: record the blocks sent now as
            # unconfirmed (no hash), so the next push lists them and replaces them (decision 466).
            sent = [""] * len(tail)
            digest = ""
        ended = entry.blocks[len(entry.blocks) - last :]
        entry.blocks = entry.blocks[:keep] + list(zip(new_ids, sent, strict=True)) + ended
        for image, upload_id in written.uploads:  # attached now: kept for the next pushes
            if self.mapping.uploads.get(image) != upload_id:
                self.mapping.record_upload(image, upload_id)
        entry.source_hash = "" if written.incomplete else digest
        entry.links = written.links
        entry.anchors = {}
        for index, anchor in written.anchors:
            entry.anchors.setdefault(anchor, entry.blocks[index][0])
        self.mapping.record(self.parent, path)

    def _create(self, path: str, title: str, *, look_first: bool = False) -> str:
        """Create the page; after a lost answer, adopt the page it made rather than make a second one.

        The page the failed request may have made is empty and titled ``title``, under the
        parent, and no document's page yet (decision 466); the newest such page is adopted.
        If every try is lost, the document is marked pending (a page entry without id) so
        that the next push looks before it creates.
        """
        for attempt in range(MAX_RESENDS + 1):
            if look_first or attempt:
                known = {e.page_id for e in self.pages.values()}
                made = [
                    page_id
                    for page_id, name, has_children in self.port.child_pages(self.parent)
                    if name == truncate(title) and not has_children and page_id not in known
                ]
                if made:
                    return made[-1]
            try:
                return self.port.create_page(self.parent, title)
            except NotionError as exc:
                if not exc.ambiguous and self.pages.get(path) == PageEntry("", title, "", []):
                    del self.pages[path]  # refused outright: no page was made, none to look for
                if exc.status == 404 and exc.code == "object_not_found":
                    raise NotionError(
                        f"The parent page {self.parent} was not found in Notion: share it with the integration "
                        f"(the page's ••• menu, Connections) or give another --parent ({exc}).",
                        exc.status,
                        "parent_not_found",
                    ) from None
                if not exc.ambiguous:
                    raise
                if attempt == MAX_RESENDS:
                    self.pages[path] = PageEntry("", title, "", [])
                    raise
        raise AssertionError("unreachable")
