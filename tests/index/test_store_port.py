"""The storage-port contract, run against every adapter: SQLite (through the
production factory) and the in-memory adapter of the tests. A new engine adds
itself to ``ENGINES`` and must pass the same suite."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from kb_fakes import make_workspace
from memory_store import MemoryStore
from pg_server import PgServer

from local_vector_search_mcp.index.port import (
    ChunkRecord,
    DocumentMeta,
    DocumentRecord,
    IndexStore,
    LinkRecord,
    PendingChunk,
)
from local_vector_search_mcp.index.query import AllOf, AnyOf, CjkRun, PathScope, Phrase, Prefix, Term
from local_vector_search_mcp.search.chunks import ChunkApi


def _sqlite(tmp_path: Path) -> IndexStore:
    root = tmp_path / "kb"
    root.mkdir()
    return make_workspace(root).store  # the factory the server uses (index/stores.py)


def _postgresql(tmp_path: Path, server: PgServer) -> IndexStore:
    from local_vector_search_mcp.index.postgres import PostgresStore

    return PostgresStore(server.url, server.fresh_schema())  # a fresh schema: an empty knowledge base


ENGINES: dict[str, Callable[[Path], IndexStore]] = {"sqlite": _sqlite, "memory": lambda tmp_path: MemoryStore()}
SERVER_ENGINES = {"postgresql": _postgresql}  # need the session's PostgreSQL (tests/pg_server.py)
DIMS = 8


@pytest.fixture(params=sorted([*ENGINES, *SERVER_ENGINES]))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexStore]:
    if request.param in SERVER_ENGINES:
        made = SERVER_ENGINES[request.param](tmp_path, request.getfixturevalue("pg_server"))
    else:
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


def test_unreadable_files_are_kept_replaced_forgotten_and_reset(store: IndexStore) -> None:
    assert store.unreadable_files() == {}  # no schema yet: nothing recorded, no failure
    store.ensure_schema(None, "float32")
    store.set_unreadable("b.md", "not UTF-8")
    store.set_unreadable("Deep/c.md", "a FIFO")
    store.set_unreadable("b.md", "binary")  # the latest reason replaces the old one
    store.write_manifest({"a": "1"})  # the manifest is rewritten by every reindex: the list is not
    assert store.unreadable_files() == {"b.md": "binary", "Deep/c.md": "a FIFO"}
    store.set_unreadable("b.md", None)
    store.set_unreadable("never.md", None)  # forgetting what is not there is fine
    assert store.unreadable_files() == {"Deep/c.md": "a FIFO"}
    store.reset(None, "float32")  # a forced rebuild finds them again
    assert store.unreadable_files() == {}


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


def test_last_indexed_never_moves_back_when_the_newest_document_goes(store: IndexStore) -> None:
    """``lastIndexedAtUtc`` is when the index last changed: deleting the newest document is such a
    change, so the time must not fall back to the older document's (it was ``max(indexed_at)``).
    The newest document's time lies in the future, so a removal stamped with the clock alone would
    fall back too."""
    store.ensure_schema(None, "float32")
    store.replace_document(DocumentRecord("old.md", "s" * 64, 1, 1, "2026-01-01T00:00:00.000Z"), [chunk(0, "old")])
    store.replace_document(DocumentRecord("new.md", "s" * 64, 1, 1, "2999-01-01T00:00:00.000Z"), [chunk(0, "new")])
    assert store.counts().last_indexed_at_utc == "2999-01-01T00:00:00.000Z"
    assert store.delete_document("new.md") is True
    assert store.counts().last_indexed_at_utc == "2999-01-01T00:00:00.000Z"
    assert store.delete_document("old.md") is True
    counts = store.counts()
    assert (counts.documents, counts.last_indexed_at_utc) == (0, "2999-01-01T00:00:00.000Z")
    store.replace_document(DocumentRecord("later.md", "s" * 64, 1, 1, "3000-01-01T00:00:00.000Z"), [chunk(0, "x")])
    assert store.counts().last_indexed_at_utc == "3000-01-01T00:00:00.000Z"


def test_removing_a_document_stamps_the_removal_time(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(DocumentRecord("a.md", "s" * 64, 1, 1, "2026-01-01T00:00:00.000Z"), [chunk(0, "a")])
    store.replace_document(DocumentRecord("b.md", "s" * 64, 1, 1, "2026-01-02T00:00:00.000Z"), [chunk(0, "b")])
    store.delete_document("a.md")  # the index changed now, although b.md was indexed earlier
    last = store.counts().last_indexed_at_utc
    assert last is not None and last > "2026-01-02T00:00:00.000Z"
    assert store.delete_document("never.md") is False
    assert store.counts().last_indexed_at_utc == last  # nothing removed: nothing changed


def test_chunk_counts_count_each_documents_own_chunks(store: IndexStore) -> None:
    """What search compares copies of a passage by (decision 1080)."""
    assert store.chunk_counts(["a.md"]) == {}  # no schema yet: nothing, no failure
    store.ensure_schema(None, "float32")
    store.replace_document(doc("a.md"), [chunk(i, f"text {i}") for i in range(3)])
    store.replace_document(doc("A.md"), [chunk(0, "one")])
    store.replace_document(doc("b/c.md"), [chunk(0, "x"), chunk(1, "y")])
    assert store.chunk_counts(["a.md", "A.md", "b/c.md", "missing.md", "b"]) == {"a.md": 3, "A.md": 1, "b/c.md": 2}
    store.replace_document(doc("a.md"), [chunk(0, "shorter now")])
    store.delete_document("A.md")
    assert store.chunk_counts(("a.md", "a.md", "A.md")) == {"a.md": 1}
    assert store.chunk_counts(set()) == {}


def test_the_states_of_a_few_paths_match_the_full_read(store: IndexStore) -> None:
    assert store.document_states_of(["a.md"]) == {}  # no schema yet: nothing, no failure
    store.ensure_schema(None, "float32")
    assert store.document_states_of(["a.md"]) == {}
    names = ["a.md", "A.md", "b/c.md", "b/c.md.bak.md", "it's %_.md", "状态.md"]
    for n, name in enumerate(names):
        store.replace_document(doc(name, f"{n:064d}"), [chunk(0, f"text {n}")])
    store.touch_document("b/c.md", 31, 41)
    full = store.document_states()
    assert store.document_states_of(names) == full  # ids, hashes, sizes and mtimes alike
    for name in names:
        assert store.document_states_of([name]) == {name: full[name]}  # exact and case-sensitive
    assert store.document_states_of(("a.md", "a.md", "missing.md", "b", "b/", "%")) == {"a.md": full["a.md"]}
    assert store.document_states_of(set()) == {}
    store.delete_document("A.md")
    assert store.document_states_of(["A.md", "a.md"]) == {"a.md": full["a.md"]}


def test_the_states_under_a_folder_prefix_match_the_full_read(store: IndexStore) -> None:
    assert store.document_states_under("a/") == {}  # no schema yet: nothing, no failure
    store.ensure_schema(None, "float32")
    assert store.document_states_under("a/") == {}
    names = [
        "a.md", "a/x.md", "a/b/y.md", "a0.md", "a-b/z.md", "A/x.md", "ab/x.md", "a.md/n.md",
        "50%/p.md", "50x/p.md", "5%/q.md", "a_b/r.md", "axb/r.md", "状态/s.md", "状态x/s.md", "状/t.md",
    ]  # fmt: skip
    for n, name in enumerate(names):
        store.replace_document(doc(name, f"{n:064d}"), [chunk(0, f"text {n}")])
    full = store.document_states()
    for prefix in ["a/", "a/b/", "A/", "50%/", "5%/", "a_b/", "状态/", "状/", "a.md/", "missing/", "%/", "_/"]:
        expected = {p: s for p, s in full.items() if p.startswith(prefix)}  # exact and case-sensitive
        assert store.document_states_under(prefix) == expected, prefix
    assert set(store.document_states_under("a/")) == {"a/x.md", "a/b/y.md"}
    assert set(store.document_states_under("50%/")) == {"50%/p.md"}  # % and _ are no wildcards
    assert set(store.document_states_under("a_b/")) == {"a_b/r.md"}
    assert store.document_states_under("") == full
    store.delete_document("a/x.md")
    assert set(store.document_states_under("a/")) == {"a/b/y.md"}


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
    assert lexical_paths(filled, Term("insta")) == []  # a word, not a prefix
    assert sorted(lexical_paths(filled, Prefix("insta"))) == ["guide.md", "notes/count.md"]


def test_a_word_meets_its_inflections_and_the_exact_form_ranks_first(filled: IndexStore) -> None:
    # "installing" is nowhere: its stem finds "Install" and "installation"
    assert sorted(lexical_paths(filled, Term("installing"))) == ["guide.md", "notes/count.md"]
    assert lexical_paths(filled, Term("installation"))[0] == "notes/count.md"  # written exactly there
    assert lexical_paths(filled, Term("Install"))[0] == "guide.md"
    assert sorted(lexical_paths(filled, Term("counting"))) == ["Notes/rc.md", "notes/count.md"]
    # identifiers are matched as written, never by stem; CJK is left alone
    assert lexical_paths(filled, Term("strong_counts")) == []
    assert lexical_paths(filled, Term("Rc::strong_count")) == ["Notes/rc.md"]
    assert lexical_paths(filled, CjkRun("状态")) == ["zh/state.md"]


def test_a_hyphenated_word_meets_its_parts_inflections_and_the_exact_form_ranks_first(store: IndexStore) -> None:
    """``fine-tuned`` found only ``fine-tuned``, never ``fine-tuning``: a word joined by hyphens got
    no stems (decision 1017). Its parts' stems now match, adjacent and in order."""
    store.ensure_schema(None, "float32")
    store.replace_document(
        doc("ml/tuning.md"), [chunk(0, "Fine-tuning a model on your data takes an hour.", "Training")]
    )
    store.replace_document(doc("ml/tuned.md"), [chunk(0, "A fine-tuned model answers in the house style.", "Models")])
    store.replace_document(doc("ml/apart.md"), [chunk(0, "Tuned by hand, it is fine as it is.", "Notes")])
    store.replace_document(doc("ml/knn.md"), [chunk(0, "Approximate k-NN search over knn vectors.", "Search")])
    assert lexical_paths(store, Term("fine-tuned")) == ["ml/tuned.md", "ml/tuning.md"]  # not the parts apart
    assert lexical_paths(store, Term("fine-tuning")) == ["ml/tuning.md", "ml/tuned.md"]
    assert lexical_paths(store, AnyOf((Term("fine-tuned"), Term("answers"))))[0] == "ml/tuned.md"
    assert lexical_paths(store, Term("k-NN")) == ["ml/knn.md"]  # an identifier as written, as before
    assert lexical_paths(store, Term("k-NNs")) == []  # one part long enough to stem: exact only


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


