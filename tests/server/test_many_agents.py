"""Many agents at once on one knowledge base, as a team runs it (task H114, decisions 930-939).

One Streamable HTTP server with ten client sessions and two stdio server processes on the same
project, all with writes on and the file watcher running, as a team's agents and an editor share
one folder of notes. The promise under test is optimistic concurrency: an edit whose target
changed since it was read is refused with CONFLICT, unrelated edits never block it, Markdown stays
the single source of truth and every byte an edit does not touch survives.

Every race starts from one read and one barrier (all calls are sent together once every client
holds its pointer), never from sleeps, so a loaded two-core machine changes the interleaving but
not the verdict: each assertion holds for every order the servers may pick.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from conformance.client import Connection, ToolResult, connect

from .http_server import http_server, project
from .test_http_clients import sdk_client

HTTP_CLIENTS = 10
STDIO_SERVERS = 2
CONFIG = {
    "knowledgeBase": {"allowWrites": True, "watchFiles": True},
    "embedding": {"provider": "none"},
}
SERVER = [sys.executable, "-m", "local_vector_search_mcp"]
# every refusal a race may legitimately end in; anything else (INTERNAL_ERROR above all) is a bug
TYPED = {"CONFLICT", "NOT_FOUND", "ALREADY_EXISTS"}


@dataclass
class Team:
    root: Path
    clients: list[Connection]  # the HTTP sessions first, then one per stdio server

    @property
    def size(self) -> int:
        return len(self.clients)


@asynccontextmanager
async def team(tmp_path: Path, files: dict[str, str]) -> AsyncIterator[Team]:
    """The HTTP server with its sessions and the stdio servers, all connected at once (a start
    is mostly the servers' imports: one after another they took twice as long)."""
    root = project(tmp_path, files)
    with http_server(tmp_path, config=CONFIG, root=root) as server:
        members: list[AbstractAsyncContextManager[Connection]] = [sdk_client(server.url) for _ in range(HTTP_CLIENTS)]
        members += [connect(SERVER, root, CONFIG) for _ in range(STDIO_SERVERS)]
        clients: list[Connection | None] = [None] * len(members)
        leave = anyio.Event()

        async def hold(i: int) -> None:  # a connection is left in the task that entered it
            async with members[i] as conn:
                clients[i] = conn
                await leave.wait()

        async with anyio.create_task_group() as tg:
            for i in range(len(members)):
                tg.start_soon(hold, i)
            with anyio.fail_after(120):
                while None in clients:
                    await anyio.sleep(0.02)
            ready = [c for c in clients if c is not None]
            try:
                assert not (await ready[0].call("kb_reindex", {"request": {"scope": "all"}})).is_error
                await settled(ready[0])
                yield Team(root, ready)
            finally:
                leave.set()
    # nothing any server logged was a warning, an error or a traceback (a failed sync, a lost queue)
    for log in sorted(tmp_path.glob("*.log")):
        bad = [
            line for line in log.read_text(errors="replace").splitlines() if re.search(r"WARNING|ERROR|Traceback", line)
        ]
        assert bad == [], f"{log.name}: {bad[:5]}"


async def settled(conn: Connection, timeout: float = 30) -> dict[str, Any]:
    """Bounded wait until nothing is being indexed or queued (the watcher's debounce included)."""
    with anyio.fail_after(timeout):
        while True:
            status = (await conn.call("kb_status", {})).structured
            if status["synchronization"] is None and not status["indexing"]["isRunning"]:
                return status  # type: ignore[no-any-return]
            await anyio.sleep(0.05)


async def search_paths(conn: Connection, query: str) -> set[str]:
    found = await conn.call("kb_search", {"request": {"query": query, "mode": "lexical", "topK": 50}})
    assert not found.is_error, found.texts
    return {r["path"] for r in found.structured["results"]}


async def followed(conn: Connection, query: str, paths: set[str], timeout: float = 30) -> None:
    """Bounded wait until search has caught up with a change another program made on disk: its
    status can say settled before the watcher has even heard of the change (inotify delivers in
    milliseconds, but a loaded machine may run the watcher's thread later)."""
    with anyio.fail_after(timeout):
        while await search_paths(conn, query) != paths:
            await anyio.sleep(0.05)


async def read(conn: Connection, path: str) -> ToolResult:
    return await conn.call("kb_read", {"request": {"path": path, "maxElements": 200}})


async def anchors(conn: Connection, path: str) -> tuple[dict[str, str], str]:
    result = await read(conn, path)
    assert not result.is_error, result.texts
    return {e["pointer"].split("~")[0]: e["pointer"] for e in result.structured["elements"]}, result.structured[
        "sourceHash"
    ]


async def replace(conn: Connection, path: str, pointer: str, text: str) -> ToolResult:
    op = {"kind": "replace_element", "pointer": pointer, "markdown": text}
    return await conn.call("kb_patch", {"request": {"path": path, "operations": [op]}})


def call(conn: Connection, tool: str, request: dict[str, Any]) -> Callable[[], Awaitable[ToolResult]]:
    """One tool call, made later (by :func:`together`)."""
    return lambda: conn.call(tool, {"request": request})


def patch(conn: Connection, path: str, pointer: str, text: str) -> Callable[[], Awaitable[ToolResult]]:
    op = {"kind": "replace_element", "pointer": pointer, "markdown": text}
    return call(conn, "kb_patch", {"path": path, "operations": [op]})


async def together(calls: list[Callable[[], Awaitable[ToolResult]]]) -> list[ToolResult]:
    """Run every call at once (each started by one shared event, once all tasks are waiting)."""
    results: list[ToolResult | None] = [None] * len(calls)
    go = anyio.Event()
    waiting = 0

    async def one(i: int) -> None:
        nonlocal waiting
        waiting += 1
        await go.wait()
        results[i] = await calls[i]()

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i)
            while waiting < len(calls):
                await anyio.sleep(0)
            go.set()
    return [r for r in results if r is not None]


