"""The storage-port contract, run against every adapter: SQLite (through the
production factory) and the in-memory adapter of the tests. A new engine adds
itself to ``ENGINES`` and must pass the same suite."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from kb_fakes import make_workspace
from memory_store import MemoryStore

from local_vector_search_mcp.index.port import ChunkRecord, DocumentMeta, DocumentRecord, IndexStore, LinkRecord
from local_vector_search_mcp.index.query import AllOf, AnyOf, CjkRun, PathScope, Phrase, Prefix, Term


def _sqlite(tmp_path: Path) -> IndexStore:
    root = tmp_path / "kb"
    root.mkdir()
    return make_workspace(root).store  # the factory the server uses (index/stores.py)


ENGINES: dict[str, Callable[[Path], IndexStore]] = {"sqlite": _sqlite, "memory": lambda tmp_path: MemoryStore()}
DIMS = 8


@pytest.fixture(params=sorted(ENGINES))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexStore]:
    made = ENGINES[request.param](tmp_path)
    yield made
    made.close()


def vec(*hot: int) -> np.ndarray:
    v = np.zeros(DIMS, dtype=np.float32)
    for i in hot:
        v[i] = 1.0
    return v / np.linalg.norm(v)


def chunk(ordinal: int, text: str, heading: str | None = None, vector: np.ndarray | None = None) -> ChunkRecord:
    return ChunkRecord(
        ordinal, f"p{ordinal}", f"p{ordinal}~{ordinal:016x}~{ordinal:016x}", text, heading, f"h{text}", vector
    )


def doc(path: str, source_hash: str = "s" * 64) -> DocumentRecord:
    return DocumentRecord(path, source_hash, 10, 20, "2026-11-30T00:00:00.000Z")


def lexical_paths(store: IndexStore, query, scope: PathScope | None = None, limit: int = 10) -> list[str]:
    return [h.path for h in store.lexical(query, limit, scope)]


@pytest.fixture
def filled(store: IndexStore) -> IndexStore:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("guide.md"), [chunk(0, "Install the tool with pip.", "Guide")])
    store.replace_document(doc("Notes/rc.md"), [chunk(0, "Use Rc::strong_count to count references.", "Rc")])
    store.replace_document(doc("notes/count.md"), [chunk(0, "count strong rc backwards, installation notes", "Misc")])
    store.replace_document(doc("zh/state.md"), [chunk(0, "在组件之间共享状态可以使用响应式 API。", "状态管理")])
    store.replace_document(doc("ja/rain.md"), [chunk(0, "東京都の天気は晴れです。雨は降りません。", "天気")])
    return store


def test_an_empty_store_answers_without_failing(store: IndexStore) -> None:
    assert store.counts().documents == 0 and store.counts().chunks == 0
    assert not store.has_chunks() and store.pending_vector_count() == 0
    assert store.document_states() == {} and store.read_manifest() == {}
    assert store.lexical(Term("pip"), 10, None) == []
    assert isinstance(store.location, str) and store.location


def test_manifest_round_trip_replaces_every_key(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.write_manifest({"a": "1", "b": "2"})
    store.write_manifest({"b": "3"})
    assert store.read_manifest() == {"b": "3"}
    assert store.exists() and not store.has_vectors()


def test_documents_replace_touch_delete(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    assert store.replace_document(doc("a.md"), [chunk(0, "one"), chunk(1, "two")]) == 2
    assert store.replace_document(doc("a.md", "t" * 64), [chunk(0, "three")]) == 1  # replaces, never adds
    state = store.document_states()["a.md"]
    assert (state.source_hash, state.size, state.mtime_ns) == ("t" * 64, 10, 20)
    store.touch_document("a.md", 11, 21)
    assert (store.document_states()["a.md"].size, store.document_states()["a.md"].mtime_ns) == (11, 21)
    counts = store.counts()
    assert (counts.documents, counts.chunks, counts.last_indexed_at_utc) == (1, 1, "2026-11-30T00:00:00.000Z")
    assert lexical_paths(store, Term("three")) == ["a.md"] and lexical_paths(store, Term("one")) == []
    assert store.delete_document("a.md") is True and store.delete_document("a.md") is False
    assert not store.has_chunks() and lexical_paths(store, Term("three")) == []


def test_a_failed_replace_keeps_the_previous_revision(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("a.md"), [chunk(0, "original words")])
    with pytest.raises((AttributeError, TypeError)):
        store.replace_document(doc("a.md"), [chunk(0, "new words"), None])  # type: ignore[list-item]
    assert lexical_paths(store, Term("original")) == ["a.md"] and lexical_paths(store, Term("new")) == []


def test_terms_are_words_and_pieces_keep_their_order(filled: IndexStore) -> None:
    assert lexical_paths(filled, Term("PIP")) == ["guide.md"]  # case-insensitive
    assert lexical_paths(filled, Term("Rc::strong_count")) == ["Notes/rc.md"]  # not "count strong rc"
    assert lexical_paths(filled, Phrase(("strong", "count"))) == ["Notes/rc.md"]
    assert lexical_paths(filled, Term("instal")) == []
    assert sorted(lexical_paths(filled, Prefix("instal"))) == ["guide.md", "notes/count.md"]


def test_groups_combine_leaves(filled: IndexStore) -> None:
    assert lexical_paths(filled, AllOf((Term("count"), Term("references")))) == ["Notes/rc.md"]
    assert sorted(lexical_paths(filled, AnyOf((Term("pip"), Term("backwards"))))) == ["guide.md", "notes/count.md"]
    assert lexical_paths(filled, AllOf((Term("pip"), Term("backwards")))) == []
    # a row budget is a cost hint: the rarest alternatives always stay
    assert lexical_paths(filled, AnyOf((Term("pip"), Term("zzz"), Term("qqq")), row_budget=1)) == ["guide.md"]


def test_cjk_runs_match_inside_longer_runs(filled: IndexStore) -> None:
    assert lexical_paths(filled, CjkRun("共享状态")) == ["zh/state.md"]
    assert lexical_paths(filled, CjkRun("東京都")) == ["ja/rain.md"]
    assert lexical_paths(filled, CjkRun("雨")) == ["ja/rain.md"]  # one character
    assert lexical_paths(filled, CjkRun("东京")) == []  # simplified vs traditional: different characters
    assert lexical_paths(filled, AnyOf((CjkRun("共享东京"),))) == ["zh/state.md"]  # some bigram suffices
    assert lexical_paths(filled, AllOf((CjkRun("共享东京"),))) == []


def test_headings_weigh_more_than_body(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("body.md"), [chunk(0, "kites fly high over the hills today", "Weather")])
    store.replace_document(doc("heading.md"), [chunk(0, "they fly high over the hills today", "Kites")])
    assert lexical_paths(store, Term("kites")) == ["heading.md", "body.md"]


def test_scopes_filter_before_the_limit(filled: IndexStore) -> None:
    everything = AnyOf((Term("pip"), Term("count"), Term("installation")))
    assert lexical_paths(filled, everything, PathScope(("NOTES/**",)), limit=1) in (["Notes/rc.md"], ["notes/count.md"])
    assert sorted(lexical_paths(filled, everything, PathScope(("notes/**",)))) == ["Notes/rc.md", "notes/count.md"]
    assert lexical_paths(filled, everything, PathScope((), ("notes/**",))) == ["guide.md"]
    assert lexical_paths(filled, everything, PathScope(("*.md",), ("guide.md",))) == []


def test_vectors_pending_then_stored_then_searched(store: IndexStore) -> None:
    store.ensure_schema(DIMS, "float32")
    assert store.has_vectors()
    store.replace_document(doc("a.md"), [chunk(0, "alpha", vector=vec(0)), chunk(1, "beta")])
    store.replace_document(doc("b/c.md"), [chunk(0, "gamma"), chunk(1, "delta")])
    assert store.pending_vector_count() == 3 and store.counts().pending_vectors == 3
    pending = store.pending_vectors(2)
    assert [(p.path, p.text) for p in pending] == [("a.md", "beta"), ("b/c.md", "gamma")]  # id order
    ids = {p.text: p.chunk_id for p in store.pending_vectors(10)}
    assert store.store_vectors([(ids["beta"], vec(1)), (ids["gamma"], vec(2)), (ids["delta"], vec(3))]) == 3
    assert store.store_vectors([(ids["beta"], vec(4))]) == 0  # no longer pending: skipped
    assert store.pending_vector_count() == 0 and store.pending_vectors(10) == []
    hits = store.semantic(vec(1, 0), 2, None)
    assert {h.text for h in hits} == {"alpha", "beta"} and hits[0].distance is not None
    assert hits[0].distance <= hits[1].distance  # type: ignore[operator]
    assert [h.text for h in store.semantic(vec(2), 1, None)] == ["gamma"]
    (scoped,) = store.semantic(vec(0), 1, PathScope(("b/**",)))
    assert scoped.path == "b/c.md"
    reuse = store.vectors_by_text_hash("a.md")
    assert set(reuse) == {"halpha", "hbeta"} and float(np.dot(reuse["halpha"], vec(0))) > 0.99


def test_a_lexical_store_has_no_vectors(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("a.md"), [chunk(0, "alpha")])
    assert not store.has_vectors() and store.pending_vector_count() == 0 and store.pending_vectors(5) == []
    assert store.store_vectors([(1, vec(0))]) == 0 and store.semantic(vec(0), 5, None) == []


def test_reset_drops_everything(filled: IndexStore) -> None:
    filled.write_manifest({"k": "v"})
    filled.refresh_term_stats()
    filled.reset(None, "float32")
    assert filled.counts().documents == 0 and filled.read_manifest() == {} and not filled.has_chunks()
    assert lexical_paths(filled, Term("pip")) == []


def test_hits_carry_what_results_show(filled: IndexStore) -> None:
    (hit,) = filled.lexical(Term("pip"), 5, None)
    assert (hit.path, hit.anchor, hit.heading_path, hit.text) == (
        "guide.md",
        "p0~0000000000000000~0000000000000000",
        "Guide",
        "Install the tool with pip.",
    )
    assert hit.source_hash == "s" * 64


def test_write_lock_is_reentrant(store: IndexStore) -> None:
    with store.write_lock(), store.write_lock():
        store.ensure_schema(None, "float32")


def test_links_and_metadata_are_replaced_with_their_document(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    links = [
        LinkRecord("inline", "b.md#x", "B", "p0~0000000000000000~0000000000000000"),
        LinkRecord("wikilink", "C", None, None),
    ]
    meta = DocumentMeta(("Project/Alpha", "todo"), ("A note",), ("Title",), ("blk",))
    store.replace_document(doc("a.md"), [chunk(0, "text")], links, meta)
    store.replace_document(doc("b.md"), [chunk(0, "other")])
    got = [(ln.source, ln.ordinal, ln.kind, ln.destination, ln.text, ln.anchor) for ln in store.links()]
    assert got == [
        ("a.md", 0, "inline", "b.md#x", "B", "p0~0000000000000000~0000000000000000"),
        ("a.md", 1, "wikilink", "C", None, None),
    ]
    assert store.document_meta() == {"a.md": meta}
    assert store.paths_with_tags(["project"]) == {"a.md"}  # a parent of a nested tag matches
    assert store.paths_with_tags(["#TODO", "project/alpha"]) == {"a.md"}
    assert store.paths_with_tags(["todo", "other"]) == set()
    assert store.paths_with_tags(["alpha"]) == set()  # only parents, never a suffix
    store.replace_document(doc("a.md"), [chunk(0, "text")], [LinkRecord("inline", "c.md", None, None)])
    assert [ln.destination for ln in store.links()] == ["c.md"]
    assert store.document_meta() == {} and store.paths_with_tags(["todo"]) == set()
    store.delete_document("a.md")
    assert store.links() == []


def test_reset_drops_the_link_graph(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("a.md"), [], [LinkRecord("inline", "b.md", None, None)], DocumentMeta(("t",)))
    store.reset(None, "float32")
    assert store.links() == [] and store.document_meta() == {} and store.paths_with_tags(["t"]) == set()
