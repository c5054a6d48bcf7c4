"""The five image operations (contract §11), independent of MCP.

Each function takes the workspace and plain values, returns a small dataclass and raises
:class:`~local_vector_search_mcp.errors.KbError` subclasses in the order of
spec/decisions.md 16: writes enabled -> path safety -> existence -> hashes -> content.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
import re
import stat
import threading
import time
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import (
    LIST_IMAGES,
    AlreadyExists,
    Conflict,
    ConflictReason,
    InvalidArgument,
    InvalidPath,
    NotFound,
    PermissionDenied,
    UnsupportedFormat,
)
from ..pinning import Pins
from ..sourcefile import RACY_NS
from ..workspace import Workspace
from ..writer import StagingNote, fsync_dir, write_lock
from .download import DownloadPolicy, Resolver, fetch_to_file, system_resolver
from .files import read_capped, stat_regular
from .formats import MAX_BYTES, ImageFormat, detect, format_for_path
from .naming import (
    DEFAULT_FOLDER,
    check_file_name,
    generated_stem,
    markdown_link,
    name_candidates,
    name_too_long,
    skip_case_variants,
    upload_stem,
)
from .preview import MAX_SHOWN_SIDE, check_readable, gif_preview_png
from .store import CreatedFolders, os_error, publish, staging_path

# After a stale expectedSha256 (decision 1117): where the current one comes from.
_ANOTHER_TARGET = "Choose another targetPath."  # after ALREADY_EXISTS (decision 1120)
_FRESH_SHA = "kb_load_image gives its current sha256: retry with that as expectedSha256"

__all__ = [
    "ImageCatalog",
    "ImageEntry",
    "ImageMove",
    "ImagePage",
    "InlineImage",
    "LoadedImage",
    "MovedImage",
    "RemoteImage",
    "SavedImage",
    "check_move",
    "decode_image_data",
    "delete_image",
    "list_images",
    "load_image",
    "move_image",
    "save_image",
]


# ---------------------------------------------------------------------------- save


@dataclass(frozen=True)
class RemoteImage:
    """An OpenAI file reference: the bytes are behind a signed HTTPS URL."""

    url: str
    declared_mime: str | None = None
    upload_name: str | None = None


@dataclass(frozen=True)
class InlineImage:
    """Bytes sent in the call itself (our ``data`` extension for clients without file references)."""

    data: bytes
    declared_mime: str | None = None


@dataclass(frozen=True)
class SavedImage:
    path: str
    format: ImageFormat
    size: int
    sha256: str
    markdown: str


_DATA_URI = re.compile(r"^data:([^,;]*)((?:;[^,;]*)*?);base64,", re.IGNORECASE)
_MAX_ENCODED = (MAX_BYTES + 2) // 3 * 4


def decode_image_data(text: str) -> InlineImage:
    """Standard base64 or ``data:image/<type>;base64,...`` -> bytes (at most 25 MiB decoded).

    Line breaks and spaces inside the base64 are ignored (mail-style wrapping); missing
    ``=`` padding is tolerated; any other character is refused.
    """
    declared = None
    body = text.strip()
    if body[:5].lower() == "data:":
        match = _DATA_URI.match(body)
        if not match:
            raise InvalidArgument("data must be base64 or a data URI of the form data:image/png;base64,<base64>.")
        declared = match.group(1).strip() or None
        body = body[match.end() :]
    body = re.sub(r"\s+", "", body)
    if len(body) > _MAX_ENCODED + 2:
        raise InvalidArgument(f"The image in data is larger than 25 MiB ({MAX_BYTES} bytes).")
    body += "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidArgument(
            "data is not valid standard base64 (A-Z a-z 0-9 + / with = padding) nor a base64 data URI."
            + _not_bytes_hint(text.strip())
        ) from None
    if not raw:
        raise InvalidArgument("data is empty: send the image's bytes as base64, or as data:image/png;base64,<base64>.")
    if len(raw) > MAX_BYTES:
        raise InvalidArgument(f"The image in data is larger than 25 MiB ({MAX_BYTES} bytes).")
    return InlineImage(raw, declared)


_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_PATH_LIKE = re.compile(
    r"^(?:[a-z]:)?[^\s]*[/\\][^\s]*\.[a-z0-9]{2,5}$|^[^\s/\\]+\.(?:png|jpe?g|webp|gif)$", re.IGNORECASE
)


def _not_bytes_hint(text: str) -> str:
    """What to send instead when ``data`` holds a URL or a file path rather than the bytes (decision 1128)."""
    if text[:7].lower() == "file://" or (_PATH_LIKE.match(text) and not _URL.match(text)):
        return (
            " It looks like a file path: data takes the image's bytes, never a path. For a file in the knowledge "
            "base, kb_move_image moves or renames it; for one elsewhere, send its bytes as base64 (the output of "
            "`base64 -w0 <file>`)."
        )
    if _URL.match(text):
        return (
            " It looks like a URL: data takes the image's bytes. To download an https:// URL, send "
            "file: {download_url: <the URL>, file_id: <any name for it>} instead of data."
        )
    return ""


@dataclass(frozen=True)
class _Plan:
    folder_rel: str
    names: list[str] | None
    """The exact name (explicit ``targetPath``), or None: names are derived from the format."""
    stem: str | None
    extension_format: ImageFormat | None
    """The format the chosen name's extension claims, if it has one."""
    explicit: bool
    keep_extension: str | None
    """The caller's own extension spelling (``cover.PNG`` stays ``.PNG``)."""
    from_file_name: bool = False
    """The stem is the caller's ``fileName``: it must fit as given (others are shortened)."""


