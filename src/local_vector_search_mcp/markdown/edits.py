"""What kb_patch operations are and the splices they become (contract §5).

An operation (:class:`PatchOperation`, or the plain :class:`Op`) names a kind,
an anchor and a Markdown fragment; planning (``planning.py``) turns each into
one :class:`Edit`, a splice of the old text. The helpers here are shared by the
planner, the fragment checks (``fragments.py``) and the structural validator
(``validate.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from local_vector_search_mcp.errors import InvalidArgument

from .kinds import ElementKind
from .model import Element

__all__ = [
    "DELETE",
    "DELETE_SECTION",
    "INSERT_AFTER",
    "INSERT_BEFORE",
    "KINDS",
    "NEWLINES",
    "NO_MARKDOWN",
    "REPLACE",
    "REPLACE_ELEMENT",
    "REPLACE_SECTION",
    "REPLACE_SUBTREE",
    "SUBTREE_KINDS",
    "Edit",
    "Op",
    "PatchOperation",
    "kind_name",
    "normalize_eol",
    "unsupported",
]

REPLACE = "replace"
REPLACE_ELEMENT = "replace_element"
REPLACE_SUBTREE = "replace_subtree"
REPLACE_SECTION = "replace_section"
DELETE_SECTION = "delete_section"
INSERT_BEFORE = "insert_before"
INSERT_AFTER = "insert_after"
DELETE = "delete"
KINDS = (
    REPLACE,
    REPLACE_ELEMENT,
    REPLACE_SUBTREE,
    REPLACE_SECTION,
    DELETE_SECTION,
    INSERT_BEFORE,
    INSERT_AFTER,
    DELETE,
)
NO_MARKDOWN = (DELETE, DELETE_SECTION)
SUBTREE_KINDS = (REPLACE_SUBTREE, REPLACE_SECTION, DELETE_SECTION)

NEWLINES = "\r\n"
_EOL_RE = re.compile(r"\r\n|\r|\n")


class PatchOperation(Protocol):
    """What ``plan_patch`` reads from an operation (the generated request model fits)."""

    @property
    def kind(self) -> str: ...

    @property
    def pointer(self) -> str: ...

    @property
    def markdown(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Op:
    """A plain operation, for callers that do not hold a request model."""

    kind: str
    pointer: str
    markdown: str | None = None


@dataclass(frozen=True, slots=True)
class Edit:
    """One splice: ``text`` replaces ``doc.text[start:end]``.

    ``claim_start``/``claim_end`` is the range the operation owns for overlap
    checks (a section operation owns its whole section). ``target`` is the
    resolved element (``None`` for ``document``); ``structured`` marks list and
    quote edits whose result must be exactly one new root element (§5.4).
    """

    start: int
    end: int
    text: str
    pointer: str
    kind: str
    claim_start: int
    claim_end: int
    target: Element | None = None
    structured: bool = False


def normalize_eol(markdown: str, eol: str) -> str:
    """Every line break of ``markdown`` becomes ``eol`` (§4.7)."""
    return _EOL_RE.sub(eol, markdown)


def unsupported(pointer: str, reason: str) -> InvalidArgument:
    return InvalidArgument(f"Unsupported Markdown structure at '{pointer}': {reason}")


def kind_name(kind: ElementKind) -> str:
    """``list item`` for ``list_item``: element kinds as messages spell them."""
    return kind.value.replace("_", " ")
