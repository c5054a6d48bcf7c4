"""The atomic writer: compare-and-swap, re-planning, no overwrite, no litter, modes kept."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest
from link_swap import LinkSwap

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.errors import AlreadyExists, Conflict, InvalidArgument, InvalidPath, NotFound
from local_vector_search_mcp.workspace import Workspace
from local_vector_search_mcp.writer import create_new, delete_file, move_file, move_with_rewrites, mutate, sha256_hex


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "kb"
    root.mkdir()
    return Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=tmp_path, environ={}))


def _litter(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_mutate_replaces_atomically_and_keeps_the_mode(ws: Workspace) -> None:
    target = ws.root / "a.md"
    target.write_bytes(b"old\r\n")
    os.chmod(target, 0o640)
    data, sha = mutate(ws, "a.md", target, lambda raw: raw.replace(b"old", b"new"))
    assert target.read_bytes() == data == b"new\r\n"
    assert sha == sha256_hex(b"new\r\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _litter(ws.root) == []


@pytest.mark.parametrize("mode", [0o664, 0o666, 0o464, 0o620])
def test_an_edit_keeps_the_group_and_other_write_bits_whatever_the_umask(ws: Workspace, mode: int) -> None:
    # a shared folder's 0664 notes came back 0644 after every edit under the usual umask 022 (the
    # temporary file was created with the mode, which the umask reduces), so teammates lost write
    # access, and a 0464 file came back 0444: read-only, refused from then on (decision 1047)
    target = ws.root / "a.md"
    target.write_bytes(b"old\n")
    os.chmod(target, mode)
    previous = os.umask(0o022)
    try:
        mutate(ws, "a.md", target, lambda raw: raw.replace(b"old", b"new"))
    finally:
        os.umask(previous)
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == mode


def test_a_refused_plan_leaves_the_file_byte_identical(ws: Workspace) -> None:
    target = ws.root / "a.md"
    target.write_bytes(b"\xef\xbb\xbfkeep\r\n")

    def refuse(raw: bytes) -> bytes:
        raise InvalidArgument("no")

    with pytest.raises(InvalidArgument):
        mutate(ws, "a.md", target, refuse)
    assert target.read_bytes() == b"\xef\xbb\xbfkeep\r\n"
    assert _litter(ws.root) == []


def test_an_edit_that_would_pass_the_document_cap_is_refused(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision 410: a document over the cap can be neither read nor edited, so no edit may make one."""
    import local_vector_search_mcp.writer as writer

    monkeypatch.setattr(writer, "MAX_DOCUMENT_BYTES", 64)
    target = ws.root / "a.md"
    target.write_bytes(b"# A\n\nsmall\n")
    with pytest.raises(InvalidArgument, match=r"would make 'a\.md' .* nothing was written"):
        mutate(ws, "a.md", target, lambda raw: raw + b"x" * 60)
    assert target.read_bytes() == b"# A\n\nsmall\n"
    assert _litter(ws.root) == []
    data, _ = mutate(ws, "a.md", target, lambda raw: raw + b"x" * 53)  # exactly at the cap: allowed
    assert len(data) == 64


def test_a_concurrent_change_is_replanned_on_the_new_revision(ws: Workspace) -> None:
    target = ws.root / "a.md"
    target.write_bytes(b"v1")
    seen: list[bytes] = []

    def plan(raw: bytes) -> bytes:
        seen.append(raw)
        if len(seen) == 1:
            target.write_bytes(b"v2")  # another program saves between our read and our write
        return raw + b"+edit"

    mutate(ws, "a.md", target, plan)
    assert seen == [b"v1", b"v2"]
    assert target.read_bytes() == b"v2+edit"  # the other program's save is not lost


class _SaveDuringSync:
    """``os`` for the writer whose first ``fsync`` (of the temporary file: writing and syncing it
    takes milliseconds) lets another program save ``target`` first."""

    def __init__(self, target: Path, data: bytes) -> None:
        self.target, self.data, self.saved = target, data, False

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def fsync(self, fd: int) -> None:
        if not self.saved:
            self.saved = True
            self.target.write_bytes(self.data)  # an editor saves in place (same inode)
        os.fsync(fd)


