"""Title match (decision 260): a query that is a document's title ranks that document first."""

from __future__ import annotations

import time
from pathlib import Path

from kb_fakes import indexed_kb

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.titles import (
    code_name,
    content_words,
    front_matter_titled,
    headed_hits,
    promote_headed,
    promote_titles,
    title_words,
)


def hit(cid: int, path: str, heading: str = "H") -> ChunkHit:
    return ChunkHit(cid, path, f"1.p{cid}~0~0", heading, "text", "s" * 64)


def test_title_words_ignore_case_punctuation_and_heading_ids() -> None:
    assert title_words("Point in Time") == ("point", "in", "time")
    assert title_words("处理 `v-model` 修饰符 {#handling-v-model-modifiers}") == ("处理", "v", "model", "修饰符")
    # MkDocs' attr_list writes the id with a colon and blanks, or beside a class (decision 1062)
    assert title_words("Dependencies {: #target-dependencies }") == ("dependencies",)
    assert title_words("Lock filename { #lock-filename .new }") == ("lock", "filename")


def test_a_long_heading_s_id_blocks_are_read_in_linear_time() -> None:
    """Review of decision 1062: in a block never closed, every ``#`` was read to the heading's end
    and back, so a 16 KB heading ``{#aaa...`` took 0.35 s (64 KB 5.6 s) each time a search's hits
    sat under it; the lookahead now checks the block closes first."""
    headings = ("Title {#" + "a" * 64_000, "Title {" + "#a" * 32_000, "{#a}" + " {#a" * 16_000)
    started = time.perf_counter()
    assert [title_words(h)[:2] for h in headings] == [("title", "a" * 64_000), ("title", "a"), ("a", "a")]
    assert time.perf_counter() - started < 1.0
    assert title_words("A {#x} B {: #y .c } C {.c} {#}") == ("a", "b", "c", "c")  # only blocks holding an id go


def test_titled_documents_go_first_in_the_order_of_their_best_lexical_hit() -> None:
    hits = [hit(1, "a.md"), hit(2, "b.md"), hit(3, "c.md"), hit(4, "b.md")]
    titled = [hit(9, "c.md"), hit(4, "b.md"), hit(7, "z.md")]
    assert [h.chunk_id for h in promote_titles(hits, titled, 10)] == [4, 9, 7, 1, 2, 3]
    assert [h.chunk_id for h in promote_titles(hits, titled, 2)] == [4, 9]
    assert promote_titles(hits, [], 3) == hits[:3]


def test_a_query_equal_to_a_title_finds_that_page_before_pages_that_mention_it_in_passing(tmp_path: Path) -> None:
    replication = (
        "# Segment replication\n\nCopies segment files between nodes instead of re-indexing documents on every "
        "replica, which saves CPU on the replicas at the cost of some network traffic and a little delay.\n"
    )
    # short chunks that say the words more densely
    settings = {
        f"settings{i}.md": f"# Settings {i}\n\n## Segment replication\n\nSegment replication: on.\n" for i in range(3)
    }
    svc = indexed_kb(tmp_path, {"replication.md": replication, **settings})
    top = svc.search(query="segment replication", mode="lexical", top_k=3)["results"]
    assert top[0]["path"] == "replication.md"
    # a question is not a title: plain BM25 order
    asked = svc.search(query="how is segment replication configured?", mode="lexical", top_k=3)["results"]
    assert asked[0]["path"].startswith("settings")
    # a title with another content word is not a title match either (a stop word more is: decision 1063)
    more = svc.search(query="segment replication settings", mode="lexical", top_k=3)["results"]
    assert more[0]["path"].startswith("settings")


def test_title_words_are_the_index_tokens() -> None:
    """Folded as FTS5 folds them (decision 370), so ``le cafe`` names ``Le Café``."""
    assert title_words("Le Café crème") == title_words("le cafe CREME") == ("le", "cafe", "creme")
    assert title_words("Reactions 🤖") == ("reactions", "🤖")


