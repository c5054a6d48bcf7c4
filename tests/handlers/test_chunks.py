"""The chunks tool set through dispatch (the same path MCP and ``call`` take), on a real index."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kb_fakes import HashEmbedder, make_workspace

from local_vector_search_mcp.dispatch import available_tools, invoke
from local_vector_search_mcp.errors import IndexNotReady, InvalidArgument, NotFound, PermissionDenied
from local_vector_search_mcp.workspace import Workspace

DIMS = 64
CHUNK_TOOLS = [
    "index_note",
    "upsert_vector",
    "search_vectors",
    "search_knowledge",
    "get_chunk",
    "list_chunks",
    "update_chunk",
    "delete_chunk",
]


@pytest.fixture
def ws(tmp_path: Path) -> Any:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "install.md").write_text(
        "---\ntags: [setup, python]\nstatus: published\n---\n# Install\n\nInstall the tool with pip.\n\n"
        "## Upgrade\n\nUpgrade with pip install --upgrade.\n",
        encoding="utf-8",
    )
    (tmp_path / "notes.md").write_text(
        "---\ntags: [ideas]\nstatus: draft\n---\n# Notes\n\nRandom ideas about gardening tomatoes.\n",
        encoding="utf-8",
    )
    workspace = make_workspace(tmp_path, "local", embedder=HashEmbedder(DIMS), server__toolsets=["kb", "chunks"])
    yield workspace
    workspace.close()


def call(ws: Workspace, tool: str, **arguments: Any) -> dict[str, Any]:
    result = invoke(ws, tool, arguments)
    assert isinstance(result, dict)
    return result


def vec(text: str) -> list[float]:
    return [float(x) for x in HashEmbedder(DIMS)._vec(text)]


def test_toolset_listing_and_refusal(tmp_path: Path) -> None:
    names = [t.name for t in available_tools(["kb"])]
    assert not set(CHUNK_TOOLS) & set(names)
    assert [t.name for t in available_tools(["kb", "chunks"]) if t.toolset == "chunks"] == CHUNK_TOOLS
    plain = make_workspace(tmp_path)
    with pytest.raises(InvalidArgument, match=r"server\.toolsets"):
        invoke(plain, "list_chunks", {})
    plain.close()


def test_index_note_then_search_by_text_and_vector(ws: Workspace) -> None:
    done = call(ws, "index_note", path="guide/install.md")
    assert done["path"] == "guide/install.md"
    assert done["chunks"] == len(done["chunkIds"]) >= 1
    assert done["chunkIds"][0] == "md:guide/install.md#0"
    assert done["dimensions"] == DIMS and done["quantizationBits"] == 32
    call(ws, "index_note", path="notes.md")

    found = call(ws, "search_knowledge", query="install the tool with pip", topK=3)["results"]
    top = found[0]
    assert top["sourcePath"] == "guide/install.md" and 0.5 < top["score"] <= 1.0 + 1e-6
    assert top["metadata"]["tags"] == ["setup", "python"] and top["metadata"]["status"] == "published"
    assert top["metadata"]["pointer"].startswith("1")
    assert [r["score"] for r in found] == sorted((r["score"] for r in found), reverse=True)

    by_vector = call(ws, "search_vectors", embedding=vec("random ideas about gardening tomatoes"), topK=1)
    assert by_vector["results"][0]["sourcePath"] == "notes.md"

    # filters run inside retrieval: the best match overall is excluded, the next one still comes back
    query = vec("install the tool with pip")
    assert (
        call(ws, "search_vectors", embedding=query, topK=1, filter={"tags": ["ideas"]})["results"][0]["sourcePath"]
        == "notes.md"
    )
    assert (
        call(ws, "search_vectors", embedding=query, topK=1, filter={"pathPrefix": "notes.md"})["results"][0][
            "sourcePath"
        ]
        == "notes.md"
    )
    assert (
        call(ws, "search_vectors", embedding=query, filter={"metadata": {"status": "draft"}})["results"][0][
            "sourcePath"
        ]
        == "notes.md"
    )
    assert (
        call(ws, "search_vectors", embedding=query, filter={"pathGlobs": ["guide/**"]})["results"][0]["sourcePath"]
        == "guide/install.md"
    )
    assert call(ws, "search_vectors", embedding=query, filter={"tags": ["nope"]})["results"] == []


def test_wrong_dimension_names_both_sizes(ws: Workspace) -> None:
    call(ws, "index_note", path="notes.md")
    with pytest.raises(InvalidArgument, match=r"3 dimensions.*64-dimensional"):
        invoke(ws, "search_vectors", {"embedding": [1.0, 0.0, 0.0]})
    with pytest.raises(InvalidArgument, match=r"embedding has 1 dimension but"):  # not "1 dimensions"
        invoke(ws, "search_vectors", {"embedding": [1.0]})
    with pytest.raises(InvalidArgument, match="all zeros"):
        invoke(ws, "search_vectors", {"embedding": [0.0] * DIMS})


def test_search_knowledge_names_the_stored_size_not_an_endpoint(tmp_path: Path) -> None:
    """External vectors fixed a size the run's model does not make: a forced rebuild keeps them, so the
    refusal says so and points at search_vectors, not only at kb_reindex and embedding.endpoint (679)."""
    (tmp_path / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    bare = make_workspace(tmp_path, "none", server__toolsets=["kb", "chunks"])
    try:
        call(bare, "upsert_vector", sourcePath="x.md", chunkIndex=0, content="hello", embedding=[1.0, 0.0, 0.0])
    finally:
        bare.close()
    ws = make_workspace(tmp_path, "local", embedder=HashEmbedder(DIMS), server__toolsets=["kb", "chunks"])
    try:
        with pytest.raises(IndexNotReady) as refused:
            invoke(ws, "search_knowledge", {"query": "hello"})
    finally:
        ws.close()
    message = refused.value.message
    assert "'test/hash-embedder', which makes 64-dimensional vectors" in message and "are 3-dimensional" in message
    assert "upsert_vector keep their size" in message and "search_vectors with a 3-dimensional vector" in message


def test_markdown_chunks_are_read_only(ws: Workspace) -> None:
    call(ws, "index_note", path="notes.md")
    chunk = call(ws, "get_chunk", id="md:notes.md#0")
    assert chunk["readOnly"] is True and chunk["collection"] == "markdown"
    assert chunk["embeddingDimensions"] == DIMS and chunk["embedding"] is None
    assert len(call(ws, "get_chunk", id="md:notes.md#0", includeEmbedding=True)["embedding"]) == DIMS
    for tool, args in (
        ("update_chunk", {"id": "md:notes.md#0", "content": "x"}),
        ("delete_chunk", {"id": "md:notes.md#0"}),
        (
            "upsert_vector",
            {"id": "md:notes.md#0", "sourcePath": "x", "chunkIndex": 0, "content": "x", "embedding": vec("x")},
        ),
    ):
        with pytest.raises(PermissionDenied, match="kb_patch"):
            invoke(ws, tool, args)
    with pytest.raises(NotFound):
        invoke(ws, "get_chunk", {"id": "md:notes.md#99"})


def test_external_crud_and_stale_vectors(ws: Workspace) -> None:
    created = call(
        ws,
        "upsert_vector",
        sourcePath="crm/acme.txt",
        chunkIndex=0,
        content="Acme renews in March",
        embedding=vec("acme renews in march"),
        metadata={"customer": "acme", "tags": ["crm"]},
    )
    ext_id = created["id"]
    assert created["created"] is True and ext_id.startswith("ext_")
    again = call(
        ws,
        "upsert_vector",
        id=ext_id,
        sourcePath="crm/acme.txt",
        chunkIndex=0,
        content="Acme renews in April",
        embedding=vec("acme renews in april"),
    )
    assert again == {"id": ext_id, "created": False}
    chunk = call(ws, "get_chunk", id=ext_id)
    assert chunk["collection"] == "external" and chunk["content"] == "Acme renews in April"
    assert chunk["metadata"] == {} and chunk["readOnly"] is False and chunk["embeddingStale"] is False

    hits = call(ws, "search_vectors", embedding=vec("acme renews in april"), topK=1)["results"]
    assert hits[0]["id"] == ext_id and hits[0]["score"] == pytest.approx(1.0, abs=1e-5)
    assert call(ws, "search_vectors", embedding=vec("acme renews in april"), filter={"collections": ["markdown"]})[
        "results"
    ] == [] or all(
        r["collection"] == "markdown"
        for r in call(ws, "search_vectors", embedding=vec("acme"), filter={"collections": ["markdown"]})["results"]
    )

    stale = call(ws, "update_chunk", id=ext_id, content="Acme churned", metadata={"customer": "acme"})
    assert stale["embeddingStale"] is True and stale["metadata"] == {"customer": "acme"}
    assert all(r["id"] != ext_id for r in call(ws, "search_vectors", embedding=vec("acme renews in april"))["results"])
    fresh = call(ws, "update_chunk", id=ext_id, embedding=vec("acme churned"))
    assert fresh["embeddingStale"] is False
    assert (
        call(ws, "search_vectors", embedding=vec("acme churned"), filter={"metadata": {"customer": "acme"}})["results"][
            0
        ]["id"]
        == ext_id
    )

    assert call(ws, "delete_chunk", id=ext_id) == {"id": ext_id, "deleted": True}
    with pytest.raises(NotFound):
        invoke(ws, "get_chunk", {"id": ext_id})
    with pytest.raises(NotFound):
        invoke(ws, "delete_chunk", {"id": ext_id})


def test_external_chunks_survive_a_forced_reindex(ws: Workspace) -> None:
    call(
        ws,
        "upsert_vector",
        id="keep-me",
        sourcePath="s",
        chunkIndex=0,
        content="c",
        embedding=vec("keep me"),
        collection="crm",
    )
    ws.indexing.reindex("all", force=True)
    assert call(ws, "get_chunk", id="keep-me")["collection"] == "crm"
    with pytest.raises(InvalidArgument, match="collection"):
        invoke(
            ws,
            "upsert_vector",
            {
                "id": "keep-me",
                "sourcePath": "s",
                "chunkIndex": 0,
                "content": "c",
                "embedding": vec("x"),
                "collection": "other",
            },
        )


def test_external_vectors_of_another_size_after_a_rebuild_are_shown_stale(tmp_path: Path) -> None:
    """Decision 735: without a model the first external vector fixes the size; a forced rebuild
    with a model of another size keeps that chunk (decision 145), and search left it out without
    a word while get_chunk and list_chunks said `embeddingStale: false`."""
    (tmp_path / "a.md").write_text("# A\n\nalpha text\n", encoding="utf-8")
    lexical = make_workspace(tmp_path, "none", server__toolsets=["kb", "chunks"])
    call(lexical, "upsert_vector", id="old", sourcePath="s", chunkIndex=0, content="old", embedding=[1, 0, 0])
    lexical.close()
    ws = make_workspace(tmp_path, "local", embedder=HashEmbedder(DIMS), server__toolsets=["kb", "chunks"])
    try:
        ws.indexing.reindex("all", force=True)
        got = call(ws, "get_chunk", id="old")
        assert got["embeddingDimensions"] == 3 and got["embeddingStale"] is True
        listed = {c["id"]: c for c in call(ws, "list_chunks", collection="external")["chunks"]}
        assert listed["old"]["embeddingStale"] is True
        assert "old" not in [h["id"] for h in call(ws, "search_vectors", embedding=vec("old"), topK=100)["results"]]
        # an embedding of the index's size brings it back
        fixed = call(ws, "update_chunk", id="old", embedding=vec("old"))
        assert fixed["embeddingDimensions"] == DIMS and fixed["embeddingStale"] is False
        hits = call(ws, "search_vectors", embedding=vec("old"), topK=1)["results"]
        assert [h["id"] for h in hits] == ["old"]
    finally:
        ws.close()


def test_list_chunks_pages_through_both_kinds(ws: Workspace) -> None:
    call(ws, "index_note", path="guide/install.md")
    notes = call(ws, "index_note", path="notes.md")["chunkIds"]
    for i in range(5):
        call(
            ws, "upsert_vector", id=f"e{i}", sourcePath="src", chunkIndex=i, content=f"c{i}", embedding=vec(f"word{i}")
        )
    seen: list[str] = []
    cursor = None
    while True:
        page = call(ws, "list_chunks", limit=2, **({"cursor": cursor} if cursor else {}))
        assert len(page["chunks"]) <= 2
        seen += [c["id"] for c in page["chunks"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    md = [s for s in seen if s.startswith("md:")]
    assert seen == md + [f"e{i}" for i in range(5)] and len(set(seen)) == len(seen)
    assert md == sorted(md, key=lambda s: (s.split("#")[0], int(s.split("#")[1])))
    only = call(ws, "list_chunks", collection="markdown", sourcePath="notes.md")
    assert [c["id"] for c in only["chunks"]] == notes and only["nextCursor"] is None
    ext = call(ws, "list_chunks", collection="external", limit=500)
    assert [c["id"] for c in ext["chunks"]] == [f"e{i}" for i in range(5)]
    with pytest.raises(InvalidArgument, match="cursor"):
        invoke(ws, "list_chunks", {"cursor": "bogus"})


def test_a_cursor_only_continues_the_listing_it_came_from(ws: Workspace) -> None:
    """Decision 734: a cursor is a position in one listing. Passed with other filters it skipped
    the Markdown chunks and answered an empty last page, so a pipeline saw nothing to index."""
    call(ws, "index_note", path="notes.md")
    for i in range(3):
        call(ws, "upsert_vector", id=f"e{i}", sourcePath="src", chunkIndex=i, content="c", embedding=vec(f"w{i}"))
    first = call(ws, "list_chunks", collection="external", limit=1)
    assert [c["id"] for c in first["chunks"]] == ["e0"] and first["nextCursor"]
    for other in ({"sourcePath": "notes.md"}, {}, {"collection": "markdown"}, {"collection": "crm"}):
        with pytest.raises(InvalidArgument, match="other filters"):
            invoke(ws, "list_chunks", {**other, "cursor": first["nextCursor"]})
    rest = call(ws, "list_chunks", collection="external", cursor=first["nextCursor"])
    assert [c["id"] for c in rest["chunks"]] == ["e1", "e2"] and rest["nextCursor"] is None


def test_search_knowledge_needs_an_embedder(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    plain = make_workspace(tmp_path, "none", server__toolsets=["kb", "chunks"])
    with pytest.raises(IndexNotReady, match="provider: none"):
        invoke(plain, "search_knowledge", {"query": "text"})
    with pytest.raises(IndexNotReady, match="No vector"):
        invoke(plain, "search_vectors", {"embedding": [1.0, 2.0]})
    # without a Markdown index the first external vector fixes the size
    call(plain, "upsert_vector", sourcePath="s", chunkIndex=0, content="c", embedding=[1.0, 0.0, 0.0])
    with pytest.raises(InvalidArgument, match="2 dimensions"):
        invoke(plain, "upsert_vector", {"sourcePath": "s", "chunkIndex": 1, "content": "c", "embedding": [1.0, 0.0]})
    assert call(plain, "search_vectors", embedding=[0.0, 0.0, 2.0])["results"][0]["score"] == pytest.approx(0.0)
    done = call(plain, "index_note", path="a.md")
    assert done["dimensions"] is None and done["quantizationBits"] is None and done["chunks"] == 1
    plain.close()


def test_int8_storage_reports_8_bits_and_scores_quantized(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nalpha beta gamma\n", encoding="utf-8")
    ws = make_workspace(
        tmp_path, "local", embedder=HashEmbedder(DIMS), server__toolsets=["chunks"], embedding__vector_storage="int8"
    )
    done = call(ws, "index_note", path="a.md")
    assert done["quantizationBits"] == 8
    hit = call(ws, "search_knowledge", query="alpha beta gamma")["results"][0]
    stored = np.asarray(call(ws, "get_chunk", id=hit["id"], includeEmbedding=True)["embedding"])
    query = np.asarray(vec("alpha beta gamma"))  # the float query against the codes (decision 381)
    expected = float(np.dot(stored, query / np.linalg.norm(query)))
    assert hit["score"] == pytest.approx(expected, abs=1e-4)
    ws.close()


def test_an_id_or_cursor_naming_no_chunk_is_refused_not_resolved_elsewhere(ws: Workspace) -> None:
    """Decision 676: ``#01`` and ``#١`` read as chunk 1 (another id than asked for), and an ordinal past
    SQLite's integer raised OverflowError, an INTERNAL_ERROR."""
    call(ws, "index_note", path="guide/install.md")
    assert call(ws, "get_chunk", id="md:guide/install.md#1")["id"] == "md:guide/install.md#1"
    for odd in ("#01", "#\u0661", "#0\u0661", "#99999999999999999999999", "#-1", "#+1", "# 1"):
        with pytest.raises(NotFound):
            invoke(ws, "get_chunk", {"id": f"md:guide/install.md{odd}"})
    listing = hashlib.sha256(json.dumps([None, None]).encode()).hexdigest()[:16]
    for index in (10**25, True, -1, 1.0):
        for token in (["m", "guide/install.md", index, listing], ["m", "guide/install.md", index]):
            cursor = base64.urlsafe_b64encode(json.dumps(token).encode()).decode().rstrip("=")
            with pytest.raises(InvalidArgument, match="cursor was not produced by list_chunks"):
                invoke(ws, "list_chunks", {"cursor": cursor})


