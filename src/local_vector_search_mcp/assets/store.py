"""Putting a staged file in place without ever overwriting, and undoing folders on failure.

A new image is first written (or downloaded) into a hidden ``.upload.<12 hex>.tmp`` file in
its destination folder, so the final step is a same-folder ``link()``: it either creates the
name or fails with EEXIST; nothing is ever replaced, and a reader never sees half a file.
Folders created for a save or a move are removed again (when still empty) if it fails.

The staging name has the writer's temporary-file form, and :func:`publish` notes it as the
step in flight, so a process killed between the link and the unlink leaves no litter after
the next start (``writer.recover``). A kill during the download itself (outside the lock, which
must not be held while waiting on the network) is covered by a ``writer.StagingNote``: one small
file per save in flight, ``<state>/staging/<12 hex>.json``, naming the staging file and the
folders the save created, flock-ed by its process for as long as the save runs. At start,
``writer.recover_staging`` removes what each note whose lock is free (its process is gone) names:
the staging file (only a ``.upload.<12 hex>.tmp`` name inside the root) and the created folders
that are still empty. A note still locked belongs to a live server and is left alone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from ..errors import AlreadyExists, KbError, PermissionDenied
from ..pinning import Pins
from ..workspace import Workspace
from ..writer import fsync_dir, write_lock

__all__ = ["CreatedFolders", "os_error", "publish", "staging_path"]


def os_error(exc: OSError, rel: str, verb: str = "change") -> KbError:
    """An operating-system failure as a wire error, never with an absolute path.

    Every one is PERMISSION_DENIED, as in the writer: the file system would not take it and
    nothing changed (the catalogue has no I/O code; INTERNAL_ERROR would suggest a bug).
    """
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PermissionDenied(f"The operating system refused to {verb} {rel!r}.")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return PermissionDenied(f"No space left to write {rel!r}; nothing was changed.")
    if exc.errno == errno.EXDEV:
        return PermissionDenied(f"{rel!r} cannot be renamed across file systems; nothing was changed.")
    reason = exc.strerror or type(exc).__name__
    return PermissionDenied(f"The file system failed to {verb} {rel!r} ({reason}); nothing was changed.")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class CreatedFolders:
    """Create the missing folders of a root-relative folder path, remembering which were new."""

    def __init__(self, ws: Workspace) -> None:
        self._ws = ws
        self._created: list[Path] = []

    def ensure(self, folder_rel: str) -> Path:
        """The absolute folder, created as needed; every existing component was checked by the guard."""
        if not folder_rel:
            return self._ws.root
        self._ws.guard.resolve(folder_rel)  # an existing link on the way is INVALID_PATH, not a folder
        current = self._ws.root
        walked = ""
        for part in folder_rel.split("/"):
            walked = f"{walked}/{part}" if walked else part
            current = current / part
            try:
                os.mkdir(current)
                self._created.append(current)
            except FileExistsError:
                if not current.is_dir() or current.is_symlink():
                    raise AlreadyExists(f"A file stands where the folder {walked!r} should be.") from None
            except OSError as exc:
                raise os_error(exc, walked, "create the folder") from None
        # A link swapped in after the guard looked would lead outside the root.
        self._ws.guard.resolve(folder_rel)
        return current

    @property
    def created(self) -> list[Path]:
        return list(self._created)

    def undo(self) -> None:
        """Remove the folders this object created, deepest first, if they are still empty."""
        for folder in reversed(self._created):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        self._created.clear()


def staging_path(folder: Path) -> Path:
    return folder / f".upload.{secrets.token_hex(6)}.tmp"


def publish(ws: Workspace, staged: Path, folder_rel: str, names: Iterable[str], *, what: str) -> str:
    """Give ``staged`` the first free name of ``names`` in ``folder_rel``; return its root-relative path.

    Raises ALREADY_EXISTS when every name is taken. ``staged`` keeps existing (the caller
    removes it in every case).
    """
    os.chmod(staged, 0o666 & ~_umask())
    with write_lock(ws) as intent, Pins(ws.root) as pins:
        intent.note(tmp=staged)
        for name in names:
            rel = f"{folder_rel}/{name}" if folder_rel else name
            rel, target = ws.guard.resolve(rel, field="targetPath")
            try:
                # through the folder as checked (decision 674); the staged file sits in it too
                target = pins.pin(target, rel)
                os.link(target.parent / staged.name, target)
            except FileExistsError:
                continue
            except OSError as exc:
                raise os_error(exc, rel, "write") from None
            with contextlib.suppress(OSError):
                os.unlink(target.parent / staged.name)
            intent.clear()
            fsync_dir(target.parent)
            return rel
    raise AlreadyExists(f"{what} already exists; the image was not saved. Choose another targetPath or fileName.")
