"""The command line: exit codes, messages and `call <tool>`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from embedding_endpoint import endpoint_server


def run(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "local_vector_search_mcp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", **(env or {})},
    )


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    return tmp_path


def test_call_list_files(kb: Path) -> None:
    result = run("call", "kb_list_files", "--path-prefix", "docs", cwd=kb)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["files"][0]["relativePath"] == "docs/a.md"


def test_call_with_json_and_stdin(kb: Path) -> None:
    result = run("call", "kb_list_files", "--json", "-", cwd=kb, stdin='{"includeGlob": "**/*.txt"}')
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"files": [], "skippedFolders": 0, "skipped": [], "nextCursor": None}


def test_a_tool_without_arguments_takes_an_empty_json_object(kb: Path) -> None:
    # A script that passes --json to every tool works for kb_status too; anything but {} is
    # refused as over MCP (decision 1004).
    result = run("call", "kb_status", "--json", "{}", cwd=kb)
    assert result.returncode == 0, result.stderr
    assert "indexExists" in json.loads(result.stdout)
    result = run("call", "kb_status", "--json", '{"x": 1}', cwd=kb)
    assert result.returncode == 1 and json.loads(result.stderr)["code"] == "INVALID_ARGUMENT"


def test_call_error_is_json_on_stderr_exit_1(kb: Path) -> None:
    result = run("call", "kb_list_files", "--path-prefix", "../x", cwd=kb)
    assert result.returncode == 1
    assert result.stdout == ""
    assert json.loads(result.stderr)["code"] == "INVALID_PATH"


def test_an_enum_option_is_read_in_any_case_as_the_tool_reads_it(kb: Path) -> None:
    """Over MCP, in --json and in the configuration `LEXICAL` is `lexical` (contract section 1);
    `call kb_search --mode LEXICAL` was refused by the option parser."""
    result = run("--embedding-provider", "none", "call", "kb_links", "--direction", "OUTGOING", cwd=kb)
    assert result.returncode == 1 and json.loads(result.stderr)["code"] == "INDEX_NOT_READY", result.stderr
    result = run("--embedding-provider", "none", "call", "kb_search", "--query", "text", "--mode", "LEXICAL", cwd=kb)
    assert result.returncode == 1 and json.loads(result.stderr)["code"] == "INDEX_NOT_READY", result.stderr
    result = run("call", "kb_search", "--query", "text", "--mode", "fuzzy", cwd=kb)
    assert result.returncode == 1 and "invalid choice: 'fuzzy'" in result.stderr


def test_status_flag(kb: Path) -> None:
    result = run("--status", "--root", "docs", cwd=kb)
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["project"]["root"] == str((kb / "docs").resolve())
    assert status["indexExists"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # the contract's words (decision 544)
        (["--bogus"], "Unknown option: --bogus"),
        (["--bogus=3", "--status"], "Unknown option: --bogus"),
        (["--root"], "--root requires a value."),
        (["--root", "--status"], "--root requires a value."),
        (["--status", "stray"], "Unexpected argument: stray"),
        (["stray"], "Unexpected argument: stray (commands: serve, call, notion, index)"),
        # argparse took the unknown option's value for the command and named the value (decision 985)
        (["--storage-backend", "postgresql", "--status"], "Unknown option: --storage-backend\n"),
        (["--root", ".", "--storage-backend=pg", "x"], "Unknown option: --storage-backend\n"),
        (["--verbos", "serv"], "Unexpected argument: serv (commands:"),  # an abbreviation argparse takes
        (["--search-mode", "fuzzy", "--status"], "search.defaultMode"),
        (["--embedding-provider", "ollama", "--status"], "embedding.provider"),
        (["--root", "missing", "--status"], "does not exist"),
        (["--config", "nope.yml", "--status"], "was not found"),
        (["--include", "/abs", "--status"], "leading slash"),
        (["--force"], "--force is only valid together with --reindex"),
        # each ran only one of the two and exited 0 (the reindex was skipped)
        (["--reindex", "--status"], "--status and --reindex cannot be combined"),
        (["--reindex", "call", "kb_status"], "--reindex and call cannot be combined"),
        (["--status", "notion", "push"], "--status and notion cannot be combined"),
        (["--status", "serve"], "--status and serve cannot be combined"),
        (["serve", "extra"], "Unexpected argument: extra"),
        # the program's own options after a command: say to move them (decision 1078)
        (
            ["call", "kb_search", "--query", "x", "--root", "docs"],
            "Unknown option: --root (--root is an option of local-vector-search-mcp itself: give it before "
            "`call kb_search`, as in `local-vector-search-mcp --root DIR call kb_search ...`)",
        ),
        (["call", "--root", "docs", "kb_search"], "Unknown option: --root (--root is an option of"),
        (["call", "kb_patch", "--allow-writes"], "give it before `call kb_patch`"),
        (["serve", "--watch-files"], "Unexpected argument: --watch-files (--watch-files is an option of"),
        (["notion", "push", "--config=kb.yml"], "Unknown option: --config (--config is an option of"),
        # any other option a tool does not take: its options are named
        (
            ["call", "kb_create", "--content", "x"],
            "Unknown option: --content (kb_create takes --json, --path, --markdown;",
        ),
        (["call", "kb_nope"], "invalid choice"),
        (["--transport", "pigeon"], "server.transport"),
        (["--port", "8082"], "--host and --port only apply with --transport http"),
        (["--transport", "http", "--port", "99999"], "invalid port"),
        (["--transport", "http", "--host", "0.0.0.0"], "Refusing to listen on 0.0.0.0"),
    ],
)
def test_invalid_invocations_exit_1_with_a_message(kb: Path, args: list[str], message: str) -> None:
    result = run(*args, cwd=kb)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert message in result.stderr
    assert result.stdout == ""


def test_stdin_eof_exits_0_and_prints_nothing(kb: Path) -> None:
    result = run(cwd=kb, stdin="")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


def test_closed_stdout_is_not_an_error(kb: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "local_vector_search_mcp", "call", "kb_list_files"],
        cwd=kb,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head -0`
    err = proc.stderr.read().decode()
    assert proc.wait() == 0
    assert "Traceback" not in err


def test_serve_help_is_the_help(kb: Path) -> None:
    result = run("serve", "--help", cwd=kb)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: local-vector-search-mcp")
    assert "--project-root" in result.stdout and "examples:" in result.stdout


@pytest.mark.parametrize(
    "args",
    [["call", "--help"], ["call", "kb_search", "--help"], ["notion", "push", "--help"], ["index", "copy", "--help"]],
)
def test_a_command_s_help_needs_no_project(tmp_path: Path, args: list[str]) -> None:
    """`call kb_search --help` from `/` (or with a --root not made yet, or a --config not written
    yet) printed the missing-project message and exit 1: the configuration was read before the
    command's own options (decision 751)."""
    for where, options in ((Path("/"), []), (tmp_path, ["--root", "not-yet", "--config", "missing.yml"])):
        result = run(*options, *args, cwd=where)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("usage: local-vector-search-mcp "), result.stdout
    # a mistyped option of the command is its own message, not the project's
    result = run("call", "kb_search", "--top-k", "many", cwd=Path("/"))
    assert result.returncode == 1 and "argument --top-k: invalid int value" in result.stderr, result.stderr


