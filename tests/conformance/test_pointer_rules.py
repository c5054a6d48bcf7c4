"""Semantic pointers and the element model, rule by rule through the MCP protocol (H104, notes §3-§4).

Every expected anchor is computed here from the notes' definitions alone: XxHash64 (seed 0) over
the exact source substring, and for a list item with several own segments over the framed buffer
(int32le count, then int32le byte length + UTF-8 bytes per segment). Nothing of the server's own
hashing or parsing code is imported, so a drift in either would fail here.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import xxhash

from .client import Connection, ToolResult, connect, server_command, write_files

pytestmark = pytest.mark.conformance

CONFIG = {"knowledgeBase": {"allowWrites": True}, "embedding": {"provider": "none"}}
FINGERPRINT_ERROR = "Invalid semantic pointer fingerprint."
H = "0123456789abcdef"  # a well-formed hash that matches nothing


def xxh(text: str) -> str:
    return xxhash.xxh64_hexdigest(text.encode("utf-8"))


def own_hash(parts: list[str]) -> str:
    """selfHash of a list item over its own segments (notes §3.3)."""
    if not parts:
        return xxh("")
    if len(parts) == 1:
        return xxh(parts[0])
    buffer = struct.pack("<i", len(parts))
    for part in parts:
        data = part.encode("utf-8")
        buffer += struct.pack("<i", len(data)) + data
    return xxhash.xxh64_hexdigest(buffer)


def anchor(pointer: str, own: str | list[str], subtree: str | None = None) -> str:
    parts = [own] if isinstance(own, str) else own
    self_hash = own_hash(parts)
    return f"{pointer}~{self_hash}~{xxh(subtree) if subtree is not None else self_hash}"


def run(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    files: dict[str, Any],
    body: Callable[[Connection, Path], Awaitable[None]],
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_files(ws, files)

    async def main() -> None:
        async with connect(server_command(request.config.getoption("--server")), ws, CONFIG) as conn:
            await body(conn, ws)

    anyio.run(main)


async def read(conn: Connection, path: str, pointer: str | None = None, **extra: Any) -> ToolResult:
    req: dict[str, Any] = {"path": path, **extra}
    if pointer is not None:
        req["pointer"] = pointer
    return await conn.call("kb_read", {"request": req})


async def elements(conn: Connection, path: str) -> list[tuple[str, str, str]]:
    """``(anchor, kind, text)`` of every element of ``path``, paging through ``nextPointer``."""
    out: list[tuple[str, str, str]] = []
    pointer: str | None = None
    while True:
        got = await read(conn, path, pointer, maxElements=100, maxBytes=100000)
        assert not got.is_error, got.texts
        out += [(e["pointer"], e["kind"], e["text"]) for e in got.structured["elements"]]
        pointer = got.structured["nextPointer"]
        if pointer is None:
            return out


async def patch(conn: Connection, path: str, *operations: dict[str, Any]) -> ToolResult:
    return await conn.call("kb_patch", {"request": {"path": path, "operations": list(operations)}})


# --- §3.1 / §3.2 grammar -------------------------------------------------------------------------

GRAMMAR_DOC = "# A\n\n## B\n\nText.\n\n- x\n  - y\n"

INVALID_LOGICAL = [
    "li1.p1",
    "q1.li1",
    "p0",
    "01",
    "../x",
    "1.01",
    "p01",
    "li1.li0",
    "1.",
    ".1",
    "1..2",
    "P1",
    "Document",
    "document.p1",
    "frontmatter.p1",
    "1.frontmatter",
    "code0",
    "t01",
    "1.q1.q1",
    " 1",
    "1 ",
    "1.p1.p1",
    "li",
    "1.li",
    "x1",
    "1.code",
    "-1",
    "1.2.",
    "1.li1.1",
]
INVALID_FINGERPRINT = [
    "~" + H,
    "1~",
    "1~~",
    f"1~{H}~",
    f"~{H}~{H}",
    f"  ~{H}",
    f"1~{H[:15]}",
    f"1~{H}0",
    f"1~{H}~{H[:15]}",
    f"1~{H}~{H}~{H}",
    "1~0123456789abcdeg",
    f"1~ {H[1:]}",
    f"1.p1~{H}~{H}0",
]


def test_every_invalid_pointer_is_refused_with_the_notes_messages(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """§3.1's invalid examples and their neighbours (leading zeros, blank parts, wrong hash
    lengths, ``document~…``): INVALID_ARGUMENT, with "Invalid semantic pointer: <value>" for a
    logical part that breaks the grammar and "Invalid semantic pointer fingerprint." for a bad
    split or hash, as §3.2 words them."""

    async def body(conn: Connection, ws: Path) -> None:
        for value in (
            INVALID_LOGICAL + [f"{v}~{H}~{H}" for v in ("p0", "01", "li1.p1")] + [f"document~{H}", f"document~{H}~{H}"]
        ):
            got = await read(conn, "a.md", value)
            assert got.error["code"] == "INVALID_ARGUMENT", (value, got.texts)
            assert got.error["message"] == f"Invalid semantic pointer: {value}", (value, got.error)
        for value in INVALID_FINGERPRINT:
            got = await read(conn, "a.md", value)
            assert got.error == {"code": "INVALID_ARGUMENT", "message": FINGERPRINT_ERROR}, (value, got.texts)
        for value in ("", "   "):
            assert (await read(conn, "a.md", value)).error["code"] == "INVALID_ARGUMENT", repr(value)
        # kb_patch parses pointers the same way
        got = await patch(conn, "a.md", {"kind": "delete", "pointer": "p0"})
        assert got.error == {"code": "INVALID_ARGUMENT", "message": "Invalid semantic pointer: p0"}
        got = await patch(conn, "a.md", {"kind": "delete", "pointer": f"1.1.p1~{H[:15]}"})
        assert got.error == {"code": "INVALID_ARGUMENT", "message": FINGERPRINT_ERROR}
        assert (ws / "a.md").read_text() == GRAMMAR_DOC

    run(request, tmp_path, {"a.md": GRAMMAR_DOC}, body)


def test_valid_pointers_resolve_and_absent_ones_name_pointer_and_path(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Every production of the grammar that names a present element reads it (positionally when
    unhashed); a valid pointer naming nothing is INVALID_ARGUMENT naming the pointer and the path;
    v1 and upper-case hashes are accepted and the answer is always the lower-case v2 anchor."""

    async def body(conn: Connection, ws: Path) -> None:
        want = {
            "document": None,
            "1": anchor("1", "# A", GRAMMAR_DOC),
            "1.1": anchor("1.1", "## B", GRAMMAR_DOC[5:]),
            "1.1.p1": anchor("1.1.p1", "Text."),
            "1.1.li1": anchor("1.1.li1", "- x", "- x\n  - y"),
            "1.1.li1.li1": anchor("1.1.li1.li1", "  - y"),
        }
        for pointer, expected in want.items():
            got = await read(conn, "a.md", pointer, maxElements=1)
            assert not got.is_error, (pointer, got.texts)
            assert got.structured["pointer"] == (expected or "document"), pointer
        for pointer in (
            "2",
            "1.2",
            "1.1.p2",
            "p1",
            "li1",
            "1.1.li1.li2",
            "1.1.li2.li1",
            "frontmatter",
            "1.1.code1",
            "1.1.q1",
            "1.1.t1",
            "1.1.1",
        ):
            got = await read(conn, "a.md", pointer)
            assert got.error["code"] == "INVALID_ARGUMENT", pointer
            assert pointer in got.error["message"] and "a.md" in got.error["message"], got.error
        p1 = want["1.1.p1"]
        assert p1 is not None
        logical, self_hash, _ = p1.split("~")
        for given in (
            f"{logical}~{self_hash}",
            f"{logical}~{self_hash.upper()}",
            f"{logical}~{self_hash.upper()}~{H.upper()}",
        ):
            got = await read(conn, "a.md", given, maxElements=1)
            assert not got.is_error, (given, got.texts)
            assert got.structured["pointer"] == p1, given  # v2, lower case, current subtree hash

    run(request, tmp_path, {"a.md": GRAMMAR_DOC}, body)


