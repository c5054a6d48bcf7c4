"""Fixtures shared by the index tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from churn import Churn, make_corpus

from local_vector_search_mcp.index.sqlite import SqliteStore


@pytest.fixture
def churn(tmp_path: Path) -> Iterator[Churn]:
    harness = Churn(make_corpus(tmp_path / "kb"))
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteStore]:
    """An empty lexical SQLite index (no vectors), closed after the test."""
    s = SqliteStore(tmp_path / "index.db")
    s.ensure_schema(None, "float32")
    try:
        yield s
    finally:
        s.close()
