"""The fake Notion refuses what Notion refuses: one test per documented rule the pusher depends on.

Pages cited are under https://developers.notion.com/reference/. A fake that accepts what
Notion refuses would let the pusher pass here and fail there.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from local_vector_search_mcp.notion.client import NotionClient, NotionError

from .fake_notion import PARENT, TOKEN, VERSION, FakeNotion, Fault


def call(notion: FakeNotion, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, Any]:
    sent = {"Authorization": f"Bearer {TOKEN}", "Notion-Version": VERSION} | headers
    sent = {k: v for k, v in sent.items() if v}
    response = httpx.request(method, notion.url + path, json=body, headers=sent, timeout=10)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text


def page(notion: FakeNotion) -> str:
    status, answer = call(
        notion, "POST", "/v1/pages", {"parent": {"page_id": PARENT}, "properties": {"title": {"title": []}}}
    )
    assert status == 200, answer
    return str(answer["id"])


def para(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "paragraph", "paragraph": {"rich_text": [{"type": "text", "text": {"content": text}}], **extra}}


def append(notion: FakeNotion, block_id: str, children: list[dict[str, Any]]) -> tuple[int, Any]:
    return call(notion, "PATCH", f"/v1/blocks/{block_id}/children", {"children": children})


def refused(answer: tuple[int, Any], needle: str = "") -> bool:
    status, body = answer
    return (
        status == 400
        and body["object"] == "error"
        and body["status"] == 400
        and body["code"] == "validation_error"
        and needle in body["message"]
    )


def nest(depth: int) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "bulleted_list_item", "bulleted_list_item": {"rich_text": []}}
    for _ in range(depth):
        block = {"type": "bulleted_list_item", "bulleted_list_item": {"rich_text": [], "children": [block]}}
    return block


def test_text_content_is_counted_in_utf16_units(notion: FakeNotion) -> None:
    """request-limits: text.content <= 2,000 characters; Notion counts UTF-16 code units."""
    pid = page(notion)
    assert append(notion, pid, [para("中" * 2000)])[0] == 200  # CJK: one unit each
    assert refused(append(notion, pid, [para("a" * 2001)]), "text.content.length should be ≤ `2000`")
    assert refused(append(notion, pid, [para("😀" * 1001)]), "instead was `2002`")  # 1,001 code points
    assert append(notion, pid, [para("😀" * 1000)])[0] == 200


def test_urls_and_rich_text_arrays_are_limited(notion: FakeNotion) -> None:
    """request-limits: text.link.url and any URL <= 2,000; any rich-text array <= 100 items."""
    pid = page(notion)
    link = {"type": "text", "text": {"content": "x", "link": {"url": "https://e.org/" + "a" * 2000}}}
    assert refused(append(notion, pid, [{"type": "paragraph", "paragraph": {"rich_text": [link]}}]), "link.url")
    relative = {"type": "text", "text": {"content": "x", "link": {"url": "other.md"}}}
    assert refused(append(notion, pid, [{"type": "paragraph", "paragraph": {"rich_text": [relative]}}]), "Invalid URL")
    items = [{"type": "text", "text": {"content": "x"}}] * 101
    assert refused(append(notion, pid, [{"type": "paragraph", "paragraph": {"rich_text": items}}]), "≤ `100`")
    row = {"type": "table_row", "table_row": {"cells": [items]}}
    table = {"type": "table", "table": {"table_width": 1, "children": [row]}}
    assert refused(append(notion, pid, [table]), "cells[0].length should be ≤ `100`")
    image = {"type": "image", "image": {"type": "external", "external": {"url": "https://e.org/" + "b" * 2000}}}
    assert refused(append(notion, pid, [image]), "image.external.url")
    eq = {"type": "equation", "equation": {"expression": "x" * 1001}}
    assert refused(append(notion, pid, [eq]), "expression.length should be ≤ `1000`")


def test_payload_limits(notion: FakeNotion) -> None:
    """request-limits: at most 1,000 block elements and 500 KB per payload."""
    pid = page(notion)
    parents = [{"type": "toggle", "toggle": {"rich_text": [], "children": [para("x")] * 10}}] * 91
    assert refused(append(notion, pid, parents), "more than 1000 block elements")  # 91 + 910
    big = [para("y" * 2000) for _ in range(100)]
    for block in big:
        block["paragraph"]["rich_text"] = block["paragraph"]["rich_text"] * 3
    assert refused(append(notion, pid, big), "500 KB")


def test_children_per_request_and_nesting(notion: FakeNotion) -> None:
    """patch-block-children: <= 100 children per array; two levels of nesting in one request."""
    pid = page(notion)
    assert refused(append(notion, pid, [para("x")] * 101), "body.children.length should be ≤ `100`")
    assert append(notion, pid, [nest(2)])[0] == 200  # body.children[0].x.children[0].x.children: allowed
    assert refused(append(notion, pid, [nest(3)]), ".children should be not present")


def test_only_some_block_types_take_children(notion: FakeNotion) -> None:
    """block: code, divider, image and headings (unless toggleable) have no children."""
    pid = page(notion)
    code = {"type": "code", "code": {"rich_text": [], "language": "rust", "children": [para("x")]}}
    assert refused(append(notion, pid, [code]), "code.children should be not present")
    heading = {"type": "heading_2", "heading_2": {"rich_text": [], "children": [para("x")]}}
    assert refused(append(notion, pid, [heading]), "heading_2.children should be not present")
    heading["heading_2"]["is_toggleable"] = True
    assert append(notion, pid, [heading])[0] == 200
    _, created = append(notion, pid, [{"type": "divider", "divider": {}}])
    assert refused(append(notion, created["results"][0]["id"], [para("x")]), "does not support children")


def test_code_language_is_one_of_notions(notion: FakeNotion) -> None:
    """block#code: ``language`` is an enumerated list; any other value is a validation_error."""
    pid = page(notion)
    for language, ok in [
        ("rust", True),
        ("plain text", True),
        ("java/c/c++/c#", True),
        ("text", False),
        ("Rust", False),
    ]:
        block = {"type": "code", "code": {"rich_text": [], "language": language}}
        assert (append(notion, pid, [block])[0] == 200) is ok, language


