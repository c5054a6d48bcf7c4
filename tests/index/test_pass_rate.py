"""The running pass's time estimate (decision 804)."""

from __future__ import annotations

from local_vector_search_mcp.index.pass_rate import MIN_WATCHED_SECONDS, PassRate


def test_the_estimate_is_the_pending_count_at_the_pace_seen_since_the_pass_was_first_seen() -> None:
    rate = PassRate()
    assert rate.eta_seconds(True, 100, 900, now=1000.0) is None  # first seen: no pace yet
    assert rate.eta_seconds(True, 101, 899, now=1000.0 + MIN_WATCHED_SECONDS / 2) is None  # too short a look
    assert rate.eta_seconds(True, 150, 850, now=1010.0) == 170  # 50 chunks in 10 s: 850 take 170 s
    assert rate.eta_seconds(True, 150, 850, now=1020.0) == 340  # nothing embedded in 10 more s: slower
    assert rate.eta_seconds(True, 1000, 0, now=1100.0) is None  # nothing left
    assert rate.eta_seconds(False, 1000, 0, now=1101.0) is None  # the pass ended: the next one starts afresh
    assert rate.eta_seconds(True, 1000, 500, now=2000.0) is None
    assert rate.eta_seconds(True, 1100, 400, now=2010.0) == 40


def test_a_pass_that_embeds_nothing_or_restarts_its_count_has_no_estimate() -> None:
    rate = PassRate()
    rate.eta_seconds(True, 500, 500, now=0.0)
    assert rate.eta_seconds(True, 500, 500, now=60.0) is None  # a stuck provider: no made-up figure
    assert rate.eta_seconds(True, 0, 1000, now=61.0) is None  # a forced rebuild emptied the vectors
    assert rate.eta_seconds(True, 100, 900, now=71.0) == 90
