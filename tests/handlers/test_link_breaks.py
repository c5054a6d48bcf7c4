"""kb_patch names the links its edit broke: fragments that named a heading or block id it renamed
or removed (decision 1016), on a real SQLite index; the picture tools (decision 1041) on PostgreSQL too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import KbClient, client

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.handlers import link_breaks

GUIDE = """# Guide

Intro paragraph. Jump to [install](#install) or [[#Configure]].

## Install

Run the installer. ^setup-step

## Configure

Set the options.

## Old section

Text.
"""

LINKS = """# Links

See [install](guide.md#install) and [[guide#Install]] and [[guide#^setup-step]].

A [configure link](guide.md#configure) and [[guide#Configure]].

Already broken: [nope](guide.md#nope), [[guide#Old sectoin]] and [[guide#^gone]].

Plain [guide](guide.md) link.
"""


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KbClient]:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "guide.md").write_text(GUIDE, encoding="utf-8")
    (root / "links.md").write_text(LINKS, encoding="utf-8")
    (root / "lonely.md").write_text("# Lonely\n\n## Alone\n\nNobody links here.\n", encoding="utf-8")
    c = client(root, knowledge_base__allow_writes=True)
    c.reindex()
    yield c
    c.shutdown()


def pointer(kb: KbClient, path: str, starts: str) -> str:
    read = invoke(kb.ws, "kb_read", {"request": {"path": path, "maxElements": 100}})
    return next(str(e["pointer"]) for e in read["elements"] if e["text"].startswith(starts))


def patch(kb: KbClient, path: str, kind: str, starts: str, markdown: str | None = None) -> dict[str, Any]:
    operation = {"kind": kind, "pointer": pointer(kb, path, starts)}
    if markdown is not None:
        operation["markdown"] = markdown
    result: dict[str, Any] = invoke(kb.ws, "kb_patch", {"request": {"path": path, "operations": [operation]}})
    return result


def broken(result: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(ln["source"], ln["kind"], ln["destination"], ln["fragment"]) for ln in result["brokenLinks"]]


def test_a_renamed_heading_names_every_link_that_reached_it(kb: KbClient) -> None:
    out = patch(kb, "guide.md", "replace_element", "## Install", "## Installation")
    assert broken(out) == [
        ("guide.md", "inline", "#install", "install"),  # the document's own link
        ("links.md", "inline", "guide.md#install", "install"),
        ("links.md", "wikilink", "guide#Install", "Install"),
    ]
    assert out["brokenLinkCount"] == 3 and out["sourceHash"] and out["previousPath"] is None
    first = out["brokenLinks"][1]
    assert first["text"] == "install" and first["pointer"] == pointer(kb, "links.md", "See [install]")
    assert "## Installation" in (kb.ws.root / "guide.md").read_text("utf-8")  # the edit stands


def test_a_source_written_and_not_indexed_yet_counts_as_its_file_holds_it(
    kb: KbClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another client removed the wikilink from links.md and moved its inline link down a paragraph
    # moments ago; the index still holds the old text (its sync is queued): the rename named the
    # removed link, by a pointer gone stale (found on PostgreSQL, whose sync takes longer)
    text = LINKS.replace(" and [[guide#Install]]", "").replace("See [install](guide.md#install)", "See it")
    (kb.ws.root / "links.md").write_text("New first paragraph.\n\n" + text + "\n[install](guide.md#install)\n", "utf-8")
    monkeypatch.setattr(kb.ws.indexing.sync, "pending", lambda: ["links.md"])
    out = patch(kb, "guide.md", "replace_element", "## Install", "## Installation")
    assert broken(out) == [
        ("guide.md", "inline", "#install", "install"),
        ("links.md", "inline", "guide.md#install", "install"),
    ]
    assert out["brokenLinks"][1]["pointer"] == pointer(kb, "links.md", "[install](guide.md#install)")


def test_a_dropped_block_id_names_the_links_to_it(kb: KbClient) -> None:
    out = patch(kb, "guide.md", "replace_element", "Run the installer.", "Run the installer.")
    assert broken(out) == [("links.md", "wikilink", "guide#^setup-step", "^setup-step")]
    assert out["brokenLinkCount"] == 1


def test_a_deleted_section_names_the_links_to_its_heading(kb: KbClient) -> None:
    out = patch(kb, "guide.md", "delete_section", "## Configure")
    assert broken(out) == [
        ("guide.md", "wikilink", "#Configure", "Configure"),
        ("links.md", "inline", "guide.md#configure", "configure"),
        ("links.md", "wikilink", "guide#Configure", "Configure"),
    ]


def test_a_link_rewritten_by_the_same_edit_is_not_broken(kb: KbClient) -> None:
    """The heading renamed and the document's own link to it updated in one patch: only the other
    document's links are left broken."""
    operations = [
        {"kind": "replace_element", "pointer": pointer(kb, "guide.md", "## Install"), "markdown": "## Setup"},
        {
            "kind": "replace_element",
            "pointer": pointer(kb, "guide.md", "Intro paragraph."),
            "markdown": "Intro paragraph. Jump to [install](#setup) or [[#Configure]].",
        },
    ]
    out = invoke(kb.ws, "kb_patch", {"request": {"path": "guide.md", "operations": operations}})
    assert [ln["source"] for ln in out["brokenLinks"]] == ["links.md", "links.md"]


def test_an_edit_that_keeps_every_heading_and_block_id_reads_no_link(
    kb: KbClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most edits, and every edit of a page nobody links to that keeps its headings, cost nothing:
    the graph is not even loaded."""

    def no_graph(ws: Any) -> None:
        raise AssertionError("the link graph was read")

    monkeypatch.setattr(link_breaks, "load_graph", no_graph)
    out = patch(kb, "guide.md", "replace_element", "Set the options.", "Set every option.")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0
    out = patch(kb, "guide.md", "insert_after", "Text.", "## Install\n\nA second install section.")
    assert out["brokenLinks"] == []  # a heading added, even a repeated one, removes no anchor
    out = patch(kb, "lonely.md", "replace_element", "Nobody links", "Still nobody.")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0


def test_a_link_broken_before_the_edit_is_not_listed(kb: KbClient) -> None:
    """`[[guide#Old sectoin]]` and `#nope` never found a heading: renaming `Old section` (which
    nothing reaches) breaks nothing, though the links were read to tell."""
    out = patch(kb, "guide.md", "replace_element", "## Old section", "## Older section")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0
    out = patch(kb, "lonely.md", "replace_element", "## Alone", "## Together")
    assert out["brokenLinks"] == []


def test_a_heading_linked_thousands_of_times_gives_the_first_hundred_and_the_count(kb: KbClient) -> None:
    lines = "".join(f"Link {i} to [install](guide.md#install).\n\n" for i in range(150))
    (kb.ws.root / "hub.md").write_text(f"# Hub\n\n{lines}", encoding="utf-8")
    kb.reindex()
    out = patch(kb, "guide.md", "delete_section", "## Install")
    # the section held the block id too: guide.md's own link and links.md's three are broken as well
    assert len(out["brokenLinks"]) == link_breaks.LIMIT and out["brokenLinkCount"] == 150 + 4
    assert [ln["source"] for ln in out["brokenLinks"]] == ["guide.md"] + ["hub.md"] * 99


def test_an_unchanged_edit_breaks_nothing(kb: KbClient) -> None:
    out = patch(kb, "guide.md", "replace_element", "## Install", "## Install")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0


def test_a_document_outside_the_index_is_not_checked(tmp_path: Path) -> None:
    """The index holds no link to a document it excludes: a removed heading gives null (not
    checked), never an error or a `[]` that would say nothing broke."""
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "links.md").write_text(LINKS, encoding="utf-8")
    kb = client(tmp_path, knowledge_base__allow_writes=True, knowledge_base__exclude=["guide.md"])
    try:
        kb.reindex()
        out = patch(kb, "guide.md", "delete_section", "## Install")
        assert out["brokenLinks"] is None and out["brokenLinkCount"] is None
    finally:
        kb.shutdown()


# ---- kb_delete and kb_move (decision 1023): links that reached the document and no longer do

SETUP = "# Setup\n\n## Install\n\nRun it.\n"

CITES = """# Cites

Inline [setup](guides/setup.md), with a heading [install](guides/setup.md#install), a [ref][s],
an autolink <guides/setup.md>, [[setup]], [[guides/setup|by path]] and ![[setup#Install]].

Already nowhere: [gone](gone.md).

[s]: guides/setup.md
"""


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[KbClient]:
    root = tmp_path / "vault"
    for rel, text in {
        "guides/setup.md": SETUP + "Back to [cites](../cites.md) and [self](setup.md).\n",
        "cites.md": CITES,
        "lonely.md": "# Lonely\n\nNobody links here.\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    c = client(root, knowledge_base__allow_writes=True)
    c.reindex()
    yield c
    c.shutdown()


def source_hash(kb: KbClient, path: str) -> str:
    return str(invoke(kb.ws, "kb_read", {"request": {"path": path}})["sourceHash"])


def delete(kb: KbClient, path: str) -> dict[str, Any]:
    request = {"path": path, "expectedSourceHash": source_hash(kb, path)}
    result: dict[str, Any] = invoke(kb.ws, "kb_delete", {"request": request})
    return result


def move(kb: KbClient, source: str, target: str, update_links: bool = False) -> dict[str, Any]:
    request = {
        "sourcePath": source,
        "targetPath": target,
        "expectedSourceHash": source_hash(kb, source),
        "updateLinks": update_links,
    }
    result: dict[str, Any] = invoke(kb.ws, "kb_move", {"request": request})
    return result


def written(result: dict[str, Any]) -> list[tuple[str, str, str, str | None]]:
    return [(ln["source"], ln["kind"], ln["destination"], ln["fragment"]) for ln in result["brokenLinks"]]


def test_a_delete_names_every_link_of_every_kind_that_reached_the_document(vault: KbClient) -> None:
    """Its own links go with it; a link that reached nothing before is not the delete's doing."""
    out = delete(vault, "guides/setup.md")
    assert written(out) == [
        ("cites.md", "inline", "guides/setup.md", None),
        ("cites.md", "inline", "guides/setup.md#install", "install"),
        ("cites.md", "reference", "guides/setup.md", None),
        ("cites.md", "autolink", "guides/setup.md", None),
        ("cites.md", "wikilink", "setup", None),
        ("cites.md", "wikilink", "guides/setup", None),
        ("cites.md", "embed", "setup#Install", "Install"),
    ]
    assert out["brokenLinkCount"] == 7 and out["sourceHash"] is None and out["previousPath"] is None
    first = out["brokenLinks"][0]
    assert first["text"] == "setup" and first["pointer"] == pointer(vault, "cites.md", "Inline [setup]")
    assert not (vault.ws.root / "guides/setup.md").exists()  # the delete stands


def test_a_wikilink_by_name_that_opens_another_note_after_a_delete_is_not_broken(vault: KbClient) -> None:
    """`[[setup]]` opened guides/setup.md; with it gone Obsidian opens manual/setup.md: it still works.
    The links by path, and the one by a path the other note does not have, are broken."""
    (vault.ws.root / "manual").mkdir()
    (vault.ws.root / "manual/setup.md").write_text(SETUP, encoding="utf-8")
    vault.reindex()
    out = delete(vault, "guides/setup.md")
    assert ("cites.md", "wikilink", "setup", None) not in written(out)
    assert ("cites.md", "embed", "setup#Install", "Install") not in written(out)
    assert ("cites.md", "wikilink", "guides/setup", None) in written(out)
    assert out["brokenLinkCount"] == 5


def test_a_move_breaks_the_links_by_path_and_not_a_wikilink_by_name_that_still_finds_it(vault: KbClient) -> None:
    out = move(vault, "guides/setup.md", "manual/setup.md")
    assert written(out) == [
        ("cites.md", "inline", "guides/setup.md", None),
        ("cites.md", "inline", "guides/setup.md#install", "install"),
        ("cites.md", "reference", "guides/setup.md", None),
        ("cites.md", "autolink", "guides/setup.md", None),
        ("cites.md", "wikilink", "guides/setup", None),
    ]  # [[setup]] and ![[setup#Install]] find the note by name in its new folder
    assert out["brokenLinkCount"] == 5 and out["previousPath"] == "guides/setup.md"


def test_a_move_that_makes_a_name_open_another_note_breaks_the_wikilink(vault: KbClient) -> None:
    """The note moved deeper than another of its name: Obsidian's `[[setup]]` now opens that one."""
    (vault.ws.root / "old").mkdir()
    (vault.ws.root / "old/setup.md").write_text(SETUP, encoding="utf-8")
    vault.reindex()
    out = move(vault, "guides/setup.md", "deep/er/setup.md")
    assert ("cites.md", "wikilink", "setup", None) in written(out)
    assert ("cites.md", "embed", "setup#Install", "Install") in written(out)


def test_a_move_with_update_links_breaks_none(vault: KbClient) -> None:
    out = move(vault, "guides/setup.md", "manual/setup.md", update_links=True)
    assert out["updatedPaths"] == ["cites.md"]
    assert "guides/setup" not in (vault.ws.root / "cites.md").read_text("utf-8")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0


def _forget_rewrite(monkeypatch: pytest.MonkeyPatch, page: str, rewritten: bytes, left: bytes) -> None:
    """Make a move's rewrite plan leave ``left`` in ``page`` where it wrote ``rewritten``."""
    from local_vector_search_mcp.handlers import documents

    real = documents.plan_move

    def forgetful(*args: Any, **kwargs: Any) -> Any:
        plan = real(*args, **kwargs)
        old, new = plan.edits[page]
        plan.edits[page] = (old, new.replace(rewritten, left))
        return plan

    monkeypatch.setattr(documents, "plan_move", forgetful)


def test_what_update_links_could_not_rewrite_is_listed(vault: KbClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite that left a link reaching the old path (here the plan is made to skip one) is named:
    the list says what the rewrite could not keep working."""
    _forget_rewrite(monkeypatch, "cites.md", b"[ref][s]", b"[ref](guides/setup.md)")
    out = move(vault, "guides/setup.md", "manual/setup.md", update_links=True)
    assert written(out) == [("cites.md", "inline", "guides/setup.md", None)]


def test_a_page_nobody_links_to_is_deleted_or_moved_without_resolving_a_link(
    vault: KbClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_resolver(*args: Any) -> None:
        raise AssertionError("links were resolved again")

    monkeypatch.setattr(link_breaks, "Resolver", no_resolver)
    out = move(vault, "lonely.md", "alone.md")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0
    assert vault.ws.indexing.sync.wait_idle(30)  # the move indexed: the graph holds alone.md
    out = delete(vault, "alone.md")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0


def test_a_document_the_index_does_not_hold_is_not_checked(
    vault: KbClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Created moments ago and not indexed yet: no link resolves to it in the index, which would read
    as "nothing broke". Null says the links were not checked."""
    with monkeypatch.context() as held:  # not indexed yet, however fast the sync (was a race)
        held.setattr(vault.ws.indexing, "schedule_sync", lambda paths: None)
        made = invoke(vault.ws, "kb_create", {"request": {"path": "new.md", "markdown": "# New\n"}})
    out = invoke(vault.ws, "kb_delete", {"request": {"path": "new.md", "expectedSourceHash": made["sourceHash"]}})
    assert out["brokenLinks"] is None and out["brokenLinkCount"] is None
    (tmp_path / "other").mkdir()
    (tmp_path / "other/guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "other/links.md").write_text(LINKS, encoding="utf-8")
    kb = client(tmp_path / "other", knowledge_base__allow_writes=True, knowledge_base__exclude=["guide.md"])
    try:
        kb.reindex()
        assert move(kb, "guide.md", "moved.md")["brokenLinks"] is None
    finally:
        kb.shutdown()


def test_an_html_a_href_breaks_as_a_markdown_link_does(vault: KbClient) -> None:
    """Decision 1032: an ``<a href>`` is a link of the graph, so a heading renamed under its fragment
    (1016, its own document's ``#top`` too), its page moved without updateLinks or deleted (1023)
    name it, as a Markdown link; moved with updateLinks, it is rewritten and nothing breaks."""
    (vault.ws.root / "html.md").write_text(
        '# Html\n\n<a href="guides/setup.md#install">install</a> <a href=own.md>own</a>\n', encoding="utf-8"
    )
    (vault.ws.root / "own.md").write_text("# Top\n\n<a href='#top'>up</a>\n", encoding="utf-8")
    vault.reindex()
    renamed = patch(vault, "guides/setup.md", "replace_element", "## Install", "## Installation")
    assert ("html.md", "href", "guides/setup.md#install", "install") in written(renamed)
    assert written(patch(vault, "own.md", "replace_element", "# Top", "# Summit")) == [
        ("own.md", "href", "#top", "top")
    ]
    assert vault.ws.indexing.sync.wait_idle(30)
    kept = move(vault, "guides/setup.md", "manual/setup.md", update_links=True)
    assert kept["brokenLinks"] == [] and 'href="manual/setup.md#install"' in (vault.ws.root / "html.md").read_text()
    assert vault.ws.indexing.sync.wait_idle(30)
    moved = move(vault, "manual/setup.md", "guides/setup.md")
    assert ("html.md", "href", "manual/setup.md#install", "install") in written(moved)
    assert vault.ws.indexing.sync.wait_idle(30)
    assert written(delete(vault, "own.md")) == [("html.md", "href", "own.md", None)]


# ---- decision 1037: an alias taken away, and a moved document's own links


ALIASED = """---
title: Setup
aliases: [Old name, Install guide]
---
# Setup

## Install

Run it. See [[Install guide]].
"""

ALIASED_TOML = '+++\ntitle = "Setup"\naliases = ["Old name"]\n+++\n\n# Setup\n\n## Install\n\nRun it.\n'

BY_ALIAS = """# By alias

[[Old name]], [[Old name#Install]] and [[Install guide]]; by name [[setup]], by path [setup](guides/setup.md).
"""


def frontmatter(kb: KbClient, path: str, markdown: str) -> dict[str, Any]:
    operation = {"kind": "replace_element", "pointer": pointer(kb, path, markdown[:3]), "markdown": markdown}
    result: dict[str, Any] = invoke(kb.ws, "kb_patch", {"request": {"path": path, "operations": [operation]}})
    return result


def test_an_alias_taken_away_breaks_the_wikilinks_that_reached_the_page_by_it(vault: KbClient) -> None:
    """Renamed `Old name` to `New name` and dropped `Install guide`: every wikilink by them is listed,
    the page's own `[[Install guide]]` too; those by file name or path still reach it."""
    (vault.ws.root / "guides/setup.md").write_text(ALIASED, encoding="utf-8")
    (vault.ws.root / "by-alias.md").write_text(BY_ALIAS, encoding="utf-8")
    vault.reindex()
    out = frontmatter(vault, "guides/setup.md", "---\ntitle: Setup\naliases: [New name]\n---")
    assert written(out) == [
        ("by-alias.md", "wikilink", "Old name", None),
        ("by-alias.md", "wikilink", "Old name#Install", "Install"),
        ("by-alias.md", "wikilink", "Install guide", None),
        ("guides/setup.md", "wikilink", "Install guide", None),
    ]
    assert out["brokenLinkCount"] == 4
    assert out["brokenLinks"][0]["pointer"] == pointer(vault, "by-alias.md", "[[Old name]]")


def test_an_alias_taken_away_from_toml_front_matter_breaks_its_wikilinks(vault: KbClient) -> None:
    """Hugo's `+++` front matter carries aliases as YAML's does (decision 1026); `[[Install guide]]`,
    which no note carried, reached nothing before and is not listed."""
    (vault.ws.root / "guides/setup.md").write_text(ALIASED_TOML, encoding="utf-8")
    (vault.ws.root / "by-alias.md").write_text(BY_ALIAS, encoding="utf-8")
    vault.reindex()
    out = frontmatter(vault, "guides/setup.md", '+++\ntitle = "Setup"\n+++')
    assert written(out) == [
        ("by-alias.md", "wikilink", "Old name", None),
        ("by-alias.md", "wikilink", "Old name#Install", "Install"),
    ]


def test_an_edit_that_keeps_the_aliases_reads_no_link(vault: KbClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """The body changed, or the front matter without taking an alias away or adding one (another field
    changed, the same alias respelled in another case): the graph is not even loaded."""
    (vault.ws.root / "guides/setup.md").write_text(ALIASED, encoding="utf-8")
    (vault.ws.root / "by-alias.md").write_text(BY_ALIAS, encoding="utf-8")
    vault.reindex()

    def no_graph(ws: Any) -> None:
        raise AssertionError("the link graph was read")

    monkeypatch.setattr(link_breaks, "load_graph", no_graph)
    out = patch(vault, "guides/setup.md", "replace_element", "Run it.", "Run it twice. See [[Install guide]].")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0
    out = frontmatter(vault, "guides/setup.md", "---\ntitle: Set up\naliases: [old NAME, Install guide]\n---")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0
    # an alias added may take wikilinks from another note carrying it (decision 1200): read then
    # (the failed read is logged, and the links reported as not checked)
    out = frontmatter(vault, "guides/setup.md", "---\ntitle: Set up\naliases: [old NAME, Install guide, More]\n---")
    assert out["brokenLinks"] is None


def test_a_move_to_another_folder_breaks_the_documents_own_relative_links(vault: KbClient) -> None:
    """guides/setup.md's `../cites.md` reached cites.md; from deep/er/ it reaches deep/cites.md, no
    document: listed, with the new path as its source. Its link to itself by path finds it in its new
    folder and is not listed, nor is a link that reached nothing before, nor a picture (brokenLinks
    lists document links)."""
    text = SETUP + "Back to [cites](../cites.md), [self](setup.md), ![pic](../pic.png) and [none](none.md).\n"
    (vault.ws.root / "guides/setup.md").write_text(text, encoding="utf-8")
    vault.reindex()
    out = move(vault, "guides/setup.md", "deep/er/setup.md")
    assert ("deep/er/setup.md", "inline", "../cites.md", None) in written(out)
    assert [ln for ln in written(out) if ln[0] == "deep/er/setup.md"] == [
        ("deep/er/setup.md", "inline", "../cites.md", None)
    ]
    own = next(ln for ln in out["brokenLinks"] if ln["source"] == "deep/er/setup.md")
    assert own["pointer"] == pointer(vault, "deep/er/setup.md", "Run it.")


def test_a_move_in_the_same_folder_breaks_none_of_the_documents_own_links(vault: KbClient) -> None:
    out = move(vault, "guides/setup.md", "guides/install.md")
    assert [ln for ln in written(out) if ln[0] == "guides/install.md"] == []
    assert vault.ws.indexing.sync.wait_idle(30)
    moved = move(vault, "guides/install.md", "manual/setup.md")  # another folder at the same depth
    assert [ln for ln in written(moved) if ln[0] == "manual/setup.md"] == []


# ---- decision 1200: a note arriving under a name takes the wikilinks by it that opened another


def create(kb: KbClient, path: str, markdown: str) -> dict[str, Any]:
    result: dict[str, Any] = invoke(kb.ws, "kb_create", {"request": {"path": path, "markdown": markdown}})
    return result


def test_a_created_note_names_the_wikilinks_its_name_or_alias_takes_from_another_note(vault: KbClient) -> None:
    """`setup.md` created beside cites.md: Obsidian's `[[setup]]` and `![[setup#Install]]` there now
    open it (the linking note's folder first), not guides/setup.md; the link by path still does. A
    note aliased `Old name`, which guides/setup.md carries too, leaves `[[Old name]]` ambiguous: it
    opens none. A name nobody links by takes nothing."""
    (vault.ws.root / "guides/setup.md").write_text(ALIASED, encoding="utf-8")
    (vault.ws.root / "by-alias.md").write_text(BY_ALIAS, encoding="utf-8")
    vault.reindex()
    out = create(vault, "setup.md", "# Another setup\n")
    assert written(out) == [
        ("by-alias.md", "wikilink", "setup", None),
        ("cites.md", "wikilink", "setup", None),
        ("cites.md", "embed", "setup#Install", "Install"),
    ]
    assert out["brokenLinkCount"] == 3 and out["brokenLinks"][1]["pointer"] == pointer(vault, "cites.md", "Inline")
    out = create(vault, "notes/renamed.md", "---\naliases: [Old name, Fresh]\n---\n# Renamed\n")
    assert written(out) == [
        ("by-alias.md", "wikilink", "Old name", None),
        ("by-alias.md", "wikilink", "Old name#Install", "Install"),
    ]
    assert create(vault, "notes/fresh.md", "# Nobody links here\n")["brokenLinks"] == []


def test_a_note_moved_under_a_name_takes_its_wikilinks_from_another_note(vault: KbClient) -> None:
    """lonely.md renamed `setup.md` beside cites.md: cites.md's `[[setup]]` now opens it. Without
    `updateLinks` that is listed; with it the link is rewritten to the note it opened, and kept."""
    out = move(vault, "lonely.md", "setup.md")
    assert written(out) == [("cites.md", "wikilink", "setup", None), ("cites.md", "embed", "setup#Install", "Install")]
    assert vault.ws.indexing.sync.wait_idle(30)
    move(vault, "setup.md", "lonely.md")
    assert vault.ws.indexing.sync.wait_idle(30)
    kept = move(vault, "lonely.md", "setup.md", update_links=True)
    assert kept["brokenLinks"] == [] and "[[guides/setup]]" in (vault.ws.root / "cites.md").read_text("utf-8")


def test_an_alias_added_that_another_note_carries_names_the_wikilinks_it_leaves_ambiguous(vault: KbClient) -> None:
    (vault.ws.root / "guides/setup.md").write_text(ALIASED, encoding="utf-8")
    (vault.ws.root / "by-alias.md").write_text(BY_ALIAS, encoding="utf-8")
    (vault.ws.root / "lonely.md").write_text("---\ntitle: Lonely\n---\n# Lonely\n", encoding="utf-8")
    vault.reindex()
    out = frontmatter(vault, "lonely.md", "---\ntitle: Lonely\naliases: [install GUIDE]\n---")
    assert written(out) == [
        ("by-alias.md", "wikilink", "Install guide", None),
        ("guides/setup.md", "wikilink", "Install guide", None),
    ]


# ---- decision 1041: kb_delete_image and kb_move_image, the links to a picture, on both engines

PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)

EMBEDS = """# Embeds

An image ![chart](../img/pic.png) and a [full size](../img/pic.png) link.
"""

MORE_EMBEDS = """# More

By name ![[pic.png]], as HTML <img src="img/pic.png" alt="chart">, by reference ![chart][p] and [the file][p].

Already nowhere: ![gone](img/gone.png).

[p]: img/pic.png
"""


@pytest.fixture
def gallery(tmp_path: Path, engine_storage: dict[str, Any]) -> Iterator[KbClient]:
    """Pages linking to img/pic.png in every way, indexed on each engine in turn."""
    root = tmp_path / "gallery"
    for rel, text in {
        "pages/embeds.md": EMBEDS,
        "more.md": MORE_EMBEDS,
        "anchor.md": '# Anchor\n\n<a href="img/pic.png">open it</a> and ![[img/pic.png|200]].\n',
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "img").mkdir()
    (root / "img/pic.png").write_bytes(PNG)
    (root / "img/lonely.png").write_bytes(PNG)
    c = client(root, knowledge_base__allow_writes=True, **engine_storage)
    c.reindex()
    yield c
    c.shutdown()


def delete_image(kb: KbClient, path: str) -> dict[str, Any]:
    result: dict[str, Any] = invoke(kb.ws, "kb_delete_image", {"path": path})
    return result


def move_image(kb: KbClient, source: str, target: str, update_links: bool = False) -> dict[str, Any]:
    request = {"sourcePath": source, "targetPath": target, "updateLinks": update_links}
    result: dict[str, Any] = invoke(kb.ws, "kb_move_image", {"request": request})
    return result


EVERY_LINK_TO_PIC = [
    ("anchor.md", "href", "img/pic.png", None),
    ("anchor.md", "embed", "img/pic.png", None),
    ("more.md", "embed", "pic.png", None),
    ("more.md", "html", "img/pic.png", None),
    ("more.md", "image", "img/pic.png", None),
    ("more.md", "reference", "img/pic.png", None),
    ("pages/embeds.md", "image", "../img/pic.png", None),
    ("pages/embeds.md", "inline", "../img/pic.png", None),
]


def test_a_deleted_picture_names_every_link_of_every_kind_that_reached_it(gallery: KbClient) -> None:
    """Markdown image, plain link, reference, `<img src>`, `<a href>`, embeds by path and by name:
    each is one entry, with the pointer to fix it by; a link that reached nothing before is not listed."""
    out = delete_image(gallery, "img/pic.png")
    assert written(out) == EVERY_LINK_TO_PIC
    assert out["brokenLinkCount"] == 8 and out["deleted"] is True
    first = out["brokenLinks"][-2]
    assert first["text"] == "chart" and first["pointer"] == pointer(gallery, "pages/embeds.md", "An image")
    assert not (gallery.ws.root / "img/pic.png").exists()  # the delete stands


def test_a_picture_nobody_links_to_breaks_nothing(gallery: KbClient) -> None:
    moved = move_image(gallery, "img/lonely.png", "media/alone.png")
    assert moved["brokenLinks"] == [] and moved["brokenLinkCount"] == 0
    out = delete_image(gallery, "media/alone.png")
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0


def test_an_embed_by_name_that_opens_another_picture_after_a_delete_is_not_broken(gallery: KbClient) -> None:
    """`![[pic.png]]` opened img/pic.png; with it gone Obsidian opens other/pic.png: it still shows one."""
    (gallery.ws.root / "other").mkdir()
    (gallery.ws.root / "other/pic.png").write_bytes(PNG)
    out = delete_image(gallery, "img/pic.png")
    assert written(out) == [ln for ln in EVERY_LINK_TO_PIC if ln[2] != "pic.png"]


def test_a_picture_moved_with_update_links_breaks_none(gallery: KbClient) -> None:
    out = move_image(gallery, "img/pic.png", "media/photo.png", update_links=True)
    assert out["updatedPaths"] == ["anchor.md", "more.md", "pages/embeds.md"]
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0


def test_a_picture_moved_without_update_links_names_the_links_by_its_old_path(gallery: KbClient) -> None:
    """Renamed, the picture is found by no link: the embed by name too."""
    out = move_image(gallery, "img/pic.png", "media/photo.png")
    assert written(out) == EVERY_LINK_TO_PIC and out["brokenLinkCount"] == 8
    assert out["previousPath"] == "img/pic.png" and (gallery.ws.root / "media/photo.png").is_file()


def test_an_embed_by_name_that_still_finds_a_moved_picture_is_not_broken(gallery: KbClient) -> None:
    out = move_image(gallery, "img/pic.png", "media/pic.png")
    assert written(out) == [ln for ln in EVERY_LINK_TO_PIC if ln[2] != "pic.png"]


def test_a_move_that_makes_a_name_open_another_picture_breaks_the_embed(gallery: KbClient) -> None:
    """Moved deeper than another picture of its name, `![[pic.png]]` in a root page now opens that one."""
    (gallery.ws.root / "a/b").mkdir(parents=True)
    (gallery.ws.root / "a/b/pic.png").write_bytes(PNG)
    out = move_image(gallery, "img/pic.png", "x/y/z/pic.png")
    assert written(out) == EVERY_LINK_TO_PIC


def test_what_update_links_could_not_rewrite_in_a_picture_link_is_listed(
    gallery: KbClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rewritten pages' links are read from their new bytes (the index still holds the old)."""
    _forget_rewrite(monkeypatch, "more.md", b'<img src="media/pic.png"', b'<img src="img/pic.png"')
    out = move_image(gallery, "img/pic.png", "media/pic.png", update_links=True)
    assert written(out) == [("more.md", "html", "img/pic.png", None)]


def test_a_picture_linked_hundreds_of_times_gives_the_first_hundred_and_the_count(gallery: KbClient) -> None:
    lines = "".join(f"Figure {i}: ![f{i}](img/pic.png)\n\n" for i in range(150))
    (gallery.ws.root / "figures.md").write_text(f"# Figures\n\n{lines}", encoding="utf-8")
    gallery.reindex()
    out = delete_image(gallery, "img/pic.png")
    assert len(out["brokenLinks"]) == link_breaks.LIMIT and out["brokenLinkCount"] == 150 + 8
    assert [ln["source"] for ln in out["brokenLinks"]] == ["anchor.md"] * 2 + ["figures.md"] * 98


def test_picture_links_are_not_checked_without_an_index(tmp_path: Path, engine_storage: dict[str, Any]) -> None:
    """No index yet (on PostgreSQL, an empty schema): null says the links were not checked; the
    write is done all the same."""
    (tmp_path / "img").mkdir()
    (tmp_path / "img/pic.png").write_bytes(PNG)
    (tmp_path / "img/two.png").write_bytes(PNG)
    (tmp_path / "page.md").write_text("![x](img/pic.png) ![y](img/two.png)\n", encoding="utf-8")
    kb = client(tmp_path, knowledge_base__allow_writes=True, **engine_storage)
    try:
        out = delete_image(kb, "img/pic.png")
        assert out["brokenLinks"] is None and out["brokenLinkCount"] is None
        moved = move_image(kb, "img/two.png", "img/three.png")
        assert moved["brokenLinks"] is None and (tmp_path / "img/three.png").is_file()
    finally:
        kb.shutdown()


SIZES = (
    '# Sizes\n\n<picture>\n<source srcset="img/pic.png 1x, img/lonely.png 2x">\n'
    "<img srcset='img/lonely.png 480w,img/pic.png 800w' src=\"img/lonely.png\">\n</picture>\n"
)


def test_each_srcset_candidate_naming_a_picture_is_rewritten_or_broken_as_an_img_src(gallery: KbClient) -> None:
    """Decision 1156: a ``srcset`` candidate naming the picture is a link to it, as ``<img src>`` is:
    moved with updateLinks its URL alone is rewritten and the page counted in ``updatedPaths``;
    moved without, or deleted, each candidate naming it is a broken link of kind ``html``."""
    (gallery.ws.root / "sizes.md").write_text(SIZES, encoding="utf-8")
    gallery.reindex()
    out = move_image(gallery, "img/pic.png", "media/photo.png", update_links=True)
    assert out["updatedPaths"] == ["anchor.md", "more.md", "pages/embeds.md", "sizes.md"]
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0
    assert (gallery.ws.root / "sizes.md").read_text(encoding="utf-8") == SIZES.replace(
        '"img/pic.png 1x,', '"media/photo.png 1x,'
    ).replace(",img/pic.png 800w'", ",media/photo.png 800w'")
    assert gallery.ws.indexing.sync.wait_idle(30)
    moved = move_image(gallery, "media/photo.png", "img/pic.png")
    assert [ln for ln in written(moved) if ln[0] == "sizes.md"] == [("sizes.md", "html", "media/photo.png", None)] * 2
    assert moved["brokenLinkCount"] == 8 + 2


def test_a_video_poster_naming_a_picture_is_rewritten_or_broken_as_an_img_src(gallery: KbClient) -> None:
    """Decision 1186: the ``poster`` of a ``<video>`` (and an ``<object data>``) naming the picture is
    a link to it, as ``<img src>`` is: moved with updateLinks its value alone is rewritten and the
    page counted; moved without, or deleted, each is a broken link of kind ``html``."""
    page = (
        '# Clip\n\n<video src="clip.mp4" poster="img/pic.png" controls></video>\n\n<object data=img/pic.png></object>\n'
    )
    (gallery.ws.root / "clip.md").write_text(page, encoding="utf-8")
    gallery.reindex()
    out = move_image(gallery, "img/pic.png", "media/photo.png", update_links=True)
    assert out["updatedPaths"] == ["anchor.md", "clip.md", "more.md", "pages/embeds.md"]
    assert out["brokenLinks"] == [] and out["brokenLinkCount"] == 0
    assert (gallery.ws.root / "clip.md").read_text(encoding="utf-8") == page.replace("img/pic.png", "media/photo.png")
    assert gallery.ws.indexing.sync.wait_idle(30)
    moved = move_image(gallery, "media/photo.png", "img/pic.png")
    assert [ln for ln in written(moved) if ln[0] == "clip.md"] == [("clip.md", "html", "media/photo.png", None)] * 2
    assert moved["brokenLinkCount"] == 8 + 2
    (gallery.ws.root / "clip.md").write_text(page, encoding="utf-8")
    gallery.reindex()
    gone = delete_image(gallery, "img/pic.png")
    assert [ln for ln in written(gone) if ln[0] == "clip.md"] == [("clip.md", "html", "img/pic.png", None)] * 2