def test_tables_are_created_with_rows_of_their_width(notion: FakeNotion) -> None:
    """block#table: created with at least one table_row, each of ``table_width`` cells; rows only in tables."""
    pid = page(notion)
    assert refused(append(notion, pid, [{"type": "table", "table": {"table_width": 2}}]), "created with its rows")
    row = {"type": "table_row", "table_row": {"cells": [[], []]}}
    narrow = {"type": "table", "table": {"table_width": 3, "children": [row]}}
    assert refused(append(notion, pid, [narrow]), "should have table_width (3) cells")
    assert refused(append(notion, pid, [row]), "table_row blocks go under a table")
    status, created = append(notion, pid, [{"type": "table", "table": {"table_width": 2, "children": [row]}}])
    assert status == 200
    table_id = created["results"][0]["id"]
    assert append(notion, table_id, [row])[0] == 200  # more rows appended to the table
    assert refused(append(notion, table_id, [para("x")]), "table holds only table_row")


def test_images_by_external_url_only(notion: FakeNotion) -> None:
    """block#image: the pusher sends external images, absolute http(s) URLs."""
    pid = page(notion)
    for url, ok in [("https://e.org/a.png", True), ("images/a.png", False), ("data:image/png;base64,AA", False)]:
        block = {"type": "image", "image": {"type": "external", "external": {"url": url}}}
        assert (append(notion, pid, [block])[0] == 200) is ok, url
    upload = {"type": "image", "image": {"type": "file", "file": {"url": "https://e.org/a.png"}}}
    assert refused(append(notion, pid, [upload]), "image.type")