# --- §3.3 hashes and §4.2-4.6 spans ---------------------------------------------------------------

CRLF_DOC = (
    "\ufeff---\r\ntitle: T\r\n---\r\nIntro  \r\nlazy\t\r\n\r\nSet\r\next\r\n===\r\n\r\n\tcode\ttab\r\n\r\n"
    "Body \r\n\r\nSub\r\n---\r\n\r\n```py\r\nx = 1\r\n```\r\n"
)
CRLF_TEXT = CRLF_DOC[1:]
CRLF_WANT = [
    (anchor("frontmatter", "---\r\ntitle: T\r\n---"), "front_matter"),
    (anchor("p1", "Intro  \r\nlazy\t"), "paragraph"),
    (anchor("1", "Set\r\next\r\n===", CRLF_TEXT[CRLF_TEXT.index("Set") :]), "heading"),
    (anchor("1.code1", "\tcode\ttab"), "code_block"),
    (anchor("1.p1", "Body "), "paragraph"),
    (anchor("1.1", "Sub\r\n---", CRLF_TEXT[CRLF_TEXT.index("Sub") :]), "heading"),
    (anchor("1.1.code1", "```py\r\nx = 1\r\n```"), "code_block"),
]

LIST_DOC = (
    "- a\n  lazy\n\n  second\n  - b\n  - c\n    - d\n\n  tail\n- e\n\n# S\n\n- f\n\nbetween\n\n* g\n  * h\n    * i\n"
)
LIST_WANT = [
    (
        anchor(
            "li1", ["- a\n  lazy\n\n  second", "\n  tail"], "- a\n  lazy\n\n  second\n  - b\n  - c\n    - d\n\n  tail"
        ),
        "list_item",
    ),
    (anchor("li1.li1", "  - b"), "list_item"),
    (anchor("li1.li2", "  - c", "  - c\n    - d"), "list_item"),
    (anchor("li1.li2.li1", "    - d"), "list_item"),
    (anchor("li2", "- e"), "list_item"),
    (anchor("1", "# S", LIST_DOC[LIST_DOC.index("# S") :]), "heading"),
    (anchor("1.li1", "- f"), "list_item"),
    (anchor("1.p2", "between"), "paragraph"),  # "f" took p1 (hidden, reserved)
    (anchor("1.li2", "* g", "* g\n  * h\n    * i"), "list_item"),
    (anchor("1.li2.li1", "  * h", "  * h\n    * i"), "list_item"),
    (anchor("1.li2.li1.li1", "    * i"), "list_item"),
]