@pytest.mark.parametrize("storage", ["float32", "float16", "int8", "binary"])
def test_vectors_pending_then_stored_then_searched(store: IndexStore, storage: str) -> None:
    if storage == "float16" and type(store).__name__ == "SqliteStore":
        pytest.skip("float16 is PostgreSQL only: the configuration refuses it on SQLite (decision 171)")
    store.ensure_schema(DIMS, storage)
    assert store.has_vectors()
    store.replace_document(doc("a.md"), [chunk(0, "alpha", vector=vec(0)), chunk(1, "beta")])
    store.replace_document(doc("b/c.md"), [chunk(0, "gamma"), chunk(1, "delta")])
    assert store.pending_vector_count() == 3 and store.counts().pending_vectors == 3
    assert store.pending_vector_count({"a.md"}) == 1 and store.pending_vector_count({"b/c.md", "gone.md"}) == 2
    assert store.pending_vector_count(set()) == 0
    pending = store.pending_vectors(2)
    assert [(p.path, p.text) for p in pending] == [("a.md", "beta"), ("b/c.md", "gamma")]  # id order
    waiting = {p.text: p for p in store.pending_vectors(10)}
    assert store.store_vectors([(waiting["beta"], vec(1)), (waiting["gamma"], vec(2)), (waiting["delta"], vec(3))]) == 3
    assert store.store_vectors([(waiting["beta"], vec(4))]) == 0  # no longer pending: skipped
    assert store.pending_vector_count() == 0 and store.pending_vectors(10) == []
    hits = store.semantic(vec(1, 0), 2, None)
    assert {h.text for h in hits} == {"alpha", "beta"} and hits[0].distance is not None
    assert hits[0].distance <= hits[1].distance  # type: ignore[operator]
    assert [h.text for h in store.semantic(vec(2), 1, None)] == ["gamma"]
    (scoped,) = store.semantic(vec(0), 1, PathScope(("b/**",)))
    assert scoped.path == "b/c.md"
    reuse = store.vectors_by_text_hash("a.md")
    assert set(reuse) == {"halpha", "hbeta"} and float(np.dot(reuse["halpha"], vec(0))) > 0.99


