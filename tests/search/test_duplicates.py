from __future__ import annotations

from pathlib import Path

from kb_fakes import KbClient, make_workspace

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.duplicates import collapse, passage_key, shown_from_largest


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
