"""The error hierarchy: every expected failure a tool can report.

Each class carries one wire code from the catalogue in ``spec/errors.yaml``;
the server turns any :class:`KbError` into a tool result with ``isError: true``
and one JSON text block ``{"code": ..., "message": ...}``. Anything that is not
a ``KbError`` is reported as ``INTERNAL_ERROR`` with a generic message, so no
absolute path or stack trace ever leaks to a client.

::

    KbError                      INTERNAL_ERROR
    ├── InvalidArgument          INVALID_ARGUMENT
    ├── InvalidPath              INVALID_PATH
    ├── NotFound                 NOT_FOUND
    ├── AlreadyExists            ALREADY_EXISTS
    ├── Conflict                 CONFLICT  (with a ``reason``)
    ├── PermissionDenied         PERMISSION_DENIED
    ├── UnsupportedFormat        UNSUPPORTED_FORMAT
    ├── IndexNotReady            INDEX_NOT_READY
    └── PartialFailure           PARTIAL_FAILURE

Messages are written for the agent reading them: say what was wrong and what
to do next, never include absolute paths, document text or secrets.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

__all__ = [
    "LIST_DOCUMENTS",
    "LIST_FILES",
    "LIST_IMAGES",
    "AlreadyExists",
    "Conflict",
    "ConflictReason",
    "IndexNotReady",
    "InvalidArgument",
    "InvalidPath",
    "KbError",
    "NotFound",
    "PartialFailure",
    "PermissionDenied",
    "UnsupportedFormat",
    "folder_given",
    "missing_document",
]


# The next call of a refusal that names something missing (decision 1116): a message stating only
# that 'notes.md' was not found left an agent to guess where the documents are.
LIST_DOCUMENTS = "kb_list_files lists the documents that exist"
LIST_FILES = "kb_list_files lists the files that exist"
LIST_IMAGES = "kb_list_images lists the images that exist"


def folder_given(rel: str, wanted: str) -> str:
    """The words for a folder sent where a file belongs: what it is and how to see what it holds."""
    return f"{rel!r} is a folder, not {wanted}; kb_list_files with pathPrefix {rel!r} lists what it holds."


class KbError(Exception):
    """Base of every expected failure; ``code`` is its wire code."""

    code = "INTERNAL_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_wire(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class InvalidArgument(KbError):
    code = "INVALID_ARGUMENT"


class InvalidPath(KbError):
    code = "INVALID_PATH"


class NotFound(KbError):
    code = "NOT_FOUND"

    def __init__(self, message: str, document: str | None = None) -> None:
        super().__init__(message)
        self.document = document  # the missing Markdown document's path: close ones may be named


def missing_document(rel: str, close: Sequence[str] = ()) -> NotFound:
    """The refusal for a Markdown document that does not exist, in the contract's words, then the
    existing documents an agent may have meant (``close``: the dispatcher looks them up, decision
    1099) and where the documents are listed."""
    meant = f" Did you mean {', '.join(repr(p) for p in close)}?" if close else ""
    return NotFound(f"Document {rel!r} was not found.{meant} {LIST_DOCUMENTS}.", document=rel)


class AlreadyExists(KbError):
    code = "ALREADY_EXISTS"


class ConflictReason(StrEnum):
    """Why an anchor or a guarded write was refused (see spec/decisions.md)."""

    SELF_HASH_MISMATCH = "self_hash_mismatch"
    TARGET_NOT_FOUND = "target_not_found"
    AMBIGUOUS = "ambiguous"
    SUBTREE_HASH_MISMATCH = "subtree_hash_mismatch"
    MISSING_SUBTREE_HASH = "missing_subtree_hash"
    RESERVED_POINTER = "reserved_pointer"
    SOURCE_CHANGED = "source_changed"
    AMBIGUOUS_SELECTOR = "ambiguous_selector"


class Conflict(KbError):
    code = "CONFLICT"

    def __init__(self, message: str, reason: ConflictReason = ConflictReason.SOURCE_CHANGED) -> None:
        super().__init__(message)
        self.reason = reason


class PermissionDenied(KbError):
    code = "PERMISSION_DENIED"


class UnsupportedFormat(KbError):
    code = "UNSUPPORTED_FORMAT"


class IndexNotReady(KbError):
    code = "INDEX_NOT_READY"


class PartialFailure(KbError):
    code = "PARTIAL_FAILURE"