def test_a_vector_is_stored_only_on_the_text_it_was_made_from(store: IndexStore) -> None:
    """A document stored again while the pass embeds its old chunks: on SQLite the new chunks take
    the old ids (they start after the highest left), so the id alone would put the old text's
    vector, or its refusal, on the new text (decision 801)."""
    store.ensure_schema(DIMS, "float32")
    store.replace_document(doc("a.md"), [chunk(0, "alpha", vector=vec(0))])
    store.replace_document(doc("z.md"), [chunk(0, "plums"), chunk(1, "figs")])
    old = store.pending_vectors(10)  # what the pass is embedding
    store.replace_document(doc("z.md"), [chunk(0, "kiwis"), chunk(1, "figs")])
    # figs may keep its id (SQLite) and its vector then is its own; plums' never lands on kiwis
    assert store.store_vectors([(p, vec(1)) for p in old]) <= 1
    store.refuse_vectors([(p, "too long") for p in old])
    assert store.refused_vectors(5) == (0, [])
    waiting = {p.text: p for p in store.pending_vectors(10)}
    assert "kiwis" in waiting and "plums" not in waiting
    assert store.store_vectors([(p, vec(2)) for p in waiting.values()]) == len(waiting)
    assert store.pending_vector_count() == 0


def test_a_lexical_store_has_no_vectors(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("a.md"), [chunk(0, "alpha")])
    assert not store.has_vectors() and store.pending_vector_count() == 0 and store.pending_vectors(5) == []
    assert store.pending_vector_count({"a.md"}) == 0
    assert store.store_vectors([(PendingChunk(1, "a.md", "alpha", None, "halpha"), vec(0))]) == 0
    assert store.semantic(vec(0), 5, None) == []


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


def test_links_and_metadata_of_some_documents_only(store: IndexStore) -> None:
    """kb_links reads only the changed documents' rows when it updates its graph (decision 302)."""
    store.ensure_schema(None, "float32")
    for name in ("a", "b", "c"):
        links = [LinkRecord("inline", f"{name}{i}.md", None, None) for i in range(2)]
        store.replace_document(doc(f"{name}.md"), [], links, DocumentMeta((name,)))
    assert [(ln.source, ln.destination) for ln in store.links(["c.md", "a.md", "zz.md"])] == [
        ("a.md", "a0.md"),
        ("a.md", "a1.md"),
        ("c.md", "c0.md"),
        ("c.md", "c1.md"),
    ]
    assert store.document_meta({"b.md", "zz.md"}) == {"b.md": DocumentMeta(("b",))}
    assert store.links([]) == [] and store.document_meta([]) == {}
    assert store.links(None) == store.links() and len(store.links()) == 6


def test_reset_drops_the_link_graph(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("a.md"), [], [LinkRecord("inline", "b.md", None, None)], DocumentMeta(("t",)))
    store.reset(None, "float32")
    assert store.links() == [] and store.document_meta() == {} and store.paths_with_tags(["t"]) == set()


# ---------------------------------------------------------------------------- the chunk and vector API
def _external(chunk_id: str, *hot: int, collection: str = "external", path: str = "ext/a.txt", **meta: object):
    from local_vector_search_mcp.index.chunks import ExternalChunk

    return ExternalChunk(chunk_id, collection, path, 0, f"text of {chunk_id}", dict(meta), vec(*hot))


def test_markdown_chunks_carry_ids_and_front_matter(store: IndexStore) -> None:
    from dataclasses import replace

    store.ensure_schema(DIMS, "float32")
    store.write_manifest({"embedding_dimensions": str(DIMS)})
    record = replace(doc("b.md"), properties={"tags": ["x", "y"], "status": "draft"})
    store.replace_document(record, [chunk(0, "zero", "H", vec(0)), chunk(1, "one", "H", vec(1))])
    store.replace_document(doc("a.md"), [chunk(0, "first", None, vec(2))])
    listed = store.markdown_chunks(None, None, 10)
    assert [c.id for c in listed] == ["md:a.md#0", "md:b.md#0", "md:b.md#1"]
    assert [c.id for c in store.markdown_chunks(None, ("b.md", 0), 10)] == ["md:b.md#1"]
    assert [c.id for c in store.markdown_chunks("b.md", None, 1)] == ["md:b.md#0"]
    b0 = store.markdown_chunks("b.md", None, 1, with_vector=True)[0]
    assert b0.metadata["tags"] == ["x", "y"] and b0.metadata["status"] == "draft"
    assert b0.metadata["indexedRevision"] == "s" * 64 and b0.metadata["headingPath"] == "H"
    assert b0.dimensions == DIMS and b0.vector is not None and np.allclose(b0.vector, vec(0))
    assert store.vector_dimensions() == DIMS


