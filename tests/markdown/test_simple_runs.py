"""The simple-run reader gives what markdown-it's inline parse gives (decision 1040)."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it.token import Token

from local_vector_search_mcp.markdown import links, parse_document
from local_vector_search_mcp.markdown.links import DocumentLinks, extract_links, graph_links
from local_vector_search_mcp.markdown.simple_runs import read_simple

# as markdown-it keys a document's definitions (normalizeReference: case-folded, spaces collapsed)
REFERENCES = {
    "REF": {"href": "r.md", "title": "", "map": [0, 1]},
    "A B": {"href": "a%20b.md", "title": "t", "map": [1, 2]},
}


def parsed(content: str, env: dict[str, Any]) -> tuple[list[tuple[Any, ...]], list[str]]:
    """The links and text tokens of markdown-it's own parse of ``content``, in the reader's terms
    (``links._inline_links`` reads the same tokens)."""
    children: list[Token] = []
    links._MD_INLINE.inline.parse(content, links._MD_INLINE, env, children)
    found: list[tuple[Any, ...]] = []
    for i, tok in enumerate(children):
        at, end = tok.meta.get("at", -1), tok.meta.get("end", -1)
        if tok.type == "link_open":
            close = next(j for j in range(i + 1, len(children)) if children[j].type == "link_close")
            text = links._plain_text(children[i + 1 : close])
            href = str(tok.attrGet("href") or "")
            if tok.markup == "autolink" or tok.info == "auto":
                found.append(("autolink", href, None, at, end, None))
            elif "label" in tok.meta:
                found.append(("reference", href, text, -1, -1, tok.meta["label"]))
            else:
                found.append(("inline", href, text, at, end, None))
        elif tok.type == "image":
            src = str(tok.attrGet("src") or "")
            label = tok.meta.get("label")
            found.append(("image", src, tok.content or None, -1 if label else at, -1 if label else end, label))
        elif tok.type == "wikilink":
            target = tok.meta["target"]
            kind = "embed" if tok.meta["embed"] else "wikilink"
            found.append((kind, target, tok.meta["alias"], tok.meta["at"], tok.meta["at"] + len(target), None))
    return found, [child.content for child in children if child.type == "text"]


def read(content: str, env: dict[str, Any]) -> tuple[list[tuple[Any, ...]], list[str]] | None:
    simple = read_simple(content, links._MD_INLINE, env)
    return None if simple is None else ([tuple(f) for f in simple.links], simple.texts)


def both_ways(text: str) -> tuple[DocumentLinks, list[links.Link], DocumentLinks, list[links.Link]]:
    doc = parse_document(text.encode("utf-8"))
    ours = extract_links(doc)
    with mock.patch.object(links, "read_simple", lambda *args: None):
        theirs = extract_links(doc)
    return ours, graph_links(doc, ours.links), theirs, graph_links(doc, theirs.links)


# What makes a run odd to markdown-it: brackets, parentheses, escapes, code, angle brackets,
# emphasis, entities, titles, blanks and line breaks, CJK, tags and reference labels.
PIECES = [
    "[", "]", "(", ")", "![", "[[", "]]", "|", "\\", "`", "``", "<", ">", "<b>", "</b>",
    "<!-- c -->", "<a.md>", "<https://x.org/a>", "<me@x.org>", "*", "**", "_", "&amp;", "&#35;", "&",
    '"t"', "'t'", "(t)", " ", "  ", "\n", "\t", "a", "b.md", "a.md#h", "x y", "中文", "#tag", "#", "^",
    "!", ":", "ref", "REF", "a b", "[ref]", "[]", "[^1]", "(x)", "toc",
]  # fmt: skip
piece = st.sampled_from(PIECES)
fragment = st.lists(piece, max_size=5).map("".join)
# well-formed links as often as odd ones: the reader's forms, their look-alikes and neighbours
link = st.builds(
    lambda bang, label, gap, dest, title, close: f"{bang}[{label}]({gap}{dest}{title}{gap}{close}",
    st.sampled_from(["", "!"]),
    fragment,
    st.sampled_from(["", " ", "\n", " \t"]),
    st.one_of(fragment, st.sampled_from(["b.md", "b(c).md", "<b c.md>", "a.md#h", "http://x.org/?a=1&b=2"])),
    st.sampled_from(["", ' "t"', " 't'", " (t)", ' "t', " t"]),
    st.sampled_from([")", "", "))"]),
)
run = st.lists(st.one_of(piece, link, fragment), max_size=12).map("".join)


@given(run, st.booleans())
def test_a_run_read_simply_is_what_markdown_it_reads(content: str, references: bool) -> None:
    env = {"references": REFERENCES if references else {}}
    simple = read(content, env)
    if simple is not None:
        assert simple == parsed(content, env)


@given(st.lists(st.one_of(run, st.sampled_from(["\n\n", "\n- ", "\n> ", "\n| a | b |\n|---|---|\n| "])), max_size=6))
def test_a_document_s_links_are_the_same_either_way(parts: list[str]) -> None:
    ours, our_graph, theirs, their_graph = both_ways("# T\n\n" + "".join(parts) + "\n\n[ref]: r.md\n[a  b]: <a b.md>\n")
    assert ours == theirs
    assert our_graph == their_graph


@pytest.mark.parametrize(
    ("content", "simple"),
    [
        ("see [a](b.md) and ![i](i.png) then [[W|w]] and ![[E.png]]", True),
        ("[a](b \"t\") and [a](b\n't') and [a](b (t))", True),
        ("[a]( <b c> )", False),  # an angle-bracketed destination: markdown-it's
        ("[a\\](b)", False),  # an escape
        ("`[a](b)` and [c](d)", True),  # a code span hides a link
        ("[`code` and text](c.md) and ``x ` y``", True),
        ("[a [b](c)](d)", True),  # no link in a link: the outer brackets are text, as the parser's rules say
        ("[![img](i.png)](link)", False),  # a picture in a link's label
        ("[x][ref], [ref][] and [ref] and [A  b]", True),  # through definitions
        ("[x][missing] and [^1] are text", True),
        ("<https://x.org> and <a.md>", False),  # autolinks: markdown-it's
        ("[a](b.md)<!-- ignore --> and <kbd>x</kbd>", True),  # inline HTML is a token of its own
        ("[[a|b]] [[a#h]] [[a#^id]] [[a\\|b]]", False),
        ("[[a|b]] [[a#h]] [[a#^id]]", True),
        ("[a](b(c).md) and [e](f&amp;g)", False),  # parentheses and entities in destinations
        ("[[1]](#note-1) and [[toc]]", False),
        ("中文 [链接](链接.md) #标签 and [t #in](x.md#frag)", True),
    ],
)
def test_the_reader_reads_the_common_forms_and_leaves_the_rest(content: str, simple: bool) -> None:
    env = {"references": REFERENCES}
    assert (read(content, env) is not None) is simple
    if simple:
        assert read(content, env) == parsed(content, env)
    document = f"# T\n\n{content}\n\n[ref]: r.md\n[a b]: <a b.md>\n"
    ours, our_graph, theirs, their_graph = both_ways(document)
    assert (ours, our_graph) == (theirs, their_graph)


def test_plain_runs_are_read_without_the_inline_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision 1040: markdown-it's inline parse of every run that may hold a link was most of the
    links table's cost in a cold index (x1.14-1.18 of the same pass with extraction off); the
    common runs are now read without it, to the same links."""
    text = (
        '# Guide #tag\n\nSee [the setup](setup.md#install "Setup") and ![a picture](pics/a.png),\n'
        "`code [not](a link)`, [[Note|alias]] and ![[embed.png]].\n\n"
        "- [`Vec<T>`](../std/vec.md)<!-- ignore --> and [the book][book]\n\n"
        "| a | [cell](cell.md) |\n|---|---|\n\n[book]: book.md\n"
    )
    doc = parse_document(text.encode())

    def no_inline_parse(*args: object) -> list[Token]:
        raise AssertionError("the inline parser was used")

    monkeypatch.setattr(links._MD_INLINE.inline, "parse", no_inline_parse)
    found = extract_links(doc)
    assert [(ln.kind, ln.destination, ln.text, doc.text[ln.start : ln.end]) for ln in found.links] == [
        ("inline", "setup.md#install", "the setup", "setup.md#install"),
        ("image", "pics/a.png", "a picture", "pics/a.png"),
        ("wikilink", "Note", "alias", "Note"),
        ("embed", "embed.png", None, "embed.png"),
        ("inline", "../std/vec.md", "Vec<T>", "../std/vec.md"),
        ("reference", "book.md", "the book", "book.md"),
        ("inline", "cell.md", "cell", "cell.md"),
    ]
    assert found.tags == ("tag",)
