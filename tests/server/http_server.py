"""Start this project's server with ``--transport http`` in a temporary project (a real process)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from conformance.client import DEFAULT_SERVER, start_http_server, stop_http_server

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@dataclass
class Running:
    url: str
    root: Path
    log: Path
    exit_code: int | None = None

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])


def project(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    for rel, text in (files or {"a.md": "# A\n\nAlpha text about borrowing.\n"}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _source_path() -> dict[str, str]:
    """The tests' own ``PYTHONPATH``, made absolute (the server runs in the project folder): a
    checkout tested with ``PYTHONPATH=src:generated`` starts its own code, not the installed copy."""
    value = os.environ.get("PYTHONPATH")
    if not value:
        return {}
    return {"PYTHONPATH": os.pathsep.join(str(Path(p).resolve()) for p in value.split(os.pathsep) if p)}


@contextmanager
def http_server(
    tmp_path: Path,
    config: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    root: Path | None = None,
    args: list[str] | None = None,
) -> Iterator[Running]:
    root = root or project(tmp_path)
    extra = list(args or [])
    if config:
        path = tmp_path / "server.config.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        extra += ["--config", str(path)]
    full_env = {"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1", **_source_path()}
    full_env.update(env or {})
    log = tmp_path / f"server-{len(list(tmp_path.glob('server-*.log')))}.log"
    with open(log, "w") as errlog:
        proc, url = start_http_server([*DEFAULT_SERVER, "--project-root", str(root), *extra], root, full_env, errlog)
        running = Running(url, root, log)
        try:
            yield running
        finally:
            running.exit_code = stop_http_server(proc)
