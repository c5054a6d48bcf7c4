"""`--reindex`'s progress bar on a terminal: a cut path says it is cut."""

from __future__ import annotations

import io

from local_vector_search_mcp.handlers.indexing import _ProgressBar
from local_vector_search_mcp.index.indexer import Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_path_shows_its_end_marked_as_cut() -> None:
    out = _Terminal()
    bar = _ProgressBar(out)
    bar(Progress(scope="changed", force=False, processed_files=3, total_files=9, current_path="guide/" * 3 + "x.md"))
    line = out.getvalue()
    assert "3/9 guide/guide/guide/x.md" in line  # short enough: whole
    bar._last = 0.0
    long = "guide/essentials/reactivity-fundamentals.md"
    bar(Progress(scope="changed", force=False, processed_files=4, total_files=9, current_path=long))
    shown = out.getvalue().rsplit("\r", 1)[1].split("4/9 ", 1)[1].rstrip()
    assert shown.startswith("...") and long.endswith(shown[3:]) and len(shown) == 40


def test_nothing_is_drawn_when_stderr_is_not_a_terminal() -> None:
    out = io.StringIO()
    _ProgressBar(out)(Progress(scope="changed", force=False, processed_files=1, total_files=2, current_path="a.md"))
    assert out.getvalue() == ""
