"""The Notion port and its HTTP adapter over Notion's public REST API (httpx).

:class:`NotionPort` is what the pusher needs from Notion: ten endpoints, no more.
:class:`NotionClient` implements it against ``https://api.notion.com/v1`` with the
``Notion-Version`` header pinned, the integration token sent as a bearer token
(never logged, never part of an error message), requests spaced to the documented
average of three per second, and failures retried as far as it is safe (decision 466):
429 (``rate_limited``: not handled) and 409 (``conflict_error``: the transaction was not
committed) after ``Retry-After`` seconds, on every request; 5xx answers and lost answers only on
requests that can be sent twice with the same effect (reads, deletes, page updates). Creating
a page and appending blocks are not resent: their :class:`NotionError` says ``ambiguous`` (the
change may have been made) and the pusher looks before it sends again.

Endpoints used (request -> response shapes from Notion's API reference):

=====================================  ===============================================
``POST /v1/pages``                     ``{parent: {page_id}, properties: {title}}`` -> page
``PATCH /v1/pages/{id}``               ``{properties}`` or ``{archived: true}`` -> page
``GET /v1/pages/{id}``                 -> page (``archived``)
``GET /v1/blocks/{id}/children``       ``?page_size=100&start_cursor=`` -> ``{results, has_more, next_cursor}``
``PATCH /v1/blocks/{id}/children``     ``{children: [...], after?}`` -> ``{results: [created first-level blocks]}``
``DELETE /v1/blocks/{id}``             -> the block, archived
``PATCH /v1/blocks/{id}``              ``{<type>: {fields}}`` -> the block (children untouched)
``GET /v1/users/me``                   -> the bot (``bot.workspace_limits``: the upload size limit)
``POST /v1/file_uploads``              ``{filename, content_type}`` -> file upload (``pending``)
``POST /v1/file_uploads/{id}/send``    multipart/form-data, the bytes as ``file`` -> file upload (``uploaded``)
=====================================  ===============================================
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import httpx

from ..retry_after import retry_after
from .blocks import truncate

__all__ = ["NOTION_VERSION", "NotionClient", "NotionError", "NotionPort", "encode_body", "title_property"]

NOTION_VERSION = "2022-06-28"
_RETRY_ALWAYS = frozenset({409, 429})  # not applied: safe to resend any request
_RETRY_IDEMPOTENT = frozenset({500, 502, 503, 504, 529})  # may have been applied
_MAX_WAIT_S = 120.0  # a Retry-After beyond this means "come back later", not "wait"

log = logging.getLogger(__name__)


class NotionError(Exception):
    """A Notion request failed; ``status`` is the HTTP status (0: no answer), ``code`` Notion's error code.

    ``ambiguous``: the request may have been applied although it failed (5xx, answer lost), so
    it must not be sent again before looking. ``fatal``: no later request can succeed either
    (token refused, Notion unreachable, asked to wait too long): the push stops.
    """

    def __init__(
        self, message: str, status: int = 0, code: str = "", *, ambiguous: bool = False, fatal: bool = False
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.ambiguous = ambiguous
        self.fatal = fatal or status == 401


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as sent: compact UTF-8 JSON (what the pusher measures against the 500 KB limit)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def title_property(title: str) -> dict[str, Any]:
    """The ``properties`` of a page under a page parent: its title, cut to the 2,000-character limit."""
    return {"title": {"title": [{"type": "text", "text": {"content": truncate(title)}}]}}


class NotionPort(Protocol):
    def create_page(self, parent_page_id: str, title: str) -> str:
        """Create an empty page under ``parent_page_id``; its id."""

    def set_title(self, page_id: str, title: str) -> None: ...

    def archive_page(self, page_id: str) -> None: ...

    def page_archived(self, page_id: str) -> bool:
        """Whether the page is in Notion's trash."""

    def restore_page(self, page_id: str) -> None: ...

    def list_children(self, block_id: str) -> list[str]:
        """Ids of the block's (or page's) first-level children, in order, across every page of results."""

    def child_pages(self, page_id: str) -> list[tuple[str, str, bool]]:
        """(id, title, has children) of the pages directly under ``page_id``."""

    def append_children(self, block_id: str, children: list[dict[str, Any]], after: str | None = None) -> list[str]:
        """Append at most 100 blocks (at the end, or just after the child ``after``); the created first-level ids."""

    def delete_block(self, block_id: str) -> None: ...

    def update_block(self, block_id: str, block: dict[str, Any]) -> None:
        """Replace the fields of ``block``'s type object (its children are not touched)."""

    def upload_limit(self) -> int | None:
        """The workspace's largest file upload in bytes, when Notion says it."""

    def upload_file(self, filename: str, content_type: str, data: bytes) -> str:
        """Upload one file (single part, at most 20 MB); the id of the file upload, status ``uploaded``."""


