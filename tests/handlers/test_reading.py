"""kb_read and kb_outline through the dispatcher (the MCP and CLI code path) on every corpus file."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import CORPORA

from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.workspace import Workspace


def _workspace(root: Path, tmp_path: Path) -> Workspace:
    settings = load_settings(
        CliOptions(root=str(root), storage_path=str(tmp_path / "index.db"), embedding_provider="none"),
        cwd=tmp_path,
        environ={},
    )
    return Workspace(settings)


@pytest.mark.slow
@pytest.mark.skipif(not CORPORA.is_dir(), reason="shared corpora not available")
@pytest.mark.parametrize("corpus", ["rust-book", "vue-docs-zh-cn"])
def test_every_corpus_file_reads_and_outlines(corpus: str, tmp_path: Path) -> None:
    root = CORPORA / corpus
    ws = _workspace(root, tmp_path)
    files = [f["relativePath"] for f in invoke(ws, "kb_list_files", {"request": {"includeGlob": "**/*.md"}})["files"]]
    assert len(files) > 100
    for rel in files:
        raw = (root / rel).read_bytes()
        text = raw.decode("utf-8-sig")
        outline = invoke(ws, "kb_outline", {"request": {"path": rel}})
        assert outline["path"] == rel
        pointer = None
        pages, seen, markdown = 0, set(), []
        while True:
            request = {"path": rel, "maxElements": 50}
            if pointer:
                request["pointer"] = pointer
            page = invoke(ws, "kb_read", {"request": request})
            markdown.append(page["markdown"])
            for element in page["elements"]:
                assert element["pointer"] not in seen
                seen.add(element["pointer"])
            pages += 1
            pointer = page["nextPointer"]
            if pointer is None:
                break
        assert "".join(markdown) == text, rel
        headings = sum(1 for p in seen if p.split("~")[0].replace(".", "").isdigit())
        assert headings >= len(outline["headings"])
    ws.close()


FIXTURES = Path(__file__).parent.parent / "fixtures" / "markdown"


def test_read_and_outline_wire_shape(tmp_path: Path) -> None:
    """The engine's Slice/Outline dataclasses become exactly the spec's JSON."""
    from local_vector_search_mcp.markdown import parse_document

    ws = _workspace(FIXTURES, tmp_path)
    doc = parse_document((FIXTURES / "basic.md").read_bytes())
    page = invoke(ws, "kb_read", {"request": {"path": "basic.md", "maxElements": 2}})
    assert set(page) == {"path", "pointer", "elements", "markdown", "nextPointer", "sourceHash", "table"}
    assert page["elements"][1] == {
        "pointer": doc.elements[1].anchor,
        "kind": "paragraph",
        "text": "Intro before any heading.",
        "headingPath": None,
    }
    assert page["nextPointer"] == doc.elements[2].anchor and page["table"] is None

    tables = parse_document((FIXTURES / "tables.md").read_bytes())
    table = tables.get("t1")
    assert table is not None
    page = invoke(ws, "kb_read", {"request": {"path": "tables.md", "pointer": table.anchor, "maxBytes": 1}})
    assert page["table"]["columnCount"] == 3 and page["table"]["rowCount"] == 3
    assert page["table"]["columns"][1] == {"index": 1, "name": "Qty", "alignment": "right"}
    assert page["table"]["rows"][1] == {"index": 1, "cells": ["short", "", ""]}
    assert page["table"]["editable"] is False

    tree = invoke(ws, "kb_outline", {"request": {"path": "basic.md"}})
    assert set(tree) == {"path", "sourceHash", "headings", "nextPointer"} and tree["nextPointer"] is None
    assert set(tree["headings"][0]) == {"pointer", "level", "title", "children"}
    assert tree["headings"][0]["children"][0]["title"] == "X"


def test_every_element_kind_has_a_wire_name() -> None:
    from local_vector_search_mcp.handlers.reading import _KINDS
    from local_vector_search_mcp.markdown import ElementKind

    assert set(_KINDS) == set(ElementKind)
    assert all(name == kind.value for kind, name in _KINDS.items())


def test_a_document_gone_since_it_was_indexed_is_named_so_and_leaves_the_index(tmp_path: Path) -> None:
    """Without the watcher a search keeps returning a document deleted or moved by another
    program, and its readHint led to a bare NOT_FOUND: the agent could not tell a typo from a
    stale index, and the next search returned it again (decision 697)."""
    from kb_fakes import KbClient

    from local_vector_search_mcp.errors import NotFound

    root = tmp_path / "kb"
    root.mkdir()
    (root / "gone.md").write_text("# Gone\n\nA quokka paragraph.\n", "utf-8")
    (root / "kept.md").write_text("# Kept\n\nAnother quokka.\n", "utf-8")
    ws = _workspace(root, tmp_path)
    KbClient(ws).reindex()
    hits = invoke(ws, "kb_search", {"request": {"query": "quokka", "mode": "lexical"}})["results"]
    assert {h["path"] for h in hits} == {"gone.md", "kept.md"}
    (root / "gone.md").unlink()
    for tool in ("kb_read", "kb_outline"):
        with pytest.raises(NotFound) as caught:
            invoke(ws, tool, {"request": {"path": "gone.md"}})
        assert "was not found" in caught.value.message and "since it was indexed" in caught.value.message
    ws.indexing.sync.wait_idle(10)
    hits = invoke(ws, "kb_search", {"request": {"query": "quokka", "mode": "lexical"}})["results"]
    assert [h["path"] for h in hits] == ["kept.md"]
    # a path the index never had: the plain answer
    with pytest.raises(NotFound) as caught:
        invoke(ws, "kb_read", {"request": {"path": "typo.md"}})
    assert caught.value.message.startswith("Document 'typo.md' was not found.")
    assert "since it was indexed" not in caught.value.message


def test_an_index_that_cannot_answer_leaves_a_missing_document_a_plain_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question of decision 697 only improves a message: the store's own errors (apsw's for a
    damaged SQLite file, psycopg's for a lost server) must not turn NOT_FOUND into an internal error."""
    import apsw
    from kb_fakes import KbClient

    from local_vector_search_mcp.errors import NotFound

    root = tmp_path / "kb"
    root.mkdir()
    (root / "gone.md").write_text("# Gone\n\nA quokka paragraph.\n", "utf-8")
    ws = _workspace(root, tmp_path)
    KbClient(ws).reindex()
    (root / "gone.md").unlink()

    def damaged(paths: object) -> dict[str, object]:
        raise apsw.CorruptError("database disk image is malformed")

    monkeypatch.setattr(ws.store, "document_states_of", damaged)
    with pytest.raises(NotFound) as caught:
        invoke(ws, "kb_read", {"request": {"path": "gone.md"}})
    assert caught.value.message.startswith("Document 'gone.md' was not found.")
    assert "since it was indexed" not in caught.value.message


