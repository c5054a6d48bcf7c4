"""The link graph's reading of headings (``index/graph.py``)."""

from __future__ import annotations

import time

from local_vector_search_mcp.index.graph import heading_anchors


def test_a_heading_s_own_id_is_an_anchor_and_a_long_heading_is_read_in_linear_time() -> None:
    """Review of decision 1062: an id block never closed was read each way of splitting the id
    from the rest, so a 64 KB heading ``{#aaa...`` took 5.4 s whenever its page's anchors were read."""
    assert {"v120", "target-dependencies"} <= heading_anchors(
        ["1.2.0 {#v120}", "Dependencies {: #target-dependencies }"]
    )
    headings = ["T {#" + "a" * 64_000, "T {" + "#a" * 32_000, "{#a}" + " " * 64_000 + "x"]
    started = time.perf_counter()
    anchors = heading_anchors(headings)
    assert time.perf_counter() - started < 1.0
    assert "a" not in anchors  # no block closes any of them at the heading's end
