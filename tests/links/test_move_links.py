"""kb_move with updateLinks: every link keeps working, only link bytes change, all or nothing."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from kb_fakes import KbClient, client

from local_vector_search_mcp import writer
from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import Conflict

from .vault import FILES, write_files, write_vault


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KbClient]:
    c = client(write_vault(tmp_path / "vault"), knowledge_base__allow_writes=True)
    c.reindex()
    yield c
    c.shutdown()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def move(kb: KbClient, src: str, dst: str, **extra: Any) -> dict[str, Any]:
    data = (kb.ws.root / src).read_bytes()
    request = {"sourcePath": src, "targetPath": dst, "expectedSourceHash": sha(data), **extra}
    return invoke(kb.ws, "kb_move", {"request": request})


def broken(kb: KbClient) -> list[tuple[str, str]]:
    kb.reindex()
    result = invoke(kb.ws, "kb_links", {"request": {}})
    return sorted((m["source"], m["target"]) for m in result["missing"])


def test_rename_keeps_every_link_and_changes_only_link_bytes(kb: KbClient) -> None:
    before = broken(kb)
    out = move(kb, "guides/Setup.md", "manual/setup/Install Guide.md", updateLinks=True)
    assert out["path"] == "manual/setup/Install Guide.md" and out["previousPath"] == "guides/Setup.md"
    assert out["updatedPaths"] == ["Home.md", "manual/setup/Install Guide.md", "notes/faq.md"]
    root = kb.ws.root
    assert (root / "Home.md").read_bytes() == FILES["Home.md"].replace(
        b"[[guides/Setup|the setup]] and [[Setup#Install]]",
        b"[[Install Guide|the setup]] and [[Install Guide#Install]]",
    )
    assert (root / "notes/faq.md").read_bytes() == FILES["notes/faq.md"].replace(
        b"[setup](../guides/Setup.md) and [[Setup#Nope]]",
        b"[setup](../manual/setup/Install%20Guide.md) and [[Install Guide#Nope]]",
    )  # the BOM stays
    moved = (root / "manual/setup/Install Guide.md").read_bytes()
    assert moved == FILES["guides/Setup.md"].replace(b"(../Home.md)", b"(../../Home.md)").replace(
        b"(../notes/faq.md#top)", b"(../../notes/faq.md#top)"
    )  # CRLF kept
    assert out["sourceHash"] == sha(moved)
    assert not (root / "guides/Setup.md").exists()
    for rel, data in FILES.items():  # every other file is byte-identical
        if rel not in ("Home.md", "notes/faq.md", "guides/Setup.md"):
            assert (root / rel).read_bytes() == data
    assert broken(kb) == before  # nothing newly broken (the vault's own broken links stay as they were)
    graph = invoke(kb.ws, "kb_links", {"request": {"path": "manual/setup/Install Guide.md", "direction": "incoming"}})
    assert {ln["source"] for ln in graph["links"]} == {"Home.md", "notes/faq.md"}
    assert all(ln["targetExists"] for ln in graph["links"])


def test_a_bare_name_that_stays_unique_is_left_alone(kb: KbClient) -> None:
    out = move(kb, "Getting Started.md", "archive/Getting Started.md", updateLinks=True)
    assert out["updatedPaths"] == []  # [[Getting Started]] still resolves by name
    assert (kb.ws.root / "Home.md").read_bytes() == FILES["Home.md"]


def test_without_update_links_nothing_else_changes(kb: KbClient) -> None:
    out = move(kb, "guides/Setup.md", "manual/Setup2.md")
    assert out["updatedPaths"] is None
    assert (kb.ws.root / "Home.md").read_bytes() == FILES["Home.md"]


def test_moving_an_aliased_note_keeps_alias_links(kb: KbClient) -> None:
    out = move(kb, "Home.md", "hub/Main.md", updateLinks=True)
    root = kb.ws.root
    started = (root / "Getting Started.md").read_bytes()
    assert started == FILES["Getting Started.md"].replace(b"[[Home]]", b"[[Main]]")  # [[Start]] is an alias
    assert "Getting Started.md" in out["updatedPaths"] and "hub/Main.md" in out["updatedPaths"]
    main = (root / "hub/Main.md").read_bytes()
    assert b"[guide](../guides/setup.md#install)" in main and b"![logo](../img/logo.png)" in main
    assert b"[faq]: ../notes/faq.md" in main and b"![[diagram.png]]" in main
    assert broken(kb) == [("Getting Started.md", "Ghost.md"), ("hub/Main.md", "guides/setup.md")]


def test_a_file_changed_during_the_move_leaves_every_file_as_it_was(kb: KbClient, monkeypatch) -> None:
    root = kb.ws.root
    original = writer._put_staged
    calls = []

    def racing(tmp, path, new, old, rel):  # an editor outside the server changes faq.md after Home.md
        calls.append(path.name)
        original(tmp, path, new, old, rel)
        if len(calls) == 1:
            (root / "notes/faq.md").write_bytes(b"# FAQ edited elsewhere\n")

    monkeypatch.setattr(writer, "_put_staged", racing)
    with pytest.raises(Conflict, match=r"notes/faq\.md"):
        move(kb, "guides/Setup.md", "manual/Setup.md", updateLinks=True)
    assert (root / "Home.md").read_bytes() == FILES["Home.md"]  # restored
    assert (root / "guides/Setup.md").read_bytes() == FILES["guides/Setup.md"] and not (root / "manual").exists()


def test_a_linking_file_deleted_as_the_move_stages_it_is_named(kb: KbClient, monkeypatch) -> None:
    """Decision 325 through 687's staging: a rewritten file deleted by another program in the instant
    before its new bytes are staged is a CONFLICT naming that file, and nothing else changes."""
    root = kb.ws.root
    original = writer.temp_path

    def deleting(target: Path) -> Path:
        if target.name == "faq.md" and (root / "notes/faq.md").exists():
            (root / "notes/faq.md").unlink()
        return original(target)

    monkeypatch.setattr(writer, "temp_path", deleting)
    with pytest.raises(Conflict, match=r"'notes/faq\.md' changed while the move was applied"):
        move(kb, "guides/Setup.md", "manual/Setup.md", updateLinks=True)
    assert (root / "Home.md").read_bytes() == FILES["Home.md"]
    assert (root / "guides/Setup.md").read_bytes() == FILES["guides/Setup.md"] and not (root / "manual").exists()


def test_a_stale_plan_is_refused_before_anything_is_written(kb: KbClient, monkeypatch) -> None:
    root = kb.ws.root
    from local_vector_search_mcp.index import relink

    real = relink.plan_move

    def stale(*args, **kwargs):
        plan = real(*args, **kwargs)
        (root / "Home.md").write_bytes(FILES["Home.md"] + b"\nmore\n")
        return plan

    monkeypatch.setattr("local_vector_search_mcp.handlers.documents.plan_move", stale)
    with pytest.raises(Conflict, match=r"Home\.md"):
        move(kb, "guides/Setup.md", "manual/Setup.md", updateLinks=True)
    assert (root / "notes/faq.md").read_bytes() == FILES["notes/faq.md"]
    assert (root / "guides/Setup.md").exists()


def test_moving_an_image_rewrites_its_references(kb: KbClient) -> None:
    root = kb.ws.root
    data = (root / "img/logo.png").read_bytes()
    request = {"sourcePath": "img/logo.png", "targetPath": "assets/brand/logo.png", "updateLinks": True}
    out = invoke(kb.ws, "kb_move_image", {"request": {**request, "expectedSha256": sha(data)}})
    assert out["updatedPaths"] == ["Home.md"] and out["sha256"] == sha(data)
    assert (root / "Home.md").read_bytes() == FILES["Home.md"].replace(b"(img/logo.png)", b"(assets/brand/logo.png)")
    out = invoke(
        kb.ws,
        "kb_move_image",
        {"request": {"sourcePath": "diagram.png", "targetPath": "pics/d2.png", "updateLinks": True}},
    )
    assert out["updatedPaths"] == ["Home.md"]
    assert b"![[d2.png]]" in (root / "Home.md").read_bytes()  # a bare embed stays a bare name
    out = invoke(
        kb.ws, "kb_move_image", {"request": {"sourcePath": "pics/d2.png", "targetPath": "d2.png", "updateLinks": True}}
    )
    assert out["updatedPaths"] == []  # found by its name anywhere: nothing to rewrite
    kb.reindex()
    missing = invoke(kb.ws, "kb_links", {"request": {}})["missingImages"]
    assert sorted(m["target"] for m in missing) == ["img/gone.png", "missing.png"]  # only the ones missing before


def test_a_document_over_the_size_cap_is_refused_with_update_links_and_nothing_moves(kb: KbClient) -> None:
    from local_vector_search_mcp.errors import UnsupportedFormat
    from local_vector_search_mcp.sourcefile import MAX_DOCUMENT_BYTES

    root = kb.ws.root
    big = b"# Big\n\n[home](Home.md)\n\n" + b"word " * (MAX_DOCUMENT_BYTES // 5)
    (root / "big.md").write_bytes(big)
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    # was: read whole, its own links silently left unrewritten, and the move made
    with pytest.raises(UnsupportedFormat, match="MiB"):
        move(kb, "big.md", "deeper/big.md", updateLinks=True)
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before


def test_a_document_whose_links_cannot_be_read_is_named_in_skipped(kb: KbClient) -> None:
    """Decision 701: a neighbour that is not UTF-8 (a Latin-1 note) or cannot be read at all (a
    FIFO) was passed over in silence: the move said every link was kept (`skipped: []`) while the
    Latin-1 note's link to the moved file was left broken."""
    import os

    root = kb.ws.root
    latin = "Voir [installation](guides/Setup.md), café.\n".encode("latin-1")
    (root / "latin.md").write_bytes(latin)
    (root / "plain.md").write_bytes("Nothing here, café.\n".encode("latin-1"))  # not UTF-8, but no link to it
    os.mkfifo(root / "pipe.md")
    out = move(kb, "guides/Setup.md", "manual/Setup2.md", updateLinks=True)
    assert (root / "latin.md").read_bytes() == latin  # never rewritten: its bytes are not ours to decode
    assert out["skippedFolders"] == 2
    skipped = {entry["path"]: entry["reason"] for entry in out["skipped"]}
    assert sorted(skipped) == ["latin.md", "pipe.md"]
    assert "not valid UTF-8" in skipped["latin.md"] and "not rewritten" in skipped["latin.md"]
    assert "not a regular file" in skipped["pipe.md"] and "not checked" in skipped["pipe.md"]
    assert out["updatedPaths"] == ["Home.md", "notes/faq.md"]


