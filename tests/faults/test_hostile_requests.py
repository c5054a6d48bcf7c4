"""Requests generated from every tool's published JSON Schema, valid and mutated, against odd files.

Each request goes through the dispatcher exactly as an MCP call does, with
writes allowed, in a knowledge base full of odd files (odd_files.py). For
every one of them:

* the outcome is a result or a typed error, never INTERNAL_ERROR and never an
  exception (a traceback) escaping the dispatcher, never an ERROR log line;
* no byte changes in any file other than the one(s) the request names;
* no file outside the root is opened or listed (the audit hook).

The tree is restored after each example, so every request sees the same files.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fs_audit import touched
from hypothesis import given, note, settings
from hypothesis import strategies as st
from odd_files import build, restore, snapshot
from schema_requests import mutated, requests

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.workspace import Workspace

TOOLS = [spec.name for spec in dispatch.available_tools()]
# 22 properties share the run time: 60 examples each by default, 600 under HYPOTHESIS_PROFILE=long.
EXAMPLES = max(5, settings.default.max_examples * 3 // 10)
CREATE_ANYWHERE = {"kb_save_image"}  # without targetPath it picks the name itself
COUNTS: dict[str, dict[str, int]] = {}  # tool -> outcome ("ok" or an error code) -> count


class Setup:
    def __init__(self, base: Path) -> None:
        self.root = base / "kb"
        self.outside = base / "outside"
        self.files = build(self.root, self.outside)
        options = CliOptions(root=str(self.root), embedding_provider="none", allow_writes=True, watch_files=False)
        self.ws = Workspace(load_settings(options, cwd=self.root, environ={}))
        self.index = self.ws.indexing
        with contextlib.suppress(KbError):  # the requests below meet whatever index there is
            self.index.reindex("all")
        self.before = snapshot(self.root)
        self.hints = self._hints()

    def _hints(self) -> dict[str, st.SearchStrategy[Any]]:
        paths = [*sorted(self.files), "escape.md", "dangling.md", "folder.md", "fifo.md", "escape-dir/secret.md"]
        hostile = ["../outside/secret.md", "/etc/passwd.md", "guide/../../outside/secret.md", "C:/x.md", "a\x00.md"]
        pointers = ["document", "frontmatter", "1", "1.p1", "1.t1", "1.li1", "9.9.p9", "1~0~0", "~", "1.2.3.4.5.6"]
        hashes = []
        self.reads: dict[str, dict[str, Any]] = {}
        for rel in sorted(self.files):
            try:
                read = dispatch.invoke(self.ws, "kb_read", {"request": {"path": rel, "maxElements": 500}})
            except KbError:
                continue
            self.reads[rel] = read
            hashes.append(read["sourceHash"])
            pointers += [element["pointer"] for element in read["elements"]]
        new = st.sampled_from(["new.md", "guide/new.md", "n/e/w.md", "notes.md", "New.MD"])
        return {
            "path": st.sampled_from(paths + hostile),
            "sourcePath": st.sampled_from(paths + hostile),
            "targetPath": new | st.sampled_from(paths + hostile),
            "pathPrefix": st.sampled_from(["guide", "deep/er", "", "..", "escape-dir", "guide/editing.md"]),
            "pointer": st.sampled_from(pointers),
            "expectedSourceHash": st.sampled_from(hashes or ["0" * 64]),
            "query": st.sampled_from(['"unbalanced', "NEAR(a b)", "safe* OR -ranking", "caf\u00e9", "AND", "\u6587"]),
            "outputPath": st.sampled_from(["book.pdf", "out/book.pdf", "notes.md", "../book.pdf", "x.PDF"]),
            "expectedSha256": st.sampled_from(hashes or ["0" * 64]),
            "column": st.sampled_from(["name", "value", "a", "c7", "missing"]),
            "includeGlob": st.sampled_from(["**/*.md", "[", "{a,b}/**", "***", "../**", "guide/*"]),
            "markdown": st.sampled_from(
                ["# New\n", "- item\n", "| a |\n|---|\n| 1 |\n", "```\nunclosed\n", "> " * 50 + "q\n", "\x00", ""]
            ),
        }

    def cohere(self, arguments: Any, pick: Any) -> Any:
        """Make a valid request's pointer and hash belong to the file it names, so edits really happen."""
        body = arguments.get("request", arguments) if isinstance(arguments, dict) else None
        if not isinstance(body, dict):
            return arguments
        key = "sourcePath" if "sourcePath" in body else "path"
        if key not in body or not self.reads:
            return arguments
        body[key] = pick(sorted(self.reads))
        read = self.reads[body[key]]
        if "expectedSourceHash" in body:
            body["expectedSourceHash"] = read["sourceHash"]
        anchors = [element["pointer"] for element in read["elements"]] or ["document"]
        if "pointer" in body:
            body["pointer"] = pick(anchors)
        for operation in body.get("operations", []):
            operation["pointer"] = pick(anchors)
        return arguments

    def targeted(self, tool: str, arguments: Any) -> set[str]:
        """The root-relative files a request may change: the paths it names, canonicalised."""
        names: set[str] = set()
        body = arguments.get("request", arguments) if isinstance(arguments, dict) else None
        if isinstance(body, dict):
            for key in ("path", "sourcePath", "targetPath", "outputPath"):
                value = body.get(key)
                if isinstance(value, str):
                    with contextlib.suppress(KbError):
                        names.add(self.ws.guard.normalise(value))
            if tool == "kb_create_pdf_book" and isinstance(body.get("path"), str) and not body.get("outputPath"):
                with contextlib.suppress(KbError):  # the book's default name: the document's, as .pdf
                    names.add(self.ws.guard.normalise(body["path"])[: -len(".md")] + ".pdf")
        return names


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    s = Setup(tmp_path_factory.mktemp("hostile"))
    yield s
    s.ws.close()
    total = sum(sum(tally.values()) for tally in COUNTS.values())
    print(f"\nhostile requests, outcomes per tool: {json.dumps(COUNTS, sort_keys=True)} (total {total})")


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


