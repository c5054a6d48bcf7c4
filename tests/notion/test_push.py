"""The Notion push end to end: the real httpx client against a local server speaking Notion's API."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from local_vector_search_mcp.cli import main
from local_vector_search_mcp.notion.blocks import convert
from local_vector_search_mcp.notion.client import NotionClient, NotionError

from .fake_notion import PARENT, TOKEN, FakeNotion, Fault

EVERY_BLOCK = """\
---
title: Every block
---
# Heading one

Some *italic*, **bold**, ~~struck~~, `code`, a [link](https://example.com/a) and [a file](other.md).

#### Heading four

- bullet
  - nested
    - deeper
      - deepest
1. first
- [ ] open task
- [x] done task

```rust
fn main() {}
```

> A quote
> on two lines

> [!WARNING]
> Be careful.

| a | b |
|---|---|
| 1 | **2** |

---

![remote](https://example.com/img.png)

![local](images/pic.png)
"""


def push(kb: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, object], str]:
    code = main(["--project-root", str(kb.parent), "--root", "kb", "--config", "config.yaml", "notion", "push", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def page_of(notion: FakeNotion) -> str:
    (page_id,) = notion.pages
    return page_id


def test_first_push_sends_exact_requests(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    (kb / "note.md").write_text("# Title\n\nHello **world**.\n", encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0, report
    assert report["created"] == ["note.md"]
    assert notion.calls()[0] == ("POST", "/v1/pages")
    first = notion.requests[0]
    assert first.headers["authorization"] == f"Bearer {TOKEN}"
    assert first.headers["notion-version"] == "2022-06-28"
    assert first.headers["content-type"] == "application/json"
    assert first.body == {
        "parent": {"page_id": PARENT},
        "properties": {"title": {"title": [{"type": "text", "text": {"content": "Title"}}]}},
    }
    page_id = page_of(notion)
    assert notion.calls()[1:] == [("PATCH", f"/v1/blocks/{page_id}/children")]
    bold = {
        "bold": True,
        "italic": False,
        "strikethrough": False,
        "underline": False,
        "code": False,
        "color": "default",
    }
    assert notion.requests[1].body == {
        "children": [
            {"type": "heading_1", "heading_1": {"rich_text": [{"type": "text", "text": {"content": "Title"}}]}},
            {
                "type": "paragraph",
                "paragraph": {
                    "rich_text": [
                        {"type": "text", "text": {"content": "Hello "}},
                        {"type": "text", "text": {"content": "world"}, "annotations": bold},
                        {"type": "text", "text": {"content": "."}},
                    ]
                },
            },
        ]
    }


def test_every_block_kind(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    (kb / "all.md").write_text(EVERY_BLOCK, encoding="utf-8")
    before = (kb / "all.md").read_bytes()
    code, _, err = push(kb, capsys)
    assert code == 0, err
    assert (kb / "all.md").read_bytes() == before  # the Markdown is only read
    page_id = page_of(notion)
    assert notion.pages[page_id]["title"][0]["text"]["content"] == "Every block"
    tree = notion.tree(page_id)
    assert tree == convert(EVERY_BLOCK).blocks  # nothing lost on the way, whatever the nesting
    kinds = [b["type"] for b in tree]
    assert kinds == [
        "heading_1",
        "paragraph",
        "heading_3",
        "bulleted_list_item",
        "numbered_list_item",
        "to_do",
        "to_do",
        "code",
        "quote",
        "callout",
        "table",
        "divider",
        "image",
        "paragraph",
    ]
    paragraph = tree[1]["paragraph"]["rich_text"]
    link = next(i for i in paragraph if i["text"]["content"] == "link")
    assert link["text"]["link"] == {"url": "https://example.com/a"}
    assert all("link" not in i["text"] for i in paragraph if i["text"]["content"] != "link")  # relative: text only
    assert [t["to_do"]["checked"] for t in tree[5:7]] == [False, True]
    assert tree[7]["code"]["language"] == "rust"
    assert tree[9]["callout"]["icon"] == {"type": "emoji", "emoji": "⚠️"}
    assert tree[9]["callout"]["rich_text"] == [{"type": "text", "text": {"content": "Be careful."}}]
    assert tree[10]["table"]["table_width"] == 2 and len(tree[10]["table"]["children"]) == 2
    assert tree[12]["image"]["external"] == {"url": "https://example.com/img.png"}
    assert "images/pic.png" in tree[13]["paragraph"]["rich_text"][0]["text"]["content"]
    # four list levels: one level of children per request, deeper ones appended to the created blocks
    deepest = tree[3]["bulleted_list_item"]["children"][0]["bulleted_list_item"]["children"][0]
    assert (
        deepest["bulleted_list_item"]["children"][0]["bulleted_list_item"]["rich_text"][0]["text"]["content"]
        == "deepest"
    )


def test_second_push_updates_the_same_page(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    text = "# Doc\n\n" + "".join(f"Paragraph {i}.\n\n" for i in range(10))
    (kb / "doc.md").write_text(text, encoding="utf-8")
    assert push(kb, capsys)[0] == 0
    page_id = page_of(notion)
    kept = notion.page_children[page_id][:8]
    ends = notion.page_children[page_id][9:]
    notion.requests.clear()

    edited = text.replace("Paragraph 7.", "Paragraph seven, edited.").replace("# Doc", "# Doc")
    (kb / "doc.md").write_text(edited, encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["updated"] == ["doc.md"] and report["created"] == []
    assert list(notion.pages) == [page_id]  # no second page
    old_tail = [r for r in notion.requests if r.method == "DELETE"]
    assert len(old_tail) == 1  # paragraph 7 replaced; heading, 0-6 and 8-9 kept (decision 1151)
    assert notion.calls()[0] == ("GET", f"/v1/blocks/{page_id}/children")
    assert notion.calls()[-1] == ("PATCH", f"/v1/blocks/{page_id}/children")
    assert len(notion.requests[-1].body["children"]) == 1 and notion.requests[-1].body["after"] == kept[-1]
    assert notion.page_children[page_id][:8] == kept and notion.page_children[page_id][9:] == ends
    assert notion.tree(page_id) == convert(edited).blocks

    notion.requests.clear()
    code, report, _ = push(kb, capsys)
    assert report["unchanged"] == ["doc.md"] and notion.requests == []  # unchanged bytes: no request at all

    (kb / "doc.md").write_text(edited.replace("# Doc", "# Renamed"), encoding="utf-8")
    assert push(kb, capsys)[0] == 0
    assert notion.pages[page_id]["title"][0]["text"]["content"] == "Renamed"
    assert notion.tree(page_id) == convert(edited.replace("# Doc", "# Renamed")).blocks


def test_blocks_edited_in_notion_are_replaced(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    (kb / "doc.md").write_text("# A\n\none\n\ntwo\n", encoding="utf-8")
    push(kb, capsys)
    page_id = page_of(notion)
    notion.delete(notion.page_children[page_id][1])  # someone removed a block by hand
    notion.append(page_id, {"children": [{"type": "paragraph", "paragraph": {"rich_text": []}}]})
    (kb / "doc.md").write_text("# A\n\none\n\ntwo\n\nthree\n", encoding="utf-8")
    assert push(kb, capsys)[0] == 0
    assert notion.tree(page_id) == convert("# A\n\none\n\ntwo\n\nthree\n").blocks


def test_large_document_stays_within_limits(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "".join(f"| {i} | v{i} |\n" for i in range(150))
    items = "".join(f"- item {i}\n" for i in range(130))
    nested = "- top\n" + "".join(f"  - child {i}\n" for i in range(120))
    code = "```\n" + "x" * 4500 + "\n```\n"
    long_par = ("word " * 900).strip()
    text = (
        "# Big\n\n"
        + "".join(f"Paragraph {i}.\n\n" for i in range(230))
        + f"| a | b |\n|---|---|\n{rows}\n{items}\n{nested}\n{code}\n{long_par}\n"
    )
    (kb / "big.md").write_text(text, encoding="utf-8")
    exit_code, _, err = push(kb, capsys)
    assert exit_code == 0, err  # the fake answers validation_error past any documented limit
    page_id = page_of(notion)
    assert notion.tree(page_id) == convert(text).blocks
    appends = [r.body["children"] for r in notion.requests if r.method == "PATCH" and r.path.endswith("/children")]
    assert max(len(c) for c in appends) == 100
    table = next(b for b in notion.tree(page_id) if b["type"] == "table")
    assert len(table["table"]["children"]) == 151
    code_block = next(b for b in notion.tree(page_id) if b["type"] == "code")
    assert [len(i["text"]["content"]) for i in code_block["code"]["rich_text"]] == [2000, 2000, 500]


def test_rate_limit_retry_after_is_honoured(notion: FakeNotion) -> None:
    waits: list[float] = []
    notion.faults += [Fault(429, {"Retry-After": "2"}), Fault(429, {"Retry-After": "1"})]
    client = NotionClient(TOKEN, base_url=notion.url, requests_per_second=1000, sleep=waits.append)
    page_id = client.create_page(PARENT, "T")
    assert page_id in notion.pages
    assert [w for w in waits if w >= 1] == [2.0, 1.0]
    assert client.requests == 3
    assert [r.body for r in notion.requests] == [notion.requests[0].body] * 3  # the same request, resent
    client.close()


def test_requests_are_spaced_to_the_configured_rate(notion: FakeNotion) -> None:
    now = [100.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    client = NotionClient(TOKEN, base_url=notion.url, requests_per_second=3, sleep=sleep, clock=lambda: now[0])
    page_id = client.create_page(PARENT, "T")
    for _ in range(3):
        client.list_children(page_id)
    assert waits == pytest.approx([1 / 3] * 3)  # back to back: each request waits its third of a second
    now[0] += 10  # an idle caller is not made to wait
    client.list_children(page_id)
    assert len(waits) == 3
    client.close()


def test_errors_name_notion_code_never_the_token(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    monkeypatch.setenv("NOTION_TOKEN", "secret_wrong_token_9")
    code, _, err = push(kb, capsys)
    assert code == 1 and "unauthorized" in err and "HTTP 401" in err
    assert "secret_wrong_token_9" not in err
    client = NotionClient("secret_wrong_token_9", base_url=notion.url)
    assert "secret" not in repr(client)
    with pytest.raises(NotionError) as info:
        client.list_children("nope")
    assert info.value.status == 401 and "secret" not in str(info.value)
    client.close()


def test_missing_token_or_parent_is_a_clear_error(
    kb: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOTION_TOKEN")
    code, _, err = push(kb, capsys)
    assert code == 1 and "NOTION_TOKEN" in err
    code = main(["--project-root", str(kb.parent), "--root", "kb", "notion", "push"])
    assert code == 1 and "parentPageId" in capsys.readouterr().err


def test_removed_document_archives_its_page(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    (kb / "b.md").write_text("# B\n", encoding="utf-8")
    push(kb, capsys)
    (kb / "b.md").unlink()
    code, report, _ = push(kb, capsys, "--dry-run")
    assert report["archived"] == ["b.md"] and report["requests"] == {"archivePage": 1}
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["archived"] == ["b.md"] and report["unchanged"] == ["a.md"]
    assert sorted(p["archived"] for p in notion.pages.values()) == [False, True]


def test_page_deleted_in_notion_is_created_again(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    push(kb, capsys)
    (old,) = notion.pages
    del notion.page_children[old]  # gone for good: the API answers object_not_found
    (kb / "a.md").write_text("# A\n\nmore\n", encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["created"] == ["a.md"]
    new = next(p for p in notion.pages if p != old)
    assert notion.tree(new) == convert("# A\n\nmore\n").blocks


def test_dry_run_sends_nothing_and_keeps_no_state(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOTION_TOKEN")
    (kb / "all.md").write_text(EVERY_BLOCK, encoding="utf-8")
    code, report, _ = push(kb, capsys, "--dry-run")
    assert code == 0 and report["created"] == ["all.md"] and report["dryRun"] is True
    assert report["requests"]["createPage"] == 1
    assert notion.requests == []
    assert not (kb.parent / ".local-vector-search-mcp" / "notion-pages.json").exists()


def test_paths_push_only_those(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    (kb / "b.md").write_text("# B\n", encoding="utf-8")
    code, report, _ = push(kb, capsys, "b.md")
    assert code == 0 and report["created"] == ["b.md"] and report["archived"] == []
    code, _, err = push(kb, capsys, "../outside.md")
    assert code == 1 and "not permitted" in err
    assert len(notion.pages) == 1


def test_a_fifo_named_md_is_refused_not_waited_on(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOTION_TOKEN")
    os.mkfifo(kb / "pipe.md")  # was: the push blocked forever opening it
    code, report, err = push(kb, capsys, "--dry-run")
    assert code == 0 and report["skippedCount"] == 1 and "1 document(s) or folder(s)" in err
    [skipped] = report["skipped"]  # type: ignore[misc]
    assert skipped["path"] == "pipe.md" and "not a regular file" in skipped["reason"]


def test_an_unreadable_document_is_skipped_named_and_the_rest_pushed(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    os.mkfifo(kb / "b.md")
    (kb / "c.md").write_text("# C\n", encoding="utf-8")
    code, report, err = push(kb, capsys)
    # was: exit 1 at b.md, and c.md never pushed
    assert code == 0 and report["created"] == ["a.md", "c.md"] and len(notion.pages) == 2
    assert report["skippedCount"] == 1 and [s["path"] for s in report["skipped"]] == ["b.md"]  # type: ignore[attr-defined]
    assert "b.md" not in err and "1 document(s)" in err  # the report names it; stderr gives the count


def test_a_document_that_became_unreadable_keeps_its_page(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    (kb / "b.md").write_text("# B\n", encoding="utf-8")
    push(kb, capsys)
    (kb / "b.md").unlink()
    os.mkfifo(kb / "b.md")  # still there, only unreadable: its page must not be archived
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["archived"] == [] and report["unchanged"] == ["a.md"]
    assert [s["path"] for s in report["skipped"]] == ["b.md"]  # type: ignore[attr-defined]
    assert not any(p["archived"] for p in notion.pages.values())


DROP = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root cannot be refused a folder")
def test_a_folder_that_cannot_be_listed_is_named_and_its_pages_kept(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    (kb / "secret").mkdir()
    (kb / "secret/b.md").write_text("# B\n", encoding="utf-8")
    push(kb, capsys)
    (kb / "secret").chmod(0)
    command = [sys.executable, "-m", "local_vector_search_mcp", "--project-root", str(kb.parent), "--root", "kb"]
    command += ["--config", "config.yaml", "notion", "push", "--dry-run"]
    try:  # as root, only a child without the capabilities that ignore permissions is refused
        done = subprocess.run(
            DROP + command if os.geteuid() == 0 else command, capture_output=True, text=True, timeout=120, check=False
        )
    finally:
        (kb / "secret").chmod(0o755)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["archived"] == []  # was: secret/b.md's page archived as if the file were gone
    assert report["skipped"] == [{"path": "secret/", "reason": "The folder could not be listed (Permission denied)."}]


HOSTILE = {
    # was: the 500 KB payload limit counted in characters, so 600 KB to 900 KB of UTF-8 was sent
    "cjk-huge.md": "中" * 300_000 + "\n",
    "cjk-code.md": "```\n" + "中" * 300_000 + "\n```\n",
    "cjk-paragraphs.md": "".join("中" * 1900 + "\n\n" for _ in range(300)),
    "cjk-wide-list.md": "- top\n" + "".join("  - " + "中" * 1900 + "\n" for _ in range(100)),
    "cjk-table.md": "| a | b |\n|---|---|\n" + "".join("| " + "中" * 1900 + " | x |\n" for _ in range(120)),
    "emoji.md": ("😀" * 1500 + "x") * 2 + "\n",  # was: cut at 2,000 code points = 3,000 UTF-16 units, refused
    "emoji-code.md": "```python\n" + "# 🎉 " * 1200 + "\n```\n",
    "emoji-title.md": "# " + "🎉" * 1500 + "\n",
    "table-in-list.md": "- item\n\n  | a | b |\n  |---|---|\n" + "".join(f"  | {i} | x |\n" for i in range(150)),
    "long.md": "word " * 3000 + "\n",
    "spans.md": " ".join(f"**b{i}** *i{i}* `c{i}`" for i in range(200)) + "\n",
    "deep.md": "".join("  " * d + f"- level {d}\n" for d in range(8)),
    "wide-table.md": "| "
    + " | ".join(f"h{i}" for i in range(30))
    + " |\n|"
    + "---|" * 30
    + "\n"
    + "".join("| " + " | ".join(f"r{r}c{c}" for c in range(30)) + " |\n" for r in range(250)),
    "languages.md": "".join(f"```{lang}\ncode\n```\n\n" for lang in ["klingon", "toml", "C#", "", "js title=x"]),
    "cjk.md": "# 中文标题\n\n" + "中文段落，" * 900 + "\n\n- 列表 [链接](https://例子.测试/路径?q=值)\n",
    "math.md": "Inline $x^2$ and\n\n$$\n\\int_0^1 f\n$$\n",
    "html.md": "<div>\n<p>hi</p>\n</div>\n\nText <b>bold</b> <br> more\n",
    "empty.md": "",
    "links.md": "[missing](missing.md) [mail](mailto:a@b.c) [long](https://x.example/"
    + "a" * 2100
    + ") [js](javascript:x)\n",
    "images.md": "![local](img/a.png)\n\n![data](data:image/png;base64,AA)\n\n!["
    + "alt😀" * 600
    + "](https://h.example/c.png)\n",
    "hostless.md": "[x](http://) [y](https:///p) and ![i](https://)\n",  # decision 1147
    "nested-quote.md": "- a\n  > quote\n  >\n  > - inner\n  >   - deeper\n"
    + "  >     | a | b |\n  >     |---|---|\n  >     | 1 | 2 |\n",
}


def test_hostile_documents_reach_notion_whole(kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]) -> None:
    """Every document within the documented limits as the fake enforces them (tests/notion/fake_notion.py)."""
    for name, text in HOSTILE.items():
        (kb / name).write_text(text, encoding="utf-8")
    code, report, err = push(kb, capsys)
    assert code == 0, err
    assert sorted(report["created"]) == sorted(HOSTILE)  # type: ignore[arg-type]
    mapping = json.loads((kb.parent / ".local-vector-search-mcp" / "notion-pages.json").read_text(encoding="utf-8"))
    for name, text in HOSTILE.items():
        page_id = mapping["parents"][PARENT][name]["pageId"]
        assert notion.tree(page_id) == convert(text).blocks, name


def test_a_retry_after_given_as_an_http_date_is_honoured(notion: FakeNotion) -> None:
    """RFC 9110 allows an HTTP date; Notion's client read only a number of seconds and backed off
    on its own (1 s) instead. One parser now reads it for Notion and the embedding endpoint."""
    from email.utils import formatdate

    waits: list[float] = []
    notion.faults += [Fault(429, {"Retry-After": formatdate(time.time() + 30, usegmt=True)})]
    client = NotionClient(TOKEN, base_url=notion.url, requests_per_second=1000, sleep=waits.append)
    client.create_page(PARENT, "T")
    assert [w for w in waits if w >= 1] == [pytest.approx(30, abs=2)]  # was [1.0]
    client.close()


def _text(blocks: list[dict[str, object]]) -> str:
    """Every character of rich text in ``blocks`` (nested children and table cells included), in order."""
    out = []
    for block in blocks:
        body = block[block["type"]]  # type: ignore[index]
        for item in body.get("rich_text", []):  # type: ignore[union-attr]
            out.append(item["text"]["content"])
        for cell in body.get("cells", []):  # type: ignore[union-attr]
            out.extend(item["text"]["content"] for item in cell)
        out.append(_text(body.get("children", [])))  # type: ignore[union-attr, arg-type]
    return "".join(out)


SPANS = " ".join(f"`c{i}` w{i}" for i in range(130))  # 260 runs of alternating style: over 100 items
MANY_RUNS = {
    "quote.md": f"> {SPANS}\n>\n> - child\n",
    "callout.md": f"> [!NOTE]\n> {SPANS}\n",
    "heading.md": f"# {SPANS}\n",
    "cell.md": f"| a | b |\n|---|---|\n| {SPANS} | x |\n",
}


def test_text_of_more_than_100_styled_runs_is_never_dropped(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quote, callout, heading or table cell of more than 100 rich-text items kept the first 100."""
    for name, text in MANY_RUNS.items():
        (kb / name).write_text(text, encoding="utf-8")
    code, report, err = push(kb, capsys)
    assert code == 0 and report["failed"] == [], err
    mapping = json.loads((kb.parent / ".local-vector-search-mcp" / "notion-pages.json").read_text(encoding="utf-8"))
    plain = SPANS.replace("`", "")
    for name in MANY_RUNS:
        tree = notion.tree(mapping["parents"][PARENT][name]["pageId"])
        assert plain in _text(tree), name
    quote = notion.tree(mapping["parents"][PARENT]["quote.md"]["pageId"])
    assert [b["type"] for b in quote] == ["quote"] * len(quote) and _text(quote).endswith("child")


def test_a_named_document_that_does_not_exist_is_an_error(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """`notion push typo.md` exited 0 ("skipped"), so a script never noticed it pushed nothing."""
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    code, report, err = push(kb, capsys, "a.md", "typo.md")
    assert code == 1 and report == {}
    assert "typo.md" in err and "not found" in err and err.count("\n") == 1
    assert notion.requests == []  # nothing pushed: the command as given is refused, as a path outside is
    code, report, err = push(kb, capsys, "a.md")
    assert code == 0 and report["created"] == ["a.md"], err


def test_every_spelling_of_the_parent_updates_the_same_pages(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """The id without hyphens, in capitals or as the page's URL made a second copy of every page."""
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    (kb / "b.md").write_text("# B\n", encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["created"] == ["a.md", "b.md"]
    compact = PARENT.replace("-", "")
    for parent in (compact, compact.upper(), f"https://www.notion.so/acme/My-Page-{compact}?pvs=4"):
        code, report, err = push(kb, capsys, "--parent", parent)
        assert code == 0 and report["created"] == [] and report["unchanged"] == ["a.md", "b.md"], (parent, err)
    assert len(notion.pages) == 2
    mapping = json.loads((kb.parent / ".local-vector-search-mcp" / "notion-pages.json").read_text(encoding="utf-8"))
    assert list(mapping["parents"]) == [PARENT]


def test_a_parent_that_names_no_page_is_refused_before_anything_is_sent(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    for extra in ([], ["--dry-run"]):
        code, _, err = push(kb, capsys, "--parent", "My Page", *extra)
        assert code == 1 and err.startswith("local-vector-search-mcp: --parent 'My Page' is not a Notion page")
        assert "32 hexadecimal digits" in err and "notion.so" in err
    config = json.loads((kb.parent / "config.yaml").read_text(encoding="utf-8"))
    config["notion"]["parentPageId"] = "https://example.com/" + PARENT.replace("-", "")
    (kb.parent / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
    code, _, err = push(kb, capsys)
    assert code == 1 and "notion.parentPageId 'https://example.com/" in err
    assert notion.requests == []


DAMAGED = {
    "torn": b'{\n "version": 1,\n "parents": {\n  "1111',
    "empty": b"",
    "not-utf8": b'{"version": 1, "parents": {"\xff": {}}}',
    "a-list": b"[]",
    "unknown-version": b'{"version": 2, "parents": {}}',
    "parents-a-list": b'{"version": 1, "parents": []}',
    "entry-without-page": b'{"version": 1, "parents": {"p": {"a.md": {"title": "A"}}}}',
}


@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
@pytest.mark.parametrize("extra", [[], ["--dry-run"]], ids=["push", "dry-run"])
def test_a_damaged_mapping_is_one_line_and_exit_1(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str], content: bytes, extra: list[str]
) -> None:
    """It was a Python traceback: the mapping was read outside the command's error handling."""
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    path = kb.parent / ".local-vector-search-mcp" / "notion-pages.json"
    path.parent.mkdir()
    path.write_bytes(content)
    code, report, err = push(kb, capsys, *extra)
    assert code == 1 and report == {}
    [line] = err.splitlines()
    assert line.startswith(
        "local-vector-search-mcp: The Notion page mapping .local-vector-search-mcp/notion-pages.json cannot be read: "
    )
    assert "move it away to start over" in line and str(kb.parent) not in line
    assert notion.requests == [] and path.read_bytes() == content


def test_a_parent_no_longer_shared_stops_the_push_and_forgets_no_page(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decision 1145: a page Notion answers 404 for was taken as deleted, its entry dropped for a pending
    one, and when the new page's parent answered 404 too (its connection to the integration removed)
    the push stopped with the old page forgotten: the push after sharing it again made a second page."""
    for name in ("a", "b"):
        (kb / f"{name}.md").write_text(f"# {name}\n\nfirst\n", encoding="utf-8")
    assert push(kb, capsys)[0] == 0
    state = kb.parent / ".local-vector-search-mcp" / "notion-pages.json"
    before = json.loads(state.read_text(encoding="utf-8"))
    for name in ("a", "b"):
        (kb / f"{name}.md").write_text(f"# {name}\n\nsecond\n", encoding="utf-8")
    notion.unshare(PARENT)
    code, report, err = push(kb, capsys)
    assert code == 1 and report["created"] == [] and report["failed"] == []
    assert f"The parent page {PARENT} was not found in Notion: share it with the integration" in err
    assert json.loads(state.read_text(encoding="utf-8")) == before  # every page still known
    notion.unshared.clear()
    code, report, err = push(kb, capsys)
    assert code == 0 and report["updated"] == ["a.md", "b.md"] and report["created"] == [], err
    assert len(notion.live_pages()) == 2
    for path, entry in json.loads(state.read_text(encoding="utf-8"))["parents"][PARENT].items():
        assert notion.tree(entry["pageId"]) == convert((kb / path).read_text(encoding="utf-8")).blocks


def test_a_parent_never_shared_is_named_and_nothing_is_left_pending(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decision 1145: the 404 of the first page creation ended the push with the raw refusal, and left a
    pending entry (decision 861) although Notion made no page, which the next push then looked for."""
    (kb / "a.md").write_text("# a\n", encoding="utf-8")
    elsewhere = "99999999-2222-3333-4444-555555555555"
    code, report, err = push(kb, capsys, "--parent", elsewhere)
    assert code == 1 and report["created"] == []
    assert f"The parent page {elsewhere} was not found in Notion: share it with the integration" in err
    state = json.loads((kb.parent / ".local-vector-search-mcp" / "notion-pages.json").read_text(encoding="utf-8"))
    assert state["parents"].get(elsewhere, {}) == {}


def test_a_second_push_of_the_project_while_one_runs_is_refused(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decision 1149: two pushes at once each read the mapping before the other wrote it: 20 new
    documents made 39 pages, and the mapping kept 20. A push holds notion-push.lock; a dry run needs none."""
    import fcntl

    (kb / "a.md").write_text("# a\n", encoding="utf-8")
    lock = kb.parent / ".local-vector-search-mcp" / "notion-push.lock"
    lock.parent.mkdir()
    with open(lock, "w") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another push of the project, running
        code, report, err = push(kb, capsys)
        assert code == 1 and report == {} and notion.requests == []
        assert "Another notion push of this project is running" in err
        assert push(kb, capsys, "--dry-run")[0] == 0
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["created"] == ["a.md"]


def test_an_edit_keeps_the_unchanged_end_of_the_page(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decision 1151: only the unchanged start was kept, so an edit near the top of a long page sent a
    DELETE for every later block and all of them again (2,506 requests for one paragraph of 5,000)."""
    text = "# Long\n\n" + "".join(f"Paragraph {i}.\n\n" for i in range(300))
    (kb / "long.md").write_text(text, encoding="utf-8")
    assert push(kb, capsys)[0] == 0
    page_id = page_of(notion)
    edits = [
        text.replace("Paragraph 2.", "Paragraph two."),  # one block replaced
        text.replace("Paragraph 150.", "Paragraph 150.\n\nA new one."),  # one block inserted
        text.replace("Paragraph 150.\n\n", ""),  # one block removed
        text.replace("# Long", "# Longer"),  # the first block: nothing to insert after, the old way
    ]
    requests = []
    for edited in edits:
        before = notion.page_children[page_id][:]
        (kb / "long.md").write_text(edited, encoding="utf-8")
        notion.requests.clear()
        code, report, err = push(kb, capsys)
        assert code == 0 and report["updated"] == ["long.md"], err
        assert notion.tree(page_id) == convert(edited).blocks
        requests.append(
            [
                (r.method, len(r.body["children"]) if r.body and "children" in r.body else 0)
                for r in notion.requests
                if r.method != "GET"
            ]
        )
        if edited is not edits[-1]:
            assert notion.page_children[page_id][-100:] == before[-100:]  # the end was not sent again
        notion.requests.clear()
        assert push(kb, capsys)[1]["unchanged"] == ["long.md"] and notion.requests == []
        (kb / "long.md").write_text(text, encoding="utf-8")
        assert push(kb, capsys)[0] == 0 and notion.tree(page_id) == convert(text).blocks
    assert requests[:3] == [[("DELETE", 0), ("PATCH", 1)], [("PATCH", 1)], [("DELETE", 0)]]
    assert len(requests[3]) > 300


def test_an_image_notion_will_not_take_becomes_a_link_to_it(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decision 1153: Notion refuses the whole append over an external image it will not take ("Invalid
    image url", no index), so the document failed at every push; its batch is sent again with links."""
    bad, good = "https://cdn.example/preview?id=7", "https://example.com/ok.png"
    notion.unfetchable.add(bad)
    text = f"# Doc\n\n![shot]({bad})\n\n- item\n\n  ![nested]({good})\n\ntext\n"
    (kb / "doc.md").write_text(text, encoding="utf-8")
    code, report, err = push(kb, capsys)
    assert code == 0 and report["created"] == ["doc.md"], err
    tree = notion.tree(page_of(notion))
    assert [b["type"] for b in tree] == ["heading_1", "paragraph", "bulleted_list_item", "paragraph"]
    assert tree[1]["paragraph"]["rich_text"][1]["text"] == {"content": "shot", "link": {"url": bad}}
    (nested,) = tree[2]["bulleted_list_item"]["children"]  # one batch, so its images went as links too
    assert nested["paragraph"]["rich_text"][1]["text"] == {"content": "nested", "link": {"url": good}}
    notion.requests.clear()
    assert push(kb, capsys)[1]["unchanged"] == ["doc.md"] and notion.requests == []


def test_the_free_plan_block_limit_stops_the_push_and_says_what_to_do(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b", "c"):
        (kb / f"{name}.md").write_text(f"# {name}\n\n" + "".join(f"Paragraph {i}.\n\n" for i in range(5)), "utf-8")
    notion.block_limit = 8  # a.md's page and its 6 blocks fit; b.md's page reaches the limit, its blocks do not
    code, report, err = push(kb, capsys)
    assert code == 1
    assert report["created"] == ["a.md", "b.md"]  # b.md's page was made, its blocks refused
    assert "block limit" in err and "1,000 blocks" in err and "paid plan" in err and "single member" in err
    assert "HTTP 400" in err and "validation_error" in err  # Notion's own words stay in the message
    assert err.count("\n") == 1, err  # one line, not one failure per remaining document
    # the push stopped at the refusal: c.md was not tried, nothing else was sent
    assert [c for c in notion.calls() if c == ("POST", "/v1/pages")] == [("POST", "/v1/pages")] * 2
    assert notion.calls()[-1][0] == "PATCH"
    notion.block_limit = None  # upgraded: the next push completes b.md and makes c.md
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["updated"] == ["b.md"] and report["created"] == ["c.md"], report


def test_an_ordered_list_keeps_the_numbers_the_author_wrote(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decision 1169: Notion numbers every list from 1, so a list from 5 is paragraphs that carry their number."""
    (kb / "steps.md").write_text(
        "1. Install\n\n```sh\npip install x\n```\n\n2. Configure\n   - nested detail\n3. [ ] Run\n\n5) Five\n6) Six\n",
        encoding="utf-8",
    )
    code, report, _ = push(kb, capsys)
    assert code == 0, report

    def shown(block: dict[str, object]) -> tuple[str, str]:
        body = block[block["type"]]  # type: ignore[index]
        return block["type"], "".join(i["text"]["content"] for i in body["rich_text"])  # type: ignore[return-value,index]

    tree = notion.tree(page_of(notion))
    assert [shown(b) for b in tree] == [
        ("numbered_list_item", "Install"),  # a list from 1 stays Notion's numbered list
        ("code", "pip install x"),
        ("paragraph", "2. Configure"),  # the list the code block cut starts at 2: Notion would show 1
        ("to_do", "Run"),  # a task keeps its checkbox
        ("paragraph", "5) Five"),
        ("paragraph", "6) Six"),
    ]
    assert [shown(b) for b in tree[2]["paragraph"]["children"]] == [("bulleted_list_item", "nested detail")]
