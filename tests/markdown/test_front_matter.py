"""Front matter fences as the reference's Markdig YAML extension reads them (decision 830), and
Hugo's TOML ``+++`` fences (decision 1026)."""

from __future__ import annotations

import pytest

from local_vector_search_mcp.markdown import Document, ElementKind, parse_document, parse_text
from local_vector_search_mcp.markdown.document import clear_cache, parse_edited
from local_vector_search_mcp.markdown.front_matter import load_toml


def _front_matter(text: str) -> str | None:
    found = [e.text for e in parse_text(text).elements if e.kind is ElementKind.FRONT_MATTER]
    return found[0] if found else None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ntitle: T\n---\nBody\n", "---\ntitle: T\n---"),
        ("---\ntitle: T\n...\nBody\n", "---\ntitle: T\n..."),  # YAML's document end closes too
        ("--- \t\na: 1\n---\n", "--- \t\na: 1\n---"),  # whitespace after the opening fence
        ("---\r\na: 1\r\n---\r\n", "---\r\na: 1\r\n---"),
        ("---\n---\n", "---\n---"),  # empty
        # a longer dash run or an indented fence does not close: the next exact one does
        ("---\na: 1\n-----\n  ---\nb: 2\n---\nBody\n", "---\na: 1\n-----\n  ---\nb: 2\n---"),
    ],
)
def test_front_matter_spans_the_first_exact_closing_fence(text: str, expected: str) -> None:
    assert _front_matter(text) == expected


@pytest.mark.parametrize(
    ("text", "first_kind", "first_text"),
    [
        ("----\na\n----\n", ElementKind.HEADING, "a\n----"),  # four dashes: a thematic break
        ("--- title\na\n---\n", ElementKind.HEADING, "--- title\na\n---"),  # text after the dashes
        ("---\na: 1\n  ---\n", ElementKind.HEADING, "a: 1\n  ---"),  # only an indented closing fence
        ("---\na: 1\n\nText\n", ElementKind.PARAGRAPH, "a: 1"),  # never closed
        (" ---\na\n---\n", ElementKind.HEADING, "a\n---"),  # indented opening fence
    ],
)
def test_no_front_matter_without_exact_fences(text: str, first_kind: ElementKind, first_text: str) -> None:
    """mdit-py-plugins opened and closed on any dash run of three or more (and closed indented);
    each of these read as front matter before decision 830."""
    doc = parse_text(text)
    assert _front_matter(text) is None
    assert (doc.elements[0].kind, doc.elements[0].text) == (first_kind, first_text)


def test_a_list_item_on_the_first_line_never_opens_front_matter() -> None:
    doc = parse_text("- x\n  ---\n  a\n  ---\n")
    assert [e.kind for e in doc.elements] == [ElementKind.LIST_ITEM]


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("---\nthis: is a frontmatter\n---\nThis is a text\n", ["front_matter", "paragraph"]),
        ("This is a text1\n---\nthis: is a frontmatter\n---\nThis is a text2\n", ["heading", "heading", "paragraph"]),
        ("----\nthis: is a frontmatter\n----\nThis is a text\n", ["heading", "paragraph"]),  # <hr/> is no element
        ("---\nthis: is a frontmatter\n\n...\nThis is a text\n", ["front_matter", "paragraph"]),
        ("---\nthis: is a frontmatter\nThis is a text\n", ["paragraph"]),
        ("---\nthis: is a frontmatter\n....\nThis is a text\n", ["paragraph"]),
        ("---\nthis: is a frontmatter\n....\n\nHello\n---\nThis is a text\n", ["front_matter", "paragraph"]),
        ("---   \nthis: is a frontmatter\n...\nThis is a text\n", ["front_matter", "paragraph"]),
        ("---\nthis: is a frontmatter\n...     \nThis is a text\n", ["front_matter", "paragraph"]),
    ],
)
def test_markdig_yaml_spec_examples(text: str, kinds: list[str]) -> None:
    """The examples of Markdig's own YAML front matter spec (``YamlSpecs.md``), as element kinds."""
    assert [e.kind.value for e in parse_text(text).elements] == kinds


_TAIL = "".join(f"P{i}.\n\n" for i in range(30))


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        ("---\na: 1\n---\nBody\n\n# H\n\n" + _TAIL, "---\nBody", "----\nBody"),  # the closer grows
        ("---\na: 1\n---\nBody\n\n# H\n\n" + _TAIL, "---\na", "--- x\na"),  # the opener gets text
        ("---\na: 1\n\nBody\n\n" + _TAIL, "P20.", "..."),  # a closer appears far below
        ("---\na: 1\n\nBody\n\n" + _TAIL, "P20.", "----"),  # a dash run that closes nothing
        ("----\na: 1\n----\nBody\n\n" + _TAIL, "----\na", "---\na"),  # the opener becomes exact
        ("---\na: 1\n-----\nb\n---\nBody\n\n" + _TAIL, "b\n---", "b\n--"),  # the only closer goes
    ],
)
def test_an_edit_that_opens_or_closes_front_matter_reparses_as_a_whole_parse(text: str, old: str, new: str) -> None:
    """The incremental re-parse (``parse_edited``) must see 830's fences exactly as a full parse."""
    start = text.index(old)
    edited = text[:start] + new + text[start + len(old) :]
    clear_cache()
    incremental = parse_edited(parse_text(text), edited, start, start + len(old))
    clear_cache()
    full = parse_text(edited)

    def shape(doc: Document) -> tuple[object, ...]:
        return tuple(
            (e.pointer, e.kind, e.start, e.end, e.self_hash, e.subtree_hash) for e in doc.elements
        ), doc.reserved

    assert shape(incremental) == shape(full)


