"""A client that closes stdin right after its requests still gets every reply (server/drain.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from local_vector_search_mcp.server.drain import answer_before_eof


def _request(i: int) -> SessionMessage:
    return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=i, method="tools/list", params={}))


async def _sdk_like_server(reads, writes, delay: float) -> None:  # type: ignore[no-untyped-def]
    """Like the SDK's dispatcher: answers each request after ``delay`` and cancels what is
    still running when its input ends."""
    async with writes, anyio.create_task_group() as tg:

        async def answer(rid: int) -> None:
            await anyio.sleep(delay)
            await writes.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=rid, result={})))

        async with reads:
            async for item in reads:
                if isinstance(item.message, JSONRPCRequest):
                    tg.start_soon(answer, item.message.id)
        tg.cancel_scope.cancel()


async def _run(hold: bool, messages: list[SessionMessage], grace: float = 5.0) -> tuple[list[object], float]:
    to_srv, srv_in = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    srv_out, from_srv = anyio.create_memory_object_stream[SessionMessage](10)
    for m in messages:
        to_srv.send_nowait(m)
    to_srv.close()  # the client closed stdin right after writing
    started = anyio.current_time()
    if hold:
        async with answer_before_eof(srv_in, srv_out, grace=grace) as (reads, writes):
            await _sdk_like_server(reads, writes, delay=0.2)
    else:
        await _sdk_like_server(srv_in, srv_out, delay=0.2)
    replies: list[object] = []
    while True:
        try:
            replies.append(from_srv.receive_nowait().message.id)
        except (anyio.WouldBlock, anyio.EndOfStream):
            break
    return replies, anyio.current_time() - started


def test_without_the_pumps_the_sdk_drops_replies_owed_at_eof() -> None:
    replies, _ = anyio.run(_run, False, [_request(1), _request(2)])
    assert replies == []  # the premise: this is what lost the install test's tools/list


def test_every_request_read_before_eof_is_answered() -> None:
    replies, _ = anyio.run(_run, True, [_request(1), _request(2)])
    assert sorted(replies) == [1, 2]


async def _seconds_to_exit_with_a_silent_server(messages: list[SessionMessage], grace: float) -> float:
    """How long the pumps hold the exit when the server reads everything and answers nothing."""
    to_srv, srv_in = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    srv_out, _ = anyio.create_memory_object_stream[SessionMessage](10)
    for m in messages:
        to_srv.send_nowait(m)
    to_srv.close()
    started = anyio.current_time()
    async with answer_before_eof(srv_in, srv_out, grace=grace) as (reads, writes), reads, writes:
        async for _ in reads:
            pass
    return anyio.current_time() - started


def test_a_cancelled_request_does_not_hold_the_exit() -> None:
    cancel = SessionMessage(
        JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 7})
    )
    lost = SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=7, method="tools/list", params={}))
    assert anyio.run(_seconds_to_exit_with_a_silent_server, [lost, cancel], 30) < 5


def test_the_grace_time_bounds_a_request_that_never_ends() -> None:
    assert 0.3 <= anyio.run(_seconds_to_exit_with_a_silent_server, [_request(1)], 0.3) < 5


@pytest.mark.slow
def test_stdio_pipe_gets_all_replies(tmp_path: Path) -> None:
    """Over a real pipe: requests written, stdin closed at once, every reply on stdout."""
    (tmp_path / "a.md").write_text("# A\n\nText about pipes.\n", encoding="utf-8")
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    calls = [
        init,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "kb_status", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "kb_search", "arguments": {"query": "pipes", "mode": "lexical"}},
        },
    ]
    out = subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", "--root", str(tmp_path)],
        input="".join(json.dumps(c) + "\n" for c in calls),
        capture_output=True,
        text=True,
        timeout=120,
    )
    ids = {json.loads(line).get("id") for line in out.stdout.splitlines()}
    assert {1, 2, 3, 4} <= ids, out.stderr[-2000:]


async def _replies_to_a_reused_id() -> list[object]:
    """Two requests with id 7 in flight, stdin closed: the server answers the first at once and
    the second 0.3 s later, and cancels what still runs when its input ends (as the SDK does)."""
    to_srv, srv_in = anyio.create_memory_object_stream[SessionMessage | Exception](10)
    srv_out, from_srv = anyio.create_memory_object_stream[SessionMessage](10)
    to_srv.send_nowait(_request(7))
    to_srv.send_nowait(_request(7))
    to_srv.close()
    async with answer_before_eof(srv_in, srv_out, grace=5) as (reads, writes), writes, anyio.create_task_group() as tg:

        async def answer(delay: float) -> None:
            await anyio.sleep(delay)
            await writes.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=7, result={})))

        async with reads:
            delay = 0.0
            async for _ in reads:
                tg.start_soon(answer, delay)
                delay += 0.3
        tg.cancel_scope.cancel()
    replies: list[object] = []
    while True:
        try:
            replies.append(from_srv.receive_nowait().message.id)
        except (anyio.WouldBlock, anyio.EndOfStream):
            return replies


def test_a_reused_id_in_flight_holds_the_exit_for_each_reply() -> None:
    """A client that reuses an id still in flight breaks the protocol's rule, but the server
    answers each request; the first reply released the end of input and lost the second."""
    assert anyio.run(_replies_to_a_reused_id) == [7, 7]
