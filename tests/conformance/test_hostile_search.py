"""kb_search over MCP under hostile queries: every answer is a result or an error of the contract.

The property suite (``tests/search/test_search_properties.py``) drives the search service in
process; this is the same promise seen by a client of the real server over stdio (or HTTP with
``--transport http``), JSON on the wire included: full-text syntax, control characters, every
script, odd spaces, an over-long query. Embeddings are off, so ``semantic`` must be
INDEX_NOT_READY and ``hybrid`` falls back to lexical with a warning.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from hostile_corpus import CORPUS, LONG_TOKEN, write_corpus

from .client import Connection, connect, server_command

pytestmark = pytest.mark.conformance

CONFIG = {"embedding": {"provider": "none"}}

QUERIES = [
    '"',
    '""',
    "'",
    "*",
    "^",
    ":",
    "-",
    "(",
    ")",
    "NEAR(",
    "NEAR(a b, 2)",
    "AND",
    "OR NOT",
    "heading:",
    "heading: shell",
    "{heading body}: x",
    "- heading:",
    "a && b || c",
    "std::vec::Vec<T>",
    "[ValidateSet('a','b')]",
    "foo_bar.baz()",
    "--flag=value",
    "C# C++ .NET node.js",
    "@decorator $var #tag",
    "🤖",
    "🚀",
    "共享状态",
    "東京",
    "한국어",
    "cafe",
    "العربية",
    "zero\u200bwidth",
    "non\u00a0breaking",
    "\u0000 \u001f \u007f",
    "\ufeff\u3000",
    "\u200b",
    LONG_TOKEN,
    "x" * 4000,
    "the",
    "to be or not to be",
    "how do I stop echoing a password?",
    '"replace the binaries" -start',
    "x" * 4097,
    " ",
]


async def _call(conn: Connection, query: str, mode: str) -> tuple[dict[str, object] | None, dict[str, str] | None]:
    result = await conn.call("kb_search", {"request": {"query": query, "mode": mode, "topK": 5}})
    return (None, result.error) if result.is_error else (result.structured, None)


def test_every_hostile_query_is_answered_or_refused_by_the_contract(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    ws = write_corpus(tmp_path / "ws")

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, CONFIG) as conn:
            await conn.call("kb_reindex", {"request": {"scope": "all"}})
            with anyio.fail_after(120):
                while (await conn.call("kb_status", {})).structured["indexing"]["isRunning"]:
                    await anyio.sleep(0.1)
            for query in QUERIES:
                blank = not query.strip() or len(query) > 4096
                for mode in ("lexical", "hybrid", "semantic"):
                    found, error = await _call(conn, query, mode)
                    if blank:
                        assert error is not None and error["code"] == "INVALID_ARGUMENT", (query[:20], mode)
                    elif mode == "semantic":
                        assert error is not None and error["code"] == "INDEX_NOT_READY", (query[:20], error)
                    else:
                        assert error is None and found is not None, (query[:20], mode, error)
                        assert len(found["results"]) <= 5  # type: ignore[arg-type]
            # a word of a document finds it over the wire too
            found, _ = await _call(conn, "🤖", "lexical")
            assert found is not None and found["results"][0]["path"] == "langs/emoji.md"  # type: ignore[index]
            found, _ = await _call(conn, "cafe", "hybrid")
            assert found is not None and "[café]" in found["results"][0]["snippet"]  # type: ignore[index]
            assert len(CORPUS) == (await conn.call("kb_status", {})).structured["project"]["documents"]

    anyio.run(run)
