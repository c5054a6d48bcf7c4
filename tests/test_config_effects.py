"""Configuration keys that had no test of their effect: each test fails if its key were ignored.

Every other key of spec/config.yaml is exercised by the tests of its own area (H96 went through
them one by one); these four were read by the code but nothing checked that they were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from embedding_endpoint import endpoint_server

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.embeddings.factory import make_embedder


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1", **(env or {})},
        timeout=120,
    )


def _project(tmp_path: Path, name: str, config: str) -> tuple[Path, Path]:
    root = tmp_path / name
    (root / "docs").mkdir(parents=True)
    for i in range(5):
        (root / "docs" / f"n{i}.md").write_text(f"# Owls {i}\n\n## Barn\n\nOwls hoot in barn {i}.\n")
    path = tmp_path / f"{name}.yml"
    path.write_text(config, encoding="utf-8")
    return root, path


def test_search_max_results_is_the_default_top_k(tmp_path: Path) -> None:
    counts = []
    for name, config in (("default", ""), ("two", "search: {maxResults: 2}\n")):
        root, path = _project(tmp_path, name, config)
        lexical = ("--config", str(path), "--embedding-provider", "none")
        assert run(*lexical, "--reindex", cwd=root).returncode == 0
        found = run(*lexical, "call", "kb_search", "--query", "owls hoot", "--mode", "lexical", cwd=root)
        counts.append(len(json.loads(found.stdout)["results"]))
    assert counts == [5, 2]


def test_include_heading_context_decides_what_the_model_reads(tmp_path: Path) -> None:
    read: dict[str, list[str]] = {}
    for flag in ("true", "false"):
        with endpoint_server(dims=16) as endpoint:
            config = (
                f"embedding: {{provider: openai-compatible, endpoint: '{endpoint.url}', model: m}}\n"
                f"chunking: {{includeHeadingContext: {flag}}}\n"
            )
            root, path = _project(tmp_path, flag, config)
            done = run("--config", str(path), "--reindex", cwd=root)
            assert done.returncode == 0, done.stderr
            read[flag] = [text for inputs in endpoint.requests for text in inputs if "hoot" in text]
    assert read["true"] and all("Heading: Owls" in text and "Barn" in text for text in read["true"]), read
    assert read["false"] and not any("Heading:" in text for text in read["false"]), read


def test_notion_token_env_names_the_variable_read(tmp_path: Path) -> None:
    root, path = _project(
        tmp_path, "notion", "notion: {tokenEnv: KB_NOTION_KEY, parentPageId: 11111111-2222-3333-4444-555555555555}\n"
    )
    pushed = run("--config", str(path), "notion", "push", cwd=root, env={"NOTION_TOKEN": "secret_default_name"})
    assert pushed.returncode == 1
    assert "environment variable KB_NOTION_KEY" in pushed.stderr, pushed.stderr


def test_max_input_tokens_cuts_what_the_local_model_reads(tmp_path: Path) -> None:
    """Two passages that differ only after their first 60-odd tokens embed alike under a 16-token
    cap and apart under the default 128."""
    same_start = "Owls hoot in the old barn at night while the farm sleeps and the mice keep still. " * 3
    passages = [same_start + "Bats fly over the river.", same_start + "Compilers optimise tail calls."]
    cosines = []
    for cap in (16, 128):
        (tmp_path / "c.yml").write_text(f"embedding: {{provider: local, maxInputTokens: {cap}}}\n")
        settings = load_settings(CliOptions(config=str(tmp_path / "c.yml"), project_root=str(tmp_path)), environ={})
        embedder = make_embedder(settings.config.embedding)
        assert embedder is not None
        vectors = np.asarray(embedder.embed_passages(passages), dtype=np.float32)
        cosines.append(float(vectors[0] @ vectors[1]))
    assert cosines[0] > 0.999 > cosines[1] + 0.01, cosines
