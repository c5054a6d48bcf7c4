"""The path guard: every path a client sends goes through it.

Only root-relative paths are accepted. A path is refused with
``INVALID_PATH`` when it is absolute or rooted (``/x``, ``\\x``, ``C:x``), has
an empty, ``.`` or ``..`` component, a component ending in a space or dot, a
control or reserved character (``< > : " | ? *``), a Windows device name
(``CON``, ``NUL``, ``COM1`` ...), a ``.git`` component, names the index's own
files, or crosses a symbolic link (checked component by component with
``lstat``, dangling links included), so nothing outside the root is ever read
or written. Messages never contain absolute paths.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import unicodedata
from collections.abc import Collection
from pathlib import Path

from .errors import InvalidArgument, InvalidPath, PermissionDenied

__all__ = ["PathGuard", "RefusedPath", "close_paths", "not_utf8", "shown_name", "spelled_on_disk"]

_RESERVED_CHARS = set('<>:"|?*')
_DEVICE = re.compile(r"^(con|prn|aux|nul|com[1-9]|lpt[1-9])$", re.IGNORECASE)
# C0, DEL and C1 (U+0080-U+009F): what .NET's char.IsControl calls control characters, which the
# reference's guard refuses; a NEL (U+0085) in a name is as invisible as a tab (decision 890)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # regexes, not a loop per character: discovery checks every path
# A name of these characters that does not end in a space or a dot breaks no rule of a path
# component (no reserved, control or non-ASCII character, no separator, not `.` or `..`) unless
# it starts like a device name or is `.git` (both checked apart): the guard need not look further.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9 _.+,;=@!#$%&'()\[\]{}~^`-]*[A-Za-z0-9_+,;=@!#$%&'()\[\]{}~^`-]")
_DEVICE_HEADS = frozenset({"con", "prn", "aux", "nul", "com", "lpt"})


def not_utf8(name: str) -> bool:
    """Whether ``name`` holds a surrogate code point: a file name that is not valid UTF-8 on disk
    (``os.fsdecode`` turns its bytes into lone surrogates), or such a code point sent by a client.
    No tool can name, store or return such a path (decision 284)."""
    return not name.isascii() and _SURROGATE.search(name) is not None


def shown_name(name: str) -> str:
    """A file name as text that JSON can carry: undecodable bytes as ``\\xff`` escapes."""
    return os.fsencode(name).decode("utf-8", "backslashreplace") if not_utf8(name) else name


class RefusedPath(InvalidPath):
    """INVALID_PATH for one path, with the guard's reason alone (``why``) and whether the path is
    one of the server's own files (``internal``: ``.git``, the index's files), which walks leave
    out silently; any other refused name found on disk is named to the agent (decision 291)."""

    def __init__(self, shown: str, why: str, *, internal: bool = False) -> None:
        super().__init__(f"Path not permitted: {shown}: {why}.")
        self.why = why
        self.internal = internal


class PathGuard:
    def __init__(self, root: Path, storage_path: Path, state_dir: Path | None = None) -> None:
        self.root = root
        self._index_file: str | None = None
        self._index_dir: str | None = None
        self._state_dir: str | None = None
        # the lock folder is never part of the knowledge base either
        if state_dir is not None and state_dir.is_relative_to(root) and state_dir != root:
            self._state_dir = state_dir.relative_to(root).as_posix().lower()
        try:
            rel = storage_path.relative_to(root)
        except ValueError:
            rel = None
        if rel is not None:
            self._index_file = rel.as_posix().lower()
            if storage_path.parent.name == ".local-vector-search-mcp" and len(rel.parts) > 1:
                self._index_dir = Path(*rel.parts[:-1]).as_posix().lower()

    # ------------------------------------------------------------------ checks

    def normalise(self, path: str, *, field: str = "path") -> str:
        """Validate the syntax of ``path`` and return it with ``/`` separators."""
        if not isinstance(path, str) or not path.strip():
            raise InvalidPath(f"Path not permitted: {field} must be a non-empty root-relative path.")
        if _CONTROL.search(path):
            raise RefusedPath(repr(path), "control characters are not allowed")
        if not_utf8(path):
            raise RefusedPath(repr(path), "the name is not valid UTF-8")
        text = path.replace("\\", "/")
        if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
            raise InvalidPath(
                f"Path not permitted: {field} must be relative to the knowledge-base root; "
                f"absolute paths are not allowed. {self._relative_form(path, field)}"
            )
        shown = repr(text)
        parts = text.split("/")
        for part in parts:
            if part in ("", ".", ".."):
                raise RefusedPath(shown, "empty, '.' and '..' components are not allowed")
            if part.endswith((" ", ".")):
                raise RefusedPath(shown, "a component must not end with a space or a dot")
            if _RESERVED_CHARS & set(part):
                raise RefusedPath(shown, 'the characters < > : " | ? * are not allowed')
            if _DEVICE.match(part.split(".")[0]):
                raise RefusedPath(shown, "reserved device names are not allowed")
            if part.lower() == ".git":
                raise RefusedPath(shown, ".git is not part of the knowledge base", internal=True)
        internal = self._internal(text, shown)
        if internal is not None:
            raise internal
        return text

    def _relative_form(self, path: str, field: str) -> str:
        """What to send instead of the absolute ``path`` (decision 1120): its root-relative form when it
        lies under the root (agents often send the full path they saw in a terminal), else the shape
        of one. The root itself is never shown (decision 9)."""
        if path.startswith("/"):
            full = os.path.normpath(path)
            for root in dict.fromkeys((str(self.root), os.path.realpath(self.root))):
                if full.startswith(root.rstrip("/") + "/"):
                    rel = full[len(root.rstrip("/")) + 1 :]
                    return f"Under the root it is {rel!r}: send {field} {rel!r}."
        return f"Send {field} as kb_list_files lists paths (e.g. 'docs/notes.md')."

    def _internal(self, text: str, shown: str) -> RefusedPath | None:
        """The refusal of ``text`` (normalised) when it is one of the server's own files, else None."""
        lowered = text.lower()
        if (
            (
                self._index_file
                and (
                    lowered == self._index_file
                    or lowered.startswith(self._index_file + "-")
                    or lowered.startswith(self._index_file + ".")
                )
            )
            or (self._index_dir and (lowered == self._index_dir or lowered.startswith(self._index_dir + "/")))
            or (self._state_dir and (lowered == self._state_dir or lowered.startswith(self._state_dir + "/")))
        ):
            return RefusedPath(shown, "the search index's own files are not part of the knowledge base", internal=True)
        return None

    def refuses(self, rel: str) -> bool:
        """Whether the tools refuse ``rel``: the server's own files (``.git``, the index's) and any
        name they cannot address (``nul.md``, control characters, ...); walks and the index skip them."""
        try:
            self.normalise(rel)
        except InvalidPath:
            return True
        return False

    def refusal(self, rel: str) -> RefusedPath | None:
        """Why the tools refuse ``rel`` (a root-relative path found on disk), or None."""
        try:
            self.normalise(rel)
        except RefusedPath as exc:
            return exc
        return None

    def refusal_in(self, folder: str, name: str) -> RefusedPath | None:
        """Why the tools refuse the entry ``name`` found on disk in ``folder``, a folder whose own
        path the guard accepts (``""``: the root); None when they take it. The answer of
        :meth:`refusal` for ``folder/name``, but a plain name (most names on disk) is checked alone,
        not every component of its path again: a listing asks for each of its entries (decision
        951). A name that would read as an absolute path or as no path at all (``\\x``, ``C:x``,
        ``" "`` in the root), where :meth:`refusal` raised, is refused like any other name."""
        rel = f"{folder}/{name}" if folder else name
        head = name[:4].lower()
        if _PLAIN_NAME.fullmatch(name) is not None and head[:3] not in _DEVICE_HEADS and head != ".git":
            text = rel.replace("\\", "/")  # as normalise() spells it (a folder may hold a backslash)
            return self._internal(text, repr(text))  # every rule of a component holds: only the own files remain
        try:
            self.normalise(rel)
        except RefusedPath as exc:
            return exc
        except InvalidPath:
            why = "a blank name is no path" if not rel.strip() else "a tool would read it as an absolute path"
            return RefusedPath(repr(rel), why)
        return None

    def resolve(self, path: str, *, field: str = "path", markdown: bool = False) -> tuple[str, Path]:
        """Return ``(normalised relative path, absolute path)``; refuse symlinks on the way.

        The target itself may not exist (callers decide whether that is NOT_FOUND);
        every component that does exist must be a real file or folder, not a link.
        """
        rel = self.normalise(path, field=field)
        if markdown and not rel.lower().endswith(".md"):
            raise RefusedPath(repr(rel), "this tool works on Markdown (.md) documents only")
        parts = rel.split("/")
        current = self.root
        for i, part in enumerate(parts):
            st = _lstat(current / part, rel, self.root)
            if st is None:
                spelled = _spelled_on_disk(current, part, rel)
                if spelled is None:
                    break  # the rest does not exist yet: nothing to follow
                parts[i] = part = spelled
                st = _lstat(current / part, rel, self.root)
                if st is None:
                    break  # removed meanwhile: as if it had never been there
            current = current / part
            if stat.S_ISLNK(st.st_mode):
                raise RefusedPath(repr(rel), "symbolic links are not followed")
        if parts != rel.split("/"):
            rel = self.normalise("/".join(parts), field=field)  # the name on disk passes the same rules
        return rel, self.root.joinpath(*parts)

    def respelled(self, src_rel: str, target: str, *, field: str = "targetPath") -> tuple[str, Path]:
        """For a move whose ``target`` resolved to its own source ``src_rel``: the source renamed to the
        last component as the caller spelled it, when that differs only in Unicode normalisation (a
        Mac's NFD name made NFC, decision 505); ``InvalidArgument`` when the target is the source itself."""
        asked = self.normalise(target, field=field).rsplit("/", 1)[-1]
        folder, _, name = src_rel.rpartition("/")
        if asked == name:
            raise InvalidArgument(f"{field} must differ from sourcePath.")
        rel = f"{folder}/{asked}" if folder else asked
        return rel, self.root.joinpath(*rel.split("/"))


