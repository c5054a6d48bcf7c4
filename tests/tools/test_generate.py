"""The generator: committed output is current, and drift is caught."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _copy_project(tmp_path: Path) -> Path:
    dst = tmp_path / "proj"
    for folder in ("spec", "tools", "generated", "docs/reference"):
        shutil.copytree(ROOT / folder, dst / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _check(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(project / "tools" / "generate.py"), "--check"], capture_output=True, text=True
    )


def test_committed_output_is_current() -> None:
    result = _check(ROOT)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_editing_a_description_without_regenerating_fails(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    spec = project / "spec" / "tools" / "kb_status.yaml"
    spec.write_text(spec.read_text().replace("Report the server's", "Reports the server's"))
    result = _check(project)
    assert result.returncode == 1
    assert "differs: generated/lvsm_contract/registry.py" in result.stderr
    assert "differs: docs/reference/tools.md" in result.stderr


@pytest.mark.slow
def test_hand_edited_output_fails(tmp_path: Path) -> None:
    project = _copy_project(tmp_path)
    (project / "generated" / "lvsm_contract" / "registry.py").write_text("# edited\n", encoding="utf-8")
    (project / "generated" / "lvsm_contract" / "stray.py").write_text("", encoding="utf-8")
    result = _check(project)
    assert result.returncode == 1
    assert "differs: generated/lvsm_contract/registry.py" in result.stderr
    assert "generated/lvsm_contract/stray.py" in result.stderr


def test_every_generated_file_says_so() -> None:
    for path in list((ROOT / "generated").rglob("*.py")) + list((ROOT / "docs" / "reference").glob("*.md")):
        head = path.read_text(encoding="utf-8")[:300]
        assert "generated from spec/" in head, path
    for path in (ROOT / "generated" / "lvsm_contract" / "schemas").glob("*.json"):
        assert '"$comment": "generated from spec/' in path.read_text(encoding="utf-8")[:300], path


def test_every_tool_is_specified_and_documented() -> None:
    from lvsm_contract.registry import TOOLS

    names = [t.name for t in TOOLS]
    # the nineteen kb_* tools of the contract, and the eight of the opt-in `chunks` tool set (issue 16)
    assert len([t for t in TOOLS if t.toolset == "kb"]) == 19
    assert [t.name for t in TOOLS if t.toolset == "chunks"] == [
        "index_note",
        "upsert_vector",
        "search_vectors",
        "search_knowledge",
        "get_chunk",
        "list_chunks",
        "update_chunk",
        "delete_chunk",
    ]
    doc = (ROOT / "docs" / "reference" / "tools.md").read_text(encoding="utf-8")
    for name in names:
        assert f"## {name}" in doc


def test_an_unquoted_text_split_by_a_comma_is_refused(tmp_path: Path) -> None:
    """``{type: string, description: a, b.}`` is YAML for a description ``a`` and a key ``b.``
    with a null value, which reached three published output schemas as a keyword."""
    project = _copy_project(tmp_path)
    spec = project / "spec" / "defs.yaml"
    text = spec.read_text()
    quoted = 'description: "Root-relative path of the document, or the caller\'s source path for an external chunk."'
    assert quoted in text
    spec.write_text(text.replace(quoted, quoted.replace('"', "")))
    result = _check(project)
    assert result.returncode != 0
    assert '"or the caller\'s source path for an external chunk." became a key' in result.stderr


def test_no_published_schema_holds_a_null_keyword() -> None:
    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                assert value is not None or key in ("default", "const"), f"{where}: {key!r} is null"
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{where}[{i}]")

    import json

    for path in sorted((ROOT / "generated" / "lvsm_contract" / "schemas").glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")), path.name)
