from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "index"))

from kb_fakes import make_kb


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    return make_kb(tmp_path)
