"""The line table every span is cut with (``markdown/source.py``)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.markdown.source import LineIndex


def _reference(text: str) -> LineIndex:
    """``\\r\\n``, ``\\r`` and ``\\n`` each end one line; ends exclude the break."""
    starts, ends = [0], []
    for match in re.finditer(r"\r\n|\r|\n", text):
        ends.append(match.start())
        starts.append(match.end())
    ends.append(len(text))
    return LineIndex(tuple(starts), tuple(ends), len(text))


# breaks of every kind, empty lines, text at both ends (the LF-only fast path and the general one)
_TEXT = st.lists(st.sampled_from(["\n", "\r\n", "\r", "a", "é", "  ", "\n\n", "x\ty"]), max_size=30).map("".join)


@given(_TEXT)
def test_the_line_table_matches_the_break_rule(text: str) -> None:
    assert LineIndex.build(text) == _reference(text)


def test_edges() -> None:
    assert LineIndex.build("") == LineIndex((0,), (0,), 0)
    assert LineIndex.build("a\n") == LineIndex((0, 2), (1, 2), 2)
    assert LineIndex.build("\n\nb") == LineIndex((0, 1, 2), (0, 1, 3), 3)
