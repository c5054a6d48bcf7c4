"""Crash safety of the atomic writer, proven by killing a real process at every step of a write.

A child process performs one write (edit, create, move, delete) with every
file-system call of the writer wrapped: before and after each call (and in
the middle of the temporary file's contents, a torn write) it counts a step,
and at step ``k`` it sends itself SIGKILL. The parent runs ``k = 1, 2, ...``
until the child survives, and after each kill checks that the target is
wholly old or wholly new, that no other byte changed, and that the next start
(:func:`writer.recover`, run by every CLI start) leaves no temporary file and
no half-done move behind.

A full disk is injected in-process: whatever step fails with ENOSPC, the
original is intact, nothing is left behind, and the agent gets
PERMISSION_DENIED with a message that says what happened.
"""

from __future__ import annotations

import errno
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from local_vector_search_mcp import writer
from local_vector_search_mcp.cli import main as cli_main
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.errors import AlreadyExists, PermissionDenied
from local_vector_search_mcp.workspace import Workspace

OLD = b"# Title\r\n\r\nThe old revision, \xc3\xa9 and CRLF.\r\n" * 50
NEW = b"# Title\n\nThe new revision.\n" * 3000  # larger than a page, so a torn write is visible
BYSTANDER = b"# Bystander\n\nNever touched.\n"

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from local_vector_search_mcp import writer
    from local_vector_search_mcp.config import CliOptions, load_settings
    from local_vector_search_mcp.workspace import Workspace

    op, root, kill_at = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    old, new = Path(sys.argv[4]).read_bytes(), Path(sys.argv[5]).read_bytes()
    ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=root, environ={}))
    steps = 0

    def tick():
        global steps
        steps += 1
        if steps == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    class Torn:
        # The temporary file: each write lands in two halves, a kill may fall between them.
        def __init__(self, f):
            self.f = f
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            tick(); self.f.close(); tick()
        def write(self, data):
            half = len(data) // 2
            tick(); self.f.write(data[:half]); self.f.flush(); tick()
            self.f.write(data[half:]); tick()
        def flush(self):
            tick(); self.f.flush(); tick()
        def fileno(self):
            return self.f.fileno()

    CALLS = {"open", "close", "fsync", "chmod", "replace", "link", "unlink", "pwrite", "ftruncate", "stat"}

    class Os:
        def __getattr__(self, name):
            real = getattr(os, name)
            if name == "fdopen":
                return lambda *a, **k: Torn(real(*a, **k))
            if name not in CALLS:
                return real
            def call(*a, **k):
                tick(); result = real(*a, **k); tick()
                return result
            return call

    writer.os = Os()
    sha = writer.sha256_hex
    if op == "edit":
        writer.mutate(ws, "a.md", root / "a.md", lambda raw: new)
    elif op == "create":
        writer.create_new(ws, "sub/new.md", root / "sub" / "new.md", new)
    elif op == "move":
        writer.move_file(ws, "a.md", root / "a.md", "moved/b.md", root / "moved" / "b.md", sha(old))
    elif op == "delete":
        writer.delete_file(ws, "a.md", root / "a.md", sha(old))
    elif op == "relink":  # kb_move updateLinks: the moved file's own links and two other files change
        rewrites = {
            rel: (root / rel, (root / rel).read_bytes(), (root / rel).read_bytes().replace(b"a.md", b"moved/b.md"))
            for rel in ("links.md", "sub/other.md")
        }
        move = ("a.md", root / "a.md", "moved/b.md", root / "moved" / "b.md", sha(old))
        writer.move_with_rewrites(ws, move, new, rewrites)
    elif op == "undo":  # the same move, undone when an editor saves sub/other.md after links.md is in place
        rewrites = {
            rel: (root / rel, (root / rel).read_bytes(), (root / rel).read_bytes().replace(b"a.md", b"moved/b.md"))
            for rel in ("links.md", "sub/other.md")
        }
        put = writer._put_staged

        def racing(tmp, path, new_bytes, old_bytes, rel):
            put(tmp, path, new_bytes, old_bytes, rel)
            if rel == "links.md":
                (root / "sub" / "other.md").write_bytes(b"# Other\\n\\nSaved by an editor.\\n")

        writer._put_staged = racing
        move = ("a.md", root / "a.md", "moved/b.md", root / "moved" / "b.md", sha(old))
        try:
            writer.move_with_rewrites(ws, move, new, rewrites)
        except Exception as exc:
            print("refused", type(exc).__name__, flush=True)
    print("survived", steps, flush=True)
    """
)


def _workspace(root: Path) -> Workspace:
    return Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=root, environ={}))


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under the root except the index folder (lock file, database)."""
    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".local-vector-search-mcp"]
        for name in names:
            path = Path(folder) / name
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