def _plan(ws: Workspace, source: RemoteImage | InlineImage, file_name: str | None, target_path: str | None) -> _Plan:
    if file_name is not None and target_path is not None:
        raise InvalidArgument("Give either fileName or targetPath, not both.")
    if target_path is not None:
        rel, target = ws.guard.resolve(target_path, field="targetPath")
        fmt = format_for_path(rel)
        if fmt is None:
            raise InvalidPath(f"targetPath {rel!r} must end in .png, .jpg, .jpeg, .webp or .gif.")
        if os.path.lexists(target):
            raise AlreadyExists(
                f"{rel!r} already exists; kb_save_image never overwrites a targetPath. "
                "Choose another targetPath, or leave it out to get a free name."
            )
        folder, _, name = rel.rpartition("/")
        return _Plan(folder, [name], None, fmt, True, None)
    if file_name is not None:
        stem, fmt = check_file_name(file_name)
        ext = file_name[len(stem) :] if fmt is not None else None
        if ext is not None and (too_long := name_too_long(stem, ext)):
            raise too_long
        return _Plan(DEFAULT_FOLDER, None, stem, fmt, False, ext, from_file_name=True)
    own = upload_stem(source.upload_name) if isinstance(source, RemoteImage) else None
    return _Plan(DEFAULT_FOLDER, None, own or generated_stem(), None, False, None)


def _check_content(fmt: ImageFormat | None, declared_mime: str | None, plan: _Plan) -> ImageFormat:
    if fmt is None:
        raise UnsupportedFormat("The bytes are not a PNG, JPEG, WebP or GIF image; nothing was saved.")
    named = ImageFormat.from_mime(declared_mime)
    if named is not None and named is not fmt:
        raise InvalidArgument(
            f"The image is declared as {named.mime} (the `data:` URI's type or file.mime_type) but its bytes are "
            f"{fmt.mime}; nothing was saved. Declare {fmt.mime}, or leave the type out."
        )
    if plan.extension_format is not None and plan.extension_format is not fmt:
        if plan.explicit:
            raise UnsupportedFormat(
                f"targetPath's extension says {plan.extension_format.mime} but the image is {fmt.mime}; "
                f"use the extension {fmt.canonical}."
            )
        raise InvalidArgument(
            f"fileName's extension says {plan.extension_format.mime} but the image is {fmt.mime}; "
            f"use {fmt.canonical} or leave the extension out."
        )
    if plan.from_file_name and plan.stem is not None and plan.keep_extension is None:
        too_long = name_too_long(plan.stem, fmt.canonical)  # the extension is only known now
        if too_long:
            raise too_long
    return fmt


_NOT_SAVED = "Nothing was saved; send the whole image again."