def run(main: Callable[[], Awaitable[None]]) -> None:
    """``anyio.run`` that raises the first failure itself, not ten task groups deep in the
    exception groups of the clients' connections (pytest shows only ten levels)."""
    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from None


async def while_searching(
    searchers: list[Connection], calls: list[Callable[[], Awaitable[ToolResult]]]
) -> tuple[list[ToolResult], list[ToolResult]]:
    """:func:`together`, while ``searchers`` run kb_search (hybrid) in a loop; both results."""
    searched: list[ToolResult] = []
    done = anyio.Event()

    async def search(c: Connection) -> None:
        while not done.is_set():
            searched.append(await c.call("kb_search", {"request": {"query": "Paragraph", "topK": 50}}))

    async with anyio.create_task_group() as tg:
        for c in searchers:
            tg.start_soon(search, c)
        results = await together(calls)
        done.set()
    return results, searched


def code(result: ToolResult) -> str | None:
    return None if not result.is_error else str(result.error["code"])


def paragraphs(n: int) -> str:
    return "".join(f"Paragraph {i} original.\n\n" for i in range(n))


# every revision of the race's file holds one of these words
QUERY = "Paragraph original quux0 quux1 quux2 Patched"
HEAD = "---\ntitle: shared\n---\n\n# Shared\n\n<!-- kept as it is -->\n\n"
TAIL = '| a | b |\n|---|:-:|\n| 1 | 2 |\n\n[ref]: https://example.com  "kept"\n'


def test_every_client_edits_its_own_paragraph_of_one_file_and_every_edit_lands(tmp_path: Path) -> None:
    """Twelve clients (ten HTTP sessions of one server, two stdio servers) each replace their own
    paragraph of one document, all from the same read, all at once: every edit succeeds and the
    file holds all twelve and every other byte as it was (no lost update between the
    read-modify-write of one client and another's)."""

    async def main() -> None:
        async with team(tmp_path, {"doc.md": HEAD + paragraphs(HTTP_CLIENTS + STDIO_SERVERS) + TAIL}) as t:
            pointers, _ = await anchors(t.clients[0], "doc.md")
            calls = [
                patch(c, "doc.md", pointers[f"1.p{i + 1}"], f"Paragraph {i} by client {i}.")
                for i, c in enumerate(t.clients)
            ]
            results = await together(calls)
            assert [code(r) for r in results] == [None] * t.size, [r.texts for r in results if r.is_error]
            edited = "".join(f"Paragraph {i} by client {i}.\n\n" for i in range(t.size))
            assert (t.root / "doc.md").read_text(encoding="utf-8") == HEAD + edited + TAIL
            # the index follows: every client's words are found in the one document
            await settled(t.clients[0])
            for c in (t.clients[0], t.clients[-1]):
                found = await c.call("kb_search", {"request": {"query": "client", "mode": "lexical", "topK": 50}})
                assert {r["path"] for r in found.structured["results"]} == {"doc.md"}, found.structured

    run(main)


