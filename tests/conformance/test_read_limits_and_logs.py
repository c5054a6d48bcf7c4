"""kb_read's documented defaults and ceilings (contract 2.4, 7.1), and a session's stderr that never
holds document text or a query (contract 14), black-box over the transport (decision 892)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from .client import Connection, connect, server_command, write_files

pytestmark = pytest.mark.conformance

CONFIG = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}


def test_kb_read_pages_by_the_documented_defaults_and_ceilings(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    many = "".join(f"p{i}\n\n" for i in range(130))  # tiny paragraphs: only the element count limits
    wide = "".join(f"{i:04d}" + "y" * 1996 + "\n\n" for i in range(60))  # 2,002 bytes a paragraph
    write_files(ws, {"many.md": many, "wide.md": wide})

    async def read(conn: Connection, **request_fields: object) -> dict[str, Any]:
        result = await conn.call("kb_read", {"request": request_fields})
        assert not result.is_error, result.texts
        return result.structured

    async def run() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, CONFIG) as conn:
            page = await read(conn, path="many.md")  # maxElements defaults to 20
            assert len(page["elements"]) == 20 and page["markdown"] == many[: many.index("p20\n")]
            assert page["nextPointer"].startswith("p21~")
            page = await read(conn, path="many.md", maxElements=500, maxBytes=100_000)  # at most 100
            assert len(page["elements"]) == 100 and page["nextPointer"].startswith("p101~")
            page = await read(conn, path="wide.md")  # maxBytes defaults to 12,000: 5 x 2,002 fit, 6 do not
            assert len(page["elements"]) == 5 and len(page["markdown"].encode()) == 10_010
            # at most 100,000 bytes: 49 x 2,002 = 98,098 fit, 50 would be 100,100; pages still join
            joined, pointer, pages = "", None, 0
            while True:
                fields = {"path": "wide.md", "maxElements": 100, "maxBytes": 10**9}
                page = await read(conn, **(fields | ({"pointer": pointer} if pointer else {})))
                if pages == 0:
                    assert len(page["elements"]) == 49 and len(page["markdown"].encode()) == 98_098
                joined, pointer, pages = joined + page["markdown"], page["nextPointer"], pages + 1
                if pointer is None:
                    break
            assert (joined, pages) == (wide, 2)

    anyio.run(run)


SECRETS = ["WOMBAT-DOC-TEXT", "QUOKKA-NEW-TEXT", "NUMBAT-PATCH-TEXT", "BILBY-QUERY"]


def test_a_verbose_session_never_logs_document_text_or_queries(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    original = f"# A\n\n{SECRETS[0]} and a [link](b.md)\n"
    write_files(ws, {"a.md": original, "b.md": f"# B\n\n{SECRETS[0]} again\n"})

    async def call(conn: Connection, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await conn.call(name, arguments)
        assert not result.is_error, result.texts
        return result.structured

    async def run() -> None:
        command = server_command(request.config.getoption("--server"))
        async with connect(command, ws, CONFIG, args=["--verbose"]) as conn:
            await call(conn, "kb_reindex", {})
            for _ in range(300):
                if not (await call(conn, "kb_status", {}))["indexing"]["isRunning"]:
                    break
                await anyio.sleep(0.1)
            await call(conn, "kb_search", {"request": {"query": SECRETS[3], "mode": "lexical"}})
            await call(conn, "kb_search", {"request": {"query": SECRETS[0], "mode": "lexical"}})
            await call(conn, "kb_create", {"request": {"path": "c.md", "markdown": f"{SECRETS[1]}\n"}})
            await call(conn, "kb_read", {"request": {"path": "a.md"}})
            operation = {"kind": "insert_after", "pointer": "document", "markdown": SECRETS[2]}
            await call(conn, "kb_patch", {"request": {"path": "c.md", "operations": [operation]}})
            sha = hashlib.sha256(original.encode()).hexdigest()
            await call(
                conn, "kb_move", {"request": {"sourcePath": "a.md", "targetPath": "d/a.md", "expectedSourceHash": sha}}
            )
            stale = {"path": "b.md", "expectedSourceHash": "0" * 64}
            assert (await conn.call("kb_delete", {"request": stale})).is_error
            await call(conn, "kb_list_files", {})

    anyio.run(run)
    logs = list(tmp_path.glob("ws.server-*.log"))
    assert logs, "the session's stderr was not kept"
    text = "".join(log.read_text(encoding="utf-8", errors="replace") for log in logs)
    assert not [s for s in SECRETS if s in text], text[-2000:]
