"""Helpers of the element renderer: code wrapping, slugs, column widths."""

from __future__ import annotations

from local_vector_search_mcp.export.pdf.flowables import _wrap, slugify


def test_code_lines_wrap_at_the_column_count_with_a_mark() -> None:
    assert _wrap("x" * 10, 10, "> ") == ["x" * 10]
    assert _wrap("x" * 25, 10, "> ") == ["x" * 10, "> " + "x" * 8, "> " + "x" * 7]


def test_wide_characters_take_two_columns() -> None:
    lines = _wrap("中" * 8, 10, "> ")
    assert lines[0] == "中" * 5 and lines[1] == "> " + "中" * 3


def test_slugs_follow_github() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("Using `Box<T>` to Point") == "using-boxt-to-point"
    assert slugify("模板语法") == "模板语法"