def test_pagination(notion: FakeNotion) -> None:
    """get-block-children, intro#pagination: page_size 1-100, cursors the server issued, fewer results allowed."""
    pid = page(notion)
    append(notion, pid, [para(str(i)) for i in range(100)])
    append(notion, pid, [para(str(i)) for i in range(100, 130)])
    assert refused(call(notion, "GET", f"/v1/blocks/{pid}/children?page_size=101"), "page_size")
    assert refused(call(notion, "GET", f"/v1/blocks/{pid}/children?start_cursor=nope"), "start_cursor")
    status, first = call(notion, "GET", f"/v1/blocks/{pid}/children?page_size=100")
    assert status == 200 and first["has_more"] is True and len(first["results"]) == 100
    status, second = call(notion, "GET", f"/v1/blocks/{pid}/children?page_size=100&start_cursor={first['next_cursor']}")
    assert len(second["results"]) == 30 and second["has_more"] is False and second["next_cursor"] is None
    notion.page_limit = 7  # "the response may contain fewer than page_size results": the client follows cursors
    client = NotionClient(TOKEN, base_url=notion.url, requests_per_second=1000)
    assert client.list_children(pid) == notion.page_children[pid]
    client.close()


def test_error_objects_and_codes(notion: FakeNotion) -> None:
    """status-codes: ``{object: "error", status, code, message}`` with the documented code per status."""
    for status, code in [(409, "conflict_error"), (429, "rate_limited"), (500, "internal_server_error"),
                         (503, "service_unavailable"), (504, "gateway_timeout")]:  # fmt: skip
        notion.faults.append(Fault(status))
        got, body = call(notion, "GET", f"/v1/blocks/{PARENT}/children")
        assert got == status and body["object"] == "error" and body["status"] == status and body["code"] == code
    notion.faults.append(Fault(502))  # the gateway's own page, not JSON
    got, body = call(notion, "GET", f"/v1/blocks/{PARENT}/children")
    assert got == 502 and isinstance(body, str) and "Bad Gateway" in body
    got, body = call(notion, "GET", f"/v1/blocks/{PARENT}/children", **{"Notion-Version": ""})
    assert got == 400 and body["code"] == "missing_version"  # versioning: the header is required
    got, body = call(notion, "GET", f"/v1/blocks/{PARENT}/children", Authorization="Bearer nope")
    assert got == 401 and body["code"] == "unauthorized"


def test_applied_fault_makes_the_change_and_loses_the_answer(notion: FakeNotion) -> None:
    pid = page(notion)
    notion.faults.append(Fault(504, applied=True))
    assert append(notion, pid, [para("x")])[0] == 504
    assert len(notion.page_children[pid]) == 1  # the ambiguous case: applied, but answered an error
    notion.faults.append(Fault(0))
    with pytest.raises(httpx.HTTPError):
        append(notion, pid, [para("y")])
    assert len(notion.page_children[pid]) == 1


def test_archived_pages_cannot_be_edited(notion: FakeNotion) -> None:
    """status-codes / archive a page: a page in the trash refuses edits until restored."""
    pid = page(notion)
    _, created = append(notion, pid, [para("x")])
    assert call(notion, "PATCH", f"/v1/pages/{pid}", {"archived": True})[0] == 200
    assert refused(append(notion, pid, [para("y")]), "archived")
    assert refused(call(notion, "DELETE", f"/v1/blocks/{created['results'][0]['id']}"), "archived")
    assert call(notion, "GET", f"/v1/pages/{pid}")[1]["archived"] is True
    assert call(notion, "PATCH", f"/v1/pages/{pid}", {"archived": False})[0] == 200
    assert append(notion, pid, [para("y")])[0] == 200
    block = f"/v1/blocks/{created['results'][0]['id']}"
    assert call(notion, "DELETE", block)[0] == 200
    assert refused(call(notion, "DELETE", block), "archived")  # deleted twice: in the trash, not unknown
    assert call(notion, "DELETE", "/v1/blocks/00000000-0000-0000-0000-000000000000")[0] == 404