def test_a_save_while_the_new_bytes_are_written_is_not_overwritten(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hash is checked again right before the rename (contract 5.1 step 8, decision 446): an
    editor that saved while the temporary file was written and synced is re-planned on, not
    overwritten. Before, an external writer saving every ~50 ms had 90 of its 251 saves reverted by
    four agents' edits of other paragraphs in 15 s."""
    import local_vector_search_mcp.writer as writer

    target = ws.root / "a.md"
    target.write_bytes(b"v1")
    monkeypatch.setattr(writer, "os", _SaveDuringSync(target, b"v2"))
    seen: list[bytes] = []

    def plan(raw: bytes) -> bytes:
        seen.append(raw)
        return raw + b"+edit"

    mutate(ws, "a.md", target, plan)
    assert seen == [b"v1", b"v2"]
    assert target.read_bytes() == b"v2+edit"  # the other program's save is not lost
    assert _litter(ws.root) == []


def _saving_before_swaps(monkeypatch: pytest.MonkeyPatch, target: Path, saves: list[bytes]) -> list[bytes]:
    """Make the writer's swap of two names first let another program save ``target`` (through a
    temporary file and a rename), once per entry of ``saves``: the instant between the last
    compare and the swap, which a busy server stretches to milliseconds. Returns what each swap
    found at ``target`` just before it ran."""
    import local_vector_search_mcp.writer as writer

    real = writer._exchange
    found: list[bytes] = []

    def exchange(a: Path, b: Path) -> bool:
        if saves:
            other = target.with_name("editor.tmp~")
            other.write_bytes(saves.pop(0))
            other.replace(target)
        found.append(target.read_bytes())
        return real(a, b)

    monkeypatch.setattr(writer, "_exchange", exchange)
    return found


def test_a_save_between_the_last_compare_and_the_swap_is_put_back_and_replanned(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 930: the new file is swapped in, so the bytes it displaced are compared after the
    swap. An editor that saved after the writer's last compare (decision 446's left-over instant)
    gets its save back and the edit re-plans on it; with a plain rename the save was lost (1 of
    about 100 saves of an editor, with twelve agents editing other paragraphs)."""
    target = ws.root / "a.md"
    target.write_bytes(b"v1")
    found = _saving_before_swaps(monkeypatch, target, [b"v2"])
    seen: list[bytes] = []

    def plan(raw: bytes) -> bytes:
        seen.append(raw)
        return raw + b"+edit"

    mutate(ws, "a.md", target, plan)
    assert seen == [b"v1", b"v2"]
    assert target.read_bytes() == b"v2+edit"
    assert found[0] == b"v2"  # the save did land between the compare and the swap
    assert _litter(ws.root) == []


def test_a_second_save_while_the_first_is_put_back_wins(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor saves again in the instant the writer puts its first save back: the newest save
    stays (the older one goes, as the editor itself replaced it), and the edit lands on it."""
    target = ws.root / "a.md"
    target.write_bytes(b"v1")
    _saving_before_swaps(monkeypatch, target, [b"v2", b"v3"])
    mutate(ws, "a.md", target, lambda raw: raw + b"+edit")
    assert target.read_bytes() == b"v3+edit"
    assert _litter(ws.root) == [] and not (ws.root / "editor.tmp~").exists()


def test_a_delete_between_the_last_compare_and_the_swap_is_not_undone(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program deletes the document in the instant between the writer's last compare and
    its swap: the swap finds no file, so the edit is NOT_FOUND and the file stays deleted. A rename
    in that instant brought the deleted file back with the edit applied (decision 930)."""
    import local_vector_search_mcp.writer as writer

    real = writer._exchange
    target = ws.root / "a.md"
    target.write_bytes(b"v1")

    def exchange(a: Path, b: Path) -> bool:
        target.unlink(missing_ok=True)
        return real(a, b)

    monkeypatch.setattr(writer, "_exchange", exchange)
    with pytest.raises(NotFound):
        mutate(ws, "a.md", target, lambda raw: raw + b"+edit")
    assert not target.exists()
    assert _litter(ws.root) == []


def test_a_folder_put_in_the_documents_place_before_the_swap_is_put_back(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program replaces the document by a folder in the instant before the swap (the swap
    takes a folder as readily as a file): the folder goes back where it was, with what it holds,
    and the edit is refused; nothing is left under the writer's temporary name."""
    import local_vector_search_mcp.writer as writer

    real = writer._exchange
    target = ws.root / "a.md"
    target.write_bytes(b"v1")
    swaps = [0]

    def exchange(a: Path, b: Path) -> bool:
        swaps[0] += 1
        if swaps[0] == 1:
            target.unlink()
            target.mkdir()
            (target / "inside.md").write_bytes(b"kept")
        return real(a, b)

    monkeypatch.setattr(writer, "_exchange", exchange)
    with pytest.raises(InvalidArgument, match="is a folder"):
        mutate(ws, "a.md", target, lambda raw: raw + b"+edit")
    assert (target / "inside.md").read_bytes() == b"kept"
    assert swaps[0] == 2 and _litter(ws.root) == [] and sorted(p.name for p in ws.root.iterdir()) == ["a.md"]


def test_a_document_made_a_folder_while_it_is_edited_is_named_a_folder(ws: Workspace) -> None:
    """Another program replaces the document by a folder while the edit is planned: the edit is
    refused as kb_read refuses a folder (INVALID_ARGUMENT), not with the IsADirectoryError that
    reached the agent as INTERNAL_ERROR."""
    target = ws.root / "a.md"
    target.write_bytes(b"v1")

    def plan(raw: bytes) -> bytes:
        target.unlink()
        target.mkdir()
        return raw + b"+edit"

    with pytest.raises(InvalidArgument, match="is a folder"):
        mutate(ws, "a.md", target, plan)
    assert target.is_dir() and _litter(ws.root) == []


def test_without_a_swap_the_writer_renames_as_before(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that cannot swap names (NFS, some FUSE; ``EINVAL``) gets the rename."""
    import local_vector_search_mcp.writer as writer

    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)
    target = ws.root / "a.md"
    target.write_bytes(b"v1")
    os.chmod(target, 0o640)
    mutate(ws, "a.md", target, lambda raw: raw + b"+edit")
    assert target.read_bytes() == b"v1+edit"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _litter(ws.root) == []


def test_the_swap_exchanges_two_files_in_one_step(tmp_path: Path) -> None:
    from local_vector_search_mcp.writer import _exchange

    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"A")
    b.write_bytes(b"B")
    if not _exchange(a, b):
        pytest.skip("this file system cannot swap two names (renameat2 RENAME_EXCHANGE)")
    assert (a.read_bytes(), b.read_bytes()) == (b"B", b"A")
    with pytest.raises(FileNotFoundError):
        _exchange(a, tmp_path / "missing")


def test_a_save_while_a_linking_note_is_rewritten_restores_and_refuses_the_move(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import local_vector_search_mcp.writer as writer

    (ws.root / "a.md").write_bytes(b"# A\n")
    note = ws.root / "n.md"
    note.write_bytes(b"[a](a.md)\n")
    monkeypatch.setattr(writer, "os", _SaveDuringSync(note, b"[a](a.md) saved\n"))
    move = ("a.md", ws.root / "a.md", "b.md", ws.root / "b.md", sha256_hex(b"# A\n"))
    with pytest.raises(Conflict, match=r"'n\.md' changed while the move was applied"):
        writer.move_with_rewrites(ws, move, None, {"n.md": (note, b"[a](a.md)\n", b"[a](b.md)\n")})
    assert note.read_bytes() == b"[a](a.md) saved\n"
    assert (ws.root / "a.md").read_bytes() == b"# A\n" and not (ws.root / "b.md").exists()
    assert _litter(ws.root) == []


def test_a_file_that_keeps_changing_gives_conflict(ws: Workspace) -> None:
    target = ws.root / "a.md"
    target.write_bytes(b"0")
    count = [0]

    def plan(raw: bytes) -> bytes:
        count[0] += 1
        target.write_bytes(str(count[0]).encode())
        return b"mine"

    with pytest.raises(Conflict, match="kept changing"):
        mutate(ws, "a.md", target, plan)
    assert count[0] == 3
    assert target.read_bytes() == b"3"
    assert _litter(ws.root) == []


def test_concurrent_edits_in_one_process_all_land(ws: Workspace) -> None:
    """Edits of one file from many threads of this process (HTTP clients, parallel calls of one
    session) are planned one after another on the latest bytes (decision 282): none is refused as
    "kept changing", none is lost. Only another process's writes make an edit re-plan."""
    target = ws.root / "a.md"
    lines = [f"line {i}\n".encode() for i in range(8)]
    target.write_bytes(b"".join(lines))
    start = threading.Barrier(8)
    errors: list[Exception] = []

    def edit(i: int) -> None:
        def plan(raw: bytes) -> bytes:
            time.sleep(0.01)  # planning takes a while: parsing, validating
            return raw.replace(lines[i], f"LINE {i}\n".encode())

        start.wait()
        try:
            mutate(ws, "a.md", target, plan)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=edit, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert target.read_bytes() == b"".join(f"LINE {i}\n".encode() for i in range(8))


def test_missing_file(ws: Workspace) -> None:
    with pytest.raises(NotFound):
        mutate(ws, "gone.md", ws.root / "gone.md", lambda raw: raw)


def test_create_never_overwrites(ws: Workspace) -> None:
    target = ws.root / "sub" / "new.md"
    sha = create_new(ws, "sub/new.md", target, b"# New\n")
    assert target.read_bytes() == b"# New\n" and sha == sha256_hex(b"# New\n")
    with pytest.raises(AlreadyExists):
        create_new(ws, "sub/new.md", target, b"other")
    assert target.read_bytes() == b"# New\n"
    assert _litter(target.parent) == []


def test_move_and_delete_check_the_hash_right_before_acting(ws: Workspace) -> None:
    src = ws.root / "a.md"
    src.write_bytes(b"A")
    with pytest.raises(Conflict):
        move_file(ws, "a.md", src, "b.md", ws.root / "b.md", sha256_hex(b"stale"))
    assert src.exists() and not (ws.root / "b.md").exists()
    (ws.root / "taken.md").write_bytes(b"T")
    with pytest.raises(AlreadyExists):
        move_file(ws, "a.md", src, "taken.md", ws.root / "taken.md", sha256_hex(b"A"))
    assert (ws.root / "taken.md").read_bytes() == b"T"
    move_file(ws, "a.md", src, "d/b.md", ws.root / "d" / "b.md", sha256_hex(b"A").upper())
    assert (ws.root / "d" / "b.md").read_bytes() == b"A" and not src.exists()
    with pytest.raises(Conflict):
        delete_file(ws, "d/b.md", ws.root / "d" / "b.md", sha256_hex(b"B"))
    delete_file(ws, "d/b.md", ws.root / "d" / "b.md", sha256_hex(b"A"))
    assert not (ws.root / "d" / "b.md").exists()


HOLDER = """
import sys, time
from pathlib import Path
from local_vector_search_mcp import writer
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.workspace import Workspace

root, marker, release = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
ws = Workspace(load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=root.parent, environ={}))
with writer.write_lock(ws):
    marker.write_text("holding")
    while not release.exists():
        time.sleep(0.01)
    marker.unlink()  # before the lock goes: whoever gets it next must find no marker
"""


@pytest.mark.parametrize("removed", ["state folder", "lock file"])
def test_the_write_lock_holds_when_its_file_is_deleted_under_its_holder(
    ws: Workspace, tmp_path: Path, removed: str
) -> None:
    """Deleting `.local-vector-search-mcp` (or its write.lock) while another process held the lock
    let this one create a new lock file and write alongside it (decision 525)."""
    import shutil
    import subprocess
    import sys

    from local_vector_search_mcp.writer import write_lock

    marker, release = tmp_path / "holding", tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ws.root), str(marker), str(release)])
    try:
        for _ in range(3000):
            if marker.exists() or holder.poll() is not None:
                break
            time.sleep(0.01)
        assert marker.exists(), "the holder never took the lock"
        if removed == "state folder":
            shutil.rmtree(ws.state_dir)
        else:
            (ws.state_dir / "write.lock").unlink()
        seen: list[bool] = []

        def take() -> None:
            with write_lock(ws) as intent:
                seen.append(marker.exists())  # True: two writers at once
                intent.note(tmp=ws.root / ".a.md.0123456789ab.tmp")

        taker = threading.Thread(target=take)
        taker.start()
        taker.join(0.5)  # long enough for a split lock to be taken; a held one keeps it waiting
        release.write_text("go")
        taker.join(30)
        assert seen == [False]
        assert b".a.md.0123456789ab.tmp" in (ws.state_dir / "write.lock").read_bytes()  # noted where recover() reads
    finally:
        release.write_text("go")
        holder.wait(30)


