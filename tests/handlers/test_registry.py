"""Which spec'd tools have handlers: only those are listed by the server."""

from __future__ import annotations

import importlib

from local_vector_search_mcp.dispatch import available_tools, missing_handlers
from local_vector_search_mcp.handlers import HANDLERS


def test_every_handler_is_importable_and_in_the_spec() -> None:
    from lvsm_contract.registry import BY_NAME

    for name, target in HANDLERS.items():
        assert name in BY_NAME, f"{name} has a handler but is not in spec/"
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(f"local_vector_search_mcp.handlers.{module}"), function))


def test_report_missing_handlers(capsys) -> None:  # type: ignore[no-untyped-def]
    missing = missing_handlers()
    listed = [t.name for t in available_tools()]
    assert not set(missing) & set(listed)
    with capsys.disabled():
        print(f"\n[tools] listed ({len(listed)}): {', '.join(listed)}")
        print(f"[tools] spec'd without a handler ({len(missing)}): {', '.join(missing) or 'none'}")
