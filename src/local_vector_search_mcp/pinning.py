"""Folders held open while a write runs in them, so a link swapped in cannot redirect it.

The path guard (``paths.py``) refuses a path with a symbolic link on the way, but it looks
before the write, by name. A program that swaps a folder for a link to somewhere else in the
instant between the look and the rename (``renameat2(RENAME_EXCHANGE)`` does it atomically)
made kb_create, kb_patch, kb_move, kb_delete and the image tools write, move and delete files
outside the knowledge base (decision 674). ``O_NOFOLLOW`` only guards a path's last component.

:class:`Pins` opens a target's folder one component at a time from the root, each with
``O_NOFOLLOW`` relative to the folder before it (``openat``), and hands out the target named
through that open folder: ``/proc/self/fd/<fd>/<name>``. Linux resolves such a name by the
open folder itself, never by its path again, so every step of a write (the temporary file,
the rename, the link, the unlink, the folder's fsync) lands in the folder that was checked,
wherever it has been renamed to meanwhile. The writer's code keeps working with paths.

Where there is no ``/proc/self/fd`` (not Linux), targets are returned as given: the guard's
look before the write is then the protection, as before.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from pathlib import Path
from types import TracebackType

from .errors import AlreadyExists
from .paths import RefusedPath

__all__ = ["Pins", "unpinned"]

_PROC_FD = Path("/proc/self/fd")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CAN_PIN = (
    hasattr(os, "O_DIRECTORY")
    and hasattr(os, "O_NOFOLLOW")
    and os.open in os.supports_dir_fd
    and os.mkdir in os.supports_dir_fd
    and _PROC_FD.is_dir()
)

# The folder each pinned name stands for, so what is noted for crash recovery (``writer.Intent``)
# names the file by its place in the root, not by a descriptor the next process does not have.
_real: dict[str, Path] = {}
_real_guard = threading.Lock()


def unpinned(path: Path) -> Path:
    """``path`` with a pinned folder (``/proc/self/fd/<fd>``) written as the folder it was opened as."""
    with _real_guard:
        folder = _real.get(str(path.parent))
    return path if folder is None else folder / path.name


class Pins:
    """The folders of a write's targets, each opened once from ``root`` and held until the block ends.

    ``with Pins(root) as pins: target = pins.pin(target, rel)``. A component that is a link is
    refused (``INVALID_PATH``, as the guard refuses it), one that is a file where a folder
    should be is ``ALREADY_EXISTS`` with ``make``, and a missing folder is made with ``make``
    (kb_create) or raises ``FileNotFoundError``, which each caller already reads as the document
    or its folder being gone.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fds: dict[tuple[str, ...], int] = {}

    def __enter__(self) -> Pins:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        fds, self._fds = self._fds, {}
        with _real_guard:
            for fd in fds.values():
                _real.pop(str(_PROC_FD / str(fd)), None)
        for fd in fds.values():
            os.close(fd)

    def pin(self, target: Path, rel: str, *, make: bool = False) -> Path:
        """``target`` (``root`` joined with the parts of ``rel`` as found on disk) named through
        its folder, opened without following a link; ``target`` itself where pinning is unsupported."""
        if not _CAN_PIN:
            return target
        parts = target.relative_to(self.root).parts  # ValueError: only the root's files are written through pins
        if not parts:
            raise ValueError("the root itself is not a file")
        folder = parts[:-1]
        fd = self._fds.get(folder)
        if fd is None:
            fd = self._open(folder, rel, make)
        return _PROC_FD / str(fd) / parts[-1]

    def _open(self, folder: tuple[str, ...], rel: str, make: bool) -> int:
        try:
            fd = self._walk(folder, rel, make)
        except OSError as exc:
            # a move's rewrites hold one descriptor per folder they touch: past the soft limit
            # (often 1,024), raise it towards the hard one once instead of failing the move
            if exc.errno != errno.EMFILE or not _more_descriptors():
                raise
            fd = self._walk(folder, rel, make)
        self._fds[folder] = fd
        with _real_guard:
            _real[str(_PROC_FD / str(fd))] = self.root.joinpath(*folder)
        return fd

    def _walk(self, folder: tuple[str, ...], rel: str, make: bool) -> int:
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        for part in folder:
            fd = _step(fd, part, rel, make)  # closes the folder before it, also when it raises
        return fd


def _more_descriptors() -> bool:
    """Raise this process's soft limit of open files towards its hard limit; False if it cannot."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = hard if hard != resource.RLIM_INFINITY else 65536
        wanted = min(wanted, max(soft * 4, 4096))
        if wanted <= soft:
            return False
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ImportError, OSError, ValueError):
        return False
    return True


def _step(fd: int, part: str, rel: str, make: bool) -> int:
    """The folder ``part`` inside the open folder ``fd``, opened without following a link
    (``fd`` is closed, the new one returned)."""
    try:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not make:
                raise
            # one made by another program just now is opened by the same rules
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        # O_NOFOLLOW with O_DIRECTORY says ENOTDIR for a link as for a file: look which it is. A
        # folder there now was something else at the open: a link swapped in and out again.
        try:
            mode = os.lstat(part, dir_fd=fd).st_mode
            link = stat.S_ISLNK(mode) or stat.S_ISDIR(mode)
        except OSError:
            link = False
        if link or exc.errno == errno.ELOOP:
            raise RefusedPath(repr(rel), "symbolic links are not followed") from None
        if make:
            raise AlreadyExists(f"A file stands where a folder of {rel!r} should be.") from None
        raise FileNotFoundError(errno.ENOENT, "not a folder", part) from None
    finally:
        os.close(fd)
    return child