def test_the_best_chunk_of_each_section_whose_own_heading_is_the_query_goes_first() -> None:
    """Decision 665: the section's own heading (the last of its path), not an ancestor's; one
    chunk per section; the named sections keep their order, and so do the others."""
    hits = [
        hit(1, "a.md", "Lifetimes > In Method Definitions"),
        hit(2, "a.md", "Lifetimes > Lifetime Elision"),
        hit(3, "a.md", "Lifetimes > Lifetime Elision"),  # the same section's next chunk
        hit(4, "b.md", "Lifetime elision > Rules"),  # under it, not it
        hit(5, "c.md", "Appendix > Lifetime  Elision {#elision}"),
    ]
    assert [h.chunk_id for h in headed_hits(hits, "lifetime elision")] == [2, 5]
    promoted, named = promote_headed(hits, "Lifetime Elision")
    assert [h.chunk_id for h in promoted] == [2, 5, 1, 3, 4] and named
    assert promote_headed(hits, "method signatures") == (hits, False)  # not the words of any heading


def test_a_one_word_or_a_long_query_names_no_section() -> None:
    hits = [hit(1, "a.md", "Guide > Intro"), hit(2, "a.md", "Guide > Lifecycle"), hit(3, "b.md", "x " * 9)]
    assert headed_hits(hits, "lifecycle") == []
    assert headed_hits(hits, " ".join(["x"] * 9)) == []


def test_a_query_equal_to_a_section_heading_finds_that_section_first(tmp_path: Path) -> None:
    lifetimes = (
        "# Lifetimes\n\n## Method definitions\n\nLifetime elision rules apply here: the lifetime elision "
        "rules often make lifetime annotations unnecessary, since lifetime elision covers methods.\n\n"
        "## Lifetime elision\n\nThe compiler fills in the lifetimes of references in common patterns, so "
        "writing them by hand is not needed; three rules say how, and a lifetime it cannot infer is an error.\n"
    )
    svc = indexed_kb(tmp_path, {"lifetimes.md": lifetimes})
    top = svc.search(query="lifetime elision", mode="lexical", top_k=3)["results"]
    assert top[0]["headingPath"] == "Lifetimes > Lifetime elision"
    # a question names no heading: BM25 order, the section that says the words most first
    asked = svc.search(query="where does lifetime elision apply?", mode="lexical", top_k=3)["results"]
    assert asked[0]["headingPath"] == "Lifetimes > Method definitions"


def test_a_heading_with_the_query_words_inflected_or_between_stop_words_names_its_section() -> None:
    """Decision 1039: compared as content words (stop words out, English stems), the same ones in
    the same order, at least two; never by stem for CJK or code, and a heading with a content word
    more, fewer or turned round is not named."""
    hits = [
        hit(1, "deps.md", "Dependencies > Tarball URLs"),
        hit(2, "package-json.md", "dependencies > Git URLs as Dependencies {#git-urls}"),
        hit(3, "a.md", "Guide > Configuring the server"),
        hit(6, "d.md", "Types > Structs and Tuples"),  # the words turned round: another topic
        hit(4, "b.md", "Guide > Server configuration for production"),  # a word more
        hit(5, "c.md", "Guide > Git dependencies"),  # a word fewer
    ]
    assert headed_hits(hits, "git url dependencies") == [hits[1]]
    assert headed_hits(hits, "configure a server") == [hits[2]]
    assert headed_hits(hits, "server configuration") == []
    assert headed_hits(hits, "tuple structs") == []
    assert headed_hits(hits, "the server") == []  # one content word names no section
    assert content_words("Git URLs as Dependencies {#git-urls}") == content_words("git url dependencies")
    assert content_words("响应式 基础") is None  # CJK is named only exactly
    assert content_words("npm_lifecycle_event values") is None  # nor is code


def test_an_inflected_heading_finds_its_section_before_one_that_says_the_words_more_often(tmp_path: Path) -> None:
    package = (
        "# package.json\n\n## dependencies\n\nDependencies are given as a range, a tarball URL, a git URL "
        "or a local path; git url dependencies and tarball url dependencies are fetched at install time.\n\n"
        "## Git URLs as Dependencies\n\nA Git URL names a repository and, after a hash, the commit, tag or "
        "branch to install; npm clones it and runs its prepare script before packing it.\n"
    )
    svc = indexed_kb(tmp_path, {"package-json.md": package})
    top = svc.search(query="git url dependencies", mode="lexical", top_k=3)["results"]
    assert top[0]["headingPath"] == "package.json > Git URLs as Dependencies"


