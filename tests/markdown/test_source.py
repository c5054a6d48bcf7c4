"""The line table every span is cut with, and how undecodable bytes are refused (``markdown/source.py``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.errors import UnsupportedFormat
from local_vector_search_mcp.markdown.source import LineIndex, decode_markdown


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


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("# Notes\r\n".encode("utf-16"), "a UTF-16 byte order mark"),  # PowerShell 5's `>`: UTF-16 LE with its mark
        (b"\xfe\xff" + "# Notes\n".encode("utf-16-be"), "a UTF-16 byte order mark"),
        ("# Notes\n".encode("utf-32"), "a UTF-32 byte order mark"),  # starts like UTF-16 LE's mark: told apart
        ("# Caf\u00e9\n".encode("latin-1"), None),  # nothing in the bytes says what it is
    ],
)
def test_a_file_in_another_encoding_is_named_when_its_byte_order_mark_says_so(raw: bytes, named: str | None) -> None:
    """Decision 924: every undecodable file was "not valid UTF-8"; one whose byte order mark names
    its encoding now says which, and what to do, in kb_read's refusal and in kb_status's list."""
    with pytest.raises(UnsupportedFormat) as refused:
        decode_markdown(raw)
    message = refused.value.message
    assert message.startswith("The file is not valid UTF-8 text")
    if named is None:
        # the first byte that is not UTF-8 and its line, then what to do (decision 1121)
        assert message == (
            "The file is not valid UTF-8 text (byte 0xE9 on line 1 is not); only UTF-8 Markdown can be read or "
            "edited. Save it as UTF-8."
        )
    else:
        assert named in message and message.endswith("Save it as UTF-8.")