MIXED_DOC = (
    "# T\n\nPara.\n\n> quote\n> - item\n>\n> ```\n> c\n> ```\n\n"
    "| a | b |\n|:-|-:|\n| x \\| y | 2 | extra |\n| short |\n\n"
    "<div>\nraw\n</div>\n\n***\n\n[ref]: /x\n\n[^1]: A footnote.\n\n<!-- comment -->\n\n"
    "- item\n\n  ```\n  - not item\n  ```\n\n  inner para\n\nAfter.\n\n> > nested\n> lazy\n"
)
MIXED_WANT = [
    (anchor("1", "# T", MIXED_DOC), "heading"),
    (anchor("1.p1", "Para."), "paragraph"),
    (anchor("1.q1", "> quote\n> - item\n>\n> ```\n> c\n> ```"), "block_quote"),
    (anchor("1.t1", "| a | b |\n|:-|-:|\n| x \\| y | 2 | extra |\n| short |"), "table"),
    # no footnote extension in the pipeline (§4.1): a footnote of several words is a paragraph
    (anchor("1.p5", "[^1]: A footnote."), "paragraph"),
    (anchor("1.li1", "- item\n\n  ```\n  - not item\n  ```\n\n  inner para"), "list_item"),
    (anchor("1.p8", "After."), "paragraph"),
    (anchor("1.q2", "> > nested\n> lazy"), "block_quote"),
]
# Hidden ordinals: the quote's "quote" and "item" (p2, p3) and its code (code1), the table's
# historical paragraph (p4), the item's paragraphs (p6, p7) and code (code2), the nested quote's
# paragraph (p9).
MIXED_RESERVED = ["1.p2", "1.p3", "1.p4", "1.p6", "1.p7", "1.p9", "1.code1", "1.code2"]

HEADINGS_DOC = "# A\n### X\n## Y\n#### Z\n\n- # not a heading\n\n> # nor this\n\n# B\nB text\n"
HEADINGS_WANT = [
    (anchor("1", "# A", HEADINGS_DOC[: HEADINGS_DOC.index("# B")]), "heading"),
    (anchor("1.1", "### X", "### X\n"), "heading"),
    (anchor("1.2", "## Y", HEADINGS_DOC[HEADINGS_DOC.index("## Y") : HEADINGS_DOC.index("# B")]), "heading"),
    (anchor("1.2.1", "#### Z", HEADINGS_DOC[HEADINGS_DOC.index("#### Z") : HEADINGS_DOC.index("# B")]), "heading"),
    (anchor("1.2.1.li1", "- # not a heading"), "list_item"),
    (anchor("1.2.1.q1", "> # nor this"), "block_quote"),
    (anchor("2", "# B", "# B\nB text\n"), "heading"),
    (anchor("2.p1", "B text"), "paragraph"),
]

