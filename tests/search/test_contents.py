"""Tables of contents rank below the sections they list (decisions 1021, 1071)."""

from __future__ import annotations

from pathlib import Path

from kb_fakes import KbClient, make_workspace

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.contents import demote_contents, demote_navigation, is_contents, navigation_targets

CODES = ("FSTDEP005", "FSTDEP007", "FSTDEP010", "FSTDEP012", "FSTDEP013", "FSTDEP019", "FSTDEP022")
CONTENTS = "\n".join(f"- [{code}](#{code.lower()})" for code in CODES)


def hit(cid: int, path: str, text: str = "prose") -> ChunkHit:
    return ChunkHit(cid, path, f"1.p{cid}~0~0", "H", text, "s" * 64)


def test_a_chunk_mostly_of_links_to_its_own_sections_is_a_table_of_contents() -> None:
    assert is_contents(CONTENTS)
    assert is_contents("Warnings\n\n" + CONTENTS.replace("- ", "  * ", 3))  # a title line; nested items
    assert is_contents("1. [Factory](#factory)\n" + CONTENTS)
    three = "Check the cluster:\n- [Version](#version)\n- [Health](#health)\n- [Data](#data)"
    assert not is_contents(three)  # a pointer to a few subsections
    other_pages = CONTENTS.replace("](#", "](errors.md#")
    assert not is_contents(other_pages)  # links to other pages: a "see also"
    assert not is_contents("Some prose.\n" * 6 + CONTENTS)  # a list inside a section's text


def test_a_table_of_contents_goes_right_after_the_last_other_hit_of_its_page() -> None:
    hits = [hit(1, "a.md", CONTENTS), hit(2, "b.md"), hit(3, "a.md"), hit(4, "a.md"), hit(5, "c.md", CONTENTS)]
    assert [h.chunk_id for h in demote_contents(hits)] == [2, 3, 4, 1, 5]  # c.md has nothing else: kept
    assert demote_contents(hits[1:4]) == hits[1:4]


def test_a_code_finds_the_section_that_lists_it_before_the_table_of_contents(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    rows = "\n".join(f"| {code} | Deprecated option number {i}. | Use the new one. |" for i, code in enumerate(CODES))
    warnings = (
        f"# Warnings\n\n{CONTENTS}\n\n## Fastify Deprecation Codes\n\nEach deprecated option or behaviour prints a "
        "warning with one of these codes when it is used for the first time.\n\n"
        f"| Code | Description | How to solve |\n| --- | --- | --- |\n{rows}\n"
    )
    (root / "warnings.md").write_text(warnings, "utf-8")
    svc = KbClient(make_workspace(root))
    svc.reindex()
    top = svc.search(query="FSTDEP022", mode="lexical", top_k=3)["results"]
    assert top[0]["headingPath"] == "Warnings > Fastify Deprecation Codes"


SUMMARY = """# Summary

- [Patterns](ch19-00-patterns.md)
  - [All the Places](ch19-01-places.md)
  - [Refutability](ch19-02-refutability.md#top)
  - [Pattern Syntax](<ch19-03-pattern%20syntax.md>)
- [Advanced Features](../more/ch20-00-advanced.md)
- [The Rust site](https://www.rust-lang.org/)
"""


def test_a_list_of_links_to_other_documents_names_them_relative_to_its_own_folder() -> None:
    assert navigation_targets("book/SUMMARY.md", SUMMARY) == {
        "book/ch19-00-patterns.md",
        "book/ch19-01-places.md",
        "book/ch19-02-refutability.md",
        "book/ch19-03-pattern syntax.md",
        "more/ch20-00-advanced.md",
    }
    assert navigation_targets("a.md", "See [x](x.md) and [y](y.md).") == frozenset()  # prose, not a list
    assert navigation_targets("a.md", "Some prose.\n" * 8 + SUMMARY) == frozenset()  # a list inside a section
    assert navigation_targets("a.md", CONTENTS) == frozenset()  # its own sections: a table of contents


def test_a_navigation_list_goes_right_after_the_last_hit_of_a_document_it_lists() -> None:
    hits = [
        hit(1, "book/SUMMARY.md", SUMMARY),
        hit(2, "other.md"),
        hit(3, "book/ch19-02-refutability.md"),
        hit(4, "book/ch19-00-patterns.md"),
        hit(5, "zzz.md"),
    ]
    assert [h.chunk_id for h in demote_navigation(hits)] == [2, 3, 4, 1, 5]
    alone = [hit(1, "book/SUMMARY.md", SUMMARY), hit(2, "other.md")]
    assert demote_navigation(alone) == alone  # none of its documents found: it stays


def test_a_word_finds_its_chapter_before_the_summary_listing_it(tmp_path: Path) -> None:
    """rust-book's ``Refutability``: the summary's list ranked above the chapter, headed at level 2
    (no page title to name) and long (its BM25 shared out over 4 KB)."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "SUMMARY.md").write_text(SUMMARY, "utf-8")
    body = 12 * "Patterns come in two forms, and each place where a pattern is used accepts only one of them. "
    (root / "ch19-02-refutability.md").write_text(
        f"## Refutability: Whether a Pattern Might Fail to Match\n\n{body}\n", "utf-8"
    )
    for name in ("ch19-00-patterns.md", "ch19-01-places.md"):
        (root / name).write_text(f"## {name}\n\nPatterns are a special syntax for matching values.\n", "utf-8")
    for i in range(30):  # a book's worth of chapters: the word is rare, as in rust-book
        (root / f"ch{i:02}.md").write_text(f"## Chapter {i}\n\nText of chapter {i} about other things.\n", "utf-8")
    svc = KbClient(make_workspace(root))
    svc.reindex()
    top = svc.search(query="Refutability", mode="lexical", top_k=3)["results"]
    assert [r["path"] for r in top][:2] == ["ch19-02-refutability.md", "SUMMARY.md"]