def test_a_document_that_is_not_utf8_is_refused_with_update_links_and_nothing_moves(kb: KbClient) -> None:
    """Decision 701, as 'over the size cap' above: its own relative links cannot be rewritten, so a
    move that promises every link keeps working is refused instead of leaving them broken."""
    from local_vector_search_mcp.errors import UnsupportedFormat

    root = kb.ws.root
    (root / "old.md").write_bytes("# Vieux\n\n[home](Home.md) é\n".encode("latin-1"))
    before = {p: p.read_bytes() for p in root.rglob("*.md")}
    with pytest.raises(UnsupportedFormat, match=r"not valid UTF-8.*without updateLinks"):
        move(kb, "old.md", "deeper/old.md", updateLinks=True)
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == before
    assert move(kb, "old.md", "deeper/old.md")["path"] == "deeper/old.md"  # a plain move still works


def test_links_that_still_reach_their_target_are_left_as_written_and_dot_slash_stays(tmp_path: Path) -> None:
    """Decision 705: renaming a document in its folder rewrote its own `./page.md` and
    `../guide/page.md` links, which still worked, to `page.md` (new bytes and a new sourceHash for
    nothing), and a rewritten `./page.md` lost the author's `./`."""
    root = tmp_path / "kb"
    (root / "guide").mkdir(parents=True)
    (root / "guide" / "page.md").write_bytes(b"# P\n")
    own = b"[b](./page.md) [c](./page.md#x) [d](../guide/page.md) [e](page.md)\n"
    (root / "guide" / "index.md").write_bytes(own)
    (root / "guide" / "other.md").write_bytes(b"[p](./page.md#top) [q](<./page.md>)\n")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        out = move(kb, "guide/index.md", "guide/renamed.md", updateLinks=True)
        assert out["updatedPaths"] == [] and out["sourceHash"] == sha(own)
        assert (root / "guide" / "renamed.md").read_bytes() == own
        out = move(kb, "guide/page.md", "guide/sub/page 2.md", updateLinks=True)
        assert out["updatedPaths"] == ["guide/other.md", "guide/renamed.md"]
        assert (root / "guide" / "other.md").read_bytes() == b"[p](./sub/page%202.md#top) [q](<./sub/page 2.md>)\n"
        assert (root / "guide" / "renamed.md").read_bytes() == (
            b"[b](./sub/page%202.md) [c](./sub/page%202.md#x) [d](sub/page%202.md) [e](sub/page%202.md)\n"
        )
        out = move(kb, "guide/sub/page 2.md", "elsewhere/page.md", updateLinks=True)
        assert (
            root / "guide" / "other.md"
        ).read_bytes() == b"[p](../elsewhere/page.md#top) [q](<../elsewhere/page.md>)\n"
    finally:
        kb.shutdown()


