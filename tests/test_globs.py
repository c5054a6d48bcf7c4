from __future__ import annotations

import pytest

from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.globs import GlobSet, compile_glob


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("**/*.md", "x/y/a.MD", True),
        ("**/*.md", "a.mdx", False),
        ("*.md", "x/a.md", False),
        ("docs/**", "docs/a/b.png", True),
        ("docs/**", "docsx/a.png", False),
        ("docs/*/x.md", "docs/a/x.md", True),
        ("docs/*/x.md", "docs/a/b/x.md", False),
        ("a?.md", "ab.md", True),
        ("a?.md", "a/.md", False),
        ("**/*", "anything/at/all", True),
        ("DOCS/**/*.md", "docs/deep/x.md", True),
        ("notes/[x].md", "notes/[x].md", True),
    ],
)
def test_matching(pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern)(path) is expected


@pytest.mark.parametrize("pattern", ["", "  ", "/abs/*.md", "\\x", "c:*.md", "a/../b", "..", "a\x01"])
def test_invalid(pattern: str) -> None:
    with pytest.raises(InvalidArgument):
        compile_glob(pattern)


def test_globset() -> None:
    g = GlobSet(["**/*.md"], ["drafts/**"])
    assert g("a.md") and not g("drafts/a.md") and not g("a.txt")
