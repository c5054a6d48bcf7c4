"""Markdown -> Notion blocks: the per-block limits and the mapping rules (decision 129)."""

from __future__ import annotations

from local_vector_search_mcp.notion.blocks import code_language, convert, rich_text


def test_long_text_is_cut_into_2000_character_items() -> None:
    items = rich_text("a" * 4500)
    assert [len(i["text"]["content"]) for i in items] == [2000, 2000, 500]


def test_more_than_100_items_split_the_block() -> None:
    text = " ".join(f"**b{i}** p" for i in range(80))
    blocks = convert(text + "\n").blocks
    assert [b["type"] for b in blocks] == ["paragraph", "paragraph"]
    assert all(len(b["paragraph"]["rich_text"]) <= 100 for b in blocks)


def test_languages_map_to_notion_names() -> None:
    assert code_language("py") == "python"
    assert code_language("rust,ignore") == "rust"
    assert code_language("console") == "shell"
    assert code_language("klingon") == "plain text"
    assert code_language("") == "plain text"


def test_title_from_front_matter_then_first_heading() -> None:
    assert convert("---\ntitle: Front\n---\n# Head\n").title == "Front"
    assert convert("text\n\n## Head *x*\n").title == "Head x"
    assert convert("just text\n").title is None


def test_title_from_toml_front_matter_which_is_never_a_block() -> None:
    """Decision 1026: Hugo's ``+++`` front matter was a paragraph block and named no title."""
    converted = convert('+++\ntitle = "Front"\ndraft = true\n+++\n# Head\n')
    assert converted.title == "Front"
    assert "draft" not in str(converted.blocks)
    assert convert('+++\ntitle = "unclosed\n+++\n# Head\n').title == "Head"  # broken TOML: no title


def test_a_front_matter_title_that_is_not_a_scalar_is_no_title() -> None:
    """``str()`` of a list printed Python's text as the page title, and of nested YAML aliases (a
    few hundred bytes) ran the push out of memory (decision 404); a date is still a title."""
    laughs = ['a: &a ["lol", "lol", "lol"]'] + [
        f"{n}: &{n} [*{p}, *{p}, *{p}]" for p, n in zip("abc", "bcd", strict=True)
    ]
    front = "---\n" + "\n".join(laughs) + "\ntitle: *d\n---\n# Head\n"
    assert convert(front).title == "Head"
    assert convert("---\ntitle: {a: 1}\n---\ntext\n").title is None
    assert convert("---\ntitle: 2026-12-02\n---\n# Head\n").title == "2026-12-02"


def test_nested_emphasis_and_link_combine() -> None:
    (item,) = [i for i in rich_text("[**bold link**](https://x.org)")]
    assert item["text"] == {"content": "bold link", "link": {"url": "https://x.org"}}
    assert item["annotations"]["bold"] is True


def test_alerts_become_callouts_and_quotes_keep_children() -> None:
    blocks = convert("> [!TIP]\n> Use it.\n>\n> - a\n\n> plain\n>\n> second\n").blocks
    tip, quote = blocks
    assert tip["type"] == "callout" and tip["callout"]["icon"]["emoji"] == "💡"
    assert tip["callout"]["children"][0]["type"] == "bulleted_list_item"
    assert quote["quote"]["rich_text"][0]["text"]["content"] == "plain"
    assert quote["quote"]["children"][0]["paragraph"]["rich_text"][0]["text"]["content"] == "second"


def test_html_comments_dropped_other_html_kept_as_code() -> None:
    blocks = convert("<!-- note -->\n\n<div>x</div>\n").blocks
    assert [b["type"] for b in blocks] == ["code"]
    assert blocks[0]["code"]["language"] == "html"


def test_images_inside_paragraphs_follow_them() -> None:
    blocks = convert("See ![a](http://h/x.png) here\n").blocks
    assert [b["type"] for b in blocks] == ["paragraph", "image"]
    assert blocks[1]["image"]["caption"][0]["text"]["content"] == "a"
