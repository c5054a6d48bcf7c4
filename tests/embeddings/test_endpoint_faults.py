"""The vector pipeline against an OpenAI-compatible endpoint that misbehaves (decisions 510-513).

A real HTTP server on loopback (``tests/embedding_endpoint.py``) refuses one over-long input,
answers 429/503/413, drops a connection, returns a zero or odd-sized vector, or switches its
model between runs; the workspace is driven through the tools (reindex, kb_status, kb_search,
the chunk API) on SQLite and PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from embedding_endpoint import Endpoint, endpoint_server
from kb_fakes import KbClient, client

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.embeddings import EmbeddingError, EmbeddingRefused
from local_vector_search_mcp.embeddings.openai import OpenAICompatibleEmbedder
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.retry_after import retry_after

BAD = "TOOLONG"  # the text the endpoint refuses, as a model refuses an input over its context length


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with endpoint_server() as ep:
        yield ep


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "sqlite":
        return {}
    pg = request.getfixturevalue("pg_server")
    return {"storage__backend": "postgresql", "storage__url": pg.url, "storage__schema": pg.fresh_schema()}


def _kb(root: Path) -> Path:
    for i in range(10):
        (root / f"d{i:02}.md").write_text(
            f"# Doc {i}\n\napples and pears {i}\n\n## More\n\noranges part {i}\n", "utf-8"
        )
    # in the middle of the pass: chunks before and after it share batches with it
    (root / "d04b.md").write_text(f"# Bad\n\n{BAD} words the model cannot take\n\n## Fine\n\nbananas here\n", "utf-8")
    return root


def _client(root: Path, ep: Endpoint, **extra: Any) -> KbClient:
    options: dict[str, Any] = {
        "embedding__endpoint": ep.url,
        "embedding__model": "m1",
        "embedding__batch_size": 4,
        "server__toolsets": ["kb", "chunks"],
    }
    options.update(extra)
    return client(root, "openai-compatible", **options)


def _sent(ep: Endpoint, since: int = 0, marker: str = BAD) -> int:
    with ep.lock:
        return sum(1 for request in ep.requests[since:] for text in request if marker in text)


@pytest.mark.parametrize("status", [400, 500])  # OpenAI and vLLM answer 400, llama.cpp's server 500
def test_one_refused_chunk_is_set_aside_and_every_other_chunk_gets_its_vector(
    tmp_path: Path, endpoint: Endpoint, storage: dict[str, Any], status: int
) -> None:
    endpoint.refuse, endpoint.refuse_status = BAD, status
    svc = _client(_kb(tmp_path), endpoint, **storage)
    try:
        result = svc.reindex()
        assert "refused 1 chunk" in result["warning"] and "d04b.md" in result["warning"]
        vectors = svc.vector_status()
        assert vectors is not None
        # was: every chunk pending for ever (the whole pass stopped at the batch holding it)
        assert vectors["embeddedChunks"] == 21 and vectors["pendingChunks"] == 0
        assert vectors["refusedChunks"] == 1 and vectors["lastError"] is None
        (refused,) = vectors["refused"]
        assert refused["path"] == "d04b.md" and refused["chunkIndex"] == 0 and refused["headingPath"] == "Bad"
        assert f"HTTP {status}" in refused["reason"]
        # the document's other chunk has its vector; the refused one is found lexically
        found = svc.search(query="bananas here", mode="semantic")
        assert found["results"][0]["path"] == "d04b.md" and found["results"][0]["headingPath"] == "Bad > Fine"
        assert svc.search(query=BAD.lower(), mode="lexical")["results"][0]["path"] == "d04b.md"
        assert svc.search(query="bananas here", mode="hybrid")["warning"] is None
        # neither a search nor another reindex sends the refused text again...
        before = len(endpoint.requests)
        svc.reindex()
        svc.search(query="apples", mode="hybrid")
        svc.ws.indexing.wait_vectors(10)
        assert _sent(endpoint, before) == 0
        # a reindex of every file tries it once more (the user's way to retry after raising the context)
        before = len(endpoint.requests)
        svc.reindex(scope="all")
        assert _sent(endpoint, before) >= 1
        vectors = svc.vector_status()
        assert vectors is not None and vectors["refusedChunks"] == 1 and vectors["embeddedChunks"] == 21
        # ...and so does a change of its document
        (tmp_path / "d04b.md").write_text("# Bad\n\nshorter words now\n\n## Fine\n\nbananas here\n", "utf-8")
        svc.reindex()
        vectors = svc.vector_status()
        assert vectors is not None
        assert vectors["embeddedChunks"] == 22 and vectors["refusedChunks"] == 0 and vectors["refused"] == []
    finally:
        svc.ws.close()


def test_an_endpoint_that_refuses_everything_sets_no_chunk_aside(tmp_path: Path, endpoint: Endpoint) -> None:
    """A 400 for every text (a model name the server does not know, say) is the endpoint's fault:
    nothing is recorded as refused, everything stays pending and is retried."""
    svc = _client(_kb(tmp_path), endpoint, embedding__dimensions=64)
    try:
        endpoint.refuse = ""  # every text contains it, the probe's too
        result = svc.reindex()
        assert "Embedding failed" in result["warning"] and "HTTP 400" in result["warning"]
        assert "refuses every text" in result["warning"] and "check embedding.model" in result["warning"]
        vectors = svc.vector_status()
        assert vectors is not None
        assert vectors["refusedChunks"] == 0 and vectors["pendingChunks"] == 22 and vectors["embeddedChunks"] == 0
        assert vectors["lastError"] is not None and "HTTP 400" in vectors["lastError"]
        endpoint.refuse = None
        svc.reindex()
        vectors = svc.vector_status()
        assert vectors is not None and vectors["embeddedChunks"] == 22 and vectors["pendingChunks"] == 0
    finally:
        svc.ws.close()


def test_a_zero_or_odd_sized_vector_for_one_chunk_is_refused_alone(tmp_path: Path, endpoint: Endpoint) -> None:
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    (root / "z.md").write_text("# Z\n\nZEROME gets nothing\n", "utf-8")
    (root / "o.md").write_text("# O\n\nODDME gets a longer vector\n", "utf-8")
    endpoint.zero, endpoint.odd = "ZEROME", "ODDME"
    svc = _client(root, endpoint)
    try:
        svc.reindex()
        vectors = svc.vector_status()
        assert vectors is not None
        # was: the zero vector was stored (it matches nothing), the odd one stopped the pass
        assert vectors["refusedChunks"] == 2 and vectors["embeddedChunks"] == 20 and vectors["pendingChunks"] == 0
        reasons = {r["path"]: r["reason"] for r in vectors["refused"]}
        assert "zero vector" in reasons["z.md"] and "65-dimensional" in reasons["o.md"]
    finally:
        svc.ws.close()


@pytest.mark.parametrize("value", [float("nan"), None, 1e39])
def test_a_nan_or_null_in_one_vector_is_refused_alone(tmp_path: Path, endpoint: Endpoint, value: float | None) -> None:
    """One text the model turns into NaN (written as ``NaN``, or ``null`` by llama.cpp's JSON) or
    into a value past float32's range is that chunk refused, as a zero vector is (decision 800)."""
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    (root / "n.md").write_text("# N\n\nNANME breaks the model\n", "utf-8")
    endpoint.broken, endpoint.broken_value = "NANME", value
    svc = _client(root, endpoint)
    try:
        result = svc.reindex()
        assert "refused 1 chunk" in result["warning"] and "n.md" in result["warning"]
        vectors = svc.vector_status()
        assert vectors is not None
        # was: the pass stopped at the batch holding it, in every pass: 3 of 4 batches never embedded
        assert vectors["refusedChunks"] == 1 and vectors["embeddedChunks"] == 20 and vectors["pendingChunks"] == 0
        assert vectors["lastError"] is None and "non-finite" in vectors["refused"][0]["reason"]
        # every stored vector is finite: a semantic search ranks the others, not a NaN distance
        found = svc.search(query="oranges part 3", mode="semantic")
        assert found["results"] and all(np.isfinite(r["score"]) for r in found["results"])
    finally:
        svc.ws.close()


def _settled(svc: KbClient, timeout: float = 30) -> dict[str, Any]:
    """kb_status.vectors once no pass runs and nothing waits (or the timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        vectors = svc.vector_status()
        assert vectors is not None
        if (not vectors["isRunning"] and not vectors["pendingChunks"]) or time.monotonic() > deadline:
            return vectors
        time.sleep(0.05)


def test_an_edit_while_its_old_text_is_embedded_gets_the_vector_of_its_new_text(
    tmp_path: Path, endpoint: Endpoint, storage: dict[str, Any]
) -> None:
    """The newest note holds the highest chunk ids; edited while the pass waits for the vectors of
    its old text, its new chunks took the same ids on SQLite, and the old text's vectors were
    stored on them as if they were theirs: the new text was never embedded (decision 801)."""
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    svc = _client(root, endpoint, **storage)
    try:
        svc.reindex()
        edited = threading.Event()

        def edit_while_embedding(inputs: list[str]) -> None:
            if edited.is_set() or not any("plums" in t for t in inputs):
                return
            edited.set()  # the agent patches its new note while the pass embeds it
            (root / "z.md").write_text("# Z\n\nkiwis and melons\n", "utf-8")
            svc.schedule_sync(["z.md"])
            svc.sync.wait_idle(30)

        endpoint.before_answer = edit_while_embedding
        (root / "z.md").write_text("# Z\n\nplums and figs\n", "utf-8")  # a new note: the highest ids
        svc.schedule_sync(["z.md"])
        svc.sync.wait_idle(30)
        assert edited.wait(30)
        vectors = _settled(svc)
        assert vectors["pendingChunks"] == 0 and vectors["embeddedChunks"] == 21 and vectors["lastError"] is None
        # was: 0, the chunk kept the vector of "plums and figs" and was no longer pending
        assert _sent(endpoint, marker="kiwis and melons") == 1
        best = svc.search(query="kiwis and melons", mode="semantic")["results"][0]
        assert best["path"] == "z.md" and best["score"] > 0.9
    finally:
        endpoint.before_answer = None
        svc.ws.close()


def test_a_batch_too_large_for_the_endpoint_is_halved(tmp_path: Path, endpoint: Endpoint) -> None:
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    endpoint.max_batch = 2  # 413 above two inputs
    svc = _client(root, endpoint)
    try:
        result = svc.reindex()
        assert result["warning"] is None
        vectors = svc.vector_status()
        assert vectors is not None and vectors["embeddedChunks"] == 20 and vectors["refusedChunks"] == 0
        sizes = [len(r) for r in endpoint.requests]
        assert sizes.count(4) == 1  # one refused batch of 4; the pass goes on with 2 at a time
    finally:
        svc.ws.close()


def test_a_loading_model_and_a_dropped_connection_do_not_fail_the_pass(tmp_path: Path, endpoint: Endpoint) -> None:
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    svc = _client(root, endpoint, embedding__dimensions=64)
    try:
        endpoint.faults = [(503, 0), "reset", (429, 0)]  # Ollama loading its model; a reset; rate limited
        result = svc.reindex()
        assert result["warning"] is None  # was: "Embedding failed ... HTTP 503", every chunk pending
        vectors = svc.vector_status()
        assert vectors is not None and vectors["embeddedChunks"] == 20 and vectors["lastError"] is None
    finally:
        svc.ws.close()


class _Patient(OpenAICompatibleEmbedder):
    """Records the waits instead of sleeping them."""

    def __init__(self, url: str) -> None:
        super().__init__(endpoint=url, api_key="k", model="m")
        self.waits: list[float] = []

    def _sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def test_retry_after_is_honoured_with_back_off_and_bounded(endpoint: Endpoint) -> None:
    emb = _Patient(endpoint.url)
    endpoint.faults = [(429, 3), (503, None), "reset"]
    out = emb.embed_passages(["alpha beta", "gamma"])
    assert out.shape == (2, 64) and np.allclose(np.linalg.norm(out, axis=1), 1.0)
    assert emb.waits == [3.0, 2.0, 4.0]  # the header's 3 s, then back-off 2 s and 4 s
    # a wait longer than a minute is not sat out: the pass's own timer comes back later
    emb.waits.clear()
    endpoint.faults = [(429, 3600)]
    with pytest.raises(EmbeddingError, match=r"busy .*HTTP 429, asks to retry after 3600 s"):
        emb.embed_passages(["alpha"])
    assert emb.waits == []
    # a search does not wait behind a rate limit: one short retry at most
    endpoint.faults = [(429, 30)]
    with pytest.raises(EmbeddingError, match="HTTP 429"):
        emb.embed_query("alpha")
    assert emb.waits == []
    # refusals are their own kind: the pass splits the batch instead of giving up
    endpoint.refuse = "x"
    with pytest.raises(EmbeddingRefused, match="HTTP 400"):
        emb.embed_passages(["x"])


def test_retry_after_header_forms() -> None:
    assert retry_after("7") == 7.0 and retry_after("0.5") == 0.5 and retry_after("-3") == 0.0
    assert retry_after(None) is None and retry_after("soon") is None and retry_after("nan") is None
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    wait = retry_after(later)
    assert wait is not None and 25 <= wait <= 31


def test_a_busy_endpoint_at_search_time_falls_back_to_lexical_at_once(tmp_path: Path, endpoint: Endpoint) -> None:
    root = _kb(tmp_path)
    svc = _client(root, endpoint)
    try:
        svc.reindex()
        endpoint.faults = [(429, 30), (429, 30)]
        started = time.monotonic()
        out = svc.search(query="apples and pears", mode="hybrid")
        assert time.monotonic() - started < 20  # never the 30 s the endpoint asked for
        assert out["results"] and "HTTP 429" in out["warning"] and "Falling back to lexical search" in out["warning"]
        endpoint.faults = [(503, None), (503, None)]
        with pytest.raises(KbError) as error:
            invoke(svc.ws, "kb_search", {"request": {"query": "apples", "mode": "semantic"}})
        assert error.value.code == "INDEX_NOT_READY" and "HTTP 503" in error.value.message
    finally:
        svc.ws.close()


def test_a_model_switched_behind_the_endpoint_is_never_mixed(
    tmp_path: Path, endpoint: Endpoint, storage: dict[str, Any]
) -> None:
    root = _kb(tmp_path)
    svc = _client(root, endpoint, **storage)
    try:
        svc.reindex()
        endpoint.dims = 96  # same name in the configuration, another model behind the endpoint
        (root / "d01.md").write_text("# Doc 1\n\nkiwis now\n", "utf-8")
        svc.schedule_sync(["d01.md"])
        svc.sync.wait_idle(30)
        svc.ws.indexing.wait_vectors(30)
        vectors = svc.vector_status()
        assert vectors is not None
        assert vectors["lastError"] is not None and "now returns 96-dimensional vectors" in vectors["lastError"]
        assert vectors["pendingChunks"] == 1 and vectors["embeddedChunks"] == 20  # nothing of the new model stored
        with pytest.raises(KbError) as error:  # was: sqlite-vec's "Dimension mismatch for query vector"
            invoke(svc.ws, "kb_search", {"request": {"query": "apples", "mode": "semantic"}})
        assert (
            error.value.code == "INDEX_NOT_READY" and "model behind embedding.endpoint changed" in error.value.message
        )
        out = svc.search(query="apples and pears", mode="hybrid")
        assert out["results"] and "96-dimensional" in out["warning"] and "Falling back to lexical" in out["warning"]
        assert all(r["searchMode"] == "lexical" for r in out["results"])
        with pytest.raises(KbError) as error:
            invoke(svc.ws, "search_knowledge", {"query": "apples"})
        assert error.value.code == "INDEX_NOT_READY" and "96-dimensional" in error.value.message
        svc.reindex(force=True)
        vectors = svc.vector_status()
        assert vectors is not None and vectors["embeddedChunks"] == 21 and vectors["pendingChunks"] == 0
        assert svc.search(query="kiwis now", mode="semantic")["results"][0]["path"] == "d01.md"
    finally:
        svc.ws.close()


def test_configured_dimensions_the_endpoint_does_not_return_are_named(tmp_path: Path, endpoint: Endpoint) -> None:
    """``embedding.dimensions: 128`` against an endpoint answering 64: the pass said the model behind
    the endpoint changed and to run kb_reindex force=true, which failed the same way, for ever
    (decision 803). The message names the setting and the size to put there."""
    svc = _client(_kb(tmp_path), endpoint, embedding__dimensions=128)
    try:
        for force in (False, True):
            warning = svc.reindex(force=force)["warning"]
            assert "embedding.dimensions is 128" in warning and "returns 64-dimensional vectors" in warning
            assert "model behind embedding.endpoint changed" not in warning
        vectors = svc.vector_status()
        assert vectors is not None and vectors["pendingChunks"] == 22 and vectors["embeddedChunks"] == 0
        assert vectors["lastError"] is not None and "set embedding.dimensions to 64" in vectors["lastError"]
        with pytest.raises(KbError) as error:
            invoke(svc.ws, "kb_search", {"request": {"query": "apples", "mode": "semantic"}})
        assert error.value.code == "INDEX_NOT_READY" and "embedding.dimensions is 128" in error.value.message
    finally:
        svc.ws.close()


def test_index_note_embeds_around_a_refused_chunk(tmp_path: Path, endpoint: Endpoint) -> None:
    endpoint.refuse = BAD
    svc = _client(_kb(tmp_path), endpoint)
    try:
        svc.reindex()
        (tmp_path / "d04b.md").write_text(f"# Bad\n\n{BAD} again\n\n## Fine\n\nbananas there\n", "utf-8")
        done = invoke(svc.ws, "index_note", {"path": "d04b.md"})
        assert "refused 1 chunk" in done["warning"]
        assert done["chunkIds"] == ["md:d04b.md#0", "md:d04b.md#1"]
        found = invoke(svc.ws, "search_knowledge", {"query": "bananas there", "topK": 3})
        ids = [r["id"] for r in found["results"]]
        assert ids[0] == "md:d04b.md#1" and "md:d04b.md#0" not in ids
    finally:
        svc.ws.close()


def test_a_hanging_endpoint_holds_a_search_for_the_query_cap_not_timeout_seconds(
    tmp_path: Path, endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    from local_vector_search_mcp.embeddings import openai

    svc = _client(_kb(tmp_path), endpoint, embedding__timeout_seconds=120)
    try:
        svc.reindex()
        # the cap is 10 s; a shorter one keeps this test short, and proves it is the cap that ends the wait
        monkeypatch.setattr(openai, "QUERY_PATIENCE", openai.Patience(attempts=1, first=0.1, max_wait=0.1, timeout=0.5))
        endpoint.faults = [("sleep", 5)]
        started = time.monotonic()
        out = svc.search(query="apples and pears", mode="hybrid")
        assert time.monotonic() - started < 4  # was: the whole 120 s timeout before lexical results
        assert out["results"] and "timed out" in out["warning"] and "Falling back to lexical search" in out["warning"]
    finally:
        svc.ws.close()


def test_a_search_does_not_wait_behind_a_slow_passage_request(tmp_path: Path, endpoint: Endpoint) -> None:
    """A pass's batch that the endpoint takes long over (a model on a CPU, a hung request waiting
    out timeoutSeconds) held the client's lock, and a search's query embedding waited for it
    before its own request: the query cap of decision 511 did not bound it (decision 802)."""
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    svc = _client(root, endpoint, embedding__dimensions=64)
    try:
        svc.reindex()
        endpoint.faults = [("sleep", 6)]  # the pass's next request; the query's is answered at once
        sent = len(endpoint.requests)
        (root / "d01.md").write_text("# Doc 1\n\nkiwis and melons\n", "utf-8")
        svc.schedule_sync(["d01.md"])
        svc.sync.wait_idle(30)
        deadline = time.monotonic() + 10
        while len(endpoint.requests) == sent and time.monotonic() < deadline:
            time.sleep(0.01)  # the pass's request is on its way
        started = time.monotonic()
        out = svc.search(query="apples and pears", mode="hybrid")
        took = time.monotonic() - started
        assert took < 3, f"the search waited {took:.1f} s behind the pass's request"  # was: ~6 s
        assert out["results"] and "Falling back" not in (out["warning"] or "")
        assert any(r["searchMode"] != "lexical" for r in out["results"])
        svc.ws.indexing.wait_vectors(30)
    finally:
        svc.ws.close()


def test_kb_status_estimates_the_time_the_running_pass_still_needs(
    tmp_path: Path, endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large folder's pass said how many chunks wait, never for how long (decision 804)."""
    from local_vector_search_mcp.index import pass_rate

    monkeypatch.setattr(pass_rate, "MIN_WATCHED_SECONDS", 0.3)  # the real 5 s would make the test slow
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    svc = _client(root, endpoint, embedding__dimensions=64, embedding__batch_size=2)
    try:
        svc.ws.indexing.start_reindex()
        endpoint.delay = 0.1  # 10 batches of 2: about a second
        seen: list[int | None] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            vectors = svc.vector_status()
            assert vectors is not None
            if vectors["isRunning"]:
                seen.append(vectors["etaSeconds"])
            elif seen and not vectors["pendingChunks"]:
                break
            time.sleep(0.05)
        assert seen[0] is None  # the first look has no pace yet
        estimates = [eta for eta in seen if eta is not None]
        assert estimates and all(0 <= eta <= 10 for eta in estimates)  # about a second left, never more than 10
        assert vectors["etaSeconds"] is None and vectors["embeddedChunks"] == 20
    finally:
        svc.ws.close()


