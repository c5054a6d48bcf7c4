"""Where a saved image goes and how it is linked (contract §11.2 steps 7-9).

Without ``targetPath`` an image lands in ``images/`` under, in this order, the caller's
``fileName``, the stem of the upload's own ``file_name`` when that is portable, or a
generated ``image-YYYYMMDD-HHMMSS-<12 hex>``; a taken name gets ``-2``, ``-3``, ...
before the extension. Names must be portable (valid on Windows too), because knowledge
bases are shared through Git between machines.
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from ..errors import InvalidArgument
from .formats import ImageFormat

__all__ = [
    "DEFAULT_FOLDER",
    "MAX_NAME_BYTES",
    "MAX_SUFFIX",
    "check_file_name",
    "generated_stem",
    "markdown_link",
    "name_candidates",
    "name_too_long",
    "portable_problem",
    "skip_case_variants",
    "split_extension",
    "upload_stem",
]

DEFAULT_FOLDER = "images"
MAX_SUFFIX = 10_000
"""Give up (ALREADY_EXISTS) after ``name-10000``: a folder that full is a mistake, not a naming problem."""

MAX_NAME_BYTES = 255
"""A file name's limit in UTF-8 bytes on Linux file systems (ext4, XFS, Btrfs): decision 440."""

_RESERVED = set('<>:"/\\|?*')
_DEVICE = re.compile(r"^(con|prn|aux|nul|com[1-9]|lpt[1-9])$", re.IGNORECASE)


def portable_problem(name: str) -> str | None:
    """Why ``name`` is not a portable file name (no folder), or None when it is."""
    if not name.strip():
        return "it is blank"
    if name in (".", ".."):
        return "'.' and '..' are not file names"
    if any(ord(c) < 32 or 127 <= ord(c) <= 159 for c in name):  # C0, DEL, C1: as the path guard (decision 890)
        return "it contains control characters"
    if _RESERVED & set(name):
        return 'it contains one of < > : " / \\ | ? * (a file name, not a path)'
    if name.endswith((" ", ".")):
        return "it ends with a space or a dot"
    if _DEVICE.match(name.split(".")[0]):
        return "it is a reserved device name"
    return None


def split_extension(name: str) -> tuple[str, str]:
    """``cover.png`` -> (``cover``, ``.png``); ``cover`` -> (``cover``, ``""``).

    The extension starts at the last dot, also at the first character: ``.png`` is an extension
    without a stem and ``.hidden`` the extension ``.hidden``, as the reference's .NET ``Path``
    reads them (decision 441), not a Unix hidden file's whole name.
    """
    dot = name.rfind(".")
    if dot < 0:
        return name, ""
    return name[:dot], name[dot:]


def check_file_name(name: str) -> tuple[str, ImageFormat | None]:
    """Validate the caller's ``fileName`` before anything is downloaded.

    Returns the stem and the format its extension names (None without an extension).
    Any other extension is refused: guessing whether ``notes.txt`` meant a stem with a
    dot would save a file whose name lies about its content.
    """
    problem = portable_problem(name)
    if problem:
        raise InvalidArgument(f"fileName {name!r} is not a portable file name: {problem}.")
    stem, ext = split_extension(name)
    if not ext:
        return stem, None
    fmt = ImageFormat.from_extension(ext)
    if fmt is None:
        raise InvalidArgument(
            f"fileName {name!r} has the extension {ext!r}; use .png, .jpg, .jpeg, .webp or .gif, "
            "or leave the extension out to get the one matching the image."
        )
    if not stem.strip():
        raise InvalidArgument(f"fileName {name!r} is only an extension; give the image a name, e.g. 'cover{ext}'.")
    return stem, fmt


def upload_stem(file_name: str | None) -> str | None:
    """The stem of an upload's own name, when it is portable; None otherwise (a name is generated)."""
    if not file_name:
        return None
    base = file_name.replace("\\", "/").rsplit("/", 1)[-1]
    stem, _ = split_extension(base)
    if len(stem) > 200 or portable_problem(stem) or portable_problem(base):
        return None
    return stem


def generated_stem(now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return f"image-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(6)}"


def name_too_long(stem: str, ext: str) -> InvalidArgument | None:
    """The error for a caller's ``fileName`` that cannot be a file name once ``ext`` is on it."""
    size = len(f"{stem}{ext}".encode())
    if size <= MAX_NAME_BYTES:
        return None
    return InvalidArgument(
        f"fileName is too long: with the extension {ext} it is {size} bytes (UTF-8), "
        f"a file name holds at most {MAX_NAME_BYTES}; nothing was saved."
    )


def _fit(stem: str, tail: str) -> str:
    """``stem`` + ``tail``, the stem cut (at a character boundary) so the name fits :data:`MAX_NAME_BYTES`."""
    room = MAX_NAME_BYTES - len(tail.encode())
    raw = stem.encode()
    if len(raw) <= room:
        return f"{stem}{tail}"
    cut = raw[:room].decode("utf-8", errors="ignore").rstrip(" .")  # a cut must stay portable
    return f"{cut or 'image'}{tail}"


def name_candidates(stem: str, ext: str) -> Iterator[str]:
    """``stem.ext``, ``stem-2.ext``, ``stem-3.ext``, ... up to :data:`MAX_SUFFIX`.

    Every name fits :data:`MAX_NAME_BYTES`: where the stem and suffix would not, the stem's end
    gives way to the suffix (decision 440), so a long name that is taken still gets ``-2``.
    """
    yield _fit(stem, ext)
    for n in range(2, MAX_SUFFIX + 1):
        yield _fit(stem, f"-{n}{ext}")


def skip_case_variants(names: Iterable[str], existing: Iterable[str]) -> Iterator[str]:
    """``names`` without those naming the same file as one of ``existing`` on a case-insensitive,
    normalising file system (Windows, macOS): a chosen name must not clash once the knowledge base
    is checked out there (decision 442)."""
    taken = {_fold(name) for name in existing}
    return (name for name in names if _fold(name) not in taken)


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def markdown_link(alt_text: str, path: str) -> str:
    """``![alt](path)``: alt on one line with ``\\ [ ]`` escaped; the path in ``<...>`` when needed.

    A destination is percent-decoded and cut at ``#`` by every Markdown reader (ours too: the PDF
    export, kb_links, ``updateLinks``), so ``%`` and ``#`` in the name are written ``%25`` and ``%23``,
    as kb_move writes them (decisions 452, 760); ``?`` cannot occur (the path guard refuses it).
    """
    alt = alt_text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    alt = alt.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    destination = path.replace("%", "%25").replace("#", "%23")
    if re.search(r"[\s()]", destination):
        destination = f"<{destination}>"
    return f"![{alt}]({destination})"
