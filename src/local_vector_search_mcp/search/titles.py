"""Title match: a short query that is a document's title finds that document first (decision 260).

Agents often search for a topic by its name (``segment replication``, ``point
in time``, ``hybrid search``). BM25 ranks such a query's words highest in
short chunks that mention them in passing (a settings table row, a "Next
steps" link list), while the page *about* the topic, whose title is exactly
the query, has a longer opening section and lands at rank 20-60 on a large
tree (opensearch-docs). A title is the author's own summary of a page, so a
query equal to it is the strongest lexical evidence there is: the first chunk
of every document whose title (its first top-level heading) has exactly the
query's words goes ahead of the other lexical hits (the document with the best-ranked lexical hit
first).

Words are compared as the index's tokens (``cjk.word_tokens``: lower-cased, accents
folded, so ``le cafe`` names ``Le café``; a CJK run one word), with heading ids
(``{#custom-id}``) left out; a question never names a title, and a query of
more than :data:`TITLE_MAX_WORDS` words hardly does, so neither asks the store.

Section headings (decision 665). A heading names its section as a title names its page:
``lifetime elision`` is the heading of the section that explains it, while BM25 ranked a
neighbouring section that uses the words more often first. Among the lexical hits, the
best-ranked chunk of each section whose own heading (the last of its heading path) has exactly
the query's words goes ahead of the others, keeping their order (:func:`promote_headed`). Only
for a query of at least :data:`HEADING_MIN_WORDS` words: a one-word heading (``Lifecycle``,
``Examples``, ``响应式``) is an aspect of the page it sits in, and the page about that word is
the one whose title it is. Nothing is asked of the store: a section its words name ranks in the
candidates already (its heading counts twice).

An identifier is the exception (decision 1022): API references give each function, option or
hook a section headed by its name (``setErrorHandler``, ```trustProxy```, ``.hijack()``), the
one place that defines it, while BM25 ranked the examples and migration notes that call it more
densely first. A one-word query that reads as code (``fusion.looks_like_code``: camelCase, a call,
punctuation between word characters) names a section whose own heading is that word and reads as
code too; a heading ``Verbose`` is still an aspect for ``--verbose``. The entry may be headed by
the name qualified and with its signature (decision 1049): ``undici.setGlobalDispatcher(dispatcher)``,
``new Client(url[, options])``, ``Static method: Response.redirect(url[, status])`` are the entries
of ``setGlobalDispatcher``, ``Client`` and ``Response.redirect``: a heading that is one name written
as code (dotted, with an optional call signature, ``new`` or a ``Label:`` before it) names a query
that is that name or its last parts (:func:`code_name`).

A heading also names its section when it says the query's words inflected or with stop words
between them (decision 1039): ``git url dependencies`` names ``Git URLs as Dependencies``. Both
sides are then compared as their content words (:func:`content_words`: English stop words left
out, each word by its English stem), which must be the same, in the same order, and at least
:data:`HEADING_MIN_WORDS`: a heading with a word more is about something narrower, and one with
the words turned round often about something else (``tuple structs`` is not ``Structs and
Tuples``, ``string slices`` not ``Slicing Strings``). Only for ASCII words on both sides; a CJK
run, another script, or a piece written as code is only ever named exactly.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from ..index.cjk import word_tokens
from ..index.port import ChunkHit, IndexStore
from ..index.query import AnyOf, PathScope, Phrase, Term
from ..index.stem import stem
from ..markdown.pointers import FRONT_MATTER
from .fusion import looks_like_code
from .stopwords import ENGLISH

__all__ = [
    "HEADING_ID",
    "HEADING_MIN_WORDS",
    "TITLE_DEPTH",
    "TITLE_MAX_WORDS",
    "code_name",
    "content_words",
    "front_matter_titled",
    "headed_hits",
    "own_heading_words",
    "promote_headed",
    "promote_titles",
    "title_words",
    "titled_by_content",
    "titled_hits",
]

TITLE_MAX_WORDS = 8
HEADING_MIN_WORDS = 2  # a section heading of one word names an aspect, not a topic
TITLE_DEPTH = 200  # documents whose heading path begins with the words, looked at per query

HEADING_SEPARATOR = " > "  # between the headings of a heading path
# a heading's own id in an attribute block: ``{#id}`` (VitePress, Pandoc), ``{: #id }`` and ``{ #id .class }``
# (Python-Markdown's attr_list, MkDocs); the same blocks graph.py reads the id from (decision 1062).
# The lookahead first makes sure the block closes: without it, every ``#`` of an unclosed block was
# read to the heading's end and back (a 16 KB ``{#aaa...`` heading took 0.35 s, on every search).
HEADING_ID = re.compile(r"\{(?=[^{}]*\})[^{}]*?#[^\s{}#][^{}]*\}")
# One name written as code, as an API reference heads its entry: an optional label (``Class:``,
# ``Static method:``) or ``new``, a dotted, ``#`` or ``::`` qualified name, an optional call signature
# whose parentheses nest at most once (``fetch(input[, init])``, ``Toast({content, icon})``), so that
# ``setTimeout() and clearTimeout()`` is two names, not one with a long signature.
_CODE_NAME = re.compile(
    r"(?:[A-Z][a-z]+(?: [a-z]+)?:\s*)?(?:new\s+)?\.?"
    r"(?P<name>[A-Za-z_$][\w$]*(?:(?:\.|#|::)[A-Za-z_$][\w$]*)*)"
    r"\s*(?:\((?:[^()]|\([^()]*\))*\))?"
)
_NAME_SEPARATOR = re.compile(r"\.|#|::")


def title_words(text: str) -> tuple[str, ...]:
    """The words a title match compares: the index's folded tokens, heading ids left out."""
    return tuple(word_tokens(HEADING_ID.sub(" ", text)))


