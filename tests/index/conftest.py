"""Fixtures shared by the index tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from churn import Churn, make_corpus


@pytest.fixture
def churn(tmp_path: Path) -> Iterator[Churn]:
    harness = Churn(make_corpus(tmp_path / "kb"))
    try:
        yield harness
    finally:
        harness.close()