def test_index_note_refuses_what_the_index_never_holds(ws: Workspace, tmp_path: Path) -> None:
    """Decision 676: a dot-named file or folder is never indexed (decisions 281, 460), so index_note
    must not answer it with zero chunks as if the note were empty."""
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "h.md").write_text("# Hidden\n\nText.\n", encoding="utf-8")
    (tmp_path / "guide" / ".#lock.md").write_text("# Lock\n\nText.\n", encoding="utf-8")
    for path in (".obsidian/h.md", "guide/.#lock.md"):
        with pytest.raises(InvalidArgument, match="never indexed"):
            invoke(ws, "index_note", {"path": path})


def test_a_vector_found_by_itself_scores_one_not_more(tmp_path: Path) -> None:
    """Decision 992: a cosine is at most 1, and the score's description says 1 is the same
    direction; float32 rounding in the scan answered 1.000001 for a vector searched by itself
    (a constant 384-d vector: the bundled model's size)."""
    dims = 384
    ws = make_workspace(tmp_path, "local", embedder=HashEmbedder(dims), server__toolsets=["kb", "chunks"])
    try:
        for value in (1.0, 0.1, 3.0):
            call(
                ws, "upsert_vector", id="same", sourcePath="s.txt", chunkIndex=0, content="c", embedding=[value] * dims
            )
            top = call(ws, "search_vectors", embedding=[value] * dims, topK=1)["results"][0]
            assert (top["id"], top["score"]) == ("same", 1.0)
    finally:
        ws.close()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("list_chunks", {"sourcePath": ""}),
        ("upsert_vector", {"id": "x", "sourcePath": "s" * 1025, "text": "t", "embedding": [1.0] * DIMS}),
        ("search_vectors", {"embedding": [1.0] * DIMS, "filter": {"pathPrefix": "p" * 5000}}),
        ("search_knowledge", {"query": "pip", "filter": {"pathPrefix": "p" * 5000}}),
    ],
)
def test_a_malformed_source_path_is_an_argument_error(ws: Workspace, tool: str, arguments: dict[str, Any]) -> None:
    # The chunk tools' sourcePath and pathPrefix are free-form strings, not knowledge-base paths:
    # INVALID_PATH is not among their errors (decision 1004).
    with pytest.raises(InvalidArgument, match="Invalid arguments"):
        invoke(ws, tool, arguments)


