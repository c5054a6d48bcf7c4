"""A churn harness: a real :class:`Workspace` with the file watcher on, over a tmp corpus, while
"other editors" change the files and an agent calls tools (task H28, spec/decisions.md 320-329).

After a burst of external operations, :meth:`Churn.converge` waits (polling, bounded) until the
index equals a fresh reindex of the disk (documents, chunk texts, links), nothing is queued or
failed in ``kb_status.synchronization``, and no warning was logged; it raises with the
difference otherwise. :class:`Agent` calls read-only tools in a loop on files nobody else
touches and records every error it gets (there must be none).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kb_fakes import make_workspace

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.workspace import Workspace

INDEX_FOLDER = ".local-vector-search-mcp"
Snapshot = dict[str, tuple[str, tuple[str, ...], tuple[tuple[str, str, str | None, str | None], ...]]]


def note(title: str, words: str, links: tuple[str, ...] = ()) -> str:
    """A small Markdown document: a heading, a paragraph of ``words``, a section with links."""
    body = f"# {title}\n\n{words}\n\n## Details\n\nMore about {title.lower()} and {words.split()[0]}.\n"
    if links:
        body += "\n## See also\n\n" + "\n".join(f"- [{target}]({target})" for target in links) + "\n"
    return body


def make_corpus(root: Path, files: int = 24) -> Path:
    """``files`` notes in three folders, each with a unique word (``wordN``) and links to neighbours."""
    for i in range(files):
        folder = ("notes", "guides", "journal")[i % 3]
        (root / folder).mkdir(parents=True, exist_ok=True)
        links = (f"../{('notes', 'guides', 'journal')[(i + 1) % 3]}/n{i + 1}.md",) if i + 1 < files else ()
        (root / folder / f"n{i}.md").write_text(note(f"Note {i}", f"word{i} lorem ipsum", links), encoding="utf-8")
    (root / "agent").mkdir(exist_ok=True)
    (root / "agent" / "stable.md").write_text(note("Stable", "steadfast anchor text"), encoding="utf-8")
    return root


def snapshot(ws: Workspace) -> Snapshot:
    """What the index holds per document: source hash, chunk texts, links (in order)."""
    out: Snapshot = {}
    after: str | None = None
    while True:
        page = ws.store.export_documents(after, 500)
        if not page:
            return out
        for dump in page:
            links = tuple((link.kind, link.destination, link.text, link.anchor) for link in dump.links)
            out[dump.document.path] = (dump.document.source_hash, tuple(c.text for c in dump.chunks), links)
        after = page[-1].document.path


def fresh_snapshot(root: Path) -> Snapshot:
    """A full reindex of a copy of the disk as it is now, in a workspace of its own."""
    with tempfile.TemporaryDirectory(prefix="lvsm-churn-fresh-") as tmp:
        copy = Path(tmp) / "kb"
        shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(INDEX_FOLDER))
        ws = make_workspace(copy)
        try:
            ws.indexing.reindex("all")
            return snapshot(ws)
        finally:
            ws.close()


def diff(actual: Snapshot, expected: Snapshot) -> str:
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    stale = sorted(p for p in set(actual) & set(expected) if actual[p] != expected[p])
    return f"missing {missing[:10]}, extra {extra[:10]}, stale {stale[:10]}"


class Warnings(logging.Handler):
    """Every WARNING or worse the package logs while the harness runs."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


class Churn:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = make_workspace(root, knowledge_base__allow_writes=True)
        self.ws.indexing.reindex("all")
        self.warnings = Warnings()
        self._logger = logging.getLogger("local_vector_search_mcp")
        self._logger.addHandler(self.warnings)
        self.ws.indexing.start_watching()  # inotify watches are in place when it returns
        self._watching_ready()

    def _watching_ready(self, timeout: float = 10.0) -> None:
        """Bounded wait until the watcher demonstrably delivers events (a probe file round trip)."""
        probe = self.root / "agent" / "probe.md"
        probe.write_text(note("Probe", "probeword"), encoding="utf-8")
        self.converge(timeout)
        probe.unlink()
        self.converge(timeout)

    def call(self, tool: str, request: dict[str, Any] | None = None) -> Any:
        return invoke(self.ws, tool, {} if request is None else {"request": request})

    def search_paths(self, query: str) -> list[str]:
        result = self.call("kb_search", {"query": query, "mode": "lexical", "topK": 50})
        return sorted({hit["path"] for hit in result["results"]})

    def quiet(self) -> bool:
        """Nothing waits for its debounce nor is queued, running or failed, and no reindex runs. In this order: the
        watcher queues a path before it leaves its pending set."""
        watcher = self.ws.indexing.watcher
        pending = bool(watcher is not None and watcher._pending)
        # many paths settling at once go to one reindex instead of the queue (decision 741)
        running = self.ws.indexing.activity.current is not None
        return not pending and not running and self.ws.indexing.sync.status() is None

    def converge(self, timeout: float = 60.0) -> float:
        """Poll until the index equals a fresh reindex of the disk and nothing is queued or failed;
        returns the seconds it took. Raises AssertionError with the difference on timeout."""
        start = time.monotonic()
        expected = fresh_snapshot(self.root)
        actual: Snapshot = {}
        while time.monotonic() - start < timeout:
            if self.quiet():
                actual = snapshot(self.ws)
                if actual == expected and self.quiet():
                    return time.monotonic() - start
            time.sleep(0.1)
        state = self.ws.indexing.sync.status()
        raise AssertionError(f"index did not converge in {timeout} s: {diff(actual, expected)}; sync {state}")

    def check_clean(self) -> None:
        """kb_status shows no failure, nothing is left unreadable, and nothing was logged."""
        status = self.call("kb_status")
        assert status["synchronization"] is None, status["synchronization"]
        assert status["project"]["unreadableFiles"] == 0, status["project"]
        assert self.warnings.messages == [], self.warnings.messages

    def close(self) -> None:
        self._logger.removeHandler(self.warnings)
        self.ws.close()


class Agent:
    """Calls read-only tools in a loop (kb_search, kb_status, kb_read, kb_list_files) on a
    file no editor touches; every error it gets is recorded."""

    def __init__(self, churn: Churn) -> None:
        self.churn = churn
        self.errors: list[str] = []
        self.calls = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="churn-agent", daemon=True)

    def _run(self) -> None:
        steps: list[tuple[str, dict[str, Any] | None]] = [
            ("kb_search", {"query": "steadfast anchor", "mode": "lexical"}),
            ("kb_status", None),
            ("kb_read", {"path": "agent/stable.md"}),
            ("kb_list_files", {"pathPrefix": "agent"}),
        ]
        while not self._stop.is_set():
            for tool, request in steps:
                try:
                    result = self.churn.call(tool, request)
                    if tool == "kb_read" and "steadfast" not in result["markdown"]:
                        self.errors.append(f"{tool}: unexpected {result['markdown'][:80]!r}")
                except KbError as exc:
                    self.errors.append(f"{tool}: {exc.code} {exc.message}")
                except Exception as exc:  # an INTERNAL_ERROR on the wire
                    self.errors.append(f"{tool}: {type(exc).__name__}: {exc}")
                self.calls += 1
            time.sleep(0.01)

    @contextmanager
    def running(self) -> Iterator[Agent]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join(30)


def poll(condition: Callable[[], bool], timeout: float = 30.0, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()
