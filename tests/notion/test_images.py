"""Local images are uploaded with Notion's File Upload API, once per content (decision 1170), through the fake."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from .fake_notion import PARENT, FakeNotion
from .test_push import push

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # the fake does not decode images: bytes are bytes


def state(kb: Path) -> dict[str, Any]:
    return dict(json.loads((kb.parent / ".local-vector-search-mcp" / "notion-pages.json").read_text("utf-8")))


def images(notion: FakeNotion, page_id: str) -> list[dict[str, Any]]:
    return [b["image"] for b in notion.tree(page_id) if b["type"] == "image"]


def placeholders(notion: FakeNotion, page_id: str) -> list[str]:
    out = []
    for block in notion.tree(page_id):
        if block["type"] == "paragraph":
            text = "".join(i["text"]["content"] for i in block["paragraph"]["rich_text"])
            if text.startswith("Image not uploaded"):
                out.append(text)
    return out


def uploads_sent(notion: FakeNotion) -> int:
    return sum(1 for method, path in notion.calls() if method == "POST" and path == "/v1/file_uploads")


def test_local_images_are_uploaded_once_and_attached(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (kb / "img").mkdir()
    (kb / "img" / "cat.png").write_bytes(PNG)
    (kb / "big.png").write_bytes(b"x" * 5000)
    (kb / "notes.txt").write_text("not an image", encoding="utf-8")
    (tmp_path / "outside.png").write_bytes(PNG)
    os.symlink(tmp_path / "outside.png", kb / "img" / "link.png")
    (kb / "a.md").write_text(
        "# A\n\n![A cat](img/cat.png)\n\n![out](../outside.png)\n\n![linked out](img/link.png)\n\n"
        "![big](big.png)\n\n![text](notes.txt)\n\n![gone](nope.png)\n",
        encoding="utf-8",
    )
    (kb / "sub").mkdir()
    (kb / "sub" / "b.md").write_text("# B\n\n![same cat](../img/cat.png)\n", encoding="utf-8")
    notion.upload_limit = 4000  # the workspace's limit (get-self): big.png is over it
    code, report, _ = push(kb, capsys)
    assert code == 0, report
    pages = state(kb)["parents"][PARENT]
    a, b = pages["a.md"]["pageId"], pages["sub/b.md"]["pageId"]
    # one upload for the two references: the bytes, the name and the type Notion was given
    assert uploads_sent(notion) == 1
    ((upload_id, upload),) = notion.uploads.items()
    assert upload["data"] == PNG and upload["filename"] == "cat.png" and upload["content_type"] == "image/png"
    assert upload["status"] == "uploaded" and upload["attached"]
    assert images(notion, a) == [
        {
            "type": "file_upload",
            "file_upload": {"id": upload_id},
            "caption": [{"type": "text", "text": {"content": "A cat"}}],
        }
    ]
    assert images(notion, b)[0]["file_upload"] == {"id": upload_id}
    # outside the root (also through a symbolic link), over the limit, no image type, missing: placeholders
    assert placeholders(notion, a) == [
        "Image not uploaded: out (../outside.png)",
        "Image not uploaded: linked out (img/link.png)",
        "Image not uploaded: big (big.png)",
        "Image not uploaded: text (notes.txt)",
        "Image not uploaded: gone (nope.png)",
    ]
    assert state(kb)["uploads"] == {hashlib.sha256(PNG).hexdigest(): upload_id}

    # an edit of the text keeps the image block and uploads nothing; a new document reuses the upload
    (kb / "a.md").write_text((kb / "a.md").read_text("utf-8") + "\nMore text.\n", encoding="utf-8")
    (kb / "c.md").write_text("# C\n\n![cat again](img/cat.png)\n", encoding="utf-8")
    before = len(notion.requests)
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["updated"] == ["a.md"] and report["created"] == ["c.md"], report
    assert uploads_sent(notion) == 1
    c = state(kb)["parents"][PARENT]["c.md"]["pageId"]
    assert images(notion, c)[0]["file_upload"] == {"id": upload_id}
    sent = notion.calls()[before:]
    assert sent.count(("GET", "/v1/users/me")) == 1  # the limit is asked once a push (for big.png)

    # new bytes under the same name: uploaded again
    (kb / "img" / "cat.png").write_bytes(PNG + b"!")
    (kb / "c.md").write_text("# C\n\n![cat again](img/cat.png)\n\nedited\n", encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["updated"] == ["c.md"], report
    assert uploads_sent(notion) == 2
    assert images(notion, c)[0]["file_upload"]["id"] != upload_id


def test_an_upload_notion_no_longer_takes_is_made_again(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "cat.png").write_bytes(PNG)
    (kb / "a.md").write_text("![cat](cat.png)\n", encoding="utf-8")
    # kept by an earlier push for these bytes, but never attached and expired since (or another workspace's)
    folder = kb.parent / ".local-vector-search-mcp"
    folder.mkdir()
    kept = {"version": 1, "parents": {}, "uploads": {hashlib.sha256(PNG).hexdigest(): "0000-gone"}}
    (folder / "notion-pages.json").write_text(json.dumps(kept), encoding="utf-8")
    code, report, err = push(kb, capsys)
    assert code == 0, (report, err)
    ((upload_id, upload),) = notion.uploads.items()
    assert upload["attached"] and state(kb)["uploads"] == {hashlib.sha256(PNG).hexdigest(): upload_id}
    page = state(kb)["parents"][PARENT]["a.md"]["pageId"]
    assert [i["file_upload"]["id"] for i in images(notion, page)] == [upload_id]


def test_an_upload_that_fails_leaves_a_placeholder_and_is_tried_next_push(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    from .fake_notion import Fault

    (kb / "cat.png").write_bytes(PNG)
    (kb / "a.md").write_text("# A\n\n![cat](cat.png)\n", encoding="utf-8")
    notion.faults.append(Fault(400, when=lambda method, path: path.endswith("/send")))
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["created"] == ["a.md"], report
    page = state(kb)["parents"][PARENT]["a.md"]["pageId"]
    assert placeholders(notion, page) == ["Image not uploaded: cat (cat.png)"]
    code, report, _ = push(kb, capsys)  # bytes unchanged, but the image is still owed
    assert code == 0 and report["updated"] == ["a.md"], report
    assert [i["type"] for i in images(notion, page)] == ["file_upload"] and placeholders(notion, page) == []
    assert push(kb, capsys)[1]["unchanged"] == ["a.md"]


def test_a_page_with_an_uploaded_image_is_relinked_in_place(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second pass (1167) rebuilds the page as pushed with the kept upload: nothing is uploaded again."""
    (kb / "cat.png").write_bytes(PNG)
    (kb / "a.md").write_text("# A\n\n![cat](cat.png)\n\nSee [B](b.md).\n", encoding="utf-8")
    (kb / "b.md").write_text("# B\n", encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0 and sorted(report["created"]) == ["a.md", "b.md"], report  # type: ignore[call-overload]
    pages = state(kb)["parents"][PARENT]
    a = pages["a.md"]["pageId"]
    assert uploads_sent(notion) == 1 and not any(method == "DELETE" for method, _ in notion.calls())
    tree = notion.tree(a)
    assert tree[1]["image"]["type"] == "file_upload"
    assert tree[2]["paragraph"]["rich_text"][1]["text"]["link"]["url"].endswith(
        pages["b.md"]["pageId"].replace("-", "")
    )


def test_an_image_that_appeared_since_makes_the_relink_push_the_page_whole(
    kb: Path, notion: FakeNotion, capsys: pytest.CaptureFixture[str]
) -> None:
    (kb / "a.md").write_text("# A\n\n![cat](cat.png)\n\nSee [B](b.md).\n", encoding="utf-8")
    assert push(kb, capsys)[0] == 0  # cat.png missing: a placeholder; b.md not there: no link
    (kb / "cat.png").write_bytes(PNG)
    (kb / "b.md").write_text("# B\n", encoding="utf-8")
    code, report, _ = push(kb, capsys)
    assert code == 0 and report["updated"] == ["a.md"] and report["created"] == ["b.md"], report
    page = state(kb)["parents"][PARENT]["a.md"]["pageId"]
    assert [i["type"] for i in images(notion, page)] == ["file_upload"] and placeholders(notion, page) == []