@pytest.mark.parametrize("stem", ["z" * 252, "я" * 126, "é" * 100 + "z" * 52])
def test_a_document_whose_name_fills_the_file_name_limit_can_be_created_and_edited(ws: Workspace, stem: str) -> None:
    """Decision 700: the temporary file beside a document is named after it, and a name of 238 to
    255 bytes gave a temporary name over the file system's 255 (ENAMETOOLONG): such a document
    (valid, and reachable by kb_move, which renames without a temporary file) could be neither
    created nor edited, and the refusal blamed the file system (PERMISSION_DENIED)."""
    from local_vector_search_mcp.writer import is_temp_name, temp_path

    name = f"{stem}.md"
    assert len(name.encode()) in (254, 255)
    target = ws.root / name
    create_new(ws, name, target, b"# A\n")
    data, _ = mutate(ws, name, target, lambda raw: raw + b"\nmore\n")
    assert target.read_bytes() == data == b"# A\n\nmore\n"
    assert _litter(ws.root) == []
    tmp = temp_path(target)
    assert tmp.parent == ws.root and len(tmp.name.encode()) <= 255 and is_temp_name(tmp.name)
    assert tmp.name.startswith(f".{name[:10]}")  # still says whose it is


# ------------------------------------------------------------ a link swapped in mid-write (decision 674)