def test_an_edit_with_a_refused_text_is_set_aside_by_the_background_pass(tmp_path: Path, endpoint: Endpoint) -> None:
    root = _kb(tmp_path)
    (root / "d04b.md").unlink()
    endpoint.refuse = BAD
    svc = _client(root, endpoint)
    try:
        svc.reindex()
        (root / "d03.md").write_text(f"# Doc 3\n\n{BAD} now\n\n## More\n\nfigs part 3\n", "utf-8")
        svc.schedule_sync(["d03.md"])  # what an edit or the watcher does
        svc.sync.wait_idle(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            vectors = svc.vector_status()
            assert vectors is not None
            if vectors["refusedChunks"] and not vectors["isRunning"]:
                break
            time.sleep(0.05)
        assert vectors["refusedChunks"] == 1 and vectors["pendingChunks"] == 0 and vectors["lastError"] is None
        assert vectors["embeddedChunks"] == 19 and vectors["refused"][0]["path"] == "d03.md"
        assert svc.search(query="figs part", mode="semantic")["results"][0]["path"] == "d03.md"
        assert svc.sync.status() is None  # the file is indexed: no failing path in synchronization
    finally:
        svc.ws.close()


def test_index_note_reports_its_batches_and_stops_when_cancelled(
    tmp_path: Path, endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 504, amended by H62: against a slow endpoint, index_note said nothing until every pending chunk had its
    vector and a client's cancellation did not stop it; now one step per batch, and a cancel stops it
    between two batches, the rest of the vectors following in the background."""
    from local_vector_search_mcp import progress

    def note(name: str, sections: int) -> None:
        body = "".join(f"## Part {i}\n\n{name} fact number {i} about pears\n\n" for i in range(sections))
        (tmp_path / f"{name}.md").write_text(f"# {name}\n\n{body}", "utf-8")

    note("long", 12)
    note("other", 12)
    svc = _client(tmp_path, endpoint, embedding__batch_size=2)
    try:
        endpoint.delay = 0.05  # every answer: enough to matter, little for the test
        seen: list[tuple[float, float | None, str | None]] = []
        call = progress.Call(lambda p, t, m: seen.append((p, t, m)), interval=0)
        with progress.running(call):
            done = invoke(svc.ws, "index_note", {"path": "long.md"})
        assert done["chunks"] == 12 and done["warning"] is None
        assert [p for p, _, _ in seen] == [0, 2, 4, 6, 8, 10, 12]  # was: no notification at all
        assert {t for _, t, _ in seen} == {12} and seen[-1][2] == "Embedded 12 of 12 chunks"

        sent = len(endpoint.requests)
        # The requests are counted when the cancelled call hands its chunks to the background pass:
        # counted after the call returns, the background pass's first request could be among them.
        at_handover: list[int] = []
        kick = svc.ws.indexing.kick_vectors

        def counting_kick() -> None:
            at_handover.append(len(endpoint.requests))
            kick()

        monkeypatch.setattr(svc.ws.indexing, "kick_vectors", counting_kick)

        def cancel_after_two(p: float, t: float | None, m: str | None) -> None:
            if p >= 4:  # as the third batch starts: the client cancels while it is on its way
                cancelling.cancel()

        cancelling = progress.Call(cancel_after_two, interval=0)
        with progress.running(cancelling), pytest.raises(progress.Cancelled):
            invoke(svc.ws, "index_note", {"path": "other.md"})  # was: ran through all six batches
        assert [n - sent for n in at_handover] == [3]  # the third of six batches, on its way when cancelled, was last
        svc.ws.indexing.wait_vectors(60)  # the rest is embedded in the background, as after an edit
        vectors = svc.vector_status()
        assert vectors is not None and vectors["pendingChunks"] == 0 and vectors["embeddedChunks"] == 24
    finally:
        svc.ws.close()


def test_a_model_switch_a_search_finds_is_in_kb_status(tmp_path: Path, endpoint: Endpoint) -> None:
    """Decision 977: with no file changed, only a query meets the new model; semantic search said
    so, but kb_status read compatible with no error, and the kb_search spec points there."""
    root = _kb(tmp_path)
    svc = _client(root, endpoint)
    try:
        svc.reindex()
        assert svc.vector_status()["lastError"] is None
        endpoint.dims = 96
        with pytest.raises(KbError):
            invoke(svc.ws, "kb_search", {"request": {"query": "apples", "mode": "semantic"}})
        error = invoke(svc.ws, "kb_status", None)["vectors"]["lastError"]
        assert error is not None and "now returns 96-dimensional vectors" in error and "force=true" in error
    finally:
        svc.ws.close()
