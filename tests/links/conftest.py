"""The synthetic vault, indexed, read-only (test_move_links overrides it with writes allowed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kb_fakes import KbClient, client

from .vault import write_vault


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KbClient]:
    c = client(write_vault(tmp_path / "vault"))
    c.reindex()
    yield c
    c.shutdown()