def _lstat(path: Path, rel: str, root: Path | None = None) -> os.stat_result | None:
    """``os.lstat(path)``, None when it does not exist; any other failure refuses ``rel``.

    A folder on the way that the operating system will not let us look into is PERMISSION_DENIED,
    as an unreadable file is: the path is safe, the server lacks the right (decision 1030)."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except PermissionError as exc:  # EACCES, EPERM
        raise PermissionDenied(
            f"The operating system refused to look into a folder on the way to {rel!r} ({exc.strerror})."
        ) from None
    except NotADirectoryError:
        # `notes.md/x.md`: a file stands where the path needs a folder (decision 1116)
        file = rel.split("/")[: len(path.relative_to(root).parts) - 1] if root is not None else []
        above = f"{'/'.join(file)!r} is a file" if file else "a component on the way is a file"
        raise RefusedPath(repr(rel), f"{above}, not a folder, so nothing can be under it") from None
    except OSError as exc:
        raise RefusedPath(repr(rel), f"it cannot be inspected ({exc.strerror})") from None


def spelled_on_disk(root: Path, rel: str) -> str | None:
    """``rel`` (root-relative, ``/``-separated) as its entries are spelled on disk, read as
    :meth:`PathGuard.resolve` reads it (decision 505): a component there as written is that entry,
    else one outside ASCII is the one entry of its folder equal to it after NFC. None when a
    component is missing, or two entries could be meant (the guard refuses those). For readers
    that follow a link without the guard's other checks (a move planning its rewrites)."""
    parts = rel.split("/")
    current = root
    for i, part in enumerate(parts):
        if not os.path.lexists(current / part):
            try:
                spelled = _spelled_on_disk(current, part, rel)
            except RefusedPath:
                return None
            if spelled is None:
                return None
            parts[i] = spelled
        current = current / parts[i]
    return "/".join(parts)


