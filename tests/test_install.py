"""Installed like MCP servers are installed: from a wheel and from an sdist, into a fresh venv.

``uvx --from <checkout or git URL>`` and ``pipx install <...>`` build a wheel (pipx, uv) or go
through the sdist; both must carry the generated contract package and its JSON Schemas. Each
artefact is built from a copy of the tracked files (what a git URL would give), installed with
``--no-deps`` into a venv of its own, and the dependencies are borrowed from this venv through
a ``.pth`` line appended after the fresh site-packages (so the package under test is the one
imported, and nothing is downloaded but the build backend).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{cmd}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _tracked_copy(dst: Path) -> Path:
    if not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know the tracked files")
    files = _run(["git", "ls-files", "-z"], cwd=ROOT).split("\0")
    for rel in filter(None, files):
        source = ROOT / rel
        if source.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dst / rel)
    return dst


def _wheel(project: Path, out: Path) -> Path:
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(project)])
    (wheel,) = out.glob("local_vector_search_mcp-*.whl")
    return wheel


def _sdist(project: Path, out: Path) -> Path:
    # The PEP 517 hook that `python -m build --sdist` calls, run in the project like pip would.
    code = "import sys, setuptools.build_meta as b; print(b.build_sdist(sys.argv[1]))"
    name = _run([sys.executable, "-c", code, str(out)], cwd=project).strip().splitlines()[-1]
    return out / name


def _fresh_venv(where: Path, artefact: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(artefact)])
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    # Dependencies come from this venv, after the fresh site-packages: the package under test wins.
    (purelib / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return where / "bin"


def _check_installed(bin_dir: Path, tmp: Path) -> None:
    python = str(bin_dir / "python")
    where = _run([python, "-c", "import lvsm_contract, local_vector_search_mcp as m; print(lvsm_contract.__file__)"])
    assert Path(where.strip()).is_relative_to(bin_dir.parent), where
    root = tmp / "kb"
    root.mkdir(exist_ok=True)
    (root / "a.md").write_text("# A\n\nText.\n")
    status = json.loads(_run([str(bin_dir / "local-vector-search-mcp"), "--root", str(root), "--status"], cwd=tmp))
    assert status["indexExists"] is False and status["project"]["root"]
    messages = "".join(json.dumps(m) + "\n" for m in (INIT, INITIALIZED, LIST))
    env = {**os.environ, "PYTHONPATH": ""}
    server = subprocess.run(
        [str(bin_dir / "local-vector-search-mcp"), "--root", str(root)],
        input=messages,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp,
        env=env,
    )
    replies = {r.get("id"): r for r in map(json.loads, server.stdout.splitlines())}
    assert replies[1]["result"]["serverInfo"]["name"], server.stderr
    tools = replies[2]["result"]["tools"]
    names = {t["name"] for t in tools}
    assert {"kb_status", "kb_search", "kb_read", "kb_patch"} <= names, server.stderr
    assert all(t["inputSchema"]["type"] == "object" for t in tools)
    assert any(t.get("outputSchema") for t in tools)


@pytest.mark.slow
def test_wheel_and_sdist_install_and_serve(tmp_path: Path) -> None:
    project = _tracked_copy(tmp_path / "checkout")
    dist = tmp_path / "dist"
    dist.mkdir()
    sdist = _sdist(project, dist)
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert any(m.endswith("generated/lvsm_contract/schemas/kb_read.input.json") for m in members)

    wheel = _wheel(project, dist)
    _check_installed(_fresh_venv(tmp_path / "from-wheel", wheel), tmp_path)

    # pipx and uv install an sdist by building a wheel from it: do the same, from the unpacked sdist only.
    unpacked = tmp_path / "sdist"
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (sdist_root,) = unpacked.iterdir()
    from_sdist = _wheel(sdist_root, tmp_path / "dist-from-sdist")
    _check_installed(_fresh_venv(tmp_path / "from-sdist", from_sdist), tmp_path)
