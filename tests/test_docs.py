"""The documentation works as written: client snippets connect, README commands run.

A newcomer copies these snippets literally; each one is parsed here, its placeholders replaced
by real paths, and the command it names is started (stdio, from ``/`` like Claude Desktop) or
its URL reached (HTTP, with the token from where the snippet takes it) by the MCP SDK's client.
The README's shell examples run one by one on a copy of ``examples/demo``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from conformance.client import DEFAULT_SERVER
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from server.http_server import http_server

from local_vector_search_mcp.server.http import TOKEN_ENV

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "docs" / "clients.md"
COMMAND = "/abs/path/to/local-vector-search-mcp/.venv/bin/local-vector-search-mcp"
PROJECT = "/abs/path/to/your/project"
TOKEN = "docs-test-token-0123456789abcdef"
PROGRAM = Path(sys.executable).parent / "local-vector-search-mcp"  # what `make setup` installs


def blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", path.read_text(encoding="utf-8"), re.M | re.S)


def servers(config: dict[str, Any]) -> dict[str, Any]:
    found = config.get("mcpServers") or config.get("servers") or config.get("mcp_servers")
    assert isinstance(found, dict) and list(found) == ["local-vector-search"], config
    entry = found["local-vector-search"]
    assert isinstance(entry, dict)
    return entry


def _fill(value: str, project: Path) -> str:
    return (
        value.replace(COMMAND, str(PROGRAM)).replace(PROJECT, str(project)).replace("${workspaceFolder}", str(project))
    )


async def _stdio_status(command: str, args: list[str]) -> dict[str, Any]:
    params = StdioServerParameters(command=command, args=args, cwd="/", env={"OMP_NUM_THREADS": "1"})
    with anyio.fail_after(120):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {t.name for t in (await session.list_tools()).tools}
            assert {"kb_search", "kb_read", "kb_status"} <= names
            result = await session.call_tool("kb_status", {})
            assert not result.is_error, result
            assert isinstance(result.structured_content, dict)
            return result.structured_content


async def _http_tools(url: str, headers: dict[str, str]) -> set[str]:
    with anyio.fail_after(120):
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return {t.name for t in (await session.list_tools()).tools}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    shutil.copytree(ROOT / "examples" / "demo", root)
    return root


def _stdio_entries() -> list[tuple[str, dict[str, Any]]]:
    entries = [(f"json {i}", json.loads(text)) for i, text in enumerate(blocks(CLIENTS, "json"))]
    entries += [(f"toml {i}", tomllib.loads(text)) for i, text in enumerate(blocks(CLIENTS, "toml"))]
    return [(name, servers(config)) for name, config in entries if "command" in servers(config)]


def test_every_client_snippet_is_checked() -> None:
    stdio = _stdio_entries()
    http = [json.loads(t) for t in blocks(CLIENTS, "json") if "url" in servers(json.loads(t))]
    assert len(stdio) == 5 and len(http) == 2  # Claude Desktop, Claude Code, VS Code, Cursor, Codex; VS Code, Cursor


@pytest.mark.parametrize(("name", "entry"), _stdio_entries(), ids=[n for n, _ in _stdio_entries()])
def test_a_stdio_snippet_starts_the_server_from_the_filesystem_root(
    name: str, entry: dict[str, Any], notes: Path
) -> None:
    assert entry.get("type", "stdio") == "stdio", name
    assert entry["command"] == COMMAND, "snippets name the command make setup installs"
    args = [_fill(a, notes) for a in entry["args"]]
    status = anyio.run(_stdio_status, _fill(entry["command"], notes), args)
    assert status["project"]["root"] == str(notes.resolve())
    assert status["allowWrites"] is ("--allow-writes" in args)


@pytest.mark.parametrize("index", range(2))
def test_an_http_snippet_connects_with_its_token(index: int, tmp_path: Path, notes: Path) -> None:
    config = [json.loads(t) for t in blocks(CLIENTS, "json") if "url" in servers(json.loads(t))][index]
    entry = servers(config)
    prompted = {f"${{input:{i['id']}}}": TOKEN for i in config.get("inputs", []) if i.get("password")}
    with http_server(tmp_path, env={TOKEN_ENV: TOKEN}, root=notes) as server:
        url = entry["url"].replace("http://127.0.0.1:8081/mcp", server.url)
        headers = {}
        for key, value in entry["headers"].items():
            for placeholder, secret in {**prompted, f"${{env:{TOKEN_ENV}}}": TOKEN}.items():
                value = value.replace(placeholder, secret)
            assert "${" not in value, f"unresolved variable in {key}: {value}"
            headers[key] = value
        assert "kb_search" in anyio.run(_http_tools, url, headers)
        with pytest.raises(Exception):  # noqa: B017 - and without the token it is refused (401)
            anyio.run(_http_tools, url, {})


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{PROGRAM.parent}:/usr/bin:/bin", "OMP_NUM_THREADS": "1", "HOME": str(cwd)}
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def test_the_index_command_of_the_clients_page_runs(notes: Path) -> None:
    (line,) = [b for b in blocks(CLIENTS, "sh") if "--reindex" in b]
    result = _run([_fill(a, notes) for a in shlex.split(line)], cwd=Path("/"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["indexedFiles"] == len(list(notes.rglob("*.md")))


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_the_readme_shell_examples_run_as_written(tmp_path: Path) -> None:
    # from a folder that holds examples/demo, like the clone's root (nothing written into the clone)
    shutil.copytree(ROOT / "examples" / "demo", tmp_path / "examples" / "demo")
    (block,) = re.findall(r"```sh\n(.*?)```", _readme_section("Use it from a shell"), re.S)
    commands = [line.split("  #")[0].strip() for line in block.splitlines()]
    commands = [c for c in commands if c and not c.startswith("#")]
    assert len(commands) >= 6
    for command in commands:
        words = shlex.split(command)
        if words[0] == ".":  # `. .venv/bin/activate`: the PATH below stands for it
            continue
        assert words[0] == "local-vector-search-mcp", command
        result = _run([*DEFAULT_SERVER, *words[1:]], cwd=tmp_path)
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr, command
        if "kb_search" in words and "--query" in words:
            assert json.loads(result.stdout)["results"], command
    assert os.listdir(tmp_path / "examples" / "demo")


def test_the_readme_copy_of_a_project_runs_as_written(tmp_path: Path) -> None:
    """The section on copying a project (decision 552): a project whose index lies outside it is
    copied, the README's `index copy` gives the copy its own file, and the copy searches at once
    without a reindex, while the original keeps its file."""
    original, shared = tmp_path / "original", tmp_path / "indexes" / "original.db"
    shutil.copytree(ROOT / "examples" / "demo", original)
    lexical = ["--embedding-provider", "none"]
    first = _run([str(PROGRAM), "--storage-path", str(shared), *lexical, "--reindex"], cwd=original)
    assert first.returncode == 0, first.stderr
    copy = tmp_path / "the-copy"
    shutil.copytree(original, copy)
    (block,) = re.findall(r"```sh\n(.*?)```", _readme_section("Move or copy a project"), re.S)
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    assert lines[0] == "cd /path/to/the-copy"
    for line in lines[1:]:
        words = shlex.split(line.replace("/indexes/original.db", str(shared)))
        assert words[0] == "local-vector-search-mcp", line
        done = _run([str(PROGRAM), *words[1:]], cwd=copy)
        assert done.returncode == 0, (line, done.stderr)
        assert json.loads(done.stdout)["ok"] is True
    again = _run([str(PROGRAM), *lexical, "--reindex"], cwd=copy)
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert (result["indexedFiles"], result["skippedFiles"]) == (0, len(list(copy.rglob("*.md"))))
    status = _run([str(PROGRAM), "--storage-path", str(shared), *lexical, "--status"], cwd=original)
    assert json.loads(status.stdout)["compatibility"]["isCompatible"] is True


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_runs_again_on_another_folder_with_spaces_and_quotes(tmp_path: Path) -> None:
    """The README's second demo line after its first: the demo kept one index file for every
    DEMO_ROOT, so the second run was refused as another knowledge base's (decision 535), and an
    unquoted DEMO_ROOT with a space split into two arguments (decision 983). Run in a scratch folder
    with the Makefile of the clone (`-o setup`: the venv is this one, nothing is written into it)."""
    shutil.copytree(ROOT / "examples" / "demo", tmp_path / "examples" / "demo")
    notes = tmp_path / "my notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nTomatoes want sun and deep watering.\n", "utf-8")

    def demo(*variables: str) -> list[dict[str, Any]]:
        make = ["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), "-o", "setup", f"PY={sys.executable}"]
        done = subprocess.run(
            [*make, "demo", 'DEMO_QUERY=tomatoes\' "sun"', *variables],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "CLAUDE_PROJECT_DIR": ""},
        )
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout[done.stdout.rindex("\n{") :])["results"])  # the search, after the reindex

    assert demo()  # examples/demo
    assert [hit["path"] for hit in demo(f"DEMO_ROOT={notes}")] == ["garden.md"]


def test_every_generated_path_the_reference_names_exists() -> None:
    # docs/reference pointed at `generated/schemas/`, a folder that never existed (decision 1004)
    named = set()
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        named |= set(re.findall(r"`(generated/[^`{}<>]+?)`", page.read_text("utf-8")))
    assert named, "the reference names no generated file: the check would pass vacuously"
    assert [path for path in sorted(named) if not (ROOT / path).exists()] == []
