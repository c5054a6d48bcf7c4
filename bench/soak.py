"""Soak: one real server under a long, busy, realistic life, its resources sampled as it goes.

Usage::

    .venv/bin/python bench/soak.py [--minutes 15] [--transport http|stdio]
                                   [--corpus ../shared/corpora/rust-book] [--embeddings local|none]
                                   [--clients 3] [--pause 0.05] [--sample 15]

A copy of the corpus and of its index (built once into ``bench/.cache/soak-<corpus>-<embeddings>``)
is served by ``python -m local_vector_search_mcp`` with writes allowed and the watcher on. For
``--minutes``, ``--clients`` sessions each run the mix below in a closed loop (``--pause`` seconds
between calls), while, beside them:

* an outside editor changes files under the server every second (rewrites a document's last
  line through a temporary file and a rename, as editors save; creates and later deletes a note);
* over HTTP, a stray client opens a session every 2 s and walks away from it (no DELETE), the way
  crashed or killed clients leave theirs; the server's idle timeout (decision 102) is what ends them.

The mix: kb_search of every mode (lexical, semantic, hybrid), each query drawn afresh from the
corpus's words and about one in five scoped by a path glob, so nothing is answered from a
single-query cache; kb_read (whole or one pointer), kb_outline, kb_links, kb_list_files, kb_status;
kb_patch of the client's own scratch document, kb_move of it back and forth (updating links),
kb_create then kb_delete, kb_save_image, kb_move_image and kb_delete_image. The scratch documents
link to each other, so a kb_move now and then meets CONFLICT: another client's move rewrote the
link in it since it was read (the promise working, counted under errors).

Every ``--sample`` seconds the server's resident size, open descriptors (and of them the index's:
one -db and -wal per SQLite connection), threads, the WAL's and the state folder's size and file
count are printed and kept; at the end the first and second half are compared (a slope per
minute of each), written to ``bench/results/soak-<transport>.json``. A figure that still rises in
the second half is a leak or an unbounded cache; one that levels off is a cache filling to its size.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from common import copy_index, free_port, wait_for_port, writable_copy
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "local_vector_search_mcp"]
STATE = ".local-vector-search-mcp"
PROTOCOL = "2025-06-18"
LINE = (
    "{t:7.0f}s rss {rss_mb:7.1f} MB  fds {fds:4.0f} (index {index_fds:3.0f})  threads {threads:3.0f}  "
    "temp {kb_temp:2.0f}  wal {wal_mb:6.2f} MB  db {db_mb:6.1f} MB  "
    "state {state_files:3.0f} files {state_kb:8.1f} KB  "
    "calls {calls:6.0f}  errors {errors:4.0f}  stray sessions {stray:4.0f}"
)


# the knowledge base ------------------------------------------------------------
def build_index(corpus: Path, embeddings: str) -> Path:
    """The corpus and its index, built once per corpus and embedding choice (kept while the
    running code can serve it)."""
    cache = HERE / ".cache" / f"soak-{corpus.name}-{embeddings}"
    config = cache / "soak.yml"
    args = ["--root", str(cache / "kb"), "--storage-path", str(cache / "index.db"), "--config", str(config)]
    if (cache / "index.db").exists():
        out = subprocess.run([*SERVER, *args, "--status"], capture_output=True, text=True)
        with contextlib.suppress(ValueError):
            if json.loads(out.stdout).get("compatibility", {}).get("isCompatible"):
                return cache
    shutil.rmtree(cache, ignore_errors=True)
    writable_copy(corpus, cache / "kb")
    _writable(cache / "kb")
    config.write_text(_config(embeddings), encoding="utf-8")
    t0 = time.perf_counter()
    subprocess.run([*SERVER, *args, "--reindex"], check=True, stdout=subprocess.DEVNULL)
    print(f"(built the index of {corpus.name} once: {time.perf_counter() - t0:.0f} s)", flush=True)
    return cache


def _config(embeddings: str) -> str:
    text = "knowledgeBase: {allowWrites: true, watchFiles: true}\n"
    return text + ("embedding: {provider: none}\nsearch: {defaultMode: lexical}\n" if embeddings == "none" else "")


def _writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:  # the shared corpora are read-only
        path.chmod(0o755 if path.is_dir() else 0o644)


def workspace(cache: Path, tmp: Path, clients: int) -> tuple[Path, Path, Path]:
    root = tmp / "kb"
    writable_copy(cache / "kb", root)
    _writable(root)
    copy_index(cache / "index.db", tmp / "index.db", root)
    shutil.copy(cache / "soak.yml", tmp / "soak.yml")
    (root / "scratch").mkdir()
    for n in range(clients):
        (root / "scratch" / f"c{n}.md").write_text(_scratch(n, 0), encoding="utf-8")
    return root, tmp / "index.db", tmp / "soak.yml"


def _scratch(n: int, k: int) -> str:
    return f"# Scratch {n}\n\nEdited {k} times.\n\nSee [the other](../scratch/c{(n + 1) % 64}.md).\n"


def vocabulary(root: Path) -> list[str]:
    words: Counter[str] = Counter()
    for path in sorted(root.rglob("*.md"))[:400]:
        words.update(re.findall(r"[A-Za-z]{4,}", path.read_text(encoding="utf-8", errors="replace").lower()))
    return [w for w, c in words.most_common(4000) if c >= 2]


def png(seed: int) -> bytes:
    """A tiny valid PNG whose bytes differ per ``seed`` (one grey pixel)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    header = (1).to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    pixel = zlib.compress(bytes([0, seed % 256]))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixel) + chunk(b"IEND", b"")


