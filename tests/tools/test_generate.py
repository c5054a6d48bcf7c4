"""The generator: committed output is current, and drift is caught."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def _generator() -> Any:
    """tools/generate.py as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location("lvsm_generate", ROOT / "tools" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _mutants(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(where, the result with one thing changed there): a member dropped, a value of each other JSON
    type, an unknown member added, an array emptied or given a foreign item."""
    replacements: list[Any] = [None, True, -1, 7, 0.5, "", "x" * 2000, [], {}, ["x"], {"zz": 1}]
    for other in replacements:
        if other != value or type(other) is not type(value):
            yield path, other
    if isinstance(value, dict):
        yield path, {**value, "unexpectedMember": 1}
        for key, item in value.items():
            yield path, {k: v for k, v in value.items() if k != key}
            for where, changed in _mutants(item, (*path, key)):
                yield where, changed
    elif isinstance(value, list) and value:
        yield path, [*value, "foreign"]
        for where, changed in _mutants(value[0], (*path, 0)):
            yield where, changed


def _put(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = list(document) if isinstance(document, list) else dict(document)
    copy[path[0]] = _put(document[path[0]], path[1:], value)
    return copy


def test_published_output_schemas_inline_their_definitions_and_give_the_same_verdicts(tmp_path: Path) -> None:
    """Decision 970: an output schema is published with its non-recursive definitions inlined (the
    MCP Python SDK's client validates every result against it, and resolving a `$ref` at each entry
    was half its time). Real results of every big tool, and every one-change mutant of them (a
    member dropped or added, a value of another type, deep in an entry too), get the same verdict and
    the same errors from the named form (`$defs`/`$ref`, as the generator builds it) and from the
    published one."""
    from jsonschema import Draft202012Validator
    from kb_fakes import KbClient
    from lvsm_contract.registry import BY_NAME

    from local_vector_search_mcp.config import CliOptions, load_settings
    from local_vector_search_mcp.dispatch import invoke
    from local_vector_search_mcp.workspace import Workspace

    generate = _generator()
    spec = generate.load_spec()
    named = {tool["name"]: generate.tool_schemas(tool, spec["defs"])[1] for tool in spec["tools"]}
    for name, schema in named.items():
        published = BY_NAME[name].output_schema()
        if schema is None:
            assert published is None, name
            continue
        assert published == generate.inline_defs(schema), f"{name}: run make generate"
        refs = set(generate.refs_in(published))
        assert refs == set(published.get("$defs", {})) == generate.recursive_defs(schema.get("$defs", {})), name
    assert set(BY_NAME["kb_outline"].output_schema()["$defs"]) == {"OutlineHeading"}  # kept: it nests itself

    root = tmp_path / "kb"
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "a.md").write_text(
        "---\ntitle: A\n---\n# Alpha\n\nSee [b](../b.md#beta-two) and [gone](missing.md).\n\n## Alpha two\n\n"
        "| k | v |\n|---|---|\n| quokka | 1 |\n\n### Deep\n\n- item quokka\n\n![pic](pic.png)\n",
        "utf-8",
    )
    (root / "b.md").write_text("# Beta\n\n## Beta two\n\nA quokka, back to [a](guide/a.md).\n", "utf-8")
    (root / "guide" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    settings = load_settings(
        CliOptions(root=str(root), storage_path=str(tmp_path / "index.db"), embedding_provider="none"),
        cwd=tmp_path,
        environ={},
    )
    ws = Workspace(settings)
    try:
        KbClient(ws).reindex()
        calls: dict[str, dict[str, Any]] = {
            "kb_list_files": {},
            "kb_search": {"query": "quokka", "mode": "lexical"},
            "kb_read": {"path": "guide/a.md"},
            "kb_outline": {"path": "guide/a.md"},
            "kb_links": {},
            "kb_list_images": {},
            "kb_status": {},
        }
        results = {
            name: invoke(ws, name, {"request": arguments} if BY_NAME[name].envelope == "request" else arguments)
            for name, arguments in calls.items()
        }
    finally:
        ws.close()

    def errors(validator: Any, instance: Any) -> list[tuple[str, str]]:
        return sorted((json.dumps(list(e.absolute_path)), e.validator) for e in validator.iter_errors(instance))

    checked = invalid = 0
    for name, result in results.items():
        before = Draft202012Validator(named[name])
        after = Draft202012Validator(BY_NAME[name].output_schema())
        assert errors(before, result) == errors(after, result) == [], name
        for where, changed in _mutants(result):
            mutant = _put(result, where, changed)
            found = errors(before, mutant)
            assert found == errors(after, mutant), (name, where, changed)
            checked += 1
            invalid += bool(found)
    assert checked > 1000 and invalid > checked // 2  # the mutants reach deep, and most are refused


def _setting_keys(model: type[Any], prefix: str = "") -> set[str]:
    """Every dotted key a configuration file may set, read off the configuration model the
    loader validates with: a field whose type is a section of its own is walked into."""
    from pydantic import BaseModel

    keys: set[str] = set()
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            keys |= _setting_keys(kind, key + ".")
        else:
            keys.add(key)
    return keys


def test_the_configuration_reference_documents_every_key() -> None:
    """`export.pdf.cjkFont` was a row `export.pdf` typed `{}` with no description (the generator
    read one level of each section), and ten keys had an empty description (decisions 1076-1077)."""
    from lvsm_contract.config import Config

    generator = _generator()
    schema = generator.load_spec()["config"]
    rows = {
        f"{section['key']}.{row['name']}": row["description"]
        for section in generator.config_sections(schema)
        for row in section["rows"]
    }
    expected = _setting_keys(Config)
    assert "export.pdf.cjkFont" in expected and "chunking.maxElements" in expected
    assert set(rows) == expected
    assert [key for key, description in rows.items() if not description.strip()] == []
