"""Every spelling of one Notion page id gives one key; anything else names no page (decision 708)."""

from __future__ import annotations

import pytest

from local_vector_search_mcp.notion.ids import page_id

ID = "1f2e3d4c-5b6a-4789-8abc-def012345678"
HEX = ID.replace("-", "")


@pytest.mark.parametrize(
    "given",
    [
        ID,
        HEX,
        HEX.upper(),
        ID.upper(),
        f"  {HEX}\n",  # pasted with the shell's newline
        f"https://www.notion.so/My-Page-{HEX}",
        f"https://www.notion.so/acme/Release-notes-2024-{HEX.upper()}?pvs=4#heading",
        f"https://notion.so/{HEX}/",
        f"https://acme.notion.site/Public-Page-{HEX}",
        f"https://www.notion.so/acme/{'0' * 32}?v={'1' * 32}&p={HEX}&pm=s",  # a page opened over a database
    ],
)
def test_every_spelling_of_a_page_gives_the_lowercase_hyphenated_id(given: str) -> None:
    assert page_id(given) == ID


@pytest.mark.parametrize(
    "given",
    [
        "",
        "abc",
        HEX[:-1],
        HEX + "0",
        HEX[:-1] + "g",
        ID.replace("-", "", 1),  # hyphens in other places than the UUID's
        f"{ID[:8]}--{ID[9:]}",
        f"https://example.com/My-Page-{HEX}",  # not Notion
        f"https://notion.so.evil.example/Page-{HEX}",
        f"ftp://www.notion.so/Page-{HEX}",
        f"https://www.notion.so/Page{HEX}",  # the id not after the slug's hyphen
        f"https://www.notion.so/{HEX}/child",  # the id not at the end
        f"https://www.notion.so/Page-{HEX}0",
        f"www.notion.so/Page-{HEX}",  # no scheme
        "https://[::1/Page",
    ],
)
def test_anything_else_names_no_page(given: str) -> None:
    assert page_id(given) is None
