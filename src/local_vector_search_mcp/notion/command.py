"""``local-vector-search-mcp notion push [--dry-run] [--parent PAGE_ID] [PATH ...]``.

Pushes every indexed-kind document (``.md`` files the include/exclude globs admit,
hidden folders skipped, as the indexer discovers them) or only the given paths,
and prints a JSON report. ``--dry-run`` needs neither a token nor the network: it
converts every document and counts the requests a push would send.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import ipaddress
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from ..config import ConfigError, Settings
from ..errors import KbError
from ..globs import GlobSet
from ..paths import PathGuard
from ..sourcefile import os_reason, read_source
from .client import NotionClient, NotionError, NotionPort
from .ids import ACCEPTED_FORMS, page_id
from .push import DryRunPort, Mapping, Pusher, PushReport

__all__ = ["MAPPING_FILE", "discover", "mapping_path", "run"]

MAPPING_FILE = "notion-pages.json"
LOCK_FILE = "notion-push.lock"


def mapping_path(settings: Settings) -> Path:
    """The mapping lives in the project's state folder, whatever the storage engine (decision 130)."""
    return settings.state_dir / MAPPING_FILE


def discover(root: Path, globs: GlobSet, unlisted: list[tuple[str, str]] | None = None) -> list[str]:
    """The documents to push; folders that cannot be listed go to ``unlisted`` as ``folder/``."""
    found = []

    def refused(exc: OSError) -> None:
        if unlisted is not None and exc.filename is not None and not isinstance(exc, FileNotFoundError):
            rel = os.path.relpath(exc.filename, root).replace(os.sep, "/")
            unlisted.append((f"{rel}/", f"The folder could not be listed ({os_reason(exc)})."))

    for dirpath, dirnames, filenames in os.walk(root, onerror=refused):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            if name.lower().endswith(".md"):
                rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
                if globs(rel):
                    found.append(rel)
    found.sort(key=lambda p: (p.lower(), p))
    return found


def _api_url(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    loopback = host == "localhost"
    with contextlib.suppress(ValueError):
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    if parts.scheme == "https" or (parts.scheme == "http" and loopback):
        return url
    raise ConfigError(f"notion.apiUrl {url!r} must be https (or http on a loopback address); the token is sent to it.")


def _parent(given: str | None, configured: str | None) -> str | None:
    """The parent page as the lowercase hyphenated id, from ``--parent`` else the configuration.

    The id keys the page mapping, so each spelling of one page must give the same key
    (decision 708); a value that names no page is refused before anything is read or sent.
    """
    value, source = (given, "--parent") if given else (configured, "notion.parentPageId")
    if not value:
        return None
    parent = page_id(value)
    if parent is None:
        raise ConfigError(f"{source} {value!r} is not a Notion page: give {ACCEPTED_FORMS}.")
    return parent


@contextlib.contextmanager
def _one_push_at_a_time(settings: Settings) -> Iterator[None]:
    """Hold ``notion-push.lock`` in the state folder for the whole push; refuse if another push holds it.

    Two pushes of one project each read the page mapping before the other wrote it, so both
    created a page for every new document and the last snapshot written forgot one of each pair
    (decision 1149). A dry run writes nothing and takes no lock.
    """
    path = settings.state_dir / LOCK_FILE
    shown = f"{path.parent.name}/{path.name}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ConfigError(f"The Notion push lock {shown} cannot be opened ({os_reason(exc)}).") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"Another notion push of this project is running (it holds {shown}); nothing was sent: "
                "push again when it has ended."
            ) from None
        except OSError:
            pass  # a file system without flock: as before, unguarded
        yield
    finally:
        os.close(fd)  # releases the lock


def _mapping(settings: Settings, dry_run: bool) -> Mapping:
    try:
        return Mapping(mapping_path(settings), persist=not dry_run)
    except NotionError as exc:  # a damaged file: one line and exit 1, not a traceback (decision 709)
        raise ConfigError(str(exc)) from None


def build_parser(
    prog: str, parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    # The CLI passes its own parser class (one message, exit 1) so this package never imports cli.
    parser = parser_class(prog=f"{prog} notion", description="One-way sync of the Markdown to Notion pages.")
    sub = parser.add_subparsers(dest="action", required=True, metavar="<action>")
    push = sub.add_parser(
        "push",
        help="create or update one Notion page per document (Markdown is never changed)",
        description="Create or update one Notion page per document under the parent page, archive the pages of "
        "removed documents; the Markdown is only read. The token comes from the variable notion.tokenEnv names "
        "(NOTION_TOKEN).",
    )
    push.add_argument("--dry-run", action="store_true", help="convert and plan only: no token, no request sent")
    push.add_argument("--parent", metavar="PAGE_ID", help="parent page: its id or URL (default: notion.parentPageId)")
    push.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="documents to push, relative to the knowledge-base root (default: all; only a full push archives)",
    )
    return parser