LAZY_DOC = "- a\nlazy\n  - b\n  lazy b\n- c\n\n- a\r\n  - b\r\n\r\n  more\r\n\n> a\n> > b\n> > lazy\nlazy2\n\nEnd.\n"
LAZY_WANT = [
    (anchor("li1", "- a\nlazy", "- a\nlazy\n  - b\n  lazy b"), "list_item"),
    (anchor("li1.li1", "  - b\n  lazy b"), "list_item"),
    (anchor("li2", "- c"), "list_item"),
    # the break before a child is cut whole (CR LF), the one after it skipped whole
    (anchor("li3", ["- a", "\r\n  more"], "- a\r\n  - b\r\n\r\n  more"), "list_item"),
    (anchor("li3.li1", "  - b"), "list_item"),
    (anchor("q1", "> a\n> > b\n> > lazy\nlazy2"), "block_quote"),
    # p1-p3 went to the first items' paragraphs, p4-p6 to the CRLF items', p7 to the quote's "a";
    # the nested quote's paragraph fills it exactly and takes no ordinal (§4.5)
    (anchor("p8", "End."), "paragraph"),
]

HASH_CASES = {
    "lazy.md": (LAZY_DOC, LAZY_WANT),
    "crlf.md": (CRLF_DOC, CRLF_WANT),
    "lists.md": (LIST_DOC, LIST_WANT),
    "mixed.md": (MIXED_DOC, MIXED_WANT),
    "headings.md": (HEADINGS_DOC, HEADINGS_WANT),
}


def test_every_kind_hashes_its_exact_span(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Each element's v2 anchor equals the one computed from the notes: headings (ATX, setext,
    skipped levels) over their line(s) with the section as subtree; paragraphs with trailing
    spaces, tabs and lazy lines; fenced, indented and tab-indented code; front matter after a BOM
    with CRLF; quotes over every `>` line including lazy ones; tables over all lines, ragged and
    with escaped pipes; list items over their own segments (framed when split by children), the
    subtree over the physical range; HTML blocks, comments, reference definitions and thematic
    breaks are not elements but stay in the section."""

    async def body(conn: Connection, ws: Path) -> None:
        for path, (text, want) in HASH_CASES.items():
            got = [(a, k) for a, k, _ in await elements(conn, path)]
            assert got == want, path
            # sourceHash: SHA-256 of the raw bytes, the BOM included (§3.3); markdown: no BOM
            root = (await read(conn, path)).structured
            assert root["sourceHash"] == hashlib.sha256(text.encode("utf-8")).hexdigest(), path
            assert root["markdown"] == text.removeprefix("\ufeff")[: len(root["markdown"])], path

    run(request, tmp_path, {path: text for path, (text, _) in HASH_CASES.items()}, body)


def test_hidden_ordinals_are_reserved_not_relocated(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Paragraph/code ordinals used inside quotes, list items and by a table's historical
    paragraph are not elements: unhashed they are absent (INVALID_ARGUMENT), hashed they are
    CONFLICT (§3.4.6), even with the hash of the hidden text."""

    async def body(conn: Connection, ws: Path) -> None:
        for pointer in MIXED_RESERVED:
            assert (await read(conn, "mixed.md", pointer)).error["code"] == "INVALID_ARGUMENT", pointer
            got = await read(conn, "mixed.md", f"{pointer}~{xxh('quote')}~{xxh('quote')}")
            assert got.error["code"] == "CONFLICT", pointer

    run(request, tmp_path, {"mixed.md": MIXED_DOC}, body)


# --- §3.4 resolution ------------------------------------------------------------------------------