def save_image(
    ws: Workspace,
    source: RemoteImage | InlineImage,
    *,
    file_name: str | None = None,
    alt_text: str = "",
    target_path: str | None = None,
    policy: DownloadPolicy | None = None,
    resolver: Resolver = system_resolver,
) -> SavedImage:
    """kb_save_image: stage, check, then publish under a free name; nothing is left on failure."""
    ws.require_writes()
    plan = _plan(ws, source, file_name, target_path)
    inline_format = None
    if isinstance(source, InlineImage):
        # Checked before any folder is created: a refused inline image leaves no trace at all.
        inline_format = _check_content(detect(source.data[:12]), source.declared_mime, plan)
        check_readable(source.data, inline_format, "The image", _NOT_SAVED)
    folders = CreatedFolders(ws)
    staged: Path | None = None
    note: StagingNote | None = None
    try:
        folder = folders.ensure(plan.folder_rel)
        staged = staging_path(folder)
        note = StagingNote(ws, staged, folders.created)  # a kill from here on is cleaned up at the next start
        if isinstance(source, InlineImage) and inline_format is not None:
            _write_staged(staged, source.data, plan.folder_rel)
            fmt, sha, size = inline_format, hashlib.sha256(source.data).hexdigest(), len(source.data)
        else:
            assert isinstance(source, RemoteImage)
            found: list[ImageFormat] = []

            def on_head(head: bytes) -> None:
                found.append(_check_content(detect(head), source.declared_mime, plan))

            downloaded = fetch_to_file(
                source.url, staged, policy or DownloadPolicy(), resolver=resolver, on_head=on_head
            )
            fmt, sha, size = found[0], downloaded.sha256, downloaded.size
            with open(staged, "rb") as bytes_in:
                check_readable(bytes_in, fmt, "The downloaded image", _NOT_SAVED)
        names: Iterable[str]
        if plan.names is not None:
            names = plan.names
            what = f"{plan.folder_rel + '/' if plan.folder_rel else ''}{plan.names[0]}"
        else:
            assert plan.stem is not None
            ext = plan.keep_extension or fmt.canonical
            names = skip_case_variants(name_candidates(plan.stem, ext), _names_in(folder))
            what = f"Every name from {plan.folder_rel}/{plan.stem}{ext} on"
        rel = publish(ws, staged, plan.folder_rel, names, what=what)
    except BaseException:
        if staged is not None:
            with contextlib.suppress(OSError):
                os.unlink(staged)
        folders.undo()
        if note is not None:
            note.close()
        raise
    with contextlib.suppress(OSError):
        os.unlink(staged)
    if note is not None:
        note.close()
    return SavedImage(path=rel, format=fmt, size=size, sha256=sha, markdown=markdown_link(alt_text, rel))


