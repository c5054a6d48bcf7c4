"""Load test of the Streamable HTTP transport (loopback only), next to stdio with one client.

The mix: ``kb_search`` lexical (40 %) and hybrid (20 %), ``kb_read`` (25 %) and ``kb_patch`` (15 %,
each client edits its own scratch document: read it, replace a paragraph), on the rust-book corpus
with the bundled local model. Four closed-loop runs of 30 s each: one client over stdio (the
reference), one client over HTTP (what the transport itself costs), then 16 clients (the SDK's Streamable HTTP
client, one session each) against one ``--transport http`` server, closed loop (each client calls
again as soon as it has its answer: the server's throughput ceiling), and with think time (each
client pauses 0.5-1.5 s between calls, still far busier than an agent waiting for its model).
Then the goal's own measurement (spec/decisions.md 210): open loop, calls arriving at half the
16-client closed-loop HTTP throughput from 16 clients, over stdio (one session) and HTTP (16 sessions) with
the same arrivals, both servers up and the load alternating between them every 5 s.
Printed per tool: calls, p50/p95/p99; errors; throughput; CPU per call of the server and of the
clients (this process); the server's peak RSS and its mean RSS per quarter of the run.

Goal (issue 15): lexical p95 over HTTP within 2x of stdio; no error; memory flat. Clients and
server share the machine's cores, so in the closed loop every client waits for the other 15.
The hybrid index is built once (a few CPU-minutes) into bench/.cache/http-rust-book and copied
for every run. ``BENCH_HTTP_SECONDS`` shortens the run while developing; ``BENCH_HTTP_CLIENTS``
changes the client count.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from common import copy_index, free_port, wait_for_port, writable_copy
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
CORPUS_CANDIDATES = [
    Path(os.environ.get("LVSM_SHARED", "")) / "corpora" / "rust-book",
    HERE.parent.parent / "shared" / "corpora" / "rust-book",
    Path("/work/shared/corpora/rust-book"),
]
CACHE = HERE / ".cache" / "http-rust-book"
SECONDS = float(os.environ.get("BENCH_HTTP_SECONDS", "30"))
CLIENTS = int(os.environ.get("BENCH_HTTP_CLIENTS", "16"))
PAUSE = float(os.environ.get("BENCH_HTTP_PAUSE", "1.0"))
SERVER = [sys.executable, "-m", "local_vector_search_mcp"]
QUERIES = [
    "ownership rules",
    "borrow checker",
    "lifetime annotations",
    "Rc::strong_count",
    "trait objects dynamic dispatch",
    "pattern matching enums",
    "cargo workspaces",
    "error handling with Result",
    "closures capture environment",
    "iterator adapters",
    "smart pointers Box",
    "threads and message passing",
    "unsafe rust raw pointers",
    "testing with cargo test",
    "slices and strings",
    "how do I share data between threads safely",
]
SCRATCH = "# Scratch {n}\n\nEdited {k} times.\n\nA second paragraph that stays.\n"


def corpus() -> Path | None:
    return next((p for p in CORPUS_CANDIDATES if p.is_dir()), None)


def cached_index_is_current() -> bool:
    """The cached index exists and the running code can serve it (a new tokenizer or chunker is not)."""
    if not (CACHE / "index.db").exists():
        return False
    out = subprocess.run(
        [*SERVER, "--root", str(CACHE / "kb"), "--storage-path", str(CACHE / "index.db"), "--status"],
        capture_output=True,
        text=True,
    )
    try:
        status = json.loads(out.stdout)
    except ValueError:
        return False
    return bool(status.get("compatibility", {}).get("isCompatible"))


def ensure_index(source: Path) -> None:
    """Build the hybrid index once (lexical, then vectors, through the CLI) and keep it while current."""
    if cached_index_is_current():
        return
    shutil.rmtree(CACHE, ignore_errors=True)
    writable_copy(source, CACHE / "kb")
    for path in [CACHE / "kb", *(CACHE / "kb").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    t0 = time.perf_counter()
    subprocess.run(
        [*SERVER, "--root", str(CACHE / "kb"), "--storage-path", str(CACHE / "index.db"), "--reindex"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    print(f"(built the hybrid index of rust-book once: {time.perf_counter() - t0:.0f} s)", flush=True)


def workspace(tmp: Path, clients: int) -> tuple[Path, Path]:
    writable_copy(CACHE / "kb", tmp / "kb")
    for path in [tmp / "kb", *(tmp / "kb").rglob("*")]:  # the shared corpus is read-only
        path.chmod(0o755 if path.is_dir() else 0o644)
    copy_index(CACHE / "index.db", tmp / "index.db", tmp / "kb")
    (tmp / "kb" / "scratch").mkdir()
    for n in range(clients):
        (tmp / "kb" / "scratch" / f"c{n}.md").write_text(SCRATCH.format(n=n, k=0), encoding="utf-8")
    config = tmp / "bench.yml"
    config.write_text("knowledgeBase: {allowWrites: true}\n", encoding="utf-8")
    return tmp / "kb", config


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.rss: list[tuple[float, int]] = []
        self.server_cpu_s = 0.0
        self.client_cpu_s = 0.0

    def summary(self, seconds: float) -> dict[str, Any]:
        def pct(values: list[float], q: float) -> float:
            values = sorted(values)
            return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else float("nan")

        tools = {
            name: {
                "calls": len(v),
                "p50_ms": pct(v, 0.50),
                "p95_ms": pct(v, 0.95),
                "p99_ms": pct(v, 0.99),
            }
            for name, v in sorted(self.latency.items())
        }
        samples = [kib for _, kib in self.rss if kib]
        quarter = max(1, len(samples) // 4)
        quarters = [samples[i * quarter : (i + 1) * quarter] or samples[-1:] for i in range(4)] if samples else []
        return {
            "tools": tools,
            "calls": sum(len(v) for v in self.latency.values()),
            "throughput": sum(len(v) for v in self.latency.values()) / seconds,
            "errors": len(self.errors),
            "first_errors": self.errors[:3],
            "peak_rss_mib": max(samples, default=0) / 1024,
            # Mean RSS per quarter of the run: flat from the second quarter on means no leak
            # (the first still fills caches and starts worker threads).
            "rss_quarters_mib": [statistics.mean(q) / 1024 for q in quarters],
            # The server process's CPU time per call: what a call costs whatever the load of the machine.
            "server_cpu_ms_per_call": 1000 * self.server_cpu_s / max(1, sum(len(v) for v in self.latency.values())),
            # The clients' (this process's) CPU per call: they share the machine's cores with the server.
            "client_cpu_ms_per_call": 1000 * self.client_cpu_s / max(1, sum(len(v) for v in self.latency.values())),
        }


class Client:
    """One client's calls: the mix above; its kb_patch edits its own scratch document."""

    def __init__(self, session: ClientSession, n: int, paths: list[str], stats: Stats) -> None:
        self.session, self.n, self.paths, self.stats = session, n, paths, stats
        self.edits = 0
        self.editing = anyio.Lock()  # open loop: one read-then-patch at a time per scratch document

    async def timed(self, label: str, tool: str, arguments: dict[str, Any]) -> Any:
        t0 = time.perf_counter()
        try:
            result = await self.session.call_tool(tool, arguments)
        except Exception as exc:
            self.stats.errors.append(f"{label}: {type(exc).__name__}: {exc}")
            return None
        self.stats.latency[label].append(time.perf_counter() - t0)
        if result.is_error:
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            self.stats.errors.append(f"{label}: {text[:200]}")
            return None
        return result.structured_content

    async def call(self, rng: random.Random) -> None:
        roll = rng.random()
        if roll < 0.40:
            query = rng.choice(QUERIES)
            await self.timed("kb_search lexical", "kb_search", {"request": {"query": query, "mode": "lexical"}})
        elif roll < 0.60:
            query = rng.choice(QUERIES)
            await self.timed("kb_search hybrid", "kb_search", {"request": {"query": query, "mode": "hybrid"}})
        elif roll < 0.85:
            await self.timed("kb_read", "kb_read", {"request": {"path": rng.choice(self.paths)}})
        else:
            path = f"scratch/c{self.n}.md"
            async with self.editing:
                read = await self.timed("kb_read", "kb_read", {"request": {"path": path}})
                if read is None:
                    return
                pointer = read["elements"][1]["pointer"]
                self.edits += 1
                op = {"kind": "replace_element", "pointer": pointer, "markdown": f"Edited {self.edits} times."}
                await self.timed("kb_patch", "kb_patch", {"request": {"path": path, "operations": [op]}})


