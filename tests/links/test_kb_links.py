"""kb_links over the synthetic vault: the graph, Obsidian resolution, the whole-vault check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kb_fakes import KbClient, client

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import InvalidArgument, NotFound, UnsupportedFormat

from .vault import write_files


def links(kb: KbClient, **request: Any) -> dict[str, Any]:
    return invoke(kb.ws, "kb_links", {"request": request})


def edges(result: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    return [(ln["source"], ln["target"], ln["kind"], ln["targetExists"]) for ln in result["links"]]


def test_outgoing_links_of_every_form(kb: KbClient) -> None:
    out = links(kb, path="Home.md", direction="outgoing")
    assert edges(out) == [
        ("Home.md", "Getting Started.md", "wikilink", True),
        ("Home.md", "guides/Setup.md", "wikilink", True),
        ("Home.md", "guides/Setup.md", "wikilink", True),
        ("Home.md", "guides/setup.md", "inline", False),  # paths are case-sensitive
        ("Home.md", "notes/faq.md", "reference", True),
    ]
    _, alias, fragment, inline, ref = out["links"]
    assert alias["text"] == "the setup" and fragment["fragment"] == "Install" and fragment["fragmentFound"] is True
    assert inline["text"] == "guide" and ref["text"] == "the FAQ"
    assert all(ln["pointer"] and ln["pointer"].startswith("1.p") for ln in out["links"])
    assert out["missing"] == [{"source": "Home.md", "target": "guides/setup.md", "pointer": inline["pointer"]}]


def test_wikilinks_resolve_by_name_alias_and_report_ambiguity(kb: KbClient) -> None:
    out = links(kb, path="Getting Started.md", direction="outgoing")
    got = {ln["target"]: ln for ln in out["links"]}
    assert [ln["target"] for ln in out["links"]] == ["Home.md", "Home.md", "a/Note.md", "Ghost.md"]
    assert out["links"][1]["text"] is None and out["links"][1]["targetExists"]  # [[Start]] via aliases
    # [[Note]]: a/Note.md and b/Note.md share the name; the one Obsidian opens, both listed (decision 914)
    assert got["a/Note.md"]["candidates"] == ["a/Note.md", "b/Note.md"] and got["a/Note.md"]["targetExists"]
    assert "candidates" not in got["Ghost.md"] or got["Ghost.md"]["candidates"] is None
    assert {m["target"] for m in out["missing"]} == {"Ghost.md"}


def test_fragments_are_checked_against_headings_and_blocks(kb: KbClient) -> None:
    out = links(kb, path="notes/faq.md", direction="outgoing")
    found = [(ln["target"], ln["fragment"], ln["fragmentFound"]) for ln in out["links"]]
    assert found == [("Home.md", "Home", True), ("guides/Setup.md", None, None), ("guides/Setup.md", "Nope", False)]
    crlf = links(kb, path="guides/Setup.md", direction="outgoing")
    assert [(ln["target"], ln["fragment"], ln["fragmentFound"]) for ln in crlf["links"]] == [
        ("Home.md", None, None),
        ("notes/faq.md", "top", False),
        ("Getting Started.md", "^intro", False),
    ]


def test_incoming_and_depth(kb: KbClient) -> None:
    inc = links(kb, path="Home.md", direction="incoming")
    assert sorted({ln["source"] for ln in inc["links"]}) == [
        "Getting Started.md",
        "a/Note.md",
        "guides/Setup.md",
        "notes/faq.md",
    ]
    deep = links(kb, path="lonely.md", direction="both", depth=3)
    assert deep["links"] == [] and deep["missing"] == []
    two = links(kb, path="a/Note.md", direction="outgoing", depth=2)
    assert {ln["depth"] for ln in two["links"]} == {1, 2}
    assert two["links"][0] == {**two["links"][0], "source": "a/Note.md", "target": "Home.md", "depth": 1}


def test_a_missing_document_still_linked_is_accepted(kb: KbClient) -> None:
    out = links(kb, path="Ghost.md", direction="incoming")
    assert [(ln["source"], ln["kind"]) for ln in out["links"]] == [("Getting Started.md", "wikilink")]
    with pytest.raises(NotFound):
        links(kb, path="nowhere.md")


def test_whole_vault_check(kb: KbClient) -> None:
    out = links(kb)
    assert out["path"] is None
    assert sorted((m["source"], m["target"]) for m in out["missing"]) == [
        ("Getting Started.md", "Ghost.md"),
        ("Home.md", "guides/setup.md"),
    ]
    assert out["orphans"] == ["b/Note.md", "lonely.md"]  # [[Note]] opens a/Note.md (decision 914)
    assert sorted((m["target"], m["kind"]) for m in out["missingImages"]) == [
        ("img/gone.png", "image"),
        ("missing.png", "embed"),
    ]


def test_links_in_code_and_comments_do_not_count(kb: KbClient) -> None:
    targets = {ln["target"] for ln in links(kb)["links"]} | {
        ln["target"] for ln in links(kb, path="Home.md", direction="outgoing")["links"]
    }
    assert not targets & {"Not A Link.md", "Hidden.md", "hidden.md", "Fenced.md", "fenced.md", "indented.md"}


def test_search_tag_filter_returns_only_tagged_documents(kb: KbClient) -> None:
    def paths(**kw: Any) -> set[str]:
        return {r["path"] for r in kb.search("home setup faq note links", mode="lexical", top_k=50, **kw)["results"]}

    assert len(paths()) > 2
    assert paths(tags=["hub"]) == {"Home.md"}
    assert paths(tags=["#Project"]) == {"Home.md"}  # front matter, nested tag parent, any case
    assert paths(tags=["faq"]) == {"notes/faq.md"}  # inline #faq/general
    assert paths(tags=["welcome", "hub"]) == {"Home.md"}  # inline and front matter together
    assert paths(tags=["hub", "faq"]) == set()
    assert paths(tags=["faq"], exclude_globs=["notes/**"]) == set()


def test_a_tag_written_decomposed_is_the_tag_typed_composed(tmp_path: Path) -> None:
    """Decision 1129: tags compare in NFC, whichever form the page or the caller wrote."""
    decomposed, composed = "cafe\u0301", "caf\u00e9"
    (tmp_path / "nfd.md").write_text(f"---\ntags: [{decomposed}]\n---\n# Menu\n\nEspresso.\n", encoding="utf-8")
    (tmp_path / "nfc.md").write_text(f"# Bar\n\nEspresso #{composed}/Gr\u00fcn\n", encoding="utf-8")
    (tmp_path / "other.md").write_text("# Tea\n\nEspresso.\n", encoding="utf-8")
    kb = client(tmp_path)
    try:
        kb.reindex()

        def paths(tag: str) -> set[str]:
            return {r["path"] for r in kb.search("espresso", mode="lexical", tags=[tag])["results"]}

        assert paths(composed) == paths(decomposed) == {"nfd.md", "nfc.md"}
        assert paths("CAFE\u0301/gru\u0308n") == {"nfc.md"}  # a nested tag, any case, any form
    finally:
        kb.shutdown()


def test_the_graph_is_kept_until_the_index_changes_in_this_or_another_connection(kb: KbClient) -> None:
    """Decision 300: kb_links reuses the resolved graph while the store's snapshot key stays;
    a write by this process (any thread) or by another process's connection moves the key."""
    from local_vector_search_mcp.handlers.links import load_graph

    first = load_graph(kb.ws)
    assert load_graph(kb.ws) is first
    assert links(kb, path="lonely.md", direction="incoming")["links"] == []

    (kb.ws.root / "fan.md").write_text("# Fan\n\nSee [the lonely one](lonely.md).\n", encoding="utf-8")
    kb.reindex()  # written by this process
    assert load_graph(kb.ws) is not first
    assert [ln["source"] for ln in links(kb, path="lonely.md", direction="incoming")["links"]] == ["fan.md"]

    other = client(kb.ws.root)  # another workspace, its own connections: like a second server
    try:
        (kb.ws.root / "fan.md").unlink()
        other.reindex()
    finally:
        other.shutdown()
    assert links(kb, path="lonely.md", direction="incoming")["links"] == []