LINKING = {"links.md": b"# Links\n\n[a](a.md) and [again](a.md#title)\n", "sub/other.md": b"# Other\n\n[a](../a.md)\n"}
LINKED = {rel: data.replace(b"a.md", b"moved/b.md") for rel, data in LINKING.items()}
EDITED = b"# Other\n\nSaved by an editor.\n"


def _folders(root: Path) -> set[str]:
    return {
        Path(folder).relative_to(root).as_posix()
        for folder, _, _ in os.walk(root)
        if ".local-vector-search-mcp" not in Path(folder).parts
    }


def _fresh(tmp_path: Path, k: int, op: str) -> Path:
    root = tmp_path / f"run{k}"
    root.mkdir()
    (root / "a.md").write_bytes(OLD)
    (root / "bystander.md").write_bytes(BYSTANDER)
    if op in ("relink", "undo"):
        (root / "sub").mkdir()
        for rel, data in LINKING.items():
            (root / rel).write_bytes(data)
    return root


# What the tree may look like after recovery, for each operation: wholly before or wholly after.
BEFORE = {"a.md": OLD, "bystander.md": BYSTANDER}
OUTCOMES: dict[str, list[dict[str, bytes]]] = {
    "edit": [BEFORE, {"a.md": NEW, "bystander.md": BYSTANDER}],
    "create": [BEFORE, {**BEFORE, "sub/new.md": NEW}],
    "move": [BEFORE, {"moved/b.md": OLD, "bystander.md": BYSTANDER}],
    "delete": [BEFORE, {"bystander.md": BYSTANDER}],
    # all the rewrites and the move, or none of them (decision 687): no link left to a file not there
    "relink": [{**BEFORE, **LINKING}, {"moved/b.md": NEW, "bystander.md": BYSTANDER, **LINKED}],
    # the editor's save stands in every outcome once made; the move is whole or undone whole
    "undo": [
        {**BEFORE, **LINKING},
        {"moved/b.md": NEW, "bystander.md": BYSTANDER, **LINKED},
        {**BEFORE, **LINKING, "sub/other.md": EDITED},
        {"moved/b.md": NEW, "bystander.md": BYSTANDER, **LINKED, "sub/other.md": EDITED},
    ],
}


def _kill_at_every_step(tmp_path: Path, op: str) -> int:
    old_file, new_file = tmp_path / "old.bin", tmp_path / "new.bin"
    old_file.write_bytes(OLD)
    new_file.write_bytes(NEW)
    for k in range(1, 200):
        root = _fresh(tmp_path, k, op)
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, op, str(root), str(k), str(old_file), str(new_file)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if proc.returncode == 0:
            assert "survived" in proc.stdout, proc.stdout
            survived = {**BEFORE, **LINKING, "sub/other.md": EDITED} if op == "undo" else OUTCOMES[op][1]
            assert _tree(root) == survived  # the undo: refused, every file as it was but the editor's
            return k - 1  # every earlier step was a kill
        assert proc.returncode == -9, proc.stderr
        before = _tree(root)
        # Before any clean-up the real files are already whole: the target is old or new, never mixed.
        real = {path: data for path, data in before.items() if not writer._TEMP_NAME.match(path.rsplit("/", 1)[-1])}
        for path, data in real.items():
            whole = (OLD, NEW, BYSTANDER, EDITED, *LINKING.values(), *LINKED.values())
            assert data in whole, f"step {k}: {path} holds a torn revision"
        writer.recover(_workspace(root))
        after = _tree(root)
        assert after in OUTCOMES[op], f"{op}, killed at step {k}: {sorted(after)}"
    raise AssertionError("the child never survived: too many steps?")


