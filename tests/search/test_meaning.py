from __future__ import annotations

import pytest

from local_vector_search_mcp.search.meaning import is_markup_only, is_settings_only


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


@pytest.mark.parametrize(
    ("text", "settings"),
    [
        ("---\naside: false\n---", True),
        ("---\npage: true\nfooter: false\nnav_order: 20\n---", True),
        ("+++\ndraft = true\n+++", False),  # TOML front matter is not read as YAML switches
        ("---\ntitle: API 参考\nsidebar: false\n---", False),
        ("---\ntags: [a, b]\n---", False),
        ("---\noutline: deep\n---", False),  # a word: no list of layout keys decides
        ("aside: false", False),  # not a front matter block
    ],
)
def test_front_matter_of_switches_alone(text: str, settings: bool) -> None:
    assert is_settings_only(text) is settings
