"""A local HTTP server implementing just the Notion endpoints the pusher uses.

Request and response shapes follow Notion's API reference (version 2022-06-28), and so do
the refusals: every documented rule the pusher depends on is enforced with Notion's own
answer, so a client that sends what Notion refuses fails here as it would there. Each rule
names its page (``developers.notion.com/reference/...``):

* ``request-limits``: ``text.content`` and ``text.link.url`` at most 2,000 characters, counted
  as Notion counts them, in UTF-16 code units (an emoji outside the BMP weighs 2);
  ``equation.expression`` at most 1,000; any URL at most 2,000; any rich-text array at most
  100 items; a payload at most 1,000 block elements and 500 KB -> 400 ``validation_error``;
  an average of three requests per second -> 429 ``rate_limited`` with ``Retry-After``
  (only when ``rate_limit`` is set: the tests of the limiter turn it on);
* ``patch-block-children``: at most 100 children per array, at most two levels of nesting
  below the appended blocks (``....children should be not present``), children only under a
  block type that takes them, rows of a table only under it and as wide as it; ``after``
  (a child of the block) inserts the new blocks just after it;
* ``update-a-block``: ``PATCH /v1/blocks/{id}`` replaces the fields given of the block's type
  object, never its type nor its children;
* ``block``: the block types and their required fields, code languages from Notion's list,
  a table created with its rows (``table_width`` cells each), images by external URL;
* ``get-block-children`` / ``intro#pagination``: ``page_size`` 1-100, ``start_cursor`` one
  the server issued, ``has_more`` / ``next_cursor``;
* ``status-codes``: the error object ``{object: "error", status, code, message}`` and its
  codes; an archived (trashed) page or block cannot be edited (``validation_error``);
* ``versioning``: the ``Notion-Version`` header is required;
* ``create-a-file-upload`` / ``send-a-file-upload`` / ``file-upload`` (guide "Uploading small
  files", shown there with ``Notion-Version: 2022-06-28``): ``POST /v1/file_uploads`` makes a
  ``pending`` upload; ``POST /v1/file_uploads/{id}/send`` takes ``multipart/form-data`` with the
  bytes under ``file`` (at most 20 MB single part, and the workspace's limit, 5 MiB on the Free
  plan, ``get-self``: ``bot.workspace_limits.max_file_upload_size_in_bytes``) and makes it
  ``uploaded``; an ``image`` block of ``type: file_upload`` names an ``uploaded`` one (its
  ``expiry_time`` is cleared once attached: "upload once, attach many times"); an upload not
  attached can be made ``expired`` (``expire``), and attaching it is then refused;
* ``workspace-block-limits``: a Free workspace of more than one member holds 1,000 blocks in its
  lifetime (deleting gives none back); the write that first reaches the limit succeeds, later
  requests that create blocks are refused, reads, deletes and edits that create none go on
  (only when ``block_limit`` is set). The stored docs do not show the refusal's words: the fake
  answers 400 ``validation_error`` naming the block limit, which is what the pusher keys on.

Faults are injected with :class:`Fault`: an error answer before the request is handled, or
after it was applied (the ambiguous case a client must not blindly resend), or no answer at
all. Every request is recorded (method, path, query, headers, JSON body) for the tests.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "secret_test_token_5f2c"  # what the fake accepts
PARENT = "11111111-2222-3333-4444-555555555555"  # the parent page the tests push under
VERSION = "2022-06-28"

MAX_TEXT = 2000  # request-limits: text.content, text.link.url, any URL
MAX_EQUATION = 1000  # request-limits: equation.expression
MAX_ARRAY = 100  # request-limits: any array of rich text; patch-block-children: children per array
MAX_ELEMENTS = 1000  # request-limits: block elements per payload
MAX_PAYLOAD = 500_000  # request-limits: 500 KB per payload
MAX_DEPTH = 2  # patch-block-children: two levels of nesting below the appended blocks

# block#code: the languages Notion accepts (the list of the 2022-06-28 reference); anything else
# is a validation_error.
# Written out here, not imported from notion.blocks: the fake is the check on the push's own list.
LANGUAGES = frozenset(
    [
        *[
            "abap",
            "arduino",
            "bash",
            "basic",
            "c",
            "clojure",
            "coffeescript",
            "c++",
            "c#",
            "css",
            "dart",
            "diff",
            "docker",
            "elixir",
            "elm",
            "erlang",
        ],
        *[
            "flow",
            "fortran",
            "f#",
            "gherkin",
            "glsl",
            "go",
            "graphql",
            "groovy",
            "haskell",
            "html",
            "java",
            "javascript",
            "json",
            "julia",
            "kotlin",
        ],
        *[
            "latex",
            "less",
            "lisp",
            "livescript",
            "lua",
            "makefile",
            "markdown",
            "markup",
            "matlab",
            "mermaid",
            "nix",
            "objective-c",
            "ocaml",
        ],
        *[
            "pascal",
            "perl",
            "php",
            "powershell",
            "prolog",
            "protobuf",
            "python",
            "r",
            "reason",
            "ruby",
            "rust",
            "sass",
            "scala",
            "scheme",
            "scss",
        ],
        *["shell", "sql", "swift", "typescript", "verilog", "vhdl", "xml", "yaml"],
        *["plain text", "vb.net", "visual basic", "webassembly", "java/c/c++/c#"],
    ]
)

# block: the types that take children (headings only when toggleable); the rest refuse them.
PARENTS = frozenset(
    [
        *["paragraph", "bulleted_list_item", "numbered_list_item", "to_do", "toggle", "quote", "callout", "table"],
        *["synced_block", "column", "column_list", "template"],
    ]
)
TEXT_TYPES = frozenset(
    [
        *["paragraph", "heading_1", "heading_2", "heading_3", "bulleted_list_item", "numbered_list_item"],
        *["to_do", "toggle", "quote", "callout"],
    ]
)
COLORS = frozenset(
    f"{c}{s}"
    for c in ["default", "gray", "brown", "orange", "yellow", "green", "blue", "purple", "pink", "red"]
    for s in ("", "_background")
) - {"default_background"}
_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)  # links: http(s) only
_IMAGE_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)

CODES = {  # status-codes: the code an error answer of each status carries
    400: "validation_error",
    401: "unauthorized",
    403: "restricted_resource",
    404: "object_not_found",
    409: "conflict_error",
    429: "rate_limited",
    500: "internal_server_error",
    503: "service_unavailable",
    504: "gateway_timeout",
}


def utf16_len(text: str) -> int:
    """Characters as Notion counts them: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    """An answer the server gives instead of (or after) handling a matching request.

    ``status`` 0 closes the connection without an answer (a timeout for the client);
    ``applied`` handles the request first, so the change is made but the client cannot know;
    ``late`` applies it only after the next request was answered (a gateway timeout while
    Notion still works on it); ``when(method, path)`` picks the requests it applies to (every
    one by default), and the fault is used once. 502 answers with an HTML page, as Notion's
    gateway does.
    """

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    applied: bool = False
    late: bool = False
    when: Callable[[str, str], bool] | None = None


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