def _spelled_on_disk(folder: Path, part: str, rel: str) -> str | None:
    """The one entry of ``folder`` whose name is ``part`` after NFC normalisation, when ``part``
    itself is not there (decision 505). A Mac writes ``é`` as ``e`` + U+0301 (NFD) and copies keep
    it; an agent types the composed form. Both look the same to everyone, so a path naming a file
    in the other form names that file. Two entries that differ only in normalisation, neither
    spelled as asked, are refused: guessing could edit or delete the wrong one."""
    if part.isascii():
        return None  # ASCII is its own normal form (only singletons such as U+212A KELVIN SIGN fold into it)
    wanted = unicodedata.normalize("NFC", part)
    try:
        names = os.listdir(folder)
    except OSError:
        return None  # a missing or unreadable folder: the caller's walk stops here as before
    found = [name for name in names if (name if name.isascii() else unicodedata.normalize("NFC", name)) == wanted]
    if len(found) > 1:
        spelled = ", ".join(sorted(ascii(name) for name in found))
        raise RefusedPath(
            repr(rel),
            f"{len(found)} entries differ from {part!a} only in Unicode normalisation ({spelled}); "
            "name one exactly as kb_list_files spells it",
        )
    return found[0] if found else None


CLOSE_SPELLING_MAX_PATHS = 20_000  # beyond this many, only names are compared (difflib is ~5 us a path)


def close_paths(rel: str, paths: Collection[str], limit: int = 3) -> list[str]:
    """The paths of ``paths`` an agent that sent ``rel``, which does not exist, may have meant, at
    most ``limit``: ``rel`` in another case or Unicode form, then its file name in other folders
    (those sharing more of its folders first), then paths spelled nearly like it (difflib's ratio
    0.8: ``guide/instal.md``, ``guide/install.md`` without its ``docs/``). Decision 1099."""
    want = unicodedata.normalize("NFC", rel).casefold()
    name = want.rsplit("/", 1)[-1]
    folded = {p: unicodedata.normalize("NFC", p).casefold() for p in paths}
    same = [p for p, f in folded.items() if f == want]
    folders = set(want.split("/")[:-1])
    named = sorted(
        (p for p, f in folded.items() if f != want and f.rsplit("/", 1)[-1] == name),
        key=lambda p: (-len(folders.intersection(folded[p].split("/")[:-1])), p),
    )
    spelled: list[str] = []
    if len(folded) <= CLOSE_SPELLING_MAX_PATHS:
        spelled = difflib.get_close_matches(rel, sorted(folded), n=limit, cutoff=0.8)
    return list(dict.fromkeys([*sorted(same), *named, *spelled]))[:limit]
