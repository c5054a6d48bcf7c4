"""The page mapping's journal: a push costs one line per document, and a killed push resumes (decision 860)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from local_vector_search_mcp.notion.blocks import convert
from local_vector_search_mcp.notion.push import Mapping, PageEntry

from .fake_notion import PARENT, TOKEN, FakeNotion, Fault
from .test_push import push


def _entry(i: int) -> PageEntry:
    return PageEntry(f"page-{i:05d}", f"Title {i}", "ab" * 32, [(f"block-{i}-{j}", "cd" * 16) for j in range(50)])


def test_recording_a_document_appends_to_the_journal_and_leaves_the_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "notion-pages.json"
    mapping = Mapping(path)
    mapping.pages(PARENT).update({f"doc-{i}.md": _entry(i) for i in range(2000)})
    mapping.compact()
    before = path.stat()
    assert before.st_size > 3_000_000  # the size a large knowledge base's mapping reaches

    mapping.pages(PARENT)["new.md"] = _entry(9999)
    mapping.record(PARENT, "new.md")
    del mapping.pages(PARENT)["doc-7.md"]
    mapping.record(PARENT, "doc-7.md")

    # Rewriting the whole snapshot per document made the push quadratic; the journal grows by
    # the documents that changed only.
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert mapping.journal.stat().st_size < 10_000

    again = Mapping(path)  # the next push (or this one, reopened after a crash) replays the journal
    assert again.pages(PARENT)["new.md"] == _entry(9999)
    assert "doc-7.md" not in again.pages(PARENT) and len(again.pages(PARENT)) == 2000
    assert not again.journal.exists()
    assert json.loads(path.read_text(encoding="utf-8"))["parents"][PARENT]["new.md"]["pageId"] == "page-09999"


def test_a_torn_last_journal_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "notion-pages.json"
    mapping = Mapping(path)
    mapping.pages(PARENT)["a.md"] = _entry(1)
    mapping.record(PARENT, "a.md")
    with open(mapping.journal, "a", encoding="utf-8") as out:
        out.write('{"parent": "' + PARENT + '", "path": "b.md", "ent')  # the process died mid-write
    mapping.pages(PARENT)["c.md"] = _entry(3)  # a later push appends after the torn line
    mapping.record(PARENT, "c.md")
    assert sorted(Mapping(path).pages(PARENT)) == ["a.md", "c.md"]


def test_a_dry_run_replays_the_journal_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "notion-pages.json"
    Mapping(path).compact()
    writer = Mapping(path)
    writer.pages(PARENT)["a.md"] = _entry(1)
    writer.record(PARENT, "a.md")
    journal = writer.journal.read_bytes()
    dry = Mapping(path, persist=False)
    assert dry.pages(PARENT)["a.md"] == _entry(1)
    dry.compact()
    assert writer.journal.read_bytes() == journal


MANY = {
    f"doc-{i:03d}.md": f"# Doc {i}\n\n" + "".join(f"Paragraph {j} of {i}.\n\n" for j in range(30)) for i in range(80)
}


def test_a_push_killed_midway_is_resumed_without_duplicates(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed (SIGKILL: no cleanup runs) right after Notion made the 21st page, before its id reached disk."""
    for name, text in MANY.items():
        (kb / name).write_text(text, encoding="utf-8")
    procs: list[subprocess.Popen[bytes]] = []
    creations = [0]

    def kill_at_the_21st_creation(method: str, path: str) -> bool:
        if method == "POST" and path == "/v1/pages":
            creations[0] += 1
            if creations[0] == 21:
                procs[0].send_signal(signal.SIGKILL)
                return True
        return False

    # applied: the page is made, the answer never arrives (the client is gone anyway)
    notion.faults.append(Fault(0, applied=True, when=kill_at_the_21st_creation))
    args = ["--project-root", str(kb.parent), "--root", "kb", "--config", "config.yaml", "notion", "push"]
    procs.append(
        subprocess.Popen(
            [sys.executable, "-m", "local_vector_search_mcp", *args],
            cwd=kb.parent,
            env={**os.environ, "NOTION_TOKEN": TOKEN},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    )
    try:
        assert procs[0].wait(timeout=120) == -signal.SIGKILL
    finally:
        if procs[0].poll() is None:
            procs[0].kill()
            procs[0].wait()
    state = kb.parent / ".local-vector-search-mcp"
    assert len(notion.pages) == 21 and (state / "notion-pages.json.journal").exists()

    code, report, err = push(kb, capsys)
    assert code == 0 and report["failed"] == [], err
    assert not (state / "notion-pages.json.journal").exists()
    assert len(notion.live_pages()) == len(MANY)  # the page made before the kill was adopted, not made twice
    pages = json.loads((state / "notion-pages.json").read_text(encoding="utf-8"))["parents"][PARENT]
    for name, text in MANY.items():
        assert notion.tree(pages[name]["pageId"]) == convert(text).blocks, name
    code, report, _ = push(kb, capsys)
    assert code == 0 and sorted(report["unchanged"]) == sorted(MANY)


def test_a_mapping_written_under_another_spelling_of_the_parent_is_found(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mapping an older version keyed by the id as given (no hyphens) must not cost a second copy."""
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    push(kb, capsys)
    path = kb.parent / ".local-vector-search-mcp" / "notion-pages.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["parents"] = {PARENT.replace("-", "").upper(): data["parents"][PARENT]}
    path.write_text(json.dumps(data), encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["created"] == [] and report["unchanged"] == ["a.md"]
    assert len(notion.pages) == 1
    assert list(json.loads(path.read_text(encoding="utf-8"))["parents"]) == [PARENT]


def test_the_spellings_of_one_parent_are_merged_the_normalised_one_first(tmp_path: Path) -> None:
    """Two spellings each with their own page of one document (the copies older versions made):
    the page under the normalised id is kept, the other stays recorded under its spelling."""
    compact, url = PARENT.replace("-", ""), "https://www.notion.so/Docs-" + PARENT.replace("-", "")
    path = tmp_path / "notion-pages.json"
    parents = {
        compact: {"a.md": _entry(1).to_json(), "b.md": _entry(2).to_json()},
        PARENT: {"a.md": _entry(3).to_json()},
        url: {"c.md": _entry(4).to_json()},
        "not-an-id": {"d.md": _entry(5).to_json()},
    }
    path.write_text(json.dumps({"version": 1, "parents": parents}), encoding="utf-8")
    with open(path.with_name(path.name + ".journal"), "w", encoding="utf-8") as out:  # an older push, killed
        out.write(json.dumps({"parent": compact, "path": "b.md", "entry": None}) + "\n")
    mapping = Mapping(path)
    assert mapping.pages(PARENT) == {"a.md": _entry(3), "c.md": _entry(4)}
    assert mapping.parents[compact] == {"a.md": _entry(1)}
    assert mapping.pages("not-an-id") == {"d.md": _entry(5)}
    assert sorted(Mapping(path).parents) == sorted([PARENT, compact, "not-an-id"])  # as compacted: stable


def test_uploads_and_links_survive_a_push_killed_before_the_snapshot(tmp_path: Path) -> None:
    """Decisions 1167, 1170: what a killed push journaled (uploads, links, anchors) is replayed."""
    path = tmp_path / "notion-pages.json"
    mapping = Mapping(path)
    entry = _entry(1)
    entry.links = {"b.md#part": "https://www.notion.so/abc#def", "c.md": ""}
    entry.anchors = {"intro": "block-1-0"}
    mapping.pages(PARENT)["a.md"] = entry
    mapping.record(PARENT, "a.md")
    mapping.record_upload("f" * 64, "upload-1")
    assert not path.exists()  # killed: no snapshot written, the journal holds it all
    again = Mapping(path)
    assert again.uploads == {"f" * 64: "upload-1"}
    assert again.pages(PARENT)["a.md"] == entry
    assert json.loads(path.read_text("utf-8"))["uploads"] == {"f" * 64: "upload-1"}  # compacted