# the server's resources --------------------------------------------------------
def sample(pid: int, tmp: Path, root: Path) -> dict[str, float]:
    proc = Path(f"/proc/{pid}")
    status = dict(line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line)
    fds = index_fds = 0
    for fd in (proc / "fd").iterdir():
        fds += 1
        with contextlib.suppress(OSError):
            if os.readlink(fd).startswith(str(tmp / "index.db")):
                index_fds += 1
    state = tmp / STATE  # the server runs in tmp: its project root
    state_files = [p for p in state.rglob("*") if p.is_file()] if state.is_dir() else []
    wal = tmp / "index.db-wal"
    return {
        "rss_mb": int(status["VmRSS"].split()[0]) / 1024,
        "fds": fds,
        "index_fds": index_fds,
        "threads": int(status["Threads"]),
        "wal_mb": (wal.stat().st_size if wal.exists() else 0) / 2**20,
        "db_mb": (tmp / "index.db").stat().st_size / 2**20,
        "state_files": len(state_files),
        "state_kb": sum(p.stat().st_size for p in state_files) / 1024,
        "aside": len(list(tmp.glob("index.db.damaged-*"))),
        # what an atomic write may leave behind in the knowledge base (the outside editor's .swp is renamed at once)
        "kb_temp": sum(1 for p in root.rglob(".*") if p.is_file() and not p.name.endswith(".swp")),
    }


