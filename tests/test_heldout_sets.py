"""The held-out labelled sets (``bench/eval/heldout``, decision 415) stay well formed: the shared
sets' fields and types, every labelled file present in its corpus, every labelled heading an ATX
heading of that file (outside code fences) that occurs exactly once, and no query copied from a
shared set."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from shared_data import CORPORA, SHARED

HELDOUT = Path(__file__).resolve().parents[1] / "bench" / "eval" / "heldout"
SETS = ("rust-book", "vue-docs-zh-cn", "opensearch-docs")
TYPES = {"identifier", "keyword", "short", "question", "paraphrase"}
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _headings(text: str) -> list[str]:
    out, fence = [], None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if m and (fence is None or (m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence))):
            fence = m.group(1) if fence is None else None
            continue
        h = None if fence else _ATX.match(line)
        if h:
            out.append(h.group(2).strip())
    return out


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("corpus", SETS)
def test_heldout_set_is_well_formed(corpus: str) -> None:
    rows = _rows(HELDOUT / f"{corpus}.jsonl")
    assert len(rows) >= 25
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["type"] for r in rows} == TYPES
    for r in rows:
        assert set(r) == {"id", "query", "type", "relevant"} and r["query"].strip()
        assert r["relevant"] and any(lab["grade"] == 2 for lab in r["relevant"])
        for lab in r["relevant"]:
            assert lab["grade"] in (1, 2)


@pytest.mark.skipif(not CORPORA.is_dir(), reason="shared corpora not present")
@pytest.mark.parametrize("corpus", SETS)
def test_heldout_labels_name_real_unique_headings(corpus: str) -> None:
    root = CORPORA / corpus
    cache: dict[str, list[str]] = {}
    for r in _rows(HELDOUT / f"{corpus}.jsonl"):
        for lab in r["relevant"]:
            file = root / lab["path"]
            assert file.is_file(), f"{r['id']}: {lab['path']} missing"
            if lab["heading"] is None:
                continue
            heads = cache.setdefault(lab["path"], _headings(file.read_text("utf-8")))
            assert heads.count(lab["heading"]) == 1, f"{r['id']}: {lab['heading']!r} in {lab['path']}"


@pytest.mark.skipif(not (SHARED / "eval").is_dir(), reason="shared labelled sets not present")
@pytest.mark.parametrize("corpus", SETS)
def test_heldout_queries_are_not_shared_queries(corpus: str) -> None:
    shared = {r["query"].strip().lower() for r in _rows(SHARED / "eval" / f"{corpus}.jsonl")}
    assert not [r["id"] for r in _rows(HELDOUT / f"{corpus}.jsonl") if r["query"].strip().lower() in shared]
