"""Helpers shared by the benchmarks: the same real-workspace builder the tests use
(``tests/kb_fakes.py``), so every benchmark measures the shipped configuration
through ``config.load_settings``, with only the overrides it names."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from kb_fakes import KbClient, make_workspace

__all__ = ["KbClient", "bench_service"]


def bench_service(root: Path | str, storage: Path | str, provider: str = "none", **overrides: Any) -> KbClient:
    """A workspace over ``root`` with its index at ``storage``; ``overrides`` as in ``make_workspace``."""
    return KbClient(make_workspace(Path(root), provider, storage=Path(storage), **overrides))