def test_every_client_edits_the_same_paragraph_from_one_read_and_exactly_one_wins(tmp_path: Path) -> None:
    """Twelve clients replace the same paragraph from the same read: exactly one succeeds, the
    others get CONFLICT, and the file holds exactly the winner's text."""

    async def main() -> None:
        async with team(tmp_path, {"doc.md": HEAD + paragraphs(3) + TAIL}) as t:
            for rnd in range(2):  # the second round starts from the first winner's revision
                pointers, _ = await anchors(t.clients[0], "doc.md")
                before = (t.root / "doc.md").read_text(encoding="utf-8")
                target = pointers["1.p2"]
                calls = [
                    patch(c, "doc.md", target, f"Won by client {i} in round {rnd}.") for i, c in enumerate(t.clients)
                ]
                results = await together(calls)
                winners = [i for i, r in enumerate(results) if not r.is_error]
                assert len(winners) == 1, [r.texts for r in results]
                assert sorted(code(r) or "" for r in results) == [""] + ["CONFLICT"] * (t.size - 1)
                old = re.search(r"^(Paragraph 1 original\.|Won by .*)$", before, re.M)
                assert old is not None
                after = before.replace(old.group(0), f"Won by client {winners[0]} in round {rnd}.")
                assert (t.root / "doc.md").read_text(encoding="utf-8") == after
                assert results[winners[0]].structured["sourceHash"] == (await anchors(t.clients[-1], "doc.md"))[1]

    run(main)


