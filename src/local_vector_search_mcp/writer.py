"""The one atomic writer every file mutation goes through.

A write goes to a temporary file in the target's folder, is flushed and
fsynced, and is renamed over the target only if the target still holds the
revision the edit was planned on (compare-and-swap on its SHA-256); then the
folder is fsynced. Where the file system can, the "rename" is an atomic swap
of the two names, so what it displaced is compared once more and put back if
another program saved it in the last instant (:func:`_replace`). The check and the rename happen under an exclusive
``flock`` shared by every server process of the project (the lock file sits
in the project's state folder, ``.local-vector-search-mcp/``), so two agents in two processes cannot both win a race on
one file. :func:`mutate` re-plans an edit up to three times when the file
changed underneath it, then gives up with ``CONFLICT``.

Refusals never touch the target: a refused or failed edit leaves it
byte-identical and removes its temporary file.

A process killed in the middle of a write leaves the target wholly old or
wholly new (the rename is the only step that changes it), but it can leave a
temporary file behind, or, in a move, both names linked to the file. Each step
that could leave such litter is first noted in the lock file (an intent, one
JSON line, cleared when the write ends). Whoever takes the lock next and finds
a note finishes or undoes that step before anything else: :func:`recover` at
start-up, and every write of a running server (:func:`write_lock`, decision 989).
Nothing else is ever deleted, so recovery cannot touch a user's file.

Every step names its files through their folders opened once from the root
without following a link (``pinning.Pins``): a folder another program swaps for
a link while the write runs cannot redirect it out of the knowledge base.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from . import progress
from .errors import (
    LIST_DOCUMENTS,
    LIST_FILES,
    AlreadyExists,
    Conflict,
    ConflictReason,
    InvalidArgument,
    KbError,
    NotFound,
    PermissionDenied,
    missing_document,
)
from .pinning import Pins, unpinned
from .sourcefile import MAX_DOCUMENT_BYTES, check_size, os_reason, require_regular_file
from .workspace import Workspace

__all__ = [
    "SourceChanged",
    "StagingNote",
    "commit",
    "create_new",
    "delete_file",
    "fsync_dir",
    "is_read_only",
    "match_hash",
    "move_file",
    "move_with_rewrites",
    "mutate",
    "read_only_refusal",
    "recover",
    "recover_staging",
    "replace_with_staged",
    "sha256_hex",
    "temp_path",
    "write_lock",
]

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
_thread_lock = threading.RLock()
# `.<name>.<12 hex>.tmp`: the only names recovery ever deletes.
_TEMP_NAME = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$", re.DOTALL)
_NOTE_NAME = re.compile(r"^[0-9a-f]{12}\.json$")


def is_temp_name(name: str) -> bool:
    """Whether a file name has the form of the server's own temporary and staging files
    (never listed: they hold a write or a download in flight, or its litter after a crash)."""
    return _TEMP_NAME.match(name) is not None


class SourceChanged(Exception):
    """The file no longer holds the revision an edit was planned on (internal; retried)."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Intent:
    """The step in flight, noted in the (locked) lock file so a crash can be cleaned up."""

    def __init__(self, fd: int, root: Path) -> None:
        self._fd = fd
        self._root = root

    def note(self, **paths: Path) -> None:
        self.record({key: self.place(path) for key, path in paths.items()})

    def place(self, path: Path) -> str:
        # a pinned name (``/proc/self/fd/...``) is noted as the place in the root it stands for
        return os.path.relpath(unpinned(path), self._root)

    def record(self, record: dict[str, object]) -> None:
        # Written over the note before, then cut to its length: a kill between the two leaves this
        # line first (recover reads the first line), never an empty note while a step is in flight.
        line = json.dumps(record).encode() + b"\n"
        if os.pwrite(self._fd, line, 0) != len(line):  # a full disk: a torn note would read as no note
            raise OSError(errno.ENOSPC, "the write's note could not be written whole")
        os.ftruncate(self._fd, len(line))

    def clear(self) -> None:
        os.ftruncate(self._fd, 0)


def _lock_path(ws: Workspace) -> Path:
    # the project's state folder, wherever the index lives (spec/decisions.md 127)
    return ws.state_dir / "write.lock"


def _hold_project_folder(folder: Path) -> int | None:
    """An flock on the project folder, which deleting the state folder does not take away.

    The lock file alone split when it was deleted while held (`rm -rf .local-vector-search-mcp`,
    a sync tool): the next process created a new file, locked it and wrote alongside the holder
    (decision 525). The project folder stays while anyone edits in it. A file system that cannot
    lock a folder (NFS emulates flock with byte-range locks, which need a file open for writing)
    leaves the lock file's own guard.
    """
    fd: int | None = None
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as exc:
        if fd is not None:
            os.close(fd)
        log.debug("project folder lock unavailable: %s", exc.strerror or exc)
        return None
    return fd


def _holds_the_file_at(fd: int, path: Path) -> bool:
    try:
        held, named = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def _open_lock_file(lock_path: Path) -> int:
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:  # a read-only state folder: a typed refusal, nothing written (decision 498)
        raise PermissionDenied(
            f"The project's write lock ({lock_path.parent.name}/{lock_path.name}) cannot be opened "
            f"({os_reason(exc)}): edits need a writable {lock_path.parent.name} folder in the project root. "
            "Nothing was changed."
        ) from None


@contextlib.contextmanager
def write_lock(ws: Workspace) -> Iterator[Intent]:
    """Serialise mutations across threads and across server processes of this project; first
    finish a write another process left interrupted (:func:`_take_over`)."""
    with _locked(ws) as fd:
        done = _take_over(fd, ws.root)
        if done is None:  # the note stays for the next writer or start: this write would write over it
            raise PermissionDenied(
                "A write another server process left interrupted (killed mid-write) could not be finished "
                "(see the server's log: a full disk, an I/O error); nothing was changed. Free space or fix "
                "the file system, then retry: the next write or start finishes it."
            )
        if done:
            _after_take_over(ws, done)
        # A call its client cancelled before its first write (while it planned, or while
        # another write held the lock) writes nothing: MCP sends no answer to a cancelled
        # call, so a change made after it would be one the client never hears of (decision 706).
        progress.check()
        yield Intent(fd, ws.root)


@contextlib.contextmanager
def _locked(ws: Workspace) -> Iterator[int]:
    """The lock file, open and flocked (with the project folder's lock, decision 525)."""
    lock_path = _lock_path(ws)
    with _thread_lock:
        folder_fd = _hold_project_folder(lock_path.parent.parent)
        try:
            while True:
                fd = _open_lock_file(lock_path)
                fcntl.flock(fd, fcntl.LOCK_EX)
                # The file locked must still be the one at the path (flock-based tools' check): one
                # deleted or replaced between the open and the lock is another process's no longer,
                # and the intent noted in it must land where recover() reads.
                if _holds_the_file_at(fd, lock_path):
                    break
                os.close(fd)
            try:
                yield fd
            finally:
                os.close(fd)  # closing releases the flock
        finally:
            if folder_fd is not None:
                os.close(folder_fd)


