"""Command line: serve MCP over stdio (the default), maintenance flags, and ``call <tool>``.

    local-vector-search-mcp [options]                 serve MCP over stdio
    local-vector-search-mcp --transport http [--host H] [--port P]   serve MCP over Streamable HTTP
    local-vector-search-mcp [options] --status        print kb_status JSON and exit
    local-vector-search-mcp [options] --reindex [--force]
    local-vector-search-mcp [options] call <tool> [--json JSON | --field value ...]
    local-vector-search-mcp [options] notion push [--dry-run] [--parent PAGE_ID] [PATH ...]
    local-vector-search-mcp [options] index copy --to STORE [--from STORE] [--force]

Every invalid option or configuration value prints one clear message on
stderr and exits with code 1. ``call`` prints the tool's JSON result on
stdout (exit 0) or its ``{code, message}`` error on stderr (exit 1).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__
from .config import CliOptions, ConfigError, load_settings

if TYPE_CHECKING:
    from lvsm_contract.content import ContentResult

    from .workspace import Workspace

EXIT_ERROR = 1


class _HideUrlPasswords(logging.Filter):
    """httpx logs every request's URL at INFO (shown with -v): an embedding endpoint written as
    ``http://user:password@host/v1`` would print its password on stderr."""

    _USERINFO = re.compile(r"(//[^/@\s:]*):[^/@\s]*@")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "@" in message:
            record.msg, record.args = self._USERINFO.sub(r"\1:***@", message), ()
        return True


class _Parser(argparse.ArgumentParser):
    given: Sequence[str] = ()  # the words parsed, set by main: what an error names (decision 985)
    tools: Mapping[str, argparse.ArgumentParser] = {}  # `call`'s parser: each tool's own (decision 1078)

    def error(self, message: str) -> NoReturn:
        # argparse exits 2 with a usage dump; the contract wants one message and exit 1, in the
        # reference's words where it quotes them (decision 544).
        unknown = self._unknown_option() if _NO_COMMAND.match(message) else None
        if self.tools and self.given and self.given[0].startswith("-") and message.startswith("argument <tool>"):
            # `call --root docs kb_search`: argparse skips the option and names `docs` as the tool
            unknown = f"Unknown option: {self.given[0].split('=', 1)[0]}"
        text = unknown or _contract_words(message)
        self.exit(EXIT_ERROR, f"{self.prog}: {text}{self._hint(text)}\n(see --help)\n")

    def _hint(self, text: str) -> str:
        """What to do about an option a command does not take (decision 1078): one of the
        program's own options given after the command (`call kb_search --root docs ...`) is to
        go before it; any other option of `call <tool>` gets the tool's options named."""
        m = _UNKNOWN.match(text)
        if m is None or self.prog == PROG:
            return ""
        name = m.group(1)
        command = self.prog.removeprefix(PROG).strip()
        if command == "call" and self.given and self.given[0] in self.tools:
            command = f"call {self.given[0]}"
        misplaced = misplaced_option_hint(name, command)
        if misplaced:
            return misplaced
        tool = self.tools.get(self.given[0]) if command.startswith("call ") else None
        if tool is None:
            return ""
        options = [o for a in tool._actions for o in a.option_strings if o.startswith("--") and o != "--help"]
        return f" ({self.given[0]} takes {', '.join(options)}; `call {self.given[0]} --help` says what each is)"

    def _unknown_option(self) -> str | None:
        """`--storage-backend postgresql`: argparse takes the unknown option's value for the command
        and names that ("Unexpected argument: postgresql"); the option is what is wrong (decision 985)."""
        for word in self.given:
            if word == "--":
                return None
            name = word.split("=", 1)[0]
            # argparse also takes a known option's unambiguous start (`--verb` for `--verbose`)
            known = any(option.startswith(name) for option in self._option_string_actions)
            if name.startswith("-") and name != "-" and not known:
                return f"Unknown option: {name}"
            if name in _COMMANDS:
                return None  # the command's own options follow: its parser judges them
        return None


_COMMANDS = ("serve", "call", "notion", "index")
PROG = "local-vector-search-mcp"
_UNKNOWN = re.compile(r"(?:Unknown option|Unexpected argument): (-[^\s=]+)$")
# the program's options that are a run of their own or need another one: no hint moves them
_NOT_MOVED = {"-h", "--help", "--version", "--status", "--reindex", "--force"}


