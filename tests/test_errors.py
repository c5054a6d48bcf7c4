"""errors.py and spec/errors.yaml list the same codes; tools only use known codes."""

from __future__ import annotations

from pathlib import Path

import yaml
from lvsm_contract.registry import ERROR_CODES, TOOLS

from local_vector_search_mcp import errors

ROOT = Path(__file__).resolve().parents[1]


def _classes() -> list[type[errors.KbError]]:
    found: list[type[errors.KbError]] = []
    pending: list[type[errors.KbError]] = [errors.KbError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def test_errors_py_and_the_catalogue_list_the_same_codes() -> None:
    catalogue = [entry["code"] for entry in yaml.safe_load((ROOT / "spec" / "errors.yaml").read_text())["codes"]]
    classes = [cls for cls in _classes() if cls.__module__ == errors.__name__]
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes)), f"two classes share a code: {sorted(codes)}"
    assert set(codes) == set(catalogue)
    assert set(ERROR_CODES) == set(catalogue)


def test_every_tool_uses_known_codes() -> None:
    for tool in TOOLS:
        assert set(tool.errors) <= set(ERROR_CODES), tool.name
        raw = yaml.safe_load((ROOT / "spec" / "tools" / f"{tool.name}.yaml").read_text())
        assert {e["code"] for e in raw["errors"]} == set(tool.errors), tool.name
