"""The package layers stay as the README draws them: every import in ``src/`` is
checked against one allowed graph (an AST walk, so lazy imports inside
functions count too). A new edge is a design decision: add it here on purpose."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "local_vector_search_mcp"
PACKAGE = "local_vector_search_mcp"

# unit -> the units it may import (a unit is a top-level module or package of src/)
ALLOWED: dict[str, set[str]] = {
    "__init__": set(),
    "errors": set(),
    "progress": set(),  # a call's progress and cancellation, read by the long tools (decision 500)
    "lazy_imports": set(),  # the one lock of first-use imports (decision 543)
    "retry_after": set(),  # one reading of the Retry-After header for the embedding and Notion clients
    "globs": {"errors"},
    "hostnames": set(),  # Host and origin spellings, read alike by the configuration check and the guard (1031)
    "paths": {"errors"},
    "pinning": {"errors", "paths"},  # a write's folders held open, links refused as the guard refuses them (674)
    "sourcefile": {"errors"},
    "markdown": {"errors"},
    "config": {"_generated", "errors", "globs", "hostnames"},
    "embeddings": {"errors", "retry_after"},
    "index": {"config", "embeddings", "errors", "globs", "markdown", "paths", "sourcefile"},  # names shown (707)
    "search": {"embeddings", "errors", "globs", "index", "markdown"},  # the visible text of HTML (1025)
    "workspace": {"config", "embeddings", "errors", "index", "lazy_imports", "paths", "search"},
    "writer": {"errors", "paths", "pinning", "progress", "sourcefile", "workspace"},  # cancelled calls (706)
    # sourcefile: the racy-clean window (401)
    "assets": {"errors", "paths", "pinning", "progress", "sourcefile", "workspace", "writer"},
    # documents read as the indexer reads them; svglib and lxml imported under the import lock (1155)
    "export": {"errors", "lazy_imports", "markdown", "paths", "progress", "sourcefile"},
    "notion": {"config", "errors", "globs", "markdown", "paths", "retry_after", "sourcefile"},  # front matter (830)
    "handlers": {
        "_generated",
        "assets",
        "export",
        "config",
        "embeddings",
        "errors",
        "globs",
        "index",
        "markdown",
        "paths",
        "progress",
        "search",
        "sourcefile",
        "workspace",
        "writer",
    },
    # dispatch names the documents close to a missing one (paths.close_paths, 1099)
    "dispatch": {"_generated", "config", "errors", "handlers", "lazy_imports", "paths", "workspace"},
    "server": {"__init__", "config", "dispatch", "errors", "hostnames", "progress", "workspace"},
    "cli": {
        "__init__",
        "_generated",
        "config",
        "dispatch",
        "errors",
        "handlers",
        "index",  # `index copy` (index/copy.py), like `notion push`
        "notion",
        "server",
        "workspace",
        "writer",
    },
    "__main__": {"cli"},
}


def _unit_of(rel: Path) -> str:
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[tuple[list[str], list[str]]]:
    """(module path, imported names) of every import of the package in ``path``."""
    rel = path.relative_to(SRC)
    here = [PACKAGE, *rel.parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                module = here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])
            else:
                module = (node.module or "").split(".")
            found.append((module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((a.name.split("."), []) for a in node.names)
    return [(m, names) for m, names in found if m and m[0] == PACKAGE]


def _target(module: list[str], name: str) -> list[str]:
    """``from pkg import x``: x is a submodule when such a file exists, else a name in pkg."""
    candidate = SRC.joinpath(*module[1:], name)
    return [*module, name] if candidate.with_suffix(".py").exists() or candidate.is_dir() else module


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in SRC.rglob("*.py"):
        me = _unit_of(path.relative_to(SRC))
        for module, names in _imports(path):
            for target in [_target(module, n) for n in names] or [module]:
                unit = target[1] if len(target) > 1 else "__init__"
                if unit != me:
                    graph[me].add(unit)
    return graph


def test_every_import_follows_the_layers() -> None:
    graph = import_graph()
    assert set(graph) <= set(ALLOWED), f"units without a layer: {sorted(set(graph) - set(ALLOWED))}"
    wrong = {unit: sorted(targets - ALLOWED[unit]) for unit, targets in graph.items() if targets - ALLOWED[unit]}
    assert not wrong, f"imports against the layers (unit -> forbidden targets): {wrong}"


def test_the_allowed_graph_has_no_cycle() -> None:
    seen: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(unit: str, trail: list[str]) -> None:
        assert seen.get(unit) != 1, f"cycle: {' -> '.join([*trail, unit])}"
        if seen.get(unit) == 2:
            return
        seen[unit] = 1
        for nxt in sorted(ALLOWED.get(unit, set())):
            visit(nxt, [*trail, unit])
        seen[unit] = 2

    for unit in ALLOWED:
        visit(unit, [])


def test_the_embedding_port_does_not_import_its_providers() -> None:
    base = SRC / "embeddings" / "base.py"
    imported = {".".join(_target(m, n)) for m, names in _imports(base) for n in names}
    assert not {i for i in imported if i.endswith((".local", ".openai", ".factory"))}, imported


def test_the_walk_sees_lazy_imports() -> None:
    """Guard against a walk that finds nothing: imports inside functions count."""
    graph = import_graph()
    assert "index" in graph["workspace"]  # workspace imports index lazily, inside properties
    assert "search" in graph["handlers"] and "markdown" in graph["index"]
