"""Renders a structured lexical query (``query.py``) as FTS5 MATCH expressions.

Every leaf becomes a quoted FTS5 string (``"`` doubled), so user text never
reaches FTS5 syntax: unicode61 reads ``"Rc::strong_count"`` as the phrase
``rc strong count``, exactly as it tokenized the indexed text. A CJK run
becomes its bigrams (``cjk.py``; a single character the prefix ``"字"*``,
which matches every bigram starting with it and the run-final character).
FTS5 cannot weight terms inside MATCH, so leaf weights are ignored here.

An :class:`~.query.AnyOf` with a ``row_budget`` keeps only its rarest
alternatives: FTS5 computes BM25 for every row an OR matches before it can
sort, so the cost grows with the summed posting-list sizes; BM25 weighs the
common words near zero anyway.

Stemming (``stem.py``) runs as a second query over the ``chunks_stems`` table
(the stem of every English word of the chunk):
:func:`render_stems` ORs the stems of the query's one-word terms and the stems
of a hyphenated word's parts as a phrase (:func:`hyphen_stems`), and
:func:`combine_stemmed` ranks by ``bm25(exact) + STEM_WEIGHT * bm25(stems)``.
A separate table, not a third column, because FTS5's BM25 normalises by the
length of the whole row: a stems column made every row longer and cost
opensearch-docs 0.04 nDCG even at stems weight 0. A chunk holding the query
word exactly scores in both lists (the exact-form boost); one holding only an
inflection (``echoes`` for ``echoing``) in the stems list alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise

from .cjk import bare, bigrams, fold, word_spans, word_tokens
from .query import AllOf, AnyOf, CjkRun, LexicalQuery, Phrase, Prefix, Term
from .stem import is_stemmable, query_stems, stem

__all__ = [
    "STEM_BUDGET",
    "STEM_DEPTH",
    "STEM_WEIGHT",
    "Atom",
    "combine_stemmed",
    "hyphen_stems",
    "quote_phrase",
    "rarest_within",
    "render_match",
    "render_stems",
    "stem_counts",
    "stem_key",
    "stem_prices",
]

STEM_WEIGHT = 0.25  # the stems list's share of the combined BM25 (decision 180)
STEM_BUDGET = 2_000  # the stems query's row budget (render_stems; decision 180)
STEM_DEPTH = 100  # rows of each list (exact, stems) combined
COMMON_TERM_MIN_CHUNKS = 256  # a store's term_stats snapshot keeps the terms found in more chunks than this
_HYPHENS = frozenset("-\u2010\u2011")  # what joins a hyphenated word: hyphen-minus, hyphen, non-breaking hyphen


# One FTS5 operand and the unicode61 tokens whose posting lists it reads (empty: unknown cost).
Atom = tuple[str, tuple[str, ...]]
Frequencies = Callable[[list[str]], dict[str, int]]


def quote_phrase(text: str) -> str:
    """``text`` as one FTS5 string (a phrase of its tokens), its letters rewritten as the indexed
    text's were (``cjk.fold``: FTS5 tokenizes the string itself, without that rewrite)."""
    return '"' + fold(text).replace('"', '""') + '"'


def _tokens(text: str) -> tuple[str, ...]:
    """The index's tokens of a leaf (``cjk.word_tokens``, folded as FTS5 folds them): what a row
    budget prices it by and what is stemmed (``café`` is priced as ``cafe``; decision 372)."""
    return tuple(word_tokens(text))