def test_a_relative_autolink_follows_its_document_and_stays_an_autolink(tmp_path: Path) -> None:
    """Decision 901: ``<page.md>`` is a link, so a move with updateLinks rewrites it; a space in
    the new name is encoded, since an autolink ends at a space."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "page.md").write_bytes(b"# P\n")
    (root / "index.md").write_bytes(b"# I\n\nSee <page.md#top> and <./page.md>.\n")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        out = move(kb, "page.md", "docs/new page.md", updateLinks=True)
        assert out["updatedPaths"] == ["index.md"]
        assert (root / "index.md").read_bytes() == b"# I\n\nSee <docs/new%20page.md#top> and <./docs/new%20page.md>.\n"
        assert broken(kb) == []
    finally:
        kb.shutdown()


def test_a_link_keeps_its_own_style_and_a_relative_wikilink_stays_relative(tmp_path: Path) -> None:
    """Decision 1052: Markdown links already kept `./`, `<...>`, titles, percent-encoding and
    anchors (452, 705); a wikilink or embed written in Obsidian's "relative path" format lost it
    (`[[./x]]` became `[[x]]`, `![[./p.png]]` a root path), and a moved note's own `![[./p.png]]`
    was left reaching a picture beside its new place that does not exist."""
    root = tmp_path / "kb"
    (root / "s").mkdir(parents=True)
    (root / "s/x.md").write_bytes(b"# X\n\n## h\n")
    (root / "s/p.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(24))
    links = (
        b"[dot](./x.md) [t](./x.md 'title') [a](<./x.md#h>) [e](./x.md#h) [r][x]\n\n"
        b"[[./x]] [[./x.md#h|alias]] [[../s/x]] ![[./p.png]]\n\n[x]: ./x.md\n"
    )
    (root / "s/a.md").write_bytes(links)
    (root / "s/own.md").write_bytes(b"![[./p.png]] [[./x]]\n")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        move(kb, "s/x.md", "s/moved/x y.md", updateLinks=True)
        request = {"sourcePath": "s/p.png", "targetPath": "s/img/p.png", "updateLinks": True}
        invoke(kb.ws, "kb_move_image", {"request": request})
        assert (root / "s/a.md").read_bytes() == (
            b"[dot](./moved/x%20y.md) [t](./moved/x%20y.md 'title') [a](<./moved/x y.md#h>) "
            b"[e](./moved/x%20y.md#h) [r][x]\n\n"
            b"[[./moved/x y]] [[./moved/x y.md#h|alias]] [[./moved/x y]] ![[./img/p.png]]\n\n"
            b"[x]: ./moved/x%20y.md\n"
        )
        move(kb, "s/own.md", "own.md", updateLinks=True)
        assert (root / "own.md").read_bytes() == b"![[./s/img/p.png]] [[./s/moved/x y]]\n"
        move(kb, "own.md", "deep/er/own.md", updateLinks=True)
        assert (root / "deep/er/own.md").read_bytes() == b"![[../../s/img/p.png]] [[../../s/moved/x y]]\n"
        assert broken(kb) == []
    finally:
        kb.shutdown()


PAGE = """# Page

[full size](../img/pic.png) and [![thumb](../img/pic.png)](../img/pic.png), [sheet][s].

[s]: ../img/pic.png

<img src="../img/pic.png" width="300">

<p align="center">
  <img alt="a" src='../img/pic.png'/> <img src=../img/pic.png>
</p>

Text <IMG SRC="../img/pic.png" width=50> inline, and `<img src="../img/pic.png">` in code stays.

    <img src="../img/pic.png"> indented code stays

<!-- <img src="../img/pic.png"> commented out -->