def _flat(nodes: list[dict], parent: str | None = None) -> list[tuple[str, str | None]]:
    """(pointer, parent pointer in the page) of every heading, in source order."""
    out: list[tuple[str, str | None]] = []
    for node in nodes:
        out.append((node["pointer"], parent))
        out.extend(_flat(node["children"], node["pointer"]))
    return out


def _big_outline(n: int) -> str:
    """``n`` headings in a repeating # / ## / ### / #### shape, a paragraph under each."""
    levels = [1, 2, 3, 3, 4, 2]
    return "".join(f"{'#' * levels[i % len(levels)]} Heading {i}\n\nText {i}.\n\n" for i in range(n))


def test_a_long_outline_comes_in_pages_that_join_to_the_whole_tree(tmp_path: Path) -> None:
    """Decision 771: 20,000 headings gave one 3.3 MB answer. Pages hold at most 1000 headings;
    following ``nextPointer`` lists every heading once, in order, each page's tree nested as the
    whole one is, a heading whose parent is on an earlier page at the page's top level."""
    from local_vector_search_mcp.markdown import parse_document

    root = tmp_path / "kb"
    root.mkdir()
    (root / "big.md").write_text(_big_outline(2500), "utf-8")
    ws = _workspace(root, tmp_path)
    want: list[tuple[str, str | None]] = []  # the whole tree by the contract's level stack (§7.2)
    stack: list[tuple[int, str]] = []
    for heading in parse_document((root / "big.md").read_bytes()).headings:
        while stack and stack[-1][0] >= (heading.level or 1):
            stack.pop()
        want.append((heading.anchor, stack[-1][1] if stack else None))
        stack.append((heading.level or 1, heading.anchor))
    assert len(want) == 2500

    pages, pointer = [], "document"
    while pointer is not None:
        page = invoke(ws, "kb_outline", {"request": {"path": "big.md", "pointer": pointer}})
        pages.append(page)
        pointer = page["nextPointer"]
    assert [len(_flat(p["headings"])) for p in pages] == [1000, 1000, 500]
    got = [item for p in pages for item in _flat(p["headings"])]
    assert [ptr for ptr, _ in got] == [ptr for ptr, _ in want]
    seen: set[str] = set()
    for page in pages:
        page_pointers = {ptr for ptr, _ in _flat(page["headings"])}
        for (ptr, parent), (_, true_parent) in zip(
            _flat(page["headings"]), [w for w in want if w[0] in page_pointers], strict=True
        ):
            # nested as in the whole tree, or at the top when the parent is on an earlier page
            assert parent == true_parent or (parent is None and true_parent in seen), ptr
        seen |= page_pointers
    assert pages[1]["headings"][0]["level"] > 1  # heading 1000 sits under a heading of page 1


