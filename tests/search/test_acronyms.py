"""Acronyms (decision 1018): an acronym alone finds the page titled with its defined name."""

from __future__ import annotations

import time
from pathlib import Path

from kb_fakes import indexed_kb

from local_vector_search_mcp.index.port import ChunkHit
from local_vector_search_mcp.search.acronyms import acronym, expansions


def hit(cid: int, text: str, heading: str = "H") -> ChunkHit:
    return ChunkHit(cid, f"p{cid}.md", f"1.p{cid}~0~0", heading, text, "s" * 64)


def test_only_an_upper_case_token_of_two_to_six_is_an_acronym() -> None:
    assert acronym(" ISM ") == "ISM"
    assert acronym("K8S") == "K8S"
    for not_one in ("ism", "Ism", "I", "ISMISMX", "ISM policies", "8K", "A1", "SHA-512", ""):
        assert acronym(not_one) is None, not_one


def test_the_name_is_the_words_before_the_parenthesis_whose_initials_spell_it() -> None:
    hits = [
        hit(1, "Use Index State Management (ISM) to automate periodic tasks."),
        hit(2, "Cross-cluster replication (CCR) and index state management (ISM) work together."),
        hit(3, "Internal Service Mesh (ISM) is not this."),
        hit(4, "The ISM plugin (ISM) runs a job."),  # initials are not ISM: no name
    ]
    assert expansions("ISM", hits) == ["Index State Management", "Internal Service Mesh"]
    assert expansions("CCR", hits) == ["Cross cluster replication"]
    assert expansions("UBI", hits) == []


def test_definitions_are_read_in_linear_time_in_a_long_word() -> None:
    # a definition may start only where a word does: from inside a 20k-character run every start
    # read to its end and back (13 s; 40k took 53 s)
    started = time.perf_counter()
    assert expansions("ISM", [hit(1, "ISM data: " + "A" * 40_000 + " Index State Management (ISM)")]) == [
        "Index State Management"
    ]
    assert time.perf_counter() - started < 1.0


def test_an_acronym_alone_finds_the_page_titled_with_its_name_before_pages_dense_with_it(tmp_path: Path) -> None:
    overview = (
        "# Index State Management\n\nAutomate periodic administrative operations on your indexes: "
        "rollovers, deletions and moves to warm storage happen when your conditions are met.\n"
    )
    parts = {
        f"ism{i}.md": f"# ISM part {i}\n\nThe ISM API: ISM policies, ISM jobs and ISM states (ISM).\n" for i in range(4)
    }
    intro = "# Plugins\n\nIndex State Management (ISM) manages indexes for you.\n"
    svc = indexed_kb(tmp_path, {"overview.md": overview, "intro.md": intro, **parts})
    top = svc.search(query="ISM", mode="lexical", top_k=3)["results"]
    assert top[0]["path"] == "overview.md"
    # the same word not written as an acronym is plain BM25: the pages that say it most
    plain = svc.search(query="ism", mode="lexical", top_k=3)["results"]
    assert plain[0]["path"].startswith("ism")