[other](../img/other.png) <img src="../img/other.png">
"""


def test_moving_an_image_rewrites_plain_links_and_html_img_tags_too(tmp_path: Path) -> None:
    # The rust book draws every figure with <img src>, READMEs size images that way, and
    # `[full size](pic.png)` / `[![thumb](t.png)](pic.png)` link to an image: all reach it (decision 761).
    root = tmp_path / "kb"
    (root / "img").mkdir(parents=True)
    (root / "img/pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(24))
    (root / "docs").mkdir()
    (root / "docs/page.md").write_text(PAGE, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        request = {"sourcePath": "img/pic.png", "targetPath": "assets/p q.png", "updateLinks": True}
        out = invoke(kb.ws, "kb_move_image", {"request": request})
        assert out["updatedPaths"] == ["docs/page.md"]
        expected = (
            PAGE.replace("](../img/pic.png)", "](../assets/p%20q.png)")
            .replace("[s]: ../img/pic.png", "[s]: ../assets/p%20q.png")
            .replace('<img src="../img/pic.png" width="300">', '<img src="../assets/p q.png" width="300">')
            .replace("src='../img/pic.png'/>", "src='../assets/p q.png'/>")
            .replace("<img src=../img/pic.png>", "<img src=../assets/p%20q.png>")
            .replace('<IMG SRC="../img/pic.png" width=50>', '<IMG SRC="../assets/p q.png" width=50>')
        )
        assert (root / "docs/page.md").read_text(encoding="utf-8") == expected
    finally:
        kb.shutdown()


def test_moving_a_document_keeps_its_own_links_to_attachments_and_html_images(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "docs/files").mkdir(parents=True)
    (root / "docs/files/spec.pdf").write_bytes(b"%PDF-1.4\n")
    (root / "docs/files/pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(24))
    text = '# Note\n\n[the spec](files/spec.pdf)\n\n<img src="files/pic.png">\n'
    (root / "docs/note.md").write_text(text, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        out = move(kb, "docs/note.md", "archive/2026/note.md", updateLinks=True)
        assert out["path"] == "archive/2026/note.md"
        moved = (root / "archive/2026/note.md").read_text(encoding="utf-8")
        assert moved == text.replace("(files/spec.pdf)", "(../../docs/files/spec.pdf)").replace(
            '"files/pic.png"', '"../../docs/files/pic.png"'
        )
    finally:
        kb.shutdown()


HTML_INDEX = """# Index

<p align="center"><a class="btn" href="../guide/setup.md" target="_blank">Setup</a> \
<A HREF='../guide/setup.md#intro' title="x">Intro</A> <a href=../guide/setup.md?v=2#intro>v2</a></p>

Inline <a data-x="1" href="../guide/set%75p.md">encoded</a>, <a href="https://example.org/guide/setup.md">web</a>,
`<a href="../guide/setup.md">code</a>` and <!-- <a href="../guide/setup.md"> -->.
"""

HTML_SETUP = """# Setup

## Intro

<a href="../docs/index.md">back</a> <a href='files/spec.pdf'>spec</a> <a href="page.html">site page</a>
<a href="files/">all files</a> <a href="#intro">here</a> <a href="mailto:me@example.org">mail</a>
"""


def test_moving_a_document_rewrites_the_href_of_html_a_tags_byte_exactly(tmp_path: Path) -> None:
    """Decision 1032: a move with updateLinks left every ``<a href>`` to the moved page pointing at
    its old path. The value alone is rewritten (quotes, attribute order, case and every other byte
    kept), as an ``<img src>`` is: spaces stay inside quotes, an unquoted value gets ``%20``, an
    encoded one stays encoded, ``?query`` and ``#fragment`` stay. The moved page's own ``<a href>``
    to a document or a file follows it; to a page the site makes, a folder, a URL or its own
    fragment it is left as written, as a plain link is."""
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "guide" / "files").mkdir(parents=True)
    (root / "guide/files/spec.pdf").write_bytes(b"%PDF-1.4\n")
    (root / "docs/index.md").write_text(HTML_INDEX, encoding="utf-8")
    (root / "guide/setup.md").write_text(HTML_SETUP, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()
        out = move(kb, "guide/setup.md", "manual/v2/Set up.md", updateLinks=True)
        assert out["updatedPaths"] == ["docs/index.md", "manual/v2/Set up.md"]
        assert out["brokenLinks"] == []
        assert (root / "docs/index.md").read_text(encoding="utf-8") == (
            HTML_INDEX.replace('href="../guide/setup.md" target', 'href="../manual/v2/Set up.md" target')
            .replace("HREF='../guide/setup.md#intro'", "HREF='../manual/v2/Set up.md#intro'")
            .replace("href=../guide/setup.md?v=2#intro>", "href=../manual/v2/Set%20up.md?v=2#intro>")
            .replace('href="../guide/set%75p.md"', 'href="../manual/v2/Set%20up.md"')
        )
        assert (root / "manual/v2/Set up.md").read_text(encoding="utf-8") == HTML_SETUP.replace(
            '"../docs/index.md"', '"../../docs/index.md"'
        ).replace("'files/spec.pdf'", "'../../guide/files/spec.pdf'")
        kb.reindex()
        edges = invoke(kb.ws, "kb_links", {"request": {"path": "manual/v2/Set up.md", "direction": "incoming"}})
        assert [(ln["source"], ln["kind"], ln["targetExists"]) for ln in edges["links"]] == [
            ("docs/index.md", "href", True)
        ] * 4
    finally:
        kb.shutdown()


SRCSET_PAGE = """# Page

<picture>
  <source srcset="../img/logo.png 1x,../img/logo@2x.png   2x" media="(min-width: 800px)">
  <img src="../img/logo.png" srcset="../img/logo.png 1x, ../img/logo@2x.png 2x, https://example.org/img/logo.png 3x">
</picture>