def test_outline_pages_follow_the_byte_budget_and_start_anywhere(tmp_path: Path) -> None:
    from local_vector_search_mcp.errors import Conflict, InvalidArgument
    from local_vector_search_mcp.markdown import parse_document

    root = tmp_path / "kb"
    root.mkdir()
    text = "# One\n\nIntro.\n\n## Two " + "x" * 300 + "\n\nBody.\n\n## Three\n\n### Four\n"
    (root / "a.md").write_text(text, "utf-8")
    ws = _workspace(root, tmp_path)
    doc = parse_document(text.encode())
    heads = doc.headings
    page = invoke(ws, "kb_outline", {"request": {"path": "a.md", "maxBytes": 100}})
    assert [h["title"] for h in page["headings"]] == ["One"] and page["nextPointer"] == heads[1].anchor
    page = invoke(ws, "kb_outline", {"request": {"path": "a.md", "pointer": page["nextPointer"], "maxBytes": 1}})
    assert page["headings"][0]["title"].startswith("Two x") and page["nextPointer"] == heads[2].anchor  # first always
    # any element kb_read takes: the page starts at the next heading, here a level-2 at the top
    paragraph = next(e for e in doc.elements if e.text == "Body.")
    page = invoke(ws, "kb_outline", {"request": {"path": "a.md", "pointer": paragraph.pointer, "maxHeadings": 0}})
    assert [(h["title"], len(h["children"])) for h in page["headings"]] == [("Three", 0)]
    assert page["nextPointer"] == heads[3].anchor  # maxHeadings 0 is clamped to 1
    page = invoke(ws, "kb_outline", {"request": {"path": "a.md", "pointer": heads[2].anchor}})
    assert [(h["title"], [c["title"] for c in h["children"]]) for h in page["headings"]] == [("Three", ["Four"])]
    assert page["nextPointer"] is None
    with pytest.raises(InvalidArgument):
        invoke(ws, "kb_outline", {"request": {"path": "a.md", "pointer": "9.9"}})
    (root / "a.md").write_text(text.replace("## Three", "## Trois"), "utf-8")
    with pytest.raises(Conflict):
        invoke(ws, "kb_outline", {"request": {"path": "a.md", "pointer": heads[2].anchor}})


def test_a_bom_is_no_part_of_the_pages_and_both_descriptions_say_so(tmp_path: Path) -> None:
    """Decision 1053: kb_read promised pages that "concatenate to exactly the file" while a BOM is
    never sent (an agent would copy a U+FEFF into its edits), and kb_create promised a file "without
    BOM" while a `markdown` starting with U+FEFF is written as given (892). The words now say what
    happens; the behaviour stays."""
    import hashlib

    from kb_fakes import client
    from lvsm_contract.registry import BY_NAME

    root = tmp_path / "kb"
    root.mkdir()
    kb = client(root, knowledge_base__allow_writes=True)
    ws = kb.ws
    text = "# T\r\n\r\nOne.\r\n\r\nTwo.\r\n"
    created = invoke(ws, "kb_create", {"request": {"path": "b.md", "markdown": "\ufeff" + text}})
    raw = (root / "b.md").read_bytes()
    assert raw == b"\xef\xbb\xbf" + text.encode() and created["sourceHash"] == hashlib.sha256(raw).hexdigest()
    pages, pointer = [], "document"
    while pointer is not None:
        page = invoke(ws, "kb_read", {"request": {"path": "b.md", "pointer": pointer, "maxElements": 1}})
        pages.append(page["markdown"])
        assert page["sourceHash"] == created["sourceHash"]
        pointer = page["nextPointer"]
    assert len(pages) == 3 and "".join(pages) == text
    read = BY_NAME["kb_read"].description
    assert "concatenate to exactly the file's text: a leading UTF-8 BOM is no" in read
    create = " ".join(BY_NAME["kb_create"].description.split())
    assert "without BOM" not in create and "starting with U+FEFF gives the file a BOM" in create
    kb.shutdown()