@pytest.mark.parametrize("op", ["edit", "create", "move", "delete", "relink", "undo"])
def test_kill_at_every_step_leaves_the_file_wholly_old_or_wholly_new(tmp_path: Path, op: str) -> None:
    kills = _kill_at_every_step(tmp_path, op)
    print(f"\nwriter crash injection, {op}: killed at {kills} steps, each recovered wholly old or new")
    assert kills >= {"edit": 25, "create": 25, "move": 20, "delete": 8, "relink": 60, "undo": 80}[op]  # all hit


def test_the_next_cli_start_removes_a_temporary_file_left_by_a_killed_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _fresh(tmp_path, 0, "edit")
    ws = _workspace(root)
    with writer.write_lock(ws) as intent:  # what a killed write leaves: the note and its temp file
        tmp = root / ".a.md.0123456789ab.tmp"
        intent.note(tmp=tmp)
        tmp.write_bytes(NEW[:100])
    user_file = root / ".notes.md.fedcba987654.tmp"  # same shape, but not ours: never deleted
    user_file.write_bytes(b"mine")
    with caplog.at_level(logging.WARNING, logger="local_vector_search_mcp"):
        assert cli_main(["--root", str(root), "--project-root", str(root), "--status"]) == 0
    assert not tmp.exists() and user_file.read_bytes() == b"mine"
    assert (root / "a.md").read_bytes() == OLD
    # The user is told what the start repaired, at the level a running server's take-over uses.
    assert [r.getMessage() for r in caplog.records if "interrupted write" in r.getMessage()] == [
        "finished an interrupted write: removed the temporary file .a.md.0123456789ab.tmp"
    ]


def test_a_torn_intent_note_is_ignored(tmp_path: Path) -> None:
    root = _fresh(tmp_path, 0, "edit")
    ws = _workspace(root)
    lock = ws.state_dir / "write.lock"
    lock.parent.mkdir(parents=True)
    lock.write_bytes(b'{"tmp": ".a.md.01')
    assert writer.recover(ws) == []
    lock.write_bytes(b'{"tmp": "../outside/.x.md.0123456789ab.tmp", "source": "/etc/passwd", "target": "a.md"}')
    assert writer.recover(ws) == []
    assert _tree(root) == BEFORE and lock.read_bytes() == b""


# --------------------------------------------------------------------------- a full disk, injected


def _failing_os(call: str, after: int) -> Any:
    """``os`` whose ``call`` fails with ENOSPC on its ``after``-th use (and writes do too); for ``open``,
    its ``after``-th use on a temporary file."""
    count = [0]

    class Os:
        def __getattr__(self, name: str) -> Any:
            real = getattr(os, name)
            if name == "fdopen" and call == "write":
                return lambda *a, **k: _FullFile(real(*a, **k))
            if name != call:
                return real

            def fail(*args: Any, **kwargs: Any) -> Any:
                if name == "open" and not str(args[0]).endswith(".tmp"):
                    return real(*args, **kwargs)  # the lock files: the temporary file's open is the one at stake
                count[0] += 1
                if count[0] == after:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real(*args, **kwargs)

            return fail

    return Os()