def test_resolution_direct_relocated_ambiguous_mismatch_not_found(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """§3.4 in order: a direct match wins over identical elements elsewhere; a moved element
    is found by its unique self hash; two candidates are ambiguous; an element of the right
    kind at the position with another hash is a self hash mismatch; nothing of the kind there
    and no candidate is target not found. All conflicts are CONFLICT; a stale subtree hash
    never blocks a read, which answers the current anchor."""
    before = "# D\n\nSame.\n\nSame.\n\nOther.\n"
    after = "# D\n\nNew.\n\nSame.\n\nSame.\n\nOther.\n\nMore text.\n"

    async def body(conn: Connection, ws: Path) -> None:
        direct = await read(conn, "d.md", f"1.p2~{xxh('Same.')}", maxElements=1)
        assert direct.structured["pointer"] == anchor("1.p2", "Same."), "a direct match wins over p1"
        (ws / "d.md").write_text(after, encoding="utf-8")
        moved = await read(conn, "d.md", anchor("1.p3", "Other."), maxElements=1)
        assert moved.structured["pointer"] == anchor("1.p4", "Other."), "relocated to the unique match"
        still = await read(conn, "d.md", anchor("1.p2", "Same."), maxElements=1)
        assert still.structured["pointer"] == anchor("1.p2", "Same."), "direct match despite p3"
        cases = {
            anchor("1.p1", "Same."): "ambiguous",
            anchor("1.p5", "Gone."): "self hash mismatch",
            anchor("1.p9", "Gone."): "not found",
            anchor("1.code1", "Same."): "not found",
            anchor("1.q1", "Other."): "not found",
            anchor("2", "# E"): "not found",  # no heading 2, no heading with that hash
        }
        for given, reason in cases.items():
            got = await read(conn, "d.md", given)
            assert got.error["code"] == "CONFLICT", (given, got.texts)
            assert reason in got.error["message"], (given, got.error)
        moved_heading = await read(conn, "d.md", anchor("2", "# D"), maxElements=1)
        assert moved_heading.structured["pointer"] == anchor("1", "# D", after), "headings relocate too"
        # a heading whose section changed: the stale subtree hash does not block reading
        stale = await read(conn, "d.md", f"1~{xxh('# D')}~{xxh(before)}", maxElements=1)
        assert stale.structured["pointer"] == anchor("1", "# D", after)

    run(request, tmp_path, {"d.md": before}, body)


# --- §3.5 mutation scope --------------------------------------------------------------------------

SCOPE_DOC = "# H\n\nP.\n\n- a\n  - b\n- c\n\n## Sub\n\nS.\n"


def test_mutation_scope_decides_which_hashes_count(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """§3.5: Self-scoped operations need a self hash only (v1 works, a stale or bogus subtree
    hash is ignored); Subtree-scoped ones (delete of a list item, replace_subtree,
    replace_section, delete_section) reject v1 and a stale subtree hash with CONFLICT; an
    unhashed concrete pointer is INVALID_ARGUMENT with the notes' message; ``document`` needs
    no hash."""

    async def body(conn: Connection, ws: Path) -> None:
        path = ws / "s.md"
        li = f"1.li1~{xxh('- a')}"
        head = f"1~{xxh('# H')}"
        for op in (
            {"kind": "delete", "pointer": li},
            {"kind": "replace_subtree", "pointer": li, "markdown": "- z"},
            {"kind": "replace_section", "pointer": head, "markdown": "# Z\n"},
            {"kind": "delete_section", "pointer": head},
            {"kind": "delete", "pointer": f"{li}~{H}"},
            {"kind": "replace_section", "pointer": f"{head}~{H}", "markdown": "# Z\n"},
            {"kind": "delete_section", "pointer": f"{head}~{H}"},
        ):
            got = await patch(conn, "s.md", op)
            assert got.error["code"] == "CONFLICT", (op, got.texts)
        got = await patch(conn, "s.md", {"kind": "replace", "pointer": "1.p1", "markdown": "Q."})
        assert got.error == {
            "code": "INVALID_ARGUMENT",
            "message": "A fingerprint is required when mutating a concrete semantic element.",
        }
        assert path.read_text() == SCOPE_DOC
        # Self scope: v1, and v2 with a subtree hash that is not current
        steps = [
            ({"kind": "replace", "pointer": f"1.p1~{xxh('P.')}", "markdown": "Q."}, "P.", "Q."),
            ({"kind": "replace", "pointer": f"{li}~{H}", "markdown": "- A"}, "- a\n", "- A\n"),
            ({"kind": "replace_element", "pointer": f"{head}~{H}", "markdown": "# H2"}, "# H\n", "# H2\n"),
            ({"kind": "delete", "pointer": f"1.1.p1~{xxh('S.')}~{H}"}, "S.", ""),  # §5.2: the span only
            ({"kind": "insert_after", "pointer": "document", "markdown": "End."}, None, None),
        ]
        text = SCOPE_DOC
        for op, old, new in steps:
            got = await patch(conn, "s.md", op)
            assert not got.is_error, (op, got.texts)
            if old is not None and new is not None:
                text = text.replace(old, new, 1)
                assert path.read_text() == text, op
        assert path.read_text().rstrip("\n").endswith("End.")
        # Subtree scope with current hashes works
        now = path.read_text()
        item = "- A\n  - b"
        got = await patch(
            conn, "s.md", {"kind": "replace_subtree", "pointer": anchor("1.li1", "- A", item), "markdown": "- one"}
        )
        assert not got.is_error, got.texts
        assert path.read_text() == now.replace(item, "- one")

    run(request, tmp_path, {"s.md": SCOPE_DOC}, body)


# --- §4.1 front matter fences ---------------------------------------------------------------------


def test_front_matter_needs_the_reference_fences(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Front matter opens on a first line of exactly ``---`` and closes on the first line of
    exactly ``---`` or ``...`` at column 0 (Markdig's YAML extension, decision 830); four dashes or
    an indented fence are ordinary Markdown, and a document without a closing fence has none."""
    files = {
        "dots.md": "---\ntitle: T\n...\nBody\n",
        "long.md": "---\na: 1\n-----\nb: 2\n---\nBody\n",
        "four.md": "----\ntitle: T\n----\nBody\n",
        "open.md": "---\ntitle: T\n\nBody\n",
    }
    want = {
        "dots.md": [(anchor("frontmatter", "---\ntitle: T\n..."), "front_matter"), (anchor("p1", "Body"), "paragraph")],
        "long.md": [
            (anchor("frontmatter", "---\na: 1\n-----\nb: 2\n---"), "front_matter"),
            (anchor("p1", "Body"), "paragraph"),
        ],
        "four.md": [
            (anchor("1", "title: T\n----", "title: T\n----\nBody\n"), "heading"),
            (anchor("1.p1", "Body"), "paragraph"),
        ],
        "open.md": [(anchor("p1", "title: T"), "paragraph"), (anchor("p2", "Body"), "paragraph")],
    }

    async def body(conn: Connection, ws: Path) -> None:
        for path, expected in want.items():
            assert [(a, k) for a, k, _ in await elements(conn, path)] == expected, path
        assert (await read(conn, "four.md", "frontmatter")).error["code"] == "INVALID_ARGUMENT"

    run(request, tmp_path, files, body)


def test_an_edit_that_would_close_a_front_matter_is_refused(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A document opening with a bare ``---`` (a thematic break: no closing fence) must not have a
    paragraph below turned into ``...`` or ``---``: front matter would then swallow everything
    above it. The structural check refuses it and the file stays as it was."""
    text = "---\n\nIntro.\n\nLast.\n"

    async def body(conn: Connection, ws: Path) -> None:
        for fragment in ("...", "---"):
            got = await patch(
                conn, "hr.md", {"kind": "replace", "pointer": anchor("p2", "Last."), "markdown": fragment}
            )
            assert got.error["code"] == "INVALID_ARGUMENT", (fragment, got.texts)
            assert (ws / "hr.md").read_text() == text
        assert [(a, k) for a, k, _ in await elements(conn, "hr.md")] == [
            (anchor("p1", "Intro."), "paragraph"),
            (anchor("p2", "Last."), "paragraph"),
        ]

    run(request, tmp_path, {"hr.md": text}, body)


def test_outline_follows_the_heading_rules(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """§4.3 / §7.2: the level stack (a skipped level is simply a child), titles without the ATX
    marks or with a setext heading's first line trimmed, headings inside list items and quotes
    left out, front matter before the first heading, and v2 anchors whose subtree is the owned
    section."""
    text = "---\nt: 1\n---\n# A ##\n### X\n  Set  \nmore\n---\n- # no\n> ## no\n\n# B\n"

    async def body(conn: Connection, ws: Path) -> None:
        got = await conn.call("kb_outline", {"request": {"path": "o.md"}})
        assert not got.is_error, got.texts

        def tree(nodes: list[dict[str, Any]]) -> list[Any]:
            return [(n["pointer"], n["level"], n["title"], tree(n["children"])) for n in nodes]

        b = text.index("# B")
        assert tree(got.structured["headings"]) == [
            (
                anchor("1", "# A ##", text[text.index("# A") : b]),
                1,
                "A",
                [
                    (anchor("1.1", "### X", "### X\n"), 3, "X", []),
                    (anchor("1.2", "  Set  \nmore\n---", text[text.index("  Set") : b]), 2, "Set", []),
                ],
            ),
            (anchor("2", "# B", "# B\n"), 1, "B", []),
        ]

    run(request, tmp_path, {"o.md": text}, body)


def test_mutations_follow_the_same_resolution(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """kb_patch resolves as kb_read does (§3.4, §5.1 step 3): a moved element is edited where it
    is now; an ambiguous or stale anchor edits nothing; a relocated list item is deleted only
    while its subtree hash is current; a paragraph made into a list item is a reserved position
    and a CONFLICT, not an edit of an identical paragraph elsewhere."""
    before = "# D\n\nOther.\n\n- a\n  - b\n"

    async def body(conn: Connection, ws: Path) -> None:
        path = ws / "m.md"
        other, item = anchor("1.p1", "Other."), anchor("1.li1", "- a", "- a\n  - b")
        path.write_text("# D\n\nNew.\n\nSame.\n\nSame.\n\n" + before[5:], encoding="utf-8")
        got = await patch(conn, "m.md", {"kind": "replace", "pointer": other, "markdown": "Changed."})
        assert not got.is_error, got.texts
        assert path.read_text() == "# D\n\nNew.\n\nSame.\n\nSame.\n\nChanged.\n\n- a\n  - b\n"
        now = path.read_text()
        for op in (
            {"kind": "replace", "pointer": f"1.p1~{xxh('Same.')}", "markdown": "X."},  # ambiguous
            {"kind": "replace", "pointer": other, "markdown": "X."},  # Other. is gone
            {"kind": "delete", "pointer": anchor("1.li1", "- a", "- a\n  - c")},  # subtree changed
        ):
            got = await patch(conn, "m.md", op)
            assert got.error["code"] == "CONFLICT", (op, got.texts)
            assert path.read_text() == now, op
        got = await patch(conn, "m.md", {"kind": "delete", "pointer": item})  # relocated, subtree current
        assert not got.is_error, got.texts
        assert path.read_text() == "# D\n\nNew.\n\nSame.\n\nSame.\n\nChanged.\n\n"
        # the paragraph "New." becomes a list item; its old anchor must not edit anything
        path.write_text("# D\n\n- New.\n\nSame.\n\nNew.\n", encoding="utf-8")
        got = await patch(conn, "m.md", {"kind": "replace", "pointer": anchor("1.p1", "New."), "markdown": "X."})
        assert got.error["code"] == "CONFLICT", got.texts
        assert path.read_text() == "# D\n\n- New.\n\nSame.\n\nNew.\n"

    run(request, tmp_path, {"m.md": before}, body)


# --- §4.7 source fidelity -------------------------------------------------------------------------


def test_mixed_line_endings_edit_with_crlf_and_keep_the_rest(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """§4.7: a file holding any CRLF takes CRLF for the new text (replacement and separators);
    its untouched LF lines stay LF, its BOM stays; a created file is UTF-8 without a BOM, as given."""
    text = "\ufeff# T\r\n\r\nA.\n\nB.\r\n"

    async def body(conn: Connection, ws: Path) -> None:
        path = ws / "mix.md"
        got = await patch(
            conn,
            "mix.md",
            {"kind": "replace", "pointer": anchor("1.p1", "A."), "markdown": "X.\nY."},
            {"kind": "insert_after", "pointer": anchor("1.p2", "B."), "markdown": "C."},
        )
        assert not got.is_error, got.texts
        assert path.read_bytes() == "\ufeff# T\r\n\r\nX.\r\nY.\n\nB.\r\n\r\nC.\r\n".encode()
        assert [(a, k) for a, k, _ in await elements(conn, "mix.md")][1:] == [
            (anchor("1.p1", "X.\r\nY."), "paragraph"),
            (anchor("1.p2", "B."), "paragraph"),
            (anchor("1.p3", "C."), "paragraph"),
        ]
        created = await conn.call("kb_create", {"request": {"path": "new.md", "markdown": "# N\n\nText.\n"}})
        assert not created.is_error, created.texts
        assert (ws / "new.md").read_bytes() == b"# N\n\nText.\n"

    run(request, tmp_path, {"mix.md": text}, body)