def test_search_knowledge_embeds_the_query_as_kb_search_does(tmp_path: Path) -> None:
    # kb_search collapsed the query's whitespace before embedding (1008); search_knowledge embedded
    # `what is a trait object\n` as written, a vector of its own (decision 1013)
    class Recording(HashEmbedder):
        def __init__(self) -> None:
            super().__init__(DIMS)
            self.queries: list[str] = []

        def embed_query(self, text: str) -> np.ndarray:
            self.queries.append(text)
            return super().embed_query(text)

    (tmp_path / "a.md").write_text("# A\n\nTrait objects allow dynamic dispatch.\n", encoding="utf-8")
    model = Recording()
    ws = make_workspace(tmp_path, "local", embedder=model, server__toolsets=["kb", "chunks"])
    try:
        call(ws, "index_note", path="a.md")
        call(ws, "search_knowledge", query="  what is a\ttrait object\n", topK=1)
        assert model.queries == ["what is a trait object"]
    finally:
        ws.close()


def test_a_failing_provider_is_refused_with_the_searches_that_still_answer(tmp_path: Path) -> None:
    """Decision 1121: search_knowledge said "The embedding provider failed: provider down" and
    nothing an agent could call instead; kb_search lexical and search_vectors still answer."""
    (tmp_path / "a.md").write_text("# A\n\nalpha beta\n", encoding="utf-8")
    embedder = HashEmbedder(DIMS)
    ws = make_workspace(tmp_path, "local", embedder=embedder, server__toolsets=["kb", "chunks"])
    try:
        ws.indexing.reindex("all", force=True)
        embedder.fail = True
        with pytest.raises(IndexNotReady) as refused:
            invoke(ws, "search_knowledge", {"query": "alpha"})
    finally:
        ws.close()
    message = refused.value.message
    assert message.startswith("The embedding provider failed: provider down")
    assert "kb_search with mode lexical" in message and "search_vectors takes your own vector" in message


def test_a_collection_refusal_names_the_collection_to_send(ws: Workspace) -> None:
    chunk = {"sourcePath": "x.txt", "chunkIndex": 0, "content": "c", "embedding": vec("c")}
    with pytest.raises(InvalidArgument) as reserved:
        invoke(ws, "upsert_vector", {**chunk, "collection": "markdown"})
    assert "choose another collection, or leave it out for `external`" in reserved.value.message
    call(ws, "upsert_vector", id="e1", **chunk)
    with pytest.raises(InvalidArgument) as moved:
        invoke(ws, "upsert_vector", {**chunk, "id": "e1", "collection": "other"})
    assert "delete it first (delete_chunk)" in moved.value.message
    assert "or send collection 'external'" in moved.value.message
