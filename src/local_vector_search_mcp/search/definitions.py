"""Definitions: an identifier finds the list item or table row that defines it (decision 1057).

API references define most names not in a heading of their own but as the first thing of a list
item or a table row: ``* **keepAliveTimeout** `number` - ...`` in the options of ``new Client``,
``| `index.knn` | Boolean | ...`` in a settings table, ``- `--save-dev`: ...``. BM25 normalises
by length, so the long chunk holding the whole option list ranks below short examples and notes
that use the name once or twice. A one-piece query that reads as code (``fusion.looks_like_code``)
therefore moves the lexical hits whose text *defines* it ahead of the hits that only mention it,
keeping their order: the name opens a list item or a table row (written as code or in bold, or
bare before a ``:`` or `` - `` that starts its description), or a line before such a separator. A heading naming it
(``titles.py``) still goes first: the promotion runs before that one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..index.port import ChunkHit
from .fusion import looks_like_code

__all__ = ["defined_name", "defines", "promote_defined"]

_CALL = re.compile(r"\(\)$")


def defined_name(query: str) -> str | None:
    """The name a definition of ``query`` would open with: the one piece of code it is, without
    backticks or an empty call (``hijack()`` -> ``hijack``); ``None`` for anything else."""
    pieces = query.split()
    if len(pieces) != 1 or not looks_like_code(pieces[0]):
        return None
    name = _CALL.sub("", pieces[0].strip("`"))
    return name or None


@lru_cache(maxsize=64)
def _opening(name: str) -> re.Pattern[str]:
    """A line whose first thing is ``name`` as a term: after a list marker or a table's first pipe,
    in backticks or bold (anything may follow) or bare before a separator (``:``, `` -``, `` —``);
    at the start of any other line only before a separator, marked or not: a wrapped paragraph's
    line may start with a name the sentence merely mentions."""
    n = re.escape(name)
    marked = rf"(?:\*\*|__)?`{n}(?:\(\))?`(?:\*\*|__)?|(?:\*\*|__){n}(?:\(\))?(?:\*\*|__)"
    separator = r"(?=[ \t]*(?::|[ \t]-[ \t]|[ \t]\u2014))"
    item = rf"[ \t]*(?:[-*+][ \t]+|\d{{1,9}}[.)][ \t]+|\|[ \t]*)(?:{marked}|{n}{separator})"
    line = rf"[ \t]*(?:{marked}|{n}){separator}"
    return re.compile(rf"^(?:{item}|{line})(?![\w.$])", re.MULTILINE)


# a fenced code block: its lines are code (a YAML example's ``cluster.name: my-cluster`` sets the name,
# it does not define it)
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)


def defines(text: str, name: str) -> bool:
    """Whether ``text`` has a line outside code that opens with ``name`` (see :func:`_opening`)."""
    if name not in text:
        return False
    if "```" in text or "~~~" in text:
        text = _FENCE.sub("", text)
    return _opening(name).search(text) is not None


def promote_defined(hits: Sequence[ChunkHit], query: str) -> list[ChunkHit]:
    """``hits`` with those defining ``query``'s name first (each group in its own order)."""
    name = defined_name(query)
    if name is None:
        return list(hits)
    first = [h for h in hits if defines(h.text, name)]
    if not first:
        return list(hits)
    ids = {h.chunk_id for h in first}
    return first + [h for h in hits if h.chunk_id not in ids]