def _names_in(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []  # publish then meets the same problem and names it


def _write_staged(staged: Path, data: bytes, folder_rel: str) -> None:
    try:
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise os_error(exc, folder_rel or ".", "write into") from None


# ---------------------------------------------------------------------------- list


@dataclass(frozen=True)
class ImageEntry:
    path: str
    format: ImageFormat
    """Claimed by the extension; the content is not opened when listing."""
    size: int
    mtime: float


@dataclass(frozen=True)
class ImagePage:
    images: list[ImageEntry]
    next_cursor: str | None


_CURSOR_VERSION = "v2"
_IMAGE_SUFFIXES = tuple(ext for fmt in ImageFormat for ext in fmt.extensions)


def encode_cursor(rel: str) -> str:
    raw = f"{_CURSOR_VERSION}\n{rel}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(ws: Workspace, cursor: str) -> str:
    """The last path of the previous page; INVALID_ARGUMENT for anything else."""
    restart = "start again without cursor (start listing again from the first page)"
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidArgument(f"cursor is malformed; {restart}.") from None
    version, sep, rel = raw.partition("\n")
    if not sep or version != _CURSOR_VERSION:
        raise InvalidArgument(f"cursor comes from another version of this tool; {restart}.")
    try:
        rel = ws.guard.normalise(rel, field="cursor")
    except InvalidPath:
        raise InvalidArgument(f"cursor names a path that is not permitted; {restart}.") from None
    return rel


def _sort_key(rel: str) -> tuple[str, str]:
    return (rel.lower(), rel)


class ImageCatalog:
    """The sorted image paths of one workspace, walked again only when a folder changed.

    A warm page must not re-read 10,000 directory entries: the last walk is reused while every
    folder it saw still has the same ``(mtime, ctime)`` (adding, removing or renaming an entry
    changes the folder's mtime; chmod changes its ctime), checked with one ``lstat`` per folder.
    """

    def __init__(self, ws: Workspace) -> None:
        self._ws = ws
        self._lock = threading.Lock()
        self._folders: dict[str, tuple[int, int]] = {}
        self._paths: list[str] = []
        self._keys: list[tuple[str, str]] = []
        self._walked_ns = 0
        self._formats: dict[str, ImageFormat | None] = {}
        self._root = str(ws.root)

    def format_of(self, rel: str) -> ImageFormat | None:
        """The format a listed path's extension claims; None when the path guard refuses the name.

        Remembered per path (until the next walk): a page then costs one ``lstat`` per entry.
        """
        fmt = self._formats.get(rel, False)
        if fmt is False:
            fmt = None if self._ws.guard.refuses(rel) else format_for_path(rel)
            self._formats[rel] = fmt
        return fmt  # type: ignore[return-value]

    def lstat(self, rel: str) -> os.stat_result:
        return os.lstat(os.path.join(self._root, rel))

    def sorted_paths(self) -> tuple[list[str], list[tuple[str, str]]]:
        with self._lock:
            if not self._still_valid():
                self._walk()
            return self._paths, self._keys

    def _still_valid(self) -> bool:
        if not self._walked_ns:
            return False
        racy = self._walked_ns - RACY_NS
        for rel_dir, stamp in self._folders.items():
            try:
                st = os.lstat(self._ws.root / rel_dir if rel_dir else self._ws.root)
            except OSError:
                return False
            if (st.st_mtime_ns, st.st_ctime_ns) != stamp or max(stamp) >= racy:
                return False
        return True

    def _walk(self) -> None:
        walked_ns = time.time_ns()
        found: list[str] = []
        folders: dict[str, tuple[int, int]] = {}
        if self._ws.root.is_dir():
            pending = [""]
            while pending:
                rel_dir = pending.pop()
                folder = self._ws.root / rel_dir if rel_dir else self._ws.root
                try:
                    st = os.lstat(folder)
                    folders[rel_dir] = (st.st_mtime_ns, st.st_ctime_ns)
                    with os.scandir(folder) as entries:
                        for entry in entries:
                            name = entry.name
                            rel = f"{rel_dir}/{name}" if rel_dir else name
                            if entry.is_dir(follow_symlinks=False):
                                if name.lower() != ".git" and not self._ws.guard.refuses(rel):
                                    pending.append(rel)
                            elif name.lower().endswith(_IMAGE_SUFFIXES) and entry.is_file(follow_symlinks=False):
                                found.append(rel)
                except OSError as exc:
                    # Never a silently incomplete page (contract §11.3).
                    self._walked_ns = 0
                    raise PermissionDenied(f"Could not list folder {rel_dir or '.'!r}: {exc.strerror}.") from None
        found.sort()  # ordinal, then a stable case-insensitive sort: the order of _sort_key, in C
        found.sort(key=str.lower)
        self._folders, self._paths, self._walked_ns = folders, found, walked_ns
        self._keys = [_sort_key(rel) for rel in found]
        self._formats = {}


def list_images(ws: Workspace, cursor: str | None = None, page_size: int = 50) -> ImagePage:
    """kb_list_images: one page of images after ``cursor``, sorted case-insensitively by path.

    The next page starts strictly after the cursor's path in this order, so a cursor whose
    image was deleted (or a new image before it) never skips or repeats anything else.
    """
    if not 1 <= page_size <= 200:
        raise InvalidArgument("pageSize must be between 1 and 200.")
    after = decode_cursor(ws, cursor) if cursor is not None else None
    catalog = ws.service(ImageCatalog)
    paths, keys = catalog.sorted_paths()
    start = bisect_right(keys, _sort_key(after)) if after is not None else 0
    images: list[ImageEntry] = []
    more = False
    for rel in paths[start:]:
        fmt = catalog.format_of(rel)
        if fmt is None:  # unportable names, index files: not part of the knowledge base
            continue
        if len(images) == page_size:
            more = True
            break
        try:
            st = catalog.lstat(rel)
        except FileNotFoundError:
            continue  # deleted since the walk
        except OSError as exc:
            raise PermissionDenied(f"Could not inspect {rel!r}: {exc.strerror}.") from None
        if not stat.S_ISREG(st.st_mode):
            continue
        images.append(ImageEntry(path=rel, format=fmt, size=st.st_size, mtime=st.st_mtime))
    return ImagePage(images, encode_cursor(images[-1].path) if more and images else None)


# ---------------------------------------------------------------------------- load


@dataclass(frozen=True)
class LoadedImage:
    path: str
    format: ImageFormat
    """Of the original file, from its bytes."""
    size: int
    sha256: str
    shown: bytes
    """What the client sees: the stored bytes, or a PNG of a GIF's first frame."""
    shown_mime: str


def _claimed(rel: str) -> ImageFormat:
    fmt = format_for_path(rel)
    if fmt is None:
        raise InvalidPath(f"Path not permitted: {rel!r}: an image must end in .png, .jpg, .jpeg, .webp or .gif.")
    return fmt


def _check_signature(rel: str, head: bytes, claimed: ImageFormat, field: str | None = None) -> ImageFormat:
    """The format of ``head``, which must be the one ``rel``'s extension names; a path the agent
    chose (``field``) is told the extension to give it (decision 1121)."""
    actual = detect(head)
    if actual is not claimed:
        what = actual.mime if actual else "not a PNG, JPEG, WebP or GIF image"
        fix = f"; give {field} the extension {actual.canonical}" if field and actual else ""
        raise UnsupportedFormat(f"{rel!r} is named as {claimed.mime} but its bytes are {what}{fix}.")
    return actual


def load_image(ws: Workspace, path: str) -> LoadedImage:
    """kb_load_image: the bytes as stored (PNG/JPEG/WebP) or a GIF's first frame as PNG."""
    rel, target = ws.guard.resolve(path)
    claimed = _claimed(rel)
    data = read_capped(rel, target, "Image")
    fmt = _check_signature(rel, data[:12], claimed)
    if fmt is not ImageFormat.GIF:
        # A client that cannot decode an image in a tool result fails every later turn (decision 1125).
        check_readable(data, fmt, repr(rel), "kb_download_file returns its bytes as they are.", MAX_SHOWN_SIDE)
        return LoadedImage(rel, fmt, len(data), hashlib.sha256(data).hexdigest(), data, fmt.mime)
    # hashlib releases the GIL on large inputs: hash the original while pillow decodes the frame.
    digest = hashlib.sha256()
    hasher = threading.Thread(target=digest.update, args=(data,), name="gif-sha256")
    hasher.start()
    try:
        preview = gif_preview_png(data)
    finally:
        hasher.join()
    return LoadedImage(rel, fmt, len(data), digest.hexdigest(), preview, ImageFormat.PNG.mime)


# ---------------------------------------------------------------------------- delete


def delete_image(ws: Workspace, path: str) -> str:
    """kb_delete_image: remove one image file; folders, Markdown and the index are left alone."""
    ws.require_writes()
    rel, target = ws.guard.resolve(path)
    _claimed(rel)
    stat_regular(rel, target, "Image")
    with write_lock(ws), Pins(ws.root) as pins:
        try:
            target = pins.pin(target, rel)  # through its folder as checked (decision 674)
            os.unlink(target)
        except FileNotFoundError:
            raise NotFound(f"Image {rel!r} was not found. {LIST_IMAGES}.") from None
        except OSError as exc:
            raise os_error(exc, rel, "delete") from None
        fsync_dir(target.parent)
    return rel


# ---------------------------------------------------------------------------- move


@dataclass(frozen=True)
class MovedImage:
    previous_path: str
    path: str
    sha256: str


def _hash_and_head(rel: str, path: Path) -> tuple[str, bytes]:
    digest = hashlib.sha256()
    head = b""
    try:
        with open(path, "rb", opener=lambda p, flags: os.open(p, flags | getattr(os, "O_NOFOLLOW", 0))) as f:
            while block := f.read(1 << 20):
                head = head or block[:12]
                digest.update(block)
    except FileNotFoundError:
        raise Conflict(f"Image {rel!r} disappeared during the move; {LIST_IMAGES}.") from None
    except OSError as exc:
        raise os_error(exc, rel, "read") from None
    return digest.hexdigest(), head


@dataclass(frozen=True, slots=True)
class ImageMove:
    """A move every check before the rename has accepted (see :func:`check_move`)."""

    src_rel: str
    src: Path
    dst_rel: str
    dst: Path
    sha256: str


def check_move(ws: Workspace, source: str, target: str, expected_sha256: str | None = None) -> ImageMove:
    """Everything kb_move_image checks before it takes the write lock (paths, formats, hash)."""
    ws.require_writes()
    src_rel, src = ws.guard.resolve(source, field="sourcePath")
    dst_rel, dst = ws.guard.resolve(target, field="targetPath")
    src_fmt, dst_fmt = _claimed(src_rel), _claimed(dst_rel)
    if src_rel == dst_rel:
        dst_rel, dst = ws.guard.respelled(src_rel, target)  # or INVALID_ARGUMENT: the same file
    if expected_sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", expected_sha256):
        raise InvalidArgument("expectedSha256 must be 64 hexadecimal digits.")
    stat_regular(src_rel, src, "Image")
    if os.path.lexists(dst):
        raise AlreadyExists(f"{dst_rel!r} already exists; kb_move_image never overwrites. {_ANOTHER_TARGET}")
    sha, head = _hash_and_head(src_rel, src)
    if expected_sha256 is not None and sha != expected_sha256.lower():
        raise Conflict(
            f"Image {src_rel!r} changed since it was read (its SHA-256 differs from expectedSha256); {_FRESH_SHA}.",
            ConflictReason.SOURCE_CHANGED,
        )
    _check_signature(src_rel, head, src_fmt)
    _check_signature(dst_rel, head, dst_fmt, "targetPath")
    return ImageMove(src_rel, src, dst_rel, dst, sha)


def move_image(ws: Workspace, source: str, target: str, expected_sha256: str | None = None) -> MovedImage:
    """kb_move_image: a no-overwrite rename, optionally guarded by the file's SHA-256."""
    move = check_move(ws, source, target, expected_sha256)
    src_rel, src, dst_rel, dst, sha = move.src_rel, move.src, move.dst_rel, move.dst, move.sha256
    folders = CreatedFolders(ws)
    try:
        with write_lock(ws) as intent, Pins(ws.root) as pins:
            folders.ensure(dst_rel.rpartition("/")[0])
            # Re-resolve and re-hash under the lock: the file must be the one that was checked.
            ws.guard.resolve(src_rel, field="sourcePath")
            try:  # both named through their folders as checked from here on (decision 674)
                src = pins.pin(src, src_rel)
            except FileNotFoundError:
                raise NotFound(f"Image {src_rel!r} was not found. {LIST_IMAGES}.") from None
            try:
                dst = pins.pin(dst, dst_rel)
            except FileNotFoundError as exc:  # its folder, made just above, removed again at once
                raise os_error(exc, dst_rel, "move") from None
            stat_regular(src_rel, src, "Image")
            if _hash_and_head(src_rel, src)[0] != sha:
                raise Conflict(f"Image {src_rel!r} changed during the move; {_FRESH_SHA}.")
            intent.note(source=src, target=dst)  # a crash after the link is finished at the next start
            try:
                os.link(src, dst)  # fails instead of overwriting; then drop the old name
            except FileExistsError:
                raise AlreadyExists(
                    f"{dst_rel!r} already exists; kb_move_image never overwrites. {_ANOTHER_TARGET}"
                ) from None
            except OSError as exc:
                raise os_error(exc, src_rel, "move") from None
            try:
                os.unlink(src)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(dst)
                raise os_error(exc, src_rel, "move") from None
            intent.clear()
            fsync_dir(dst.parent)
            fsync_dir(src.parent)
    except BaseException:
        folders.undo()
        raise
    return MovedImage(previous_path=src_rel, path=dst_rel, sha256=sha)
