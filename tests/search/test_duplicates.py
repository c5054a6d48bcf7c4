from __future__ import annotations

from pathlib import Path

from kb_fakes import KbClient, make_workspace

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.duplicates import collapse, passage_key, sections_first, shown_from_largest


def hit(cid: int, path: str, text: str) -> ChunkHit:
    return ChunkHit(cid, path, f"1.p1~{cid:016x}~{cid:016x}", None, text, "0" * 64)


def test_only_the_same_text_is_the_same_passage():
    assert passage_key("Hello World\n") == passage_key("Hello World")
    assert passage_key("Hello World") != passage_key("hello world")
    assert passage_key("status 404") != passage_key("status 500")
    assert passage_key("a b") != passage_key("a c")


def test_collapse_keeps_the_best_copy_and_fills_the_limit_with_distinct_passages():
    ranked = [
        (hit(1, "a.md", "x"), 3.0),
        (hit(2, "b.md", "x "), 2.0),
        (hit(3, "c.md", "y"), 1.0),
        (hit(4, "d.md", "z"), 0.5),
    ]
    kept = collapse(ranked, 2)
    assert [(c.hit.chunk_id, c.score, [d.chunk_id for d in c.also_in]) for c in kept] == [(1, 3.0, [2]), (3, 1.0, [])]


def test_a_passage_is_shown_from_the_largest_document_holding_it():
    """Decision 1080: the copy in the largest document shows; the best ranked among equally large
    ones; the rest stay in ``also_in`` in rank order; rank and score are the passage's."""
    ranked = [
        (hit(1, "cmd.md", "x"), 3.0),
        (hit(2, "ref.md", "x"), 2.0),
        (hit(3, "other.md", "x"), 1.5),
        (hit(4, "v1.md", "y"), 1.0),
        (hit(5, "v2.md", "y"), 0.5),
        (hit(6, "z.md", "z"), 0.2),
    ]
    kept = collapse(ranked, 3)
    shown_from_largest(kept, {"cmd.md": 100, "ref.md": 5000, "other.md": 300, "v1.md": 800, "v2.md": 800})
    assert [(c.hit.path, c.score, [d.path for d in c.also_in]) for c in kept] == [
        ("ref.md", 3.0, ["cmd.md", "other.md"]),
        ("v1.md", 1.0, ["v2.md"]),  # equally large: the best ranked
        ("z.md", 0.2, []),
    ]


def test_an_option_copied_into_a_command_page_is_found_on_the_reference_page(tmp_path: Path):
    """npm's docs: every option's section is in ``config.md``, and each command's page repeats the
    sections of the options it takes; the short command page ranked first."""
    root = tmp_path / "kb"
    (root / "commands").mkdir(parents=True)
    option = (
        "#### `save-exact`\n\n* Default: false\n\nDependencies saved to package.json are saved with an exact version.\n"
    )
    others = "".join(f"#### `opt-{i}`\n\nOption number {i} changes behaviour {i}.\n\n" for i in range(30))
    (root / "config.md").write_text(f"# config\n\n## Config Settings\n\n{others}{option}", "utf-8")
    (root / "commands" / "npm-install.md").write_text(f"# npm install\n\n### Configuration\n\n{option}", "utf-8")
    svc = KbClient(make_workspace(root))
    svc.reindex()
    top = svc.search(query="save exact version", mode="lexical", top_k=3)["results"]
    assert top[0]["path"] == "config.md" and top[0]["headingPath"] == "config > Config Settings > `save-exact`"
    assert [d["path"] for d in top[0]["alsoIn"]] == ["commands/npm-install.md"]


def test_each_sections_best_chunk_goes_before_any_sections_second():
    """Decision 1082: ten results are ten places; scores stay non-increasing."""

    def sec(cid: int, path: str, heading: str | None) -> ChunkHit:
        return ChunkHit(cid, path, f"1.p{cid}~0~0", heading, f"text {cid}", "0" * 64)

    ranked = [
        (sec(1, "a.md", "A > Setup"), 0.9),
        (sec(2, "a.md", "A > Setup"), 0.8),  # the same section's next chunk
        (sec(3, "b.md", "A > Setup"), 0.7),  # the same heading in another file: another section
        (sec(4, "a.md", "A"), 0.6),
        (sec(5, "a.md", None), 0.5),
        (sec(6, "a.md", None), 0.4),
        (sec(7, "c.md", "C"), 0.3),
    ]
    out = sections_first(ranked)
    assert [h.chunk_id for h, _ in out] == [1, 3, 4, 5, 7, 2, 6]
    assert [s for _, s in out] == [0.9, 0.7, 0.6, 0.5, 0.3, 0.3, 0.3]


def test_a_section_in_two_chunks_takes_one_place_ahead_of_the_next_section(tmp_path: Path):
    root = tmp_path / "kb"
    root.mkdir()
    one, two = (
        " ".join(f"Shadowing lets you reuse the name {i} of a variable." for i in r)
        for r in (range(99), range(99, 198))
    )
    (root / "vars.md").write_text(f"# Variables\n\n## Shadowing\n\n{one}\n\n{two}\n", "utf-8")
    (root / "other.md").write_text("# Other\n\n## Names\n\nEvery name is a label.\n", "utf-8")
    svc = KbClient(make_workspace(root))
    svc.reindex()
    top = svc.search(query="shadowing variable name", mode="lexical", top_k=3)["results"]
    assert [r["headingPath"] for r in top][:2] == ["Variables > Shadowing", "Other > Names"]