def hyphen_stems(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(stems, tokens)`` of a word whose parts are joined by single hyphens (``fine-tuned`` ->
    ``fine tune``): the English stems of its stemmable parts, which the stems list matches as a
    phrase, and those parts (what the phrase is priced by). A part too short to stem (``in`` of
    ``point-in-time``) is not in the stems table, so the phrase skips it there too. Nothing for
    another punctuated piece (``Rc::strong_count``, ``knn_vector`` stay identifiers, matched as
    written) or one with fewer than two stemmable parts (``k-NN``, ``re-index``: one common part
    alone would match every chunk holding it; decision 1017)."""
    spans = word_spans(text)
    joints = (text[end:start] for (_, end, _), (start, _, _) in pairwise(spans))
    if len(spans) < 2 or any(joint not in _HYPHENS for joint in joints):
        return (), ()
    parts = tuple(token for _, _, token in spans if is_stemmable(token))
    return (tuple(stem(t) for t in parts), parts) if len(parts) > 1 else ((), ())


def _atoms(node: LexicalQuery, frequencies: Frequencies) -> list[Atom]:
    """The operands ``node`` contributes to the group around it."""
    if isinstance(node, Term):
        return [(quote_phrase(node.text), _tokens(node.text))]
    if isinstance(node, Phrase):
        text = " ".join(node.words)
        return [(quote_phrase(text), _tokens(text))]
    if isinstance(node, Prefix):
        return [(quote_phrase(node.text) + "*", ())]
    if isinstance(node, CjkRun):
        letters = bare(node.text)
        if len(letters) == 1:
            return [(quote_phrase(letters) + "*", ())]  # a prefix: no single posting list to look up
        return [(quote_phrase(b), (b,)) for b in bigrams(node.text)]
    rendered = _render_group(node, frequencies)
    return [] if rendered is None else [(f"({rendered})", ())]


def _render_group(group: AllOf | AnyOf, frequencies: Frequencies) -> str | None:
    atoms: list[Atom] = []
    seen: set[str] = set()
    for child in group.children:
        for atom in _atoms(child, frequencies):
            if atom[0] not in seen:
                seen.add(atom[0])
                atoms.append(atom)
    if not atoms:
        return None
    if isinstance(group, AllOf):
        return " AND ".join(a for a, _ in atoms)
    if group.row_budget is not None and len(atoms) > group.keep_at_least:
        atoms = _within_budget(atoms, group.row_budget, group.keep_at_least, frequencies)
    return " OR ".join(a for a, _ in atoms)


def _within_budget(atoms: list[Atom], budget: int, keep: int, frequencies: Frequencies) -> list[Atom]:
    """The rarest atoms whose chunk counts add up to at most ``budget`` (at least ``keep`` stay);
    an atom without tokens of its own (a prefix) counts as the whole budget."""
    df = frequencies(sorted({t for _, tokens in atoms for t in tokens}))
    kept = rarest_within([min((df.get(t, 0) for t in tokens), default=budget) for _, tokens in atoms], budget, keep)
    return [atom for i, atom in enumerate(atoms) if i in kept]


def rarest_within(counts: Sequence[int], budget: int, keep: int) -> set[int]:
    """The indexes of the rarest ``counts`` (chunk counts) that add up to at most ``budget``,
    at least ``keep`` of them that the index holds whatever they add up to: the row budget of an
    OR, the same cut in both storage adapters (the PostgreSQL ranking applies it to its own
    phrases). An alternative in no chunk costs nothing and is kept, but takes none of the
    ``keep`` places: a typo must not push out a word the query would otherwise keep (decision
    374)."""
    kept: set[int] = set()
    total = held = 0
    for count, i in sorted((count, i) for i, count in enumerate(counts)):
        if held >= keep and total + count > budget:
            break
        kept.add(i)
        total += count
        held += count > 0
    return kept


def render_match(query: LexicalQuery, frequencies: Frequencies) -> str | None:
    """The MATCH expression for ``query`` (``None`` when nothing in it is searchable).
    ``frequencies`` maps unicode61 tokens to chunk counts (for row budgets)."""
    if isinstance(query, AllOf | AnyOf):
        return _render_group(query, frequencies)
    atoms = _atoms(query, frequencies)
    return " AND ".join(a for a, _ in atoms) if atoms else None


def render_stems(query: LexicalQuery, frequencies: Frequencies, budget: int | None = None) -> str | None:
    """The MATCH expression over the stems table: ``query`` with every one-word English term
    replaced by its stem and every hyphenated one by the phrase of its parts' stems
    (:func:`hyphen_stems`; ``None`` when nothing in it can match by stem). Inside
    :class:`~.query.AnyOf` other leaves drop out (they match in the exact table only);
    an :class:`~.query.AllOf` holding one makes its group exact-only. ``budget``: as
    :class:`~.query.AnyOf`'s row budget of a top-level OR, counted with the words' exact
    chunk counts (the stems table's are not kept): the stems of the commonest words go
    first, their BM25 weight being small anyway, and unlike the exact query's none has to
    stay (decision 261): the stems list only adds inflections to what the exact list found,
    and one very common stem (``use`` on a 50k-chunk Rust index) cost 28 ms alone."""
    if isinstance(query, AllOf | AnyOf):
        atoms: list[Atom] = []
        for child in query.children:
            if isinstance(child, Term):
                tokens = _tokens(child.text)
                # an AND keeps the English stem only (query_stems gives one): a term is one operand there
                language = child.language if isinstance(query, AnyOf) else "en"
                if len(tokens) == 1:
                    rendered = [quote_phrase(s) for s in query_stems(tokens[0], language, child.text)]
                else:
                    stems, tokens = hyphen_stems(child.text)
                    rendered = [quote_phrase(" ".join(stems))] if stems else []
            else:
                tokens = ()
                inner = render_stems(child, frequencies) if isinstance(child, AllOf | AnyOf) else None
                rendered = [] if inner is None else [f"({inner})"]
            if not rendered:
                if isinstance(query, AllOf):
                    return None
                continue
            for one in rendered:  # a word of another language: its English stem OR its own (decision 518)
                if one not in {a for a, _ in atoms}:
                    atoms.append((one, tokens))
        if not atoms:
            return None
        if isinstance(query, AllOf):
            return " AND ".join(a for a, _ in atoms)
        if budget is not None:
            atoms = _within_budget(atoms, budget, 0, frequencies)
        return " OR ".join(a for a, _ in atoms) if atoms else None
    if isinstance(query, Term):  # a query of one word: its English stem OR its language's (decision 1192)
        return render_stems(AnyOf((query,)), frequencies)
    return None


def stem_key(token: str) -> str | None:
    """What a token's stem is priced under (``None``: not stemmed): its English stem."""
    return stem(token) if is_stemmable(token) else None


def stem_counts(forms: Iterable[tuple[str, int]]) -> dict[str, int]:
    """The chunk counts of the common tokens ``forms`` (token, chunk count: those of a store's
    term snapshot, in more than :data:`COMMON_TERM_MIN_CHUNKS` chunks) added up per stem: what
    the stems query prices its alternatives by (decision 636), the same in both adapters. A sum
    over-counts the chunks holding two forms, which only makes a common stem look a little more
    common; a token's own count alone under-counted ten times over (``collect``: 567 chunks of
    50,000, its stem in 4,374), so a stems query meant to score :data:`STEM_BUDGET` rows scored
    10,000."""
    out: dict[str, int] = {}
    for token, count in forms:
        key = stem_key(token)
        if key is not None:
            out[key] = out.get(key, 0) + count
    return out


def stem_prices(tokens: Iterable[str], counts: Mapping[str, int], stems: Mapping[str, int]) -> dict[str, int]:
    """The price of each of ``tokens`` in the stems query: the larger of its own chunk count
    (``counts``) and its stem's (``stems``, from :func:`stem_counts`); tokens at 0 left out."""
    out = dict(counts)
    for token in tokens:
        key = stem_key(token)
        if key is not None and stems.get(key, 0) > out.get(token, 0):
            out[token] = stems[key]
    return out


def combine_stemmed(
    exact: list[tuple[int, float]], stemmed: list[tuple[int, float]], depth: int
) -> list[tuple[int, float]]:
    """Row ids by ``bm25(exact) + STEM_WEIGHT * bm25(stems)`` (bm25 is negative: lower is better).
    A row missing from a list that was cut at ``depth`` scores that list's last score there
    (it ranked below it); from a list that was not cut, 0 (it does not match)."""

    def floor(rows: list[tuple[int, float]]) -> float:
        return rows[-1][1] if len(rows) >= depth else 0.0

    e, s = dict(exact), dict(stemmed)
    fe, fs = floor(exact), floor(stemmed)
    score = {rid: e.get(rid, fe) + STEM_WEIGHT * s.get(rid, fs) for rid in (*e, *s)}
    return sorted(score.items(), key=lambda kv: (kv[1], kv[0]))
