"""Start any MCP server command over stdio in a temporary workspace and talk to it.

The server is started with its working folder and ``CLAUDE_PROJECT_DIR`` set to
the workspace; when a scenario needs configuration it is written as YAML
*outside* the workspace and passed with ``--config`` (the contract's flag).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from mcp import ClientSession, StdioServerParameters, stdio_client

DEFAULT_SERVER = [sys.executable, "-m", "local_vector_search_mcp"]


def server_command(option: str | None) -> list[str]:
    return shlex.split(option) if option else list(DEFAULT_SERVER)


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
    command: list[str], workspace: Path, config: dict[str, Any] | None = None, args: list[str] | None = None
) -> AsyncIterator[Connection]:
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
    }
    params = StdioServerParameters(command=command[0], args=command[1:] + extra, env=env, cwd=str(workspace))
    log_path = workspace.parent / f"{workspace.name}.server-{os.getpid()}-{id(params)}.log"
    with open(log_path, "w") as errlog:
        try:
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