def test_an_embed_that_leaves_the_root_is_not_a_link(tmp_path: Path) -> None:
    """``![[../x.png]]`` was looked up on disk outside the root: one beside the knowledge base was
    left out of ``missingImages`` and a missing one listed, so kb_links told which files exist
    outside the root. Like a Markdown image that leaves it (decision 43), it is no link at all."""
    (tmp_path / "beside.png").write_bytes(b"outside")
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text(
        "# A\n\n![[../beside.png]] ![[../absent.png]] ![[sub/../../beside.png]] ![[gone.png]]\n", encoding="utf-8"
    )
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb)
        assert [(m["target"], m["kind"]) for m in out["missingImages"]] == [("gone.png", "embed")]
    finally:
        kb.shutdown()


def test_a_picture_no_tool_may_open_is_a_missing_image(tmp_path: Path) -> None:
    """Decision 1054: a picture reached through a symbolic link (one leaving the root, one to a file
    inside it, a linked folder, a bare ``![[name]]`` found by name) or kept in ``.git`` was left out
    of ``missingImages``, though kb_load_image refuses it and the PDF export prints a placeholder
    ("its path is not permitted"): the broken-image check passed pictures no reader of the
    knowledge base can show. They go through the path guard now, as document links do (904)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "p.png").write_bytes(b"png")
    root = tmp_path / "kb"
    (root / "real").mkdir(parents=True)
    (root / "real" / "r.png").write_bytes(b"png")
    (root / ".git").mkdir()
    (root / ".git" / "x.png").write_bytes(b"png")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "away.png").symlink_to(outside / "p.png")
    (root / "inside.png").symlink_to(root / "real" / "r.png")
    (root / "a.md").write_text(
        "# A\n\n![o](away.png) ![i](inside.png) ![l](linked/p.png) ![g](.git/x.png) ![[away.png]]"
        " ![ok](real/r.png) ![[r.png]] [file](real/r.png)\n",
        encoding="utf-8",
    )
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb)
        assert [(m["target"], m["kind"]) for m in out["missingImages"]] == [
            ("away.png", "image"),
            ("inside.png", "image"),
            ("linked/p.png", "image"),
            (".git/x.png", "image"),
            ("away.png", "embed"),
        ]
    finally:
        kb.shutdown()


def test_markdown_fragments_follow_the_anchors_renderers_make(tmp_path: Path) -> None:
    """Decision 772. GitHub numbers repeated headings (`#install-1`), slugs the rendered text (no
    `_` of emphasis, no link destination), and VitePress, Pandoc, kramdown and Hugo docs give a
    heading its own id with `{#id}` (106 files of vue-docs-zh-cn do): each such link to a heading
    that exists was reported `fragmentFound: false`, so a broken-anchor check listed working links."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "b.md").write_text(
        "# Install\n\n## Install\n\n## Install\n\n## The _main_ function\n\n"
        "## Using [serde](https://serde.rs) `derive`\n\n## ref {#ref}\n\n## Custom {#my-id .wide}\n",
        "utf-8",
    )
    wanted = [
        ("install", True),
        ("install-1", True),
        ("install-2", True),
        ("install-3", False),  # only three of them
        ("the-main-function", True),
        ("the-_main_-function", True),  # the raw text's slug, as before
        ("using-serde-derive", True),
        ("ref", True),
        ("ref-ref", True),  # GitHub shows `{#ref}` as text
        ("my-id", True),
        ("wide", False),
        ("nope", False),
    ]
    (root / "a.md").write_text(" ".join(f"[{i}](b.md#{f})" for i, (f, _) in enumerate(wanted)) + "\n", "utf-8")
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb, path="a.md", direction="outgoing")
        assert [(ln["fragment"], ln["fragmentFound"]) for ln in out["links"]] == wanted
    finally:
        kb.shutdown()