async def list_paths(session: ClientSession) -> list[str]:
    listed = await session.call_tool("kb_list_files", {})
    paths = [f["relativePath"] for f in (listed.structured_content or {}).get("files", [])]
    paths = [p for p in paths if p.endswith(".md") and not p.startswith("scratch/")]
    assert paths, listed
    return paths


async def client_loop(
    session: ClientSession, n: int, deadline: float, stats: Stats, seed: int, pause: float = 0.0
) -> None:
    """Closed loop: call, wait for the answer, (think,) call again."""
    rng = random.Random(seed)
    client = Client(session, n, await list_paths(session), stats)
    while time.perf_counter() < deadline:
        if pause:
            await anyio.sleep(pause * (0.5 + rng.random()))  # an agent thinking between calls
        await client.call(rng)


async def open_loop(clients: list[Client], rate: float, deadline: float, rng: random.Random) -> None:
    """Open loop: calls arrive at ``rate`` per second (Poisson) whatever the answers take, each from
    one of the clients (their sessions: one each over HTTP; over stdio the one session, which
    carries concurrent requests). The same seed gives stdio and HTTP the same arrivals."""
    async with anyio.create_task_group() as tg:
        at = time.perf_counter()
        while True:
            at += rng.expovariate(rate)
            if at >= deadline:
                break
            await anyio.sleep(max(0.0, at - time.perf_counter()))
            tg.start_soon(rng.choice(clients).call, random.Random(rng.random()))