def titled_hits(store: IndexStore, query: str, scope: PathScope | None) -> list[ChunkHit]:
    """The first chunk of each document whose top-level heading is exactly ``query``'s words."""
    words = title_words(query)
    if not words or len(words) > TITLE_MAX_WORDS:
        return []
    return [
        hit
        for hit in store.titled(words, TITLE_DEPTH, scope)
        if title_words((hit.heading_path or "").split(HEADING_SEPARATOR, 1)[0]) == words
    ]


_CHUNK_PAGE = 200  # a page's chunks read at a time to find its top-level sections
# A front matter's ``title:`` line (YAML: a plain, single- or double-quoted scalar on one line).
_FRONT_MATTER_TITLE = re.compile(r"^title[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def front_matter_titled(
    store: IndexStore, query: str, scope: PathScope | None, seen: Collection[str] = ()
) -> list[ChunkHit]:
    """The first chunk of the text of each document (not in ``seen``) whose front matter says
    ``title:`` exactly ``query``'s words (decision 1081). Jekyll, Hugo, Docusaurus and the npm
    CLI's docs title a page there and open its text with a lower heading (``### Description``), so
    :func:`titled_hits` never sees the title; the front matter is its own chunk, found by the
    phrase ``title <words>``. A page under one top-level heading has that heading for its title,
    whatever its front matter says (opensearch-docs' ``Point in Time API`` and ``Model guardrails
    tutorials`` are ``Point in Time`` and ``Model guardrails`` there, the navigation's labels), so
    only a page with several top-level sections or none is named by its front matter; the caller
    ranks these after :func:`titled_hits`'."""
    words = title_words(query)
    if not words or len(words) > TITLE_MAX_WORDS:
        return []
    seen = set(seen)
    out: list[ChunkHit] = []
    for hit in store.lexical(Phrase(("title", *words)), TITLE_DEPTH, scope):
        if hit.path in seen or hit.anchor.split("~", 1)[0] != FRONT_MATTER:
            continue
        values = (v.strip("'\"") for v in _FRONT_MATTER_TITLE.findall(hit.text))
        if any(title_words(v) == words for v in values):
            seen.add(hit.path)
            out += _page_start(store, hit.path, words, scope)
    return out