def _take_over(fd: int, root: Path) -> list[str] | None:
    """Finish or undo the step noted in the lock file, which its writer left there: killed
    mid-write (a note outlives only a process that never reached its ``clear``), or a move whose
    roll back found no room (:func:`_roll_back`). Whoever takes the lock next does it, a running
    server as a starting one (decision 989): otherwise that server's own first note wrote over it
    and the killed move stayed half done for good. Returns what was done, or ``None`` when it
    could not be done (the note is left as it was); never raises."""
    try:
        raw = os.pread(fd, os.fstat(fd).st_size, 0).split(b"\n", 1)[0]  # a longer note's tail may follow
        if not raw.strip():
            return []
        try:
            record = json.loads(raw)
        except ValueError:
            record = {}  # a note torn by the crash itself: its step had not started
        done = _undo(root, record) if isinstance(record, dict) else []
        os.ftruncate(fd, 0)
    except OSError as exc:
        log.warning("could not finish an interrupted write: %s", exc.strerror or exc)
        return None
    return done


def _after_take_over(ws: Workspace, done: list[str]) -> None:
    """A running server finished another process's write: say so, and have the index compare
    the files it rewrote (the watcher may be off)."""
    log.warning("finished a write another process left interrupted: %s", "; ".join(done))
    if ws.indexing_started:
        ws.indexing.start_catch_up()


def recover(ws: Workspace) -> list[str]:
    """Clean up after a process killed mid-write; return what was done (start-up).

    Only the step noted in the lock file is looked at: a temporary file is
    removed, a move that had linked its target but not yet dropped its source
    is finished. Never raises: a start must not fail because of litter.
    """
    if not _lock_path(ws).exists():
        return []
    try:
        with _locked(ws) as fd:
            return _take_over(fd, ws.root) or []
    except OSError as exc:
        log.warning("could not check for interrupted writes: %s", exc.strerror or exc)
    except PermissionDenied as exc:  # the lock cannot be opened: edits will say so, a start goes on
        log.warning("could not check for interrupted writes: %s", exc.message)
    return []


def _inside(root: Path, rel: object) -> Path | None:
    if not isinstance(rel, str) or not rel or os.path.isabs(rel) or ".." in Path(rel).parts:
        return None
    return root / rel


def _same_file(a: Path, b: Path) -> bool:
    return os.path.lexists(a) and os.path.lexists(b) and os.path.samestat(os.lstat(a), os.lstat(b))


def _undo(root: Path, record: dict[str, object]) -> list[str]:
    if isinstance(record.get("commit"), list):
        return _finish_move(root, record)
    done = []
    staging = record.get("staging")
    for rel in staging if isinstance(staging, list) else ():  # a move killed while staging: nothing changed yet
        if _drop_temp(_inside(root, rel)):
            done.append(f"removed the temporary file {rel}")
    tmp = _inside(root, record.get("tmp"))
    if _drop_temp(tmp):
        done.append(f"removed the temporary file {record['tmp']}")
    # never through a folder swapped for a link since (as _finish_move, decision 687)
    src, dst = _plain(root, _inside(root, record.get("source"))), _plain(root, _inside(root, record.get("target")))
    taken = _plain(root, _inside(root, record.get("taken")))
    if src is not None and dst is not None and taken is not None and _is_temp(taken):
        # killed while dropping the old name (decision 979): the moved file's is removed; another
        # program's save renamed away with it goes back under its name
        if _is_regular(taken) and _same_file(taken, dst):
            os.unlink(taken)
            done.append(f"finished moving {record['source']} to {record['target']}")
        elif _rename_new(taken, src):
            done.append(f"put back another program's save of {record['source']}")
        elif _is_regular(taken):  # a newer save holds the name: the newest stays
            os.unlink(taken)
    if src is not None and dst is not None and _same_file(src, dst):  # both names linked: finish the move
        os.unlink(src)
        done.append(f"finished moving {record['source']} to {record['target']}")
    if done:
        fsync_dir((tmp or dst or root).parent)
    return done


def _is_temp(path: Path) -> bool:
    """Whether ``path`` is there and has the form of the server's own temporary names."""
    return _TEMP_NAME.match(path.name) is not None and os.path.lexists(path)


def _drop_temp(tmp: Path | None) -> bool:
    """Remove ``tmp`` if it is there and has the form of the server's own temporary names (never a
    user's file); whether it was removed."""
    if tmp is None or not _is_temp(tmp):
        return False
    os.unlink(tmp)
    return True


def _sha_of(path: Path | None) -> str | None:
    if path is None or not os.path.lexists(path) or os.path.islink(path):
        return None
    try:
        return sha256_hex(path.read_bytes())
    except OSError:
        return None


def _plain(root: Path, path: Path | None) -> Path | None:
    """``path`` when no folder between ``root`` and it is a link (or not a folder): recovery names
    files by the places noted, and a folder swapped for a link since must not lead it elsewhere
    (to the source's own folder, where "the target" would be the source, or out of the root)."""
    if path is None:
        return None
    try:
        real = os.path.realpath(path.parent)
        expected = os.path.join(os.path.realpath(root), os.path.relpath(path.parent, root))
    except (OSError, ValueError):
        return None
    return path if os.path.normpath(real) == os.path.normpath(expected) else None


def _finish_move(root: Path, record: dict[str, object]) -> list[str]:
    """Finish a noted plan (decision 687): a move with rewrites rolled forward, or the undo of one
    that failed while running. Each file still holding its ``before`` bytes gets its staged ones;
    one holding anything else is another program's and keeps it. Then the move is made, the temporary
    files left over removed, and the folders made for a move that was undone removed if empty."""
    done: list[str] = []
    folders: set[Path] = set()
    commit = record["commit"]
    for entry in commit if isinstance(commit, list) else ():
        if not (isinstance(entry, list) and len(entry) == 4):
            continue
        path, tmp = _plain(root, _inside(root, entry[0])), _plain(root, _inside(root, entry[1]))
        before, after = entry[2], entry[3]
        if path is None or tmp is None or not _TEMP_NAME.match(tmp.name) or not os.path.lexists(tmp):
            continue
        held, staged_sha = _sha_of(path), _sha_of(tmp)
        if held == before and staged_sha == after:
            os.replace(tmp, path)
            done.append(f"rewrote {entry[0]}")
        elif staged_sha in (before, after):  # in place already: the swap left the bytes it displaced
            os.unlink(tmp)
        elif held == after:  # a save another program made just before the swap: it goes back (as 930)
            os.replace(tmp, path)
            done.append(f"put back another program's save of {entry[0]}")
        # else: neither ours nor in place; left for the user to see
        folders.add(path.parent)
    src, dst = _plain(root, _inside(root, record.get("source"))), _plain(root, _inside(root, record.get("target")))
    staged = _plain(root, _inside(root, record.get("staged")))
    taken = _plain(root, _inside(root, record.get("taken")))
    if src is not None and taken is not None and _is_temp(taken):
        # killed while dropping the old name (decision 979): the source's bytes are the move's and
        # go (the target holds them); another program's save goes back under its name
        ours = _is_regular(taken) and _sha_of(taken) == record.get("sourceSha256")
        if not ours and _rename_new(taken, src):
            done.append(f"put back another program's save of {record['source']}")
        elif ours and dst is not None and not os.path.lexists(dst):
            _rename_new(taken, src)  # the target is not linked yet: the source back, the move finishes below
        if _is_regular(taken):  # the source's bytes (the target holds them), or an older save
            os.unlink(taken)
    if src is not None and dst is not None and src != dst:
        if not os.path.lexists(dst) and _sha_of(src) == record.get("sourceSha256"):
            if staged is not None and _sha_of(staged) == record.get("targetSha256"):
                os.link(staged, dst)
            elif record.get("staged") is None:
                os.link(src, dst)
        # the old name goes when it still holds the source: a save another program made over it is kept
        if _same_file(src, dst) or (
            _sha_of(src) == record.get("sourceSha256") and _sha_of(dst) == record.get("targetSha256")
        ):
            os.unlink(src)
            done.append(f"finished moving {record['source']} to {record['target']}")
        folders |= {src.parent, dst.parent}
    leftovers = record.get("staging")
    for tmp in [staged, *(_plain(root, _inside(root, t)) for t in (leftovers if isinstance(leftovers, list) else ()))]:
        _drop_temp(tmp)
    made = record.get("folders")
    _remove_empty(
        [f for f in (_plain(root, _inside(root, rel)) for rel in (made if isinstance(made, list) else ())) if f]
    )
    for folder in sorted(folders):
        with contextlib.suppress(OSError):
            fsync_dir(folder)
    return done


