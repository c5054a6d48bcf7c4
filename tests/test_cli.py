"""The command line: exit codes, messages and `call <tool>`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
    )


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    return tmp_path


def test_call_list_files(kb: Path) -> None:
    result = run("call", "kb_list_files", "--path-prefix", "docs", cwd=kb)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["files"][0]["relativePath"] == "docs/a.md"


def test_call_with_json_and_stdin(kb: Path) -> None:
    result = run("call", "kb_list_files", "--json", "-", cwd=kb, stdin='{"includeGlob": "**/*.txt"}')
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"files": [], "skippedFolders": 0, "skipped": []}


def test_call_error_is_json_on_stderr_exit_1(kb: Path) -> None:
    result = run("call", "kb_list_files", "--path-prefix", "../x", cwd=kb)
    assert result.returncode == 1
    assert result.stdout == ""
    assert json.loads(result.stderr)["code"] == "INVALID_PATH"


def test_status_flag(kb: Path) -> None:
    result = run("--status", "--root", "docs", cwd=kb)
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["project"]["root"] == str((kb / "docs").resolve())
    assert status["indexExists"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--root"], "expected one argument"),
        (["--search-mode", "fuzzy", "--status"], "search.defaultMode"),
        (["--embedding-provider", "ollama", "--status"], "embedding.provider"),
        (["--root", "missing", "--status"], "does not exist"),
        (["--config", "nope.yml", "--status"], "was not found"),
        (["--include", "/abs", "--status"], "leading slash"),
        (["--force"], "--force is only valid together with --reindex"),
        (["serve", "extra"], "Unexpected argument: extra"),
        (["call", "kb_nope"], "invalid choice"),
        (["--transport", "pigeon"], "server.transport"),
        (["--port", "8082"], "--host and --port only apply with --transport http"),
        (["--transport", "http", "--port", "99999"], "invalid port"),
        (["--transport", "http", "--host", "0.0.0.0"], "Refusing to listen on 0.0.0.0"),
    ],
)
def test_invalid_invocations_exit_1_with_a_message(kb: Path, args: list[str], message: str) -> None:
    result = run(*args, cwd=kb)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert message in result.stderr
    assert result.stdout == ""


def test_stdin_eof_exits_0_and_prints_nothing(kb: Path) -> None:
    result = run(cwd=kb, stdin="")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def test_closed_stdout_is_not_an_error(kb: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "local_vector_search_mcp", "call", "kb_list_files"],
        cwd=kb,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head -0`
    err = proc.stderr.read().decode()
    assert proc.wait() == 0
    assert "Traceback" not in err
