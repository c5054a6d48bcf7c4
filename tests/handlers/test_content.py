"""Content-only tools: a handler returns content blocks; the server and the CLI render them.

Uses a test-only handler bound in place of kb_load_image (a content-only tool of spec/), so the
rendering is checked independently of the image code.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from lvsm_contract.content import BlobResource, ContentResult, ImageBlock, TextBlock
from lvsm_contract.models import KbLoadImageArguments

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.cli import print_content
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.errors import KbError
from local_vector_search_mcp.handlers import BINDINGS
from local_vector_search_mcp.server.app import content_result
from local_vector_search_mcp.workspace import Workspace

PNG = b"\x89PNG\r\n\x1a\nnot really"
PDF = b"%PDF-1.7 binary\x00\xff"


def _load_image(ws: Workspace, request: KbLoadImageArguments) -> ContentResult:
    meta = {"path": request.path, "bytes": len(PNG)}
    return ContentResult(
        blocks=(
            ImageBlock(data=PNG, mime_type="image/png"),
            TextBlock(text=json.dumps(meta)),
            BlobResource(uri=f"file:///{request.path}", mime_type="application/pdf", data=PDF),
        )
    )


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    settings = load_settings(
        CliOptions(root=str(tmp_path), storage_path=str(tmp_path / "index.db"), embedding_provider="none"),
        cwd=tmp_path,
        environ={},
    )
    workspace = Workspace(settings)
    yield workspace
    workspace.close()


@pytest.fixture
def bound(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(BINDINGS, "kb_load_image", lambda: _load_image)
    dispatch._handler.cache_clear()
    yield
    dispatch._handler.cache_clear()


def test_invoke_returns_the_blocks(ws: Workspace, bound: None) -> None:
    result = dispatch.invoke(ws, "kb_load_image", {"path": "img/a.png"})
    assert isinstance(result, ContentResult)
    assert result.blocks[0] == ImageBlock(data=PNG, mime_type="image/png")
    assert "kb_load_image" in [t.name for t in dispatch.available_tools()]


def test_the_server_sends_mcp_blocks_without_structured_content(ws: Workspace, bound: None) -> None:
    result = dispatch.invoke(ws, "kb_load_image", {"path": "img/a.png"})
    assert isinstance(result, ContentResult)
    call = content_result(result)
    assert call.structured_content is None and not call.is_error
    image, text, resource = call.content
    assert isinstance(image, types.ImageContent) and base64.b64decode(image.data) == PNG
    assert image.mime_type == "image/png"
    assert isinstance(text, types.TextContent) and json.loads(text.text) == {"path": "img/a.png", "bytes": len(PNG)}
    assert isinstance(resource, types.EmbeddedResource)
    assert isinstance(resource.resource, types.BlobResourceContents)
    assert base64.b64decode(resource.resource.blob) == PDF and resource.resource.uri == "file:///img/a.png"
    wire = call.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "structuredContent" not in wire and wire["content"][0]["mimeType"] == "image/png"


def test_the_cli_prints_text_and_summarises_binary(
    ws: Workspace, bound: None, capsys: pytest.CaptureFixture[str]
) -> None:
    result = dispatch.invoke(ws, "kb_load_image", {"path": "img/a.png"})
    assert isinstance(result, ContentResult)
    print_content(result)
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"type": "image", "mimeType": "image/png", "bytes": len(PNG)},
        {"path": "img/a.png", "bytes": len(PNG)},
        {"type": "resource", "uri": "file:///img/a.png", "mimeType": "application/pdf", "bytes": len(PDF)},
    ]


def test_a_handler_returning_the_wrong_type_is_an_internal_error(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(BINDINGS, "kb_load_image", lambda: lambda ws, request: {"not": "content"})
    dispatch._handler.cache_clear()
    try:
        with pytest.raises(KbError) as raised:
            dispatch.invoke(ws, "kb_load_image", {"path": "img/a.png"})
        assert raised.value.code == "INTERNAL_ERROR"
    finally:
        dispatch._handler.cache_clear()