async def sample_rss(pid_of: Callable[[], int | None], stats: Stats, deadline: float) -> None:
    while time.perf_counter() < deadline:
        pid = pid_of()
        if pid:
            stats.rss.append((time.perf_counter(), rss_kib(pid)))
        await anyio.sleep(0.5)


async def warm_up(session: ClientSession) -> None:
    """Load the model and the caches once (a first hybrid search loads the query encoder)."""
    for mode in ("lexical", "hybrid"):
        await session.call_tool("kb_search", {"request": {"query": "ownership", "mode": mode}})
    await session.call_tool("kb_read", {"request": {"path": "ch04-01-what-is-ownership.md"}})


async def wait_ready(session: ClientSession) -> None:
    """Until the copied index is current (the scratch files are new) and every vector is stored."""
    with anyio.fail_after(600):
        await session.call_tool("kb_reindex", {})
        while True:
            status = (await session.call_tool("kb_status", {})).structured_content or {}
            vectors = status.get("vectors") or {}
            if not status["indexing"]["isRunning"] and not vectors.get("pending"):
                if not status["compatibility"]["isCompatible"]:
                    raise SystemExit(f"cached index is not compatible: {status['compatibility']}")
                return
            await anyio.sleep(0.5)


@asynccontextmanager
async def http_sessions(url: str, count: int) -> AsyncIterator[list[ClientSession]]:
    import contextlib

    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for _ in range(count):
            read, write = await stack.enter_async_context(streamable_http_client(url))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append(session)
        yield sessions


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` and its finished children's (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drive(
    sessions: list[ClientSession],
    pid: int,
    stats: Stats,
    seconds: float,
    pause: float = 0.0,
    open_clients: list[Client] | None = None,
    rate: float = 0.0,
    rng: random.Random | None = None,
) -> None:
    """``seconds`` of load: closed loop (one loop per session) or, with ``open_clients``, open loop."""
    cpu0, own0 = cpu_seconds(pid), own_cpu_seconds()
    deadline = time.perf_counter() + seconds
    async with anyio.create_task_group() as tg:
        tg.start_soon(sample_rss, lambda: pid, stats, deadline)
        if open_clients:
            tg.start_soon(open_loop, open_clients, rate, deadline, rng or random.Random(1))
        else:
            for n, session in enumerate(sessions):
                tg.start_soon(client_loop, session, n, deadline, stats, n, pause)
    stats.server_cpu_s += cpu_seconds(pid) - cpu0
    stats.client_cpu_s += own_cpu_seconds() - own0


@asynccontextmanager
async def http_server(tmp: Path, clients: int) -> AsyncIterator[tuple[list[ClientSession], int]]:
    """A ``--transport http`` server on a copy of the index, ``clients`` SDK sessions, warmed up."""
    tmp.mkdir()
    root, config = workspace(tmp / "http", CLIENTS)
    port = free_port()
    log = open(tmp / "http-server.log", "w")  # noqa: SIM115 - closed below
    args = ["--root", str(root), "--storage-path", str(tmp / "http" / "index.db"), "--config", str(config)]
    proc = subprocess.Popen([*SERVER, *args, "--transport", "http", "--port", str(port)], stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await wait_for_port(port)
        async with http_sessions(url, clients) as sessions:
            await wait_ready(sessions[0])
            await warm_up(sessions[0])
            yield sessions, proc.pid
    finally:
        proc.terminate()
        proc.wait(60)
        log.close()


def _child_pids() -> list[int]:
    me = str(os.getpid())
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == me:
            pids.append(int(status.parent.name))
    return pids


@asynccontextmanager
async def stdio_server(tmp: Path) -> AsyncIterator[tuple[list[ClientSession], int]]:
    """A stdio server process on a copy of the index and its one session, warmed up."""
    root, config = workspace(tmp, CLIENTS)
    args = ["--root", str(root), "--storage-path", str(tmp / "index.db"), "--config", str(config)]
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *args], env=dict(os.environ))
    before = set(_child_pids())
    with open(tmp / "stdio-server.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await wait_ready(session)
            await warm_up(session)
            pids = [pid for pid in _child_pids() if pid not in before]
            assert len(pids) == 1, pids
            yield [session], pids[0]


async def run_http(tmp: Path, pause: float, clients: int = CLIENTS) -> dict[str, Any]:
    stats = Stats()
    async with http_server(tmp / f"http-{pause}-{clients}", clients) as (sessions, pid):
        await drive(sessions, pid, stats, SECONDS, pause)
    return stats.summary(SECONDS)


async def run_stdio(tmp: Path) -> dict[str, Any]:
    stats = Stats()
    async with stdio_server(tmp / "stdio") as (sessions, pid):
        await drive(sessions, pid, stats, SECONDS)
    return stats.summary(SECONDS)


async def run_open(tmp: Path, rate: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """Open loop at ``rate`` calls/s over both transports at once: both servers stay up and the
    load alternates between them in ``OPEN_SEGMENTS`` turns each (stdio, HTTP, stdio, ...), so a
    change in the machine's other load falls on both alike. Arrivals repeat: each turn of stdio
    and the HTTP turn after it get the same arrival times and calls."""
    stdio, http = Stats(), Stats()
    turn = SECONDS / OPEN_SEGMENTS
    async with (
        stdio_server(tmp / "stdio-open") as (s_sessions, s_pid),
        http_server(tmp / "http-open", CLIENTS) as (h_sessions, h_pid),
    ):
        paths = await list_paths(s_sessions[0])
        s_clients = [Client(s_sessions[0], n, paths, stdio) for n in range(CLIENTS)]
        h_clients = [Client(h_sessions[n], n, paths, http) for n in range(CLIENTS)]
        for segment in range(OPEN_SEGMENTS):
            await drive(s_sessions, s_pid, stdio, turn, open_clients=s_clients, rate=rate, rng=random.Random(segment))
            await drive(h_sessions, h_pid, http, turn, open_clients=h_clients, rate=rate, rng=random.Random(segment))
    return stdio.summary(SECONDS), http.summary(SECONDS)


def report(
    http: dict[str, Any],
    stdio: dict[str, Any],
    label: str,
    clients: int = CLIENTS,
    stdio_label: str = f"1 client x {SECONDS:.0f} s, closed loop",
) -> list[str]:
    lines = [
        f"http ({label}): {clients} client{'s' if clients > 1 else ''} x {SECONDS:.0f} s, {http['calls']} calls, "
        f"{http['throughput']:.0f} calls/s, "
        f"errors {http['errors']}, CPU-ms per call: server {http['server_cpu_ms_per_call']:.1f}, "
        f"clients {http['client_cpu_ms_per_call']:.1f}; server "
        f"peak RSS {http['peak_rss_mib']:.0f} MiB "
        f"(mean per quarter of the run: {' / '.join(f'{q:.0f}' for q in http['rss_quarters_mib'])})",
        f"stdio ({stdio_label}): {stdio['calls']} calls, {stdio['throughput']:.0f} calls/s, "
        f"errors {stdio['errors']}, CPU-ms per call: server {stdio['server_cpu_ms_per_call']:.1f}, "
        f"client {stdio['client_cpu_ms_per_call']:.1f}; server "
        f"peak RSS {stdio['peak_rss_mib']:.0f} MiB",
        f"{'tool':<20} {'http calls':>10} {'p50':>8} {'p95':>8} {'p99':>8} | {'stdio calls':>11} {'p50':>8} "
        f"{'p95':>8} {'p99':>8}   (ms)",
    ]
    for tool in sorted(set(http["tools"]) | set(stdio["tools"])):
        h = http["tools"].get(tool, {})
        s = stdio["tools"].get(tool, {})

        def row(d: dict[str, Any], width: int) -> str:
            if not d:
                return f"{'-':>{width}} {'-':>8} {'-':>8} {'-':>8}"
            return f"{d['calls']:>{width}} {d['p50_ms']:>8.1f} {d['p95_ms']:>8.1f} {d['p99_ms']:>8.1f}"

        lines.append(f"{tool:<20} {row(h, 10)} | {row(s, 11)}")
    lex_h = http["tools"].get("kb_search lexical", {}).get("p95_ms", float("nan"))
    lex_s = stdio["tools"].get("kb_search lexical", {}).get("p95_ms", float("nan"))
    ratio = lex_h / lex_s if lex_s else float("nan")
    quarters = http["rss_quarters_mib"] or [0.0, 0.0]
    growth = quarters[-1] - quarters[1 if len(quarters) > 1 else 0]
    lines.append(
        f"lexical p95 http ({label})/stdio ({stdio_label}) {ratio:.2f}x | errors {http['errors'] + stdio['errors']} "
        f"(goal 0) | server RSS 4th - 2nd quarter {growth:+.0f} MiB (goal: flat)"
    )
    for err in http["first_errors"] + stdio["first_errors"]:
        lines.append(f"error: {err}")
    return lines


OPEN_FRACTION = float(os.environ.get("BENCH_HTTP_OPEN_FRACTION", "0.5"))
OPEN_SEGMENTS = 6


def main() -> int:
    source = corpus()
    if source is None:
        print("rust-book corpus not found (../shared/corpora); skipped")
        return 0
    ensure_index(source)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        stdio = anyio.run(run_stdio, Path(tmp))
        single = anyio.run(run_http, Path(tmp), 0.0, 1)
        closed = anyio.run(run_http, Path(tmp), 0.0)
        paced = anyio.run(run_http, Path(tmp), PAUSE)
        # The offered load of the open-loop runs (decision 210): a share of what 16 HTTP clients got
        # through in the closed loop of this very run (less than one stdio client: each call costs
        # the clients and the server more CPU on the same cores), a rate both setups sustain.
        rate = OPEN_FRACTION * min(closed["throughput"], stdio["throughput"])
        stdio_open, http_open = anyio.run(run_open, Path(tmp), rate)
    load_after = os.getloadavg()[0]
    print(
        f"client and server share this machine ({os.cpu_count()} cores, load average {load_before:.1f} before "
        f"and {load_after:.1f} after the runs); the clients run in one process",
        flush=True,
    )
    print("\n".join(report(single, stdio, "1 client, the transport's own cost", 1)), flush=True)
    for run, label in ((closed, "closed loop"), (paced, f"{PAUSE * 1000:.0f} ms think time")):
        lines = report(run, stdio, label)
        print("\n".join(lines[:1] + lines[3:]), flush=True)  # the stdio line and the header once only
    open_label = f"open loop, {rate:.0f} calls/s"
    print(
        f"open loop: calls arrive at {rate:.0f} per second (Poisson; {OPEN_FRACTION:.0%} of the 16-client closed-loop "
        f"throughput above) from {CLIENTS} clients, the same arrivals over stdio (one session) and HTTP; both "
        f"servers up, the load alternating between them in {OPEN_SEGMENTS} turns of "
        f"{SECONDS / OPEN_SEGMENTS:.0f} s each",
        flush=True,
    )
    print("\n".join(report(http_open, stdio_open, open_label, stdio_label=open_label)), flush=True)
    record = {
        "stdio": stdio,
        "http_single": single,
        "http_closed": closed,
        "http_paced": paced,
        "stdio_open": stdio_open,
        "http_open": http_open,
        "open_rate": rate,
        "load_average": [load_before, load_after],
    }
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "bench_http.json").write_text(json.dumps(record, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
