"""Acronyms: a query that is an acronym alone finds the page its expansion titles (decision 1018).

Agents search a topic by its acronym (``ISM``, ``UBI``, ``RRF``) as often as by its
name, but the page about it is titled with the name (``Index State Management``)
and mentions the acronym less densely than the pages of its parts (``ISM
policies``, ``ISM API``), so BM25 ranked the overview below rank 8 on
opensearch-docs. Docs define an acronym where they introduce it, as the words
before it in parentheses (``Index State Management (ISM)``); the lexical hits of
the acronym hold such definitions. The definitions found there (the words whose
initials spell the acronym, case-insensitive; a hyphen splits words, so
``Cross-cluster replication (CCR)`` counts) give the name, most often defined
first, and a document titled exactly with it is a title match (``titles.py``).

Only a query that is one upper-case token of two to six letters or digits, letters
first (``ISM``, ``K8S``), is read as an acronym: ``ism`` or ``Ism`` may be a word.
Nothing is guessed: a name no hit defines expands to nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ..index.port import ChunkHit
from .titles import title_words

__all__ = ["MAX_EXPANSIONS", "acronym", "expansions"]

MAX_EXPANSIONS = 2  # names looked up as titles per acronym: a second sense at most
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{1,5}")
_WORD_SPLIT = re.compile(r"[\s\-\u2010\u2011]+")  # blanks and hyphens (ASCII, Unicode, non-breaking)


def acronym(query: str) -> str | None:
    """``query`` stripped when it is an acronym alone, else None."""
    text = query.strip()
    if not _ACRONYM.fullmatch(text) or sum(c.isalpha() for c in text) < 2:
        return None
    return text


def _definitions(acronym: str) -> re.Pattern[str]:
    # up to len + 2 words before "(ACR)" on one line: the name, with a few words of the
    # sentence before it that the initials then cut off
    words = len(acronym) + 2
    # the name starts a word (the look-behind): from inside a long run of word characters every
    # start read to its end and back, quadratic in the run (a 40k-character hash took 53 s)
    word = r"[\w'\u2019\-]"
    name = rf"(?<!{word})([^\W\d_]{word}*(?:[ \t]+{word}+){{0,{words}}})"
    return re.compile(rf"{name}[ \t]*\({re.escape(acronym)}\)")


def _named(acronym: str, before: str) -> str | None:
    """The last words of ``before``, one per letter of ``acronym``, when their initials spell it."""
    words = [w for w in _WORD_SPLIT.split(before) if w][-len(acronym) :]
    if len(words) == len(acronym) and "".join(w[0] for w in words).lower() == acronym.lower():
        return " ".join(words)
    return None


def expansions(acronym: str, hits: Sequence[ChunkHit]) -> list[str]:
    """The names ``hits`` (best first) define ``acronym`` as, most often defined first (ties:
    first seen), at most :data:`MAX_EXPANSIONS`; names equal as title words counted once."""
    pattern = _definitions(acronym)
    counts: Counter[tuple[str, ...]] = Counter()
    spelled: dict[tuple[str, ...], str] = {}
    for hit in hits:
        for m in pattern.finditer(f"{hit.heading_path or ''}\n{hit.text}"):
            name = _named(acronym, m.group(1))
            if name is None:
                continue
            key = title_words(name)
            counts[key] += 1
            spelled.setdefault(key, name)
    ranked = sorted(counts, key=lambda k: -counts[k])  # stable: ties keep first-seen order
    return [spelled[k] for k in ranked[:MAX_EXPANSIONS]]