def test_create_move_and_delete_race_patches_and_reads_of_one_file(tmp_path: Path) -> None:
    """kb_delete, kb_move and kb_create of one document race kb_patch and kb_read of it, from
    one read. Whatever order the servers pick: every refusal is a typed error, never a half file;
    a delete or a move that succeeded means no patch did (both were guarded by the hash read
    before) and the file is gone (or moved) for good, not brought back by a late patch; the
    index ends equal to the disk and a search never returns a row of a file whose deletion was
    reported settled."""
    original = HEAD + paragraphs(4) + TAIL

    async def main() -> None:
        async with team(tmp_path, {"race.md": original, "other.md": "# Other\n\nsteady words\n"}) as t:
            for rnd in range(3):
                path = t.root / "race.md"
                path.write_text(original, encoding="utf-8")  # as another program would put it back
                for leftover in t.root.glob("moved-*.md"):
                    leftover.unlink()
                await followed(t.clients[0], QUERY, {"race.md"})
                pointers, sha = await anchors(t.clients[0], "race.md")
                created = f"# Created {rnd}\n\nA new note quux{rnd}.\n"
                calls: list[Callable[[], Awaitable[ToolResult]]] = []
                kinds: list[str] = []
                for i, c in enumerate(t.clients):
                    role = i % 6
                    if role == 0:
                        kinds.append("delete")
                        calls.append(call(c, "kb_delete", {"path": "race.md", "expectedSourceHash": sha}))
                    elif role == 1 and "move" not in kinds:
                        kinds.append("move")
                        req = {"sourcePath": "race.md", "targetPath": f"moved-{rnd}.md", "expectedSourceHash": sha}
                        calls.append(call(c, "kb_move", req))
                    elif role == 2:
                        kinds.append("create")
                        calls.append(call(c, "kb_create", {"path": "race.md", "markdown": created}))
                    elif role == 3:
                        kinds.append("read")
                        calls.append(call(c, "kb_read", {"path": "race.md", "maxElements": 200}))
                    else:
                        kinds.append("patch")
                        calls.append(patch(c, "race.md", pointers[f"1.p{1 + i % 4}"], f"Patched by {i} in {rnd}."))
                results, searched = await while_searching([t.clients[3], t.clients[-1]], calls)
                for r in searched:
                    assert not r.is_error, r.texts
                    assert {x["path"] for x in r.structured["results"]} <= {"race.md", f"moved-{rnd}.md"}, r.structured
                outcome = list(zip(kinds, results, strict=True))
                for kind, r in outcome:
                    assert not r.is_error or r.error["code"] in TYPED, (kind, r.texts)
                ok = {k: [r for kk, r in outcome if kk == k and not r.is_error] for k in set(kinds)}
                # guarded by one hash: at most one of delete / move / "some patch" won
                assert len(ok["delete"]) + len(ok["move"]) <= 1, outcome
                if ok["delete"] or ok["move"]:
                    assert ok["patch"] == [], outcome
                moved = t.root / f"moved-{rnd}.md"
                if ok["move"]:
                    assert moved.read_text(encoding="utf-8") == original
                else:
                    assert not moved.exists()
                text = path.read_text(encoding="utf-8") if path.exists() else None
                if ok["create"]:
                    assert ok["delete"] or ok["move"], outcome  # only a vanished file can be created
                    assert text == created
                elif ok["delete"] or ok["move"]:
                    assert text is None, text  # never resurrected by a late patch
                else:
                    assert text is not None and text.startswith(HEAD) and text.endswith(TAIL), text
                    for r in ok["patch"]:
                        assert r.structured["path"] == "race.md"
                    for i, (kind, r) in enumerate(outcome):
                        if kind == "patch":
                            assert (f"Patched by {i} in {rnd}." in text) == (not r.is_error), (i, text)
                for r in ok["read"]:  # a read saw one whole revision
                    md = r.structured["markdown"]
                    assert md.endswith(TAIL) or md == created, md
                assert not list(t.root.glob(".*.tmp")), "a temporary file was left"
                # once every server says it is settled, search has exactly the disk
                for c in (t.clients[0], t.clients[HTTP_CLIENTS], t.clients[-1]):
                    await settled(c)
                on_disk = {p.name for p in t.root.glob("*.md")} - {"other.md"}
                for c in (t.clients[0], t.clients[HTTP_CLIENTS]):
                    assert await search_paths(c, QUERY) == on_disk, (on_disk, outcome)

    run(main)


class Editor:
    """Another program saving one paragraph of a file, through a temporary file and a rename as
    most editors save. No agent edits that paragraph, so before each save the file must still
    hold the previous one; a save found missing was put back silently by an edit.

    Missing once is not yet lost: an edit that swapped its file in the instant after a save
    displaced that save and puts it straight back (decision 930), and a read in between sees the
    edit's revision for that moment. So a missing save is looked for again for
    :data:`PUT_BACK_S`; a save an edit really reverted never comes back."""

    PUT_BACK_S = 0.25

    def __init__(self, path: Path) -> None:
        self.path = path
        self.saved: list[str] = []
        self.lost: list[str] = []

    def save(self) -> None:
        text = self.path.read_text(encoding="utf-8")
        deadline = time.monotonic() + self.PUT_BACK_S
        while self.saved and self.saved[-1] not in text and time.monotonic() < deadline:
            time.sleep(0.01)
            text = self.path.read_text(encoding="utf-8")
        if self.saved and self.saved[-1] not in text:
            self.lost.append(self.saved[-1])
        line = f"Editor's line, save {len(self.saved)}."
        tmp = self.path.with_name("doc.md~")
        tmp.write_text(re.sub(r"^Editor's line.*$", line, text, count=1, flags=re.M), encoding="utf-8")
        tmp.replace(self.path)
        self.saved.append(line)