def test_rate_limit_answers_429_with_retry_after() -> None:
    """request-limits: an average of three requests per second; above it, 429 with Retry-After."""
    now = [0.0]
    fake = FakeNotion(rate_limit=3, burst=3, clock=lambda: now[0])
    try:
        answers = [call(fake, "GET", f"/v1/blocks/{PARENT}/children")[0] for _ in range(5)]
        assert answers[:3] == [200] * 3 and answers[3:] == [429, 429]
        response = httpx.get(
            f"{fake.url}/v1/blocks/{PARENT}/children",
            headers={"Authorization": f"Bearer {TOKEN}", "Notion-Version": VERSION},
        )
        assert response.status_code == 429 and response.headers["Retry-After"] == "1"
        assert json.loads(response.text)["code"] == "rate_limited"

        waits: list[float] = []

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            now[0] += seconds

        limited = fake.limited
        client = NotionClient(TOKEN, base_url=fake.url, requests_per_second=3, sleep=sleep, clock=lambda: now[0])
        pid = client.create_page(PARENT, "T")  # the 429s left over from above are honoured, then spacing holds
        before = fake.limited
        for _ in range(20):
            client.list_children(pid)
        assert fake.limited == before  # spaced at the documented average: never limited
        assert before - limited <= 1
        client.close()
    finally:
        fake.close()


def test_the_client_surfaces_validation_errors(notion: FakeNotion) -> None:
    client = NotionClient(TOKEN, base_url=notion.url, requests_per_second=1000)
    pid = client.create_page(PARENT, "T")
    with pytest.raises(NotionError) as info:
        client.append_children(pid, [para("a" * 2001)])
    assert info.value.status == 400 and info.value.code == "validation_error"
    client.close()


def test_a_page_not_shared_with_the_integration_is_not_found(notion: FakeNotion) -> None:
    """status-codes, object_not_found: "the resource has not been shared with owner of the bearer token".
    A parent the integration was never given, or whose connection was removed, answers 404 to a new
    page under it, and everything under a removed page answers 404 too."""
    elsewhere = "99999999-2222-3333-4444-555555555555"
    status, body = call(
        notion, "POST", "/v1/pages", {"parent": {"page_id": elsewhere}, "properties": {"title": {"title": []}}}
    )
    assert status == 404 and body["code"] == "object_not_found" and "shared with your integration" in body["message"]
    pid = page(notion)
    assert append(notion, pid, [para("kept")])[0] == 200
    notion.unshare(PARENT)
    assert call(notion, "GET", f"/v1/blocks/{pid}/children")[0] == 404
    assert call(notion, "GET", f"/v1/pages/{pid}")[0] == 404
    assert (
        call(notion, "POST", "/v1/pages", {"parent": {"page_id": PARENT}, "properties": {"title": {"title": []}}})[0]
        == 404
    )
    notion.unshared.clear()
    assert call(notion, "GET", f"/v1/blocks/{pid}/children")[0] == 200


def test_after_inserts_just_after_a_child_of_the_block(notion: FakeNotion) -> None:
    """patch-block-children: ``after``, "the ID of the existing block that the new block should be
    appended after"; the id of a block that is not a child of this one is refused."""
    pid = page(notion)
    assert append(notion, pid, [para("a"), para("c")])[0] == 200
    first, last = notion.page_children[pid]
    status, body = call(notion, "PATCH", f"/v1/blocks/{pid}/children", {"children": [para("b")], "after": first})
    assert status == 200 and notion.page_children[pid][0] == first and notion.page_children[pid][2] == last
    assert [b["paragraph"]["rich_text"][0]["text"]["content"] for b in notion.tree(pid)] == ["a", "b", "c"]
    assert body["results"][0]["id"] == notion.page_children[pid][1]
    other = page(notion)
    assert refused(call(notion, "PATCH", f"/v1/blocks/{other}/children", {"children": [para("x")], "after": first}))