def _refusal(ws: Workspace, tool: str, path: str, pointer: str) -> str:
    """The message ``tool`` refuses ``pointer`` of ``path`` with."""
    from local_vector_search_mcp.errors import InvalidArgument

    with pytest.raises(InvalidArgument) as caught:
        invoke(ws, tool, {"request": {"path": path, "pointer": pointer}})
    return caught.value.message


def test_a_links_heading_fragment_passed_as_a_pointer_is_answered_with_the_headings_pointer(tmp_path: Path) -> None:
    """Decision 1182: an agent following `[...](設定.md#設定方法)` passes the fragment as kb_read's
    pointer; the refusal named no way on. It now names the heading and its pointer, for the slug
    GitHub makes (full-width punctuation dropped, `-1` for a repeat), a percent-encoded fragment
    and a wikilink's heading text, and says when no heading has that anchor."""

    root = tmp_path / "kb"
    (root / "ガイド").mkdir(parents=True)
    (root / "ガイド" / "設定.md").write_text(
        "# 設定ガイド\n\n## 設定方法\n\n本文。\n\n## よくある質問（FAQ）\n\n答え。\n\n## 設定方法\n\n二つ目。\n",
        encoding="utf-8",
    )
    ws = _workspace(root, tmp_path)
    outline = invoke(ws, "kb_outline", {"request": {"path": "ガイド/設定.md"}})["headings"][0]
    first, faq, second = (h["pointer"] for h in outline["children"])

    def refusal(tool: str, pointer: str) -> str:
        return _refusal(ws, tool, "ガイド/設定.md", pointer)

    assert f"`{first}`" in refusal("kb_read", "#設定方法")
    assert f"`{second}`" in refusal("kb_read", "#設定方法-1")
    assert f"`{faq}`" in refusal("kb_read", "#よくある質問faq")
    assert f"`{faq}`" in refusal("kb_outline", "よくある質問（FAQ）")
    assert f"`{first}`" in refusal("kb_read", "#%E8%A8%AD%E5%AE%9A%E6%96%B9%E6%B3%95")
    assert "no heading of 'ガイド/設定.md' has that anchor" in refusal("kb_read", "#存在しない")
    assert refusal("kb_read", "xyz") == "Invalid semantic pointer: xyz"  # names nothing: as before


def test_an_obsidian_block_reference_passed_as_a_pointer_is_answered_with_the_blocks_pointer(tmp_path: Path) -> None:
    """Decision 1198: an agent following `[[Quotes#^seneca]]` passes `#^seneca` as the pointer; the
    refusal said no *heading* had that anchor and sent it to kb_outline, which lists no block. It
    now names the block the marker marks, as Obsidian reads it: the paragraph or (innermost) list
    item whose line ends in it, the quote, table or whole list a marker alone on its line follows;
    a marker in code or a comment marks nothing."""

    root = tmp_path / "vault"
    root.mkdir()
    (root / "Quotes.md").write_text(
        "---\nnote: ^front\n---\n# Quotes\n\nWe waste a lot of it. ^seneca\n\n"
        "> The impediment to action advances action.\n\n^aurelius\n\n"
        "- first\n- second ^item\n  - nested ^deep\n- third\n\n^whole-list\n\n"
        "```\ncode ^in-code\n```\n\n%%hidden ^in-comment%%\n",
        encoding="utf-8",
    )
    ws = _workspace(root, tmp_path)
    elements = invoke(ws, "kb_read", {"request": {"path": "Quotes.md"}})["elements"]

    def pointer(start: str) -> str:
        return next(e["pointer"] for e in elements if e["text"].startswith(start))

    def refusal(tool: str, value: str) -> str:
        return _refusal(ws, tool, "Quotes.md", value)

    assert f"the paragraph at `{pointer('We waste')}`" in refusal("kb_read", "#^seneca")
    assert f"the paragraph at `{pointer('We waste')}`" in refusal("kb_outline", "^seneca")
    assert f"the quote at `{pointer('> The impediment')}`" in refusal("kb_read", "#^aurelius")
    assert f"the list item at `{pointer('- second')}`" in refusal("kb_read", "#^item")
    assert f"the list item at `{pointer('  - nested')}`" in refusal("kb_read", "#^deep")
    assert f"the list whose first item is at `{pointer('- first')}`" in refusal("kb_read", "#^whole-list")
    for nothing in ("#^in-code", "#^in-comment", "#^front", "#^nope"):
        assert "no block of 'Quotes.md' is marked" in refusal("kb_read", nothing), nothing
