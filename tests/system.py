"""Tests that need a system package (``tools/system-deps.sh`` installs them) skip with the reason
when it is missing, unless ``LOCAL_VECTOR_SEARCH_MCP_REQUIRE_SYSTEM=1`` (set by ``.ci/run``): then
they fail, so CI never passes by skipping them (the root conftest turns the mark into a failure)."""

from __future__ import annotations

import os

import pytest

REQUIRE = os.environ.get("LOCAL_VECTOR_SEARCH_MCP_REQUIRE_SYSTEM") == "1"


def needs(available: bool, reason: str) -> pytest.MarkDecorator:
    """A mark that skips (under CI: fails) a test whose system package is missing."""
    if available:
        return pytest.mark.system_missing.with_args(None)
    if REQUIRE:
        return pytest.mark.system_missing.with_args(reason)
    return pytest.mark.skip(reason=f"{reason} (sh tools/system-deps.sh installs it)")
