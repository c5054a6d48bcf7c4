"""Link extraction from the element model's parse: forms, spans, what hides a link."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it.token import Token

from local_vector_search_mcp.markdown import links, parse_document, parse_text
from local_vector_search_mcp.markdown.document import parse_edited
from local_vector_search_mcp.markdown.links import extract_links, rewrite


def spans(text: str) -> list[tuple[str, str, str]]:
    doc = parse_document(text.encode("utf-8"))
    return [(ln.kind, ln.destination, doc.text[ln.start : ln.end]) for ln in extract_links(doc).links]


def test_every_form_is_found_with_its_exact_span() -> None:
    text = (
        "# T\n\n[a](a.md) ![i](i.png) [[W]] ![[E.png]] [[F#^b|x]] [r][R] [s]\n\n"
        "| c | d |\n|---|---|\n| [t](t.md) | [[U]] |\n\n"
        "> quoted [q](q.md)\n\n"
        "[R]: <r dir/r.md> 'title'\n[s]: s%20s.md\n"
    )
    assert spans(text) == [
        ("inline", "a.md", "a.md"),
        ("image", "i.png", "i.png"),
        ("wikilink", "W", "W"),
        ("embed", "E.png", "E.png"),
        ("wikilink", "F#^b", "F#^b"),
        ("reference", "r dir/r.md", "r dir/r.md"),  # the definition's span and text, as written (451)
        ("reference", "s%20s.md", "s%20s.md"),
        ("inline", "t.md", "t.md"),
        ("wikilink", "U", "U"),
        ("inline", "q.md", "q.md"),
    ]


def test_an_angle_bracketed_relative_md_path_is_an_autolink() -> None:
    """Decision 901. CommonMark autolinks need a scheme, so "autolinks to relative `.md` targets"
    (notes section 13) matched nothing: ``<guide.md>`` was listed nowhere. A ``<path.md>`` (an
    optional ``#fragment`` or ``?query``, no space, no scheme, not root-absolute) is now an
    autolink; the scheme forms keep CommonMark's reading and code still hides both."""
    text = (
        "See <guide.md>, <sub/a%20b.MD#part> and <../up.md?x=1>; not <b.mdx>, <a b.md>, </abs.md>, <C:x.md>\n"
        "or `<code.md>`; <https://example.org/w.md> and <me@example.md> keep CommonMark's reading.\n"
    )
    assert spans(text) == [
        ("autolink", "guide.md", "guide.md"),
        ("autolink", "sub/a%20b.MD#part", "sub/a%20b.MD#part"),
        ("autolink", "../up.md?x=1", "../up.md?x=1"),
        ("autolink", "https://example.org/w.md", "https://example.org/w.md"),
        ("autolink", "mailto:me@example.md", ""),  # not written as read: no span, never rewritten
    ]
    assert [ln.text for ln in extract_links(parse_document(b"<a.md>\n")).links] == [None]


def test_a_link_around_a_picture_takes_the_picture_s_description_as_its_text() -> None:
    """Decision 902: ``[![Build status](badge.png)](ci.md)`` (badges, linked thumbnails) had the
    text ``""``; CommonMark's plain text of a picture is its description."""
    doc = parse_document(b"[![Build status](badge.png)](ci.md) [see ![the map](m.png) here](map.md)\n")
    assert [(ln.kind, ln.text) for ln in extract_links(doc).links] == [
        ("inline", "Build status"),
        ("image", "Build status"),
        ("inline", "see the map here"),
        ("image", "the map"),
    ]


def test_a_span_is_the_links_own_never_a_look_alike_before_it() -> None:
    """Decision 450: the same destination in a code span, a comment, a fence or another cell of the
    row comes first; each link's span is still its own."""
    text = (
        "`[a](b.md)` <!-- [c](b.md) --> [real](b.md) [ref][r] ![i](b.md)\n\n"
        "| `[x](b.md)` | [cell](b.md) | [cell](b.md) |\n|---|---|---|\n\n"
        "## [h](b.md) ##\n\n"
        "- item\n  continued [li](b.md)\n\n"
        "```\n[r]: b.md\n```\n\n> - [r]: b.md\n"
    )
    doc = parse_document(text.encode("utf-8"))
    found = [(ln.kind, ln.start) for ln in extract_links(doc).links]
    real = text.index("[real](") + 7
    cells = [i + 7 for i in range(len(text)) if text.startswith("[cell](", i)]
    assert found == [
        ("inline", real),
        ("reference", text.index("> - [r]: ") + 9),
        ("image", text.index("![i](") + 5),
        ("inline", cells[0]),
        ("inline", cells[1]),
        ("inline", text.index("[h](") + 4),
        ("inline", text.index("[li](") + 5),
    ]


def test_code_comments_and_escapes_hide_links() -> None:
    text = (
        "`[a](a.md)` and ``[[b]]`` <!-- [c](c.md) [[d]] --> \\[e](e.md) \\[[f]]\n\n"
        "```\n[g](g.md)\n```\n\n    [h](h.md)\n\n<div>\n[[i]]\n</div>\n"
    )
    assert spans(text) == []


def test_obsidian_comments_hide_links_tags_and_block_ids() -> None:
    """Decision 507: ``%%...%%`` inline or across blocks, and an unclosed ``%%`` to the end; a ``%%``
    in code or the front matter is text, and what follows a closed comment keeps its exact span."""
    text = (
        "---\nnote: '%% [[fm]]'\n---\n"
        "A %%[[a]] #hidden [b](b.md)%% [[c]] `%%` [[d]] ``x %% y`` [e](e.md) #shown\n\n"
        "%%\n[[f]]\n\n- ![[g.png]] ^gone\n\n[r]: r.md\n%%\n\n"
        "```\n%%\n```\n\n[[h]] [r] ^kept\n\nlast %% [[i]]\n\n[[j]] ^tail\n"
    )
    doc = parse_document(text.encode())
    found = extract_links(doc)
    assert [(ln.destination, doc.text[ln.start : ln.end]) for ln in found.links] == [
        ("fm", "fm"),  # a property link: the front matter is YAML, not Markdown
        ("c", "c"),
        ("d", "d"),
        ("e.md", "e.md"),
        ("h", "h"),  # [r] is not a link: its definition is inside a comment
    ]
    assert found.tags == ("shown",)
    assert found.block_ids == ("kept",)
    assert links.block_ids(doc) == ("kept",)  # what an edit's check reads without the links (decision 1016)


def test_a_block_id_in_code_is_code() -> None:
    text = (
        "```\ncode ^fenced\n```\n\n    indented ^indented\n\n- item ^real\n\n"
        "  ```\n  in a list ^inlist\n  ```\n\n> ```\n> in a quote ^inquote\n> ```\n\n"
        "- b\n\n  ```\n  %%\n  ```\n\n[[shown]] %% [[hidden]] %%\n"
    )
    found = extract_links(parse_document(text.encode()))
    assert found.block_ids == ("real",)
    assert links.block_ids(parse_document(text.encode())) == ("real",)
    assert [ln.destination for ln in found.links] == ["shown"]  # a %% in a nested fence opens nothing


def test_a_link_written_with_escapes_is_located_as_written() -> None:
    """Decision 451: the span covers the written bytes, escapes and entities included."""
    doc = parse_document(b"[x](a\\_b.md) [y](<a&#95;b.md#s>) [z]\n\n[z]: a\\_b.md\n")
    found = [(ln.destination, doc.text[ln.start : ln.end]) for ln in extract_links(doc).links]
    assert found == [("a_b.md", "a\\_b.md"), ("a_b.md#s", "a&#95;b.md#s"), ("a_b.md", "a\\_b.md")]


def test_tags_aliases_headings_blocks() -> None:
    text = "---\ntags: '#one, two'\nalias: Other\n---\n# Head #inhead\n\nText #three and `#code` 4#x #123 #a/b ^blk\n"
    links = extract_links(parse_document(text.encode()))
    assert links.tags == ("one", "two", "inhead", "three", "a/b")  # Obsidian reads tags in headings too
    assert links.aliases == ("Other",)
    assert links.headings == ("Head #inhead",)
    assert links.block_ids == ("blk",)


def test_an_incrementally_reparsed_document_gives_the_same_links() -> None:
    old = parse_text("# A\n\nsee [x](x.md)\n\n## B\n\n[[y]] and [r]\n\n[r]: r.md\n")
    start = old.text.index("see")
    edited = old.text[:start] + "look at [[z]] " + old.text[start:]
    new = parse_edited(old, edited, start, start)
    full = parse_text(edited)
    assert extract_links(new).links == extract_links(full).links


def test_rewrite_replaces_only_the_spans() -> None:
    assert rewrite("ab[x](y.md)cd", [(6, 10, "z/y.md")]) == "ab[x](z/y.md)cd"
    assert rewrite("abc", []) == "abc"


@given(st.text(alphabet="[]()#! \n\tax", max_size=30), st.booleans())
def test_the_substring_precheck_never_drops_a_run_the_pattern_keeps(content: str, references: bool) -> None:
    """link_source tests a run for ``#``, ``[`` (with references) or ``](``/``[[`` before the
    pattern (decision 271): the pattern must never match a run without them."""
    env: dict[str, object] = {"references": {"r": {"href": "x"}}} if references else {}
    token = Token("inline", "", 0, map=[0, 1], content=content)
    pattern = links._MAYBE_WITH_REFERENCES if references else links._MAYBE_INLINE
    expected = ((0, 1, content, False),) if pattern.search(content) else ()
    assert links.link_source([token], env).runs == expected


def test_a_tag_string_splits_on_spaces_as_well_as_commas() -> None:
    """A tag holds no space (Obsidian): ``tags: alpha beta`` is two tags, never one ``alpha beta``;
    aliases, which may hold spaces, split on commas only (decision 483)."""
    text = "---\ntags: alpha beta,gamma\naliases: Big Name, Other\n---\n# T\n"
    found = extract_links(parse_document(text.encode()))
    assert found.tags == ("alpha", "beta", "gamma")
    assert found.aliases == ("Big Name", "Other")
    listed = extract_links(parse_document(b"---\ntags:\n  - 'one two'\n  - '#three'\n---\n# T\n"))
    assert listed.tags == ("one", "two", "three")


def _laughs(levels: int, key: str) -> str:
    """Front matter whose ``key`` is ``levels`` levels of nine aliases to the level below (the
    "billion laughs"): a few hundred bytes, nine to the power ``levels`` strings once expanded."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "[[x]]"]']
    for level in range(1, levels):
        name, below = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{below}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + f"\n{key}: *{chr(ord('a') + levels - 1)}\n---\n\n# T\n\ntext [[y]]\n"


def test_front_matter_aliases_that_expand_far_beyond_the_text_are_broken_front_matter() -> None:
    """Six levels of nine aliases (about 300 bytes) gave 125,479 property links and took 2 s; nine
    levels would not end. A self-referencing alias ended in RecursionError. Such a header now reads
    as broken front matter: no tags, aliases or property links, the body's links still count
    (decision 404)."""
    for key in ("tags", "aliases", "related"):
        found = extract_links(parse_document(_laughs(6, key).encode()))
        assert (found.tags, found.aliases) == ((), ())
        assert [ln.destination for ln in found.links] == ["y"]
    looped = extract_links(parse_document(b'---\nrelated: &r ["[[x]]", *r]\n---\n# T\n\n[[y]]\n'))
    assert [ln.destination for ln in looped.links] == ["y"]
    with pytest.raises(ValueError, match="YAML aliases"):
        links.load_yaml('a: &a ["x", "x"]\nb: &b [*a, *a, *a]\nc: [' + ", ".join(["*b"] * 2_000) + "]")


def test_front_matter_nested_past_the_stack_is_broken_front_matter() -> None:
    """libyaml refuses 1,000 levels, and the pure-Python loader it falls back to ran out of stack:
    a RecursionError made the file unreadable and kb_move / the PDF export INTERNAL_ERROR
    (decision 1005). Such a header reads as broken front matter; the body's links still count."""
    for header in ("a: " + "[" * 1_000 + "]" * 1_000, "a: " + "{b: " * 1_000 + "c" + "}" * 1_000):
        with pytest.raises(ValueError, match=r"nested too deep|nesting depth"):
            links.load_yaml(header)
        found = extract_links(parse_document(f"---\n{header}\n---\n# T\n\nsee [[y]]\n".encode()))
        assert [ln.destination for ln in found.links] == ["y"]


def test_plain_front_matter_is_never_too_large() -> None:
    """The bound counts every value and its characters against twice the text: plain YAML (keys
    without values, one-character lists, long strings) stays under it, and so do ordinary
    aliases (a default block merged into a few entries)."""
    plain = "\n".join(f"k{i}:" for i in range(5_000)) + "\nl: [" + ",".join("1" * 3_000) + "]\ns: " + "w" * 50_000
    assert len(links.load_yaml(plain)) == 5_002
    merged = "base: &base {a: 1, b: two}\n" + "\n".join(f"e{i}: {{<<: *base, c: {i}}}" for i in range(200))
    assert links.load_yaml(merged)["e199"] == {"a": 1, "b": "two", "c": 199}


def _extract_seconds(text: str) -> float:
    import gc
    import time

    doc = parse_document(text.encode("utf-8"))
    best = float("inf")
    gc.collect()
    gc.disable()  # a collection's cost follows the heap, not the work measured
    try:
        for _ in range(3):  # the fastest of three: a neighbour's burst of load does not decide
            started = time.process_time()
            extract_links(doc)
            best = min(best, time.process_time() - started)
    finally:
        gc.enable()
    return best


# Four times the input: linear work reads about 4 (4.4-4.8 measured, a loaded host more), quadratic
# 16. The bound sits between them with room for a shared host's noise (8 failed once at load 3.5).
_LINEAR = 10


@pytest.mark.parametrize("separator", [" ", "\n"])
def test_finding_the_spans_grows_linearly_with_the_links_of_one_paragraph(separator: str) -> None:
    """An index page whose links share one paragraph (one line, or soft breaks): each link's span
    searched its whole line, and counted the newlines before it, from the start of the run, so
    50,000 links on one line took 64 s to index and 20,000 took 8 (decision 695). Four times the
    links must cost about four times the time, not sixteen."""

    def page(n: int) -> str:
        return "# Index\n\n" + separator.join(f"[page {i}](docs/page-{i}.md)" for i in range(n)) + "\n"

    small, large = page(3000), page(12000)
    doc = parse_document(large.encode("utf-8"))
    found = extract_links(doc).links
    assert len(found) == 12000 and doc.text[found[-1].start : found[-1].end] == "docs/page-11999.md"
    ratio = _extract_seconds(large) / _extract_seconds(small)
    assert ratio < _LINEAR, f"12,000 links cost {ratio:.1f} times 3,000 links"


def test_front_matter_links_are_placed_in_linear_time() -> None:
    """Each front-matter wikilink value took the first unused place of its spelling by scanning
    every place: 20,000 of them took 19 s (decision 696). Spans stay the first unused place."""

    def page(n: int) -> str:
        return "---\nrelated:\n" + "".join(f'  - "[[n{i % (n // 2)}]]"\n' for i in range(n)) + "---\n# F\n"

    doc = parse_document(page(4000).encode("utf-8"))
    found = [ln for ln in extract_links(doc).links if ln.destination == "n7"]
    assert len(found) == 2 and found[0].start < found[1].start  # the same spelling twice: two places
    assert all(doc.text[ln.start : ln.end] == "n7" for ln in found)
    ratio = _extract_seconds(page(16000)) / _extract_seconds(page(4000))
    assert ratio < _LINEAR, f"16,000 front-matter links cost {ratio:.1f} times 4,000"


@pytest.mark.parametrize(("run", "limit"), [("[a][", 200), ("[", 30), ("[[", 60)])
def test_a_run_of_brackets_costs_a_bounded_scan_per_bracket(
    run: str, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each "[" scans its label in validation mode one nesting level deeper per nested "[", so the
    work per bracket followed the block parser's nesting limit (100): about 800 token skips per
    "[a][" (100 per "[", 200 per "[["), an 8 MiB file of them some 17 minutes of a parse worker
    (decision 783). Inline runs now stop at markdown-it's own 20 levels (150, 21, 42); links of
    real text are unchanged."""
    inline = links._MD_INLINE.inline
    real = inline.skipToken
    calls = [0]

    def counted(state: object) -> None:
        calls[0] += 1
        real(state)  # type: ignore[arg-type]

    monkeypatch.setattr(inline, "skipToken", counted)
    units = 2000
    extract_links(parse_document((run * units + "\n").encode()))
    assert calls[0] / units < limit, f"{calls[0] / units:.0f} token skips per {run!r}"
    nested = "[" * 15 + "[deep](docs/a.md)" + "]" * 15 + " and [[Wiki]]\n"
    found = extract_links(parse_document(nested.encode())).links
    assert [ln.destination for ln in found] == ["docs/a.md", "Wiki"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a footnote reference as VitePress docs write it: a link to #footnote-1 whose text is [1]
        ("See <sup>[[1]](#footnote-1)</sup>.\n", [("inline", "#footnote-1", "#footnote-1")]),
        ("[[Note]] (in parentheses)\n", [("wikilink", "Note", "Note")]),
        # the table-of-contents marker alone in its paragraph is no link; in a sentence it still is
        ("# T\n\n[[TOC]]\n\n## A\n", []),
        ("[[toc]]\n", []),
        ("See [[TOC]] for the list.\n", [("wikilink", "TOC", "TOC")]),
        ("![[toc]]\n", [("embed", "toc", "toc")]),
    ],
)
def test_brackets_other_renderers_read_as_links_or_markers_are_not_wikilinks(
    text: str, expected: list[tuple[str, str, str]]
) -> None:
    """Decision 617: vue-docs-zh-cn's `[[TOC]]` and `<sup>[[1]](#footnote-1)</sup>` were listed by
    kb_links as links to missing notes named `TOC` and `1`."""
    assert spans(text) == expected


HTML_PICTURES = (
    '# P\n\n<p align="center">\n<img src="a.png" width="50">\n</p>\n\n'
    'Inline <IMG SRC=\'b c.png\'> and `<img src="code.png">` and <!-- <img src="gone.png"> -->.\n\n'
    "> <img src=quoted.png>\n\n"
    '| cell <img src="cell.png"> |\n|---|\n\n'
    '    <img src="indented-code.png">\n\n'
    "[ref]: r.md\n"
)


def test_the_link_graph_reads_html_pictures_from_the_documents_own_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fully parsed document's ``<img>`` tags come from the blocks its parse kept (decision 627):
    the same sources as a parse of their own, with none made."""
    from local_vector_search_mcp.markdown import html_references

    doc = parse_document(HTML_PICTURES.encode("utf-8"))
    by_own_parse = html_references.html_references(doc)
    assert [s.value for s in by_own_parse] == ["a.png", "b c.png", "quoted.png", "cell.png"]

    def no_second_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the document was parsed again")

    monkeypatch.setattr(html_references._BLOCKS, "parse", no_second_parse)
    graph = links.graph_links(doc, extract_links(doc).links)
    assert [(ln.kind, ln.destination, ln.start, ln.end) for ln in graph if ln.kind == "html"] == [
        ("html", s.value, s.start, s.end) for s in by_own_parse
    ]


def test_the_index_s_links_are_placed_only_where_html_tags_are_ordered_among_them() -> None:
    """The index keeps no span (decision 1060): with ``spans=False`` a link read without the inline
    parser is left unplaced, everything else it holds unchanged; a reference link's definition is
    still found (its destination is given as written there). A document holding HTML keeps every
    span, so the graph orders its tags among its links as before."""
    plain = parse_document(b"# T\n\nSee [a](a.md), [[W]] and ![i](i.png), [r][R].\n\n[R]: <r%20r.md>\n")
    placed, unplaced = extract_links(plain).links, extract_links(plain, spans=False).links
    assert [(ln.kind, ln.destination, ln.text, ln.pointer) for ln in unplaced] == [
        (ln.kind, ln.destination, ln.text, ln.pointer) for ln in placed
    ]
    assert [(ln.kind, ln.start, ln.end) for ln in unplaced] == [
        ("inline", -1, -1),
        ("wikilink", -1, -1),
        ("image", -1, -1),
        ("reference", placed[3].start, placed[3].end),
    ]
    assert placed[3].start > 0

    html = parse_document(b'# T\n\n[a](a.md) <img src="p.png"> [b](b.md) <a href="c.md">c</a>\n')
    graph = links.graph_links(html, extract_links(html, spans=False).links)
    assert graph == links.graph_links(html, extract_links(html).links)
    assert [(ln.kind, ln.destination) for ln in graph] == [
        ("inline", "a.md"),
        ("html", "p.png"),
        ("inline", "b.md"),
        ("href", "c.md"),
    ]


def test_html_pictures_from_the_parse_equal_a_parse_of_their_own_on_the_shared_corpora() -> None:
    from shared_data import CORPORA

    from local_vector_search_mcp.markdown import html_references

    files = sorted(
        p for p in CORPORA.rglob("*.md") if re.search(rb"<(?:img|a[\s/]|source)", p.read_bytes(), re.IGNORECASE)
    )
    if not files:
        pytest.skip("shared corpora not found")
    for path in files:
        doc = parse_document(path.read_bytes())
        source = doc._state.link_source  # type: ignore[attr-defined]
        assert html_references.html_references(doc, source.html, source.references) == html_references.html_references(
            doc
        ), path


HTML_LINKS = (
    '# P\n\n<p class="nav"><a class="btn" href="setup.md">Setup</a>\n'
    "<A TARGET=_blank HREF='../guide/setup.md#intro'>Intro</A> <a\nhref=plain.md>p</a></p>\n\n"
    'Inline <a title="x.md" data-href="no.md" href="b%20c.md">b</a>, [md](m.md), <abbr title="a.md">A</abbr>,\n'
    '`<a href="code.md">` and <!-- <a href="comment.md"> --> <a name="top">no href</a>.\n\n'
    '```\n<a href="fence.md">f</a>\n```\n\n'
    '    <a href="indented.md">i</a>\n\n'
    '<!--\n<a href="block-comment.md">c</a>\n-->\n'
)


def test_the_href_of_an_html_a_tag_is_a_link_where_an_img_src_would_be() -> None:
    """Decision 1032. MDX and HTML-heavy docs link with ``<a href="page.md">``, which the graph and a
    move did not see while an ``<img src>`` beside it was followed (820). The ``href`` of each
    ``<a>`` tag in an HTML block or inline HTML is a link of kind ``href`` with its exact span (any
    attribute order, case, quoting; character references resolved), in text order, no text; in a
    code span, a fence, indented code or an HTML comment it is text, and ``<abbr>`` or an ``<a>``
    without ``href`` is none."""
    doc = parse_document(HTML_LINKS.encode("utf-8"))
    found = links.graph_links(doc, extract_links(doc).links)
    assert [(ln.kind, ln.destination, doc.text[ln.start : ln.end], ln.text) for ln in found] == [
        ("href", "setup.md", "setup.md", None),
        ("href", "../guide/setup.md#intro", "../guide/setup.md#intro", None),
        ("href", "plain.md", "plain.md", None),
        ("href", "b%20c.md", "b%20c.md", None),
        ("inline", "m.md", "m.md", "md"),
    ]
    inline = next(e for e in doc.elements if doc.text.startswith("Inline", e.start))
    assert found[0].pointer is None and found[3].pointer == inline.anchor  # HTML blocks are not addressable
    escaped = parse_document(b'<a href="a&amp;b.md">x</a>\n')
    (only,) = links.graph_links(escaped, extract_links(escaped).links)
    assert (only.destination, escaped.text[only.start : only.end]) == ("a&b.md", "a&amp;b.md")


@pytest.mark.parametrize(
    ("value", "urls"),
    [
        ("a.png 1x, b@2x.png 2x", ["a.png", "b@2x.png"]),
        ("small.jpg 480w,large.jpg 1080w", ["small.jpg", "large.jpg"]),  # no space after the comma
        ("  \n\ta.png,\n  b.png  ,, c.png", ["a.png", "b.png", "c.png"]),  # commas ending a URL separate
        ("a.png,b.png 2x", ["a.png,b.png"]),  # a comma inside a URL is part of it
        ("a.png,,, b.png", ["a.png", "b.png"]),
        ("x.png 1x (a, b.png), y.png", ["x.png", "y.png"]),  # a comma in parentheses is the descriptor's
        ("one.png", ["one.png"]),
        (" , ,", []),
        ("a&amp;b.png 1x,&#32;c.png, d.png&#44;e.png 2x", ["a&b.png", "c.png", "d.png,e.png"]),
        ("d.png&#44; e.png", ["d.png", "e.png"]),  # an encoded comma ends a URL as a written one
    ],
)
def test_srcset_candidates_are_read_as_html_parses_a_srcset(value: str, urls: list[str]) -> None:
    """Decision 1156, by HTML's "parse a srcset attribute" on the value with its character
    references resolved: a candidate's URL runs to the next whitespace, the commas that end it
    separate it from the next, and its descriptors run to the next comma outside parentheses. Each
    span is the URL as written (an encoded comma or ampersand included)."""
    from local_vector_search_mcp.markdown.html_references import srcset_urls

    found = srcset_urls(value)
    assert [url for _, _, url in found] == urls
    for start, end, url in found:
        assert html.unescape(value[start:end]) == url


FOOTNOTES = (
    "# T\n\nText[^1] and[^n], [^w][^p][^a] and ![x][^1].\n\n"
    "[^1]: ![chart](img/a.png)\n"
    "[^n]: [page](page.md#x)\n"
    "[^w]: [[Wiki|alias]]\n"
    "[^p]: page.md\n"
    "[^a]: <b.md>\n"
    "> [^q]:\n>   ![quoted](q%20q.png)\n\n"
    "[^m]: more than one word [here](m.md)\n\n"
    "See [r].\n\n[r]: ref.md\n"
)


def test_a_footnote_read_as_a_reference_definition_holds_the_links_of_its_body() -> None:
    """Decision 1157. CommonMark has no footnotes: ``[^1]: ![chart](a.png)`` is a reference
    definition whose destination is ``![chart](a.png)``, so the picture was no link (not in the
    graph, not rewritten by a move) and ``Text[^1]`` was a reference link to ``![chart](a.png)``.
    As GFM and Obsidian read it, the body is the footnote's text: its links are read with their
    exact spans, in text order, and ``[^1]`` is then no link. A body holding no link
    (``[^p]: page.md``) is read as before, ``[^p]`` a reference link to it; a body with a blank is
    a paragraph already. A top-level definition is a paragraph of its own (decision 1194), whose
    pointer its links have; one in a quote is no element, its links have none."""
    doc = parse_document(FOOTNOTES.encode("utf-8"))
    found = links.graph_links(doc, extract_links(doc).links)

    def pointer(link: links.Link) -> str | None:
        return link.pointer.split("~")[0] if link.pointer else None

    assert [(ln.kind, ln.destination, doc.text[ln.start : ln.end], pointer(ln)) for ln in found] == [
        ("image", "img/a.png", "img/a.png", "1.p4"),
        ("inline", "page.md#x", "page.md#x", "1.p5"),
        ("wikilink", "Wiki", "Wiki", "1.p6"),
        ("reference", "page.md", "page.md", "1.p1"),  # placed at its definition, as every reference
        ("autolink", "b.md", "b.md", "1.p8"),
        ("image", "q%20q.png", "q%20q.png", None),
        ("inline", "m.md", "m.md", "1.p2"),
        ("reference", "ref.md", "ref.md", "1.p3"),
    ]
    assert [e.text for e in doc.elements if e.pointer in ("1.p4", "1.p8")] == [
        "[^1]: ![chart](img/a.png)",
        "[^a]: <b.md>",
    ]
    unplaced = extract_links(doc, spans=False).links  # the index's reading: the same links
    assert sorted((ln.kind, ln.destination) for ln in unplaced) == sorted((ln.kind, ln.destination) for ln in found)


def _spec_srcset_urls(value: str) -> list[str]:
    """HTML's "parse a srcset attribute", transcribed step by step (the URLs only): the oracle."""
    space, urls, position = "\t\n\f\r ", [], 0
    while True:
        while position < len(value) and value[position] in space + ",":
            position += 1
        if position >= len(value):
            return urls
        start = position
        while position < len(value) and value[position] not in space:
            position += 1
        url = value[start:position]
        if url.endswith(","):
            urls.append(url.rstrip(","))
            continue
        urls.append(url)
        state = "start"
        while position < len(value):
            c = value[position]
            if state == "start" and c in space:
                pass
            elif state in ("start", "in descriptor") and c == ",":
                position += 1
                break
            elif state == "in parens":
                state = "in descriptor" if c == ")" else state
            elif state == "after descriptor":
                state = "after descriptor" if c in space else "in descriptor"
                if c not in space:
                    continue  # reconsumed
            else:  # start or in descriptor
                state = "after descriptor" if c in space else "in parens" if c == "(" else "in descriptor"
            position += 1


@given(st.text(alphabet=" \t\n,()ab.x1", max_size=40))
def test_srcset_candidates_agree_with_the_spec_s_steps(value: str) -> None:
    from local_vector_search_mcp.markdown.html_references import srcset_urls

    assert [url for _, _, url in srcset_urls(value)] == _spec_srcset_urls(value)


SRCSETS = (
    "# P\n\n<picture>\n"
    '  <source media="(min-width: 800px)" SRCSET="wide.png 1x, wide@2x.png 2x" type="image/png">\n'
    "  <source srcset='dark.png' media=\"(prefers-color-scheme: dark)\">\n"
    '  <img srcset="a.png 480w,\n    b%20c.png 800w" sizes="50vw" src="fallback.png" alt="x">\n'
    "</picture>\n\n"
    'Inline <img src="s.png" srcset=u.png> and <img data-srcset="no.png 2x" srcset="https://x.org/a.png 1x, '
    'data:image/png;base64,AAAA 2x, ./rel.png 3x">, [md](m.md),\n'
    '`<img srcset="code.png">` <!-- <img srcset="comment.png"> --> <source src="movie.mp4">.\n\n'
    '```\n<img srcset="fence.png 2x">\n```\n'
)


def test_each_srcset_candidate_is_a_picture_link_where_an_img_src_would_be() -> None:
    """Decision 1156. ``<img srcset="a.png 1x, b@2x.png 2x">`` and ``<source srcset>`` in a
    ``<picture>`` name pictures as ``<img src>`` does (820), but the graph and a move saw only the
    ``src``. Each candidate's URL is a link of kind ``html`` whose span is the URL alone, in text
    order (a ``srcset`` before the ``src`` of its tag comes first); URLs are kept (the resolver
    leaves them, as a ``src``'s); in a code span, a fence or a comment it is text, and a
    ``data-srcset`` is none. (A ``<source src>`` of audio or video is a link since 1186.)"""
    doc = parse_document(SRCSETS.encode("utf-8"))
    found = links.graph_links(doc, extract_links(doc).links)
    assert [(ln.kind, ln.destination, doc.text[ln.start : ln.end]) for ln in found] == [
        ("html", "wide.png", "wide.png"),
        ("html", "wide@2x.png", "wide@2x.png"),
        ("html", "dark.png", "dark.png"),
        ("html", "a.png", "a.png"),
        ("html", "b%20c.png", "b%20c.png"),
        ("html", "fallback.png", "fallback.png"),
        ("html", "s.png", "s.png"),
        ("html", "u.png", "u.png"),
        ("html", "https://x.org/a.png", "https://x.org/a.png"),
        ("html", "data:image/png;base64,AAAA", "data:image/png;base64,AAAA"),
        ("html", "./rel.png", "./rel.png"),
        ("inline", "m.md", "m.md"),
        ("html", "movie.mp4", "movie.mp4"),
    ]
    inline = next(e for e in doc.elements if doc.text.startswith("Inline", e.start))
    assert found[0].pointer is None and found[6].pointer == inline.anchor == found[8].pointer
    # a page holding only `<source srcset>` (no `<img`) is read for it too
    alone = parse_document(b"<picture>\n<source srcset='only.png 2x'>\n</picture>\n")
    assert [ln.destination for ln in links.graph_links(alone, extract_links(alone).links)] == ["only.png"]


MEDIA = (
    "# M\n\n"
    "<video src=\"clip.mp4\" POSTER='img/poster.png' controls width=640>\n"
    '  <source src="clip%20hd.webm" type="video/webm">\n'
    "  <track kind=subtitles src=subs/en.vtt srclang=en>\n"
    "</video>\n\n"
    "Inline <audio controls src='talk.mp3'></audio>, <embed type=application/pdf src=\"docs/r.pdf\">,\n"
    '<object data="diagram.svg" type="image/svg+xml"></object>, <iframe src="files/slides.pdf#page=2"></iframe>,\n'
    'and <iframe src="demo.html"></iframe>, <iframe src="https://www.youtube.com/embed/x"></iframe>,\n'
    '<audio src="https://example.org/a.mp3"></audio>, <video src="data:video/mp4;base64,AA"></video>,\n'
    '<video data-src="lazy.mp4"></video> <audio data-poster=no.png src=ok.ogg>, <AUDIO SRC=Up.MP3>.\n\n'
    '`<video src="code.mp4">` <!-- <audio src="comment.mp3"> -->\n\n'
    '```\n<embed src="fence.swf">\n```\n'
)


def test_the_files_media_tags_play_or_embed_are_links_as_an_img_src_is() -> None:
    """Decision 1186. ``<video src>``, ``<video poster>``, ``<audio src>``, ``<source src>`` (in
    ``<video>``/``<audio>``), ``<track src>``, ``<embed src>`` and ``<object data>`` name a file as an
    ``<img src>`` does, whatever its extension: each is a link of kind ``html`` whose span is the
    value alone, in text order (``poster`` and ``src`` of one tag by their place). An ``<iframe
    src>`` counts only when it names an attachment (``slides.pdf``, not ``demo.html``, a page a site
    may make). URLs and ``data:`` are kept (the resolver leaves them); ``data-src`` and
    ``data-poster`` are none; in a code span, a comment or a fence a tag is text."""
    doc = parse_document(MEDIA.encode("utf-8"))
    found = links.graph_links(doc, extract_links(doc).links)
    assert [(ln.kind, ln.destination, doc.text[ln.start : ln.end]) for ln in found] == [
        ("html", "clip.mp4", "clip.mp4"),
        ("html", "img/poster.png", "img/poster.png"),
        ("html", "clip%20hd.webm", "clip%20hd.webm"),
        ("html", "subs/en.vtt", "subs/en.vtt"),
        ("html", "talk.mp3", "talk.mp3"),
        ("html", "docs/r.pdf", "docs/r.pdf"),
        ("html", "diagram.svg", "diagram.svg"),
        ("html", "files/slides.pdf#page=2", "files/slides.pdf#page=2"),
        ("html", "https://example.org/a.mp3", "https://example.org/a.mp3"),
        ("html", "data:video/mp4;base64,AA", "data:video/mp4;base64,AA"),
        ("html", "ok.ogg", "ok.ogg"),
        ("html", "Up.MP3", "Up.MP3"),
    ]
    inline = next(e for e in doc.elements if doc.text.startswith("Inline", e.start))
    assert found[0].pointer is None and found[4].pointer == inline.anchor == found[-1].pointer
    # a page holding only one media tag is read for it (no `<img`, no `srcset`)
    for alone in (b"<audio src=a.mp3>\n", b"<track src=t.vtt>\n", b"Text <object data=o.pdf></object>\n"):
        page = parse_document(alone)
        assert len(links.graph_links(page, extract_links(page).links)) == 1, alone


@pytest.mark.parametrize(
    ("unit", "found"),
    [
        ("<img ", 0),  # unclosed, in an HTML block
        ("<a href ", 0),
        ('<a href="p.md">p</a> ', 1),  # closed, in one paragraph
        ('<img src="p.png"> ', 1),
        ("<video ", 0),
        ('<audio src="p.mp3"> ', 1),
    ],
)
def test_html_tags_are_read_in_time_linear_in_their_number(unit: str, found: int) -> None:
    """Decision 1032: each unclosed ``<img`` of an HTML block was scanned to the block's end (40,000
    on one line took 3 s), and each tag of a paragraph counted in the whole paragraph (20,000
    ``<img>`` took 8.5 s); ``<a href>``, common by the thousand on an index page, would have done
    the same. Four times the tags must cost about four times the time, not sixteen."""
    import gc
    import time

    from local_vector_search_mcp.markdown import html_references

    def seconds(n: int) -> float:
        text = ("<div>\n" if found == 0 else "Text ") + unit * n + "\n"
        doc = parse_document(text.encode("utf-8"))
        best = float("inf")
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                started = time.process_time()
                assert len(html_references.html_references(doc)) == found * n
                best = min(best, time.process_time() - started)
        finally:
            gc.enable()
        return best

    small, large = seconds(5_000), seconds(20_000)
    assert large < max(small, 0.005) * _LINEAR, (small, large)


def test_an_escaped_pipe_ends_a_wikilink_s_name_outside_a_table_too() -> None:
    """Decision 913. Obsidian writes ``[[Note\\|alias]]`` in a table and reads it the same way in a
    paragraph or list (a pasted table row, a link copied out of one): the name was ``Note\\``, which
    reached nothing, and a move with updateLinks would have replaced the backslash with the new
    name, unescaping the pipe (a table row split in two). The name is ``Note``; the backslash stays
    outside its span, so a rewrite keeps it."""
    text = "Para [[Note\\|shown]] and ![[pic.png\\|300]].\n\n- [[Other#Part\\|x]]\n\n| [[Cell\\|c]] |\n|---|\n"
    doc = parse_document(text.encode("utf-8"))
    found = extract_links(doc).links
    assert [(ln.kind, ln.destination, ln.text, doc.text[ln.start : ln.end]) for ln in found] == [
        ("wikilink", "Note", "shown", "Note"),
        ("embed", "pic.png", "300", "pic.png"),
        ("wikilink", "Other#Part", "x", "Other#Part"),
        ("wikilink", "Cell", "c", "Cell"),
    ]
    renamed = rewrite(doc.text, [(ln.start, ln.start + len(ln.destination.split("#")[0]), "New") for ln in found])
    assert renamed == "Para [[New\\|shown]] and ![[New\\|300]].\n\n- [[New#Part\\|x]]\n\n| [[New\\|c]] |\n|---|\n"


def test_toml_front_matter_gives_tags_aliases_and_property_links() -> None:
    """Decision 1026: Hugo's ``+++`` front matter was a paragraph, so its ``tags`` and ``aliases``
    were never read (a tag filter missed the page) and its text was searched for tags and links as
    body text. It is read as YAML front matter is; a wikilink of a property value counts, with no
    place (TOML gives none): a move leaves it as written."""
    text = (
        '+++\ntitle = "Hugo page"\ntags = ["secretword", "two words"]\naliases = "Old name, Other"\n'
        'related = "[[Note]]"\n+++\n\n# T\n\nsee [[y]] #inline\n'
    )
    doc = parse_document(text.encode())
    found = extract_links(doc)
    assert found.tags == ("secretword", "two", "words", "inline")
    assert found.aliases == ("Old name", "Other")
    front = doc.get("frontmatter")
    assert front is not None
    assert [(ln.destination, ln.pointer, ln.start) for ln in found.links] == [
        ("Note", front.anchor, -1),
        ("y", doc.elements[-1].anchor, text.index("[[y]]") + 2),
    ]


def test_broken_toml_front_matter_gives_no_tags_and_the_body_still_counts() -> None:
    found = extract_links(parse_document(b'+++\ntags = ["a"\n+++\n\n# T\n\nsee [[y]] #b\n'))
    assert (found.tags, found.aliases) == (("b",), ())
    assert [ln.destination for ln in found.links] == ["y"]


@pytest.mark.parametrize(
    "text",
    [
        "---\r\ntitle: T\r\naliases: [Old name, Other]\r\n---\r\n# T\r\n",
        '+++\ntitle = "T"\naliases = "Old name, Other"\n+++\n\nsee [[y]]\n',
        "---\nalias: Old name\n---\n",
        "---\n---\n# T\n",
        "# No front matter\n\naliases: [x]\n",
    ],
)
def test_front_matter_aliases_are_the_aliases_extract_links_reads(text: str) -> None:
    """Decision 1037: kb_patch compares the aliases before and after an edit from the front matter
    alone; they must be the ones the link graph resolves wikilinks by."""
    doc = parse_document(text.encode())
    assert links.front_matter_aliases(doc) == extract_links(doc).aliases


def test_a_link_text_keeps_the_characters_written_escaped() -> None:
    # `[my\_note](x.md)` was listed with the text `mynote`: the escape's character is a token of its
    # own (`text_special`) that the text left out (decision 1048)
    doc = parse_document(b"See [my\\_note](x.md) and [a\\[1\\]](y.md) and [plain](z.md).\n")
    assert [ln.text for ln in extract_links(doc).links] == ["my_note", "a[1]", "plain"]