def _page_start(store: IndexStore, path: str, words: tuple[str, ...], scope: PathScope | None) -> list[ChunkHit]:
    """The first chunk of ``path``'s first section (of a page without headings, its best chunk
    for ``words``, its front matter only when that holds all its text), or nothing when every
    section of it is under one top-level heading (its chunks' pointers start with one section
    number: ``1.p1``, ``1.2.li3``; text before it, ``p1``, aside), which is then its title."""
    tops: dict[str, str] = {}  # section number -> its heading, in order
    after = None
    while len(tops) < 2:
        chunks = store.markdown_chunks(path, after, _CHUNK_PAGE)
        for c in chunks:
            top = str(c.metadata.get("pointer") or "").split("~", 1)[0].split(".", 1)[0]
            if top.isdigit():
                tops.setdefault(top, str(c.metadata.get("headingPath") or "").split(HEADING_SEPARATOR, 1)[0])
        if len(chunks) < _CHUNK_PAGE:
            break
        after = (path, chunks[-1].chunk_index)
    within = PathScope.within(scope, path)
    if not tops:
        best = store.lexical(AnyOf(tuple(Term(w) for w in words)), 2, within)
        return [h for h in best if h.anchor.split("~", 1)[0] != FRONT_MATTER][:1] or best[:1]
    if len(tops) == 1:
        return []
    heading = title_words(next(iter(tops.values())))
    return [h for h in store.titled(heading, 1, within) if h.path == path][:1] if heading else []


def titled_by_content(
    store: IndexStore, query: str, hits: Sequence[ChunkHit], scope: PathScope | None
) -> list[ChunkHit]:
    """The first chunk of each document among ``hits`` whose title has ``query``'s content words
    in the same order, at least :data:`HEADING_MIN_WORDS` (``configure environments`` names
    ``Configuring Environments``; decision 1063), as 1039 names a section; the exact titles
    (:func:`titled_hits`) are the caller's. One store look-up per such document: its title's own
    words, within its path."""
    content = content_words(query) if len(title_words(query)) <= TITLE_MAX_WORDS else None
    if content is None or len(content) < HEADING_MIN_WORDS:
        return []
    out: list[ChunkHit] = []
    seen: set[str] = set()
    for h in hits:
        if h.path in seen:
            continue
        seen.add(h.path)
        title = (h.heading_path or "").split(HEADING_SEPARATOR, 1)[0]
        if content_words(title) != content:
            continue
        first = store.titled(title_words(title), 1, PathScope.within(scope, h.path))
        out += [hit for hit in first if hit.path == h.path][:1]
    return out


def own_heading_words(heading_path: str | None) -> tuple[str, ...]:
    """The :func:`title_words` of the last heading of ``heading_path`` (the section's own)."""
    return title_words((heading_path or "").rsplit(HEADING_SEPARATOR, 1)[-1])


def content_words(text: str) -> tuple[str, ...] | None:
    """The English stems of ``text``'s words other than stop words (``Git URLs as Dependencies``
    -> ``git``, ``url``, ``depend``), in order, heading ids left out; ``None`` unless every word
    is ASCII (once folded) and no piece reads as code: a stem means nothing for a CJK run or
    another script, and an identifier is spelled, not inflected."""
    # titles and headings recur from query to query and stemming them is most of the cost; a long
    # one is rare and would hold its text in the cache
    return _cached_content_words(text) if len(text) <= _CACHED_MAX else _content_words(text)


_CACHED_MAX = 300  # characters of a heading whose content words are cached


def _content_words(text: str) -> tuple[str, ...] | None:
    text = HEADING_ID.sub(" ", text)
    words = title_words(text)
    if not words or not all(w.isascii() for w in words) or any(looks_like_code(p) for p in text.split()):
        return None
    return tuple(stem(w) for w in words if w not in ENGLISH)


_cached_content_words = lru_cache(maxsize=8192)(_content_words)


def code_name(text: str) -> tuple[str, ...] | None:
    """The parts of the one name ``text`` is, written as code (see :data:`_CODE_NAME`), folded as
    the index's tokens: ``undici.setGlobalDispatcher(d)`` -> ``undici``, ``setglobaldispatcher``;
    ``Rc::strong_count`` -> ``rc``, ``strong count``. ``None`` when ``text`` is anything else
    (prose, two names, a bare word, which is no code)."""
    text = HEADING_ID.sub(" ", text).replace("`", "").strip()
    match = _CODE_NAME.fullmatch(text)
    if match is None or not any(looks_like_code(p) for p in text.split()):
        return None
    # each part whole (``strong_count`` one part): a query's parts must be the heading's last ones
    return tuple(" ".join(title_words(part)) for part in _NAME_SEPARATOR.split(match["name"]))