def test_external_chunks_crud_and_order(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    assert store.put_external(_external("b", 1)) is True
    assert store.put_external(_external("a", 2, collection="crm")) is True
    assert store.put_external(_external("b", 3, customer="acme")) is False  # replaced
    got = store.external_chunk("b", with_vector=True)
    assert got is not None and got.metadata == {"customer": "acme"} and np.allclose(got.vector, vec(3))
    assert [c.id for c in store.external_chunks(None, None, None, 10)] == ["a", "b"]  # crm < external
    assert [c.id for c in store.external_chunks(None, None, ("crm", "a"), 10)] == ["b"]
    assert [c.id for c in store.external_chunks("crm", None, None, 10)] == ["a"]
    assert store.vector_dimensions() == DIMS
    store.reset(None, "float32")  # a forced rebuild of the Markdown's index keeps them
    assert store.delete_external("a") is True and store.delete_external("a") is False
    assert store.external_chunk("a") is None and store.external_chunk("b") is not None


def test_external_metadata_numbers_come_back_as_stored(store: IndexStore) -> None:
    """Decision 733: jsonb prints a whole float past 1e16 without its exponent or a fraction
    (1e20 as 100000000000000000000), so PostgreSQL gave an integer back for a float."""
    store.ensure_schema(None, "float32")
    sent = {"big": 1e20, "huge": 1e300, "neg": -1.5e17, "whole": 3.0, "small": 1.5e-300, "n": 2**70, "i": 7}
    store.put_external(_external("m", 1, **sent, nested=[{"x": 1e16}]))
    got = store.external_chunk("m")
    assert got is not None
    assert got.metadata == {**sent, "nested": [{"x": 1e16}]}
    kinds = {k: type(v) for k, v in got.metadata.items() if k != "nested"}
    assert kinds == {k: type(v) for k, v in sent.items()}
    assert type(got.metadata["nested"][0]["x"]) is float


def test_nearest_chunks_filters_inside_retrieval(store: IndexStore) -> None:
    from dataclasses import replace

    from local_vector_search_mcp.index.chunks import ChunkFilterSpec

    store.ensure_schema(DIMS, "float32")
    store.write_manifest({"embedding_dimensions": str(DIMS)})
    store.replace_document(replace(doc("guide/a.md"), properties={"tags": ["t"]}), [chunk(0, "a", None, vec(0))])
    store.replace_document(doc("notes/b.md"), [chunk(0, "b", None, vec(0, 1))])
    store.put_external(_external("x", 0, 2, kind="crm"))
    store.put_external(replace(_external("stale", 0), stale=True))

    everything = store.nearest_chunks(vec(0), 10, ChunkFilterSpec())
    assert [c.id for c, _ in everything][:1] == ["md:guide/a.md#0"] and everything[0][1] == pytest.approx(1.0)
    assert "stale" not in [c.id for c, _ in everything]
    assert [c.id for c, _ in store.nearest_chunks(vec(0), 1, ChunkFilterSpec(path_prefix="notes"))] == [
        "md:notes/b.md#0"
    ]
    assert [c.id for c, _ in store.nearest_chunks(vec(0), 1, ChunkFilterSpec(tags=("t",)))] == ["md:guide/a.md#0"]
    assert [c.id for c, _ in store.nearest_chunks(vec(0), 1, ChunkFilterSpec(metadata=(("kind", "crm"),)))] == ["x"]
    only_ext = store.nearest_chunks(vec(0), 5, ChunkFilterSpec(collections=("external",)))
    assert [c.id for c, _ in only_ext] == ["x"]
    globbed = store.nearest_chunks(vec(0), 5, ChunkFilterSpec(path_globs=("guide/**",)))
    assert [c.id for c, _ in globbed] == ["md:guide/a.md#0"]


def test_a_path_prefix_with_a_leading_slash_matches_external_absolute_source_paths(store: IndexStore) -> None:
    """Decision 736: an external sourcePath is any string, e.g. `/data/crm.txt`; the prefix lost
    its leading slash (root-relative, for Markdown paths) and `/data` matched nothing."""
    from local_vector_search_mcp.index.chunks import ChunkFilterSpec

    store.ensure_schema(DIMS, "float32")
    store.write_manifest({"embedding_dimensions": str(DIMS)})
    store.replace_document(doc("data/a.md"), [chunk(0, "a", None, vec(0))])
    store.put_external(_external("abs", 0, path="/data/crm.txt"))
    store.put_external(_external("rel", 0, path="data/other.txt"))
    store.put_external(_external("elsewhere", 0, path="/database/x.txt"))

    def ids(prefix: str) -> list[str]:
        return sorted(c.id for c, _ in store.nearest_chunks(vec(0), 10, ChunkFilterSpec(path_prefix=prefix)))

    assert ids("/data") == ["abs", "md:data/a.md#0", "rel"]
    assert ids("/DATA/") == ["abs", "md:data/a.md#0", "rel"]
    assert ids("data") == ["md:data/a.md#0", "rel"]
    assert ids("/data/crm.txt") == ["abs"]


def test_equal_scores_at_the_top_k_cut_keep_the_same_chunks_on_every_engine(store: IndexStore) -> None:
    """Duplicated text has equal vectors: the chunks kept at the cut are the first by (path,
    ordinal) and by (collection, id), not the first written (decision 361)."""
    from local_vector_search_mcp.index.chunks import ChunkFilterSpec

    store.ensure_schema(DIMS, "float32")
    store.write_manifest({"embedding_dimensions": str(DIMS)})
    for path in ("z.md", "b.md", "a.md"):  # written last, first by path
        store.replace_document(doc(path), [chunk(0, "same", None, vec(1)), chunk(1, "same", None, vec(1))])
    for chunk_id in ("b2", "b1", "a9"):
        store.put_external(_external(chunk_id, 2))
    md = store.nearest_chunks(vec(1), 3, ChunkFilterSpec())
    assert [c.id for c, _ in md] == ["md:a.md#0", "md:a.md#1", "md:b.md#0"]
    ext = store.nearest_chunks(vec(2), 2, ChunkFilterSpec())
    assert [c.id for c, _ in ext] == ["a9", "b1"]


def test_a_null_metadata_filter_matches_an_absent_field(store: IndexStore) -> None:
    """As get_chunk shows an absent front matter ``status`` as null (decision 363)."""
    from dataclasses import replace

    from local_vector_search_mcp.index.chunks import ChunkFilterSpec

    store.ensure_schema(DIMS, "float32")
    store.write_manifest({"embedding_dimensions": str(DIMS)})
    store.replace_document(replace(doc("done.md"), properties={"status": "done"}), [chunk(0, "a", None, vec(0))])
    store.replace_document(doc("plain.md"), [chunk(0, "b", None, vec(0))])
    store.replace_document(replace(doc("open.md"), properties={"status": None}), [chunk(0, "c", None, vec(0))])
    store.put_external(_external("with", 0, status="x"))
    store.put_external(_external("without", 0))
    found = store.nearest_chunks(vec(0), 10, ChunkFilterSpec(metadata=(("status", None),)))
    assert sorted(c.id for c, _ in found) == ["md:open.md#0", "md:plain.md#0", "without"]


def test_a_metadata_filter_on_a_large_whole_float_matches_as_python_compares(store: IndexStore) -> None:
    """Decision 987: PostgreSQL stores a whole float past 1e16 as its exact digits (733) but read
    the filter's ``1e+23`` as exactly 10^23, so 1e23, 1e308 and float(2^63) never matched."""
    from dataclasses import replace

    from local_vector_search_mcp.index.chunks import ChunkFilterSpec

    store.ensure_schema(DIMS, "float32")
    store.write_manifest({"embedding_dimensions": str(DIMS)})
    stored = {"x": 1e23, "ts": 2**63, "top": 1e308}
    store.replace_document(replace(doc("big.md"), properties=stored), [chunk(0, "a", None, vec(0))])
    store.put_external(_external("flt", 0, **stored))

    def ids(key: str, value: object) -> list[str]:
        return sorted(c.id for c, _ in store.nearest_chunks(vec(0), 10, ChunkFilterSpec(metadata=((key, value),))))

    both = ["flt", "md:big.md#0"]
    assert ids("x", 1e23) == both
    assert ids("x", int(1e23)) == both  # 99999999999999991611392, the float's exact value
    assert ids("x", 10**23) == []  # 1e23 != 10**23 in Python
    assert ids("ts", float(2**63)) == both and ids("ts", 2**63) == both
    assert ids("top", 1e308) == both
    assert ids("x", 1e20) == []


# ---------------------------------------------------------------------------- moving an index (index copy)
def test_export_then_import_gives_every_row_back(store: IndexStore) -> None:
    from dataclasses import replace

    store.ensure_schema(DIMS, "float32")
    odd = np.array([0.3, 0.1, 0.7, 0.0, 0.2, 0.5, 0.1, 0.3], dtype=np.float32)  # not unit: kept as given
    links = [LinkRecord("inline", "b.md#x", "B", None), LinkRecord("wikilink", "C", None, "p0~a~b")]
    meta = DocumentMeta(("Project/Alpha",), ("A note",), ("Title",), ())
    store.replace_document(
        replace(doc("b.md"), properties={"tags": ["x"], "n": 2}),
        [chunk(0, "zero", "H", vec(0)), chunk(1, "one", None)],  # the second waits for its vector
        links,
        meta,
    )
    store.replace_document(doc("a.md"), [chunk(0, "first", None, vec(2))])
    store.replace_document(doc("c.md"), [chunk(0, "third", None, vec(3))])
    first = store.export_documents(None, 2)
    assert [d.document.path for d in first] == ["a.md", "b.md"]
    rest = store.export_documents("b.md", 2)
    assert [d.document.path for d in rest] == ["c.md"] and store.export_documents("c.md", 2) == []
    b = first[1]
    assert b.links == tuple(links) and b.meta == meta and b.document.properties == {"tags": ["x"], "n": 2}
    assert [(c.ordinal, c.text, c.heading_path, c.anchor) for c in b.chunks] == [
        (0, "zero", "H", "p0~0000000000000000~0000000000000000"),
        (1, "one", None, "p1~0000000000000001~0000000000000001"),
    ]
    assert b.chunks[0].vector is not None and b.chunks[1].vector is None
    dumps = [*first, *rest]
    dumps[2] = replace(dumps[2], chunks=(replace(dumps[2].chunks[0], vector=odd),))
    store.reset(DIMS, "float32")
    assert store.import_documents(dumps) == 4
    again = store.export_documents(None, 10)
    assert [d.document.path for d in again] == ["a.md", "b.md", "c.md"]
    assert again[1].links == tuple(links) and again[1].meta == meta
    assert again[2].chunks[0].vector is not None
    assert again[2].chunks[0].vector.tobytes() == odd.tobytes()  # stored exactly as given, never renormalised
    assert store.pending_vector_count() == 1 and store.counts().chunks == 4
    assert lexical_paths(store, Term("third")) == ["c.md"] and store.paths_with_tags(["project"]) == {"b.md"}
    assert [h.path for h in store.semantic(odd, 1, None)] == ["c.md"]


TRICKY_PATHS = [
    "a.md",
    "Docs/Guide.MD",
    "docs/sub/deep/x.md",
    "docs/100%_done.md",
    "docs/100x-done.md",
    "docs/[draft].md",
    "docs/[d]x.md",
    "docs/d.md",
    "notes/Straße.md",
    "notes/STRASSE.md",
    "notes/ſtate.md",
    "notes/file.v2.md",
    "notes/file-v2.md",
    "notes/a+b (1).md",
    "notes/$x^y.md",
    "notes/back\\slash.md",
    "日本/東京.md",
    "\u212a/x.md",
]
TRICKY_SCOPES = [
    PathScope(),
    PathScope(("**",)),
    PathScope(("docs/**",)),
    PathScope(("docs/*",)),
    PathScope(("**/*.MD",)),
    PathScope(("docs/?.md",)),
    PathScope(("docs/100%_done.md",)),  # % and _ are literal, not LIKE wildcards
    PathScope(("docs/[draft].md",)),  # brackets are literal, not a character class
    PathScope(("docs/[d]*.md",)),
    PathScope(("notes/straße.md",)),
    PathScope(("notes/state.md",)),  # Python's re: long s matches s case-insensitively
    PathScope(("notes/file.v2.md",)),  # the dot is literal
    PathScope(("notes/a+b (1).md", "notes/$x^y.md", "notes/back\\slash.md")),
    PathScope(("日本/*",)),
    PathScope(("K/*",)),
    PathScope(("**/*.md",), ("docs/**", "notes/s*")),
    PathScope((), ("**/d.md",)),
    PathScope(("**",), paths=frozenset({"a.md", "docs/d.md", "missing.md"})),
    PathScope(("docs/**/x.md", "*.md")),
]


def test_path_scopes_match_the_reference_globs(store: IndexStore) -> None:
    """Tricky globs and paths: every engine keeps exactly the paths ``PathScope.matcher`` keeps
    (PostgreSQL evaluates them in SQL as regular expressions)."""
    store.ensure_schema(DIMS, "float32")
    for i, path in enumerate(TRICKY_PATHS):
        store.replace_document(doc(path), [chunk(0, "needle", vector=vec(i % DIMS))])
    for scope in TRICKY_SCOPES:
        expected = sorted(p for p in TRICKY_PATHS if scope.matcher()(p))
        assert sorted(lexical_paths(store, Term("needle"), scope, limit=100)) == expected, scope
        assert sorted(h.path for h in store.semantic(vec(0), 100, scope)) == expected, scope


def test_chunk_filters_match_the_reference_predicates(store: IndexStore) -> None:
    """Every filter kind, with the odd values front matter and metadata hold, keeps exactly the
    chunks ``ChunkFilterSpec.matches`` admits (PostgreSQL: in SQL, before the limit)."""
    from dataclasses import replace

    from local_vector_search_mcp.index.chunks import ChunkFilterSpec, markdown_chunk_id

    store.ensure_schema(DIMS, "float32")
    store.write_manifest({"embedding_dimensions": str(DIMS)})
    props: list[dict[str, object] | None] = [
        {"tags": ["x", "y"], "status": "draft"},
        {"tags": "x", "n": 1},
        {"tags": [1, 2.5, True, None, {"a": 1}], "n": 1.0, "flag": True},
        {"tags": [], "n": True, "nested": {"a": [1, "b"]}},
        None,
        {"status": None, "n": 0},
    ]
    paths = ["Docs/a.md", "docs/sub/b.md", "docsx/c.md", "notes/100%_d.md", "ſtate/e.md", "docs"]
    reference: dict[str, tuple[str, str, dict[str, object]]] = {}
    for i, (path, p) in enumerate(zip(paths, props, strict=True)):
        store.replace_document(replace(doc(path), properties=p), [chunk(0, f"t{i}", None, vec(i % DIMS, 7))])
        reference[markdown_chunk_id(path, 0)] = ("markdown", path, dict(p or {}))
    for i, meta in enumerate([{"tags": ["x"], "n": 1}, {"n": False, "kind": "crm"}, {"nested": {"a": [1, "b"]}}]):
        chunk_id = f"e{i}"
        store.put_external(_external(chunk_id, i, 7, collection="crm" if i else "external", path=paths[i], **meta))
        reference[chunk_id] = ("crm" if i else "external", paths[i], meta)
    specs = [
        ChunkFilterSpec(),
        ChunkFilterSpec(path_prefix="docs"),
        ChunkFilterSpec(path_prefix="/DOCS/"),
        ChunkFilterSpec(path_prefix="docs/sub/b.md"),
        ChunkFilterSpec(path_prefix="state"),  # long s: case-insensitive like the globs
        ChunkFilterSpec(path_prefix="notes/100%_"),
        ChunkFilterSpec(path_globs=("docs/**", "*/e.md")),
        ChunkFilterSpec(tags=("x",)),
        ChunkFilterSpec(tags=("x", "y")),
        ChunkFilterSpec(tags=("1", "2.5", "True")),
        ChunkFilterSpec(metadata=(("n", 1),)),
        ChunkFilterSpec(metadata=(("n", True),)),
        ChunkFilterSpec(metadata=(("n", 0),)),
        ChunkFilterSpec(metadata=(("status", None),)),
        ChunkFilterSpec(metadata=(("flag", True), ("n", 1))),
        ChunkFilterSpec(metadata=(("kind", "crm"),), collections=("crm",)),
        ChunkFilterSpec(collections=("markdown",), path_prefix="docs"),
    ]
    for spec in specs:
        expected = {cid for cid, (coll, path, fields) in reference.items() if spec.matches(coll, path, fields)}
        found = store.nearest_chunks(vec(7), 100, spec)
        assert {c.id for c, _ in found} == expected, spec
        if expected:  # the filter applies before the limit: the one best admitted chunk is found
            assert len(store.nearest_chunks(vec(7), 1, spec)) == 1, spec


def test_matches_by_stem_alone_are_ranked_by_bm25(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    filler = " ".join(f"word{i}" for i in range(60))
    store.replace_document(doc("long.md"), [chunk(0, f"{filler} echo {filler}")])  # inserted first
    store.replace_document(doc("short.md"), [chunk(0, "Echoes echoed: echo.")])
    store.replace_document(doc("other.md"), [chunk(0, "nothing to see")])
    assert lexical_paths(store, Term("echoing")) == ["short.md", "long.md"]


def test_a_coverage_query_ranks_the_chunk_holding_more_of_its_words_first(store: IndexStore) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(doc("rare.md"), [chunk(0, "exists exists exists", "Exists")])
    store.replace_document(doc("most.md"), [chunk(0, "change the number of replicas and shards of each one")])
    for i in range(3):  # words on several pages weigh less in BM25 than "exists" on one
        store.replace_document(doc(f"f{i}.md"), [chunk(0, f"change number replicas shards {i}")])
    for i in range(8):
        store.replace_document(doc(f"other{i}.md"), [chunk(0, f"unrelated text {i}")])
    words = (Term("change"), Term("number"), Term("replicas"), Term("shards"), Term("exists"))
    assert lexical_paths(store, AnyOf(words))[0] == "rare.md"
    ranked = lexical_paths(store, AnyOf(words, coverage=1.0))
    assert ranked.index("most.md") < ranked.index("rare.md")


def test_a_coverage_by_rarity_counts_the_rare_word_above_the_common_ones(store: IndexStore) -> None:
    """Decision 1070: a task told in common words (``get rid of old log data ... cron``): the chunk
    holding the rare word the task is about goes above one holding more of the common words,
    which a plain share (every word once) puts first. Not the test fake: its BM25 idf (Lucene's,
    never below zero) weighs words on most pages several times what FTS5's and PostgreSQL's do,
    so no one corpus has the plain share and the share by rarity disagree on all three."""
    if isinstance(store, MemoryStore):
        pytest.skip("the fake's idf keeps common words heavy; the weights are tested in test_coverage.py")
    store.ensure_schema(None, "float32")
    store.replace_document(doc("cron.md"), [chunk(0, "Schedule it with cron: a cron expression.")])
    store.replace_document(doc("common.md"), [chunk(0, "Get rid of the old log data.")])
    for i in range(12):  # the common words are on many pages
        store.replace_document(doc(f"f{i}.md"), [chunk(0, f"get rid of old log data on page {i} of many")])
    for i in range(16):
        store.replace_document(doc(f"u{i}.md"), [chunk(0, f"unrelated text {i}")])
    words = (Term("get"), Term("rid"), Term("old"), Term("log"), Term("data"), Term("cron"))
    plain = lexical_paths(store, AnyOf(words, coverage=1.0), limit=40)
    rare = lexical_paths(store, AnyOf(words, coverage=1.0, by_rarity=True), limit=40)
    assert plain.index("common.md") < plain.index("cron.md")
    assert rare.index("cron.md") < rare.index("common.md")


def test_titled_gives_the_first_chunk_of_each_document_whose_heading_path_begins_with_the_words(
    store: IndexStore,
) -> None:
    store.ensure_schema(None, "float32")
    store.replace_document(
        doc("seg.md"),
        [chunk(0, "Overview text.", "Segment replication"), chunk(1, "Settings.", "Segment replication > Settings")],
    )
    store.replace_document(
        doc("sub.md"), [chunk(0, "Intro.", "Cluster"), chunk(1, "x", "Cluster > Segment replication")]
    )
    store.replace_document(doc("back.md"), [chunk(0, "Pressure.", "Segment replication backpressure")])
    store.replace_document(doc("zh.md"), [chunk(0, "插槽内容。", "具名插槽 {#named-slots}")])
    found = store.titled(("segment", "replication"), 10, None)
    assert [(h.path, h.anchor.split("~")[0]) for h in found if h.path != "back.md"] == [("seg.md", "p0")]
    assert "sub.md" not in {h.path for h in found}  # the words must open the heading path
    assert [h.path for h in store.titled(("具名插槽",), 10, None)] == ["zh.md"]
    assert [h.path for h in store.titled(("segment", "replication"), 10, PathScope(("back*",)))] == ["back.md"]
    assert store.titled(("absent",), 10, None) == []


class _Interleaved:
    """The store as one update_chunk call sees it, with another client's call run right after the
    update's first store call returns: the moment a read-then-write update is most exposed; or,
    given ``before``, right before the first call of that store method (an upsert's write).
    Deterministic, and the same store serves both (as one HTTP server serves many sessions)."""

    def __init__(self, store: IndexStore, other: Callable[[IndexStore], object], before: str | None = None) -> None:
        self._store = store
        self._other: Callable[[IndexStore], object] | None = other
        self._before = before

    def __getattr__(self, name: str) -> object:
        found = getattr(self._store, name)
        if not callable(found):
            return found

        def call(*args: object, **kwargs: object) -> object:
            if name == self._before:
                self._run_other()
            result = found(*args, **kwargs)
            if self._before is None:
                self._run_other()
            return result

        return call

    def _run_other(self) -> None:
        other, self._other = self._other, None
        if other is not None:
            other(self._store)


def _chunk_api(store: object) -> ChunkApi:
    from types import SimpleNamespace

    from local_vector_search_mcp.embeddings.slot import EmbedderSlot
    from local_vector_search_mcp.index.activity import IndexActivity

    config = SimpleNamespace(embedding=SimpleNamespace(dimensions=None, provider="none"))
    return ChunkApi(config, store, EmbedderSlot(config.embedding), IndexActivity())  # type: ignore[arg-type]


def test_an_update_racing_a_delete_never_brings_the_chunk_back(store: IndexStore) -> None:
    """Decision 780: update_chunk read the chunk, then upserted it whole, so a delete_chunk that
    ran between the two was undone (the deleted chunk came back with its old vector)."""
    from local_vector_search_mcp.errors import NotFound

    store.ensure_schema(None, "float32")
    store.put_external(_external("x", 1))
    api = _chunk_api(_Interleaved(store, lambda other: other.delete_external("x")))
    with contextlib.suppress(NotFound):  # the delete came first: equally correct
        api.update("x", "changed text", None, None)
    assert store.external_chunk("x") is None
    assert store.external_chunks(None, None, None, 10) == []


def test_two_updates_of_different_fields_both_survive(store: IndexStore) -> None:
    """Decision 780: the second of two concurrent update_chunk calls wrote back the first's
    fields as it had read them, so a new text or metadata acknowledged to one client was lost."""
    store.ensure_schema(None, "float32")
    store.put_external(_external("x", 1, owner="a"))
    api = _chunk_api(_Interleaved(store, lambda other: _chunk_api(other).update("x", None, None, {"owner": "b"})))
    got = api.update("x", "changed text", None, None)
    assert got.content == "changed text"  # the update's own result: its change, stale without a vector
    assert got.stale is True
    final = store.external_chunk("x", with_vector=True)
    assert final is not None and final.content == "changed text" and final.metadata == {"owner": "b"}
    assert final.stale is True and final.vector is not None and np.allclose(final.vector, vec(1))


def _racing_an_upsert_into_c1(store: IndexStore, first: list[tuple[str, bool]]) -> ChunkApi:
    """A chunk API whose write of an external chunk is preceded by another client's upsert of
    the same new id ``x`` into ``c1`` (its answer appended to ``first``)."""
    store.ensure_schema(None, "float32")
    return _chunk_api(
        _Interleaved(
            store,
            lambda other: first.append(_chunk_api(other).upsert("x", "a.txt", 0, "A", list(vec(1)), None, "c1")),
            before="put_external",
        )
    )


def test_an_upsert_racing_one_of_the_same_new_id_in_another_collection_is_refused(store: IndexStore) -> None:
    """Decision 988: upsert_vector read the id, then wrote the chunk with the collection it named,
    so another client's upsert of the same new id into another collection between the two was
    overwritten: both were told the chunk was stored, and the first one's had moved."""
    from local_vector_search_mcp.errors import InvalidArgument

    first: list[tuple[str, bool]] = []
    api = _racing_an_upsert_into_c1(store, first)
    with pytest.raises(InvalidArgument) as refused:
        api.upsert("x", "a.txt", 0, "B", list(vec(2)), None, "c2")
    assert (
        refused.value.message == "Chunk 'x' is in collection 'c1'; delete it first (delete_chunk) to move it to 'c2', "
        "or send collection 'c1'."
    )
    assert first == [("x", True)]
    stored = store.external_chunk("x", with_vector=True)
    assert stored is not None and (stored.collection, stored.content) == ("c1", "A")
    assert stored.vector is not None and np.allclose(stored.vector, vec(1))


def test_an_upsert_naming_no_collection_keeps_the_one_a_racing_upsert_stored(store: IndexStore) -> None:
    """Decision 988: no collection means "keep the stored one" as the write finds the row, not as
    a read before it did: the chunk went to `external` and left the collection the other client
    named. Only the first writer is told ``created``."""
    first: list[tuple[str, bool]] = []
    api = _racing_an_upsert_into_c1(store, first)
    assert api.upsert("x", "b.txt", 1, "B", list(vec(2)), {"k": 1}, None) == ("x", False)
    assert first == [("x", True)]
    stored = store.external_chunk("x")
    assert stored is not None and (stored.collection, stored.source_path, stored.content) == ("c1", "b.txt", "B")
    assert _chunk_api(store).upsert("x", "b.txt", 1, "C", list(vec(3)), None, "c1") == ("x", False)
    assert [c.id for c in store.external_chunks("c1", None, None, 10)] == ["x"]


def test_an_update_keeps_the_stale_rule_of_the_stored_row(store: IndexStore) -> None:
    """The conditional update decides staleness from the row it changes: the same text keeps a
    fresh vector fresh, a new vector makes the chunk fresh again, a missing id changes nothing."""
    from local_vector_search_mcp.errors import NotFound

    store.ensure_schema(None, "float32")
    store.put_external(_external("x", 1, owner="a"))
    api = _chunk_api(store)
    same = api.update("x", "text of x", None, {"owner": "z"})
    assert same.stale is False and same.metadata == {"owner": "z"}
    moved = api.update("x", "other", None, None)
    assert moved.stale is True
    fresh = api.update("x", None, [0, 0, 3, 0, 0, 0, 0, 0], None)
    assert fresh.stale is False and fresh.content == "other"
    stored = store.external_chunk("x", with_vector=True)
    assert stored is not None and stored.vector is not None and np.allclose(stored.vector, vec(2))
    from local_vector_search_mcp.index.chunks import ChunkFilterSpec

    nearest = store.nearest_chunks(vec(2), 1, ChunkFilterSpec())  # the new vector is searched at once
    assert [c.id for c, _ in nearest] == ["x"] and nearest[0][1] == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(NotFound):
        api.update("y", "new", None, None)
    assert store.external_chunk("y") is None


def test_documents_without_own_chunks_are_those_of_front_matter_at_most(store: IndexStore) -> None:
    """Decision 781: the documents a v6 index is upgraded in place by re-reading."""
    from dataclasses import replace

    store.ensure_schema(None, "float32")
    front = replace(chunk(0, "---\ntitle: t\n---"), pointer="frontmatter", anchor="frontmatter~1~1")
    store.replace_document(doc("empty.md"), [])
    store.replace_document(doc("front.md"), [front])
    store.replace_document(doc("body.md"), [front, replace(chunk(1, "words"), ordinal=1)])
    store.replace_document(doc("plain.md"), [chunk(0, "words")])
    assert sorted(store.documents_without_own_chunks()) == ["empty.md", "front.md"]


def test_documents_holding_letters_are_those_a_chunk_text_or_heading_of_which_holds_one(store: IndexStore) -> None:
    """Decision 1006: the documents an earlier tokenizer's index is upgraded in place by re-reading."""
    store.ensure_schema(None, "float32")
    store.replace_document(doc("greek.md"), [chunk(0, "plain words"), chunk(1, "Η αναζήτηση βρίσκει")])
    store.replace_document(doc("heading.md"), [chunk(0, "plain words", heading="Ἄνδρα μοι")])
    store.replace_document(doc("hindi.md"), [chunk(0, "खोज and more")])
    store.replace_document(doc("plain.md"), [chunk(0, "words alone, café crème")])
    assert store.documents_holding_letters("\u0370-\u03ff\u1f00-\u1fff") == ["greek.md", "heading.md"]
    assert store.documents_holding_letters("\u0900-\u0dff") == ["hindi.md"]
    assert store.documents_holding_letters("\uac00-\ud7a3") == []