def test_a_tool_answering_with_a_file_prints_one_json_line_per_block(kb: Path) -> None:
    """kb_download_file and kb_load_image answer with a file and a JSON text block: the text was
    printed indented over six lines after the file's one-line summary, so stdout was neither one
    JSON document nor JSON Lines (decision 754)."""
    (kb / "docs" / "data.csv").write_bytes(b"a,b\n1,2\n")
    result = run("call", "kb_download_file", "--path", "docs/data.csv", cwd=kb)
    assert result.returncode == 0, result.stderr
    blocks = [json.loads(line) for line in result.stdout.splitlines()]
    assert [b.get("type") for b in blocks] == ["resource", None], blocks
    assert blocks[0]["bytes"] == 8 and blocks[1]["path"] == "docs/data.csv" and len(blocks[1]["sha256"]) == 64


def test_the_filesystem_root_is_never_a_project_by_default() -> None:
    # Claude Desktop starts servers in /: without --project-root the server would take the whole disk
    result = run("--status", cwd=Path("/"))
    assert result.returncode == 1, result.stdout
    assert "--project-root" in result.stderr and result.stdout == ""


def test_an_explicit_project_root_works_from_the_filesystem_root(kb: Path) -> None:
    result = run("--project-root", str(kb), "--status", cwd=Path("/"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["project"]["root"] == str(kb.resolve())


def test_a_knowledge_base_root_given_from_the_filesystem_root_is_honoured(kb: Path, tmp_path: Path) -> None:
    # the contract's resolution (project root = working folder) with --root: a container or a
    # harness that runs in / and names its folders must work; only a guessed / is refused
    args = ("--root", str(kb), "--storage-path", str(tmp_path / "idx" / "i.db"), "--embedding-provider", "none")
    assert run(*args, "--reindex", cwd=Path("/")).returncode == 0
    result = run(*args, "call", "kb_search", "--query", "text", cwd=Path("/"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"]


def test_an_index_built_with_the_bundled_model_serves_a_run_without_embeddings(kb: Path) -> None:
    """Decision 630: `--embedding-provider none` against the index the default (the bundled model)
    built was refused as a whole; it now searches it lexically, and its writes leave only the
    changed chunk for the model's next run."""
    (kb / "docs" / "a.md").write_text("# A\n\nKittens purr softly.\n\n## B\n\nDogs bark.\n")
    assert run("--reindex", cwd=kb).returncode == 0
    none = ("--embedding-provider", "none")
    found = run(*none, "call", "kb_search", "--query", "kittens", cwd=kb)
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["results"][0]["path"] == "docs/a.md" and "only lexical search ran" in answer["warning"]
    semantic = run(*none, "call", "kb_search", "--query", "kittens", "--mode", "semantic", cwd=kb)
    assert semantic.returncode == 1
    assert "run with the provider it was built with" in json.loads(semantic.stderr)["message"]
    (kb / "docs" / "a.md").write_text("# A\n\nKittens purr softly.\n\n## B\n\nOwls hoot.\n")
    edited = run(*none, "--reindex", cwd=kb)
    assert edited.returncode == 0, edited.stderr
    assert "1 changed chunk(s) wait for vectors" in json.loads(edited.stdout)["warning"]
    # a one-shot call with the model cannot embed it before it exits, and says what does (decision 631)
    waits = run("call", "kb_search", "--query", "owls", "--mode", "semantic", cwd=kb)
    assert waits.returncode == 0, waits.stderr
    assert "1 of 2 chunks do not have vectors yet" in json.loads(waits.stdout)["warning"]
    assert "--reindex at once" in json.loads(waits.stdout)["warning"]
    assert run("--reindex", cwd=kb).returncode == 0  # the model's run embeds the one that waits
    vectors = json.loads(run("--status", cwd=kb).stdout)["vectors"]
    assert (vectors["embeddedChunks"], vectors["pendingChunks"]) == (2, 0)
    # a call with the model that edits embeds its own chunk before it exits (decision 640)
    create = {"path": "docs/bats.md", "markdown": "# Bats\n\nBats fly out of the cave at dusk.\n"}
    made = run("--allow-writes", "call", "kb_create", "--json", json.dumps(create), cwd=kb)
    assert made.returncode == 0, made.stderr
    found = run("call", "kb_search", "--query", "bats leaving a cave in the evening", "--mode", "semantic", cwd=kb)
    answer = json.loads(found.stdout)
    assert answer["results"][0]["path"] == "docs/bats.md" and not answer.get("warning"), found.stdout


def test_a_call_that_edits_embeds_its_own_chunks_before_it_exits(kb: Path) -> None:
    """Decision 640: `call kb_create` with a model stored the new chunks without vectors and exited
    (no background pass outlives a call, 631), so the next call's semantic search missed the note
    until a server ran or --reindex. The call now embeds them; an endpoint that is down leaves the
    note written and indexed, its chunk waiting, and says so."""
    with endpoint_server(dims=16) as endpoint:
        model = ("--embedding-provider", "openai-compatible", "--embedding-endpoint", endpoint.url)
        model += ("--embedding-model", "m")
        assert run(*model, "--reindex", cwd=kb).returncode == 0
        create = {"path": "docs/owls.md", "markdown": "# Owls\n\nOwls hoot in the old barn.\n"}
        made = run(*model, "--allow-writes", "call", "kb_create", "--json", json.dumps(create), cwd=kb)
        assert made.returncode == 0 and "wait for vectors" not in made.stderr, made.stderr
        found = run(*model, "call", "kb_search", "--query", "owls hoot in the old barn", "--mode", "semantic", cwd=kb)
        answer = json.loads(found.stdout)
        assert answer["results"][0]["path"] == "docs/owls.md" and not answer.get("warning"), found.stdout
        assert json.loads(run(*model, "--status", cwd=kb).stdout)["vectors"]["pendingChunks"] == 0
    create = {"path": "docs/bats.md", "markdown": "# Bats\n\nBats fly at dusk.\n"}
    made = run(*model, "--allow-writes", "call", "kb_create", "--json", json.dumps(create), cwd=kb)
    assert made.returncode == 0, made.stderr  # the edit succeeded: the provider being down is a warning
    assert json.loads(made.stdout)["path"] == "docs/bats.md" and (kb / "docs" / "bats.md").is_file()
    assert "1 of its chunk(s) could not be embedded" in made.stderr and "--reindex at once" in made.stderr
    lexical = run(*model, "call", "kb_search", "--query", "bats dusk", "--mode", "lexical", cwd=kb)
    assert json.loads(lexical.stdout)["results"][0]["path"] == "docs/bats.md"
    assert json.loads(run(*model, "--status", cwd=kb).stdout)["vectors"]["pendingChunks"] == 1


def test_call_kb_reindex_waits_for_the_run_it_started(kb: Path) -> None:
    """Decision 642: `call kb_reindex` answered "started" and exited, which cancelled the run:
    nothing was indexed. It now waits for the run and says how it ended."""
    for i in range(40):
        (kb / "docs" / f"n{i}.md").write_text(f"# Note {i}\n\nplatypus number {i}\n")
    done = run("--embedding-provider", "none", "call", "kb_reindex", cwd=kb)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["started"] is True
    assert "the reindex finished: 41 file(s) indexed" in done.stderr
    status = json.loads(run("--embedding-provider", "none", "--status", cwd=kb).stdout)
    assert status["project"]["documents"] == 41


def test_search_globs_are_options(kb: Path) -> None:
    (kb / "docs" / "b.md").write_text("# B\n\nText about kittens.\n")
    (kb / "other.md").write_text("# Other\n\nMore text about kittens.\n")
    assert run("--embedding-provider", "none", "--reindex", cwd=kb).returncode == 0

    def paths(*args: str) -> list[str]:
        result = run("--embedding-provider", "none", "call", "kb_search", "--query", "kittens", *args, cwd=kb)
        assert result.returncode == 0, result.stderr
        return sorted(r["path"] for r in json.loads(result.stdout)["results"])

    assert paths() == ["docs/b.md", "other.md"]
    assert paths("--include-globs", "docs/**") == ["docs/b.md"]
    assert paths("--exclude-globs", "docs/**") == ["other.md"]
    assert paths("--include-globs", "docs/**", "--include-globs", "*.md") == ["docs/b.md", "other.md"]


def test_a_tool_of_a_disabled_tool_set_says_how_to_enable_it(kb: Path) -> None:
    result = run("call", "list_chunks", cwd=kb)
    assert result.returncode == 1
    assert "server: {toolsets: [kb, chunks]}" in json.loads(result.stderr)["message"]


def test_a_port_in_use_says_what_to_do(kb: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run("--transport", "http", "--port", str(port), cwd=kb)
    assert result.returncode == 1, result.stderr
    assert f"Cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "--port 0" in result.stderr


@pytest.mark.parametrize("command", [["--status"], ["index", "copy", "--to", "postgresql:team"]])
def test_a_postgresql_url_with_a_bad_port_is_one_message(kb: Path, command: list[str]) -> None:
    (kb / "pg.yml").write_text("storage: {backend: postgresql}\n")
    env = {"LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL": "postgresql://kb:hunter2secret@db:54x2/kb"}
    result = run("--config", "pg.yml", *command, cwd=kb, env=env)
    assert result.returncode == 1, result.stdout
    assert "port is not a number" in result.stderr
    assert "hunter2secret" not in result.stderr and "Traceback" not in result.stderr


def test_a_refused_postgresql_connection_says_why_without_the_password(kb: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once the socket is closed
    (kb / "pg.yml").write_text("storage: {backend: postgresql}\n")
    env = {"LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL": f"postgresql://kb:hunter2secret@127.0.0.1:{port}/kb"}
    result = run("--config", "pg.yml", "--reindex", cwd=kb, env=env)
    assert result.returncode == 1, result.stdout
    assert f"Cannot connect to PostgreSQL at postgresql://127.0.0.1:{port}/kb" in result.stderr
    assert "refused" in result.stderr and "LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL" in result.stderr
    assert "hunter2secret" not in result.stderr and "Traceback" not in result.stderr


def test_a_postgresql_user_without_rights_is_told_who_can_prepare_the_database(kb: Path, pg_server: Any) -> None:
    import psycopg

    role = "lvsm_limited_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_server.url, autocommit=True) as admin:
        admin.execute(f"create role {role} login password 'hunter2secret'")
        admin.execute(f"create database {role}")  # owned by postgres: the role may neither add extensions nor schemas
    url = pg_server.url.replace("postgres@", f"{role}:hunter2secret@").rsplit("/", 1)[0] + f"/{role}"
    (kb / "pg.yml").write_text("storage: {backend: postgresql}\n")
    result = run("--config", "pg.yml", "--reindex", cwd=kb, env={"LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL": url})
    assert result.returncode == 1, result.stdout
    assert "could not be prepared for the index" in result.stderr
    assert "create extension if not exists vector" in result.stderr
    assert "hunter2secret" not in result.stderr and "Traceback" not in result.stderr


def test_a_server_without_pgvector_is_named() -> None:
    psycopg = pytest.importorskip("psycopg")
    from local_vector_search_mcp.index.postgres import setup_failure

    exc = psycopg.errors.FeatureNotSupported('extension "vector" is not available')
    message = setup_failure(exc, "postgresql://u:pw@h/db", "postgresql://h:5432/db#s", "s").message
    assert "pgvector extension is not installed" in message and "pw@" not in message


def test_a_tool_help_names_the_fields_only_json_can_give(kb: Path) -> None:
    result = run("call", "kb_patch", "--help", cwd=kb)
    assert result.returncode == 0, result.stderr
    assert "Fields without an option (`operations`) go in --json" in result.stdout
    # a tool whose every field has an option says nothing of the kind
    assert "Fields without an option" not in run("call", "kb_read", "--help", cwd=kb).stdout


@pytest.mark.parametrize("stop", ["ctrl-d", "ctrl-c", "ctrl-c-later"])
def test_a_person_at_a_terminal_is_told_what_the_silent_server_waits_for(kb: Path, stop: str) -> None:
    import os
    import pty
    import signal
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "local_vector_search_mcp"],
        cwd=kb,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
    )
    os.close(slave)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        assert "serving MCP over stdio" in line and "docs/clients.md" in line
        if stop == "ctrl-d":
            os.write(master, b"\x04")  # end of input
            assert proc.wait(timeout=60) == 0
        else:
            if stop == "ctrl-c-later":  # the server idles on stdin (a hang until the next line before)
                time.sleep(3)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=60) == 130
            assert proc.stderr.read().decode().strip() == "local-vector-search-mcp: interrupted."
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_postgresql_without_its_drivers_says_how_to_add_them(kb: Path) -> None:
    (kb / "pg.yml").write_text("storage: {backend: postgresql}\n")
    code = (
        "import sys; sys.modules['psycopg'] = None\n"  # as if the extra was not installed
        "from local_vector_search_mcp.cli import run; sys.argv = ['local-vector-search-mcp', *sys.argv[1:]]; run()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, "--config", "pg.yml", "--reindex"],
        cwd=kb,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "LOCAL_VECTOR_SEARCH_MCP_DATABASE_URL": "postgresql://kb@127.0.0.1:1/kb"},
    )
    assert result.returncode == 1, result.stdout
    assert "`postgresql` extra (psycopg is missing)" in result.stderr and "pipx inject" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_configuration_mistake_is_one_message_naming_the_line_and_exit_1(kb: Path) -> None:
    # a block pasted twice used to be taken silently: the second `knowledgeBase` replaced the first
    (kb / "c.yml").write_text(
        "knowledgeBase:\n  root: docs\nsearch: {maxResults: 5}\nknowledgeBase:\n  allowWrites: true\n"
    )
    result = run("--config", "c.yml", "--status", cwd=kb)
    assert result.returncode == 1, result.stdout
    assert result.stdout == ""
    assert result.stderr == (
        f"local-vector-search-mcp: Configuration file {kb / 'c.yml'}:4: knowledgeBase is given twice (first on "
        "line 1); YAML would keep only the last one. Merge them into one.\n"
    )


def test_tilde_in_an_argument_no_shell_expanded_is_home(kb: Path) -> None:
    # an MCP client's `args` reach the server without a shell: `--root ~/docs` arrived as a folder named `~`
    result = run("--root", "~/docs", "--status", cwd=Path("/"), env={"HOME": str(kb)})
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["project"]["root"] == str(kb / "docs")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("@missing.json", "--json @missing.json could not be read: No such file or directory."),
        ("@docs", "--json @docs could not be read: Is a directory."),
        ("@latin1.json", "--json @latin1.json could not be read: not UTF-8 text (invalid continuation byte)."),
    ],
)
def test_a_json_file_that_cannot_be_read_is_one_message(kb: Path, value: str, message: str) -> None:
    # `--json @file` read the file unguarded: a missing one ended in a FileNotFoundError traceback
    (kb / "latin1.json").write_bytes(b'{"path": "caf\xe9.md"}')
    result = run("--root", "docs", "call", "kb_read", "--json", value, cwd=kb)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"local-vector-search-mcp: {message}\n"


