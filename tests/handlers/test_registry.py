"""Every spec'd tool has a handler bound with the spec's request and result types."""

from __future__ import annotations

import typing

import lvsm_contract.models as models
import pytest
from lvsm_contract.content import ContentResult
from lvsm_contract.registry import BY_NAME, TOOLS

from local_vector_search_mcp.dispatch import available_tools, missing_handlers
from local_vector_search_mcp.handlers import BINDINGS
from local_vector_search_mcp.workspace import Workspace

# Tools spec'd but not built yet: unlisted by the server. Remove a tool here when its handler lands.
NOT_YET_BUILT = {
    "kb_links",
}


def test_every_spec_tool_has_a_handler_unless_not_yet_built() -> None:
    assert BY_NAME.keys() >= NOT_YET_BUILT, "NOT_YET_BUILT names a tool that is not in spec/"
    assert set(missing_handlers()) == NOT_YET_BUILT
    assert set(BINDINGS) == BY_NAME.keys() - NOT_YET_BUILT
    assert [t.name for t in available_tools()] == [t.name for t in TOOLS if t.name not in NOT_YET_BUILT]


@pytest.mark.parametrize("name", sorted(BINDINGS))
def test_handler_signature_is_the_spec_models(name: str) -> None:
    spec = BY_NAME[name]
    handler = BINDINGS[name]()
    hints = typing.get_type_hints(handler)
    result = hints.pop("return")
    expected_result = ContentResult if spec.result_model is None else getattr(models, spec.result_model)
    assert result is expected_result, f"{name} returns {result}, spec says {expected_result}"
    params = list(hints.values())
    assert params[0] is Workspace
    if spec.request_model is None:
        assert params == [Workspace], f"{name} takes no arguments in spec/"
    else:
        assert params[1:] == [getattr(models, spec.request_model)], f"{name} must take {spec.request_model}"


def test_a_mismatched_binding_is_caught() -> None:
    """The check above is not true by construction: a handler of another tool fails it."""
    from local_vector_search_mcp.handlers.reading import kb_outline

    hints = typing.get_type_hints(kb_outline)
    assert hints["return"] is not getattr(models, BY_NAME["kb_read"].result_model or "")


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
