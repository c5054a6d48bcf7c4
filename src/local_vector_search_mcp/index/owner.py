"""Which knowledge base a SQLite index file belongs to (decisions 535-537).

One ``storage.path`` shared by two projects (an absolute path in a copied configuration, one
global ``--storage-path`` in an MCP client's settings) made each project's reindex delete the
other's documents, chunk-API data included, without a word. The file now records the resolved
knowledge-base root it indexes, and a store opened for another root asks :func:`verdict`:

* the same folder: the index is this project's;
* nothing recorded (an index from before this record), or the recorded folder is gone (the
  project was moved or renamed): this project adopts it;
* the index file lies inside this knowledge base's folder (a project folder copied with its
  state folder): adopted too, a file there can only be this knowledge base's;
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

__all__ = ["IndexOfAnotherProject", "Owner", "Verdict", "refusal", "verdict"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Owner:
    """The knowledge base a store indexes, as it claims its file."""

    root: Path  # resolved knowledge-base root
    holds_file: bool  # the index file lies inside the knowledge-base root


class Verdict(Enum):
    OURS = "ours"
    ADOPT = "adopt"
    REFUSE = "refuse"


class IndexOfAnotherProject(IndexNotReady):
    """The index file records another knowledge base that still exists (decision 535)."""


def _same(recorded: str, root: Path) -> bool:
    if recorded == str(root):
        return True
    try:
        return os.path.samefile(recorded, root)  # one folder reached by two paths (a symlink)
    except OSError:
        return False


def verdict(recorded: str | None, owner: Owner) -> Verdict:
    if recorded is not None and _same(recorded, owner.root):
        return Verdict.OURS
    if recorded is None or not Path(recorded).is_dir() or owner.holds_file:
        return Verdict.ADOPT
    return Verdict.REFUSE


def refusal(recorded: str, owner: Owner, logged: bool = True) -> IndexOfAnotherProject:
    """INDEX_NOT_READY naming both folders by name (messages never carry absolute paths,
    errors.py); the full paths go to the log, which only the machine's user reads (once per
    store and file when ``logged``: a server refuses every call, the log need not repeat it)."""
    if logged:
        log.warning(
            "the index file at storage.path belongs to the knowledge base %s, not to this one (%s): "
            "give this project its own storage.path",
            recorded,
            owner.root,
        )
    other, this = Path(recorded).name or recorded, owner.root.name or str(owner.root)
    return IndexOfAnotherProject(
        f"The index file at the configured storage.path belongs to another knowledge base: it indexes the "
        f"folder {other!r}, which still exists, and this project's folder is {this!r} (the full paths of "
        "both are in the server's log). Nothing in it was used or changed. Give this project its own "
        "storage.path (CLI: --storage-path); if that other folder no longer uses this index, delete the "
        "index file and reindex."
    )