def misplaced_option_hint(name: str, command: str) -> str:
    """`` (... give it before `call kb_search`: ...)`` when ``name`` is one of the program's own
    options given after a command, which takes only its own options; else ``""``."""
    program = build_parser()
    action = program._option_string_actions.get(name)  # argparse keeps no public index of them
    if action is None or name in _NOT_MOVED:
        return ""
    value = f" {action.metavar}" if action.nargs is None and action.metavar else ""
    return (
        f" ({name} is an option of {PROG} itself: give it before `{command}`, "
        f"as in `{PROG} {name}{value} {command} ...`)"
    )


_UNRECOGNIZED = re.compile(r"unrecognized arguments: (\S+)")
_NO_VALUE = re.compile(r"argument (--[\w-]+)(?:/[^:]*)?: expected one argument")
_NO_COMMAND = re.compile(r"argument command: invalid choice: '([^']*)' \(choose from (.*)\)")


def _contract_words(message: str) -> str:
    """argparse's message for an unknown option, a value option without its value, or a stray
    word where a command may stand, as the contract words them ("Unknown option: --x", "<opt>
    requires a value.", "Unexpected argument"); any other message as argparse wrote it."""
    if m := _UNRECOGNIZED.match(message):
        word = m.group(1)
        return f"Unknown option: {word.split('=', 1)[0]}" if word.startswith("-") else f"Unexpected argument: {word}"
    if m := _NO_VALUE.match(message):
        return f"{m.group(1)} requires a value."
    if m := _NO_COMMAND.match(message):
        commands = m.group(2).replace("'", "")
        return f"Unexpected argument: {m.group(1)} (commands: {commands})"
    return message


def _dash_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``argv`` with each value of ``parser``'s value options that starts with one dash joined to
    its option (``--exclude=-draft.md``). The contract (10.4) refuses a value option only when
    nothing or another ``--option`` follows it; argparse takes any word starting with ``-`` for an
    option, so ``--exclude -draft.md`` and ``call kb_search --query -v`` were "requires a value"
    (decision 883). Stops at ``--``, and at the first word that is no option of ``parser`` nor a
    value: what follows belongs to a command's own parser."""
    takes_value = {
        option
        for action in parser._actions  # argparse keeps no public list of them
        if action.nargs is None and action.option_strings
        for option in action.option_strings
    }
    out: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--" or not word.startswith("-"):
            return out + argv[i:]
        following = argv[i + 1] if i + 1 < len(argv) else None
        if word in takes_value and following is not None and following.startswith("-") and following != "-":
            if following.startswith("--"):
                out.append(word)  # argparse says "requires a value", as the contract does
                i += 1
                continue
            out.append(f"{word}={following}")
            i += 2
            continue
        out.append(word)
        i += 2 if word in takes_value else 1
        if word in takes_value and following is not None:
            out.append(following)
    return out


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"invalid port {value!r} (0-65535)")
    return int(value)


EXAMPLES = """\
examples:
  local-vector-search-mcp --root notes --reindex     index ./notes once (a server catches up at start;
                                                     --watch-files also while it runs)
  local-vector-search-mcp --root notes call kb_search --query "how are edits kept safe"
  local-vector-search-mcp --project-root /abs/project   serve MCP over stdio (what an MCP client runs)
  local-vector-search-mcp --transport http           serve many clients at http://127.0.0.1:8081/mcp
  local-vector-search-mcp call --help                every tool; `call <tool> --help` for its options
"""


