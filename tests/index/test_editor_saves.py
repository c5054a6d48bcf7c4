"""Following other editors, part 2 (H49): the save patterns of real editors and tools, with the
real watcher. After each, the index equals a fresh reindex of the disk and what a reindex or a
restart's catch-up finds agrees with what the watcher did (spec/decisions.md 460-464). The harness
is ``tests/churn.py``; waits are bounded polls.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from churn import Churn, make_corpus, note
from kb_fakes import make_workspace

from local_vector_search_mcp.dispatch import invoke

PATTERN_FILES = ("._n0.md", ".n0.md", ".n0.md.swp", "n0.md~", "n0.md.tmp", "#n0.md#", "4913", "n0.md___jb_old___")


def _catch_up(churn: Churn) -> list[str]:
    """What a restart's catch-up would queue (decision 205)."""
    return churn.ws.indexing.indexer.changed_paths() or []


def test_editors_lock_swap_and_backup_files_are_not_documents(churn: Churn) -> None:
    """emacs' lock `.#n0.md` (a link to a target that does not exist), macOS' `._n0.md`, swap,
    backup and temporary names: neither the watcher, nor a reindex, nor a restart's catch-up
    indexes or reports them (before, the watcher left dot files out but the reindex indexed
    `._n0.md` and reported the lock as an unreadable link)."""
    folder = churn.root / "notes"
    os.symlink("user@host.4242:1700000000", folder / ".#n0.md")
    for name in PATTERN_FILES:
        (folder / name).write_text(note("Temp", "tempword sigma"), encoding="utf-8")
    churn.converge()
    assert _catch_up(churn) == []
    result = churn.ws.indexing.reindex("changed")
    assert (result.indexed_files, result.unreadable_files) == (0, 0), result
    churn.converge()
    churn.check_clean()
    assert churn.search_paths("tempword") == []


def test_a_dot_file_indexed_by_an_older_version_goes_at_the_next_start(churn: Churn) -> None:
    """An index made before decision 460 holds `._n0.md`; the catch-up of a start drops it."""
    hidden = churn.root / "notes" / "._n0.md"
    hidden.write_text(note("Junk", "applejunk tau"), encoding="utf-8")
    churn.converge()
    prepared = churn.ws.indexing.indexer  # store it as an older reindex did
    from local_vector_search_mcp.index.prepare import ChunkSettings, Task, prepare

    outcome = prepare(churn.root, Task("notes/._n0.md", None), ChunkSettings.from_config(prepared.config))
    prepared.store_prepared(outcome)  # type: ignore[arg-type]
    assert churn.search_paths("applejunk") == ["notes/._n0.md"]
    assert _catch_up(churn) == ["notes/._n0.md"]
    churn.ws.indexing.sync.schedule(_catch_up(churn))
    churn.converge()
    assert churn.search_paths("applejunk") == []


def test_a_folder_swapped_for_a_link_loses_its_documents(churn: Churn, tmp_path: Path) -> None:
    """A real folder moved away and a link put in its place (a dotfiles manager, a synced folder
    re-pointed): a reindex never follows the link, so the documents under the old folder go; the
    watcher's sync read them through the link and kept them (ghosts kb_read refuses)."""
    root = churn.root
    (root / "notes").rename(tmp_path / "notes-real")
    os.symlink(tmp_path / "notes-real", root / "notes")
    churn.converge()
    churn.check_clean()
    assert churn.search_paths("word0") == []
    assert _catch_up(churn) == []
    # and a link swapped for another one, then for the real folder again
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "o.md").write_text(note("Other", "otherword phi"), encoding="utf-8")
    os.symlink(tmp_path / "other", root / "notes.new")
    os.replace(root / "notes.new", root / "notes")
    churn.converge()
    (root / "notes").unlink()
    (tmp_path / "notes-real").rename(root / "notes")
    churn.converge()
    churn.check_clean()
    assert churn.search_paths("word0") == ["notes/n0.md"]
    assert churn.search_paths("otherword") == []


def test_an_unreadable_file_deleted_while_no_server_watched_is_forgotten_at_start(tmp_path: Path) -> None:
    """A file recorded unreadable (a link named `.md`) and then deleted while no server ran: the
    catch-up queues it, so kb_status stops naming a file that is not there (before, it stayed
    until the next reindex)."""
    root = make_corpus(tmp_path / "kb", files=3)
    os.symlink("n0.md", root / "notes" / "pointer.md")
    ws = make_workspace(root)
    try:
        assert ws.indexing.reindex("changed").unreadable_files == 1
        (root / "notes" / "pointer.md").unlink()
        assert ws.indexing.indexer.changed_paths() == ["notes/pointer.md"]
        ws.indexing.sync.schedule(["notes/pointer.md"])
        assert ws.indexing.sync.wait_idle(30)
        assert ws.store.unreadable_files() == {}
        assert ws.indexing.indexer.changed_paths() == []
    finally:
        ws.close()


def test_a_same_size_copy_keeping_the_old_mtime_is_found_by_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cp -p`, rsync or an archive whose files all carry one fixed mtime: a new version of the
    same size lands with the mtime of the indexed one while no server watches. Size and mtime
    are equal; the ctime is not, and the stamp compared is the later of the two (decision 463)."""
    from local_vector_search_mcp.index import prepare

    monkeypatch.setattr(prepare, "RACY_NS", 0)  # indexed long after the copy (no racy smudge)
    root = make_corpus(tmp_path / "kb", files=3)
    fixed = 1_000_000_000 * 10**9
    source = tmp_path / "release.md"
    target = root / "notes" / "n0.md"
    source.write_text(note("Release", "version111 notes"), encoding="utf-8")
    os.utime(source, ns=(fixed, fixed))
    shutil.copy2(source, target)
    ws = make_workspace(root)
    try:
        ws.indexing.reindex("changed")
        assert ws.indexing.indexer.changed_paths() == []
        time.sleep(0.05)  # past one tick of the kernel's clock
        source.write_text(note("Release", "version112 notes"), encoding="utf-8")  # same size
        os.utime(source, ns=(fixed, fixed))
        shutil.copy2(source, target)
        assert (target.stat().st_size, target.stat().st_mtime_ns) == (source.stat().st_size, fixed)
        assert ws.indexing.indexer.changed_paths() == ["notes/n0.md"]
        assert ws.indexing.reindex("changed").indexed_files == 1
        found = invoke(ws, "kb_search", {"request": {"query": "version112", "mode": "lexical"}})
        assert {hit["path"] for hit in found["results"]} == {"notes/n0.md"}
    finally:
        ws.close()
