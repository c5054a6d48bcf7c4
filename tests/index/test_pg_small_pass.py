"""A reindex pass that parses in process opens PostgreSQL's pipelined write batch from
``IN_PROCESS_BATCH_FILES`` files (decision 720): below it each document waits for its own
answer, from it each is sent while the next file is parsed. Either way a document the server
refuses keeps its previous revision and takes no other with it (decision 680), and the next
pass writes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import make_workspace
from pg_server import PgServer

from local_vector_search_mcp.index import indexer, parallel, pg_batch, prepare
from local_vector_search_mcp.index.postgres import PostgresStore
from local_vector_search_mcp.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path, pg_server: PgServer) -> Iterator[Workspace]:
    workspace = make_workspace(
        tmp_path, storage__backend="postgresql", storage__url=pg_server.url, storage__schema=pg_server.fresh_schema()
    )
    try:
        yield workspace
    finally:
        workspace.store.close()


def _files(root: Path, n: int, revision: int) -> list[str]:
    names = [f"n{i:03d}.md" for i in range(n)]
    for i, name in enumerate(names):
        body = "POISON here" if revision < 0 and i == n // 2 else f"word{i} revision{abs(revision)} alpha"
        (root / name).write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    return names


def _revisions(store: PostgresStore) -> dict[str, set[str]]:
    """Each document's chunk texts' revision words (one per document when it is whole)."""
    found: dict[str, set[str]] = {}
    for path, text in store._rows("select d.path, c.text from chunks c join documents d on d.id = c.doc_id"):
        found.setdefault(path, set()).update(w for w in text.split() if w.startswith("revision") or w == "POISON")
    return found


@pytest.mark.parametrize("few", [True, False])
def test_an_in_process_pass_sends_its_writes_from_the_threshold(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, few: bool
) -> None:
    n = indexer.IN_PROCESS_BATCH_FILES - 1 if few else indexer.IN_PROCESS_BATCH_FILES
    assert n < parallel.MIN_PARALLEL_FILES  # parsed in process
    sent: list[str] = []
    send = pg_batch.PipelinedBatch.send

    def counted(self: pg_batch.PipelinedBatch, path: str, *args: Any) -> None:
        sent.append(path)
        send(self, path, *args)

    monkeypatch.setattr(pg_batch.PipelinedBatch, "send", counted)
    names = _files(ws.root, n, 1)
    result = ws.indexing.indexer.reindex()
    assert result.indexed_files == n
    assert sent == ([] if few else names)  # in discovery order, each once
    assert _revisions(ws.store) == {name: {"revision1"} for name in names}


def test_a_document_the_server_refuses_in_an_in_process_pass_takes_no_other_with_it(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = indexer.IN_PROCESS_BATCH_FILES + 10
    names = _files(ws.root, n, 1)
    ws.indexing.indexer.reindex()
    lexemes = prepare.chunk_lexemes

    def refused(text: str, heading: str | None) -> tuple[str, int, int]:
        # a tsvector literal the server refuses: the error comes back on the pipeline, later
        return ("'unclosed", 1, 0) if "POISON" in text else lexemes(text, heading)

    monkeypatch.setattr(prepare, "chunk_lexemes", refused)
    _files(ws.root, n, -2)  # revision 2, the middle one poisoned
    with pytest.raises(Exception, match="tsvector"):
        ws.indexing.indexer.reindex()
    found = _revisions(ws.store)
    bad = names[n // 2]
    assert found[bad] == {"revision1"}  # its previous revision, whole
    assert all(found[name] == {"revision2"} for name in names[: n // 2])  # every one before it
    # after it: sent in its window and written again (new), then the ones the pass never reached
    # (old), each whole
    after = [found[name] for name in names[n // 2 + 1 :]]
    new = after.count({"revision2"})
    assert after == [{"revision2"}] * new + [{"revision1"}] * (len(after) - new)
    monkeypatch.setattr(prepare, "chunk_lexemes", lexemes)
    _files(ws.root, n, 3)
    assert ws.indexing.indexer.reindex().indexed_files == n
    assert _revisions(ws.store) == {name: {"revision3"} for name in names}