def test_an_editor_saving_while_agents_patch_keeps_every_save(tmp_path: Path) -> None:
    """An editor saves its paragraph of the document again and again while every client patches
    its own: an edit planned before a save either re-plans on the saved bytes (and keeps them) or
    is refused with CONFLICT (and changes nothing); no edit may silently put back the text the
    editor replaced. A refused agent re-reads and retries, as the contract tells it to.

    The editor itself reads, changes and renames without any lock, so it may revert an agent's
    edit (a real editor does the same; that is its lost update, not the server's): the agents'
    paragraphs are checked for shape there, and exactly once the editor has stopped. Before
    decision 930, about 1 of 100 saves was reverted on a busy machine."""
    body = "Editor's line, original.\n\n" + paragraphs(HTTP_CLIENTS + STDIO_SERVERS)

    async def main() -> None:
        async with team(tmp_path, {"doc.md": HEAD + body + TAIL}) as t:
            editor = Editor(t.root / "doc.md")
            refused = 0

            async def agent(i: int, c: Connection, edits: list[str]) -> None:
                nonlocal refused
                for text in edits:
                    while True:
                        pointers, _ = await anchors(c, "doc.md")
                        r = await replace(c, "doc.md", pointers[f"1.p{i + 2}"], text)
                        if not r.is_error:
                            break
                        assert r.error["code"] == "CONFLICT", r.texts
                        refused += 1

            agents_done = anyio.Event()

            async def editing() -> None:
                while not agents_done.is_set():  # saves for as long as the agents edit
                    await anyio.to_thread.run_sync(editor.save)
                    await anyio.sleep(0.01)

            async def agents(edits: Callable[[int], list[str]]) -> None:
                async with anyio.create_task_group() as tg:
                    for i, c in enumerate(t.clients):
                        tg.start_soon(agent, i, c, edits(i))
                agents_done.set()

            with anyio.fail_after(90):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(editing)
                    tg.start_soon(agents, lambda i: [f"Paragraph {i} edit {k}." for k in range(3)])
            assert editor.lost == [], f"saves reverted by an edit: {editor.lost} of {len(editor.saved)}"
            text = (t.root / "doc.md").read_text(encoding="utf-8")
            shape = "".join(rf"Paragraph {i} (original|edit \d)\.\n\n" for i in range(t.size))
            assert re.fullmatch(re.escape(HEAD + editor.saved[-1] + "\n\n") + shape + re.escape(TAIL), text), text

            with anyio.fail_after(60):  # the editor has stopped: now every edit must land as sent
                await agents(lambda i: [f"Paragraph {i} final."])
            final = "".join(f"Paragraph {i} final.\n\n" for i in range(t.size))
            assert (t.root / "doc.md").read_text(encoding="utf-8") == HEAD + editor.saved[-1] + "\n\n" + final + TAIL
            for c in (t.clients[0], t.clients[-1]):
                await settled(c)
                for word, paths in (("original", []), ("final", ["doc.md"])):
                    found = await c.call("kb_search", {"request": {"query": word, "mode": "lexical"}})
                    assert [r["path"] for r in found.structured["results"]] == paths, (word, found.structured)
            print(f"editor saves {len(editor.saved)}, agent refusals {refused}")

    run(main)


