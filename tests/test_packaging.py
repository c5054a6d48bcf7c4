"""pyproject.toml lists every subpackage (the generated/ mapping needs an explicit list)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    src = ROOT / "src" / "local_vector_search_mcp"
    found = {"local_vector_search_mcp"} | {
        "local_vector_search_mcp." + ".".join(p.parent.relative_to(src).parts)
        for p in src.rglob("__init__.py")
        if p.parent != src
    }
    assert found | {"local_vector_search_mcp._generated"} == listed