# -- TOML front matter, Hugo's default (decision 1026) -------------------------------------

HUGO = '+++\ntitle = "Hugo page"\ndraft = true\ntags = ["secretword"]\n+++\n\n# Heading\n\nBody text.\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (HUGO, '+++\ntitle = "Hugo page"\ndraft = true\ntags = ["secretword"]\n+++'),
        ('+++\r\ntitle = "T"\r\n+++\r\nBody\r\n', '+++\r\ntitle = "T"\r\n+++'),
        ("+++ \t\na = 1\n+++\t\n", "+++ \t\na = 1\n+++\t"),  # whitespace after either fence
        ("+++\n+++\n", "+++\n+++"),  # empty
        ("+++\na = 1\n---\n...\n++++\n  +++\nb = 2\n+++\nBody\n", "+++\na = 1\n---\n...\n++++\n  +++\nb = 2\n+++"),
    ],
)
def test_toml_front_matter_spans_its_plus_fences(text: str, expected: str) -> None:
    """A page opening with Hugo's ``+++`` fences read as a paragraph ``p1``: no ``frontmatter``
    pointer, its TOML printed and indexed as body text. Only an exact ``+++`` closes it (YAML's
    ``---`` and ``...`` do not, nor a longer or indented plus run)."""
    doc = parse_text(text)
    first = doc.elements[0]
    assert (first.kind, first.pointer, first.text) == (ElementKind.FRONT_MATTER, "frontmatter", expected)
    assert (first.start, first.end) == (0, len(expected))
    assert doc.get("frontmatter") is first


def test_toml_front_matter_after_a_bom_keeps_its_span() -> None:
    doc = parse_document(b"\xef\xbb\xbf" + HUGO.encode())
    assert doc.bom and doc.elements[0].kind is ElementKind.FRONT_MATTER
    assert [e.pointer for e in doc.elements] == ["frontmatter", "1", "1.p1"]


@pytest.mark.parametrize(
    ("text", "first_kind", "first_text"),
    [
        ('+++\ntitle = "T"\n\nBody\n', ElementKind.PARAGRAPH, '+++\ntitle = "T"'),  # never closed
        ("++++\na = 1\n++++\n", ElementKind.PARAGRAPH, "++++\na = 1\n++++"),  # four pluses
        ("+++ toml\na = 1\n+++\n", ElementKind.PARAGRAPH, "+++ toml\na = 1\n+++"),  # text after the fence
        (" +++\na = 1\n+++\n", ElementKind.PARAGRAPH, " +++\na = 1\n+++"),  # indented opening fence
        ("+++\na = 1\n---\n", ElementKind.HEADING, "+++\na = 1\n---"),  # YAML's fence closes no TOML
        ("---\na: 1\n+++\n", ElementKind.PARAGRAPH, "a: 1\n+++"),  # nor TOML's a YAML one
    ],
)
def test_no_toml_front_matter_without_exact_fences(text: str, first_kind: ElementKind, first_text: str) -> None:
    doc = parse_text(text)
    assert _front_matter(text) is None
    assert (doc.elements[0].kind, doc.elements[0].text) == (first_kind, first_text)


def test_plus_fences_later_in_a_document_stay_a_paragraph() -> None:
    doc = parse_text("Intro\n\n+++\na = 1\n+++\n")
    assert [(e.kind, e.pointer, e.text) for e in doc.elements] == [
        (ElementKind.PARAGRAPH, "p1", "Intro"),
        (ElementKind.PARAGRAPH, "p2", "+++\na = 1\n+++"),
    ]


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        ("+++\na = 1\n+++\nBody\n\n# H\n\n" + _TAIL, "+++\nBody", "++++\nBody"),  # the closer grows
        ("+++\na = 1\n+++\nBody\n\n# H\n\n" + _TAIL, "+++\na", "+++ x\na"),  # the opener gets text
        ("+++\na = 1\n\nBody\n\n" + _TAIL, "P20.", "+++"),  # a closer appears far below
        ("+++\na = 1\n\nBody\n\n" + _TAIL, "P20.", "---"),  # a YAML fence closes nothing
        ("++++\na = 1\n++++\nBody\n\n" + _TAIL, "++++\na", "+++\na"),  # the opener becomes exact
    ],
)
def test_an_edit_that_opens_or_closes_toml_front_matter_reparses_as_a_whole_parse(
    text: str, old: str, new: str
) -> None:
    test_an_edit_that_opens_or_closes_front_matter_reparses_as_a_whole_parse(text, old, new)


def test_broken_toml_is_no_data() -> None:
    """Broken TOML reads as broken YAML does (no title, tags or fields, the body still counts):
    ``load_toml`` raises ``ValueError``, nesting past the stack included."""
    assert load_toml('title = "T"\ntags = ["a", "b"]\n[params]\nx = 1\n') == {
        "title": "T",
        "tags": ["a", "b"],
        "params": {"x": 1},
    }
    for broken in ("title = ", "a = 1\na = 2\n", "a = " + "[" * 5_000 + "]" * 5_000):
        with pytest.raises(ValueError):
            load_toml(broken)
