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
    assert code_language("jsonc") == "json" and code_language("patch") == "diff"  # decision 1152
    assert code_language("tsx") == "typescript" and code_language("none") == "plain text"
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


def test_a_task_or_alert_keeps_its_reference_links_and_images() -> None:
    """Decision 1146: the text after ``[ ]`` or ``[!NOTE]`` was parsed again without the document's
    link definitions and with its images thrown away."""
    text = (
        "- [x] done, see [the spec][s] ![shot](https://example.com/shot.png)\n\n"
        "> [!NOTE]\n> read [the spec][s] ![d](https://example.com/d.png)\n\n"
        "[s]: https://example.com/spec\n"
    )
    task, callout = convert(text).blocks
    for block in (task, callout):
        body = block[block["type"]]
        links = [i["text"].get("link") for i in body["rich_text"] if i["text"]["content"] == "the spec"]
        assert links == [{"url": "https://example.com/spec"}], block
        assert "[s]" not in str(body["rich_text"])
        (image,) = body["children"]
        assert image["type"] == "image" and image["image"]["external"]["url"].startswith("https://example.com/")


def test_a_link_or_image_url_without_a_host_is_not_sent_as_one() -> None:
    """Decision 1147: Notion refuses ``http://`` or ``https:///x`` ("Invalid URL for link") and with it
    the whole append, so the document failed at every push."""
    (para, local) = convert("[x](http://) [y](https:///path) [z](https://ok.example/p)\n\n![i](https://)\n").blocks
    assert [i["text"].get("link") for i in para["paragraph"]["rich_text"]] == [
        None,
        {"url": "https://ok.example/p"},
    ]
    assert (
        local["type"] == "paragraph" and "Image not uploaded" in local["paragraph"]["rich_text"][0]["text"]["content"]
    )


def test_an_image_in_a_table_cell_stays_as_text_and_images_alone_make_no_blank_paragraph() -> None:
    """Decision 1150: a cell's image vanished; a paragraph of images only left a one-space paragraph."""
    (table,) = convert("| a | b |\n|---|---|\n| ![x](https://e.example/x.png) | ![y](img/y.png) |\n").blocks
    cells = table["table"]["children"][1]["table_row"]["cells"]
    assert cells[0] == [{"type": "text", "text": {"content": "x", "link": {"url": "https://e.example/x.png"}}}]
    assert cells[1] == [{"type": "text", "text": {"content": "y (img/y.png)"}}]
    blocks = convert("![a](https://e.example/a.png) ![b](https://e.example/b.png)\n").blocks
    assert [b["type"] for b in blocks] == ["image", "image"]
    assert [b["type"] for b in convert("see ![a](https://e.example/a.png)\n").blocks] == ["paragraph", "image"]
