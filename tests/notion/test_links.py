"""Links between pushed documents become links to their Notion pages (decision 1167), through the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from local_vector_search_mcp.notion.push import link_target, page_url

from .fake_notion import PARENT, FakeNotion
from .test_push import push


def pages(kb: Path) -> dict[str, Any]:
    state = json.loads((kb.parent / ".local-vector-search-mcp" / "notion-pages.json").read_text(encoding="utf-8"))
    return dict(state["parents"][PARENT])


def links_in(notion: FakeNotion, page_id: str) -> dict[str, str | None]:
    """Text of each rich-text run on the page that is a link, or names a document -> its URL."""
    out: dict[str, str | None] = {}

    def walk(blocks: list[dict[str, Any]]) -> None:
        for block in blocks:
            body = block[block["type"]]
            for item in body.get("rich_text", []):
                link = item["text"].get("link")
                out[item["text"]["content"]] = link["url"] if link else None
            walk(body.get("children", []))

    walk(notion.tree(page_id))
    return out


def unlinked(runs: dict[str, str | None], text: str) -> bool:
    """Whether ``text`` is on the page in a run without a link (neighbouring plain runs are merged)."""
    return any(text in content and url is None for content, url in runs.items())


def write(kb: Path, rel: str, text: str) -> None:
    path = kb / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


A = "# Alpha\n\nSee [the beta page](b.md) and [its setup](b.md#setup-steps).\n\n## Intro\n\nFirst part.\n"
B = (
    "# Beta\n\nBack to [alpha's intro](a.md#intro), [nowhere](missing.md), [a script](run.py).\n\n"
    "## Setup steps\n\nDo this.\n\n[up](#beta)\n"
)
C = "# Gamma\n\n[Alpha](../a.md) from a folder, [Beta](/b.md) from the root.\n"


def test_links_between_pushed_documents_point_at_their_pages(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    write(kb, "a.md", A)
    write(kb, "b.md", B)
    write(kb, "sub/c.md", C)
    code, report, _ = push(kb, capsys)
    assert code == 0, report
    assert sorted(report["created"]) == ["a.md", "b.md", "sub/c.md"]  # type: ignore[call-overload]
    assert report["updated"] == []  # the second pass patches pages made in this push: still "created"
    mapped = pages(kb)
    a, b, c = mapped["a.md"], mapped["b.md"], mapped["sub/c.md"]
    intro = a["anchors"]["intro"]
    setup = b["anchors"]["setup-steps"]
    assert notion.nodes[intro].type == "heading_2" and notion.nodes[setup].type == "heading_2"
    # a.md links forward to b.md, made after it: patched by the second pass of the same push
    assert links_in(notion, a["pageId"]) == {
        "See ": None,
        "the beta page": page_url(b["pageId"]),
        " and ": None,
        "its setup": page_url(b["pageId"], setup),
        ".": None,
        "Alpha": None,
        "Intro": None,
        "First part.": None,
    }
    beta = links_in(notion, b["pageId"])
    assert beta["alpha's intro"] == f"https://www.notion.so/{a['pageId'].replace('-', '')}#{intro.replace('-', '')}"
    assert unlinked(beta, "nowhere") and unlinked(beta, "a script")  # not pushed documents: text only, as before
    assert beta["up"] == page_url(b["pageId"], b["anchors"]["beta"])  # an anchor of its own page
    gamma = links_in(notion, c["pageId"])
    assert gamma["Alpha"] == page_url(a["pageId"]) and gamma["Beta"] == page_url(b["pageId"])

    # the second pass updated the blocks in place: no block was deleted, the pages kept their blocks' ids
    assert not any(method == "DELETE" for method, _ in notion.calls())
    patched = [path for method, path in notion.calls() if method == "PATCH" and path.count("/") == 3]
    assert len(patched) == 2  # a.md's paragraph, b.md's "up" paragraph: one request each
    assert len(notion.requests) == 3 + 3 + 2  # pages, their appends, the two updates

    before = len(notion.requests)
    code, report, _ = push(kb, capsys)
    assert code == 0 and sorted(report["unchanged"]) == ["a.md", "b.md", "sub/c.md"]  # type: ignore[call-overload]
    assert len(notion.requests) == before  # settled: nothing is sent again


def test_a_table_of_contents_links_to_its_own_headings(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    write(kb, "toc.md", "# Guide\n\n- [Intro](#intro)\n  - [Deep part](#deep-part)\n\n## Intro\n\n### Deep part\n")
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["created"] == ["toc.md"], report
    entry = pages(kb)["toc.md"]
    item = notion.tree(entry["pageId"])[1]["bulleted_list_item"]
    assert item["rich_text"][0]["text"]["link"]["url"] == page_url(entry["pageId"], entry["anchors"]["intro"])
    nested = item["children"][0]["bulleted_list_item"]["rich_text"][0]["text"]["link"]["url"]
    assert nested == page_url(entry["pageId"], entry["anchors"]["deep-part"])
    assert [b for b, _ in entry["blocks"]] == notion.page_children[entry["pageId"]]  # ids kept by the update


def test_a_moved_heading_or_a_removed_page_rewrites_the_links_to_it(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    write(kb, "a.md", A)
    write(kb, "b.md", B)
    assert push(kb, capsys)[0] == 0
    old_intro = pages(kb)["a.md"]["anchors"]["intro"]
    # the heading is pushed again (its text changed, its anchor did not): b.md's link follows its new block
    write(kb, "a.md", A.replace("## Intro", "## *Intro*"))
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["updated"] == ["a.md", "b.md"], report
    mapped = pages(kb)
    new_intro = mapped["a.md"]["anchors"]["intro"]
    assert new_intro != old_intro
    assert links_in(notion, mapped["b.md"]["pageId"])["alpha's intro"] == page_url(mapped["a.md"]["pageId"], new_intro)
    # b.md leaves: its page is archived, and a.md's links to it lose their target
    (kb / "b.md").unlink()
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["archived"] == ["b.md"] and report["updated"] == ["a.md"], report
    alpha = links_in(notion, pages(kb)["a.md"]["pageId"])
    assert unlinked(alpha, "the beta page") and unlinked(alpha, "its setup")
    assert not any(url for url in alpha.values())


def test_pushing_one_document_links_to_pages_pushed_before(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    write(kb, "b.md", B)
    assert push(kb, capsys)[0] == 0
    write(kb, "a.md", A)
    code, report, _ = push(kb, capsys, "a.md")
    assert code == 0 and report["created"] == ["a.md"]
    mapped = pages(kb)
    assert links_in(notion, mapped["a.md"]["pageId"])["the beta page"] == page_url(mapped["b.md"]["pageId"])


@pytest.mark.parametrize(
    ("path", "href", "target"),
    [
        ("a.md", "b.md", "b.md"),
        ("d/a.md", "../b.md#Part-One", "b.md#part-one"),
        ("d/a.md", "./e/My%20Doc.md", "d/e/My Doc.md"),
        ("d/a.md", "/x/b.md", "x/b.md"),
        ("d/a.md", "#here", "d/a.md#here"),
        ("a.md", "../outside.md", None),
        ("a.md", "pic.png", None),
        ("a.md", "mailto:x@y.z", None),
        ("a.md", "//host/b.md", None),
        ("a.md", "", None),
    ],
)
def test_link_targets(path: str, href: str, target: str | None) -> None:
    assert link_target(path, href) == target


def test_pages_pushed_before_links_existed_are_relinked_once(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mapping written by an earlier version has no ``links``: its pages are looked at once, in place."""
    from local_vector_search_mcp.notion.push import Pusher

    write(kb, "a.md", A)
    write(kb, "b.md", "# Beta\n\n## Setup steps\n\nNo links here.\n")
    with monkeypatch.context() as old_version:
        old_version.setattr(Pusher, "_target_url", lambda self, target: None)  # links kept their text only
        assert push(kb, capsys)[0] == 0
    state_file = kb.parent / ".local-vector-search-mcp" / "notion-pages.json"
    state = json.loads(state_file.read_text("utf-8"))
    for entry in state["parents"][PARENT].values():  # as the earlier version wrote them
        entry.pop("links"), entry.pop("anchors", None)
    state_file.write_text(json.dumps(state), encoding="utf-8")
    before = len(notion.requests)
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["updated"] == ["a.md"] and report["unchanged"] == ["b.md"], report
    sent = notion.calls()[before:]
    # a.md's paragraph updated in place, twice: to b.md's page, then (second pass) to its heading, whose
    # block a.md could not know before b.md was looked at; b.md cost nothing
    assert [m for m, _ in sent] == ["PATCH", "PATCH"] and sent[0] == sent[1]
    mapped = pages(kb)
    assert links_in(notion, mapped["a.md"]["pageId"])["its setup"] == page_url(
        mapped["b.md"]["pageId"], mapped["b.md"]["anchors"]["setup-steps"]
    )
    assert mapped["b.md"]["links"] == {}
    before = len(notion.requests)
    assert push(kb, capsys)[0] == 0 and len(notion.requests) == before
