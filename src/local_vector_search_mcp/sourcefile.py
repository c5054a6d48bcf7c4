"""Reading a document's bytes from disk without ever hanging on what is not a file.

A path ending in ``.md`` may name a FIFO (opening it for reading waits for a
writer forever), a device, a socket or a folder. :func:`read_source` opens
with ``O_NONBLOCK`` so the open itself never waits, checks with ``fstat`` on
the open descriptor (no race with a rename in between) that it is a regular
file, and only then reads. Every failure is a typed error naming the file
by its root-relative path, so a caller can report it or skip the file.

Documents are capped at :data:`MAX_DOCUMENT_BYTES`: parsing costs about 60
bytes of memory per byte of Markdown (a 50 MB file took 3 GB and minutes), and
a Markdown file that large is a data dump, not a note (spec/decisions.md).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import (
    InvalidArgument,
    KbError,
    PermissionDenied,
    UnsupportedFormat,
    folder_given,
    missing_document,
)

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "RACY_NS",
    "check_size",
    "os_reason",
    "read_source",
    "require_regular_file",
    "unlisted_folder",
]

# A file or folder changed less than this before we looked at it may change again within the same
# timestamp tick of a coarse file-system clock (~4 ms on Linux before 6.13, 1 s on HFS+, 2 s on
# FAT): its size and mtime do not prove it unchanged later (git's "racy clean" rule).
RACY_NS = 2_000_000_000

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024

# O_NOFOLLOW: the path guard refuses links for tools; the indexer's walk must not follow one out of the root.
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_BENEATH = hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd


def read_source(path: Path, rel: str) -> bytes:
    """The bytes of the regular file ``path`` (shown to the agent as ``rel``), or a typed error.

    ``path`` is the root joined with ``rel``'s parts: the folders ``rel`` names are opened one by
    one without following a link, so a folder another program swaps for a link while we read
    cannot show a file from outside the root (decision 675; writes: 674)."""
    try:
        fd = _open_beneath(path, rel.count("/"))
    except OSError as exc:
        raise _error(exc, rel) from None
    try:
        info = os.fstat(fd)
        _regular(info, rel)
        check_size(info.st_size, rel)
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while chunk := os.read(fd, max(info.st_size, 1 << 16)):
            chunks.append(chunk)
            size += len(chunk)
            check_size(size, rel)  # it may grow while we read
        return b"".join(chunks)
    except OSError as exc:
        raise _error(exc, rel) from None
    finally:
        os.close(fd)


def _open_beneath(path: Path, depth: int) -> int:
    """``path`` opened for reading, its last ``depth`` folders without following a link (the root
    above them may be a link: the user chose it)."""
    if not depth or not _BENEATH or len(path.parts) <= depth + 1:
        return os.open(path, _FLAGS)
    fd = os.open(path.parents[depth], os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for part in path.parts[-depth - 1 : -1]:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)  # a link here: ENOTDIR, read as "not found"
            os.close(fd)
            fd = child
        return os.open(path.name, _FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def require_regular_file(path: Path, rel: str) -> None:
    """That ``path`` (whose components the path guard has checked: no link) is a regular file, with
    the errors :func:`read_source` gives: NOT_FOUND, a folder, or not a regular file. The editing
    tools check this before they read, so a FIFO is named as kb_read names it, not "not found"
    (decision 702)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _error(exc, rel) from None
    _regular(info, rel)


def _regular(info: os.stat_result, rel: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise InvalidArgument(folder_given(rel, "a Markdown document"))
    if not stat.S_ISREG(info.st_mode):
        raise UnsupportedFormat(f"{rel!r} is not a regular file (a pipe, socket or device); it cannot be read.")


def check_size(size: int, rel: str) -> None:
    if size > MAX_DOCUMENT_BYTES:
        raise UnsupportedFormat(
            f"{rel!r} is {size / 1048576:.1f} MiB; documents over {MAX_DOCUMENT_BYTES // 1048576} MiB are not "
            "read, indexed or edited. Split it into smaller documents."
        )


def os_reason(exc: OSError) -> str:
    """The operating system's words for a failure (``Permission denied``), else the error's type."""
    return exc.strerror or type(exc).__name__


def unlisted_folder(exc: OSError) -> str:
    """Why a walk skipped a folder, the same words in every tool that reports one."""
    return f"the folder could not be listed ({os_reason(exc)})"


def _error(exc: OSError, rel: str) -> KbError:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return missing_document(rel)
    if exc.errno == errno.ELOOP:
        return UnsupportedFormat(f"{rel!r} is a symbolic link; links are not followed.")
    if exc.errno == errno.EISDIR:
        return InvalidArgument(folder_given(rel, "a Markdown document"))
    if exc.errno in (errno.EACCES, errno.EPERM):
        return PermissionDenied(f"The operating system refused to read {rel!r}.")
    return PermissionDenied(f"The file system failed to read {rel!r} ({os_reason(exc)}).")