@pytest.fixture
def swap(ws: Workspace, tmp_path: Path) -> LinkSwap:
    return LinkSwap.of_sub(ws.root, tmp_path)


def test_an_edit_lands_in_the_checked_folder_when_a_link_takes_its_name(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws.root / "sub" / "doc.md").write_bytes(b"old\n")
    (swap.outside / "doc.md").write_bytes(b"old\n")  # the same bytes: the compare-and-swap alone would pass
    swap.arm(monkeypatch)
    mutate(ws, "sub/doc.md", ws.root / "sub" / "doc.md", lambda raw: b"new\n")
    assert swap.done
    assert (swap.real / "doc.md").read_bytes() == b"new\n"
    assert swap.outside_names() == ["doc.md"] and (swap.outside / "doc.md").read_bytes() == b"old\n"


def test_a_create_lands_in_the_checked_folder_when_a_link_takes_its_name(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    swap.arm(monkeypatch)
    create_new(ws, "sub/new.md", ws.root / "sub" / "new.md", b"# New\n")
    assert swap.done
    assert (swap.real / "new.md").read_bytes() == b"# New\n"
    assert swap.outside_names() == []


def test_a_move_lands_in_the_checked_folder_when_a_link_takes_its_name(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws.root / "a.md").write_bytes(b"# A\n")
    swap.arm(monkeypatch)
    move_file(ws, "a.md", ws.root / "a.md", "sub/a.md", ws.root / "sub" / "a.md", sha256_hex(b"# A\n"))
    assert swap.done
    assert (swap.real / "a.md").read_bytes() == b"# A\n"
    assert swap.outside_names() == []


def test_a_delete_removes_the_checked_file_when_a_link_takes_its_folders_name(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws.root / "sub" / "doc.md").write_bytes(b"same\n")
    (swap.outside / "doc.md").write_bytes(b"same\n")
    swap.arm(monkeypatch)
    delete_file(ws, "sub/doc.md", ws.root / "sub" / "doc.md", sha256_hex(b"same\n"))
    assert swap.done
    assert not (swap.real / "doc.md").exists()
    assert (swap.outside / "doc.md").read_bytes() == b"same\n"


def test_a_moves_rewrites_land_in_the_checked_folder_when_a_link_takes_its_name(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws.root / "a.md").write_bytes(b"# A\n")
    (ws.root / "sub" / "r.md").write_bytes(b"[a](../a.md)\n")
    (swap.outside / "r.md").write_bytes(b"[a](../a.md)\n")
    swap.arm(monkeypatch)
    rewrites = {"sub/r.md": (ws.root / "sub" / "r.md", b"[a](../a.md)\n", b"[a](../b.md)\n")}
    move_with_rewrites(ws, ("a.md", ws.root / "a.md", "b.md", ws.root / "b.md", ""), None, rewrites)
    assert swap.done
    assert (swap.real / "r.md").read_bytes() == b"[a](../b.md)\n"
    assert (ws.root / "b.md").read_bytes() == b"# A\n"
    assert swap.outside_names() == ["r.md"] and (swap.outside / "r.md").read_bytes() == b"[a](../a.md)\n"


def test_a_link_on_the_way_at_write_time_is_invalid_path_and_nothing_is_written(
    ws: Workspace, swap: LinkSwap, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Swapped after the tool's look but before the write opened its folder: refused, not followed."""
    (ws.root / "sub" / "doc.md").write_bytes(b"old\n")
    (swap.outside / "doc.md").write_bytes(b"old\n")

    def plan(raw: bytes) -> bytes:
        swap.swap()  # between the read the edit was planned on and the commit
        return b"new\n"

    with pytest.raises(InvalidPath, match="symbolic links are not followed"):
        mutate(ws, "sub/doc.md", ws.root / "sub" / "doc.md", plan)
    assert (swap.outside / "doc.md").read_bytes() == b"old\n"
    assert (swap.real / "doc.md").read_bytes() == b"old\n"
    assert swap.outside_names() == ["doc.md"]


def test_a_call_cancelled_while_another_write_holds_the_lock_writes_nothing(ws: Workspace) -> None:
    """Decision 706: a kb_move its client cancelled while it planned or waited for the lock went
    on and moved the file, and MCP sends no answer to a cancelled call, so the client never
    heard of the move it had called off."""
    from local_vector_search_mcp import progress
    from local_vector_search_mcp.writer import write_lock

    source = ws.root / "a.md"
    source.write_bytes(b"# A\n")
    call = progress.Call()
    outcome: list[BaseException | str] = []

    def move() -> None:
        with progress.running(call):
            try:
                move_file(ws, "a.md", source, "b.md", ws.root / "b.md", sha256_hex(b"# A\n"))
                outcome.append("moved")
            except BaseException as exc:
                outcome.append(exc)

    with write_lock(ws):  # another write holds the lock while the client cancels
        mover = threading.Thread(target=move)
        mover.start()
        time.sleep(0.2)
        assert not outcome  # waiting for the lock
        call.cancel()
    mover.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], progress.Cancelled), outcome
    assert source.read_bytes() == b"# A\n" and not (ws.root / "b.md").exists()
    move_file(ws, "a.md", source, "b.md", ws.root / "b.md", sha256_hex(b"# A\n"))  # not cancelled: it moves
    assert (ws.root / "b.md").read_bytes() == b"# A\n"


