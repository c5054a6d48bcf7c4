"""Record which file-system paths the code under test opens or lists (a ``sys.addaudithook``).

Shared by the path-guard tests and the fault suite: both assert that nothing
outside the knowledge-base root is ever touched.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_RECORDING: list[list[str]] = []
_EVENTS = ("open", "os.scandir", "os.listdir", "os.lstat", "os.stat")


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _RECORDING and event in _EVENTS:
        target = args[0] if args else None
        if isinstance(target, (str, bytes, os.PathLike)):
            _RECORDING[-1].append(os.fsdecode(target))


sys.addaudithook(_audit)


class touched:
    """Context manager collecting the file-system paths opened or listed inside it (every thread)."""

    def __enter__(self) -> list[str]:
        _RECORDING.append([])
        return _RECORDING[-1]

    def __exit__(self, *exc: object) -> None:
        _RECORDING.pop()