def test_an_image_notion_will_not_take_refuses_the_append(notion: FakeNotion) -> None:
    """Reported, not documented (notion-sdk-js #211, notion-sdk-py #214): an external image URL Notion
    will not take refuses the whole append with neither the block's index nor a reason."""
    pid = page(notion)
    url = "https://cdn.example/preview?id=7"
    notion.unfetchable.add(url)
    image = {"type": "image", "image": {"type": "external", "external": {"url": url}}}
    assert refused(append(notion, pid, [para("a"), image]), "Invalid image url.")
    assert notion.page_children[pid] == []


def test_file_uploads_follow_the_documented_lifecycle(notion: FakeNotion) -> None:
    """create-a-file-upload, send-a-file-upload (multipart, ``file``), file-upload (attach only when uploaded)."""
    status, made = call(notion, "POST", "/v1/file_uploads", {"filename": "a.png", "content_type": "image/png"})
    assert status == 200 and made["object"] == "file_upload" and made["status"] == "pending"
    target = page(notion)
    image = {"type": "image", "image": {"type": "file_upload", "file_upload": {"id": made["id"]}}}
    assert refused(append(notion, target, [image]), "status `uploaded`")  # not sent yet
    send = f"/v1/file_uploads/{made['id']}/send"
    assert refused(call(notion, "POST", send, {"file": "not multipart"}), "multipart")
    headers = {"Authorization": f"Bearer {TOKEN}", "Notion-Version": VERSION}
    answer = httpx.post(notion.url + send, files={"file": ("a.png", b"\x89PNG", "image/png")}, headers=headers)
    assert answer.status_code == 200 and answer.json()["status"] == "uploaded", answer.text
    assert answer.json()["content_length"] == 4
    assert append(notion, target, [image])[0] == 200 and append(notion, target, [image])[0] == 200  # attach many
    assert notion.uploads[made["id"]]["attached"] and call(notion, "GET", "/v1/users/me")[1]["bot"][
        "workspace_limits"
    ] == {"max_file_upload_size_in_bytes": 5 * 1024 * 1024}
    # over the workspace's limit: refused; an upload not attached in time expires and is refused
    status, big = call(notion, "POST", "/v1/file_uploads", {})
    notion.upload_limit = 3
    answer = httpx.post(
        notion.url + f"/v1/file_uploads/{big['id']}/send",
        files={"file": ("b.png", b"1234", "image/png")},
        headers=headers,
    )
    assert answer.status_code == 400 and "limit" in answer.json()["message"]
    status, late = call(notion, "POST", "/v1/file_uploads", {})
    httpx.post(
        notion.url + f"/v1/file_uploads/{late['id']}/send",
        files={"file": ("c.png", b"12", "image/png")},
        headers=headers,
    )
    notion.expire(late["id"])
    expired = {"type": "image", "image": {"type": "file_upload", "file_upload": {"id": late["id"]}}}
    assert refused(append(notion, target, [expired]), "expired")


def test_a_block_is_updated_in_place_never_its_type_nor_its_children(notion: FakeNotion) -> None:
    """update-a-block: the fields given replace the type object's; children go through append only."""
    target = page(notion)
    status, made = append(notion, target, [para("old", children=[para("kid")])])
    assert status == 200
    block_id = made["results"][0]["id"]
    assert call(notion, "PATCH", f"/v1/blocks/{block_id}", para("new"))[0] == 200
    assert notion.tree(target) == [
        {
            "type": "paragraph",
            "paragraph": {"rich_text": para("new")["paragraph"]["rich_text"], "children": [para("kid")]},
        }
    ]
    assert refused(call(notion, "PATCH", f"/v1/blocks/{block_id}", {"quote": {"rich_text": []}}), "type")
    assert refused(call(notion, "PATCH", f"/v1/blocks/{block_id}", para("x", children=[])), "children")
