from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.index.cjk import word_tokens
from local_vector_search_mcp.index.coverage import (
    _ACCENT_LEADS,
    _ACCENTED,
    _holds,
    coverage,
    coverage_words,
    rarity_weights,
    rescore,
)
from local_vector_search_mcp.index.query import AnyOf, CjkRun, Phrase, Term


def words(*texts: str):
    return coverage_words(AnyOf(tuple(Term(t) for t in texts)))


def test_a_word_counts_exactly_or_by_stem_as_a_whole_token():
    w = words("replicas", "indexes", "echoing")
    assert coverage(w, "Set the number of replicas.") == 1 / 3
    assert coverage(w, "Each index keeps one replica; echo it.") == 1.0  # stems: replica, index, echo
    # inside another token it does not count (prefix of a longer word with another stem, or mid-word)
    assert coverage(w, "replicationfactor; reindexing; xecho") == 0.0
    assert coverage(w, "REPLICAS") == 1 / 3  # case-insensitive


def test_a_punctuated_term_needs_all_its_tokens_and_words_are_counted_once():
    w = words("read-only", "disk", "disk?", "(disk)")
    assert len(w) == 2
    assert coverage(w, "The disk is read only now") == 1.0
    assert coverage(w, "The disk is read") == 0.5


def test_only_plain_terms_count():
    q = AnyOf((Term("shard"), Phrase(("shard", "stuck")), CjkRun("组件")))
    assert [tuple(x.token for x in term) for term in coverage_words(q)] == [("shard",)]
    assert coverage((), "anything") == 1.0


def test_rescore_scales_bm25_by_coverage_and_sorts_lower_first():
    scored = [(1, -10.0), (2, -6.0), (3, -6.0)]
    assert rescore(scored, [0.25, 1.0, 1.0], 1.0) == [(2, -6.0), (3, -6.0), (1, -2.5)]
    assert rescore(scored, [0.25, 1.0, 0.5], 0.0) == scored  # exponent 0: plain bm25


def test_words_and_texts_are_folded_as_the_index_folds_them():
    """A question typed without accents covers the chunk FTS5 matched it to (decision 372)."""
    for typed in (("creme", "brulee", "order"), ("CRÈME", "Brûlée", "order"), ("crème", "brûlée", "order")):
        assert coverage(words(*typed), "Un café crème. Crème brûlée au dessert.") == 2 / 3, typed
    assert coverage(words("noel"), "Noe\u0308l") == 1.0  # a decomposed accent


def test_a_share_by_rarity_weighs_each_word_by_its_idf():
    """Decision 1070: a word in 1 of 100 chunks counts far more than one in 90 of them; a word
    the index does not hold counts as the rarest; a term of several tokens adds theirs."""
    w = words("cron", "old", "read-only", "zzz")
    seen: list[str] = []

    def frequencies(tokens):
        seen.extend(tokens)
        return {"cron": 1, "old": 90, "read": 9, "only": 9}, 100

    weights = rarity_weights(w, frequencies)
    assert seen == ["cron", "old", "read", "only", "zzz"]
    idf = [math.log1p(100 / 2), math.log1p(100 / 91), 2 * math.log1p(100 / 10), math.log1p(100 / 1)]
    assert weights == tuple(idf)
    assert coverage(w, "Run it from cron.", weights) == idf[0] / sum(idf)
    assert coverage(w, "Old data, read only.", weights) == (idf[1] + idf[2]) / sum(idf)
    assert coverage(w, "Run it from cron.") == 1 / 4  # without weights every word counts once
    assert coverage(w, "nothing", weights) == 0.0


def _reference_coverage(words, text: str) -> float:
    """Coverage as decisions 220 and 44fe198f's accent rule define it, without 1110's shortcuts: the
    whole text lower-cased by ``str.lower()``, the folded tokens compared when a word is missing
    and the text holds an accented character. (Not for every missing word: the folded tokens also
    split ``_replica``, which the shipped rule never counts for ``replica`` in a text without
    accents, so that reference failed whenever Hypothesis drew ``_`` before a word.)"""
    lowered, folded = text.lower(), " ".join(word_tokens(text))
    accented = _ACCENTED.search(text) is not None
    held = [
        all(_holds(w, lowered) for w in term) or (accented and all(_holds(w, folded) for w in term)) for term in words
    ]
    return sum(held) / len(words)


# letters whose case str.lower() and bytes.lower() fold differently (É, Σ, Ж, the Kelvin sign, İ),
# accents, a curly quote, and the pieces of the words looked for
_PIECES = ["replica", "REPLICAS", "index", "Echo", "try", "tries", "trying", "café", "crème", "CRÈME", "Crème"]
_CHARS = ["É", "Σ", "Ж", "ж", "\u212a", "\u0130", "\u0301", "’", " ", "-", "_", "x", "9", "\n"]


@given(
    st.lists(st.sampled_from(_PIECES + _CHARS), max_size=30),
    st.lists(st.sampled_from([*_PIECES, "k", "i"]), min_size=1, max_size=5),
)
def test_the_shortcuts_give_the_share_the_plain_rule_gives(pieces, typed):
    """The non-ASCII text lowered through its bytes for ASCII words and the accent scan over its
    bytes are shortcuts: every share equals the plain rule's."""
    w = words(*typed)
    text = "".join(pieces)
    assert coverage(w, text) == _reference_coverage(w, text)


def test_the_byte_scan_flags_every_character_the_accent_class_holds():
    """The byte table is derived from its own list of code points: whatever the class holds (a
    letter added to ``cjk.fold``'s rewrites included) must start with a flagged byte."""
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000 or not _ACCENTED.match(chr(code)):
            continue
        assert _ACCENT_LEADS[chr(code).encode()[0]], hex(code)