# the load -----------------------------------------------------------------------
class Load:
    def __init__(self, root: Path, words: list[str], seed: int, vectors: bool) -> None:
        self.root = root
        self.vectors = vectors
        self.words = words
        self.rng = random.Random(seed)
        self.docs = sorted(str(p.relative_to(root)) for p in root.rglob("*.md") if "scratch" not in p.parts)
        self.calls: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.error_text: dict[str, str] = {}
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.sessions_abandoned = 0
        self.outside_edits = 0

    def query(self) -> str:
        return " ".join(self.rng.sample(self.words, self.rng.randint(1, 4)))

    async def call(
        self, session: ClientSession, tool: str, request: dict[str, Any] | None, label: str = "", wrap: bool = True
    ) -> Any:
        label = label or tool
        arguments = request if not wrap else {"request": request} if request is not None else {}
        t0 = time.perf_counter()
        try:
            result = await session.call_tool(tool, arguments)
        except Exception as exc:  # a transport failure: counted, the loop goes on
            self._error(label, f"{type(exc).__name__}: {exc}")
            return None
        self.latency[label].append(time.perf_counter() - t0)
        self.calls[label] += 1
        if result.is_error:
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            self._error(label, text)
            return None
        return result.structured_content

    def _error(self, label: str, text: str) -> None:
        self.errors[label] += 1
        self.error_text.setdefault(label, text[:300])

    async def client(self, session: ClientSession, n: int, deadline: float, pause: float) -> None:
        scratch = f"scratch/c{n}.md"
        moved = f"scratch/moved-c{n}.md"
        where = scratch
        edits = 0
        ops = [
            ("lexical", 20), ("semantic", 8), ("hybrid", 14), ("read", 14), ("outline", 5), ("links", 4),
            ("list", 2), ("status", 2), ("patch", 10), ("move", 5), ("create", 5), ("image", 5),
        ]  # fmt: skip
        names, weights = zip(*ops, strict=True)
        while time.perf_counter() < deadline:
            op = self.rng.choices(names, weights)[0]
            if op in ("lexical", "semantic", "hybrid"):
                op = op if self.vectors else "lexical"
                request: dict[str, Any] = {"query": self.query(), "mode": op, "topK": self.rng.choice([5, 10, 20])}
                if self.rng.random() < 0.2:
                    request["includeGlobs"] = [self.rng.choice(["ch0*", "ch1*", "appendix*", "**/*.md", "ch*-0[12]-*"])]
                await self.call(session, "kb_search", request, f"search/{op}")
            elif op == "read":
                doc = self.rng.choice(self.docs)
                if self.rng.random() < 0.5:
                    read = await self.call(session, "kb_read", {"path": doc, "maxElements": 40}, "read")
                    elements = (read or {}).get("elements") or []
                    if elements:
                        pointer = self.rng.choice(elements)["pointer"]
                        await self.call(session, "kb_read", {"path": doc, "pointer": pointer}, "read/pointer")
                else:
                    await self.call(session, "kb_read", {"path": doc}, "read")
            elif op == "outline":
                await self.call(session, "kb_outline", {"path": self.rng.choice(self.docs)})
            elif op == "links":
                await self.call(session, "kb_links", {"path": self.rng.choice(self.docs), "depth": 2})
            elif op == "list":
                await self.call(session, "kb_list_files", None)
            elif op == "status":
                await self.call(session, "kb_status", None)
            elif op == "patch":
                read = await self.call(session, "kb_read", {"path": where}, "read")
                elements = (read or {}).get("elements") or []
                paragraphs = [e for e in elements if str(e.get("pointer", "")).split("~")[0] == "1.p1"]
                if paragraphs:
                    edits += 1
                    op_ = {"kind": "replace_element", "pointer": paragraphs[0]["pointer"]}
                    op_["markdown"] = f"Edited {edits} times: {self.query()}."
                    await self.call(session, "kb_patch", {"path": where, "operations": [op_]}, "patch")
            elif op == "move":
                read = await self.call(session, "kb_read", {"path": where, "maxElements": 1}, "read")
                if read:
                    target = moved if where == scratch else scratch
                    request = {"sourcePath": where, "targetPath": target, "expectedSourceHash": read["sourceHash"]}
                    if await self.call(session, "kb_move", {**request, "updateLinks": True}, "move"):
                        where = target
            elif op == "create":
                path = f"scratch/new-{n}-{self.rng.randrange(10**9)}.md"
                made = await self.call(session, "kb_create", {"path": path, "markdown": f"# New\n\n{self.query()}\n"})
                if made:
                    request = {"path": path, "expectedSourceHash": made["sourceHash"]}
                    await self.call(session, "kb_delete", request)
            elif op == "image":
                data = base64.b64encode(png(self.rng.randrange(256))).decode()
                arguments = {"data": data, "fileName": f"soak-{n}"}  # kb_save_image takes no request wrapper
                saved = await self.call(session, "kb_save_image", arguments, "image/save", wrap=False)
                if saved:
                    target = f"images/soak-{n}-moved.png"
                    request = {"sourcePath": saved["path"], "targetPath": target, "updateLinks": True}
                    if await self.call(session, "kb_move_image", request, "image/move"):
                        await self.call(session, "kb_delete_image", {"path": target}, "image/delete", wrap=False)
                    else:
                        await self.call(session, "kb_delete_image", {"path": saved["path"]}, "image/delete", wrap=False)
            await anyio.sleep(pause)

    async def outside_editor(self, deadline: float) -> None:
        """Another editor saving files under the server: a temporary file renamed over the document
        (vim, VS Code), and notes created and deleted."""
        created: list[Path] = []
        k = 0
        while time.perf_counter() < deadline:
            k += 1
            doc = self.root / self.rng.choice(self.docs)
            text = doc.read_text(encoding="utf-8")
            lines = text.rstrip("\n").split("\n")
            if lines and lines[-1].startswith("<!-- soak "):
                lines.pop()
            text = "\n".join([*lines, f"<!-- soak {k} -->"]) + "\n"
            tmp = doc.with_name(f".{doc.name}.swp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, doc)
            if k % 3 == 0:
                note = self.root / "outside" / f"note-{k}.md"
                note.parent.mkdir(exist_ok=True)
                note.write_text(f"# Outside {k}\n\n{self.query()}\n", encoding="utf-8")
                created.append(note)
            if len(created) > 5:
                created.pop(0).unlink(missing_ok=True)
            self.outside_edits += 1
            await anyio.sleep(1.0)

    async def stray_sessions(self, url: str, deadline: float) -> None:
        """Clients that open a session and never come back (no DELETE)."""
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "stray", "version": "0"},
            },
        }
        async with httpx.AsyncClient(timeout=30) as http:
            while time.perf_counter() < deadline:
                try:
                    answer = await http.post(url, json=hello, headers=headers)
                    if answer.status_code == 200 and answer.headers.get("mcp-session-id"):
                        self.sessions_abandoned += 1
                    else:
                        self._error("stray/initialize", f"{answer.status_code} {answer.text[:200]}")
                except httpx.HTTPError as exc:
                    self._error("stray/initialize", repr(exc))
                await anyio.sleep(2.0)