def invalid(message: str) -> Problem:
    return Problem(400, "validation_error", f"body failed validation: {message}")


class _Drop(Exception):
    pass


class FakeNotion:
    def __init__(
        self,
        *,
        rate_limit: float | None = None,
        burst: int = 3,
        clock: Callable[[], float] = time.monotonic,
        page_limit: int | None = None,
    ) -> None:
        self.requests: list[Recorded] = []
        self.pages: dict[str, dict[str, Any]] = {}  # id -> {title, parent, archived}
        self.nodes: dict[str, Node] = {}
        self.page_children: dict[str, list[str]] = {PARENT: []}  # the page shared with the integration
        self.unshared: set[str] = set()  # pages whose connection to the integration was removed (see unshare)
        self.unfetchable: set[str] = set()  # external image URLs Notion will not take ("Invalid image url")
        self.faults: list[Fault] = []
        self.rate_limit, self.burst, self.clock = rate_limit, burst, clock
        self.page_limit = page_limit  # answer at most this many results per list page (fewer than asked)
        self.uploads: dict[str, dict[str, Any]] = {}  # file upload id -> {status, filename, content_type, data}
        self.upload_limit = 5 * 1024 * 1024  # the Free plan's per-file limit (bot.workspace_limits)
        self.block_limit: int | None = None  # workspace-block-limits: lifetime blocks of the workspace
        self.blocks_made = 0  # blocks ever created (pages included), as the limit counts them
        self.limited = 0  # 429 answers given by the rate limiter
        self._late: list[tuple[str, str, dict[str, list[str]], Any, Any]] = []
        self._tokens = float(burst)
        self._refilled: float | None = None
        self.lock = threading.Lock()
        self._raw = b""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                with fake.lock:
                    try:
                        body = json.loads(raw) if raw else None
                    except ValueError:
                        body = None
                    fake.requests.append(
                        Recorded(method, parts.path, query, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    try:
                        status, answer, headers = fake.serve(method, parts.path, query, raw, body, self.headers)
                    except _Drop:
                        self.close_connection = True
                        return
                if status == 502:
                    self._send(502, b"<html><body>502 Bad Gateway</body></html>", "text/html", headers)
                else:
                    self._send(status, json.dumps(answer).encode(), "application/json", headers)

            def _send(self, status: int, data: bytes, kind: str, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
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

    # ------------------------------------------------------------------ faults, rate limit
    @property
    def inject(self) -> list[Fault]:  # the older name
        return self.faults

    def _fault(self, method: str, path: str) -> Fault | None:
        for i, fault in enumerate(self.faults):
            if fault.when is None or fault.when(method, path):
                return self.faults.pop(i)
        return None

    def _rate_limited(self) -> bool:
        """request-limits: an average of ``rate_limit`` requests per second, bursts of ``burst``."""
        if self.rate_limit is None:
            return False
        now = self.clock()
        if self._refilled is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._refilled) * self.rate_limit)
        self._refilled = now
        if self._tokens >= 1:
            self._tokens -= 1
            return False
        self.limited += 1
        return True

    def serve(
        self, method: str, path: str, query: dict[str, list[str]], raw: bytes, body: Any, headers: Any
    ) -> tuple[int, Any, dict[str, str]]:
        late, self._late = self._late, []
        try:
            return self._serve(method, path, query, raw, body, headers)
        finally:
            for request in late:  # Notion finished the timed-out request after answering this one
                with contextlib.suppress(Problem):
                    self.handle(*request)

    def _serve(
        self, method: str, path: str, query: dict[str, list[str]], raw: bytes, body: Any, headers: Any
    ) -> tuple[int, Any, dict[str, str]]:
        fault = self._fault(method, path)
        if fault is not None and fault.late:
            self._late.append((method, path, query, body, headers))
            return self._fault_answer(fault)
        if fault is not None and not fault.applied:
            return self._fault_answer(fault)
        if self._rate_limited():
            return (
                429,
                _error(429, "rate_limited", "You have been rate limited. Please try again in a few minutes."),
                {"Retry-After": "1"},
            )
        try:
            multipart = str(headers.get("Content-Type") or "").startswith("multipart/form-data")
            if raw and body is None and not multipart:
                raise Problem(400, "invalid_json", "Error parsing JSON body.")
            if len(raw) > MAX_PAYLOAD and not multipart:
                raise invalid(f"the request body is {len(raw)} bytes, more than the 500 KB limit.")
            self._raw = raw  # the bytes of a multipart request (send-a-file-upload), which has no JSON body
            status, answer = self.handle(method, path, query, body, headers)
        except Problem as p:
            return p.status, _error(p.status, p.code, p.message), {}
        if fault is not None:  # applied: the change is made, the answer lost
            return self._fault_answer(fault)
        return status, answer, {}

    @staticmethod
    def _fault_answer(fault: Fault) -> tuple[int, Any, dict[str, str]]:
        if fault.status == 0:
            raise _Drop
        code = CODES.get(fault.status, "internal_server_error")
        return fault.status, _error(fault.status, code, f"Injected {code}."), fault.headers

    # ------------------------------------------------------------------ the API
    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any, headers: Any) -> tuple[int, Any]:
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            raise Problem(401, "unauthorized", "API token is invalid.")
        if headers.get("Notion-Version") is None:
            raise Problem(
                400,
                "missing_version",
                "Notion-Version header failed validation: Notion-Version header should be defined, instead was "
                "`undefined`.",
            )
        if headers.get("Notion-Version") != VERSION:
            raise Problem(400, "validation_error", "Notion-Version header failed validation.")
        segments = path.strip("/").split("/")
        if segments[:1] != ["v1"]:
            raise Problem(400, "invalid_request_url", "Invalid request URL.")
        rest = segments[1:]
        if len(rest) >= 2 and rest[0] in ("pages", "blocks") and self._hidden(rest[1]):
            raise _not_shared(rest[1])
        if method == "POST" and rest == ["pages"]:
            return 200, self.create_page(_object(body))
        if method == "GET" and len(rest) == 2 and rest[0] == "pages":
            return 200, self._page(self._known_page(rest[1]))
        if method == "PATCH" and len(rest) == 2 and rest[0] == "pages":
            return 200, self.update_page(rest[1], _object(body))
        if len(rest) == 3 and rest[0] == "blocks" and rest[2] == "children":
            if method == "GET":
                return 200, self.list_children(rest[1], query)
            if method == "PATCH":
                return 200, self.append(rest[1], _object(body))
        if method == "DELETE" and len(rest) == 2 and rest[0] == "blocks":
            return 200, self.delete(rest[1])
        if method == "PATCH" and len(rest) == 2 and rest[0] == "blocks":
            return 200, self.update_block(rest[1], _object(body))
        if method == "GET" and rest == ["users", "me"]:
            return 200, {
                "object": "user",
                "id": "bot-user",
                "type": "bot",
                "bot": {"workspace_limits": {"max_file_upload_size_in_bytes": self.upload_limit}},
            }
        if method == "POST" and rest == ["file_uploads"]:
            return 200, self.create_upload(_object(body or {}))
        if method == "POST" and len(rest) == 3 and rest[0] == "file_uploads" and rest[2] == "send":
            return 200, self.send_upload(rest[1], str(headers.get("Content-Type") or ""), self._raw)
        raise Problem(400, "invalid_request", f"Unsupported request: {method} {path}.")

    # ------------------------------------------------------------------ file uploads
    def _upload(self, upload_id: str) -> dict[str, Any]:
        upload = self.uploads[upload_id]
        return {
            "object": "file_upload",
            "id": upload_id,
            "status": upload["status"],
            "filename": upload["filename"],
            "content_type": upload["content_type"],
            "content_length": len(upload["data"]) if upload["status"] == "uploaded" else None,
            "expiry_time": None if upload["attached"] else "2099-01-01T01:00:00.000Z",
            "upload_url": f"{self.url}/v1/file_uploads/{upload_id}/send",
        }

    def create_upload(self, body: dict[str, Any]) -> dict[str, Any]:
        mode = body.get("mode", "single_part")
        if mode != "single_part":
            raise invalid(f"body.mode `{mode}` is not supported here.")
        filename = body.get("filename")
        if filename is not None and (not isinstance(filename, str) or len(filename.encode()) > 900):
            raise invalid("body.filename should be a string of at most 900 bytes.")
        upload_id = str(uuid.uuid4())
        self.uploads[upload_id] = {
            "status": "pending",
            "filename": filename,
            "content_type": body.get("content_type"),
            "data": b"",
            "attached": False,
        }
        return self._upload(upload_id)

    def send_upload(self, upload_id: str, content_type: str, raw: bytes) -> dict[str, Any]:
        upload = self.uploads.get(upload_id)
        if upload is None:
            raise Problem(404, "object_not_found", f"Could not find file upload with ID: {upload_id}.")
        if upload["status"] != "pending":
            raise invalid(f"File upload {upload_id} is {upload['status']}, not pending.")
        if not content_type.startswith("multipart/form-data"):
            raise invalid("Content-Type should be multipart/form-data.")
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
        )
        parts = [p for p in message.iter_parts() if p.get_param("name", header="content-disposition") == "file"]
        if len(parts) != 1:
            raise invalid("body.file should be defined, instead was `undefined`.")
        data = parts[0].get_payload(decode=True) or b""
        if len(data) > min(20 * 1024 * 1024, self.upload_limit):
            raise invalid(f"The file is {len(data)} bytes, more than the workspace's limit of {self.upload_limit}.")
        upload.update(status="uploaded", data=data)
        upload["filename"] = upload["filename"] or parts[0].get_filename()
        return self._upload(upload_id)

    def expire(self, upload_id: str) -> None:
        """file-upload: an upload not attached within its expiry_time can no longer be used."""
        if not self.uploads[upload_id]["attached"]:
            self.uploads[upload_id]["status"] = "expired"

    def _known_page(self, page_id: str) -> str:
        if page_id not in self.pages:
            raise Problem(404, "object_not_found", f"Could not find page with ID: {page_id}.")
        return page_id

    def _page(self, page_id: str) -> dict[str, Any]:
        page = self.pages[page_id]
        return {
            "object": "page",
            "id": page_id,
            "archived": page["archived"],
            "parent": {"type": "page_id", "page_id": page["parent"]},
            "properties": {"title": {"id": "title", "type": "title", "title": page["title"]}},
        }

    def _title(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        title = body.get("properties", {}).get("title", {}).get("title")
        if not isinstance(title, list):
            raise invalid("body.properties.title.title should be an array.")
        _rich_text(title, "body.properties.title.title")
        return title

    def create_page(self, body: dict[str, Any]) -> dict[str, Any]:
        parent = body.get("parent", {}).get("page_id")
        if not parent:
            raise invalid("body.parent.page_id should be defined, instead was `undefined`.")
        if parent not in self.page_children or self._hidden(parent):  # status-codes: not shared, or no page
            raise _not_shared(parent)
        title = self._title(body)
        children = body.get("children", [])
        if self._validate(children, 0, "body.children", None) > MAX_ELEMENTS:
            raise invalid(f"body.children has more than {MAX_ELEMENTS} block elements.")
        if parent in self.pages and self.pages[parent]["archived"]:
            raise _archived()
        self._check_block_limit()
        self.blocks_made += 1
        page_id = str(uuid.uuid4())
        self.pages[page_id] = {"title": title, "parent": parent, "archived": False}
        self.page_children[page_id] = []
        # block#child_page: the new page is also a block of its parent
        plain = "".join(str(t.get("text", {}).get("content", "")) for t in title)
        self.nodes[page_id] = Node(page_id, "child_page", {"title": plain}, parent)
        self.page_children.setdefault(parent, []).append(page_id)
        self._create_children(page_id, children)
        return self._page(page_id)

    def update_page(self, page_id: str, body: dict[str, Any]) -> dict[str, Any]:
        self._known_page(page_id)
        if "archived" in body:
            if not isinstance(body["archived"], bool):
                raise invalid("body.archived should be a boolean.")
            if self.pages[page_id]["archived"] != body["archived"]:
                node, siblings = self.nodes[page_id], self.page_children.get(self.pages[page_id]["parent"], [])
                node.archived = body["archived"]
                if node.archived and page_id in siblings:  # a trashed page leaves its parent's children
                    siblings.remove(page_id)
                elif not node.archived:
                    siblings.append(page_id)
            self.pages[page_id]["archived"] = body["archived"]
        if "properties" in body:
            if self.pages[page_id]["archived"]:
                raise _archived()
            self.pages[page_id]["title"] = self._title(body)
            self.nodes[page_id].body = {"title": "".join(t["text"]["content"] for t in self.pages[page_id]["title"])}
        return self._page(page_id)

    def unshare(self, page_id: str) -> None:
        """The page's connection to the integration is removed: it and everything under it answer 404."""
        self.unshared.add(page_id)

    def _hidden(self, object_id: str) -> bool:
        """status-codes, object_not_found: a page or block not shared with the integration is not found."""
        seen: set[str] = set()
        while object_id and object_id not in seen:
            if object_id in self.unshared:
                return True
            seen.add(object_id)
            if object_id in self.pages:
                object_id = self.pages[object_id]["parent"]
            elif object_id in self.nodes:
                object_id = self.nodes[object_id].parent
            else:
                return False
        return False

    def _kids(self, block_id: str) -> list[str]:
        if block_id in self.page_children:
            return self.page_children[block_id]
        node = self.nodes.get(block_id)
        if node is not None and not node.archived and node.type != "child_page":  # a page's are above
            return node.children
        raise Problem(404, "object_not_found", f"Could not find block with ID: {block_id}.")

    def _archived_target(self, block_id: str) -> bool:
        if block_id in self.pages:
            return bool(self.pages[block_id]["archived"])
        node = self.nodes.get(block_id)
        while node is not None:  # a block on a trashed page is trashed with it
            if node.parent in self.pages:
                return bool(self.pages[node.parent]["archived"])
            node = self.nodes.get(node.parent)
        return False

    def _block(self, node: Node) -> dict[str, Any]:
        kids = self.page_children.get(node.id, []) if node.type == "child_page" else node.children
        return {
            "object": "block",
            "id": node.id,
            "type": node.type,
            "has_children": bool(kids),
            "archived": node.archived,
            node.type: node.body,
        }

    def list_children(self, block_id: str, query: dict[str, list[str]]) -> dict[str, Any]:
        kids = self._kids(block_id)
        size_text = query.get("page_size", ["100"])[0]
        if not size_text.isdigit() or not 1 <= int(size_text) <= MAX_ARRAY:
            raise invalid(f"page_size should be a number between 1 and 100, instead was `{size_text}`.")
        size = min(int(size_text), self.page_limit or MAX_ARRAY)
        start = 0
        if "start_cursor" in query:
            cursor = query["start_cursor"][0]
            if cursor not in kids:  # the cursor is the id of the next block, as Notion's
                raise invalid(f"start_cursor should be a valid cursor, instead was `{cursor}`.")
            start = kids.index(cursor)
        chunk = kids[start : start + size]
        more = start + size < len(kids)
        return {
            "object": "list",
            "results": [self._block(self.nodes[k]) for k in chunk],
            "next_cursor": kids[start + size] if more else None,
            "has_more": more,
            "type": "block",
            "block": {},
        }

    def _validate(self, children: Any, depth: int, where: str, parent: dict[str, Any] | None) -> int:
        """Check ``children`` (to go under a block of type ``parent``); the block elements they count."""
        if not isinstance(children, list):
            raise invalid(f"{where} should be an array.")
        if depth > MAX_DEPTH:
            raise invalid(f"{where} should be not present, instead was `{json.dumps(children)[:40]}...`.")
        if len(children) > MAX_ARRAY:
            raise invalid(f"{where}.length should be ≤ `{MAX_ARRAY}`, instead was `{len(children)}`.")
        count = 0
        for i, child in enumerate(children):
            at = f"{where}[{i}]"
            kind = child.get("type") if isinstance(child, dict) else None
            body = child.get(kind) if isinstance(kind, str) else None
            if not isinstance(body, dict):
                raise invalid(f"{at} should be a block object with its type object.")
            _block_body(kind, body, at, parent)
            if kind == "image" and body.get("type") == "file_upload":
                upload = self.uploads.get(body["file_upload"]["id"])
                if upload is None or upload["status"] != "uploaded":
                    raise invalid(
                        f"{at}.image.file_upload.id should name a file upload with status `uploaded`, instead was "
                        f"`{'unknown' if upload is None else upload['status']}`."
                    )
            if kind == "image" and body.get("external", {}).get("url") in self.unfetchable:
                # an image Notion will not take; its reported answer names neither the block nor why
                # (notion-sdk-js #211, notion-sdk-py #214)
                raise Problem(
                    400, "validation_error", "Content creation Failed. Fix the following: \nInvalid image url."
                )
            kids = body.get("children")
            if kids is not None:
                toggle_heading = kind.startswith("heading_") and body.get("is_toggleable") is True
                if kind not in PARENTS and not toggle_heading:
                    raise invalid(f"{at}.{kind}.children should be not present, instead was an array.")
                count += self._validate(kids, depth + 1, f"{at}.{kind}.children", {"type": kind, **body})
            elif kind == "table":
                raise invalid(f"{at}.table.children should be defined: a table is created with its rows.")
            count += 1
        return count

    def _check_block_limit(self) -> None:
        """workspace-block-limits: once the limit was reached, a request that creates blocks is refused."""
        if self.block_limit is not None and self.blocks_made >= self.block_limit:
            raise invalid("This workspace has reached its block limit. Upgrade to a paid plan to keep adding content.")

    def _create_children(self, parent: str, children: list[dict[str, Any]], after: str | None = None) -> list[Node]:
        created = []
        self.blocks_made += len(children)
        kids = self._kids(parent)
        at = kids.index(after) + 1 if after is not None else len(kids)
        for child in children:
            kind = child["type"]
            body = {k: v for k, v in child[kind].items() if k != "children"}
            if kind == "image" and body.get("type") == "file_upload":
                self.uploads[body["file_upload"]["id"]]["attached"] = True  # file-upload: expiry_time cleared
            node = Node(str(uuid.uuid4()), kind, body, parent)
            self.nodes[node.id] = node
            kids.insert(at, node.id)
            at += 1
            self._create_children(node.id, child[kind].get("children", []))
            created.append(node)
        return created

    def append(self, block_id: str, body: dict[str, Any]) -> dict[str, Any]:
        self._kids(block_id)
        if self._archived_target(block_id):
            raise _archived()
        children = body.get("children")
        if children is None:
            raise invalid("body.children should be defined, instead was `undefined`.")
        node = None if block_id in self.page_children else self.nodes.get(block_id)
        parent = None if node is None else {"type": node.type, **node.body}
        if parent is not None and parent["type"] not in PARENTS:
            raise invalid(f"Block type {parent['type']} does not support children.")
        if self._validate(children, 0, "body.children", parent) > MAX_ELEMENTS:
            raise invalid(f"body.children has more than {MAX_ELEMENTS} block elements.")
        after = body.get("after")  # patch-block-children: "the ID of the existing block that the new block
        if after is not None and after not in self._kids(block_id):  # should be appended after"
            raise invalid(f"body.after should be the id of a child of block {block_id}, instead was `{after}`.")
        if children:
            self._check_block_limit()
        created = self._create_children(block_id, children, after)
        return {
            "object": "list",
            "results": [self._block(n) for n in created],
            "next_cursor": None,
            "has_more": False,
            "type": "block",
            "block": {},
        }

    def update_block(self, block_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """update-a-block: the fields given replace those of the block's type object; children cannot be."""
        node = self.nodes.get(block_id)
        if node is None or node.type == "child_page":
            raise Problem(404, "object_not_found", f"Could not find block with ID: {block_id}.")
        if node.archived or self._archived_target(block_id):
            raise _archived()
        fields = body.get(node.type)
        if body.get("type", node.type) != node.type or set(body) - {node.type, "type", "archived", "in_trash"}:
            raise invalid(f"body.{node.type} should be defined: a block's type cannot change.")
        if not isinstance(fields, dict):
            raise invalid(f"body.{node.type} should be defined: a block's type cannot change.")
        if "children" in fields:
            raise invalid(f"body.{node.type}.children should be not present: append block children instead.")
        merged = {**node.body, **fields}
        parent = self.nodes.get(node.parent)
        _block_body(node.type, merged, "body", None if parent is None else {"type": parent.type, **parent.body})
        node.body = merged
        return self._block(node)

    def delete(self, block_id: str) -> dict[str, Any]:
        node = self.nodes.get(block_id)
        if node is None:
            raise Problem(404, "object_not_found", f"Could not find block with ID: {block_id}.")
        # status-codes / delete-a-block: a block already in the trash "can't be edited"; Notion
        # answers that, not object_not_found, to a DELETE sent again after a lost answer.
        if node.archived or self._archived_target(block_id):
            raise _archived()
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

    def live_pages(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.pages.items() if not v["archived"]}


# ---------------------------------------------------------------------- validation helpers
def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return {"object": "error", "status": status, "code": code, "message": message, "request_id": str(uuid.uuid4())}


def _archived() -> Problem:
    return Problem(
        400, "validation_error", "Can't edit block that is archived. You must unarchive the block before editing."
    )


def _not_shared(object_id: str) -> Problem:
    return Problem(
        404,
        "object_not_found",
        f"Could not find page with ID: {object_id}. Make sure the relevant pages and databases are shared with "
        "your integration.",
    )


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise invalid("body should be an object.")
    return body


def _rich_text(items: Any, where: str) -> None:
    """request-limits: a rich-text array of at most 100 items, each within its length limits."""
    if not isinstance(items, list):
        raise invalid(f"{where} should be an array.")
    if len(items) > MAX_ARRAY:
        raise invalid(f"{where}.length should be ≤ `{MAX_ARRAY}`, instead was `{len(items)}`.")
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        kind = item.get("type", "text") if isinstance(item, dict) else None
        if kind == "text":
            text = item.get("text")
            content = text.get("content") if isinstance(text, dict) else None
            if not isinstance(content, str):
                raise invalid(f"{at}.text.content should be a string.")
            if utf16_len(content) > MAX_TEXT:
                raise invalid(f"{at}.text.content.length should be ≤ `{MAX_TEXT}`, instead was `{utf16_len(content)}`.")
            link = text.get("link")
            if link is not None:
                url = link.get("url") if isinstance(link, dict) else None
                if not isinstance(url, str) or utf16_len(url) > MAX_TEXT:
                    raise invalid(f"{at}.text.link.url.length should be ≤ `{MAX_TEXT}`.")
                if not _URL.match(url):
                    raise invalid(f"{at}.text.link.url Invalid URL for link.")
        elif kind == "equation":
            expression = item.get("equation", {}).get("expression")
            if not isinstance(expression, str) or utf16_len(expression) > MAX_EQUATION:
                raise invalid(f"{at}.equation.expression.length should be ≤ `{MAX_EQUATION}`.")
        else:
            raise invalid(f"{at} should be a rich text object of type text or equation.")
        annotations = item.get("annotations")
        if annotations is not None and annotations.get("color", "default") not in COLORS:
            raise invalid(f"{at}.annotations.color should be a Notion colour.")


def _block_body(kind: str, body: dict[str, Any], at: str, parent: dict[str, Any] | None) -> None:
    """block: the fields each block type requires; table rows only in a table and as wide as it."""
    if (kind == "table_row") != (parent is not None and parent["type"] == "table"):
        raise invalid(f"{at}: table_row blocks go under a table, and a table holds only table_row blocks.")
    if kind in TEXT_TYPES:
        _rich_text(body.get("rich_text"), f"{at}.{kind}.rich_text")
        if body.get("color", "default") not in COLORS:
            raise invalid(f"{at}.{kind}.color should be a Notion colour.")
        if kind == "to_do" and not isinstance(body.get("checked", False), bool):
            raise invalid(f"{at}.to_do.checked should be a boolean.")
        if kind == "callout" and "icon" in body:
            icon = body["icon"]
            if not isinstance(icon, dict) or icon.get("type") != "emoji" or not icon.get("emoji"):
                raise invalid(f"{at}.callout.icon should be an emoji object.")
    elif kind == "code":
        _rich_text(body.get("rich_text"), f"{at}.code.rich_text")
        _rich_text(body.get("caption", []), f"{at}.code.caption")
        if body.get("language") not in LANGUAGES:
            raise invalid(
                f"{at}.code.language should be one of Notion's languages, instead was `{body.get('language')}`."
            )
    elif kind == "divider":
        if set(body) - {"children"}:
            raise invalid(f"{at}.divider should be an empty object.")
    elif kind == "image" and body.get("type") == "file_upload":
        upload_id = body.get("file_upload", {}).get("id")
        if not isinstance(upload_id, str):
            raise invalid(f"{at}.image.file_upload.id should be a string.")
        _rich_text(body.get("caption", []), f"{at}.image.caption")
    elif kind == "image":
        if body.get("type") != "external":
            raise invalid(f"{at}.image.type should be `external` or `file_upload`.")
        url = body.get("external", {}).get("url")
        if not isinstance(url, str) or utf16_len(url) > MAX_TEXT or not _IMAGE_URL.match(url):
            raise invalid(
                f"{at}.image.external.url should be an absolute http(s) URL of at most {MAX_TEXT} characters."
            )
        _rich_text(body.get("caption", []), f"{at}.image.caption")
    elif kind == "equation":
        expression = body.get("expression")
        if not isinstance(expression, str) or utf16_len(expression) > MAX_EQUATION:
            raise invalid(f"{at}.equation.expression.length should be ≤ `{MAX_EQUATION}`.")
    elif kind == "table":
        width = body.get("table_width")
        if not isinstance(width, int) or isinstance(width, bool) or width < 1:
            raise invalid(f"{at}.table.table_width should be a positive integer.")
        for flag in ("has_column_header", "has_row_header"):
            if not isinstance(body.get(flag, False), bool):
                raise invalid(f"{at}.table.{flag} should be a boolean.")
    elif kind == "table_row":
        cells = body.get("cells")
        assert parent is not None
        if not isinstance(cells, list) or len(cells) != parent["table_width"]:
            raise invalid(
                f"{at}.table_row.cells should have table_width ({parent['table_width']}) cells, "
                f"instead had {len(cells) if isinstance(cells, list) else 'none'}."
            )
        for j, cell in enumerate(cells):
            _rich_text(cell, f"{at}.table_row.cells[{j}]")
    else:
        raise invalid(f"{at}.type `{kind}` is not a block type the pusher may send.")