class _FullFile:
    def __init__(self, f: Any) -> None:
        self.f = f

    def __enter__(self) -> _FullFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()

    def write(self, data: bytes) -> int:
        self.f.write(data[: len(data) // 3])
        self.f.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fileno(self) -> int:
        return int(self.f.fileno())


OPERATIONS: dict[str, Callable[[Workspace, Path], object]] = {
    "edit": lambda ws, root: writer.mutate(ws, "a.md", root / "a.md", lambda raw: NEW),
    "create": lambda ws, root: writer.create_new(ws, "sub/new.md", root / "sub" / "new.md", NEW),
    "move": lambda ws, root: writer.move_file(
        ws, "a.md", root / "a.md", "moved/b.md", root / "moved" / "b.md", writer.sha256_hex(OLD)
    ),
}


@pytest.fixture
def real_os() -> Iterator[None]:
    yield
    writer.os = os  # type: ignore[attr-defined]


@pytest.mark.parametrize("op", sorted(OPERATIONS))
@pytest.mark.parametrize(
    "call, after",
    [("write", 1), ("fsync", 1), ("open", 1), ("replace", 1), ("link", 1), ("unlink", 1), ("pwrite", 1), ("chmod", 1)],
)
def test_a_full_disk_leaves_the_original_intact(tmp_path: Path, real_os: None, op: str, call: str, after: int) -> None:
    root = _fresh(tmp_path, 0, "edit")
    ws = _workspace(root)
    folders = _folders(root)
    writer.os = _failing_os(call, after)  # type: ignore[attr-defined]
    try:
        OPERATIONS[op](ws, root)
    except PermissionDenied as exc:
        assert exc.code == "PERMISSION_DENIED"
        assert "space" in exc.message or "file system" in exc.message
        assert str(root) not in exc.message
        assert _tree(root) == BEFORE  # the original intact and no temporary file left
        assert _folders(root) == folders  # nor a folder the write made (decision 688)
    else:
        # The injected call was not on this operation's path (a move never writes a temp file).
        assert _tree(root) in OUTCOMES[op]


def _relink_fixture(tmp_path: Path) -> tuple[Path, Workspace, dict[str, tuple[Path, bytes, bytes]]]:
    root = _fresh(tmp_path, 0, "relink")
    rewrites = {rel: (root / rel, data, LINKED[rel]) for rel, data in LINKING.items()}
    return root, _workspace(root), rewrites


def _move(root: Path) -> tuple[str, Path, str, Path, str]:
    return ("a.md", root / "a.md", "moved/b.md", root / "moved" / "b.md", writer.sha256_hex(OLD))


def test_a_target_another_program_makes_at_the_last_moment_leaves_no_staged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 687 (review): the moved file's staged bytes were taken off the list before the link,
    so a target made by another program in that instant left them behind, noted nowhere."""
    root, ws, rewrites = _relink_fixture(tmp_path)
    real_link = os.link

    def link(src: Any, dst: Any) -> None:
        if str(dst).endswith("b.md"):
            Path(dst).write_bytes(b"another program's file\n")
        real_link(src, dst)

    monkeypatch.setattr(writer.os, "link", link)
    with pytest.raises(AlreadyExists):
        writer.move_with_rewrites(ws, _move(root), NEW, rewrites)
    assert _tree(root) == {**BEFORE, **LINKING, "moved/b.md": b"another program's file\n"}


def test_recovery_puts_back_a_save_the_swap_displaced(tmp_path: Path) -> None:
    """Decision 687 (review): killed right after a swap that displaced an editor's save (930's case),
    recovery deleted the temporary file holding that save. It now puts it back."""
    root, ws, rewrites = _relink_fixture(tmp_path)
    with writer.write_lock(ws) as intent:
        staged = {
            rel: root / (rel.rsplit("/", 1)[0] + "/" if "/" in rel else "") / f".x.{i:012x}.tmp"
            for i, rel in enumerate(rewrites)
        }
        for rel, tmp in staged.items():
            tmp.write_bytes(LINKED[rel])
        writer._note_commit(intent, rewrites, staged, root / "a.md", root / "moved" / "b.md", OLD, None)
        # links.md swapped in; what it held, an editor's save made in the instant before, is at its tmp
        (root / "links.md").write_bytes(LINKED["links.md"])
        staged["links.md"].write_bytes(EDITED)
    (root / "moved").mkdir()
    done = writer.recover(ws)
    assert "put back another program's save of links.md" in done
    tree = _tree(root)
    assert tree["links.md"] == EDITED and tree["sub/other.md"] == LINKED["sub/other.md"]
    assert tree["moved/b.md"] == OLD and "a.md" not in tree
    assert not [p for p in tree if writer._TEMP_NAME.match(p.rsplit("/", 1)[-1])]


def test_recovery_never_follows_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    """Decision 687 (review): with the target's folder replaced by a link to the source's folder
    before the restart, "the target" named the source itself, and recovery deleted the page."""
    root, ws, _ = _relink_fixture(tmp_path)
    with writer.write_lock(ws) as intent:
        (root / "moved").mkdir()
        writer._note_commit(intent, {}, {}, root / "a.md", root / "moved" / "a.md", OLD, None)
    (root / "moved").rmdir()
    (root / "moved").symlink_to(root, target_is_directory=True)
    writer.recover(ws)
    assert (root / "a.md").read_bytes() == OLD


def test_a_folder_made_before_the_disk_filled_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision 688 (review): the second of two missing folders refused (ENOSPC) left the first."""
    from local_vector_search_mcp import pinning

    real_mkdir = os.mkdir
    made: list[str] = []

    def mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
        if "dir_fd" in kwargs:  # a folder of the write (the lock's state folder is made by path)
            if made:
                raise OSError(errno.ENOSPC, "No space left on device")
            made.append(str(path))
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(pinning.os, "mkdir", mkdir)
    root = _fresh(tmp_path, 0, "edit")
    ws = _workspace(root)
    for write in (
        lambda: writer.create_new(ws, "x/y/n.md", root / "x" / "y" / "n.md", NEW),
        lambda: writer.move_file(
            ws, "a.md", root / "a.md", "x/y/b.md", root / "x" / "y" / "b.md", writer.sha256_hex(OLD)
        ),
    ):
        made.clear()
        with pytest.raises(PermissionDenied):
            write()
        assert not (root / "x").exists() and _tree(root) == BEFORE


def _full_note(monkeypatch: pytest.MonkeyPatch, from_call: int) -> None:
    """The write's note cannot grow from its ``from_call``-th write on: a full disk where the note,
    cleared after the last write, has no block left to take (tmpfs frees it on truncate)."""
    real, count = os.pwrite, [0]

    def pwrite(fd: int, data: bytes, offset: int) -> int:
        count[0] += 1
        if count[0] >= from_call:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data, offset)

    monkeypatch.setattr(writer.os, "pwrite", pwrite)


