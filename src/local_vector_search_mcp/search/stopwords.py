"""Stop words: query words that say how a question is asked, not what it is about.

BM25 gives a word that occurs in half the chunks almost no weight, but it still
lets every chunk holding it into the OR-ed candidate set (cost grows with the
posting lists read) and into the snippet highlights (``[the]``, ``[to]``). The
engine drops these words from a lexical query when other words remain and
keeps them when the query is only stop words (``to be or not to be`` must
still find something). The lists are about query *phrasing*: question words,
auxiliaries, pronouns, articles and prepositions; nothing a technical term
could be (``not``, ``null``, ``all``, ``any``, ``one``, ``first`` stay
searchable, so do all identifiers: a piece with punctuation inside is never a
stop word).

Chinese has no list here: CJK runs are matched as character bigrams, where a
function character (``的``) only ever appears inside a pair.
"""

from __future__ import annotations

__all__ = ["ENGLISH", "is_stop_word"]

_ENGLISH_WORDS = """
    a about above after again against am an and are as at be because been before being below between both but by
    can could did do does doing down during each else ever for from further had has have having he her here hers
    herself him himself his how i i'm if in into is it it's its itself just let me might more most must my myself
    no nor of off on once only or other our ours ourselves out over own same shall she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up upon us
    very was we were what when where whether which while who whom whose why will with within without would you
    your yours yourself yourselves
"""
ENGLISH = frozenset(_ENGLISH_WORDS.split())


# quotes, brackets, backticks and sentence marks around a word; not a sigil (``$i``, ``@when``)
_AROUND = "\"'`()[]{}<>\u2018\u2019\u201c\u201d\u00ab\u00bb\u00bf\u00a1.,;:!?\u2026"


def is_stop_word(piece: str) -> bool:
    """Whether a whitespace-free query piece is a stop word (case-insensitive; quotes, brackets,
    backticks and sentence punctuation around it ignored: ``(the)``, ```a```, ``when?``;
    decision 371)."""
    return piece.strip(_AROUND).lower() in ENGLISH