def _notes_dir(ws: Workspace) -> Path:
    return ws.state_dir / "staging"


class StagingNote:
    """The record of one image save or PDF export in flight, for a crash during its download or
    layout (decisions 202, 660).

    Written before the staging file is created, naming it and the folders the save created;
    flock-ed until ``close()``, so :func:`recover_staging` can tell a dead process's save from a
    live one. The lock is not used: it must not be held while waiting on the network, nor for
    the minutes a large book takes to lay out. ``what`` names the step in recovery's report.
    """

    def __init__(self, ws: Workspace, staged: Path, folders: list[Path], what: str = "image save") -> None:
        self._path: Path | None = None
        self._fd: int | None = None
        record = {
            "tmp": os.path.relpath(staged, ws.root),
            "folders": [os.path.relpath(f, ws.root) for f in folders],
            "what": what,
        }
        try:
            notes = _notes_dir(ws)
            notes.mkdir(parents=True, exist_ok=True)
            path = notes / f"{secrets.token_hex(6)}.json"
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            self._path = path  # ours to remove only once created
            fcntl.flock(self._fd, fcntl.LOCK_EX)  # held until close(): a live save is never "recovered"
            os.write(self._fd, json.dumps(record).encode() + b"\n")
        except OSError as exc:  # the save itself still works; only its crash cleanup is lost
            log.warning("could not note a save in flight: %s", exc.strerror or exc)
            # an empty note, its fd and its lock were kept for the life of the server (decision 1030)
            self.close()

    def close(self) -> None:
        if self._path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._path)
            self._path = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def recover_staging(ws: Workspace) -> list[str]:
    """Remove what saves killed mid-transfer left behind (start-up); never raises."""
    done: list[str] = []
    try:
        names = sorted(os.listdir(_notes_dir(ws)))
    except OSError:
        return done
    for name in names:
        if not _NOTE_NAME.match(name):
            continue
        path = _notes_dir(ws) / name
        try:
            fd = os.open(path, os.O_RDWR | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live server's save in flight
            try:
                record = json.loads(os.read(fd, 1 << 16) or b"{}")
            except ValueError:
                record = {}  # torn by the crash before the note was written: nothing was staged yet
            done += _clean(ws.root, record if isinstance(record, dict) else {})
            with contextlib.suppress(OSError):
                os.unlink(path)
        except OSError as exc:
            log.warning("could not clean up an interrupted save: %s", exc.strerror or exc)
        finally:
            os.close(fd)
    return done


def _clean(root: Path, record: dict[str, object]) -> list[str]:
    done = []
    what = record.get("what")
    what = what if what in ("image save", "PDF export") else "image save"
    tmp = _inside(root, record.get("tmp"))
    # an image's `.upload.<hex>.tmp` (assets.store.staging_path) or an export's `.<name>.<hex>.tmp`
    # (temp_path): the server's own temporary names, never a user's file
    if _drop_temp(tmp):
        done.append(f"removed the staging file {record['tmp']} of an interrupted {what}")
    folders = record.get("folders")
    for rel in reversed(folders if isinstance(folders, list) else []):
        folder = _inside(root, rel)
        if folder is not None and folder.is_dir() and not folder.is_symlink():
            with contextlib.suppress(OSError):  # still holds something: not ours to remove
                os.rmdir(folder)
                done.append(f"removed the empty folder {rel} created by an interrupted {what}")
    return done


def fsync_dir(folder: Path) -> None:
    """Make a link, rename or unlink in ``folder`` durable (best effort: see below)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync folders; link and rename are still atomic
    finally:
        os.close(fd)


def _os_error(exc: OSError, rel: str) -> KbError:
    # Every OS failure of a write is the same to the agent: the file system would not take
    # it and nothing changed (spec/decisions.md). The catalogue has no I/O code, and
    # INTERNAL_ERROR would wrongly suggest a bug in the server.
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PermissionDenied(f"The operating system refused to change {rel!r}.")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return PermissionDenied(f"No space left to write {rel!r}; nothing was changed.")
    reason = exc.strerror or type(exc).__name__
    return PermissionDenied(f"The file system failed to write {rel!r} ({reason}); nothing was changed.")


def is_read_only(path: Path) -> bool:
    """Whether ``path`` is a file whose mode gives no one write permission (``chmod a-w``, a
    protected checkout): the user's "do not change this", which vim and VS Code ask about before
    writing (decision 1046). The mode bits are the signal, not ``os.access``: root may write
    anything, and replacing a file by a rename needs only its folder's permission."""
    try:
        st = os.stat(path)
    except OSError:  # gone or unreadable: the write that follows names what is wrong
        return False
    return stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) & 0o222 == 0


def read_only_refusal(rel: str, outcome: str = "nothing was changed", instead: str = "") -> PermissionDenied:
    """The PERMISSION_DENIED for rewriting the read-only ``rel``: what was (not) done, and how to allow it."""
    return PermissionDenied(
        f"{rel!r} is read-only (its mode gives no one write permission); {outcome}. "
        f"Make it writable (chmod u+w) and retry{instead}."
    )


_READ_ONLY_NAMED = 20
"""How many read-only documents a refused move names (the count says the rest)."""


def _read_only_rewrites(names: list[str]) -> PermissionDenied:
    """A move's ``updateLinks`` would rewrite read-only files: refused before anything moves (all or none)."""
    shown = ", ".join(repr(rel) for rel in names[:_READ_ONLY_NAMED])
    if len(names) > _READ_ONLY_NAMED:
        shown += f" and {len(names) - _READ_ONLY_NAMED} more"
    one = len(names) == 1
    files, them, their = ("a read-only document", "it", "its") if one else ("read-only documents", "them", "their")
    return PermissionDenied(
        f"updateLinks would rewrite links in {files} ({shown}; {their} mode gives no one write permission); "
        f"nothing was moved or rewritten. Make {them} writable (chmod u+w) and retry, or move without "
        "updateLinks (links are then left as they are)."
    )


