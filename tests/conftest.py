"""Shared test configuration: Hypothesis profiles, the conformance --server option and the
``kb`` fixture. Helpers shared by several test folders live in importable modules next to
this file (``kb_fakes.py``, ``shared_data.py``): pytest puts this folder on ``sys.path``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("quick", max_examples=25, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    parser.addoption(
        "--server",
        action="store",
        default=None,
        help="command that starts the MCP server under test (default: this project's server)",
    )
    parser.addoption(
        "--transport",
        action="store",
        choices=["stdio", "http"],
        default=None,
        help="conformance: talk to the server over stdio (default) or start it with --transport http",
    )
    parser.addoption(
        "--engines",
        action="store",
        default=None,
        help=(
            "conformance: storage engines to run the engine-parametrised tests on, comma-separated "
            "(sqlite,postgresql); default both for this project's server, sqlite alone for a --server "
            "(PostgreSQL storage is this project's extension)"
        ),
    )


def pytest_configure(config):  # type: ignore[no-untyped-def]
    # The conformance client reads the transport from the environment, so helpers need no fixture.
    if config.getoption("--transport"):
        os.environ["CONFORMANCE_TRANSPORT"] = config.getoption("--transport")
    engines = (
        config.getoption("--engines")
        or os.environ.get("CONFORMANCE_ENGINES")
        or ("sqlite" if config.getoption("--server") else "sqlite,postgresql")
    )
    os.environ["CONFORMANCE_ENGINES"] = engines


def pytest_runtest_setup(item):  # type: ignore[no-untyped-def]
    # tests/system.py: a system package the test needs is missing and CI forbids skipping it.
    mark = item.get_closest_marker("system_missing")
    if mark is not None and mark.args and mark.args[0] is not None:
        pytest.fail(f"{mark.args[0]}; LOCAL_VECTOR_SEARCH_MCP_REQUIRE_SYSTEM=1 forbids skipping it", pytrace=False)


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    """A tiny English/Chinese/Japanese knowledge base (``kb_fakes.make_kb``)."""
    from kb_fakes import make_kb

    return make_kb(tmp_path)


from pg_server import engine_storage, pg_server  # noqa: E402,F401  (PostgreSQL for the tests that ask for it)