class _SaveBeforeLink:
    """``os`` for the writer whose first ``link`` (the move's target) lets an editor save ``target``
    by renaming a new file over it first, as vim does."""

    def __init__(self, target: Path, data: bytes) -> None:
        self.target, self.data, self.saved = target, data, False

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def link(self, src: object, dst: object, *args: object, **kwargs: object) -> None:
        if not self.saved:
            self.saved = True
            fresh = self.target.with_name(self.target.name + ".swp")
            fresh.write_bytes(self.data)
            os.rename(fresh, self.target)
        os.link(src, dst, *args, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("own_links", [False, True], ids=["same bytes", "own links rewritten"])
def test_a_save_of_the_source_while_a_move_with_rewrites_runs_is_kept(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, own_links: bool
) -> None:
    """Decision 979: the move unlinked the source's name after staging and swapping the linking
    notes (milliseconds), deleting an editor's save made over it meanwhile, and answered ok."""
    import local_vector_search_mcp.writer as writer

    (ws.root / "a.md").write_bytes(b"# A\n\n[c](c.md)\n")
    note = ws.root / "n.md"
    note.write_bytes(b"[a](a.md)\n")
    (ws.root / "sub").mkdir()
    monkeypatch.setattr(writer, "os", _SaveBeforeLink(ws.root / "a.md", b"# A\n\nthe editor's save\n"))
    move = ("a.md", ws.root / "a.md", "sub/a.md", ws.root / "sub" / "a.md", sha256_hex(b"# A\n\n[c](c.md)\n"))
    moved = b"# A\n\n[c](../c.md)\n" if own_links else None
    with pytest.raises(Conflict, match=r"'a\.md'"):
        writer.move_with_rewrites(ws, move, moved, {"n.md": (note, b"[a](a.md)\n", b"[a](sub/a.md)\n")})
    assert (ws.root / "a.md").read_bytes() == b"# A\n\nthe editor's save\n"
    assert not (ws.root / "sub" / "a.md").exists() and note.read_bytes() == b"[a](a.md)\n"
    assert _litter(ws.root) == [] and _litter(ws.root / "sub") == []


def test_a_save_of_the_source_while_a_plain_move_runs_is_kept(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    import local_vector_search_mcp.writer as writer

    class SaveAfterLink(_SaveBeforeLink):
        def link(self, src: object, dst: object, *args: object, **kwargs: object) -> None:
            os.link(src, dst, *args, **kwargs)  # type: ignore[arg-type]
            if not self.saved:  # between the link and the removal of the old name
                self.saved = True
                fresh = self.target.with_name(self.target.name + ".swp")
                fresh.write_bytes(self.data)
                os.rename(fresh, self.target)

    (ws.root / "a.md").write_bytes(b"# A\n")
    monkeypatch.setattr(writer, "os", SaveAfterLink(ws.root / "a.md", b"# A saved\n"))
    with pytest.raises(Conflict, match="saved by another program"):
        move_file(ws, "a.md", ws.root / "a.md", "b.md", ws.root / "b.md", sha256_hex(b"# A\n"))
    assert (ws.root / "a.md").read_bytes() == b"# A saved\n" and not (ws.root / "b.md").exists()
    assert _litter(ws.root) == []


def test_recovery_after_a_kill_while_the_old_name_was_renamed_away(ws: Workspace) -> None:
    """Decision 979: killed between renaming the source away and removing it, recovery removes the
    renamed source when the target holds it, and puts another program's save back under its name."""
    import local_vector_search_mcp.writer as writer
    from local_vector_search_mcp.writer import recover

    # the move's own bytes renamed away, the target linked: the move finishes
    (ws.root / "b.md").write_bytes(b"# A\n")
    taken = ws.root / ".a.md.0123456789ab.tmp"
    os.link(ws.root / "b.md", taken)
    with writer.write_lock(ws) as intent:
        intent.note(source=ws.root / "a.md", target=ws.root / "b.md", taken=taken)
    recover(ws)
    assert sorted(p.name for p in ws.root.iterdir() if p.suffix == ".md" or p.suffix == ".tmp") == ["b.md"]
    # an editor's save renamed away with it: back at the old name
    taken.write_bytes(b"# A saved\n")
    with writer.write_lock(ws) as intent:
        intent.note(source=ws.root / "a.md", target=ws.root / "b.md", taken=taken)
    assert "put back another program's save of a.md" in recover(ws)
    assert (ws.root / "a.md").read_bytes() == b"# A saved\n" and not taken.exists()


def test_a_document_made_a_folder_under_a_move_or_a_delete_is_named_a_folder(ws: Workspace) -> None:
    """Decision 930 for moves and deletes (session 28 sweep): the source made a folder after the
    handler checked it reached the agent as INTERNAL_ERROR (IsADirectoryError reading it under
    the lock)."""
    target = ws.root / "a.md"
    target.mkdir()  # checked as a file by the handler a moment before
    sha = sha256_hex(b"# A\n")
    with pytest.raises(InvalidArgument, match="is a folder"):
        move_file(ws, "a.md", target, "b.md", ws.root / "b.md", sha)
    with pytest.raises(InvalidArgument, match="is a folder"):
        move_with_rewrites(ws, ("a.md", target, "b.md", ws.root / "b.md", sha), None, {})
    with pytest.raises(InvalidArgument, match="is a folder"):
        delete_file(ws, "a.md", target, sha)
    assert target.is_dir() and not (ws.root / "b.md").exists() and _litter(ws.root) == []


def test_a_document_made_a_folder_right_before_the_swap_is_replanned_not_a_write_failure(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-read right before the swap met the folder: PERMISSION_DENIED "(Is a directory)"."""
    import local_vector_search_mcp.writer as writer

    target = ws.root / "a.md"
    target.write_bytes(b"v1")

    class FolderBeforeSwap:
        made = False

        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        def fsync(self, fd: int) -> None:
            os.fsync(fd)
            if not self.made:  # the temporary file is written: another program makes a folder there
                self.made = True
                target.unlink()
                target.mkdir()

    monkeypatch.setattr(writer, "os", FolderBeforeSwap())
    with pytest.raises(InvalidArgument, match="is a folder"):
        mutate(ws, "a.md", target, lambda raw: raw + b"+edit")
    assert target.is_dir() and _litter(ws.root) == []


@pytest.mark.parametrize("own_links", [False, True], ids=["same bytes", "own links rewritten"])
def test_a_folder_made_at_the_source_while_it_is_moved_stays_where_it_was_made(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, own_links: bool
) -> None:
    """Review of 979: the old name renamed away could be a folder another program made there
    meanwhile; it was hidden under a temporary name, could not be linked back, and the move was
    left half done. It goes back under its name and the move answers that it is a folder."""
    import local_vector_search_mcp.writer as writer

    source = ws.root / "a.md"
    source.write_bytes(b"# A\n\n[c](c.md)\n")
    note = ws.root / "n.md"
    note.write_bytes(b"[a](a.md)\n")
    (ws.root / "sub").mkdir()

    class FolderBeforeRename:
        made = False

        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        def rename(self, a: object, b: object) -> None:
            if not self.made and str(a).endswith("a.md"):
                self.made = True
                os.unlink(source)
                source.mkdir()
                (source / "inside.md").write_bytes(b"# kept\n")
            os.rename(a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(writer, "os", FolderBeforeRename())
    move = ("a.md", source, "sub/a.md", ws.root / "sub" / "a.md", sha256_hex(b"# A\n\n[c](c.md)\n"))
    moved = b"# A\n\n[c](../c.md)\n" if own_links else None
    with pytest.raises(InvalidArgument, match="is a folder"):
        writer.move_with_rewrites(ws, move, moved, {"n.md": (note, b"[a](a.md)\n", b"[a](sub/a.md)\n")})
    assert (source / "inside.md").read_bytes() == b"# kept\n" and note.read_bytes() == b"[a](a.md)\n"
    assert not (ws.root / "sub" / "a.md").exists() and _litter(ws.root) == []
