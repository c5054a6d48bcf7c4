"""A folder of the root swapped for a link to a folder outside it in the middle of a write.

Another program can do that between the path guard's look and the write (``renameat2`` swaps
the two names atomically, over and over); decision 674 pins a write's folders so the write still
lands in the folder that was checked. :class:`LinkSwap` makes the swap happen at a known step:
just before the first call that changes the file system (a file created, linked, renamed or
unlinked), so a write that names its files by path again after the look goes outside.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

_CHANGES = ("link", "unlink", "replace", "rename")


class LinkSwap:
    def __init__(self, root: Path, folder: str, outside: Path) -> None:
        self.root, self.folder, self.outside = root, folder, outside
        self.real = root / f"{folder}.real"  # where the checked folder is once the link has its name
        self.done = False

    @classmethod
    def of_sub(cls, root: Path, tmp_path: Path) -> LinkSwap:
        """A swap of ``root/sub`` (made here) for a link to ``tmp_path/outside`` (made here, empty)."""
        (root / "sub").mkdir()
        (tmp_path / "outside").mkdir()
        return cls(root, "sub", tmp_path / "outside")

    def swap(self) -> None:
        self.done = True
        os.rename(self.root / self.folder, self.real)
        os.symlink(self.outside, self.root / self.folder)

    def arm(self, monkeypatch: pytest.MonkeyPatch, on: tuple[str, ...] = (*_CHANGES, "open")) -> None:
        """Swap once, right before the first change the code under test makes (of the kinds ``on``)."""
        real_open = os.open
        rename = os.rename

        def first(call: Any) -> Any:
            def wrapped(*args: Any, **kwargs: Any) -> Any:
                if self._a_document(args[0]):
                    monkeypatch.setattr(os, "rename", rename)  # the swap's own rename is not a trigger
                    self.swap()
                return call(*args, **kwargs)

            return wrapped

        def opening(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & os.O_CREAT and self._a_document(path):
                self.swap()
            return real_open(path, flags, *args, **kwargs)

        for name in _CHANGES:
            if name in on:
                monkeypatch.setattr(os, name, first(getattr(os, name)))
        if "open" in on:
            monkeypatch.setattr(os, "open", opening)

    def _a_document(self, path: Any) -> bool:
        """A change to the knowledge base's files (not the server's lock and state files)."""
        if self.done or not isinstance(path, str | Path):
            return False
        text = os.fspath(path)
        return ".local-vector-search-mcp" not in text and (text.startswith((str(self.root), "/proc/self/fd/")))

    def outside_names(self) -> list[str]:
        return sorted(p.name for p in self.outside.iterdir())
