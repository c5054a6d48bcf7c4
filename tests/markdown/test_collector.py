"""A large document is parsed with the cyclic collector paused, and the pause always ends."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from local_vector_search_mcp.markdown import collector, document
from local_vector_search_mcp.markdown.document import LARGE_TEXT, parse_document, parse_edited


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_a_pause_restores_the_collector_and_nests() -> None:
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause is still on
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector.paused():
        pass
    assert not gc.isenabled()


def test_the_pause_ends_when_the_parse_fails() -> None:
    with pytest.raises(RuntimeError), collector.paused():
        raise RuntimeError("parser bug")
    assert gc.isenabled()


def test_overlapping_pauses_of_two_threads_end_with_the_last() -> None:
    first_in, second_in, first_may_leave = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with collector.paused():
            first_in.set()
            first_may_leave.wait(10)

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(10)
    with collector.paused():
        second_in.set()
        first_may_leave.set()
        thread.join(10)
        assert not gc.isenabled()  # the first thread's pause ended, this one has not
    assert gc.isenabled()


def test_large_documents_parse_with_the_collector_paused_small_ones_not(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, bool]] = []
    real = document.build_state

    def spy(text, lines):  # type: ignore[no-untyped-def]
        seen.append((len(text), gc.isenabled()))
        return real(text, lines)

    monkeypatch.setattr(document, "build_state", spy)
    small = b"# Small\n\n- one item\n"
    large = b"# Large\n\n" + b"".join(b"- item %d\n" % i for i in range(LARGE_TEXT // 8))
    parse_document(small, cache=False)
    parse_document(large, cache=False)
    assert [enabled for _, enabled in seen] == [True, False]
    assert gc.isenabled()


def test_an_edit_of_a_large_document_reparses_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "# Large\n\n" + "".join(f"- item {i}\n" for i in range(LARGE_TEXT // 8))
    old = parse_document(text.encode(), cache=False)
    seen: list[bool] = []
    real = document.reparse

    def spy(*args):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(document, "reparse", spy)
    start = text.index("item 500\n")
    new = text[:start] + "ITEM" + text[start + 4 :]
    edited = parse_edited(old, new, start, start + 4)
    assert seen == [False] and gc.isenabled()
    assert edited.text == new