def test_a_move_that_rewrites_links_races_edits_of_the_linking_notes(tmp_path: Path) -> None:
    """kb_move with updateLinks rewrites the notes that link to the moved file while other
    clients edit those notes, both the paragraph holding the link and another one, from one read.
    The move is all or nothing: either every link follows it or none does (CONFLICT, nothing
    written); an edit of the other paragraph is never undone by the move's rewrite, planned on the
    bytes before it; an edit of the link's paragraph planned before the rewrite is refused."""
    notes = 5
    files = {"target.md": "# Target\n\nThe moved note.\n"}
    for n in range(notes):
        files[f"n{n}.md"] = f"# Note {n}\n\nSee [the target](target.md) here.\n\nPlain words {n}.\n"

    async def main() -> None:
        async with team(tmp_path, files) as t:
            for rnd in range(2):
                src, dst = ("target.md", "moved.md") if rnd == 0 else ("moved.md", "target.md")
                _, sha = await anchors(t.clients[0], src)
                reads = [await anchors(t.clients[0], f"n{n}.md") for n in range(notes)]
                calls = [
                    call(
                        t.clients[0],
                        "kb_move",
                        {"sourcePath": src, "targetPath": dst, "expectedSourceHash": sha, "updateLinks": True},
                    )
                ]
                for i, c in enumerate(t.clients[1:], start=1):
                    n = i % notes
                    if i <= notes:  # the other paragraph of each note
                        calls.append(patch(c, f"n{n}.md", reads[n][0]["1.p2"], f"Plain words {n}, edited {rnd}."))
                    elif i < 2 * notes:  # the link's paragraph, keeping the link
                        text = f"Edited {rnd} by {i}: [the target]({src})."
                        calls.append(patch(c, f"n{n}.md", reads[n][0]["1.p1"], text))
                results = await together(calls)
                for r in results:
                    assert not r.is_error or r.error["code"] == "CONFLICT", r.texts
                moved = not results[0].is_error
                texts = [(t.root / f"n{n}.md").read_text(encoding="utf-8") for n in range(notes)]
                assert (t.root / dst).exists() == moved and (t.root / src).exists() != moved
                for n, text in enumerate(texts):
                    links = re.findall(r"\]\(([^)]+)\)", text)
                    assert links == [dst if moved else src], (n, text, results[0].texts)
                for i, r in enumerate(results[1:], start=1):
                    n = i % notes
                    if i <= notes:  # never undone by the rewrite
                        assert (f"Plain words {n}, edited {rnd}." in texts[n]) == (not r.is_error), (i, texts[n])
                    elif i < 2 * notes:
                        assert (f"Edited {rnd} by {i}:" in texts[n]) == (not r.is_error), (i, texts[n])
                        if moved and not r.is_error:  # landed before the move planned: rewritten by it
                            assert f"[the target]({dst})" in texts[n]
                if not moved:  # put the file where the next round expects it
                    await settled(t.clients[0])
                    moved_back = await t.clients[0].call(
                        "kb_move",
                        {
                            "request": {
                                "sourcePath": src,
                                "targetPath": dst,
                                "expectedSourceHash": sha,
                                "updateLinks": True,
                            }
                        },
                    )
                    assert not moved_back.is_error, moved_back.texts

    run(main)


def test_a_file_another_program_deletes_while_agents_patch_it_stays_deleted(tmp_path: Path) -> None:
    """Every client patches its own paragraph of one document in a loop; once each has landed an
    edit, another program deletes the file (`rm`). From then on every patch is NOT_FOUND (or
    CONFLICT, planned on the bytes before), the file is never brought back by an edit that was
    already planned, nothing is left beside it, and the index lets go of it."""

    async def main() -> None:
        files = {"doc.md": HEAD + paragraphs(HTTP_CLIENTS + STDIO_SERVERS) + TAIL, "other.md": "# Other\n\nsteady\n"}
        async with team(tmp_path, files) as t:
            target = t.root / "doc.md"
            landed = [0] * t.size
            after: list[str] = []
            deleted = anyio.Event()

            async def agent(i: int, c: Connection) -> None:
                k = 0
                while True:
                    listed = await read(c, "doc.md")
                    if listed.is_error:
                        assert listed.error["code"] == "NOT_FOUND", listed.texts
                        return
                    pointer = {e["pointer"].split("~")[0]: e["pointer"] for e in listed.structured["elements"]}
                    was_deleted = deleted.is_set()
                    r = await replace(c, "doc.md", pointer[f"1.p{i + 1}"], f"Paragraph {i} edit {k}.")
                    k += 1
                    if r.is_error:
                        assert r.error["code"] in {"NOT_FOUND", "CONFLICT"}, r.texts
                    else:
                        landed[i] += 1
                        if was_deleted:
                            after.append(f"client {i} edited the deleted file: {r.structured}")

            async def deleter() -> None:
                while min(landed) == 0:  # every agent is in its loop
                    await anyio.sleep(0.01)
                target.unlink()
                deleted.set()

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(deleter)
                    for i, c in enumerate(t.clients):
                        tg.start_soon(agent, i, c)
            assert after == [] and not target.exists(), after
            assert [p.name for p in t.root.iterdir() if p.name.endswith(".tmp")] == []
            await followed(t.clients[0], "Paragraph", set())  # the deletion was another program's
            for c in (t.clients[0], t.clients[HTTP_CLIENTS], t.clients[-1]):
                await settled(c)
            assert await search_paths(t.clients[HTTP_CLIENTS], "Paragraph") == set()

    run(main)