Inline <IMG SRCSET='../img/logo.png?v=1#x 480w,\t../img/other.png 800w' alt=x> and `<img srcset="../img/logo.png">`.
"""

SRCSET_ONLY = '<picture><source srcset=img/logo.png><img src="img/other.png"></picture>\n'


def test_a_move_rewrites_each_srcset_candidate_s_url_byte_exactly(tmp_path: Path) -> None:
    """Decision 1156: a move with updateLinks left every ``srcset`` candidate on its old path while
    the ``src`` beside it was rewritten (761). Now each candidate's URL alone changes, as a ``src``
    does: descriptors, spacing, commas, quotes, ``?query#fragment`` and every other byte stay; a
    URL and a candidate in code are left. A moved page's own candidates follow it (kb_move);
    moving a picture (kb_move_image) rewrites the candidates naming it and counts the pages holding
    them in ``updatedPaths``, one that names it in a ``srcset`` alone too. A space in the new path
    is encoded even inside quotes: it would end the candidate's URL."""
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "img").mkdir()
    for name in ("logo.png", "logo@2x.png", "other.png"):
        (root / "img" / name).write_bytes(b"\x89PNG\r\n\x1a\n" + name.encode())
    (root / "docs/page.md").write_text(SRCSET_PAGE, encoding="utf-8")
    (root / "only.md").write_text(SRCSET_ONLY, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()
        out = move(kb, "docs/page.md", "deep/er/page.md", updateLinks=True)
        assert out["updatedPaths"] == ["deep/er/page.md"] and out["brokenLinks"] == []
        moved = SRCSET_PAGE.replace("../img/", "../../img/").replace(
            '`<img srcset="../../img/', '`<img srcset="../img/'
        )
        assert (root / "deep/er/page.md").read_text(encoding="utf-8") == moved
        assert "https://example.org/img/logo.png 3x" in moved
        kb.reindex()
        data = (root / "img/logo.png").read_bytes()
        request = {"sourcePath": "img/logo.png", "targetPath": "brand new/logo.png", "updateLinks": True}
        out = invoke(kb.ws, "kb_move_image", {"request": {**request, "expectedSha256": sha(data)}})
        assert out["updatedPaths"] == ["deep/er/page.md", "only.md"] and out["brokenLinks"] == []
        assert (root / "deep/er/page.md").read_text(encoding="utf-8") == (
            moved.replace('srcset="../../img/logo.png 1x,', 'srcset="../../brand%20new/logo.png 1x,')  # both tags
            .replace('src="../../img/logo.png"', 'src="../../brand new/logo.png"')  # a src keeps its space
            .replace("SRCSET='../../img/logo.png?v=1#x 480w", "SRCSET='../../brand%20new/logo.png?v=1#x 480w")
        )
        assert (root / "only.md").read_text(encoding="utf-8") == SRCSET_ONLY.replace(
            "srcset=img/logo.png>", "srcset=brand%20new/logo.png>"
        )
        kb.reindex()
        assert invoke(kb.ws, "kb_links", {"request": {}})["missingImages"] == []
    finally:
        kb.shutdown()


MEDIA_PAGE = """# Clip

<video controls POSTER='../media/poster.png' src="../media/clip.mp4#t=10,20" width=640>
  <source src="../media/clip.webm?v=2" type="video/webm">
  <track kind="subtitles" src=../media/en.vtt srclang="en">
</video>

Inline <audio src = "../media/talk.mp3"></audio>, <embed src="../media/r.pdf">, <object data='../media/d.svg'></object>,
also <iframe src="../media/slides.pdf#page=2"></iframe> <iframe src="../demo.html"></iframe> <video src="https://example.org/v.mp4"></video>
and `<audio src="../media/talk.mp3">` <!-- <audio src="../media/talk.mp3"> -->.
"""


def test_a_move_rewrites_the_files_audio_and_video_tags_name_byte_exactly(tmp_path: Path) -> None:
    """Decision 1186: a move with updateLinks left the files of ``<video>``, ``<audio>``,
    ``<source>``, ``<track>``, ``<embed>``, ``<object>`` and an ``<iframe>`` naming an attachment on
    their old path. A moved page's own values now follow it, each value alone (quotes or none, the
    spaces around ``=``, ``?query`` and the media fragment ``#t=10,20``, the other attributes and
    every other byte stay); an iframe's page, a URL and a tag in code or a comment are left. Moving
    the poster (kb_move_image) rewrites the ``poster`` naming it; a space is kept inside quotes,
    as a ``src``'s."""
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    (root / "media").mkdir()
    for name in ("clip.mp4", "clip.webm", "en.vtt", "talk.mp3", "r.pdf", "d.svg", "slides.pdf"):
        (root / "media" / name).write_bytes(b"data")
    (root / "media/poster.png").write_bytes(b"\x89PNG\r\n\x1a\nposter")
    (root / "docs/clip.md").write_text(MEDIA_PAGE, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()
        assert invoke(kb.ws, "kb_links", {"request": {}})["missingImages"] == []
        out = move(kb, "docs/clip.md", "deep/er/clip.md", updateLinks=True)
        assert out["updatedPaths"] == ["deep/er/clip.md"] and out["brokenLinks"] == []
        moved = (
            MEDIA_PAGE.replace("../media/", "../../media/")
            .replace('`<audio src="../../media/', '`<audio src="../media/')
            .replace('<!-- <audio src="../../media/', '<!-- <audio src="../media/')
        )
        assert (root / "deep/er/clip.md").read_text(encoding="utf-8") == moved
        assert '<iframe src="../demo.html">' in moved and 'src="../../media/clip.mp4#t=10,20" width' in moved
        kb.reindex()
        assert invoke(kb.ws, "kb_links", {"request": {}})["missingImages"] == []
        data = (root / "media/poster.png").read_bytes()
        request = {"sourcePath": "media/poster.png", "targetPath": "media/big poster.png", "updateLinks": True}
        out = invoke(kb.ws, "kb_move_image", {"request": {**request, "expectedSha256": sha(data)}})
        assert out["updatedPaths"] == ["deep/er/clip.md"] and out["brokenLinks"] == []
        assert (root / "deep/er/clip.md").read_text(encoding="utf-8") == moved.replace(
            "POSTER='../../media/poster.png'", "POSTER='../../media/big poster.png'"
        )
        kb.reindex()
        assert invoke(kb.ws, "kb_links", {"request": {}})["missingImages"] == []
    finally:
        kb.shutdown()


FOOTNOTED = """# Notes

A chart[^1], the setup[^2] and its path[^3].

[^1]: ![chart](../img/logo.png)
[^2]: [setup](../guide/setup.md#intro)
[^3]: ../guide/setup.md
"""


def test_a_move_rewrites_the_link_a_footnote_s_one_token_body_holds(tmp_path: Path) -> None:
    """Decision 1157: ``[^1]: ![chart](../img/logo.png)`` is a footnote whose body CommonMark reads
    as a reference definition's destination: moving the picture or the page left its link on the
    old path. Now the body's link follows the move (kb_move, kb_move_image); a bare path
    (``[^3]: ../guide/setup.md``) is followed as before, ``[^3]`` a reference link to it."""
    root = tmp_path / "kb"
    for folder in ("docs", "guide", "img"):
        (root / folder).mkdir(parents=True)
    (root / "img/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "guide/setup.md").write_text("# Setup\n\n## Intro\n", encoding="utf-8")
    (root / "docs/notes.md").write_text(FOOTNOTED, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()
        out = move(kb, "guide/setup.md", "manual/setup.md", updateLinks=True)
        assert out["updatedPaths"] == ["docs/notes.md"] and out["brokenLinks"] == []
        moved = FOOTNOTED.replace("../guide/setup.md", "../manual/setup.md")
        assert (root / "docs/notes.md").read_text(encoding="utf-8") == moved
        kb.reindex()
        request = {"sourcePath": "img/logo.png", "targetPath": "pics/logo.png", "updateLinks": True}
        out = invoke(kb.ws, "kb_move_image", {"request": request})
        assert out["updatedPaths"] == ["docs/notes.md"] and out["brokenLinks"] == []
        assert (root / "docs/notes.md").read_text(encoding="utf-8") == moved.replace("../img/", "../pics/")
        kb.reindex()
        incoming = invoke(kb.ws, "kb_links", {"request": {"path": "manual/setup.md", "direction": "incoming"}})
        assert [(ln["source"], ln["kind"], ln["fragmentFound"]) for ln in incoming["links"]] == [
            ("docs/notes.md", "inline", True),
            ("docs/notes.md", "reference", None),
        ]
        assert invoke(kb.ws, "kb_links", {"request": {}})["missingImages"] == []
    finally:
        kb.shutdown()


def test_a_moved_document_s_html_values_holding_a_template_are_left_as_written(tmp_path: Path) -> None:
    """Decision 1024 made a site generator's template no path, and a Markdown link holding one was
    left alone by a move; an ``<img src>`` holding one was rewritten as a relative path
    (``../../docs/{{site.url}}/x.png``), and so would an ``<a href>`` have been (1032)."""
    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    text = '# T\n\n<img src="{{site.url}}/x.png"> <a href="{{site.baseurl}}/y.md">y</a> [z]({{site.url}}/z.md)\n'
    (root / "docs/t.md").write_text(text, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        out = move(kb, "docs/t.md", "a/b/t.md", updateLinks=True)
        assert out["updatedPaths"] == [] and (root / "a/b/t.md").read_text(encoding="utf-8") == text
    finally:
        kb.shutdown()


def test_a_moved_document_s_link_to_a_folder_is_left_as_written(tmp_path: Path) -> None:
    # decision 761 follows plain links to files; a folder link (`[all files](files/)`) is no file's
    # and was rewritten without its trailing slash
    root = tmp_path / "kb"
    (root / "docs/files").mkdir(parents=True)
    (root / "docs/files/spec.pdf").write_bytes(b"%PDF-1.4\n")
    text = "# Note\n\n[all files](files/) and [spec](files/spec.pdf)\n"
    (root / "docs/note.md").write_text(text, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        move(kb, "docs/note.md", "docs/sub/note.md", updateLinks=True)
        moved = (root / "docs/sub/note.md").read_text(encoding="utf-8")
        assert moved == text.replace("(files/spec.pdf)", "(../files/spec.pdf)")
    finally:
        kb.shutdown()


def test_backslash_links_follow_their_target_and_are_rewritten_with_slashes(tmp_path: Path) -> None:
    """Decision 910: ``[a](sub\\page.md)`` reaches ``sub/page.md`` (the path guard's reading), so a
    move with updateLinks rewrites it, with ``/`` (every reader, Windows ones too, reads it; a ``\\``
    before punctuation in a new name would be an escape). A moved page's own ``..\\`` links follow it,
    an ``<img src>`` written with backslashes too, and a link that still reaches is left as written."""
    root = tmp_path / "kb"
    (root / "sub").mkdir(parents=True)
    (root / "img").mkdir()
    (root / "img" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (root / "sub" / "page.md").write_bytes(b"# P\n\n[home](..\\index.md) ![i](..\\img\\pic.png) [me](.\\page.md)\n")
    (root / "index.md").write_bytes(b'# I\n\n[a](sub\\page.md#top) [b](.\\sub\\page.md) <img src="img\\pic.png">\n')
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        out = move(kb, "sub/page.md", "docs/deep/page.md", updateLinks=True)
        assert out["updatedPaths"] == ["docs/deep/page.md", "index.md"]
        assert (root / "index.md").read_bytes() == (
            b'# I\n\n[a](docs/deep/page.md#top) [b](./docs/deep/page.md) <img src="img\\pic.png">\n'
        )
        assert (root / "docs" / "deep" / "page.md").read_bytes() == (
            b"# P\n\n[home](../../index.md) ![i](../../img/pic.png) [me](.\\page.md)\n"
        )
        assert broken(kb) == []
        assert invoke(kb.ws, "kb_links", {"request": {}})["missingImages"] == []
    finally:
        kb.shutdown()


def test_a_move_keeps_each_shared_name_opening_the_note_it_opened(tmp_path: Path) -> None:
    """Decision 914: ``[[Dup]]`` opens, of the notes named ``Dup``, the one in the linking note's
    folder, else the one nearest the root. A move can hand that name to another note: moved to the
    root, ``z/Dup.md`` would take over every bare ``[[Dup]]``, so (as Obsidian's rename does) the
    links that opened ``a/Dup.md`` get its path, and ``[[z/Dup]]`` becomes the bare name it now
    owns; the ``[[Dup]]`` in ``z/`` that opened its neighbour still does, as written. Moving
    ``a/Dup.md`` deep hands the name to ``Dup.md`` the same way."""
    root = tmp_path / "kb"
    write_files(
        root,
        {
            "Home.md": "# H\n\n[[Dup]] [[Dup|shown]] [[z/Dup#Part]] ![[Dup]]\n",
            "a/Dup.md": "# A\n",
            "z/Dup.md": "# Z\n\n## Part\n",
            "z/Near.md": "# N\n\n[[Dup]]\n",
        },
    )
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()
        assert [ln["target"] for ln in invoke(kb.ws, "kb_links", {"request": {"path": "Home.md"}})["links"]] == [
            "a/Dup.md", "a/Dup.md", "z/Dup.md", "a/Dup.md",
        ]  # fmt: skip
        out = move(kb, "z/Dup.md", "Dup.md", updateLinks=True)
        assert out["updatedPaths"] == ["Home.md"]
        assert (root / "Home.md").read_bytes() == b"# H\n\n[[a/Dup]] [[a/Dup|shown]] [[Dup#Part]] ![[a/Dup]]\n"
        assert (root / "z/Near.md").read_bytes() == b"# N\n\n[[Dup]]\n"  # the root path is the name: as written
        out = move(kb, "a/Dup.md", "q/r/Dup.md", updateLinks=True)
        assert out["updatedPaths"] == ["Home.md"]
        assert (root / "Home.md").read_bytes() == (b"# H\n\n[[q/r/Dup]] [[q/r/Dup|shown]] [[Dup#Part]] ![[q/r/Dup]]\n")
        assert broken(kb) == []  # (reindexed)
        got = invoke(kb.ws, "kb_links", {"request": {"path": "Home.md", "direction": "outgoing"}})["links"]
        assert [(ln["target"], ln["targetExists"]) for ln in got] == [
            ("q/r/Dup.md", True), ("q/r/Dup.md", True), ("Dup.md", True), ("q/r/Dup.md", True),
        ]  # fmt: skip
    finally:
        kb.shutdown()


def test_a_bare_embed_keeps_opening_the_picture_it_opened_when_a_move_changes_which_one_its_name_finds(
    tmp_path: Path,
) -> None:
    """Decision 915: with ``photo.png`` in ``assets/`` and ``other/``, ``![[photo.png]]`` opens the one
    nearest (path order between equals). A move with updateLinks rewrote a bare embed only when the
    moved file was the only one of its name, so moving ``assets/photo.png`` deeper silently handed
    the embed to ``other/photo.png``; now it gets the moved file's path, and a picture moved to the
    root (which takes the bare name over) leaves the embeds of the other with its path."""
    root = tmp_path / "kb"
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"
    for path in ("assets/photo.png", "other/photo.png"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(png)
    (root / "Home.md").write_bytes(b"# H\n\n![[photo.png|300]] [[photo.png|see]]\n")
    (root / "other" / "Near.md").write_bytes(b"# N\n\n![[photo.png]]\n")  # its own folder's
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()

        def move_image(src: str, dst: str) -> dict[str, Any]:
            request = {"sourcePath": src, "targetPath": dst, "updateLinks": True}
            request["expectedSha256"] = sha((root / src).read_bytes())
            return invoke(kb.ws, "kb_move_image", {"request": request})

        assert move_image("assets/photo.png", "assets/deep/photo.png")["updatedPaths"] == ["Home.md"]
        assert (root / "Home.md").read_bytes() == (
            b"# H\n\n![[assets/deep/photo.png|300]] [[assets/deep/photo.png|see]]\n"
        )
        assert (root / "other" / "Near.md").read_bytes() == b"# N\n\n![[photo.png]]\n"
        assert move_image("assets/deep/photo.png", "photo.png")["updatedPaths"] == ["Home.md", "other/Near.md"]
        assert (root / "Home.md").read_bytes() == b"# H\n\n![[photo.png|300]] [[photo.png|see]]\n"
        assert (root / "other" / "Near.md").read_bytes() == b"# N\n\n![[other/photo.png]]\n"
    finally:
        kb.shutdown()


def test_a_move_writes_no_name_that_opens_its_note_only_by_path_order(tmp_path: Path) -> None:
    """Decision 915: between equally near notes of one name Obsidian's choice is not documented, so
    a move never leaves or writes a bare name that depends on it. ``[[Dup]]`` opens ``Dup.md`` at the
    root; moved to ``q/Dup.md`` beside ``z/Dup.md``, the bare name would open it by path order only:
    the link gets the path (it was left bare). A link that opened ``q/Dup.md`` by path order among the same equally near
    notes before and after a move of a farther one is left as written."""
    root = tmp_path / "kb"
    write_files(
        root,
        {
            "Home.md": "# H\n\n[[Dup]]\n",
            "Dup.md": "# Root\n",
            "z/Dup.md": "# Z\n",
            "x/Note.md": "# X\n\n[[Dup]]\n",
        },
    )
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()
        assert move(kb, "Dup.md", "q/Dup.md", updateLinks=True)["updatedPaths"] == ["Home.md", "x/Note.md"]
        assert (root / "Home.md").read_bytes() == b"# H\n\n[[q/Dup]]\n"
        (root / "Other.md").write_bytes(b"# O\n\n[[Dup]]\n")  # q/Dup.md by path order among q/ and z/
        (root / "deep" / "er").mkdir(parents=True)
        (root / "deep" / "er" / "Dup.md").write_bytes(b"# Deep\n")
        kb.reindex()
        assert move(kb, "deep/er/Dup.md", "deep/er/more/Dup.md", updateLinks=True)["updatedPaths"] == []
        assert (root / "Other.md").read_bytes() == b"# O\n\n[[Dup]]\n"
        assert broken(kb) == []
    finally:
        kb.shutdown()


@pytest.mark.parametrize(
    ("front", "after"),
    [
        # a block scalar's line starting with `#` is text, not a YAML comment: it was never placed,
        # so the move left it stale and reported success
        ("notes: |\n  # [[Note]]\n", "notes: |\n  # [[dir/Renamed]]\n"),
        # `up: [[Note]]` is a nested list, no link: the quoted link was placed on its spelling there,
        # and the move was refused for a quote the new name does not hold
        ('up: [[Note]]\nrelated: "[[Note]]"\n', 'up: [[Note]]\nrelated: "[[dir/Renamed]]"\n'),
        (
            "up: [[Note]]\nlater: >\n  see [[Note|the note]]\n",
            "up: [[Note]]\nlater: >\n  see [[dir/Renamed|the note]]\n",
        ),
    ],
)
def test_a_front_matter_link_is_rewritten_where_its_yaml_string_holds_it(
    tmp_path: Path, front: str, after: str
) -> None:
    """Decision 684: a property link is placed inside the source of the string that holds it."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "Note.md").write_text("# Note\n", encoding="utf-8")
    (root / "Renamed.md").write_text("# Another page of the name\n", encoding="utf-8")
    (root / "fm.md").write_text(f"---\n{front}---\n\n# Fm\n", encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()
        moved = move(kb, "Note.md", "dir/Renamed.md", updateLinks=True)
        assert moved["updatedPaths"] == ["fm.md"]
        assert (root / "fm.md").read_text(encoding="utf-8") == f"---\n{after}---\n\n# Fm\n"
        assert broken(kb) == []
    finally:
        kb.shutdown()


def _nf(form: Literal["NFC", "NFD"], text: str) -> str:
    return unicodedata.normalize(form, text)


def _missing_images(kb: KbClient) -> list[tuple[str, str]]:
    kb.reindex()
    result = invoke(kb.ws, "kb_links", {"request": {}})
    return sorted((m["source"], m["target"]) for m in result["missingImages"])


def _move_image(kb: KbClient, src: str, dst: str) -> dict[str, Any]:
    request = {"sourcePath": src, "targetPath": dst, "updateLinks": True}
    return invoke(kb.ws, "kb_move_image", {"request": request})


@pytest.mark.parametrize(("on_disk", "typed"), [("NFC", "NFD"), ("NFD", "NFC")])
def test_moving_an_image_rewrites_links_typed_in_the_other_normal_form(
    tmp_path: Path, on_disk: Literal["NFC", "NFD"], typed: Literal["NFC", "NFD"]
) -> None:
    """Decision 716: ``img/café.png`` written by one side and linked as typed by the other (a Mac
    types NFD) is reached by every link style (decision 505: kb_links and the PDF export follow
    them), but a move with updateLinks compared the written path exactly and left them all broken
    with ``updatedPaths: []``. Only the path changes; a bare embed gets the new name."""
    root = tmp_path / "kb"
    (root / "img").mkdir(parents=True)
    (root / "img" / _nf(on_disk, "café.png")).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(24))
    page = _nf(
        typed,
        '# Café\n\n![a](img/café.png "t") ![b](<img/café.png>) ![c][r] [d](img/café.png#x)\n\n'
        '<img src="img/café.png" width=9> ![[img/café.png|300]] ![[café.png]]\n\n[r]: img/café.png\n',
    )
    (root / "page.md").write_text(page, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        assert _missing_images(kb) == []
        out = _move_image(kb, "img/café.png", "pics/thé.png")
        assert out["updatedPaths"] == ["page.md"]
        name, new = _nf(typed, "img/café.png"), "pics/thé.png"
        expected = page.replace(f"![[{_nf(typed, 'café.png')}]]", "![[thé.png]]").replace(name, new)
        assert (root / "page.md").read_text(encoding="utf-8") == expected
        assert _missing_images(kb) == []
    finally:
        kb.shutdown()


def test_a_link_typed_exactly_keeps_its_file_when_a_name_differing_only_in_normal_form_moves(
    tmp_path: Path,
) -> None:
    """Decision 716 with decision 505's rule: Linux holds ``café.png`` NFC and NFD side by side, and a
    path spelled exactly reaches its own file. Moving one rewrites the links spelled as it is, and
    never the other's; a moved note's own links keep reaching each its own file."""
    root = tmp_path / "kb"
    (root / "img").mkdir(parents=True)
    nfc, nfd = _nf("NFC", "café"), _nf("NFD", "café")
    for stem in (nfc, nfd):
        (root / "img" / f"{stem}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + stem.encode())
        (root / "img" / f"{stem}.pdf").write_bytes(b"%PDF-1.4\n" + stem.encode())
    line = '![i](img/{0}.png) <img src="img/{0}.png"> ![[img/{0}.png]] [p](img/{0}.pdf)\n'
    page = f"# P\n\n{line.format(nfc)}\n{line.format(nfd)}"
    (root / "page.md").write_text(page, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        assert _move_image(kb, f"img/{nfd}.png", "moved.png")["updatedPaths"] == ["page.md"]
        expected = page.replace(f"img/{nfd}.png", "moved.png")
        assert (root / "page.md").read_text(encoding="utf-8") == expected
        assert _missing_images(kb) == []
        move(kb, "page.md", "sub/page.md", updateLinks=True)
        relative = expected.replace("(img/", "(../img/").replace('"img/', '"../img/').replace("(moved", "(../moved")
        assert (root / "sub/page.md").read_text(encoding="utf-8") == relative.replace('"moved', '"../moved')
        assert _missing_images(kb) == []
    finally:
        kb.shutdown()


def test_a_moved_document_keeps_its_own_links_typed_in_the_other_normal_form(tmp_path: Path) -> None:
    """Decision 716: a note's ``[att](café.pdf)`` typed NFD reaches ``café.pdf`` written NFC, but a move
    of the note left it as written (now ``y/café.pdf``, nothing). It follows the note, spelled as
    the file is; a link that still reaches its file from the new folder stays byte for byte."""
    root = tmp_path / "kb"
    (root / "x").mkdir(parents=True)
    (root / "files").mkdir()
    for name in ("x/café.pdf", "x/café.png", "files/café.pdf", "files/café.png"):
        (root / _nf("NFC", name)).write_bytes(b"\x89PNG\r\n\x1a\n" if name.endswith("png") else b"%PDF-1.4\n")
    (root / "Thé.md").write_text("# Thé\n", encoding="utf-8")
    stays = '[f](../files/café.pdf) ![g](../files/café.png) <img src="../files/café.png"> [t](../Thé.md)\n'
    text = _nf("NFD", f"# A\n\n[att](café.pdf) ![i](café.png \"t\") <img src='café.png'>\n\n{stays}")
    (root / "x/a.md").write_text(text, encoding="utf-8")
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        assert _missing_images(kb) == [] and broken(kb) == []
        out = move(kb, "x/a.md", "y/a.md", updateLinks=True)
        assert out["updatedPaths"] == ["y/a.md"]
        moved = (root / "y/a.md").read_text(encoding="utf-8")
        assert moved == text.replace(_nf("NFD", "(café"), _nf("NFC", "(../x/café")).replace(
            _nf("NFD", "'café"), _nf("NFC", "'../x/café")
        )
        assert _missing_images(kb) == [] and broken(kb) == []
    finally:
        kb.shutdown()
