"""Fixtures of the Notion tests: the fake server and a knowledge base configured to push to it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .fake_notion import PARENT, TOKEN, FakeNotion


@pytest.fixture
def notion() -> Iterator[FakeNotion]:
    fake = FakeNotion()
    yield fake
    fake.close()


@pytest.fixture
def kb(tmp_path: Path, notion: FakeNotion, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (tmp_path / "config.yaml").write_text(
        json.dumps({"notion": {"parentPageId": PARENT, "apiUrl": notion.url, "requestsPerSecond": 100}}),
        encoding="utf-8",
    )
    monkeypatch.setenv("NOTION_TOKEN", TOKEN)
    return root