def _gone_or_os_error(exc: OSError, rel: str) -> KbError:
    """A document another program moved or deleted while we changed it is NOT_FOUND (it is not
    there any more: re-list and retry), not a file system failure (decision 325)."""
    if isinstance(exc, FileNotFoundError):
        return NotFound(
            f"Document {rel!r} was not found (it was moved or deleted meanwhile); nothing was changed. "
            f"{LIST_DOCUMENTS}."
        )
    return _os_error(exc, rel)


MAX_NAME_BYTES = 255
"""A file name's limit in bytes on Linux file systems (ext4, XFS, Btrfs; NAME_MAX)."""
_TEMP_AFFIX_BYTES = len(".") + len(".0123456789ab.tmp")


def temp_path(target: Path) -> Path:
    """A fresh temporary name beside ``target`` (same folder: the final rename is atomic), of the
    form recovery removes and listings hide (``.<name>.<12 hex>.tmp``).

    ``<name>`` is the target's name cut (at a character boundary) so the whole fits
    :data:`MAX_NAME_BYTES`: a document named with 238 to 255 bytes is valid, and its temporary
    file must not be what makes it impossible to write (decision 700).
    """
    raw = os.fsencode(target.name)
    room = MAX_NAME_BYTES - _TEMP_AFFIX_BYTES
    name = target.name if len(raw) <= room else raw[:room].decode("utf-8", errors="ignore")
    return target.parent / f".{name}.{secrets.token_hex(6)}.tmp"


def _write_temp(intent: Intent, target: Path, data: bytes, mode: int | None) -> Path:
    tmp = temp_path(target)
    intent.note(tmp=tmp)
    _fill_temp(tmp, data, mode)
    return tmp


