"""Helpers shared by the benchmarks: the same real-workspace builder the tests use
(``tests/kb_fakes.py``), so every benchmark measures the shipped configuration
through ``config.load_settings``, with only the overrides it names."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from kb_fakes import KbClient, make_workspace

__all__ = ["KbClient", "bench_service", "copy_index", "free_port", "wait_for_port"]


def bench_service(root: Path | str, storage: Path | str, provider: str = "none", **overrides: Any) -> KbClient:
    """A workspace over ``root`` with its index at ``storage``; ``overrides`` as in ``make_workspace``."""
    return KbClient(make_workspace(Path(root), provider, storage=Path(storage), **overrides))


def writable_copy(source: Path, target: Path, **copytree: Any) -> Path:
    """``shutil.copytree`` of ``source`` whose files and folders the benchmark may write: the shared
    corpora are read-only, and a copy keeps their modes, so every edit of it was refused
    (PERMISSION_DENIED, as the tools refuse a read-only file)."""
    shutil.copytree(source, target, **copytree)
    for folder, dirs, files in os.walk(target):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o200)
    os.chmod(target, os.stat(target).st_mode | 0o200)
    return target


def free_port() -> int:
    """A loopback port nothing listens on now (a server started next binds it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_for_port(port: int, seconds: float = 60) -> None:
    """Return once a server accepts connections on loopback ``port`` (TimeoutError after ``seconds``)."""
    import anyio

    with anyio.fail_after(seconds):
        while True:
            try:
                await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                return
            except OSError:
                await anyio.sleep(0.1)


def copy_index(source: Path, target: Path, root: Path) -> None:
    """A cached SQLite index put beside a copy of its knowledge base at ``root``. The cache records
    the cached folder as its knowledge base (decision 535), which still exists, so a copy of the
    file would be refused as another project's; ``index copy`` claims nothing, and the first server
    on ``root`` adopts the copy."""
    copy = ["index", "copy", "--from", f"sqlite:{source}", "--to", f"sqlite:{target}"]
    command = [sys.executable, "-m", "local_vector_search_mcp", "--root", str(root), *copy]
    subprocess.run(command, check=True, capture_output=True)


def host_speed() -> float:
    """CPU-seconds of a fixed pure-Python loop (best of 3): how fast this host runs Python now.
    The shared host's speed moved 2-4x between sessions (decision 629); an absolute figure is
    read against this one, a same-run ratio needs no such help."""
    import time

    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        total = 0
        for i in range(2_000_000):
            total += i
        best = min(best, time.process_time() - started)
    return best
