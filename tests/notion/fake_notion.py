"""A local HTTP server implementing just the Notion endpoints the pusher uses.

Request and response shapes follow Notion's API reference (version 2022-06-28);
the documented request limits are enforced with Notion's ``validation_error``
answer, so a client that sends too much fails here as it would there. Every
request is recorded (method, path, query, headers, JSON body) for the tests to
assert on.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "secret_test_token_5f2c"  # what the fake accepts


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Node:
    id: str
    type: str
    body: dict[str, Any]  # the type object without children
    parent: str
    children: list[str] = field(default_factory=list)
    archived: bool = False


class Problem(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        self.status, self.code, self.message = status, code, message


class FakeNotion:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.pages: dict[str, dict[str, Any]] = {}  # id -> {title, parent, archived}
        self.nodes: dict[str, Node] = {}
        self.page_children: dict[str, list[str]] = {}
        self.inject: list[tuple[int, dict[str, str]]] = []  # answers served before handling the next requests
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                body = json.loads(raw) if raw else None
                with fake.lock:
                    fake.requests.append(
                        Recorded(
                            method,
                            parts.path,
                            parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                        )
                    )
                    if fake.inject:
                        status, headers = fake.inject.pop(0)
                        self._send(
                            status,
                            {"object": "error", "status": status, "code": "rate_limited", "message": "Rate limited"},
                            headers,
                        )
                        return
                    try:
                        status, answer = fake.handle(method, parts.path, parse_qs(parts.query), body, self.headers)
                    except Problem as p:
                        status, answer = (
                            p.status,
                            {"object": "error", "status": p.status, "code": p.code, "message": p.message},
                        )
                self._send(status, answer, {})

            def _send(self, status: int, answer: Any, headers: dict[str, str]) -> None:
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ------------------------------------------------------------------ the API
    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any, headers: Any) -> tuple[int, Any]:
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            raise Problem(401, "unauthorized", "API token is invalid.")
        if headers.get("Notion-Version") != "2022-06-28":
            raise Problem(400, "missing_version", "Notion-Version header failed validation.")
        segments = path.strip("/").split("/")
        if segments[:1] != ["v1"]:
            raise Problem(404, "invalid_request_url", "Invalid request URL.")
        rest = segments[1:]
        if method == "POST" and rest == ["pages"]:
            return 200, self.create_page(body)
        if method == "PATCH" and len(rest) == 2 and rest[0] == "pages":
            return 200, self.update_page(rest[1], body)
        if len(rest) == 3 and rest[0] == "blocks" and rest[2] == "children":
            if method == "GET":
                return 200, self.list_children(rest[1], query)
            if method == "PATCH":
                return 200, self.append(rest[1], body)
        if method == "DELETE" and len(rest) == 2 and rest[0] == "blocks":
            return 200, self.delete(rest[1])
        raise Problem(400, "invalid_request", f"Unsupported request {method} {path}.")

    def _page(self, page_id: str) -> dict[str, Any]:
        page = self.pages[page_id]
        return {
            "object": "page",
            "id": page_id,
            "archived": page["archived"],
            "parent": {"type": "page_id", "page_id": page["parent"]},
            "properties": {"title": {"id": "title", "type": "title", "title": page["title"]}},
        }

    def create_page(self, body: dict[str, Any]) -> dict[str, Any]:
        parent = body.get("parent", {}).get("page_id")
        if not parent:
            raise Problem(400, "validation_error", "body.parent.page_id should be defined.")
        page_id = str(uuid.uuid4())
        self.pages[page_id] = {"title": body["properties"]["title"]["title"], "parent": parent, "archived": False}
        self.page_children[page_id] = []
        if body.get("children"):
            self._create_children(page_id, body["children"], 0)
        return self._page(page_id)

    def update_page(self, page_id: str, body: dict[str, Any]) -> dict[str, Any]:
        if page_id not in self.pages:
            raise Problem(404, "object_not_found", f"Could not find page with ID: {page_id}.")
        if "properties" in body:
            self.pages[page_id]["title"] = body["properties"]["title"]["title"]
        if "archived" in body:
            self.pages[page_id]["archived"] = bool(body["archived"])
        return self._page(page_id)

    def _kids(self, block_id: str) -> list[str]:
        if block_id in self.page_children:
            return self.page_children[block_id]
        if block_id in self.nodes and not self.nodes[block_id].archived:
            return self.nodes[block_id].children
        raise Problem(404, "object_not_found", f"Could not find block with ID: {block_id}.")

    def _block(self, node: Node) -> dict[str, Any]:
        return {
            "object": "block",
            "id": node.id,
            "type": node.type,
            "has_children": bool(node.children),
            "archived": node.archived,
            node.type: node.body,
        }

    def list_children(self, block_id: str, query: dict[str, list[str]]) -> dict[str, Any]:
        kids = self._kids(block_id)
        size = int(query.get("page_size", ["100"])[0])
        start = int(query.get("start_cursor", ["0"])[0])
        chunk = kids[start : start + size]
        more = start + size < len(kids)
        return {
            "object": "list",
            "results": [self._block(self.nodes[k]) for k in chunk],
            "next_cursor": str(start + size) if more else None,
            "has_more": more,
            "type": "block",
            "block": {},
        }

    def _validate(self, children: list[dict[str, Any]], depth: int, where: str) -> int:
        if len(children) > 100:
            raise Problem(400, "validation_error", f"{where}.length should be ≤ `100`, instead was `{len(children)}`.")
        if depth > 2:
            raise Problem(400, "validation_error", f"{where} nests more than two levels.")
        count = 0
        for i, child in enumerate(children):
            kind = child.get("type")
            body = child.get(kind) if isinstance(kind, str) else None
            if not isinstance(body, dict):
                raise Problem(400, "validation_error", f"{where}[{i}] has no type object.")
            for item in body.get("rich_text", []) + [c for cell in body.get("cells", []) for c in cell]:
                if len(item["text"]["content"]) > 2000:
                    raise Problem(
                        400,
                        "validation_error",
                        f"{where}[{i}].{kind}.rich_text.text.content.length should be ≤ `2000`.",
                    )
                link = item["text"].get("link")
                if link and not link["url"].startswith(("http://", "https://", "mailto:")):
                    raise Problem(400, "validation_error", f"{where}[{i}] Invalid URL for link.")
            if len(body.get("rich_text", [])) > 100:
                raise Problem(400, "validation_error", f"{where}[{i}].{kind}.rich_text.length should be ≤ `100`.")
            count += 1 + self._validate(body.get("children", []), depth + 1, f"{where}[{i}].{kind}.children")
        return count

    def _create_children(self, parent: str, children: list[dict[str, Any]], depth: int) -> list[Node]:
        created = []
        for child in children:
            kind = child["type"]
            body = {k: v for k, v in child[kind].items() if k != "children"}
            node = Node(str(uuid.uuid4()), kind, body, parent)
            self.nodes[node.id] = node
            self._kids(parent).append(node.id)
            self._create_children(node.id, child[kind].get("children", []), depth + 1)
            created.append(node)
        return created

    def append(self, block_id: str, body: dict[str, Any]) -> dict[str, Any]:
        self._kids(block_id)
        children = body.get("children", [])
        if self._validate(children, 0, "body.children") > 1000:
            raise Problem(400, "validation_error", "body.children has more than 1000 block elements.")
        created = self._create_children(block_id, children, 0)
        return {
            "object": "list",
            "results": [self._block(n) for n in created],
            "next_cursor": None,
            "has_more": False,
            "type": "block",
            "block": {},
        }

    def delete(self, block_id: str) -> dict[str, Any]:
        node = self.nodes.get(block_id)
        if node is None or node.archived:
            raise Problem(404, "object_not_found", f"Could not find block with ID: {block_id}.")
        node.archived = True
        self._kids(node.parent).remove(block_id)
        return self._block(node)

    # ------------------------------------------------------------------ for assertions
    def tree(self, block_id: str) -> list[dict[str, Any]]:
        """The children of a page or block as block objects in request shape (``children`` nested)."""
        out = []
        for kid in self._kids(block_id):
            node = self.nodes[kid]
            body = dict(node.body)
            sub = self.tree(kid)
            if sub:
                body["children"] = sub
            out.append({"type": node.type, node.type: body})
        return out

    def calls(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.requests]
