from __future__ import annotations

import pytest

from local_vector_search_mcp.search.meaning import is_markup_only


@pytest.mark.parametrize(
    "text",
    [
        '<a id="traits-defining-shared-behavior"></a>',
        '<a id="one"></a>\n<a id="two"></a>',
        "<!-- draft: rewrite this section -->",
        '<img src="a.png" alt="diagram">',
        "<br/>\n\n---",
        "",
    ],
)
def test_markup_alone_says_nothing(text: str) -> None:
    assert is_markup_only(text)


@pytest.mark.parametrize(
    "text",
    [
        "Plain words.",
        '<a id="x"></a> Words after the anchor.',
        '<span class="filename">Filename: src/main.rs</span>',
        "<!-- note --> 42",
        "1 < 2 and 3 > 2",
        "你好 <br>",
    ],
)
def test_any_word_outside_the_markup_is_meaning(text: str) -> None:
    assert not is_markup_only(text)
