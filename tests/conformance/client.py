"""Start any MCP server command in a temporary workspace and talk to it, over stdio or HTTP.

The server is started with its working folder and ``CLAUDE_PROJECT_DIR`` set to
the workspace; when a scenario needs configuration it is written as YAML
*outside* the workspace and passed with ``--config`` (the contract's flag).

With ``CONFORMANCE_TRANSPORT=http`` (``make conformance TRANSPORT=http``, or pytest's
``--transport http``) the same command is started with ``--transport http --host 127.0.0.1
--port 0`` and reached with the SDK's Streamable HTTP client at the URL it prints on stderr.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest
import yaml
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

DEFAULT_SERVER = [sys.executable, "-m", "local_vector_search_mcp"]


def server_command(option: str | None) -> list[str]:
    return shlex.split(option) if option else list(DEFAULT_SERVER)


def engine_storage(engine: str, request: Any) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
    """The ``storage`` section and the environment of a server on ``engine``: SQLite's defaults
    (``None, None``), or a fresh schema of the session's PostgreSQL server (``request`` is the
    test's ``pytest.FixtureRequest``), its URL passed through the environment as a deployment
    keeping its password out of YAML would pass it. An engine left out of ``--engines`` (the
    PostgreSQL engine is this project's extension: by default a ``--server`` runs on SQLite
    alone) skips the test."""
    enabled = os.environ.get("CONFORMANCE_ENGINES", "sqlite,postgresql").split(",")
    if engine not in [e.strip() for e in enabled]:
        pytest.skip(f"the {engine} engine is not among --engines {','.join(enabled)}")
    if engine != "postgresql":
        return None, None
    server = request.getfixturevalue("pg_server")
    storage = {"backend": "postgresql", "schema": server.fresh_schema()}
    return storage, {"LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL": server.url}


def transport() -> str:
    return os.environ.get("CONFORMANCE_TRANSPORT", "stdio")


SERVING = re.compile(r"serving MCP at (http://\S+)")


def start_http_server(
    command: list[str], cwd: Path, env: dict[str, str], errlog: IO[str], timeout: float = 60
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``command --transport http --port 0``; return it with the URL it printed once it listens.

    The server picks its free port itself (and prints where it serves, after binding it): a port
    picked here, closed and passed on could be taken by another process before the server binds it.
    """
    args = ["--transport", "http", "--host", "127.0.0.1", "--port", "0"]
    proc = subprocess.Popen(command + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=errlog, stderr=errlog)
    log = Path(errlog.name)
    deadline = time.monotonic() + timeout
    while True:
        serving = SERVING.search(log.read_text(encoding="utf-8", errors="replace"))
        if serving:
            return proc, serving.group(1)
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_http_server(proc)
            raise RuntimeError(f"the server did not say where it listens (exit {proc.returncode})")
        time.sleep(0.05)


def stop_http_server(proc: subprocess.Popen[bytes], timeout: float = 30) -> int:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


@dataclass
class ToolResult:
    is_error: bool
    structured: Any
    texts: list[str]
    blocks: list[Any]

    @property
    def error(self) -> dict[str, Any]:
        assert self.is_error, f"expected an error, got {self.structured!r}"
        assert len(self.blocks) == 1 and len(self.texts) == 1, "an error is exactly one text block"
        payload = json.loads(self.texts[0])
        assert set(payload) == {"code", "message"}, payload
        return payload


class Connection:
    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        result = await self.session.call_tool(name, arguments if arguments is not None else {})
        texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
        return ToolResult(bool(result.is_error), result.structured_content, texts, list(result.content))

    async def list_tools(self) -> list[Any]:
        return list((await self.session.list_tools()).tools)


def write_files(root: Path, files: dict[str, Any]) -> None:
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            # newline="" keeps CRLF/CR fixtures exactly as written in the scenario.
            with path.open("w", encoding="utf-8", newline="") as f:
                f.write(content)


@asynccontextmanager
async def connect(
    command: list[str],
    workspace: Path,
    config: dict[str, Any] | None = None,
    args: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
) -> AsyncIterator[Connection]:
    """``extra_env`` adds variables to the server's otherwise minimal environment (e.g. ``SSL_CERT_FILE``)."""
    extra = list(args or [])
    if config:
        config_path = workspace.parent / f"{workspace.name}.config.yml"
        config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
        extra += ["--config", str(config_path)]
    env = {
        "CLAUDE_PROJECT_DIR": str(workspace),
        "OMP_NUM_THREADS": "1",
        "PYTHONUNBUFFERED": "1",
        "PATH": os.environ.get("PATH", ""),
        **(extra_env or {}),
    }
    params = StdioServerParameters(command=command[0], args=command[1:] + extra, env=env, cwd=str(workspace))
    log_path = workspace.parent / f"{workspace.name}.server-{os.getpid()}-{id(params)}.log"
    with open(log_path, "w") as errlog:
        try:
            if transport() == "http":
                proc, url = start_http_server(command + extra, workspace, env, errlog)
                try:
                    async with (
                        streamable_http_client(url) as (read, write),
                        ClientSession(read, write) as session,
                    ):
                        await session.initialize()
                        yield Connection(session)
                finally:
                    stop_http_server(proc)
                return
            async with (
                stdio_client(params, errlog=errlog if not os.environ.get("CONFORMANCE_STDERR") else sys.stderr) as (
                    read,
                    write,
                ),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield Connection(session)
        except BaseException as exc:
            # Show what the server said on stderr next to the failure (crash, traceback, ...).
            errlog.flush()
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-4000:]
            if tail.strip():
                exc.add_note(f"--- server stderr ({command[0]}) ---\n{tail}")
            raise