class NotionClient:
    def __init__(
        self,
        token: str,
        *,
        base_url: str = "https://api.notion.com",
        requests_per_second: float = 3.0,
        max_retries: int = 5,
        timeout: float = 75.0,  # past Notion's own 60-second request limit: it answers 503/504 first
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url.rstrip("/") + "/v1/",
            headers={
                "Authorization": f"Bearer {token}",
                "Notion-Version": NOTION_VERSION,
                "Accept": "application/json",
            },
            timeout=timeout,
        )
        self._interval = 1.0 / requests_per_second
        self._max_retries = max_retries
        self._sleep = sleep
        self._clock = clock
        self._next_at = 0.0
        self.requests = 0  # sent, retries included

    def __repr__(self) -> str:  # never show the token
        return f"NotionClient({self._http.base_url})"

    def close(self) -> None:
        self._http.close()

    # the port -----------------------------------------------------------------
    def create_page(self, parent_page_id: str, title: str) -> str:
        page = self._request(
            "POST",
            "pages",
            {"parent": {"page_id": parent_page_id}, "properties": title_property(title)},
            idempotent=False,
        )
        return str(page["id"])

    def set_title(self, page_id: str, title: str) -> None:
        self._request("PATCH", f"pages/{page_id}", {"properties": title_property(title)})

    def archive_page(self, page_id: str) -> None:
        self._request("PATCH", f"pages/{page_id}", {"archived": True})

    def page_archived(self, page_id: str) -> bool:
        return bool(self._request("GET", f"pages/{page_id}").get("archived"))

    def restore_page(self, page_id: str) -> None:
        self._request("PATCH", f"pages/{page_id}", {"archived": False})

    def list_children(self, block_id: str) -> list[str]:
        return [str(block["id"]) for block in self._blocks(block_id)]

    def child_pages(self, page_id: str) -> list[tuple[str, str, bool]]:
        return [
            (str(b["id"]), str(b.get("child_page", {}).get("title", "")), bool(b.get("has_children")))
            for b in self._blocks(page_id)
            if b.get("type") == "child_page"
        ]

    def _blocks(self, block_id: str) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params = {"page_size": "100"} | ({"start_cursor": cursor} if cursor else {})
            page = self._request("GET", f"blocks/{block_id}/children", params=params)
            blocks.extend(b for b in page.get("results", []) if isinstance(b, dict))
            cursor = page.get("next_cursor")
            if not page.get("has_more") or not cursor:
                return blocks

    def append_children(self, block_id: str, children: list[dict[str, Any]], after: str | None = None) -> list[str]:
        if len(children) > 100:
            raise ValueError("Notion appends at most 100 children per request")
        body: dict[str, Any] = {"children": children} | ({"after": after} if after else {})
        page = self._request("PATCH", f"blocks/{block_id}/children", body, idempotent=False)
        return [str(block["id"]) for block in page.get("results", [])]

    def delete_block(self, block_id: str) -> None:
        self._request("DELETE", f"blocks/{block_id}")

    def update_block(self, block_id: str, block: dict[str, Any]) -> None:
        kind = block["type"]
        body = {k: v for k, v in block[kind].items() if k != "children"}
        self._request("PATCH", f"blocks/{block_id}", {kind: body})  # the same fields twice: the same block

    def upload_limit(self) -> int | None:
        bot = self._request("GET", "users/me").get("bot")
        limits = bot.get("workspace_limits") if isinstance(bot, dict) else None
        size = limits.get("max_file_upload_size_in_bytes") if isinstance(limits, dict) else None
        return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None

    def upload_file(self, filename: str, content_type: str, data: bytes) -> str:
        # Sent again after a lost answer: a second upload object is harmless, the one not attached
        # expires within the hour (file-upload: expiry_time).
        made = self._request("POST", "file_uploads", {"filename": filename, "content_type": content_type})
        upload_id = str(made["id"])
        sent = self._request(
            "POST", f"file_uploads/{upload_id}/send", files={"file": (filename, data, content_type)}, idempotent=False
        )
        if sent.get("status") != "uploaded":
            raise NotionError(f"Notion did not take the upload of {filename} (status {sent.get('status')!r}).")
        return upload_id

    # transport ----------------------------------------------------------------
    def _throttle(self) -> None:
        now = self._clock()
        if now < self._next_at:
            self._sleep(self._next_at - now)
        self._next_at = max(now, self._next_at) + self._interval

    def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
        *,
        files: dict[str, tuple[str, bytes, str]] | None = None,
        idempotent: bool = True,
    ) -> dict[str, Any]:
        """Send one request; retried while it is safe (see the module docstring)."""
        attempt = 0
        where = f"{method} /v1/{path}"
        while True:
            self._throttle()
            self.requests += 1
            try:
                if files is not None:  # multipart/form-data: httpx writes the header with its boundary
                    response = self._http.request(method, path, files=files, params=params)
                else:
                    content = None if body is None else encode_body(body)
                    headers = None if body is None else {"Content-Type": "application/json"}
                    response = self._http.request(method, path, content=content, params=params, headers=headers)
            except httpx.TransportError as exc:
                sent = not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                if sent and idempotent and attempt < self._max_retries:
                    attempt += 1
                    self._sleep(float(min(2 ** (attempt - 1), 30)))
                    continue
                raise NotionError(
                    f"Notion could not be reached ({where}): {type(exc).__name__}",
                    ambiguous=sent,
                    fatal=not sent,
                ) from None
            status = response.status_code
            retry = status in _RETRY_ALWAYS or (idempotent and status in _RETRY_IDEMPOTENT)
            if retry and attempt < self._max_retries:
                attempt += 1
                wait = _retry_after(response, attempt)
                if wait > _MAX_WAIT_S:
                    raise NotionError(
                        f"Notion asks to wait {wait:.0f} s before {where}; try the push again later.",
                        status,
                        "rate_limited",
                        fatal=True,
                    )
                log.info("notion: %s on %s, waiting %.1f s", status, where, wait)
                self._sleep(wait)
                continue
            if response.is_error:
                raise _error(method, path, response, ambiguous=not idempotent and status in _RETRY_IDEMPOTENT)
            data = response.json() if response.content else {}
            return data if isinstance(data, dict) else {}