def build_parser() -> _Parser:
    p = _Parser(
        prog="local-vector-search-mcp",
        description="Local knowledge workbench for AI agents: an MCP server (stdio or Streamable HTTP) "
        "over a project's Markdown.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--config", metavar="FILE", help="YAML configuration file (never loaded implicitly)")
    p.add_argument(
        "--project-root", metavar="DIR", help="project root (default: $CLAUDE_PROJECT_DIR, else the working folder)"
    )
    p.add_argument("--root", metavar="DIR", help="knowledge-base root (default: the project root)")
    p.add_argument(
        "--storage-path",
        metavar="FILE",
        help="index database (default: <project-root>/.local-vector-search-mcp/index.db)",
    )
    p.add_argument("--embedding-provider", metavar="NAME", help="local | openai-compatible | none")
    p.add_argument(
        "--embedding-endpoint", metavar="URL", help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1"
    )
    p.add_argument("--embedding-model", metavar="NAME", help="embedding model name")
    p.add_argument("--search-mode", metavar="MODE", help="default kb_search mode: lexical | semantic | hybrid")
    p.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="index only matching files, relative to the root: '**/*.md' is every Markdown file, '*.md' the root "
        "folder's only (repeatable; replaces the configured list)",
    )
    p.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="skip matching files (repeatable; replaces the configured list)",
    )
    p.add_argument(
        "--watch-files",
        dest="watch_files",
        action="store_true",
        default=None,
        help="re-index files edited by other programs",
    )
    p.add_argument("--no-watch-files", dest="watch_files", action="store_false", help="do not watch files")
    p.add_argument(
        "--allow-writes", dest="allow_writes", action="store_true", default=None, help="let editing tools change files"
    )
    # A read-only run of a configuration that allows writes (a teammate's or CI's copy of
    # team.yml): without it no option could override the file's `allowWrites: true` (decision 759).
    p.add_argument(
        "--no-allow-writes", dest="allow_writes", action="store_false", help="refuse edits whatever the file says"
    )
    p.add_argument("--transport", metavar="NAME", help="stdio (default; one client) | http (many clients, at /mcp)")
    p.add_argument("--host", metavar="ADDR", help="http: address to bind (default 127.0.0.1; others need a token)")
    p.add_argument("--port", metavar="PORT", type=_port, help="http: TCP port (default 8081; 0 picks a free one)")
    p.add_argument(
        "--reindex", action="store_true", help="index changed files synchronously, print the result JSON, exit"
    )
    p.add_argument("--force", action="store_true", help="with --reindex: rebuild an incompatible index")
    p.add_argument("--status", action="store_true", help="print the status JSON and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="log more on stderr")
    p.add_argument(
        "command",
        nargs="?",
        choices=_COMMANDS,
        help="serve (default), call <tool>, notion push or index copy",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return p


def _options(args: argparse.Namespace) -> CliOptions:
    return CliOptions(
        config=args.config,
        project_root=args.project_root,
        root=args.root,
        storage_path=args.storage_path,
        embedding_provider=args.embedding_provider,
        embedding_endpoint=args.embedding_endpoint,
        embedding_model=args.embedding_model,
        search_mode=args.search_mode,
        include=args.include,
        exclude=args.exclude,
        watch_files=args.watch_files,
        allow_writes=args.allow_writes,
        transport=args.transport,
        host=args.host,
        port=args.port,
    )


def _read_json_arg(value: str) -> Any:
    if value == "-":
        text = sys.stdin.read()
    elif value.startswith("@"):
        try:
            text = Path(value[1:]).expanduser().read_text(encoding="utf-8")  # no shell expands `@~/...`
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text ({exc.reason})"
            raise ConfigError(f"--json {value} could not be read: {reason}.") from None
    else:
        text = value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--json is not valid JSON: {exc}") from None


def tool_arguments(ns: argparse.Namespace) -> dict[str, Any]:
    from lvsm_contract.cli import ENVELOPES, FIELDS

    envelope = ENVELOPES[ns.tool]
    body: dict[str, Any] = {}
    if getattr(ns, "json_input", None):
        body = _read_json_arg(ns.json_input)
        if not isinstance(body, dict):
            raise ConfigError("--json must be a JSON object.")
    if envelope == "none":  # `{}`, or the refusal MCP gives arguments the tool does not take
        return body
    if envelope == "request" and list(body) == ["request"] and isinstance(body["request"], dict):
        # the arguments as an MCP client sends them (decision 1123): "request.request: unknown field"
        # named the wrapper, not that --json takes what is inside it
        shape = ", ".join(f'"{key}": ...' for key in body["request"])
        raise ConfigError(
            f"--json takes {ns.tool}'s request object itself, not the MCP arguments around it: send the "
            f"object inside \"request\", --json '{{{shape}}}'."
        )
    for prop, dest, _kind in FIELDS[ns.tool]:
        value = getattr(ns, dest, None)
        if value is not None:
            body[prop] = value
    return {"request": body} if envelope == "request" else body


def _with_options(message: str, tool: str) -> str:
    """Name the option beside each request field a refusal names: a user of `call kb_read` who
    forgot the path read "request.path: Field required" and had to guess it is `--path`."""
    from lvsm_contract.cli import ENVELOPES, FIELDS

    prefix = "request." if ENVELOPES[tool] == "request" else ""
    for prop, _dest, _kind in FIELDS[tool]:
        option = "--" + re.sub(r"(?<!^)(?=[A-Z])", "-", prop).lower()  # as the generator spells it
        message = re.sub(rf"(?<![\w.]){re.escape(prefix + prop)}(?=: )", f"{prefix}{prop} ({option})", message)
    return message


def _command_arguments(command: str, rest: list[str]) -> argparse.Namespace:
    """The arguments of ``call``, ``notion`` or ``index``, parsed before the configuration is
    read: ``call kb_search --help`` (and a mistyped option) needs no project, and printed "No
    project root ..." from `/` or with a --root that does not exist yet (decision 751)."""
    if command == "call":
        from lvsm_contract.cli import add_tool_parsers

        parser = _Parser(
            prog="local-vector-search-mcp call",
            description="Call one tool and print its JSON result. Tools marked [chunks] need "
            "server.toolsets: [kb, chunks] in the --config file.",
        )
        tools = parser.add_subparsers(dest="tool", required=True, metavar="<tool>")
        add_tool_parsers(tools)
        parser.given, parser.tools = rest, tools.choices
        tool_parser = tools.choices.get(rest[0]) if rest else None
        if tool_parser is not None:
            rest = [rest[0], *_dash_values(tool_parser, rest[1:])]
        return parser.parse_args(rest)
    if command == "notion":
        from .notion.command import build_parser as notion_parser

        return notion_parser("local-vector-search-mcp", _Parser).parse_args(rest)
    from .index.copy import build_parser as index_parser

    return index_parser("local-vector-search-mcp", _Parser).parse_args(rest)


def _call(ws: Workspace, ns: argparse.Namespace) -> int:
    from lvsm_contract.content import ContentResult

    from .dispatch import invoke
    from .errors import KbError

    try:
        result = invoke(ws, ns.tool, tool_arguments(ns))
    except KbError as exc:
        wire = exc.to_wire()
        if exc.code == "INVALID_ARGUMENT":
            wire["message"] = _with_options(wire["message"], ns.tool)
        print(json.dumps(wire, ensure_ascii=False), file=sys.stderr)
        return EXIT_ERROR
    if isinstance(result, ContentResult):
        print_content(result)
    else:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    if not _finish_reindex(ws):
        return EXIT_ERROR
    _finish_index_sync(ws)
    return 0


def _finish_reindex(ws: Workspace) -> bool:
    """`call kb_reindex` answers as the tool does (the run started) while the run goes on in a
    thread the exit would cancel: wait for it and say how it ended (decision 642). False when it
    failed."""
    if not ws.indexing_started or (ws.activity.current is None and ws.activity.last is None):
        return True  # no run started (only a background run sets `last`)
    ws.indexing.wait_reindex()
    last = ws.activity.last
    if last is None or last.outcome == "succeeded":
        done = last.result if last is not None else None
        if done is not None:
            told = f"{done.indexed_files} file(s) indexed, {done.deleted_files} removed"
            if done.unreadable_files:
                told += f", {done.unreadable_files} could not be read (--status names them)"
            warning = f" {done.warning}" if done.warning else ""
            print(f"local-vector-search-mcp: the reindex finished: {told}.{warning}", file=sys.stderr)
        return True
    print(f"local-vector-search-mcp: the reindex {last.outcome}: {last.error or 'interrupted'}", file=sys.stderr)
    return False


SYNC_WAIT_SECONDS = 60.0


def _finish_index_sync(ws: Workspace) -> None:
    """Let the re-indexing a mutation queued finish before the process exits (bounded), then
    embed the chunks it left pending.

    The sync queue runs in a daemon thread; exiting at once would drop it and leave
    the index behind the files until the next reindex (issue 10).
    """
    if not ws.indexing_started:
        return
    sync = ws.indexing.sync
    if not sync.wait_idle(SYNC_WAIT_SECONDS):
        pending = sync.pending()
        print(
            f"local-vector-search-mcp: gave up waiting for the index after {SYNC_WAIT_SECONDS:.0f} s; "
            f"{len(pending)} path(s) are not re-indexed yet; run --reindex to catch up.",
            file=sys.stderr,
        )
    # no background pass outlives the call: it embeds its own edit's chunks now (decision 640)
    told = ws.indexing.embed_written()
    if told:
        print(f"local-vector-search-mcp: {told}", file=sys.stderr)


def print_content(result: ContentResult) -> None:
    """One JSON line per block (JSON Lines): a text block's JSON made compact, a binary block as
    a summary, never raw bytes on a terminal. The text blocks hold indented JSON, and printed as
    they were they spread over lines between the one-line summaries: neither one JSON document
    nor one per line for a script to read (decision 754)."""
    from lvsm_contract.content import BlobResource, ImageBlock, TextBlock

    for block in result.blocks:
        match block:
            case TextBlock(text=text):
                try:
                    print(json.dumps(json.loads(text), ensure_ascii=False))
                except ValueError:  # not JSON: printed as it is
                    print(text)
            case ImageBlock(data=data, mime_type=mime_type):
                print(json.dumps({"type": "image", "mimeType": mime_type, "bytes": len(data)}))
            case BlobResource(uri=uri, mime_type=mime_type, data=data):
                print(json.dumps({"type": "resource", "uri": uri, "mimeType": mime_type, "bytes": len(data)}))


def _recover_interrupted_writes(ws: Workspace) -> None:
    # A process killed mid-write may have left a temporary file or a half-done move;
    # every start (server, call, reindex) cleans that up before anything reads the tree.
    # A warning, as a running server's take-over logs it: a user should see that a file
    # was put back or a move finished, not only the debug log.
    from .writer import recover, recover_staging

    for action in [*recover(ws), *recover_staging(ws)]:
        logging.getLogger("local_vector_search_mcp").warning("finished an interrupted write: %s", action)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    words = parser.given = _dash_values(parser, sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(words)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").addFilter(_HideUrlPasswords())
    if args.force and not args.reindex:
        print("local-vector-search-mcp: --force is only valid together with --reindex.", file=sys.stderr)
        return EXIT_ERROR
    # One thing per run: `--reindex --status` printed the status and never reindexed, and
    # `--reindex call ...` ran the call only, each exiting 0.
    actions = [flag for flag, given in (("--status", args.status), ("--reindex", args.reindex)) if given]
    actions += [args.command] if args.command else []
    if len(actions) > 1:
        print(
            f"local-vector-search-mcp: {' and '.join(actions)} cannot be combined; run them one after the other.",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if args.command == "serve" and args.rest and args.rest[0] in ("-h", "--help"):
        parser.print_help()  # `serve` takes the top-level options; they are its help
        return 0
    if args.command not in ("call", "notion", "index") and args.rest:
        hint = misplaced_option_hint(args.rest[0].split("=", 1)[0], args.command) if args.command else ""
        print(f"local-vector-search-mcp: Unexpected argument: {args.rest[0]}{hint}", file=sys.stderr)
        return EXIT_ERROR
    from .workspace import Workspace

    try:
        command_args = (
            _command_arguments(args.command, args.rest) if args.command in ("call", "notion", "index") else None
        )
        settings = load_settings(_options(args))
        if (args.host is not None or args.port is not None) and settings.config.server.transport != "http":
            raise ConfigError("--host and --port only apply with --transport http.")
        if args.command == "notion":
            from .notion.command import run as notion_run

            return notion_run(settings, args.rest, _Parser)
        if args.command == "index":
            from .index.copy import run as index_run

            return index_run(settings, args.rest, _Parser)
        http = None
        if settings.config.server.transport == "http" and args.command != "call" and not (args.status or args.reindex):
            from .server.http import http_options

            http = http_options(settings)
            # A server for many clients keeps an access log: one line per request (no arguments).
            logging.getLogger("local_vector_search_mcp").setLevel(logging.INFO)
        ws = Workspace(settings)
        _recover_interrupted_writes(ws)
        if args.command == "call" or args.status:
            ws.activity.one_shot = True  # no background pass: the process ends with the answer
            try:
                return _call(ws, command_args or _command_arguments("call", ["kb_status"]))
            finally:
                ws.close()
        if args.reindex:
            from .handlers.indexing import reindex_cli

            return reindex_cli(ws, force=args.force)
    except ConfigError as exc:
        print(f"local-vector-search-mcp: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if http is not None:
        from .server.http import serve_http

        try:
            serve_http(ws, http)
        except ConfigError as exc:  # the port is taken, or the address is not ours
            print(f"local-vector-search-mcp: {exc}", file=sys.stderr)
            return EXIT_ERROR
        return 0
    from .server import serve

    if sys.stdin.isatty():  # a person, not a client: say why nothing happens (clients never see this)
        print(
            f"local-vector-search-mcp: serving MCP over stdio for {settings.root}. An MCP client starts this "
            "command and speaks JSON-RPC on stdin/stdout (client set-ups: docs/clients.md); Ctrl-D stops it. "
            "From a shell: --reindex, --status, call kb_search --query '...' (see --help).",
            file=sys.stderr,
        )
    serve(ws)
    return 0


def run() -> None:
    """Console-script entry point: ``main`` plus a quiet exit when stdout is closed early (``| head``)
    or on Ctrl-C (exit 130)."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:  # Ctrl-C at a terminal: the index and files are closed already, no traceback
        print("local-vector-search-mcp: interrupted.", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    run()
