"""A folder the operating system refuses to list: skipped and named, everything else still served.

Tests run as root on CI, and root lists every folder; the calls under test therefore run in a
child process without the capabilities that let root ignore permissions (``setpriv``), so the
refusal is the kernel's own EACCES, not an injected one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from local_vector_search_mcp.cli import main as cli_main

DROP = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
pytestmark = pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root without setpriv cannot be refused a folder"
)


def _unprivileged(args: list[str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, *args]
    return subprocess.run(
        DROP + command if os.geteuid() == 0 else command, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    for rel, text in {
        "a.md": "# A\n\nalpha\n",
        "secret/b.md": "# B\n\nbravo hidden words\n",
        "secret/sub/c.md": "# C\n\ncharlie\n",
        "open/d.md": "# D\n\ndelta\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    return root


@contextmanager
def _refused(folder: Path) -> Iterator[None]:
    """``folder`` unlistable (mode 0) for the block, listable again after it."""
    folder.chmod(0)
    try:
        yield
    finally:
        folder.chmod(0o755)


def _cli(root: Path, *rest: str) -> list[str]:
    args = ["-m", "local_vector_search_mcp", "--root", str(root), "--project-root", str(root.parent)]
    return [*args, "--embedding-provider", "none", *rest]


def test_list_files_skips_and_names_a_folder_it_cannot_list(kb: Path) -> None:
    with _refused(kb / "secret"):
        done = _unprivileged(_cli(kb, "call", "kb_list_files"))
    assert done.returncode == 0, done.stderr  # was: PERMISSION_DENIED for the whole listing
    result = json.loads(done.stdout)
    assert [f["relativePath"] for f in result["files"]] == ["a.md", "open/d.md"]
    assert result["skippedFolders"] == 1
    assert result["skipped"] == [{"path": "secret", "reason": "the folder could not be listed (Permission denied)"}]


def test_a_path_in_a_folder_it_cannot_look_into_is_permission_denied(kb: Path) -> None:
    """Decision 1030: a safe path under a folder without search permission was INVALID_PATH ("it
    cannot be inspected"), which tells the agent the path is unsafe; an unreadable file already
    gets PERMISSION_DENIED. kb_list_files, which does not list that code, names the folder skipped."""
    with _refused(kb / "secret"):
        read = _unprivileged(_cli(kb, "call", "kb_read", "--path", "secret/sub/c.md"))
        listed = _unprivileged(_cli(kb, "call", "kb_list_files", "--path-prefix", "secret/sub"))
    assert read.returncode == 1
    assert json.loads(read.stderr.strip().splitlines()[-1]) == {
        "code": "PERMISSION_DENIED",
        "message": "The operating system refused to look into a folder on the way to 'secret/sub/c.md' "
        "(Permission denied).",
    }
    assert listed.returncode == 0, listed.stderr
    result = json.loads(listed.stdout)
    assert result["files"] == [] and result["skipped"] == REFUSED


def test_a_reindex_reports_the_folder_and_keeps_its_documents(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(_cli(kb, "--reindex")[2:]) == 0
    capsys.readouterr()
    with _refused(kb / "secret"):
        done = _unprivileged(_cli(kb, "--reindex"))
        status = _unprivileged(_cli(kb, "--status"))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # was: the folder's documents silently deleted from the index, as if the files were gone
    assert result["deletedFiles"] == 0 and result["unreadableFiles"] == 1
    assert result["unreadable"] == [
        {"path": "secret/", "reason": "The folder could not be listed (Permission denied)."}
    ]
    project: dict[str, Any] = json.loads(status.stdout)["project"]
    assert project["documents"] == 4 and [u["path"] for u in project["unreadable"]] == ["secret/"]
    assert cli_main(_cli(kb, "call", "kb_search", "--query", "bravo", "--mode", "lexical")[2:]) == 0
    assert [hit["path"] for hit in json.loads(capsys.readouterr().out)["results"]] == ["secret/b.md"]
    # listable again: the next reindex forgets the report
    assert cli_main(_cli(kb, "--reindex")[2:]) == 0
    assert json.loads(capsys.readouterr().out)["unreadableFiles"] == 0
    assert cli_main(_cli(kb, "--status")[2:]) == 0
    assert json.loads(capsys.readouterr().out)["project"]["unreadable"] == []


WATCHER_CHILD = textwrap.dedent(
    """
    import json, sys
    from types import SimpleNamespace
    from pathlib import Path
    from local_vector_search_mcp.index.sync import SyncQueue
    from local_vector_search_mcp.index.watcher import MarkdownWatcher

    queue = SyncQueue(lambda path: None)
    scheduled = []
    queue.schedule = lambda paths: scheduled.extend(paths)
    watcher = MarkdownWatcher(Path(sys.argv[1]), queue, lambda rel: True, lambda prefix: [])
    event = SimpleNamespace(event_type="moved", is_directory=True, src_path=sys.argv[2], dest_path=sys.argv[3])
    watcher._on_event(event)
    status = queue.status()
    print(json.dumps({"pending": sorted(watcher._pending), "paths": status.paths if status else [],
                      "error": status.last_error if status else None}))
    """
)


def test_the_watcher_names_a_moved_in_folder_it_cannot_list(kb: Path, tmp_path: Path) -> None:
    (kb / "secret").rename(kb / "moved")
    with _refused(kb / "moved"):
        done = _unprivileged(["-c", WATCHER_CHILD, str(kb), str(tmp_path / "elsewhere"), str(kb / "moved")])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["pending"] == []  # nothing it could see
    assert report["paths"] == ["moved/"] and "could not be listed (Permission denied)" in report["error"]


def _link_kb(kb: Path) -> None:
    (kb / "open/d.md").write_text("# D\n\ndelta, see [A](../a.md) and ![pic](../pic.png)\n", "utf-8")
    (kb / "secret/b.md").write_text("# B\n\nbravo, see [A](../a.md) and ![pic](../pic.png)\n", "utf-8")
    (kb / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _move_args(kb: Path) -> list[str]:
    sha = _sha(kb / "a.md")
    return ["--source-path", "a.md", "--target-path", "new/a.md", "--expected-source-hash", sha, "--update-links"]


REFUSED = [{"path": "secret", "reason": "the folder could not be listed (Permission denied)"}]


def test_a_move_that_updates_links_names_the_folder_it_could_not_search(kb: Path) -> None:
    _link_kb(kb)
    with _refused(kb / "secret"):
        done = _unprivileged(_cli(kb, "--allow-writes", "call", "kb_move", *_move_args(kb)))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["updatedPaths"] == ["open/d.md"]
    # was: no word that secret/b.md was never searched, and its link to a.md is now broken
    assert result["skippedFolders"] == 1 and result["skipped"] == REFUSED
    assert (kb / "secret/b.md").read_text("utf-8").count("](../a.md)") == 1


def test_an_image_move_that_updates_links_names_the_folder_it_could_not_search(kb: Path) -> None:
    _link_kb(kb)
    with _refused(kb / "secret"):
        image = ["--source-path", "pic.png", "--target-path", "img/pic.png", "--update-links"]
        done = _unprivileged(_cli(kb, "--allow-writes", "call", "kb_move_image", *image))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["updatedPaths"] == ["open/d.md"]
    assert result["skippedFolders"] == 1 and result["skipped"] == REFUSED


def test_a_move_without_a_refused_folder_reports_none(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _link_kb(kb)
    assert cli_main(_cli(kb, "--allow-writes", "call", "kb_move", *_move_args(kb))[2:]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["skippedFolders"] == 0 and result["skipped"] == []
    assert result["updatedPaths"] == ["open/d.md", "secret/b.md"]


def test_the_links_check_names_the_folder_it_searched_embeds_in_and_could_not_list(
    kb: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "a.md").write_text("# A\n\n![[found.png]] and ![[hidden.png]]\n", "utf-8")
    (kb / "open/found.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    (kb / "secret/hidden.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    assert cli_main(_cli(kb, "--reindex")[2:]) == 0
    capsys.readouterr()
    with _refused(kb / "secret"):
        done = _unprivileged(_cli(kb, "call", "kb_links"))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [m["target"] for m in result["missingImages"]] == ["hidden.png"]
    # was: reported missing with no word that a folder it may be in could not be searched
    assert result["skippedFolders"] == 1 and result["skipped"] == REFUSED