def headed_hits(hits: Sequence[ChunkHit], query: str) -> list[ChunkHit]:
    """The best-ranked chunk among ``hits`` of each section whose own heading is exactly
    ``query``'s words, or the same :func:`content_words` (``hits`` best first; none for a long
    query, nor for a one-word query unless it is an identifier headed by its name:
    :func:`_names_identifier`)."""
    words = title_words(query)
    identifier = len(words) == 1 and _is_identifier(query)
    asked = code_name(query) if _is_identifier(query) else None
    if not (identifier or asked or HEADING_MIN_WORDS <= len(words) <= TITLE_MAX_WORDS):
        return []
    content = None if identifier else content_words(query)
    if content is not None and len(content) < HEADING_MIN_WORDS:
        content = None
    seen: set[tuple[str, str]] = set()
    out = []
    for h in hits:
        section = (h.path, h.heading_path or "")
        if section in seen:
            continue
        if (
            _heading_names(h.heading_path, words, content) and (not identifier or _names_identifier(h.heading_path))
        ) or (asked is not None and _defines(h.heading_path, asked)):
            seen.add(section)
            out.append(h)
    return out


def _heading_names(heading_path: str | None, words: tuple[str, ...], content: tuple[str, ...] | None) -> bool:
    """Whether the section's own heading has exactly ``words``, or its content words are
    ``content`` (when the query has some worth comparing)."""
    if own_heading_words(heading_path) == words:
        return True
    return content is not None and content_words((heading_path or "").rsplit(HEADING_SEPARATOR, 1)[-1]) == content


def _is_identifier(query: str) -> bool:
    """Whether ``query`` is one piece written as code (``setErrorHandler``, ``hijack()``)."""
    pieces = query.split()
    return len(pieces) == 1 and looks_like_code(pieces[0])


def _names_identifier(heading_path: str | None) -> bool:
    """Whether the section's own heading is written as code, as an API reference heads the entry
    of a name (``setErrorHandler``, ``.hijack()``); a plain word there (``Lifecycle``) is an aspect
    of its page, not a definition (decision 665)."""
    return _is_identifier(_own_heading(heading_path))


def _defines(heading_path: str | None, asked: tuple[str, ...]) -> bool:
    """Whether the section's own heading is the entry of the name whose parts are ``asked``: one
    name written as code ending with those parts (``undici.setGlobalDispatcher(dispatcher)`` for
    ``setGlobalDispatcher`` or ``undici.setGlobalDispatcher()``; decision 1049)."""
    defined = code_name(_own_heading(heading_path))  # ``asked`` is never empty: a name has a part
    return defined is not None and defined[-len(asked) :] == asked


def _own_heading(heading_path: str | None) -> str:
    return HEADING_ID.sub(" ", (heading_path or "").rsplit(HEADING_SEPARATOR, 1)[-1])


def promote_headed(hits: Sequence[ChunkHit], query: str) -> tuple[list[ChunkHit], bool]:
    """``hits`` with :func:`headed_hits` first (each group in its own order), and whether any
    section was named."""
    headed = headed_hits(hits, query)
    ids = {h.chunk_id for h in headed}
    return headed + [h for h in hits if h.chunk_id not in ids], bool(headed)


def promote_titles(hits: Sequence[ChunkHit], titled: Sequence[ChunkHit], limit: int) -> list[ChunkHit]:
    """``titled`` ahead of ``hits``, every chunk once, at most ``limit``. Titled documents are
    ordered by their best-ranked chunk among ``hits`` (a document the query's words find
    nowhere else goes last, in document-id order)."""
    if not titled:
        return list(hits[:limit])
    best: dict[str, int] = {}
    for i, h in enumerate(hits):
        best.setdefault(h.path, i)
    first = sorted(titled, key=lambda h: (best.get(h.path, len(hits)), h.chunk_id))
    ids = {h.chunk_id for h in first}
    return (first + [h for h in hits if h.chunk_id not in ids])[:limit]
