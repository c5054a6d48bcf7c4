"""The Markdown kb_save_image returns must reach the image it saved when pasted into a document.

A name may hold characters a Markdown destination reads as syntax (`%` starts an escape, `#` a
fragment); the project's own readers of links (the PDF export, kb_links, kb_move_image with
`updateLinks`) decode the destination as CommonMark does, so a link written raw reaches another
file (decision 760).
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import anyio
import pytest
from PIL import Image

from .client import connect, server_command

pytestmark = pytest.mark.conformance

CONFIG = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}


def png() -> str:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), (1, 2, 3)).save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


@pytest.mark.parametrize("name", ["a%20b", "C# notes", "50%", "plain name"])
def test_the_returned_markdown_reaches_the_saved_image(
    name: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, CONFIG) as conn:
            saved = await conn.call("kb_save_image", {"data": png(), "fileName": name})
            assert not saved.is_error, saved.texts
            assert saved.structured["path"] == f"images/{name}.png"
            markdown = saved.structured["markdown"]
            created = await conn.call(
                "kb_create", {"request": {"path": "page.md", "markdown": f"# Page\n\n{markdown}\n"}}
            )
            assert not created.is_error, created.texts
            book = await conn.call("kb_create_pdf_book", {"request": {"path": "page.md"}})
            assert not book.is_error, book.texts
            assert book.structured["warnings"] == [], markdown  # a missing image becomes a placeholder and a warning

    anyio.run(run)
