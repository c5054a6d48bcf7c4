"""Bounded reads of files under the root, and what kb_download_file says about them.

A file is read only when it is a regular file reached without a symlink (the guard checks
every component; the last one is opened with ``O_NOFOLLOW`` so a link swapped in between
is refused too) and at most 25 MiB, checked before and while reading.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..errors import LIST_FILES, LIST_IMAGES, InvalidArgument, InvalidPath, NotFound, PermissionDenied, folder_given
from ..workspace import Workspace
from .formats import MAX_BYTES

__all__ = ["FileBytes", "mime_for_path", "read_capped", "read_file", "resource_uri", "stat_regular"]

# A fixed table, not the OS registry (`mimetypes` reads /etc/mime.types): the same file gets
# the same type on every machine (spec/decisions.md 39).
_MIME = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".js": "text/javascript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".xml": "application/xml",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".tar": "application/x-tar",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".ico": "image/vnd.microsoft.icon",
    ".bmp": "image/bmp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".odt": "application/vnd.oasis.opendocument.text",
}
OCTET_STREAM = "application/octet-stream"


def mime_for_path(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return _MIME.get(name[dot:].lower(), OCTET_STREAM) if dot > 0 else OCTET_STREAM


def resource_uri(rel: str) -> str:
    """``kb:///`` + the percent-encoded root-relative path, ``/`` kept (never a ``file:`` URI)."""
    return "kb:///" + quote(rel, safe="/")


@dataclass(frozen=True)
class FileBytes:
    path: str
    mime_type: str
    data: bytes
    sha256: str


_LISTS = {"File": LIST_FILES, "Image": LIST_IMAGES}


def stat_regular(rel: str, path: Path, what: str = "File") -> os.stat_result:
    """The ``lstat`` of an existing regular file, or the contract's refusal."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise NotFound(f"{what} {rel!r} was not found. {_LISTS[what]}.") from None
    except NotADirectoryError:
        raise NotFound(f"{what} {rel!r} was not found. {_LISTS[what]}.") from None
    except PermissionError:
        raise PermissionDenied(f"The operating system refused to read {rel!r}.") from None
    if stat.S_ISDIR(st.st_mode):
        raise InvalidArgument(folder_given(rel, "a file"))
    if stat.S_ISLNK(st.st_mode):
        raise InvalidPath(f"Path not permitted: {rel!r}: symbolic links are not followed.")
    if not stat.S_ISREG(st.st_mode):
        raise InvalidArgument(f"{rel!r} is not a regular file.")
    return st


def _too_large(rel: str) -> InvalidArgument:
    return InvalidArgument(f"{rel!r} is larger than 25 MiB ({MAX_BYTES} bytes), the most a tool returns.")


def read_capped(rel: str, path: Path, what: str = "File") -> bytes:
    """All bytes of a regular file of at most :data:`MAX_BYTES`, or the contract's refusal."""
    st = stat_regular(rel, path, what)
    if st.st_size > MAX_BYTES:
        raise _too_large(rel)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise NotFound(f"{what} {rel!r} was not found. {_LISTS[what]}.") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidPath(f"Path not permitted: {rel!r}: symbolic links are not followed.") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise PermissionDenied(f"The operating system refused to read {rel!r}.") from None
        raise
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped for a FIFO or device meanwhile
            raise InvalidArgument(f"{rel!r} is not a regular file.")
        data = f.read(MAX_BYTES + 1)  # the file may have grown since the stat
    if len(data) > MAX_BYTES:
        raise _too_large(rel)
    return data


def read_file(ws: Workspace, path: str) -> FileBytes:
    """kb_download_file: any regular file the guard allows, up to 25 MiB."""
    rel, target = ws.guard.resolve(path)
    data = read_capped(rel, target)
    return FileBytes(path=rel, mime_type=mime_for_path(rel), data=data, sha256=hashlib.sha256(data).hexdigest())
