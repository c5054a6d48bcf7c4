"""Run every YAML scenario against the server under test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .client import engine_storage, server_command
from .runner import load_scenarios, run_scenario

pytestmark = pytest.mark.conformance

CASES = load_scenarios()


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
@pytest.mark.parametrize("scenario", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_scenario(scenario: dict[str, Any], engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Every scenario on both storage engines: with ``storage.backend: postgresql`` every tool
    behaves exactly as on SQLite (the URL reaches the server through the environment, as a
    deployment keeping its password out of YAML would pass it). A scenario about one engine's
    storage (an SQLite file that cannot be opened) names it in ``engines``."""
    if engine not in scenario.get("engines", ["sqlite", "postgresql"]):
        pytest.skip(f"the scenario is about the {' and '.join(scenario['engines'])} engine only")
    command = server_command(request.config.getoption("--server"))
    storage, env = engine_storage(engine, request)
    anyio.run(run_scenario, command, scenario, tmp_path, storage, env)