def _retry_after(response: httpx.Response, attempt: int) -> float:
    wait = retry_after(response.headers.get("Retry-After"))
    if wait is None:
        return float(min(2 ** (attempt - 1), 30))  # no usable header: back off exponentially
    return wait


def _error(method: str, path: str, response: httpx.Response, *, ambiguous: bool) -> NotionError:
    code, message = "", ""
    try:
        data = response.json()
        if isinstance(data, dict):
            code, message = str(data.get("code", "")), str(data.get("message", ""))
    except ValueError:
        pass
    detail = f"{code}: {message}" if code or message else response.reason_phrase
    if response.status_code in (400, 403) and "block limit" in message.lower():
        # Every later request that creates a block meets the same refusal: the push stops (1168).
        return NotionError(
            f"Notion's workspace has reached the Free plan's block limit and refuses new blocks "
            f"({method} /v1/{path}, HTTP {response.status_code}: {detail}). A Free workspace with more "
            "than one member holds 1,000 blocks in its lifetime, and deleting blocks gives none back. "
            "To push: upgrade the workspace to a paid plan, or push to a workspace with a single member "
            "(no limit there). The push stopped; the next one pushes what this one did not reach.",
            response.status_code,
            code,
            fatal=True,
        )
    return NotionError(
        f"Notion refused {method} /v1/{path} (HTTP {response.status_code}) {detail}",
        response.status_code,
        code,
        ambiguous=ambiguous,
    )