def test_verbose_logs_never_show_the_password_of_an_endpoint_url(kb: Path) -> None:
    # with -v, httpx's INFO line of each request printed http://u:s3cret@127.0.0.1:.../embeddings
    import http.server
    import threading

    class Refusing(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_error(501)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://user:s3cret-pw@127.0.0.1:{server.server_address[1]}/v1"
        args = ["-v", "--root", "docs", "--embedding-provider", "openai-compatible", "--embedding-model", "m"]
        result = run(*args, "--embedding-endpoint", endpoint, "--reindex", cwd=kb)
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stderr
    assert "HTTP Request: POST http://user:***@127.0.0.1" in result.stderr  # the line is still there
    assert "s3cret" not in result.stderr + result.stdout


def test_a_refused_field_names_its_option(kb: Path) -> None:
    """Decision 555: `call kb_read` without --path said "request.path: Field required"; the
    command line's user has to know it is --path. Each field a refusal names gets its option
    (over MCP the message stays as it was: there are no options)."""
    missing = run("--embedding-provider", "none", "call", "kb_read", cwd=kb)
    assert missing.returncode == 1
    assert json.loads(missing.stderr)["message"] == "Invalid arguments: request.path (--path): Field required"
    bad = run("--embedding-provider", "none", "call", "kb_search", "--query", "x", "--top-k", "0", cwd=kb)
    assert "request.topK (--top-k): Input should be greater than or equal to 1" in json.loads(bad.stderr)["message"]
    # a tool whose arguments are not wrapped in `request`
    flat = run("--embedding-provider", "none", "call", "kb_edit_table", "--path", "docs/a.md", cwd=kb)
    message = json.loads(flat.stderr)["message"]
    assert "pointer (--pointer): Field required" in message and "action (--action): Field required" in message
    unknown = run("--embedding-provider", "none", "call", "kb_search", "--json", '{"query": "x", "bogus": 1}', cwd=kb)
    assert json.loads(unknown.stderr)["message"] == "Invalid arguments: request.bogus: unknown field"


def test_json_in_the_mcp_envelope_is_refused_with_the_object_to_send(kb: Path) -> None:
    """Decision 1123: `call kb_read --json '{"request": {...}}'` (the arguments as an MCP client sends
    them) said "request.path: Field required; request.request: unknown field", the wrapper's name,
    not that --json takes the request object itself."""
    wrapped = run("call", "kb_read", "--json", '{"request": {"path": "docs/a.md", "maxBytes": 10}}', cwd=kb)
    assert wrapped.returncode == 1
    assert "--json takes kb_read's request object itself" in wrapped.stderr
    assert """--json '{"path": ..., "maxBytes": ...}'""" in wrapped.stderr
    inner = run("call", "kb_read", "--json", '{"path": "docs/a.md", "maxBytes": 10}', cwd=kb)
    assert inner.returncode == 0, inner.stderr
    flat = run("call", "kb_load_image", "--json", '{"request": {"path": "a.png"}}', cwd=kb)  # a flat tool: MCP's shape
    assert "request: unknown field" in json.loads(flat.stderr)["message"]


def test_a_value_that_starts_with_one_dash_is_a_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Decision 883: contract 10.4 (the reference's parser) refuses a value option only when
    nothing or another `--option` follows; argparse took any word starting with `-` for an option,
    so `--exclude -draft.md` said "--exclude requires a value." and `call kb_search --query -v`
    could not search for a flag. Both are values now; `--root --status` is still refused."""
    from local_vector_search_mcp.cli import main as cli_main

    (tmp_path / "a.md").write_text("# A\n\nThe -v flag prints more.\n", "utf-8")
    (tmp_path / "-draft.md").write_text("# Draft\n\nflag draft\n", "utf-8")
    base = ["--project-root", str(tmp_path), "--embedding-provider", "none"]
    assert cli_main([*base, "--exclude", "-draft.md", "--reindex"]) == 0
    assert json.loads(capsys.readouterr().out)["indexedFiles"] == 1
    assert (
        cli_main([*base, "--exclude", "-draft.md", "call", "kb_search", "--query", "-v flag", "--mode", "lexical"]) == 0
    )
    assert [hit["path"] for hit in json.loads(capsys.readouterr().out)["results"]] == ["a.md"]
    with pytest.raises(SystemExit) as refused:
        cli_main(["--root", "--status"])
    assert refused.value.code == 1 and "--root requires a value." in capsys.readouterr().err


def test_a_foreign_configuration_key_is_warned_of_on_stderr_and_the_command_runs(kb: Path) -> None:
    # notes 10.2: unknown keys are ignored; ours says so on stderr, never on stdout (MCP's channel)
    (kb / "c.yml").write_text("telemetry:\n  enabled: false\nembedding:\n  provider: none\n")
    result = run("--config", "c.yml", "--status", cwd=kb)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["embeddingProvider"] == "none"
    assert "telemetry" in result.stderr and "is not a setting of this server; ignored" in result.stderr


def test_the_tools_a_default_server_does_not_list_are_marked(tmp_path: Path) -> None:
    """`call --help` and docs/reference/tools.md listed all 27 tools alike, and `call
    search_knowledge` then answered that its tool set is not enabled (decision 1079)."""
    from lvsm_contract.registry import TOOLS

    result = run("call", "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Tools marked [chunks] need server.toolsets: [kb, chunks]" in " ".join(result.stdout.split())
    lines = result.stdout.splitlines()
    names = {t.name for t in TOOLS}
    listed = {}
    for i, line in enumerate(lines):
        words = line.split()
        if words and words[0] in names:  # a long name has its title on the next line
            listed[words[0]] = line if len(words) > 1 else lines[i + 1]
    assert set(listed) == names
    for tool in TOOLS:
        assert listed[tool.name].endswith("[chunks]") == (tool.toolset == "chunks"), listed[tool.name]
    reference = Path(__file__).resolve().parents[1] / "docs" / "reference" / "tools.md"
    rows = {
        cells[1].split("`")[1]: cells[3].strip()
        for line in reference.read_text(encoding="utf-8").splitlines()
        if line.startswith("| [`") and len(cells := line.split("|")) > 4
    }
    assert rows == {t.name: t.toolset for t in TOOLS}