def test_thousands_of_backlinks_and_orphans_come_in_pages(tmp_path: Path) -> None:
    """Decision 773: a hub page's backlinks and a large base's orphans stopped at 1000 with
    `truncated: true` and no way to read on (depth 1 and one direction cannot be narrowed).
    `offset` / `nextOffset` page through them: every link and orphan once, in the same order."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "hub.md").write_text("# Hub\n", "utf-8")
    for i in range(2500):
        (root / f"n{i:04}.md").write_text(f"# N{i}\n\nSee [the hub](hub.md) and [[gone {i % 3}]].\n", "utf-8")
    kb = client(root)
    try:
        kb.reindex()
        sources, offset, sizes = [], 0, []
        while offset is not None:
            page = links(kb, path="hub.md", direction="incoming", offset=offset)
            sizes.append(len(page["links"]))
            assert page["truncated"] is (page["nextOffset"] is not None)
            sources += [ln["source"] for ln in page["links"]]
            offset = page["nextOffset"]
        assert sizes == [1000, 1000, 500]
        assert sources == [f"n{i:04}.md" for i in range(2500)]

        orphans, broken, offset = [], [], 0
        while offset is not None:
            page = links(kb, offset=offset)
            orphans += page["orphans"]
            broken += [(m["source"], m["target"]) for m in page["missing"]]
            assert [(ln["source"], ln["target"]) for ln in page["links"]] == broken[
                len(broken) - len(page["missing"]) :
            ]
            offset = page["nextOffset"]
        assert orphans == [f"n{i:04}.md" for i in range(2500)]
        assert broken == [(f"n{i:04}.md", f"gone {i % 3}.md") for i in range(2500)]
        assert links(kb, offset=5000)["orphans"] == [] and links(kb, offset=5000)["nextOffset"] is None
    finally:
        kb.shutdown()


def test_html_pictures_and_plain_links_to_attachments_are_checked_like_images(tmp_path: Path) -> None:
    """Decision 820: a missing ``<img src>`` or ``[report](files/gone.pdf)`` was reported nowhere,
    though a move with updateLinks rewrites both (761). They are checked now by the move's rules:
    never in code, a fence or a comment; a URL, a link to a folder or to a file that is no
    attachment (a page the site generator makes) is left alone; no document link changes."""
    root = tmp_path / "kb"
    (root / "img").mkdir(parents=True)
    (root / "files" / "bundle.zip").mkdir(parents=True)  # a folder that looks like a file
    (root / "img" / "here.png").write_bytes(b"png")
    (root / "files" / "spec.pdf").write_bytes(b"%PDF")
    (root / "b.md").write_text("# B\n", encoding="utf-8")
    (root / "a.md").write_text(
        "# A\n\n"
        '<p align="center"><img src="img/here.png" width="300"><IMG SRC=img/gone.png></p>\n\n'
        "Text [b](b.md) <img src='img/a%20b.png' alt=x> [r](files/gone.pdf) [s](files/spec.pdf) [z](files/bundle.zip)"
        ' [p](page.html) [dir](files/) [u](https://example.org/x.pdf) `<img src="img/code.png">`\n\n'
        '<!-- <img src="img/comment.png"> [c](files/comment.pdf) -->\n\n'
        '```\n<img src="img/fence.png"> [f](files/fence.pdf)\n```\n\n'
        '<img src="https://example.org/logo.png"> <img src="../outside.png"> <img src="#top">\n\n'
        "See [the sheet][s] and ![shown](img/gone.pdf).\n\n[s]: files/sheet.xlsx\n",
        encoding="utf-8",
    )
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb)
        assert [(m["target"], m["kind"]) for m in out["missingImages"]] == [
            ("img/gone.png", "html"),
            ("img/a b.png", "html"),
            ("files/gone.pdf", "link"),
            ("files/sheet.xlsx", "link"),
        ]  # a Markdown image still counts only with a picture's extension (484)
        inline = out["missingImages"][1]["pointer"]
        assert inline is not None and inline.startswith("1.p")
        assert edges(links(kb, path="a.md", direction="outgoing")) == [("a.md", "b.md", "inline", True)]
        assert out["links"] == [] and out["orphans"] == ["a.md"]
    finally:
        kb.shutdown()


def test_an_html_a_href_is_a_document_link_or_an_attachment_as_a_plain_link_is(tmp_path: Path) -> None:
    """Decision 1032: ``<a href="x.md">`` and ``<a href="../guide/setup.md#intro">`` were in no
    kb_links answer while an ``<img src>`` beside them was checked (820). An ``<a>``'s ``href`` now
    reads as a plain link: to a ``.md`` a document link (incoming, missing, ``fragmentFound``), to
    an attachment a file reference (``missingImages``, kind ``href``); a URL, ``mailto:``, a bare
    ``#fragment``, a root-absolute path, a template, a page the site makes and a folder are nothing,
    and neither is an ``<a>`` in code or a comment."""
    root = tmp_path / "kb"
    (root / "guide").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "guide" / "setup.md").write_text("# Setup\n\n## Intro\n\nText.\n", encoding="utf-8")
    (root / "docs" / "page.md").write_text(
        "# Page\n\n"
        "<nav>\n<a href=\"../guide/setup.md#intro\">Intro</a> <a href='../guide/setup.md#nowhere'>x</a>\n"
        '<A HREF=gone.md>gone</A> <a href="files/gone.pdf">pdf</a></nav>\n\n'
        'Also <a href="https://example.org/a.md">u</a> <a href="mailto:me@x.md">m</a> <a href="#page">f</a>'
        ' <a href="/abs.md">r</a> <a href="{{site.url}}/t.md">t</a> <a href="page.html">h</a> <a href="files/">d</a>'
        ' `<a href="code.md">` <!-- <a href="comment.md"> -->.\n',
        encoding="utf-8",
    )
    (root / "docs" / "files").mkdir()
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb, path="docs/page.md", direction="outgoing")
        assert [(ln["target"], ln["kind"], ln["fragment"], ln["fragmentFound"], ln["text"]) for ln in out["links"]] == [
            ("guide/setup.md", "href", "intro", True, None),
            ("guide/setup.md", "href", "nowhere", False, None),
            ("docs/gone.md", "href", None, None, None),
        ]
        assert out["missing"] == [{"source": "docs/page.md", "target": "docs/gone.md", "pointer": None}]
        incoming = links(kb, path="guide/setup.md", direction="incoming")
        assert edges(incoming) == [("docs/page.md", "guide/setup.md", "href", True)] * 2
        whole = links(kb)
        assert [(m["target"], m["kind"]) for m in whole["missingImages"]] == [("docs/files/gone.pdf", "href")]
        assert whole["orphans"] == ["docs/page.md"]
    finally:
        kb.shutdown()


def test_each_srcset_candidate_is_checked_as_an_img_src_is(tmp_path: Path) -> None:
    """Decision 1156: ``<img srcset="a.png 1x, b@2x.png 2x">`` and ``<source srcset>`` in a
    ``<picture>`` named pictures kb_links never checked, while the ``src`` beside them was (820).
    Each candidate's URL is now a picture reference: a missing one is in ``missingImages`` (kind
    ``html``, its element's pointer when inline); a URL, a ``data:`` URL, a path leaving the root and
    a root-absolute one are not followed, and one in code is text."""
    root = tmp_path / "kb"
    (root / "img").mkdir(parents=True)
    for name in ("here.png", "here@2x.png"):
        (root / "img" / name).write_bytes(b"png")
    (root / "a.md").write_text(
        "# A\n\n<picture>\n"
        '<source srcset="img/dark.png 1x, img/here@2x.png 2x" media="(prefers-color-scheme: dark)">\n'
        '<img src="img/here.png" srcset="img/here.png 1x,img/gone@2x.png 2x, https://example.org/x.png 3x">\n'
        "</picture>\n\n"
        "Inline <img srcset='img/a%20b.png 480w, ../outside.png 800w, data:image/png;base64,AA== 900w'>"
        ' `<img srcset="img/code.png">`\n',
        encoding="utf-8",
    )
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb)
        assert [(m["target"], m["kind"]) for m in out["missingImages"]] == [
            ("img/dark.png", "html"),
            ("img/gone@2x.png", "html"),
            ("img/a b.png", "html"),
        ]
        pointers = [m["pointer"] for m in out["missingImages"]]
        assert pointers[0] is None and pointers[2] is not None and pointers[2].startswith("1.p")
        assert out["links"] == [] and out["orphans"] == ["a.md"]
    finally:
        kb.shutdown()


def test_the_files_audio_and_video_tags_name_are_checked_as_an_img_src_is(tmp_path: Path) -> None:
    """Decision 1186: ``<video src>``, ``<video poster>``, ``<audio src>``, ``<source src>``,
    ``<track src>``, ``<embed src>``, ``<object data>`` and an ``<iframe src>`` naming an attachment
    were reported nowhere when their file was gone. Each is now a file reference of kind ``html``
    (whatever its extension: ``.vtt`` is no attachment of a plain link), listed in ``missingImages``
    when missing, never a document link; URLs, ``data:``, paths leaving the root, an iframe's page
    (``demo.html``) and a tag in code are not followed."""
    root = tmp_path / "kb"
    (root / "media").mkdir(parents=True)
    for name in ("clip.mp4", "talk.mp3", "poster.png"):
        (root / "media" / name).write_bytes(b"data")
    (root / "a.md").write_text(
        "# A\n\n"
        '<video src="media/clip.mp4" poster="media/gone.png" controls>\n'
        '  <source src="media/clip.webm" type="video/webm">\n'
        '  <track src="media/en.vtt" kind="subtitles">\n'
        "</video>\n\n"
        "Listen: <audio src='media/talk.mp3'></audio> <audio src=\"media/lost%20talk.ogg\"></audio>"
        ' <embed src="media/r.pdf"> <object data="media/d.svg"></object> and <iframe src="media/slides.pdf"></iframe>'
        ' <iframe src="demo.html"></iframe> <video src="https://example.org/v.mp4" poster="../out.png"></video>'
        ' <audio src="data:audio/mp3;base64,AA"></audio> `<video src="media/code.mp4">`.\n\n'
        '<video src="media/clip.mp4" poster="media/poster.png"></video>\n',
        encoding="utf-8",
    )
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb)
        assert [(m["target"], m["kind"]) for m in out["missingImages"]] == [
            ("media/gone.png", "html"),
            ("media/clip.webm", "html"),
            ("media/en.vtt", "html"),
            ("media/lost talk.ogg", "html"),
            ("media/r.pdf", "html"),
            ("media/d.svg", "html"),
            ("media/slides.pdf", "html"),
        ]
        pointers = [m["pointer"] for m in out["missingImages"]]
        assert pointers[0] is None and pointers[3] is not None and pointers[3].startswith("1.p")
        assert out["links"] == [] and out["orphans"] == ["a.md"]
        assert links(kb, path="a.md")["links"] == []  # no document link
    finally:
        kb.shutdown()


def test_an_index_without_relative_autolinks_gains_them_in_place(tmp_path: Path) -> None:
    """Decision 901: link graph v3 adds ``<page.md>`` autolinks. An index of v2 is taken as it is;
    the next reindex re-reads the documents that may hold one (and only those), then writes the key."""
    from local_vector_search_mcp.index.manifest import LINK_GRAPH_KEY, LINK_GRAPH_VERSION

    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nSee <b.md> and <gone.md>.\n", encoding="utf-8")
    (root / "b.md").write_text("# B\n\n[a](a.md)\n", encoding="utf-8")
    kb = client(root)
    try:
        kb.reindex()
        store = kb.store
        assert store.read_manifest()[LINK_GRAPH_KEY] == LINK_GRAPH_VERSION
        assert edges(links(kb, path="a.md", direction="outgoing")) == [
            ("a.md", "b.md", "autolink", True),
            ("a.md", "gone.md", "autolink", False),
        ]
        # what the previous release left: no autolink rows, version 2
        with store._write() as c:
            c.execute("DELETE FROM links WHERE kind = 'autolink'")
        store.write_manifest({**store.read_manifest(), LINK_GRAPH_KEY: "2"})
        assert kb.indexer.compatibility() == []  # taken as it is, no rebuild
        result = kb.reindex()
        assert result["indexedFiles"] == 1 and result["skippedFiles"] == 1  # a.md re-read, b.md not
        assert store.read_manifest()[LINK_GRAPH_KEY] == LINK_GRAPH_VERSION
        assert [m["target"] for m in links(kb)["missing"]] == ["gone.md"]
        assert kb.reindex()["indexedFiles"] == 0  # upgraded once
    finally:
        kb.shutdown()


def test_an_index_without_html_picture_links_gains_them_in_place(tmp_path: Path) -> None:
    """Decision 820: an index written before link graph v2 holds no ``html`` link and no
    ``link_graph_version``. It is not sent to a forced rebuild: the next reindex re-reads the
    documents whose bytes hold ``<img`` (and only those), and writes the key once it has."""
    from local_vector_search_mcp.index.manifest import LINK_GRAPH_KEY, LINK_GRAPH_VERSION

    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text('# A\n\n<img src="gone.png">\n', encoding="utf-8")
    (root / "b.md").write_text("# B\n\n[a](a.md)\n", encoding="utf-8")
    kb = client(root)
    try:
        kb.reindex()
        store = kb.store
        assert store.read_manifest()[LINK_GRAPH_KEY] == LINK_GRAPH_VERSION
        # what the previous release left: no html link rows, no key
        with store._write() as c:
            c.execute("DELETE FROM links WHERE kind = 'html'")
        store.write_manifest({k: v for k, v in store.read_manifest().items() if k != LINK_GRAPH_KEY})
        assert [ln.kind for ln in store.links()] == ["inline"]
        assert kb.indexer.compatibility() == []  # taken as it is, no rebuild
        result = kb.reindex()
        assert result["indexedFiles"] == 1 and result["skippedFiles"] == 1  # a.md re-read, b.md not
        assert store.read_manifest()[LINK_GRAPH_KEY] == LINK_GRAPH_VERSION
        assert [(m["target"], m["kind"]) for m in links(kb)["missingImages"]] == [("gone.png", "html")]
        assert kb.reindex()["indexedFiles"] == 0  # upgraded once
    finally:
        kb.shutdown()


def test_a_backslash_separates_folders_and_a_fragment_is_reported_decoded(tmp_path: Path) -> None:
    """Decisions 910 and 911: a page written on Windows links ``sub\\page.md``; the index called it
    missing (only decision 904's look at the disk, through the path guard, found it, without its
    fragment), ``.\\page.md`` and ``..\\x.md`` were missing outright, and ``#My%20Heading`` was
    reported as written. A backslash now separates folders as the path guard reads it, and the
    fragment is reported as the anchor it spells."""
    root = tmp_path / "kb"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "page.md").write_text("# Page\n\n## My Heading\n\n[up](..\\index.md) [me](.\\page.md)\n")
    (root / "index.md").write_text(
        "# I\n\n[a](sub\\page.md#My%20Heading) [b](sub\\\\page.md) [c](sub\\page.md#nope) "
        "[out](..\\x.md) [abs](\\sub\\page.md) [unc](\\\\host\\share\\x.md) [drive](C:\\x.md) "
        "[[sub\\page#My Heading]] ![p](img\\pic.png)\n",
        encoding="utf-8",
    )
    kb = client(root)
    try:
        kb.reindex()
        out = links(kb, path="index.md", direction="outgoing")
        got = [
            (ln["target"], ln["kind"], ln["targetExists"], ln["fragment"], ln["fragmentFound"]) for ln in out["links"]
        ]
        assert got == [
            ("sub/page.md", "inline", True, "My Heading", True),
            ("sub/page.md", "inline", True, None, None),  # `\\` is an escaped backslash: still a separator
            ("sub/page.md", "inline", True, "nope", False),
            ("sub/page.md", "wikilink", True, "My Heading", True),
        ]
        sub = links(kb, path="sub/page.md", direction="outgoing")
        assert edges(sub) == [
            ("sub/page.md", "index.md", "inline", True),
            ("sub/page.md", "sub/page.md", "inline", True),
        ]
        whole = links(kb)
        assert [(m["target"], m["kind"]) for m in whole["missingImages"]] == [("img/pic.png", "image")]
        assert whole["orphans"] == []
    finally:
        kb.shutdown()


def test_a_name_several_notes_share_reaches_the_one_obsidian_opens(tmp_path: Path) -> None:
    """Decision 914: ``[[Dup]]`` with ``Dup.md`` in three folders was reported missing (in ``missing``,
    every copy an orphan) although Obsidian opens one of them and writes exactly such links ("shortest
    path when possible"). It now reaches the one in the linking note's folder, else the one nearest
    the root, then the first by path, with every copy in ``candidates``; a root path still wins
    (``[[Index]]``), and an alias two notes carry is still no guess."""
    root = tmp_path / "kb"
    write_files(
        root,
        {
            "Home.md": "# H\n\n[[Dup]] [[dup#Part]] [[c/Dup]] [[Index]] [[Twin]]\n",
            "a/Dup.md": "# A\n\n## Part\n",
            "b/c/Dup.md": "# BC\n",
            "z/Dup.md": "# Z\n",
            "b/c/Near.md": "# Near\n\n[[Dup]] ![[Dup]]\n",
            "Index.md": "# Root\n",
            "projects/Index.md": "# P\n\n[[Index]]\n",
            "x/One.md": "---\naliases: [Twin]\n---\n# One\n",
            "y/Two.md": "---\naliases: [Twin]\n---\n# Two\n",
        },
    )
    kb = client(root)
    try:
        kb.reindex()
        dups = ["a/Dup.md", "b/c/Dup.md", "z/Dup.md"]
        home = links(kb, path="Home.md", direction="outgoing")["links"]
        got = [(ln["target"], ln["targetExists"], ln["candidates"], ln["fragmentFound"]) for ln in home]
        assert got == [
            ("a/Dup.md", True, dups, None),  # a/ and z/ are as near the root: path order
            ("a/Dup.md", True, dups, True),
            ("b/c/Dup.md", True, None, None),  # a path tail only one note has
            ("Index.md", True, None, None),
            ("Twin.md", False, ["x/One.md", "y/Two.md"], None),
        ]
        near = links(kb, path="b/c/Near.md", direction="outgoing")["links"]
        assert [(ln["target"], ln["kind"]) for ln in near] == [("b/c/Dup.md", "wikilink"), ("b/c/Dup.md", "embed")]
        assert [ln["target"] for ln in links(kb, path="projects/Index.md", direction="outgoing")["links"]] == [
            "Index.md"
        ]
        whole = links(kb)
        assert [m["target"] for m in whole["missing"]] == ["Twin.md"]
        assert whole["orphans"] == ["Home.md", "b/c/Near.md", "projects/Index.md", "x/One.md", "y/Two.md", "z/Dup.md"]
    finally:
        kb.shutdown()


def test_a_bare_name_kept_out_of_the_index_in_two_folders_reaches_the_one_obsidian_opens(tmp_path: Path) -> None:
    """Decisions 904 and 914: a ``[[Plan]]`` whose notes the globs keep out of the index is looked up
    on disk; two ``Plan.md`` there left it missing, while the same two indexed reach the nearest."""
    root = tmp_path / "kb"
    for path in ("drafts/b/c/Plan.md", "drafts/a/Plan.md"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("# Plan\n", encoding="utf-8")
    (root / "a.md").write_text("# A\n\n[[Plan]] [[Gone]]\n", encoding="utf-8")
    kb = client(root, knowledge_base__exclude=["drafts/**"])
    try:
        kb.reindex()
        out = links(kb, path="a.md", direction="outgoing")
        assert edges(out) == [("a.md", "drafts/a/Plan.md", "wikilink", True), ("a.md", "Gone.md", "wikilink", False)]
    finally:
        kb.shutdown()


def test_a_file_that_could_not_be_indexed_gets_the_reason_kb_read_gives(tmp_path: Path) -> None:
    """Decision 921: kb_links said NOT_FOUND "neither an indexed document nor the target of an indexed
    link" of a Latin-1 or UTF-16 export, or a file over the size cap, that kb_list_files lists and
    kb_read refuses with UNSUPPORTED_FORMAT; the agent was sent looking for a file it can see."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "good.md").write_bytes(b"# Good\r\n\r\nSee [old](latin1.md).\r\n")
    (root / "latin1.md").write_bytes("# Caf\u00e9\n\nR\u00e9sum\u00e9.\n".encode("latin-1"))
    (root / "utf16.md").write_bytes("# Wide\n".encode("utf-16"))
    with (root / "huge.md").open("wb") as big:  # sparse: the size is what counts
        big.truncate(9 * 1024 * 1024)
    kb = client(root)
    try:
        kb.reindex()
        for rel, words in [("utf16.md", "not valid UTF-8"), ("huge.md", "MiB are not read")]:
            with pytest.raises(UnsupportedFormat) as refused:
                links(kb, path=rel)
            assert words in refused.value.message, rel
            assert refused.value.message == _read_refusal(kb, rel)
        # A file that is linked to is answered with its links, whatever it holds.
        linked = links(kb, path="latin1.md", direction="incoming")
        assert [(ln["source"], ln["target"]) for ln in linked["links"]] == [("good.md", "latin1.md")]
        with pytest.raises(NotFound):  # a name that is nowhere is still NOT_FOUND
            links(kb, path="nowhere.md")
        (root / "new.md").write_bytes(b"# New\n")  # readable, not indexed yet: still NOT_FOUND
        with pytest.raises(NotFound, match="neither an indexed document"):
            links(kb, path="new.md")
    finally:
        kb.shutdown()


def _read_refusal(kb: KbClient, rel: str) -> str:
    with pytest.raises(UnsupportedFormat) as refused:
        invoke(kb.ws, "kb_read", {"request": {"path": rel}})
    return refused.value.message


def test_a_site_generators_template_is_no_path(tmp_path: Path) -> None:
    # Jekyll docs write `{{site.url}}{{site.baseurl}}/images/a.png` (opensearch-docs: 755 of them),
    # which kb_links listed as missing images under made-up paths (decision 1024)
    root = write_files(
        tmp_path / "kb",
        {
            "about.md": (
                "# About\n\n![Logo]({{site.url}}{{site.baseurl}}/images/logo.png)\n\n"
                "See [install]({{site.url}}{{site.baseurl}}/install/) and [setup]({% link setup.md %}).\n\n"
                "![Here](img/gone.png) [Ghost](ghost.md)\n"
            ),
            "setup.md": "# Setup\n\nSee [about](about.md).\n",
        },
    )
    kb = client(root)
    kb.reindex()
    try:
        out = links(kb)
        assert [m["target"] for m in out["missingImages"]] == ["img/gone.png"]
        assert [m["target"] for m in out["missing"]] == ["ghost.md"]
        assert {ln["target"] for ln in links(kb, path="about.md", direction="outgoing")["links"]} == {"ghost.md"}
    finally:
        kb.shutdown()


def test_a_large_bases_check_fits_a_small_limit_with_the_totals_beside_it(tmp_path: Path) -> None:
    """Decision 1038: the whole-base check of opensearch-docs answered 265 KB (1,000 orphans at the
    fixed limit) with no way to take less. `limit` caps every list; `counts` keeps the totals."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "hub.md").write_text("# Hub\n", "utf-8")
    for i in range(30):
        (root / f"n{i:02}.md").write_text(f"# N{i}\n\n[hub](hub.md) [[gone {i}]] ![x](img/{i}.png)\n", "utf-8")
    kb = client(root)
    try:
        kb.reindex()
        first = links(kb, limit=10)
        assert (len(first["links"]), len(first["missing"]), len(first["orphans"]), len(first["missingImages"])) == (
            10, 10, 10, 10,
        )  # fmt: skip
        assert first["truncated"] is True and first["nextOffset"] == 10
        assert first["counts"] == {"links": 30, "orphans": 30, "missingImages": 30}
        orphans, offset = [], 0
        while offset is not None:
            page = links(kb, offset=offset, limit=12)
            assert page["counts"] == first["counts"]
            orphans += page["orphans"]
            offset = page["nextOffset"]
        assert orphans == [f"n{i:02}.md" for i in range(30)]
        hub = links(kb, path="hub.md", direction="incoming", limit=7)
        assert [ln["source"] for ln in hub["links"]] == [f"n{i:02}.md" for i in range(7)]
        assert hub["nextOffset"] == 7 and hub["counts"] is None
        for bad in (0, 1001):
            with pytest.raises(InvalidArgument):
                links(kb, limit=bad)
    finally:
        kb.shutdown()


def test_links_written_as_site_urls_are_counted_as_left_out(tmp_path: Path) -> None:
    """Decision 1038: on a Jekyll site every page links by site URL (`{{site.url}}/docs/...`,
    `/docs/...`), so kb_links answered empty `links` with nothing saying why and the agent took
    the pages for unlinked. `ignoredLinks` counts what was left out, per page or for the base;
    web URLs, `//host` and wikilinks written `/name` (a root-relative name) are not counted."""
    root = write_files(
        tmp_path / "kb",
        {
            "about.md": (
                "# About\n\nSee [install]({{site.url}}{{site.baseurl}}/install/), [setup](/docs/setup/),"
                " [ref](<{% link setup.md %}>) and ![logo](/images/logo.png).\n\n"
                '<a href="/docs/faq/">FAQ</a> [web](https://example.org/a.md) [cdn](//cdn.example.org/x.png)'
                " [[/setup]] [next](setup.md)\n"
            ),
            "setup.md": "# Setup\n\nBack to [about](/about/).\n",
            "plain.md": "# Plain\n\n[web](https://example.org/)\n",
        },
    )
    kb = client(root)
    kb.reindex()
    try:
        about = links(kb, path="about.md", direction="outgoing")
        assert {ln["target"] for ln in about["links"]} == {"setup.md"}
        assert about["ignoredLinks"] == 5
        assert links(kb, path="setup.md", direction="outgoing") | {"path": None} == {
            "path": None, "links": [], "missing": [], "truncated": False, "nextOffset": None, "ignoredLinks": 1,
            "orphans": None, "missingImages": None, "counts": None, "skippedFolders": None, "skipped": None,
        }  # fmt: skip
        assert links(kb, path="plain.md")["ignoredLinks"] == 0
        assert links(kb)["ignoredLinks"] == 6
    finally:
        kb.shutdown()