def test_a_one_word_identifier_names_the_section_headed_by_it() -> None:
    """Decision 1022: an identifier is the exception to 665's one-word rule, when the heading is
    written as code too (an API reference's entry), with or without backticks or a heading id."""
    hits = [
        hit(1, "guide.md", "Errors > Handling errors"),
        hit(2, "server.md", "Server > Methods > setErrorHandler {#set-error-handler}"),
        hit(3, "reply.md", "Reply > Methods > `.hijack()`"),
        hit(4, "cli.md", "Options > Verbose"),
    ]
    assert headed_hits(hits, "setErrorHandler") == [hits[1]]
    assert headed_hits(hits, "hijack()") == [hits[2]]
    assert headed_hits(hits, "--verbose") == []  # a plain-word heading is an aspect, not the flag's entry
    assert headed_hits(hits, "verbose") == []  # and a plain word still names no section


def test_code_name_is_the_parts_of_the_one_name_a_piece_of_code_is() -> None:
    assert code_name("undici.setGlobalDispatcher(dispatcher)") == ("undici", "setglobaldispatcher")
    assert code_name("`new Client(url[, options])`") == ("client",)
    assert code_name("Static method: `Response.redirect(url[, status])`") == ("response", "redirect")
    assert code_name("Rc::strong_count") == ("rc", "strong count")  # a part stays whole
    assert code_name("Foo#bar()") == ("foo", "bar") and code_name(".bar()") == ("bar",)
    assert code_name("Client") is None  # a plain word is no code
    assert code_name("Event: `'drain'`") is None and code_name("Foo.bar and baz()") is None
    assert code_name("Toast({content, icon})") == ("toast",)  # a signature's parentheses nest once
    assert code_name("setTimeout() and clearTimeout()") is None  # two names (review of 1049)


def test_an_identifier_names_the_entry_headed_by_it_qualified_or_called() -> None:
    """Decision 1049: API references head an entry by the name qualified and with its signature."""
    hits = [
        hit(1, "proxy.md", "ProxyAgent > Example - proxy request with the global dispatcher"),
        hit(2, "index.md", "undici > `undici.setGlobalDispatcher(dispatcher)`"),
        hit(3, "index.md", "undici > `undici.getGlobalDispatcher()`"),
        hit(4, "client.md", "Client > `new Client(url[, options])`"),
        hit(5, "pool.md", "Pool > `pool.close([callback])`"),
        hit(6, "client.md", "Client > `client.close([callback])`"),
        hit(7, "rc.md", "Rc > `Rc::strong_max_count`"),
    ]
    assert headed_hits(hits, "setGlobalDispatcher") == [hits[1]]
    assert headed_hits(hits, "undici.setGlobalDispatcher()") == [hits[1]]
    assert headed_hits(hits, "`undici.setGlobalDispatcher`") == [hits[1]]
    assert headed_hits(hits, "client.close") == [hits[5]]  # the qualifier must agree
    assert headed_hits(hits, "close()") == [hits[4], hits[5]]
    assert headed_hits(hits, "new Client()") == []  # two pieces: a phrase, not one name
    assert headed_hits(hits, "max_count") == []  # parts match whole, not their words' tail
    assert headed_hits(hits, "getGlobal") == []


def test_an_identifier_query_finds_its_reference_section_before_the_notes_that_call_it(tmp_path: Path) -> None:
    reference = (
        "# Server\n\n## setErrorHandler\n\nSets a function called whenever an error happens; the handler "
        "receives the error, the request and the reply, and may send any response it chooses.\n\n"
        "## listen\n\nStarts the server on the given port and host and resolves once it accepts connections.\n"
    )
    # a short note that calls the name more densely
    migration = "# Migration\n\n## Errors\n\nCall `setErrorHandler` once: a second `setErrorHandler` throws.\n"
    svc = indexed_kb(tmp_path, {"server.md": reference, "migration.md": migration})
    top = svc.search(query="setErrorHandler", mode="lexical", top_k=3)["results"]
    assert top[0]["headingPath"] == "Server > setErrorHandler"


