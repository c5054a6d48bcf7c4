"""Tables of contents rank below the sections they list (decision 1021)."""

from __future__ import annotations

from pathlib import Path

from kb_fakes import KbClient, make_workspace

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.contents import demote_contents, is_contents

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