# servers ---------------------------------------------------------------------------
@asynccontextmanager
async def http_server(
    root: Path, db: Path, config: Path, clients: int, log: Path
) -> AsyncIterator[tuple[list[ClientSession], int, str]]:
    port = free_port()
    args = ["--root", str(root), "--storage-path", str(db), "--config", str(config)]
    with open(log, "w") as out:
        command = [*SERVER, *args, "--transport", "http", "--port", str(port)]
        # the project root (so the state folder) is the working folder: the run's own
        proc = subprocess.Popen(command, stdout=out, stderr=out, cwd=db.parent)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            await wait_for_port(port)
            async with contextlib.AsyncExitStack() as stack:
                sessions = []
                for _ in range(clients):
                    read, write = await stack.enter_async_context(streamable_http_client(url))
                    session = await stack.enter_async_context(ClientSession(read, write))
                    await session.initialize()
                    sessions.append(session)
                yield sessions, proc.pid, url
        finally:
            proc.terminate()
            proc.wait(60)


@asynccontextmanager
async def stdio_server(
    root: Path, db: Path, config: Path, log: Path
) -> AsyncIterator[tuple[list[ClientSession], int, str]]:
    args = ["--root", str(root), "--storage-path", str(db), "--config", str(config)]
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], env=dict(os.environ), cwd=db.parent)
    before = set(_child_pids())
    with open(log, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            pids = [pid for pid in _child_pids() if pid not in before]
            assert len(pids) == 1, pids
            yield [session], pids[0], ""


def _child_pids() -> list[int]:
    me = str(os.getpid())
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError, ValueError):
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if fields.get("PPid", "").strip() == me:
                pids.append(int(status.parent.name))
    return pids


