"""What kb_search says when its lexical side found nothing (decision 810).

Hybrid search always returns the model's nearest chunks, so a misspelt name or
a word the knowledge base does not use (``zzqxj``, ``stong_count``) came back
as a full page of results that look like answers; only the snippets' missing
highlights hinted that no word had matched. The warning says so, and what to
try, in the words an agent acts on. Lexical mode says the same over its empty
result, so both modes explain an empty lexical side alike. Semantic mode runs
no lexical query and never claims a word matched: it gets no such note.
"""

from __future__ import annotations

__all__ = ["no_match_note"]


def no_match_note(*, has_words: bool, scoped: bool, by_meaning: bool, can_mean: bool) -> str:
    """The note for a search whose lexical side found no chunk.

    ``has_words``: the query holds something lexical search can match (not only punctuation);
    ``scoped``: globs or tags narrowed the search; ``by_meaning``: the results come from the
    model alone (hybrid whose semantic side answered); ``can_mean``: a model is configured, so
    hybrid mode would also match by meaning."""
    if not has_words:
        if by_meaning:
            return (
                "The query holds no word lexical search can match (only punctuation or symbols): these results "
                "are the model's nearest passages by meaning alone."
            )
        meaning = ", or use hybrid mode, which also matches by meaning" if can_mean else ""
        return (
            "The query holds no word lexical search can match (only punctuation or symbols), so nothing was "
            f"found: add a word or a name to it{meaning}."
        )
    where = " among the documents the includeGlobs, excludeGlobs and tags select" if scoped else ""
    widen = "; or widen includeGlobs, excludeGlobs or tags" if scoped else ""
    advice = (
        "check the spelling of names and identifiers, or try the words the documents use (a synonym, the "
        f"full term rather than an abbreviation){widen}"
    )
    if by_meaning:
        # a paraphrase that shares no word with its answer is hybrid's best case: the note says where
        # the results come from and what to try if they miss, not that they are wrong
        return (
            f"No indexed chunk{where} contains any word of the query, so these results are the model's nearest "
            f"passages by meaning alone; if they are not what you meant, {advice}."
        )
    meaning = "; or use hybrid mode, which also matches by meaning" if can_mean else ""
    return f"No indexed chunk{where} contains any word of the query: {advice}{meaning}."