def _fill_temp(tmp: Path, data: bytes, mode: int | None) -> None:
    """Create ``tmp`` (never an existing file) holding ``data``, synced; removed again on failure."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is None else mode & 0o7777)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                # the umask took bits off the mode os.open was given: a shared folder's 0664 note
                # came back 0644 after every edit, and a 0464 one 0444, read-only (decision 1047)
                os.fchmod(f.fileno(), mode & 0o7777)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is None:
            os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _made_a_folder(rel: str) -> InvalidArgument:
    return InvalidArgument(f"{rel!r} is a folder now, not a file; nothing was changed.")


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def commit(ws: Workspace, rel: str, target: Path, data: bytes, expected_sha: str) -> str:
    """Replace ``target`` with ``data`` if it still hashes to ``expected_sha``; return the new hash."""
    with write_lock(ws) as intent, Pins(ws.root) as pins:
        try:
            target = pins.pin(target, rel)
            current = _read(target)
        except IsADirectoryError:  # made a folder meanwhile: the re-read says so (decision 930)
            raise SourceChanged(rel) from None
        except FileNotFoundError:  # its folder went meanwhile: the re-read says so
            raise SourceChanged(rel) from None
        if current is None:
            raise SourceChanged(rel)
        if sha256_hex(current) != expected_sha.lower():
            raise SourceChanged(rel)
        if is_read_only(target):  # checked under the lock, on the file about to be replaced
            raise read_only_refusal(rel)
        try:
            _replace(intent, target, data, os.stat(target).st_mode, expect=current)
        except SourceChanged:  # saved by another program while the new bytes were written
            raise SourceChanged(rel) from None
        except (FileNotFoundError, IsADirectoryError):  # moved, deleted or made a folder just now: re-read
            raise SourceChanged(rel) from None  # (decisions 325, 930)
        except OSError as exc:
            raise _os_error(exc, rel) from None
        fsync_dir(target.parent)
        intent.clear()
    return sha256_hex(data)


# One lock per file being edited by this process, held from the read to the commit (decision
# 282): edits of one file from several threads are planned one after another on the latest bytes,
# as the reference's process-wide mutation lock does, instead of racing to the compare-and-swap.
# Entries live only while someone holds or waits for them.
_file_locks: dict[str, tuple[threading.Lock, list[int]]] = {}
_file_locks_guard = threading.Lock()


@contextlib.contextmanager
def _file_lock(target: Path) -> Iterator[None]:
    key = os.path.abspath(target)
    with _file_locks_guard:
        lock, users = _file_locks.setdefault(key, (threading.Lock(), [0]))
        users[0] += 1
    try:
        with lock:
            yield
    finally:
        with _file_locks_guard:
            users[0] -= 1
            if not users[0]:
                del _file_locks[key]


# Edits of one file by several server processes of the project (two stdio servers, an HTTP
# server, a CLI `call`) also wait for each other (decision 445): each holds an flock on one of
# EDIT_LOCK_BUCKETS lock files in the state folder, picked by the file's real path, from the read
# to the commit. Two files sharing a bucket only wait for each other; a fixed set of lock files
# is never removed (removing a lock file another process waits on would split the lock).
EDIT_LOCK_BUCKETS = 256


def _edit_lock_path(ws: Workspace, target: Path) -> Path:
    try:
        key = os.path.join(os.path.realpath(target.parent), target.name)
    except OSError:  # a link loop swapped in on the way (EINVAL, ELOOP): the write itself refuses it
        key = os.path.abspath(target)
    bucket = hashlib.sha256(key.encode("utf-8", "surrogateescape")).digest()[0] % EDIT_LOCK_BUCKETS
    return ws.state_dir / "edit-locks" / f"{bucket:02x}.lock"


@contextlib.contextmanager
def _edit_lock(ws: Workspace, target: Path) -> Iterator[None]:
    """The file's lock in this process (threads), then across the project's processes."""
    with _file_lock(target):
        path = _edit_lock_path(ws, target)
        fd: int | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            # The write itself will say what is wrong with the state folder; without the lock an
            # edit racing another process only re-plans (three times at most) as before.
            log.debug("edit lock %s unavailable: %s", path, exc.strerror or exc)
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing releases the flock


def mutate(ws: Workspace, rel: str, target: Path, plan: Callable[[bytes], bytes]) -> tuple[bytes, str]:
    """Load, plan and commit an edit, re-planning when the file changed in between.

    ``plan`` receives the current bytes and returns the new bytes (or raises a
    KbError to refuse). Returns ``(new bytes, new sha256)``. Edits of the same file in
    this process and in the project's other server processes wait for each other; only a
    write by another program (an editor, a script) makes one re-plan.
    """
    with _edit_lock(ws, target):
        for _ in range(MAX_ATTEMPTS):
            try:
                raw = _read(target)
            except IsADirectoryError:  # made a folder since the handler looked: named as kb_read names it
                require_regular_file(target, rel)
                raise
            if raw is None:
                raise missing_document(rel)
            check_size(len(raw), rel)
            data = plan(raw)
            if len(data) > MAX_DOCUMENT_BYTES:
                # Decision 410: the edited file could be neither read nor edited again.
                raise InvalidArgument(
                    f"The edit would make {rel!r} {len(data) / 1048576:.1f} MiB; documents over "
                    f"{MAX_DOCUMENT_BYTES // 1048576} MiB are not read, indexed or edited, so nothing was "
                    "written. Put the new text into another document (kb_create)."
                )
            try:
                return data, commit(ws, rel, target, data, sha256_hex(raw))
            except SourceChanged:
                continue
    raise Conflict(
        f"Document {rel!r} kept changing while the edit was applied ({MAX_ATTEMPTS} attempts); re-read it "
        "with kb_read and retry.",
        ConflictReason.SOURCE_CHANGED,
    )


def _pin_new(pins: Pins, target: Path, rel: str) -> Path:
    """``target`` pinned, its missing folders made (a file in the way is ALREADY_EXISTS, a link on
    the way INVALID_PATH: one made after the guard looked would lead outside the root)."""
    try:
        return pins.pin(target, rel, make=True)
    except FileNotFoundError:
        raise  # a folder removed again at once: the caller decides (kb_create makes it again)
    except OSError as exc:
        raise _os_error(exc, rel) from None


def _pin_existing(pins: Pins, target: Path, rel: str) -> Path | None:
    """``target`` pinned; None when one of its folders is missing (so the target is too)."""
    try:
        return pins.pin(target, rel)
    except FileNotFoundError:
        return None


def _taken(pins: Pins, target: Path, rel: str) -> Path | None:
    """What stands at ``target`` (a file, a folder, a link), looked at through its pinned folder: its
    pinned path, or None when nothing does."""
    there = _pin_existing(pins, target, rel)
    return there if there is not None and os.path.lexists(there) else None


# What to do instead of creating over a document (decision 1120).
_CREATE_INSTEAD = "Choose another path, or change this one with kb_read and kb_patch."


def _occupied(there: Path, rel: str) -> str:
    """What kb_create says of the path ``rel`` something stands at (``there``, pinned): a folder is
    named so (an agent told that `notes.md` "already exists" reads it next and is told it is a
    folder, decision 1083)."""
    if os.path.isdir(there) and not os.path.islink(there):
        return f"{rel!r} is a folder, not a document; kb_create never overwrites: name a free path."
    return f"Document {rel!r} already exists; kb_create never overwrites. {_CREATE_INSTEAD}"


def _pinned_bytes(pins: Pins, target: Path, rel: str) -> tuple[Path, bytes] | None:
    """``target`` pinned and its bytes; None when it (or one of its folders) is not there."""
    pinned = _pin_existing(pins, target, rel)
    try:
        current = None if pinned is None else _read(pinned)
    except IsADirectoryError:  # made a folder since it was checked: named as kb_read names one (930)
        raise _made_a_folder(rel) from None
    return None if pinned is None or current is None else (pinned, current)


def create_new(ws: Workspace, rel: str, target: Path, data: bytes) -> str:
    """Create ``target`` with ``data``; never overwrites (create-new semantics)."""
    with write_lock(ws) as intent:
        with Pins(ws.root) as pins:
            there = _taken(pins, target, rel)
            if there is not None:
                raise AlreadyExists(_occupied(there, rel))
        # kb_create makes missing folders, so a folder another program removes between that
        # step and the write (a `git clean`, an editor tidying empty folders) is made again
        # (decision 345); one that keeps going is a CONFLICT, not a file system failure.
        made = _missing_folders(ws.root, target)  # removed again when nothing is created (decision 688)
        for _ in range(MAX_ATTEMPTS):
            with Pins(ws.root) as pins:  # afresh each time: a removed folder stays removed
                try:
                    pinned = _pin_new(pins, target, rel)
                    _link_new(intent, pinned, data, None)
                except FileExistsError:
                    raise AlreadyExists(
                        f"Document {rel!r} already exists; kb_create never overwrites. {_CREATE_INSTEAD}"
                    ) from None
                except FileNotFoundError:
                    continue
                except OSError as exc:  # a full disk, a read-only folder: "nothing was changed" holds for folders too
                    _remove_empty(made)
                    raise _os_error(exc, rel) from None
                except KbError:  # a folder that could not be made (a full disk) while the others were
                    _remove_empty(made)
                    raise
                fsync_dir(pinned.parent)
            intent.clear()
            return sha256_hex(data)
        intent.clear()
        raise Conflict(
            f"The folder of {rel!r} was removed by another program each time it was made "
            f"({MAX_ATTEMPTS} attempts); nothing was created. Retry once it stays.",
            ConflictReason.SOURCE_CHANGED,
        )


def replace_with_staged(ws: Workspace, rel: str, target: Path, staged: Path) -> None:
    """Rename ``staged`` (a finished, synced file beside ``target``, :func:`temp_path`) over
    ``target``, replacing whatever file is there: how a file written piece by piece (a PDF
    export, decision 660) takes its place, the last steps of every write (rename, folder fsync).

    The target keeps its permissions, as every write keeps them. On failure ``staged`` is left
    to the caller, which removes it; the target is untouched.
    """
    with write_lock(ws) as intent, Pins(ws.root) as pins:
        ws.guard.resolve(rel)  # a link swapped in on the way while the file was written
        try:
            target = pins.pin(target, rel)
            staged = target.parent / staged.name  # beside the target: through the same open folder
            if is_read_only(target):  # an earlier export the user protected (decision 1046)
                raise read_only_refusal(rel, "it was not replaced", ", or write to another file")
            # an existing file keeps its mode exactly, as a document does (decision 1047); a new one
            # gets 0666 less the umask
            mode = os.stat(target).st_mode & 0o7777 if os.path.isfile(target) else 0o666 & ~_umask()
            os.chmod(staged, mode)
            intent.note(tmp=staged)
            os.replace(staged, target)
        except OSError as exc:
            raise _os_error(exc, rel) from None
        fsync_dir(target.parent)
        intent.clear()


def _check_hash(rel: str, path: Path, expected_sha: str) -> bytes:
    try:
        current = _read(path)
    except IsADirectoryError:  # made a folder since the handler checked it (decision 930)
        raise _made_a_folder(rel) from None
    if current is None:
        raise missing_document(rel)
    match_hash(rel, current, expected_sha)
    return current


def match_hash(rel: str, current: bytes, expected_sha: str) -> None:
    """CONFLICT unless ``current`` hashes to ``expected_sha`` (hex in any case: contract 2.8)."""
    if sha256_hex(current) != expected_sha.lower():
        raise _stale_hash(rel, expected_sha)


_SHA256_HEX = re.compile(r"[0-9a-fA-F]{64}")


def _stale_hash(rel: str, expected_sha: str) -> Conflict:
    """The CONFLICT for an ``expectedSourceHash`` that is not the document's hash. Any non-blank
    value is accepted and compared, as the reference does, so ``"stale"`` is CONFLICT too (decision
    893); the message then says what a sourceHash looks like instead of "changed since read"."""
    if _SHA256_HEX.fullmatch(expected_sha):
        return Conflict(
            f"Document {rel!r} changed since it was read (sourceHash differs); re-read it with kb_read and retry.",
            ConflictReason.SOURCE_CHANGED,
        )
    return Conflict(
        f"expectedSourceHash is not the sourceHash of document {rel!r} (a SHA-256 as 64 hex digits); "
        "read it with kb_read and retry with the sourceHash it returns.",
        ConflictReason.SOURCE_CHANGED,
    )


def move_file(ws: Workspace, src_rel: str, src: Path, dst_rel: str, dst: Path, expected_sha: str) -> str:
    with write_lock(ws) as intent, Pins(ws.root) as pins:
        # source, then target, then hash: a taken target is ALREADY_EXISTS even with a stale hash, as in
        # the reference and kb_move_image (decisions 119, 891)
        found = _pinned_bytes(pins, src, src_rel)
        if found is None:
            raise missing_document(src_rel)
        src, current = found
        if _taken(pins, dst, dst_rel):
            raise AlreadyExists(
                f"Target {dst_rel!r} already exists; kb_move never overwrites. Choose another targetPath."
            )
        match_hash(src_rel, current, expected_sha)
        made = _missing_folders(ws.root, dst)  # removed again if the move fails (decision 688)
        try:
            dst = _pin_new(pins, dst, dst_rel)
        except FileNotFoundError as exc:
            _remove_empty(made)
            raise _os_error(exc, dst_rel) from None
        except KbError:  # one folder made, the next refused (a full disk)
            _remove_empty(made)
            raise
        taken = temp_path(src)
        try:
            intent.note(source=src, target=dst, taken=taken)
            os.link(src, dst)  # no-overwrite rename: link, then drop the old name
        except FileExistsError:
            raise AlreadyExists(
                f"Target {dst_rel!r} already exists; kb_move never overwrites. Choose another targetPath."
            ) from None
        except OSError as exc:
            _remove_empty(made)
            if os.path.isdir(src):  # made a folder since it was read: a link of a folder is EPERM
                raise _made_a_folder(src_rel) from None
            raise _gone_or_os_error(exc, src_rel) from None
        try:
            _drop_source(src, taken, dst, _linked_as_checked(dst, current))
        except SourceChanged:
            _remove_empty(made)
            raise _moved_meanwhile(src_rel) from None
        except KbError:  # a folder made at its name meanwhile
            _remove_empty(made)
            raise
        except OSError as exc:  # the target is gone again: a failed move leaves one name, not two
            _remove_empty(made)
            raise _gone_or_os_error(exc, src_rel) from None
        fsync_dir(dst.parent)
        fsync_dir(src.parent)
        intent.clear()
    return sha256_hex(current)


def move_with_rewrites(
    ws: Workspace,
    move: tuple[str, Path, str, Path, str],
    moved_data: bytes | None,
    rewrites: dict[str, tuple[Path, bytes, bytes]],
    *,
    guard_document: bool = True,
) -> str:
    """A move plus rewrites of other files, all or nothing (kb_move ``updateLinks``).

    ``move`` is ``(src_rel, src, dst_rel, dst, expected_sha)`` (``expected_sha`` empty:
    unguarded); ``moved_data`` replaces the moved file's bytes when its own links
    changed; ``rewrites`` maps a path to ``(file, bytes planned on, new bytes)``.
    Under the project write lock every file is checked before anything is written:
    a file that changed since it was planned is CONFLICT naming it, and nothing
    happens. Files are then replaced one by one (each atomically); if one changes in
    the short window before its rename (an editor outside the server) or the OS
    refuses, the files already rewritten get their previous bytes back and the move
    is not made, so no file is left half-done. Returns the moved file's SHA-256.
    """
    src_rel, src, dst_rel, dst, expected_sha = move
    with write_lock(ws) as intent, Pins(ws.root) as pins:
        found = _pinned_bytes(pins, src, src_rel)
        if found is None:
            raise NotFound(
                f"{'Document' if guard_document else 'File'} {src_rel!r} was not found. "
                f"{LIST_DOCUMENTS if guard_document else LIST_FILES}."
            )
        src, current = found
        if _taken(pins, dst, dst_rel):  # before the hash (decision 891)
            raise AlreadyExists(
                f"Target {dst_rel!r} already exists; a move never overwrites. Choose another targetPath."
            )
        if expected_sha and sha256_hex(current) != expected_sha.lower():
            raise Conflict(
                f"{src_rel!r} changed since it was read (hash differs); "
                + (
                    "re-read it with kb_read and retry with the sourceHash it returns."
                    if guard_document
                    else "kb_load_image gives its current sha256: retry with that."
                ),
                ConflictReason.SOURCE_CHANGED,
            )
        pinned_rewrites: dict[str, tuple[Path, bytes, bytes]] = {}
        for rel, (path, old, new) in sorted(rewrites.items()):
            at = _pin_existing(pins, path, rel)
            if at is None or _read(at) != old:
                raise Conflict(
                    f"{rel!r} changed while the move was prepared; nothing was written. Retry the move.",
                    ConflictReason.SOURCE_CHANGED,
                )
            pinned_rewrites[rel] = (at, old, new)
        rewrites = pinned_rewrites
        # all or none: a file that may not be rewritten refuses the whole move before anything is
        # written; the moved file itself only if its own links change (a rename leaves its bytes)
        protected = [rel for rel, (path, _, _) in rewrites.items() if is_read_only(path)]
        if moved_data is not None and is_read_only(src):
            protected.append(src_rel)
        if protected:
            raise _read_only_rewrites(sorted(protected))
        done: list[tuple[str, Path, bytes, bytes]] = []
        staged: dict[str, Path] = {}  # path -> its new bytes, written beside it before anything changes
        plan: dict[str, object] = {}
        made = _missing_folders(ws.root, dst)  # the target's, made to stage it there; gone again on failure
        try:
            dst = _pin_new(pins, dst, dst_rel)
            staged = _stage(intent, rewrites, (dst, moved_data, os.stat(src).st_mode))
            # From here a crash rolls forward: recovery puts every staged file in place (decision 687).
            taken = temp_path(src)
            plan = _note_commit(intent, rewrites, staged, src, dst, current, moved_data, taken)
            for rel, (path, old, new) in sorted(rewrites.items()):
                if _read(path) != old:
                    raise SourceChanged(rel)
                _put_staged(staged.pop(rel), path, new, old, rel)
                done.append((rel, path, old, new))
            moved = staged.get("")
            os.link(src if moved is None else moved, dst)  # no-overwrite rename: link, then drop the old name
            if moved is not None:
                del staged[""]
                with contextlib.suppress(OSError):
                    os.unlink(moved)
                _drop_source(src, taken, dst, lambda held: _read(held) == current, src_rel)
            else:  # the file linked must be the revision checked: a save before the link moved along
                _drop_source(src, taken, dst, _linked_as_checked(dst, current), src_rel)
        except (SourceChanged, OSError, KbError) as exc:
            try:
                _roll_back(intent, done, staged, made, plan)
            except (SourceChanged, OSError) as undo:
                raise _not_undone(src_rel, dst_rel, undo) from None
            if isinstance(exc, SourceChanged):
                raise Conflict(
                    f"{exc.args[0]!r} changed while the move was applied; every file was restored. Retry the move.",
                    ConflictReason.SOURCE_CHANGED,
                ) from None
            if isinstance(exc, FileExistsError):
                raise AlreadyExists(
                    f"Target {dst_rel!r} already exists; a move never overwrites. Choose another targetPath."
                ) from None
            if isinstance(exc, FileNotFoundError):  # the source, or the target's folder, went meanwhile
                raise Conflict(
                    f"{src_rel!r} or the folder of {dst_rel!r} was moved or deleted while the move was applied; "
                    "every file was restored. Re-read and retry the move.",
                    ConflictReason.SOURCE_CHANGED,
                ) from None
            if isinstance(exc, OSError):
                if os.path.isdir(src):  # made a folder since it was read: a link of a folder is EPERM
                    raise _made_a_folder(src_rel) from None
                raise _os_error(exc, src_rel) from None
            raise
        for folder in sorted({dst.parent, src.parent} | {path.parent for _, path, _, _ in done}):
            fsync_dir(folder)  # once per folder: a hundred rewritten notes often share a few
        intent.clear()
    return sha256_hex(current if moved_data is None else moved_data)


def _not_undone(src_rel: str, dst_rel: str, undo: SourceChanged | OSError) -> PermissionDenied:
    """A move with rewrites that failed part-way and whose undo failed too (a full disk): the move's
    plan is still noted, so the next write or start finishes it (decision 687)."""
    reason = os_reason(undo) if isinstance(undo, OSError) else f"{undo.args[0]!r} changed meanwhile"
    return PermissionDenied(
        f"Moving {src_rel!r} to {dst_rel!r} failed part-way and could not be undone ({reason}); some links may "
        "already be rewritten. The next write or server start finishes the move: free space or fix the file "
        "system, then check the result."
    )


def _drop_source(src: Path, taken: Path, dst: Path, ours: Callable[[Path], bool], rel: str | None = None) -> None:
    """Remove a move's old name once its target is linked, never another program's save made over
    it since it was checked (decision 979). Unlinking the name deleted an editor's save made in the
    milliseconds a move with rewrites takes to stage and swap them (a vim-style save renames a new
    file over the name). The name is renamed away to ``taken`` first, atomically: a save lands
    before (in what was renamed, which ``ours`` then refuses) or after (at the old name, kept). What
    was renamed is removed when it is a file and ``ours``; else it goes back under its name unless
    something newer is there (a file that goes back behind a newer save goes: the newest save stays,
    decision 930's rule; a folder never goes), the target goes, and the move is undone:
    SourceChanged(``rel``), or "is a folder" for a folder another program made there (980). When
    the rename fails the target goes too: one name, not two."""
    shown = rel if rel is not None else str(src)
    try:
        os.rename(src, taken)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(dst)
        raise
    is_file = _is_regular(taken)
    failure: OSError | None = None
    if is_file:
        try:
            mine = ours(taken)
        except OSError:  # it cannot be read: not known to be the revision checked
            mine = False
        if mine:
            try:
                os.unlink(taken)
                return
            except OSError as exc:  # the old name cannot go (an I/O error, a full disk): undone below
                failure = exc
    try:
        back = _rename_new(taken, src)
    except OSError:
        log.error("%s could not be put back under its name after a move was undone; it is kept at %s", shown, taken)
        raise
    if not back:
        if is_file:
            with contextlib.suppress(OSError):
                os.unlink(taken)
        else:
            log.warning("a folder another program made at %s is kept at %s: a file took the name since", shown, taken)
    with contextlib.suppress(OSError):
        os.unlink(dst)
    if failure is not None:
        raise failure
    if not is_file:
        raise _made_a_folder(shown)
    raise SourceChanged(shown)


def _linked_as_checked(dst: Path, current: bytes) -> Callable[[Path], bool]:
    """For :func:`_drop_source`: the old name renamed away is the file linked as ``dst`` and still
    the revision checked (a save before the link would otherwise move along under the old hash)."""
    return lambda held: _same_file(held, dst) and _read(held) == current


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _moved_meanwhile(rel: str) -> Conflict:
    return Conflict(
        f"{rel!r} was saved by another program while it was moved; the move was undone and the save kept. "
        "Re-read it with kb_read and retry the move with the sourceHash it returns.",
        ConflictReason.SOURCE_CHANGED,
    )


def _missing_folders(root: Path, target: Path) -> list[Path]:
    """The folders between ``root`` and ``target`` that do not exist yet, outermost first."""
    missing = []
    folder = target.parent
    while folder != root and root in folder.parents and not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


def _remove_empty(folders: list[Path]) -> None:
    """Remove the folders a failed write made (outermost first in ``folders``), if still empty."""
    for folder in reversed(folders):
        with contextlib.suppress(OSError):  # not empty: another program's file is in it now
            os.rmdir(folder)


def _stage(
    intent: Intent,
    rewrites: dict[str, tuple[Path, bytes, bytes]],
    moved: tuple[Path, bytes | None, int] | None,
    plan: dict[str, object] | None = None,
) -> dict[str, Path]:
    """Write every file's new bytes to a temporary file beside it (``moved``: the target, the moved
    file's new bytes or None, its mode; staged under ``""``), the names noted first, so a crash
    while staging leaves only temporary files to remove (beside ``plan``, a plan still in force)."""
    names = {rel: temp_path(path) for rel, (path, _, _) in rewrites.items()}
    if moved is not None and moved[1] is not None:
        names[""] = temp_path(moved[0])
    intent.record({**(plan or {}), "staging": [intent.place(tmp) for tmp in names.values()]})
    made: dict[str, Path] = {}
    try:
        for rel, tmp in names.items():
            if rel:
                path, _, new = rewrites[rel]
                try:
                    mode = os.stat(path).st_mode
                except FileNotFoundError:  # deleted by another program just now: a CONFLICT naming it (325)
                    raise SourceChanged(rel) from None
                _fill_temp(tmp, new, mode)
            elif moved is not None:
                _fill_temp(tmp, moved[1] or b"", moved[2])
            made[rel] = tmp
    except BaseException:
        for tmp in made.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
    return made


def _note_commit(
    intent: Intent,
    rewrites: dict[str, tuple[Path, bytes, bytes]],
    staged: dict[str, Path],
    src: Path,
    dst: Path,
    current: bytes,
    moved_data: bytes | None,
    taken: Path | None = None,
) -> dict[str, object]:
    """The move as recovery finishes it: each file, its staged bytes and the hashes of its bytes
    before and after; the source and target with theirs, and the name the source is renamed to
    before it goes (:func:`_drop_source`). Returns the record."""
    record: dict[str, object] = {
        "commit": [
            [intent.place(path), intent.place(staged[rel]), sha256_hex(old), sha256_hex(new)]
            for rel, (path, old, new) in sorted(rewrites.items())
        ],
        "source": intent.place(src),
        "target": intent.place(dst),
        "staged": intent.place(staged[""]) if "" in staged else None,
        "taken": None if taken is None else intent.place(taken),
        "sourceSha256": sha256_hex(current),
        "targetSha256": sha256_hex(current if moved_data is None else moved_data),
    }
    intent.record(record)
    return record


def _roll_back(
    intent: Intent,
    done: list[tuple[str, Path, bytes, bytes]],
    staged: dict[str, Path],
    made: list[Path],
    plan: dict[str, object],
) -> None:
    """Undo a move that failed while running (an editor's save, a full disk), itself as a plan
    recovery finishes (decision 687): the old bytes of the files already rewritten are staged while
    the move's plan is still in force (a kill then rolls the move forward), then noted as a plan of
    their own with the staged files left over and the folders made, and put back."""
    restore = {rel: (path, new, old) for rel, path, old, new in done if _read(path) == new}
    back: dict[str, Path] = {}
    if restore:
        try:
            back = _stage(intent, restore, None, plan)
        except (OSError, KbError):
            # nothing can be staged (a full disk): the move's plan stays, the next start finishes it
            _keep_plan(intent, plan)
            raise
    undo = {
        "commit": [
            [intent.place(path), intent.place(back[rel]), sha256_hex(new), sha256_hex(old)]
            for rel, (path, new, old) in sorted(restore.items())
        ],
        "staging": [intent.place(tmp) for tmp in staged.values()],
        "folders": [intent.place(folder) for folder in made],
    }
    try:
        intent.record(undo)
    except OSError:
        if restore:  # files put back without a note a kill could finish: the move's plan stays instead
            for tmp in back.values():
                with contextlib.suppress(OSError):
                    tmp.unlink()
            _keep_plan(intent, plan)
            raise
        # Nothing to put back (the disk filled while staging, decision 1030): the plan, if noted, is
        # dropped, and what was staged or made goes unnoted; a kill now leaves temporary names and
        # empty folders, never a move the next start would finish.
        intent.clear()
    for rel, (path, new, old) in sorted(restore.items()):
        if _read(path) == new:
            with contextlib.suppress(OSError, SourceChanged):  # another program's save stands
                _put_staged(back.pop(rel), path, old, new, rel)
    for tmp in [*back.values(), *staged.values()]:
        with contextlib.suppress(OSError):
            tmp.unlink()
    _remove_empty(made)
    intent.clear()


def _keep_plan(intent: Intent, plan: dict[str, object]) -> None:
    """Leave the move's ``plan`` in force for the next start to finish, after an undo that cannot
    be staged or noted. Written again over a longer note (its staging names); if that fails too
    (short of space), the note still holds the plan."""
    if plan:
        with contextlib.suppress(OSError):
            intent.record(plan)


def _put_staged(tmp: Path, path: Path, new: bytes, old: bytes, rel: str) -> None:
    """Put the staged ``tmp`` at ``path``, which held ``old`` when compared (as :func:`_replace`
    with ``expect``: swapped where the file system can, so an editor's save in the instant is
    put back and the move undone, decisions 446 and 930)."""
    try:
        if not _exchange(tmp, path):
            os.replace(tmp, path)
            return
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    try:
        _keep_displaced(tmp, path, new, old)
    except SourceChanged:
        raise SourceChanged(rel) from None


def _replace(intent: Intent, path: Path, data: bytes, mode: int | None, expect: bytes | None = None) -> None:
    """Put ``data`` at ``path`` through a synced temporary file and a rename (whatever is there goes).

    With ``expect``, the file must still hold exactly those bytes once the temporary file is
    written and synced, right before the rename (else :class:`SourceChanged`, nothing replaced):
    writing and syncing takes milliseconds, and an editor that saved meanwhile would otherwise
    be overwritten by an edit planned on the bytes before its save (decision 446). Where the
    file system can swap two names atomically the new file is swapped in instead of renamed, so
    the bytes it displaced are still there to compare and to put back (decision 930).
    """
    tmp = _write_temp(intent, path, data, mode)
    try:
        if expect is not None and _read(path) != expect:
            raise SourceChanged(str(path))
        if expect is None:
            os.replace(tmp, path)
            return
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _put_staged(tmp, path, data, expect, str(path))  # swapped: what path held is kept until seen


def _keep_displaced(tmp: Path, path: Path, data: bytes, expect: bytes) -> None:
    """After ``tmp`` (holding ``data``) and ``path`` were swapped: finish if ``path`` held
    ``expect``, else put back what another program saved there in the instant between the
    compare and the swap, and raise :class:`SourceChanged` (the edit re-plans on it).

    Between the compare and a plain rename lie the GIL and the scheduler: on a busy server that
    instant lasted milliseconds, and 1 of about 100 saves of an editor was silently reverted by
    an agent's edit of another paragraph (decision 930). The swap closes it for editors that
    save by rename or in place before the swap; a second save landing within the few
    microseconds of putting the first one back is the one case left (it wins: the newest save
    stays, the older one goes, as the editor itself would have it).
    """
    displaced = _file_bytes(tmp)
    if displaced == expect:
        try:
            os.unlink(tmp)
        except OSError:
            # The old revision cannot be removed (an I/O error): swap it back, so a write that
            # fails leaves the document as it was and nothing beside it, as a failed rename does.
            if _exchange(tmp, path):
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise
        return
    # Another program's save (or a folder, a link: whatever took the name) is at tmp: back it goes.
    # A newer save that replaced ours meanwhile lands at tmp instead: that one goes back (by rename),
    # the older one goes.
    try:
        if not _exchange(tmp, path) or _file_bytes(tmp) != data:
            os.replace(tmp, path)
    finally:
        if _file_bytes(tmp) == data:
            with contextlib.suppress(OSError):
                tmp.unlink()
    raise SourceChanged(str(path))


def _file_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file at ``path``; None for anything else (gone, a folder, a link,
    unreadable), which is never the revision an edit planned on."""
    try:
        if os.path.islink(path):
            return None
        return path.read_bytes()
    except OSError:
        return None


# renameat2(2) flag: swap the two names atomically (Linux 3.15; ext4, XFS, Btrfs, tmpfs, ...)
_RENAME_EXCHANGE = 2
_RENAME_NOREPLACE = 1  # rename only if the new name is free
_AT_FDCWD = -100
_renameat2: Callable[..., int] | None = None
_no_renameat2 = False


def _exchange(a: Path, b: Path) -> bool:
    """Swap the files named ``a`` and ``b`` in one step; False where the system or the file
    system cannot (then nothing happened and the caller renames)."""
    return _renameat2_with(a, b, _RENAME_EXCHANGE)


def _rename_new(a: Path, b: Path) -> bool:
    """Rename ``a`` to ``b`` only if nothing is at ``b``; False (``a`` left as it is) when something
    is. Without renameat2 a check and a rename: the instant between them is the case left."""
    try:
        if _renameat2_with(a, b, _RENAME_NOREPLACE):
            return True
    except FileExistsError:
        return False
    if os.path.lexists(b):
        return False
    os.rename(a, b)
    return True


def _renameat2_with(a: Path, b: Path, flags: int) -> bool:
    """renameat2(2) of ``a`` to ``b`` with ``flags``: True once done, False where the system or the
    file system cannot (nothing happened); any other failure raises its OSError."""
    global _renameat2, _no_renameat2
    if _no_renameat2:
        return False
    if _renameat2 is None:
        import ctypes  # only where a swap is tried: start-up does not pay for it

        try:
            function = ctypes.CDLL(None, use_errno=True).renameat2
        except (AttributeError, OSError, TypeError):  # not Linux, or a C library without it
            _no_renameat2 = True
            return False
        function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        function.restype = ctypes.c_int
        _renameat2 = function
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), flags) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err == errno.ENOSYS:
        _no_renameat2 = True
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EXDEV):
        return False  # a kernel or a file system (NFS, some FUSE) without the swap
    raise OSError(err, os.strerror(err), str(b))


def _link_new(intent: Intent, path: Path, data: bytes, mode: int | None) -> None:
    """Put ``data`` at ``path`` only if nothing is there: a hard link of a synced temporary file
    fails with ``FileExistsError`` where a rename would overwrite."""
    tmp = _write_temp(intent, path, data, mode)
    try:
        os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def delete_file(ws: Workspace, rel: str, path: Path, expected_sha: str) -> None:
    with write_lock(ws), Pins(ws.root) as pins:
        pinned = _pin_existing(pins, path, rel)
        if pinned is None:
            raise missing_document(rel)
        path = pinned
        _check_hash(rel, path, expected_sha)
        try:
            os.unlink(path)
        except OSError as exc:
            raise _gone_or_os_error(exc, rel) from None
        fsync_dir(path.parent)
