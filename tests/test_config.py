from __future__ import annotations

from pathlib import Path

import pytest

from local_vector_search_mcp.config import CliOptions, ConfigError, load_settings


def test_defaults(tmp_path: Path) -> None:
    s = load_settings(CliOptions(), cwd=tmp_path, environ={})
    assert s.project_root == tmp_path.resolve()
    assert s.root == tmp_path.resolve()
    assert s.storage_path == tmp_path.resolve() / ".local-vector-search-mcp" / "index.db"
    assert s.config.embedding.provider == "local"
    assert s.config.search.default_mode == "hybrid"
    assert s.config.knowledge_base.allow_writes is False
    assert s.config.knowledge_base.include == ["**/*.md"]


def test_project_root_precedence(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    assert load_settings(CliOptions(), cwd=tmp_path, environ={"CLAUDE_PROJECT_DIR": str(a)}).project_root == a
    s = load_settings(CliOptions(project_root=str(b)), cwd=tmp_path, environ={"CLAUDE_PROJECT_DIR": str(a)})
    assert s.project_root == b
    with pytest.raises(ConfigError, match="project-root"):
        load_settings(CliOptions(project_root=str(tmp_path / "missing")), cwd=tmp_path, environ={})


def test_yaml_then_cli(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "other").mkdir()
    cfg = tmp_path / "c.yml"
    cfg.write_text(
        "knowledgeBase:\n  root: notes\n  allowWrites: true\n  exclude: ['drafts/**']\n"
        "search:\n  defaultMode: LEXICAL\nembedding:\n  provider: None\nstorage:\n  path: idx/i.db\n"
    )
    s = load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={})
    assert s.root == tmp_path / "notes"
    assert s.config.knowledge_base.allow_writes is True
    assert s.config.search.default_mode == "lexical"
    assert s.config.embedding.provider == "none"
    assert s.storage_path == tmp_path / "idx" / "i.db"
    s = load_settings(
        CliOptions(config=str(cfg), root="other", search_mode="semantic", exclude=["x/**"]), cwd=tmp_path, environ={}
    )
    assert s.root == tmp_path / "other"
    assert s.config.search.default_mode == "semantic"
    assert s.config.knowledge_base.exclude == ["x/**"]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("knowledgeBase:\n  allowWrite: true\n", "unknown key"),
        ("knowledgeBases: []\n", "singular 'knowledgeBase'"),
        ("search:\n  maxResults: 0\n", "search.maxResults"),
        ("search:\n  defaultMode: fuzzy\n", "search.defaultMode"),
        (
            "embedding:\n  provider: openai-compatible\n  model: m\n  endpoint: http://example.com/v1\n",
            "allowRemoteEndpoint",
        ),
        ("embedding:\n  provider: openai-compatible\n  endpoint: http://localhost:1/v1\n", "embedding.model"),
        ("embedding:\n  provider: openai-compatible\n  model: m\n  endpoint: not a url\n", "absolute http"),
        ("knowledgeBase:\n  include: []\n", "knowledgeBase.include"),
        ("knowledgeBase:\n  include: ['/abs/**']\n", "leading slash"),
        ("- a list\n", "mapping"),
        ("knowledgeBase:\n  root: missing\n", "does not exist"),
    ],
)
def test_invalid_configuration(tmp_path: Path, yaml_text: str, message: str) -> None:
    cfg = tmp_path / "c.yml"
    cfg.write_text(yaml_text)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("(", r"\(")):
        load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={})


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="was not found"):
        load_settings(CliOptions(config="nope.yml"), cwd=tmp_path, environ={})


def test_remote_endpoint_allowed_explicitly(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yml"
    cfg.write_text(
        "embedding:\n  provider: openai-compatible\n  model: m\n"
        "  endpoint: https://example.com/v1\n  allowRemoteEndpoint: true\n"
    )
    assert load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={}).config.embedding.allow_remote_endpoint


def test_download_allowance_takes_bare_hosts_only() -> None:
    from local_vector_search_mcp.config import build_config

    config = build_config({"downloads": {"allowedHosts": ["wiki.intranet", "10.0.0.5", "::1", "[fd00::1]", "Wiki."]}})
    assert [h.root for h in config.downloads.allowed_hosts][:2] == ["wiki.intranet", "10.0.0.5"]
    assert build_config({}).downloads.allowed_hosts == []
    for bad, words in [
        ("https://wiki", "not a URL"),
        ("wiki:8443", "port"),
        ("*.intranet", "wildcards"),
        ("two words", "not a valid host name"),
    ]:
        with pytest.raises(ConfigError, match=words):
            build_config({"downloads": {"allowedHosts": [bad]}})
    with pytest.raises(ConfigError, match="unknown key"):
        build_config({"downloads": {"allowHosts": ["x"]}})