def run(
    settings: Settings, argv: list[str], parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> int:
    ns = build_parser("local-vector-search-mcp", parser_class).parse_args(argv)
    cfg = settings.config.notion
    parent = _parent(ns.parent, cfg.parent_page_id)
    if not parent and not ns.dry_run:
        raise ConfigError("notion push needs a parent page: set notion.parentPageId or pass --parent PAGE_ID.")
    kb = settings.config.knowledge_base
    globs = GlobSet(list(kb.include), list(kb.exclude))
    guard = PathGuard(settings.root, settings.storage_path, settings.state_dir)
    report = PushReport(dry_run=ns.dry_run)
    if ns.paths:
        try:
            resolved = [guard.resolve(p, markdown=True) for p in ns.paths]
        except KbError as exc:
            raise ConfigError(exc.message) from None
        # A document named on the command line that is not there is a mistake in the command, not
        # a file that vanished during the push: refused before anything is sent (decision 863).
        missing = [rel for rel, full in resolved if not os.path.lexists(full)]
        if missing:
            raise ConfigError(f"Documents not found under the knowledge-base root: {', '.join(map(repr, missing))}.")
        paths = [rel for rel, _ in resolved]
    else:
        paths = discover(settings.root, globs, report.skipped)
    token = "" if ns.dry_run else os.environ.get(cfg.token_env, "").strip()
    if not ns.dry_run and not token:
        raise ConfigError(f"notion push needs the integration token in the environment variable {cfg.token_env}.")
    with contextlib.ExitStack() as stack:
        if not ns.dry_run:
            stack.enter_context(_one_push_at_a_time(settings))
        return _push(settings, ns, parent, paths, report, token)


def _push(
    settings: Settings, ns: argparse.Namespace, parent: str | None, paths: list[str], report: PushReport, token: str
) -> int:
    cfg = settings.config.notion
    mapping = _mapping(settings, ns.dry_run)
    parent_id = parent or "dry-run-parent"
    port: NotionPort
    client: NotionClient | None = None
    dry: DryRunPort | None = None
    if ns.dry_run:
        pages = {e.page_id: [b for b, _ in e.blocks] for e in mapping.pages(parent_id).values()}
        port = dry = DryRunPort(lambda block_id: pages.get(block_id, []))
    else:
        port = client = NotionClient(
            token, base_url=_api_url(cfg.api_url), requests_per_second=float(cfg.requests_per_second)
        )

    code = 0
    try:
        documents = ((p, _read(settings.root, p, report)) for p in paths)
        Pusher(port, mapping, parent_id, settings.root).push(documents, report, prune=not ns.paths)
    except NotionError as exc:
        print(f"local-vector-search-mcp: {exc}", file=sys.stderr)
        code = 1
    finally:
        if client is not None:
            client.close()
        mapping.compact()  # the journal of this push into the snapshot, also after Ctrl-C (decision 860)
    report.requests = dry.calls if dry is not None else {"sent": client.requests if client else 0}
    print(json.dumps(report.to_wire(), ensure_ascii=False, indent=2))
    if report.failed:  # the others were pushed; these are tried again by the next push (decision 467)
        code = 1
        print(
            f"local-vector-search-mcp: {len(report.failed)} document(s) could not be pushed to Notion "
            '(see "failed" in the report); the next push tries them again.',
            file=sys.stderr,
        )
    if report.skipped:  # as --reindex: the rest was pushed, exit 0, the count said (decision 246)
        print(
            f"local-vector-search-mcp: {len(report.skipped)} document(s) or folder(s) could not be read "
            'and were skipped (see "skipped" in the report).',
            file=sys.stderr,
        )
    return code


def _read(root: Path, rel: str, report: PushReport) -> bytes | None:
    """The document's bytes, or None after naming it in ``report.skipped`` when it cannot be read."""
    try:  # a FIFO named .md must not hang the push, nor a link lead out of the root
        return read_source(root / rel, rel)
    except KbError as exc:
        report.skipped.append((rel, exc.message))
        return None
