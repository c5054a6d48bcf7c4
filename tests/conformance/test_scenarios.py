"""Run every YAML scenario against the server under test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .client import server_command
from .runner import load_scenarios, run_scenario

pytestmark = pytest.mark.conformance

CASES = load_scenarios()


@pytest.mark.parametrize("scenario", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_scenario(scenario: dict[str, Any], tmp_path: Path, request: pytest.FixtureRequest) -> None:
    command = server_command(request.config.getoption("--server"))
    anyio.run(run_scenario, command, scenario, tmp_path)