def test_a_qualified_entry_goes_before_the_examples_that_call_the_name(tmp_path: Path) -> None:
    index = (
        "# undici\n\n## `undici.setGlobalDispatcher(dispatcher)`\n\n* `dispatcher` {Dispatcher}\n\nSets the "
        "global dispatcher used by the common API methods; it is shared among compatible modules, including "
        "the copy bundled with Node.js, and stored under a well-known symbol.\n"
    )
    mock = (
        "# MockAgent\n\n## `mockAgent.deactivate()`\n\nDisables mocking.\n\n```js\nimport { MockAgent, "
        "setGlobalDispatcher } from 'undici'\nsetGlobalDispatcher(mockAgent)\nmockAgent.deactivate()\n```\n"
    )
    svc = indexed_kb(tmp_path, {"index.md": index, "mock.md": mock})
    top = svc.search(query="setGlobalDispatcher", mode="lexical", top_k=3)["results"]
    assert top[0]["headingPath"] == "undici > `undici.setGlobalDispatcher(dispatcher)`"


def test_a_query_with_a_title_s_words_inflected_finds_that_page_first(tmp_path: Path) -> None:
    """Decision 1063: a page title is named by the query's content words in order, as 1039 names
    a section (``configure environments`` -> ``Configuring Environments``)."""
    filler = " ".join(["Each project declares its own dependencies, scripts and interpreter in its project file."] * 12)
    page = f"# Configuring Environments\n\n{filler}\n"
    note = (
        "# Hooks\n\nConfigure environments early: a hook may configure environments or configure environments lazily.\n"
    )
    svc = indexed_kb(tmp_path, {"environments.md": page, "plugins.md": note})
    top = svc.search(query="configure environments", mode="lexical", top_k=3)["results"]
    assert top[0]["path"] == "environments.md"
    # the words turned round name nothing (1039's order rule)
    assert svc.search(query="environments configure", mode="lexical", top_k=3)["results"][0]["path"] == "plugins.md"


LOCKFILE = """---
title: package-lock.json
section: 5
description: A manifestation of the manifest
---

### Description

The lockfile records the exact tree that was installed.

### Hidden Lockfiles

A copy of the lockfile is kept inside the modules folder.

### File Format

Its fields, one by one.
"""


def test_a_query_equal_to_a_front_matter_title_finds_that_page_from_its_start(tmp_path: Path) -> None:
    """Decision 1081: npm's pages are titled in their front matter and open with ``### Description``;
    pages that say ``package-lock.json`` more often ranked first."""
    mentions = {
        f"cmd{i}.md": f"# npm cmd{i}\n\n## Description\n\nReads package-lock.json; writes package-lock.json.\n"
        for i in range(3)
    }
    svc = indexed_kb(tmp_path, {"package-lock-json.md": LOCKFILE, **mentions})
    top = svc.search(query="package-lock.json", mode="lexical", top_k=3)["results"]
    assert (top[0]["path"], top[0]["headingPath"]) == ("package-lock-json.md", "Description")
    quoted = LOCKFILE.replace("title: package-lock.json", 'title: "package-lock.json"')
    (tmp_path / "kb" / "package-lock-json.md").write_text(quoted, "utf-8")
    svc.reindex()
    first = svc.search(query="package-lock.json", mode="lexical", top_k=1)["results"][0]
    assert first["path"] == "package-lock-json.md"


def test_a_page_under_one_heading_is_titled_by_it_not_by_its_front_matter(tmp_path: Path) -> None:
    """opensearch-docs: ``title: Point in Time`` in the front matter of the page headed ``Point in
    Time API`` is the navigation's label; the query names the page headed ``Point in Time``."""
    api = "---\ntitle: Point in Time\n---\n\n# Point in Time API\n\n## Create a PIT\n\nThe request.\n"
    svc = indexed_kb(tmp_path, {"api.md": api, "lock.md": LOCKFILE})
    assert front_matter_titled(svc.ws.store, "Point in Time", None) == []
    found = front_matter_titled(svc.ws.store, "package-lock.json", None)
    assert [(h.path, h.heading_path) for h in found] == [("lock.md", "Description")]
    assert front_matter_titled(svc.ws.store, "package-lock.json", None, {"lock.md"}) == []  # already named
    assert front_matter_titled(svc.ws.store, "package lock", None) == []  # the whole title, not a part
    plain = "---\ntitle: Release notes\n---\n\nEverything that changed in this release, notes first.\n"
    (tmp_path / "kb" / "notes.md").write_text(plain, "utf-8")  # a page without headings: its text
    svc.reindex()
    found = front_matter_titled(svc.ws.store, "release notes", None)
    assert [h.path for h in found] == ["notes.md"]
