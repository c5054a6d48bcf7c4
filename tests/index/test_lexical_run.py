"""An index built with embeddings, used by a run without them (decision 630): everything but
semantic search works on it as it is, its writes leave the changed chunks pending for the model's
next run, and the vectors of unchanged chunks are never lost. Both engines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import HashEmbedder, KbClient, make_workspace
from pg_server import PgServer

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import IndexNotReady

MODEL = HashEmbedder.model


@pytest.fixture(params=["sqlite", "postgresql"])
def runs(request: pytest.FixtureRequest, kb: Path) -> Iterator[Any]:
    """``runs(embedder)``: a new workspace over one index, with ``embedder`` or none."""
    storage: dict[str, Any] = {}
    if request.param == "postgresql":
        pg: PgServer = request.getfixturevalue("pg_server")
        storage = {"storage__backend": "postgresql", "storage__url": pg.url, "storage__schema": pg.fresh_schema()}
    opened: list[KbClient] = []

    def run(embedder: HashEmbedder | None, **overrides: Any) -> KbClient:
        provider = "none" if embedder is None else "local"
        opened.append(KbClient(make_workspace(kb, provider, embedder=embedder, **storage, **overrides)))
        return opened[-1]

    yield run
    for c in opened:
        c.shutdown()


def _vectors(c: KbClient) -> int:
    counts = c.store.counts()
    return int(counts.chunks - counts.pending_vectors)


def _built(runs: Any) -> tuple[KbClient, dict[str, str], int]:
    model = runs(HashEmbedder())
    model.reindex()
    assert model.store.pending_vector_count() == 0
    manifest = model.store.read_manifest()
    assert manifest["index_mode"] == "vector-enabled"
    chunks = model.store.counts().chunks
    model.shutdown()
    return model, manifest, chunks


def test_every_tool_but_semantic_search_uses_it_as_it_is(runs: Any, kb: Path) -> None:
    _, manifest, chunks = _built(runs)
    lexical = runs(None)
    found = lexical.search("pip", mode="lexical")
    assert found["results"][0]["path"] == "guide.md" and found["warning"] is None
    hybrid = lexical.search("pip")  # the default mode
    assert hybrid["results"][0]["searchMode"] == "lexical"
    assert "only lexical search ran" in hybrid["warning"] and f"'{MODEL}'" in hybrid["warning"]
    with pytest.raises(IndexNotReady, match=r"this run has none .* run with the provider it was built with"):
        lexical.search("pip", mode="semantic")
    read = invoke(lexical.ws, "kb_read", {"request": {"path": "guide.md"}})
    assert "pip" in str(read)
    status = lexical.status_fields()
    assert status["compatibility"] == {"isCompatible": True, "problems": []}
    assert status["indexMode"] == "lexical"  # this run's
    assert status["vectors"]["embeddedChunks"] == chunks and status["vectors"]["pendingChunks"] == 0
    assert lexical.store.read_manifest() == manifest


def test_an_edit_by_a_run_without_embeddings_waits_for_the_model_and_nothing_else_is_embedded_again(
    runs: Any, kb: Path
) -> None:
    _, manifest, chunks = _built(runs)
    lexical = runs(None)
    guide = kb / "guide.md"
    guide.write_text(guide.read_text(encoding="utf-8").replace("strong_count", "weak_count"), encoding="utf-8")
    (kb / "new.md").write_text("# New\n\nA note written while the model was away.\n", encoding="utf-8")
    done = lexical.reindex()
    assert done["indexedFiles"] == 2
    assert "2 changed chunk(s) wait for vectors" in done["warning"] and f"'{MODEL}'" in done["warning"]
    assert lexical.search("weak_count", mode="lexical")["results"][0]["path"] == "guide.md"
    assert lexical.store.read_manifest() == manifest  # still the model's index
    assert lexical.store.pending_vector_count() == 2  # the Errors section and the new note
    assert _vectors(lexical) == chunks - 1  # guide's unchanged section kept its vector
    # a targeted sync (an edit's, the watcher's) from the same run: the same
    (kb / "new.md").write_text("# New\n\nRewritten while the model was away.\n", encoding="utf-8")
    assert lexical.indexer.reconcile("new.md") == "indexed"
    assert lexical.store.pending_vector_count() == 2
    assert lexical.status_fields()["vectors"]["pendingChunks"] == 2
    lexical.shutdown()

    embedder = HashEmbedder()
    model = runs(embedder)
    assert model.search("weak_count", mode="lexical")["results"]  # compatible: nothing to rebuild
    model.reindex()  # files unchanged since; the vector pass embeds what waits
    assert embedder.calls == 2
    assert model.store.pending_vector_count() == 0 and _vectors(model) == chunks + 1
    assert model.search("rewritten while the model was away", mode="semantic")["results"][0]["path"] == "new.md"


def test_a_forced_reindex_without_embeddings_rebuilds_it_as_lexical(runs: Any) -> None:
    _built(runs)
    lexical = runs(None)
    lexical.reindex(force=True)
    assert lexical.store.read_manifest()["index_mode"] == "lexical"
    assert not lexical.store.has_vectors()
    assert lexical.status_fields()["vectors"] is None
    assert lexical.search("pip")["warning"] == (
        "Embeddings are disabled (embedding.provider: none), so only lexical search ran; results are lexical."
    )


def test_another_difference_still_refuses_it_and_names_the_embedding_setting_too(runs: Any) -> None:
    _built(runs)
    other = runs(None, chunking__max_elements=3)
    with pytest.raises(IndexNotReady) as refused:
        other.search("pip", mode="lexical")
    message = refused.value.message
    assert "chunking_max_elements" in message and "index_mode: indexed 'vector-enabled'" in message
    assert "). Rebuild it with kb_reindex force=true" in message  # running with the model would not help


def test_search_knowledge_names_the_model_the_index_was_built_with(runs: Any) -> None:
    """search_knowledge in a run without embeddings said only "Embeddings are off": like kb_search's
    refusal (630), it now names the model the index was built with."""
    _built(runs)
    lexical = runs(None, server__toolsets=["kb", "chunks"])
    with pytest.raises(IndexNotReady, match=rf"built with '{MODEL}': run with the provider it was built with"):
        invoke(lexical.ws, "search_knowledge", {"query": "pip"})


def test_a_one_shot_edit_with_the_model_embeds_its_own_chunks_and_only_names_the_others(runs: Any, kb: Path) -> None:
    """Decision 640: a CLI call (one-shot) with the model embeds, before it exits, the chunks its own
    edit left pending, and no others: a chunk a run without embeddings left waits and is named."""
    _built(runs)
    lexical = runs(None)
    (kb / "away.md").write_text("# Away\n\nWritten while the model was away.\n", encoding="utf-8")
    assert lexical.indexer.reconcile("away.md") == "indexed"
    lexical.shutdown()

    embedder = HashEmbedder()
    model = runs(embedder, knowledge_base__allow_writes=True)
    model.ws.activity.one_shot = True  # as `call` marks it
    owls = {"path": "owls.md", "markdown": "# Owls\n\nOwls hoot in the old barn.\n"}
    invoke(model.ws, "kb_create", {"request": owls})
    assert model.ws.indexing.sync.wait_idle(30)
    assert model.store.pending_vector_count() == 2  # no background pass in a one-shot process (631)
    told = model.ws.indexing.embed_written()
    assert told is not None and "1 chunk(s) of other documents, not written by this command" in told
    assert embedder.calls == 1  # the new note's chunk, not the one waiting from before
    assert [p.path for p in model.store.pending_vectors(10)] == ["away.md"]
    found = model.search("owls hoot in the old barn", mode="semantic")
    assert found["results"][0]["path"] == "owls.md"
    assert model.ws.indexing.embed_written() is None  # once: nothing written since