# the run ---------------------------------------------------------------------------
def slope(rows: list[dict[str, float]], key: str) -> float:
    """Least-squares change of ``key`` per minute over ``rows``."""
    if len(rows) < 2:
        return 0.0
    xs = [r["t"] / 60 for r in rows]
    ys = [r[key] for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


async def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus = Path(args.corpus).resolve()
    cache = build_index(corpus, args.embeddings)
    with tempfile.TemporaryDirectory(prefix="lvsm-soak-") as name:
        tmp = Path(name)
        root, db, config = workspace(cache, tmp, args.clients)
        load = Load(root, vocabulary(root), args.seed, args.embeddings != "none")
        rows: list[dict[str, float]] = []
        log = HERE / ".cache" / f"soak-{args.transport}.server.log"  # kept after the run, never committed
        server = (
            http_server(root, db, config, args.clients, log)
            if args.transport == "http"
            else stdio_server(root, db, config, log)
        )
        async with server as (sessions, pid, url):
            # warm up: every search mode once, so the first sample already has the model loaded
            for mode in ("lexical", "semantic", "hybrid") if load.vectors else ("lexical",):
                await load.call(sessions[0], "kb_search", {"query": "ownership", "mode": mode}, "warm-up")
            start = time.perf_counter()
            deadline = start + args.minutes * 60

            async def sampler() -> None:
                while True:
                    now = time.perf_counter()
                    row = {"t": round(now - start, 1), **sample(pid, tmp, root)}
                    row["calls"] = sum(load.calls.values())
                    row["errors"] = sum(load.errors.values())
                    row["stray"] = load.sessions_abandoned
                    rows.append(row)
                    print(LINE.format(**row), flush=True)
                    if now >= deadline:
                        return
                    await anyio.sleep(min(args.sample, max(0.1, deadline - now)))

            async with anyio.create_task_group() as tg:
                tg.start_soon(sampler)
                tg.start_soon(load.outside_editor, deadline)
                if url:
                    tg.start_soon(load.stray_sessions, url, deadline)
                for n, session in enumerate(sessions):
                    tg.start_soon(load.client, session, n, deadline, args.pause)
    half = [r for r in rows if r["t"] >= rows[-1]["t"] / 2]
    keys = ["rss_mb", "fds", "index_fds", "threads", "wal_mb", "db_mb", "state_files", "state_kb", "kb_temp"]
    summary = {
        "transport": args.transport,
        "corpus": corpus.name,
        "embeddings": args.embeddings,
        "minutes": args.minutes,
        "clients": args.clients,
        "calls": dict(load.calls),
        "errors": dict(load.errors),
        "error_examples": load.error_text,
        "outside_edits": load.outside_edits,
        "stray_sessions": load.sessions_abandoned,
        "first": rows[0],
        "last": rows[-1],
        "max": {k: max(r[k] for r in rows) for k in keys},
        "slope_per_min_second_half": {k: round(slope(half, k), 3) for k in keys},
        "p50_ms": {k: round(sorted(v)[len(v) // 2] * 1000, 1) for k, v in sorted(load.latency.items()) if v},
        "p95_ms": {k: round(sorted(v)[int(len(v) * 0.95)] * 1000, 1) for k, v in sorted(load.latency.items()) if v},
        "samples": rows,
    }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=15)
    parser.add_argument("--transport", choices=["http", "stdio"], default="http")
    parser.add_argument("--corpus", default=str(HERE.parent.parent.parent / "shared" / "corpora" / "rust-book"))
    parser.add_argument("--embeddings", choices=["local", "none"], default="local")
    parser.add_argument("--clients", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--sample", type=float, default=15)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    if not Path(args.corpus).is_dir():
        args.corpus = "/work/shared/corpora/rust-book"
    summary = anyio.run(run, args)
    out = Path(args.out) if args.out else HERE / "results" / f"soak-{args.transport}.json"
    out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k != "samples"}, indent=1))


if __name__ == "__main__":
    main()
