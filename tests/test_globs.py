from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.errors import InvalidArgument
from local_vector_search_mcp.globs import GlobSet, compile_glob, nfc, posix_regex, root_only


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
        # blind to the normal form, as paths are (decision 529): NFC typed, NFD on disk and back
        ("Caf\u00e9/**", "Cafe\u0301/Menu.md", True),
        ("cafe\u0301/*.md", "CAF\u00c9/Menu.md", True),
        ("Caf?/*.md", "Cafe\u0301/Menu.md", True),
        ("Caf\u00e9/**", "Cafe/Menu.md", False),
        # '.' segments name the folder they stand in, as in .NET's globbing (decision 691)
        ("./docs/*.md", "docs/a.md", True),
        ("docs/./*.md", "docs/a.md", True),
        ("./*.md", "a.md", True),
        ("./*.md", "x/a.md", False),
        ("./**/*.md", "x/y/a.md", True),
        # a trailing slash names a folder, everything under it (.NET's "/**"; decision 852)
        ("docs/", "docs/a.md", True),
        ("docs/", "docs/a/b.png", True),
        ("DOCS/", "docs/a.md", True),
        ("docs/", "docsx/a.md", False),
        ("docs/", "docs.md", False),
        ("docs\\", "docs/a.md", True),
        ("docs//", "docs/a.md", True),
        ("**/sub/", "x/sub/a.md", True),
        ("./docs/", "docs/a.md", True),
        # `**.md` is `**/*.md` in .NET's globbing (recursive, then the rest of the segment)
        ("**.md", "a.md", True),
        ("**.md", "x/y/a.md", True),
        ("**.md", "x/y/a.txt", False),
        ("docs/**.md", "docs/x/a.md", True),
        ("docs/**.md", "a.md", False),
        # `*.*` is `*` (a name without a dot included)
        ("*.*", "LICENSE", True),
        ("docs/*.*", "docs/Makefile", True),
        ("docs/*.*", "docs/x/Makefile", False),
    ],
)
def test_matching(pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern)(path) is expected


@pytest.mark.parametrize(
    "pattern", ["", "  ", "/abs/*.md", "\\x", "c:*.md", "a/../b", "..", "a\x01", ".", "./", "././"]
)
def test_invalid(pattern: str) -> None:
    with pytest.raises(InvalidArgument):
        compile_glob(pattern)


def test_globset() -> None:
    g = GlobSet(["**/*.md"], ["drafts/**"])
    assert g("a.md") and not g("drafts/a.md") and not g("a.txt")


@pytest.mark.parametrize(
    ("include", "expected"),
    [
        (["*.md"], True),  # meant as every Markdown file, most often: the reindex says what it does
        (["*.MD", "notes*.md"], True),
        (["?.md"], True),
        (["**/*.md"], False),  # the default
        (["**"], False),
        (["README.md"], False),  # a literal name means that one file
        (["*.md", "docs/**"], False),  # a pattern with a folder: its writer thinks in folders
        (["*.md", "docs\\*.md"], False),
        (["./*.md"], True),  # the root folder written out: still the root's files only
        ([], False),
    ],
)
def test_root_only(include: list[str], expected: bool) -> None:
    """Decision 553: the includes whose reindex explains that they stop at the root folder."""
    assert root_only(include) is expected


_ALPHABET = "aAbsSſkK\u212aiIİıßẞ*?/.%_[]()+^$|{}\\ 東-e\u00e9\u0301"


_SWAPS = {"s": "Sſ", "k": "K\u212a", "i": "Iİı", "ß": "ẞ", "a": "A", "b": "B"}


@given(
    pattern=st.text(_ALPHABET, min_size=1, max_size=12).filter(lambda p: p.strip() and p[0] not in "/\\"),
    noise=st.text(_ALPHABET.replace("*", "").replace("?", ""), max_size=14),
    data=st.data(),
)
def test_the_posix_form_matches_what_the_glob_matches(pattern: str, noise: str, data: st.DataObject) -> None:
    """The SQL engines' form of a glob (PostgreSQL ``~``, case-sensitive: the case variants are
    spelled out) keeps the same paths; its syntax is a subset Python's ``re`` reads alike."""
    try:
        glob = compile_glob(pattern)
    except InvalidArgument:
        with pytest.raises(InvalidArgument):
            posix_regex(pattern)
        return
    # a path close to the pattern (wildcards filled, letters in another case) and a random one
    near = "".join(
        data.draw(st.sampled_from([c, *_SWAPS.get(c.lower(), "")]))
        if c not in "*?"
        else data.draw(st.sampled_from(["", "x", "x/y", "?"]))
        for c in pattern.replace("\\", "/")
    )
    for path in (near, noise):
        # the engines compare the path in NFC (``normalize(path, NFC)``)
        assert (re.fullmatch(posix_regex(pattern), nfc(path), re.DOTALL) is not None) is glob(path), path
