"""FTS5 MATCH rendering: row budgets of the exact and the stems queries, stems of hyphenated words."""

from __future__ import annotations

import apsw
from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.index.fts5 import render_match, render_stems
from local_vector_search_mcp.index.query import AnyOf, Term
from local_vector_search_mcp.index.stem import stem_index_text


def frequencies(counts: dict[str, int]):
    return lambda tokens: {t: counts[t] for t in tokens if t in counts}


QUESTION = AnyOf((Term("use"), Term("instead"), Term("echoing")), row_budget=2_000)


def test_the_exact_query_keeps_its_two_rarest_words_whatever_they_cost() -> None:
    common = frequencies({"use": 40_000, "instead": 9_000, "echoing": 5_000})
    assert render_match(QUESTION, common) == '"instead" OR "echoing"'


def test_the_stems_query_keeps_only_what_fits_its_budget_and_may_keep_nothing() -> None:
    assert render_stems(QUESTION, frequencies({"use": 40_000, "instead": 9_000, "echoing": 50}), 2_000) == '"echo"'
    assert render_stems(QUESTION, frequencies({"use": 40_000, "instead": 9_000, "echoing": 5_000}), 2_000) is None
    assert render_stems(QUESTION, frequencies({}), 2_000) == '"use" OR "instead" OR "echo"'


def test_a_row_budget_prices_a_word_by_the_index_token():
    """``café`` is the index token ``cafe``: priced by its chunk count, not as absent (decision 372)."""
    from local_vector_search_mcp.index.fts5 import render_match
    from local_vector_search_mcp.index.query import AnyOf, Prefix, Term

    counts = {"cafe": 5, "tea": 1}
    asked: list[str] = []

    def frequencies(tokens: list[str]) -> dict[str, int]:
        asked.extend(tokens)
        return {t: counts[t] for t in tokens if t in counts}

    query = AnyOf((Term("Café"), Term("tea"), Prefix("x")), row_budget=4, keep_at_least=1)
    assert render_match(query, frequencies) == '"tea"'  # café's 5 chunks are over; a prefix costs it all
    assert "cafe" in asked and "café" not in asked


def test_an_absent_word_takes_no_place_the_budget_keeps():
    """Words in no chunk are free and kept, but the two places kept whatever the cost go to words
    the index holds (decision 374): ``typo index settings`` keeps both common words."""
    from local_vector_search_mcp.index.fts5 import rarest_within

    assert rarest_within([0, 25_000, 30_000], 20_000, 2) == {0, 1, 2}
    assert rarest_within([0, 0, 25_000, 30_000, 40_000], 20_000, 2) == {0, 1, 2, 3}
    assert rarest_within([5, 25_000, 30_000], 20_000, 2) == {0, 1}  # as before when every word is held
    assert rarest_within([0, 3], 1, 0) == {0}  # the stems' budget keeps nothing it must


def test_the_stems_query_prices_a_word_by_its_stems_common_forms() -> None:
    """``collect`` is rare as written and common as ``collection``, ``collected``: the stems query
    prices it by its stem's forms (decision 636), and a budget its own count fits drops it."""
    from local_vector_search_mcp.index.fts5 import stem_counts, stem_prices

    forms = [("collection", 3_000), ("collected", 1_200), ("collector", 900), ("colleague", 800), ("~collect", 9)]
    stems = stem_counts(forms)
    assert stems["collect"] == 4_200  # collector's stem is "collector"; "~collect" is no word
    prices = stem_prices(["collect", "map", "mapping"], {"collect": 567, "map": 40}, stems)
    assert prices == {"collect": 4_200, "map": 40}  # an absent word with no common form stays free
    question = AnyOf((Term("collect"), Term("map")), row_budget=2_000)
    assert render_stems(question, frequencies({"collect": 567, "map": 40}), 2_000) == '"collect" OR "map"'
    assert render_stems(question, frequencies(prices), 2_000) == '"map"'


def test_a_hyphenated_word_is_stemmed_as_the_phrase_of_its_parts() -> None:
    """``fine-tuned`` meets ``fine-tuning`` through its parts' stems, adjacent (decision 1017); an
    identifier joined otherwise, or with fewer than two parts long enough to stem, stays exact only."""
    none = frequencies({})
    assert render_stems(AnyOf((Term("fine-tuned"), Term("models"))), none) == '"fine tune" OR "model"'
    assert render_stems(Term("fine-tuned"), none) == '"fine tune"'  # alone: the AND of one term
    assert render_stems(Term("point-in-time"), none) == '"point time"'  # "in" is in no stems row
    assert render_stems(Term('"cross-cluster",'), none) == '"cross cluster"'  # quotes and comma around it
    for identifier in ("k-NN", "re-index", "built-in", "Rc::strong_count", "knn_vector", "title::SHA-512", "a--b"):
        assert render_stems(Term(identifier), none) is None, identifier
    # the phrase is priced by its stemmed parts: over the budget, it goes as a word would
    question = AnyOf((Term("fine-tuned"), Term("echoing")), row_budget=2_000)
    assert render_stems(question, frequencies({"fine": 3_000, "tuned": 2_500, "echoing": 50}), 2_000) == '"echo"'
    assert render_stems(question, frequencies({"fine": 3_000, "tuned": 900, "echoing": 50}), 2_000) == (
        '"fine tune" OR "echo"'
    )


_INFLECTED = [("tune", "tuned", "tuning"), ("index", "indexes", "indexed"), ("model", "models", "modelling")]
_INFLECTED += [("cluster", "clusters", "clustered"), ("search", "searching", "searches"), ("time", "times", "timed")]


@given(
    st.lists(st.sampled_from(_INFLECTED), min_size=2, max_size=4, unique=True),
    st.lists(st.integers(0, 2), min_size=4, max_size=4),
    st.lists(st.integers(0, 2), min_size=4, max_size=4),
    st.sampled_from(["-", " ", "-in-", " a ", "-k-"]),
)
def test_a_hyphenated_query_word_finds_any_inflection_of_its_parts_in_order(
    parts: list[tuple[str, ...]], asked: list[int], written: list[int], between: str
) -> None:
    """The stems expression of a hyphenated query word matches the stems row of a text holding any
    form of its parts in the same order, whatever short word or hyphen stands between them, and
    never the parts in the reverse order."""
    query = "-".join(forms[asked[i]] for i, forms in enumerate(parts))
    text = between.join(forms[written[i]] for i, forms in enumerate(parts))
    backwards = between.join(forms[written[i]] for i, forms in reversed(list(enumerate(parts))))
    c = apsw.Connection(":memory:")
    c.execute("CREATE VIRTUAL TABLE s USING fts5(stems, tokenize='unicode61 remove_diacritics 2')")
    c.executemany(
        "INSERT INTO s(rowid, stems) VALUES(?, ?)", [(1, stem_index_text(text)), (2, stem_index_text(backwards))]
    )
    match = render_stems(Term(query), frequencies({}))
    assert match is not None
    assert [rowid for (rowid,) in c.execute("SELECT rowid FROM s WHERE s MATCH ?", (match,))] == [1]