# Known failures, each pinned by a strict xfail: when one is fixed, its test fails until the entry goes.
KNOWN_BUGS: set[tuple[str, str]] = set()


def _known_bug(tool: str, arguments: Any) -> bool:
    body = arguments.get("request") if isinstance(arguments, dict) else None
    path = body.get("path") if isinstance(body, dict) else None
    return isinstance(path, str) and (tool, path) in KNOWN_BUGS


def check(setup: Setup, tool: str, arguments: Any) -> None:
    note(f"{tool} {arguments!r}"[:2000])
    if _known_bug(tool, arguments):
        return
    outcome = "ok"
    errors = _Errors()
    logging.getLogger().addHandler(errors)
    try:
        with touched() as seen:
            try:
                dispatch.invoke(setup.ws, tool, arguments)
            except KbError as exc:
                outcome = exc.code
                assert exc.code != "INTERNAL_ERROR", f"{tool}: {exc.message}"
                assert str(setup.root) not in exc.message  # no absolute paths to the client
            setup.index.wait_reindex(30)
            setup.index.sync.wait_idle(30)
    finally:
        logging.getLogger().removeHandler(errors)
    tally = COUNTS.setdefault(tool, {})
    tally[outcome] = tally.get(outcome, 0) + 1
    assert not errors.records, [r.getMessage() for r in errors.records]
    outside = str(setup.outside)
    assert not [p for p in seen if p.startswith(outside)], "opened a file outside the root"
    after = snapshot(setup.root)
    changed = {rel for rel in after.keys() | setup.before.keys() if after.get(rel) != setup.before.get(rel)}
    if tool in CREATE_ANYWHERE:  # may add a file under a name of its choosing, never change one
        changed &= setup.before.keys()
    assert changed <= setup.targeted(tool, arguments), f"{tool} changed {sorted(changed)}"
    if changed:
        restore(setup.root, setup.before)


@pytest.mark.parametrize("tool", TOOLS)
def test_valid_requests_never_fail_internally_nor_touch_other_files(setup: Setup, tool: str) -> None:
    schema = dispatch.BY_NAME[tool].input_schema()

    @settings(max_examples=EXAMPLES)
    @given(requests(schema, setup.hints), st.booleans(), st.data())
    def run(arguments: Any, coherent: bool, data: st.DataObject) -> None:
        if coherent:
            arguments = setup.cohere(arguments, lambda options: data.draw(st.sampled_from(options)))
        check(setup, tool, arguments)

    run()


@pytest.mark.parametrize("tool", TOOLS)
def test_mutated_requests_get_a_typed_error(setup: Setup, tool: str) -> None:
    schema = dispatch.BY_NAME[tool].input_schema()

    @settings(max_examples=EXAMPLES)
    @given(mutated(schema, setup.hints))
    def run(arguments: Any) -> None:
        check(setup, tool, arguments)

    run()


def test_a_pdf_book_of_a_300_column_table_is_printed(setup: Setup) -> None:
    # was: reportlab's ValueError (negative column widths) surfaced as INTERNAL_ERROR
    try:
        result = dispatch.invoke(
            setup.ws, "kb_create_pdf_book", {"request": {"path": "wide-table.md", "outputPath": "w.pdf"}}
        )
        assert result["path"] == "w.pdf" and (setup.root / "w.pdf").read_bytes().startswith(b"%PDF-")
    finally:
        restore(setup.root, setup.before)
