"""Case-insensitive globs over root-relative, ``/``-separated paths.

The semantics follow .NET's FileSystemGlobbing, which the upstream contract
uses: ``**`` matches any number of folders (including none), ``*`` matches
within one path segment, ``?`` matches one character of a segment; everything
else is literal. ``**/*.md`` therefore matches ``a.md`` as well as ``x/y/a.md``.

Globs are blind to the Unicode normal form, as paths are (decision 505): the pattern and the path
are compared in NFC, so ``Café*`` typed composed matches a name a Mac wrote decomposed (decision
529). The SQL engines compare ``normalize(path, NFC)`` the same way.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from .errors import InvalidArgument

__all__ = ["GlobSet", "compile_glob", "nfc", "posix_regex", "posix_regex_literal", "root_only", "validate_glob"]


def nfc(text: str) -> str:
    """``text`` in NFC; an ASCII text (nearly every path) as it is, without a look at each character."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def validate_glob(pattern: str, field: str = "glob") -> str:
    """Return the normalised pattern (``/`` separators, NFC) or raise :class:`InvalidArgument`."""
    if not pattern or not pattern.strip():
        raise InvalidArgument(f"{field} must not be blank.")
    if any(ord(c) < 32 or ord(c) == 127 for c in pattern):
        raise InvalidArgument(f"{field} must not contain control characters.")
    if pattern[0] in "/\\":
        raise InvalidArgument(f"{field} {pattern!r} must be relative to the knowledge-base root (no leading slash).")
    if ":" in pattern:
        raise InvalidArgument(f"{field} {pattern!r} must not contain ':'.")
    if any(segment == ".." for segment in pattern.replace("\\", "/").split("/")):
        raise InvalidArgument(f"{field} {pattern!r} must not contain a '..' segment.")
    kept = _net_segments(pattern)
    if not kept or kept == [""]:
        raise InvalidArgument(f"{field} {pattern!r} names the root folder itself, not files; e.g. '**/*.md'.")
    return nfc("/".join(kept))


def _net_segments(pattern: str) -> list[str]:
    """The segments of ``pattern`` as .NET's globbing (its ``PatternBuilder``) reads them. Before
    decisions 691 and 852 the first three forms matched no path at all here, silently, and the
    last fewer paths than the contract's:
    - a `.` segment names the folder it stands in: `./docs/*.md` is `docs/*.md`;
    - a trailing slash names a folder, everything under it: `docs/` is `docs/**` (as gitignore
      and agents write a folder);
    - a segment `**.md` is `**` followed by `*.md`, every `.md` file at any depth;
    - a segment `*.*` is `*` (a name without a dot too)."""
    written = pattern.replace("\\", "/")
    folder = written.rstrip("/")
    segments: list[str] = []
    for segment in folder.split("/"):
        if segment == ".":
            continue
        if segment == "*.*":
            segment = "*"
        elif len(segment) > 2 and segment.startswith("**."):
            segments.append("**")
            segment = segment[1:]
        segments.append(segment)
    if segments and folder != written:
        segments.append("**")
    return segments


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    segments = pattern.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]*/)*")
            continue
        body = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment)
        parts.append(body if last else body + "/")
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


# ----------------------------------------------------------------------------- SQL engines
# A database engine evaluates the same glob as a POSIX regular expression (PostgreSQL's ``~``).
# Case-insensitivity is spelled out as bracket classes of each letter's case variants, the
# variants Python's ``re.IGNORECASE`` accepts, so the result does not depend on the database
# server's locale and equals :func:`compile_glob`'s.
_CASED_LIMIT = 0x1F000  # no cased character lies above (the last is U+1E943, Adlam)


@lru_cache(maxsize=1)
def _case_partners() -> dict[str, frozenset[str]]:
    """Characters grouped by their lower- and upper-case mappings (built once, under 0.1 s)."""
    groups: dict[str, set[str]] = {}
    for code in range(_CASED_LIMIT):
        ch = chr(code)
        for other in (ch.lower(), ch.upper()):
            if other != ch:
                other = other[0]  # a full mapping starts with the simple one (the filter below is exact)
                merged = groups.setdefault(ch, {ch}) | groups.setdefault(other, {other})
                for member in merged:
                    groups[member] = merged
    return {ch: frozenset(group) for ch, group in groups.items()}


@lru_cache(maxsize=4096)
def _posix_char(ch: str) -> str:
    partners = _case_partners().get(ch)
    if partners:
        accepted = sorted(p for p in partners if re.fullmatch(re.escape(ch), p, re.IGNORECASE))
        if len(accepted) > 1:
            return "[" + "".join(accepted) + "]"
    return ch if ch.isalnum() else "\\" + ch  # a backslash before a non-alphanumeric: that literal


def posix_regex(pattern: str, field: str = "glob") -> str:
    """``pattern`` as an anchored POSIX (PostgreSQL ARE) regular expression, case-insensitive by
    construction; the same paths match as with :func:`compile_glob` (validates the pattern)."""
    parts: list[str] = []
    segments = validate_glob(pattern, field).split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]*/)*")
            continue
        body = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else _posix_char(c) for c in segment)
        parts.append(body if last else body + "/")
    return "^(?:" + "".join(parts) + ")$"


def posix_regex_literal(text: str) -> str:
    """``text`` matched literally and case-insensitively, unanchored (to compose prefixes)."""
    return "".join(_posix_char(c) for c in text)


def compile_glob(pattern: str, field: str = "glob") -> Callable[[str], bool]:
    """Validate ``pattern`` and return a predicate over root-relative paths."""
    regex = _regex(validate_glob(pattern, field))
    return lambda path: regex.fullmatch(nfc(path)) is not None


def root_only(patterns: list[str]) -> bool:
    """Whether every pattern stays in the root folder and one of them is a wildcard (``*.md``):
    a user writing that most often means every Markdown file, as gitignore would read it, while
    these rules (the contract's .NET ones, shared with kb_search) take the root's files only.
    A literal name (``README.md``) means that file; any pattern with a ``/`` shows that the
    writer thinks in folders (decision 553)."""
    written = ["/".join(_net_segments(p)) for p in patterns]
    shallow = [p for p in written if "/" not in p and p.strip() != "**"]
    return bool(patterns) and len(shallow) == len(patterns) and any("*" in p or "?" in p for p in shallow)


class GlobSet:
    """Include/exclude lists: a path matches when some include and no exclude matches."""

    def __init__(self, include: list[str], exclude: list[str], field: str = "glob") -> None:
        self._include = [compile_glob(p, f"{field} include") for p in include] or [compile_glob("**/*")]
        self._exclude = [compile_glob(p, f"{field} exclude") for p in exclude]

    def __call__(self, path: str) -> bool:
        return any(m(path) for m in self._include) and not any(m(path) for m in self._exclude)
