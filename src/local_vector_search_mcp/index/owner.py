"""Which knowledge base a SQLite index file belongs to (decisions 535-537, 550-552).

One ``storage.path`` shared by two projects (an absolute path in a copied configuration, one
global ``--storage-path`` in an MCP client's settings) made each project's reindex delete the
other's documents, chunk-API data included, without a word. The file now records the resolved
knowledge-base root it indexes, and where the file itself lay then; a store opened for another
root asks :func:`verdict`:

* the same folder: the index is this project's;
* nothing recorded (an index from before this record), or the recorded folder is gone (the
  project was moved or renamed): this project adopts it;
* the index file lies inside this knowledge base's folder and is not where it was recorded (a
  project folder copied with its state folder): adopted too;
* the file is no longer where it was recorded, and lies where this knowledge base's copy of it
  would (the same relative place from the root, as in a copied project whose ``root: docs``
  leaves the state folder beside the knowledge base): adopted, it travelled with the folder;
* otherwise the index belongs to another project that still exists: refused, nothing written.

PostgreSQL records nothing: several machines share one schema by design, each at its own path.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ..errors import IndexNotReady

__all__ = ["IndexOfAnotherProject", "Owner", "Verdict", "needs_file_record", "refusal", "verdict"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Owner:
    """The knowledge base a store indexes, as it claims its file."""

    root: Path  # resolved knowledge-base root
    holds_file: bool  # the index file lies inside the knowledge-base root
    file: Path | None = None  # the resolved index file, recorded beside the root (decision 550)
    project_root: Path | None = None  # the refusal names folders relative to it (decision 551)


class Verdict(Enum):
    OURS = "ours"
    ADOPT = "adopt"
    REFUSE = "refuse"


class IndexOfAnotherProject(IndexNotReady):
    """The index file records another knowledge base that still exists (decision 535)."""


def _same(recorded: str, path: Path) -> bool:
    if recorded == str(path):
        return True
    try:
        return os.path.samefile(recorded, path)  # one folder reached by two paths (a symlink)
    except OSError:
        return False


def _travelled_with_root(recorded: str, recorded_file: str | None, owner: Owner) -> bool:
    """The file left the place it was recorded at and keeps its place relative to the root: the
    knowledge base and its index were copied (or moved) together. A file still at its recorded
    place is the one the recorded folder uses, whatever root opens it (decision 550)."""
    if recorded_file is None or owner.file is None or _at_recorded_place(recorded_file, owner):
        return False
    try:
        return os.path.relpath(recorded_file, recorded) == os.path.relpath(owner.file, owner.root)
    except ValueError:  # another drive (Windows): no relative place to compare
        return False


def verdict(recorded: str | None, owner: Owner, recorded_file: str | None = None) -> Verdict:
    if recorded is not None and _same(recorded, owner.root):
        return Verdict.OURS
    if recorded is None or not Path(recorded).is_dir():
        return Verdict.ADOPT
    if owner.holds_file and not _at_recorded_place(recorded_file, owner):
        # 536's copy. A file still at its recorded place is the recorded folder's even when it lies
        # inside this root: `root: docs` keeps it beside docs/, so inside the project root (decision 982).
        return Verdict.ADOPT
    if _travelled_with_root(recorded, recorded_file, owner):
        return Verdict.ADOPT
    return Verdict.REFUSE


def _at_recorded_place(recorded_file: str | None, owner: Owner) -> bool:
    return recorded_file is not None and owner.file is not None and _same(recorded_file, owner.file)


def needs_file_record(recorded_file: str | None, owner: Owner) -> bool:
    """The file is ours but records no place, or another one (an index of decision 535's time, a
    file moved by hand): record where it is, so that a later copy of the project is recognised."""
    return owner.file is not None and (recorded_file is None or not _same(recorded_file, owner.file))


def _tail(path: Path, other: Path) -> str:
    """The end of ``path`` that tells it from ``other``: names from the end up to the first that
    differs (``.../work/kb`` and ``.../copy/kb``, where the last names alone are both ``kb``)."""
    mine = [name for name in path.parts if name != path.anchor][::-1]
    theirs = [name for name in other.parts if name != other.anchor][::-1]
    if not mine:
        return path.anchor  # the file system's root
    n = 1
    while n < len(mine) and n <= len(theirs) and mine[n - 1] == theirs[n - 1]:
        n += 1
    shown = "/".join(reversed(mine[:n]))
    return shown if n == len(mine) else f".../{shown}"


def _name(path: Path, other: Path, project_root: Path | None) -> str:
    """A folder as the refusal names it: relative to the project root (``'docs'``, ``'../alpha'``)
    or, without one, by the end that tells it from the other folder; never an absolute path."""
    if project_root is not None:
        try:
            rel = Path(os.path.relpath(path, project_root)).as_posix()
        except ValueError:
            rel = ""
        if rel == ".":
            return "the project root itself"
        if rel:
            return f"the folder {rel!r}"
    return f"the folder {_tail(path, other)!r}"


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def refusal(recorded: str, owner: Owner, logged: bool = True, label: str | None = None) -> IndexOfAnotherProject:
    """INDEX_NOT_READY naming both folders so that a user can tell them apart, relative to the
    project root (messages never carry absolute paths, errors.py), and what to do; the full paths
    go to the log, which only the machine's user reads (once per store and file when ``logged``:
    a server refuses every call, the log need not repeat it)."""
    if logged:
        log.warning(
            "the index file at storage.path belongs to the knowledge base %s, not to this one (%s): "
            "give this project its own storage.path",
            recorded,
            owner.root,
        )
    where = owner.project_root
    other, this = _name(Path(recorded), owner.root, where), _name(owner.root, Path(recorded), where)
    relative = "folders relative to the project root; " if where is not None else ""
    # both inside one project: the likely cause is a root given one way when indexing and another
    # when serving (`--root docs` against a config's root, decision 996), not two projects
    same_project = where is not None and all(_inside(Path(p), where) for p in (recorded, owner.root))
    mixed_up = (
        "If both are meant to be the same, this server was started with another knowledge-base root than "
        "the one the index was built with (--root, knowledgeBase.root or the config file differ): start it "
        "as you indexed, or delete the index file and reindex with the options you serve with. "
        if same_project
        else ""
    )
    return IndexOfAnotherProject(
        f"The index file {label or 'at the configured storage.path'} belongs to another knowledge base: it "
        f"indexes {other}, which still exists, while this project's knowledge base is {this} ({relative}the "
        f"full paths of both are in the server's log). Nothing in it was used or changed. {mixed_up}"
        "Give this project its own storage.path (CLI: --storage-path) and reindex; if this project is a "
        "copy of that one, `local-vector-search-mcp index copy --from sqlite:<this index file> "
        "--to sqlite:<its new file>` fills the new file without reindexing. If that folder no longer "
        "uses this index (a knowledge-base root changed, a project replaced), delete the index file and "
        "reindex; --reindex --force does not take it over."
    )