def test_a_move_with_rewrites_on_a_full_disk_is_refused_and_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 1030: the note of the files to stage could not be written, and the undo's own note
    failed the same way: INTERNAL_ERROR, and the target's new folder stayed."""
    root, ws, rewrites = _relink_fixture(tmp_path)
    _full_note(monkeypatch, 1)
    with pytest.raises(PermissionDenied) as info:
        writer.move_with_rewrites(ws, _move(root), NEW, rewrites)
    assert info.value.message == "No space left to write 'a.md'; nothing was changed."
    assert _tree(root) == {**BEFORE, **LINKING} and not (root / "moved").exists()
    monkeypatch.undo()
    assert writer.recover(ws) == []  # and nothing noted for the next start


def test_a_move_whose_undo_cannot_be_noted_is_finished_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 1030: links already rewritten when the disk filled, and no room to note putting them
    back: the move's plan stays noted, the agent is told so (PERMISSION_DENIED, not INTERNAL_ERROR),
    and the next start finishes the move."""
    root, ws, rewrites = _relink_fixture(tmp_path)
    real_link = os.link

    def link(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if str(dst).endswith("b.md"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_link(src, dst, *args, **kwargs)

    _full_note(monkeypatch, 3)  # the files to stage and the move's plan are noted, the undo is not
    monkeypatch.setattr(writer.os, "link", link)
    with pytest.raises(PermissionDenied) as info:
        writer.move_with_rewrites(ws, _move(root), NEW, rewrites)
    assert "could not be undone (No space left on device)" in info.value.message
    monkeypatch.undo()
    assert writer.recover(ws)
    assert _tree(root) == {"moved/b.md": NEW, "bystander.md": BYSTANDER, **LINKED}


def test_recovery_of_a_plain_move_never_follows_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    """Review of 979: the plain move's note was read without 687's check, so with the target's
    folder swapped for a link to the source's folder, "the target" was the source itself and
    recovery removed the page as a finished move."""
    root, ws, _ = _relink_fixture(tmp_path)
    with writer.write_lock(ws) as intent:
        intent.note(source=root / "a.md", target=root / "moved" / "a.md")
    (root / "moved").symlink_to(root, target_is_directory=True)
    writer.recover(ws)
    assert (root / "a.md").read_bytes() == OLD


def test_a_running_server_finishes_a_move_another_process_left_killed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Decision 989: a server killed mid-move leaves the move's plan in the lock file for the next
    start, but a second server still running on the project took the lock first for its own write,
    and its note wrote over the plan: the move stayed half done for good (links to a target that
    was never made, temporary files in the tree). Whoever takes the lock next now finishes it, and
    has the index compare the files it rewrote."""
    from local_vector_search_mcp import dispatch

    root, _, rewrites = _relink_fixture(tmp_path)
    running = _workspace(root)  # the other server, already serving and indexed
    running.indexing.reindex()
    killed = _workspace(root)
    with writer.write_lock(killed) as intent:  # what a move killed right after noting its commit leaves
        (root / "moved").mkdir()
        staged = {
            rel: path.parent / f".{path.name}.{i:012x}.tmp" for i, (rel, (path, _, _)) in enumerate(rewrites.items())
        }
        for rel, tmp in staged.items():
            tmp.write_bytes(LINKED[rel])
        writer._note_commit(intent, rewrites, staged, root / "a.md", root / "moved" / "b.md", OLD, None)
    try:
        writer.create_new(running, "n.md", root / "n.md", NEW)  # the running server's next write
        assert _tree(root) == {"moved/b.md": OLD, "bystander.md": BYSTANDER, **LINKED, "n.md": NEW}
        assert "finished moving a.md to moved/b.md" in caplog.text
        running.indexing.wait_catch_up(10)
        assert running.indexing.sync.wait_idle(10)
        found = dispatch.invoke(running, "kb_search", {"request": {"query": "CRLF", "mode": "lexical"}})
        assert [hit["path"] for hit in found["results"]] == ["moved/b.md"], found
    finally:
        running.close()
        killed.close()


