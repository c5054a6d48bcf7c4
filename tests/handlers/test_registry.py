"""Every spec'd tool has a handler bound with the spec's request and result types."""

from __future__ import annotations

import typing
from collections.abc import Callable

import lvsm_contract.models as models
import pytest
from lvsm_contract.content import ContentResult
from lvsm_contract.registry import BY_NAME, TOOLS

from local_vector_search_mcp.dispatch import available_tools, missing_handlers
from local_vector_search_mcp.handlers import BINDINGS
from local_vector_search_mcp.workspace import Workspace

# Tools spec'd but not built yet: unlisted by the server. Remove a tool here when its handler lands.
NOT_YET_BUILT: set[str] = set()


def test_every_spec_tool_has_a_handler_unless_not_yet_built() -> None:
    assert BY_NAME.keys() >= NOT_YET_BUILT, "NOT_YET_BUILT names a tool that is not in spec/"
    assert set(missing_handlers()) == NOT_YET_BUILT
    assert set(BINDINGS) == BY_NAME.keys() - NOT_YET_BUILT
    assert [t.name for t in available_tools()] == [t.name for t in TOOLS if t.name not in NOT_YET_BUILT]


def _signature_problem(name: str, handler: Callable[..., object]) -> str | None:
    """Why ``handler`` does not have the request/result types spec/ gives tool ``name``, if it does not."""
    spec = BY_NAME[name]
    hints = typing.get_type_hints(handler)
    result = hints.pop("return", None)
    expected_result = ContentResult if spec.result_model is None else getattr(models, spec.result_model)
    if result is not expected_result:
        return f"{name} returns {result}, spec says {expected_result}"
    expected = [Workspace] + ([] if spec.request_model is None else [getattr(models, spec.request_model)])
    if list(hints.values()) != expected:
        return f"{name} takes {list(hints.values())}, spec says {expected}"
    return None


@pytest.mark.parametrize("name", sorted(BINDINGS))
def test_handler_signature_is_the_spec_models(name: str) -> None:
    assert _signature_problem(name, BINDINGS[name]()) is None


def test_a_mismatched_binding_is_caught() -> None:
    """The check above is not true by construction: another tool's handler, or none of the spec's types, fail it."""
    from local_vector_search_mcp.handlers.reading import kb_outline

    assert _signature_problem("kb_read", kb_outline) is not None

    def untyped(ws: Workspace, request: dict[str, object]) -> dict[str, object]:
        return request

    assert _signature_problem("kb_read", untyped) is not None


def test_start_up_imports_no_handler_and_no_models() -> None:
    """Building the server lists the tools without importing a handler module or the models."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from local_vector_search_mcp.server.app import build_server\n"
        "from local_vector_search_mcp.dispatch import available_tools\n"
        "assert available_tools()\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "lvsm_contract.models" not in loaded
    assert "lvsm_contract.handlers" not in loaded
    assert not [m for m in loaded if m.startswith("local_vector_search_mcp.handlers.")]


@pytest.mark.parametrize(
    ("name", "destructive", "idempotent"),
    [
        # decisions 47-48 and 368: a repeat that adds again is not idempotent (kb_patch's inserts,
        # kb_save_image's name-2, upsert_vector without `id`); replacing or removing what a caller
        # stored is destructive
        ("upsert_vector", True, False),
        ("update_chunk", True, True),
        ("delete_chunk", True, True),
        ("index_note", False, True),
        ("kb_patch", True, False),
        ("kb_save_image", False, False),
        ("kb_delete", True, True),
    ],
)
def test_write_annotations_follow_the_rules(name: str, destructive: bool, idempotent: bool) -> None:
    hints = BY_NAME[name].annotations
    assert (hints["destructiveHint"], hints["idempotentHint"]) == (destructive, idempotent)
