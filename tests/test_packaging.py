"""pyproject.toml lists every package (the generated/ mapping needs an explicit list)."""

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
    contract = {
        ".".join(p.parent.relative_to(ROOT / "generated").parts) for p in (ROOT / "generated").rglob("__init__.py")
    }
    assert contract == {"lvsm_contract"}
    # data folders inside the packages (no __init__.py) are listed too, or setuptools warns at every install
    data = {
        ".".join(p.relative_to(ROOT / "generated").parts)
        for p in (ROOT / "generated" / "lvsm_contract").iterdir()
        if p.is_dir() and p.name != "__pycache__" and not (p / "__init__.py").exists()
    }
    assert data == {"lvsm_contract.schemas"}
    assert found | contract | data == listed


def test_the_contract_package_is_mapped_and_type_checked() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["setuptools"]["package-dir"]["lvsm_contract"] == "generated/lvsm_contract"
    mypy = config["tool"]["mypy"]
    assert "generated" in mypy["mypy_path"] and "lvsm_contract" in mypy["packages"]
    assert not any("lvsm_contract" in str(o.get("module")) for o in mypy.get("overrides", []))
    for path in (ROOT / "generated").rglob("*.py"):
        assert "mypy: ignore-errors" not in path.read_text(encoding="utf-8"), path