def test_a_take_over_that_fails_refuses_the_write_and_keeps_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of 989: a take-over that failed (an I/O error, a full disk) was logged and the write
    went on; its own note then wrote over the dead writer's plan, which was lost for good. The
    write is now refused, nothing changed, and the next write or start finishes the move."""
    root, _, rewrites = _relink_fixture(tmp_path)
    killed = _workspace(root)
    with writer.write_lock(killed) as intent:  # a move killed right after noting its commit
        (root / "moved").mkdir()
        staged = {rel: p.parent / f".{p.name}.{i:012x}.tmp" for i, (rel, (p, _, _)) in enumerate(rewrites.items())}
        for rel, tmp in staged.items():
            tmp.write_bytes(LINKED[rel])
        writer._note_commit(intent, rewrites, staged, root / "a.md", root / "moved" / "b.md", OLD, None)
    killed.close()
    real_replace = os.replace

    def failing(a: Any, b: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(writer.os, "replace", failing)
    running = _workspace(root)
    try:
        with pytest.raises(PermissionDenied) as refused:
            writer.create_new(running, "n.md", root / "n.md", NEW)
        assert "nothing was changed" in refused.value.message and "n.md" not in _tree(root)
        monkeypatch.setattr(writer.os, "replace", real_replace)
        assert "finished moving a.md to moved/b.md" in writer.recover(_workspace(root))
        assert _tree(root) == {"moved/b.md": OLD, "bystander.md": BYSTANDER, **LINKED}
    finally:
        running.close()
