from __future__ import annotations

import io
from pathlib import Path

import pytest

from local_vector_search_mcp.export.pdf import BookOptions, render_book
from local_vector_search_mcp.markdown import parse_document
from local_vector_search_mcp.paths import PathGuard


def export(root: Path, rel: str, out: Path | None = None, **options: str | None) -> tuple[Path, list[str]]:
    """Render ``rel`` under ``root`` into ``out`` (default ``<root>/<rel>.pdf``); return it and the warnings."""
    guard = PathGuard(root, root / ".lvsm" / "index.db")
    doc = parse_document((root / rel).read_bytes())
    buffer = io.BytesIO()
    warnings = render_book(guard, rel, doc, buffer, BookOptions(**options))  # type: ignore[arg-type]
    target = out or root / (rel[:-3] + ".pdf")
    target.write_bytes(buffer.getvalue())
    return target, warnings


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    return root
