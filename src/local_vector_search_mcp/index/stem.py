"""English and Russian stemming shared by every storage adapter's index and query sides.

``echoing`` should meet ``echo`` and ``indexes`` should meet ``index``, but an
identifier must still win where it is written exactly. So stems do not
replace the exact tokens: an adapter indexes the exact tokens as before and,
beside them, the stem of every English or Russian word (a separate FTS5 table in SQLite;
lexemes marked with :data:`STEM_MARK` in PostgreSQL). A query word ``w`` with
stem ``s`` matches ``w`` exactly or ``s`` among the stems, the stems counting
a quarter of the exact tokens (``fts5.STEM_WEIGHT``): a chunk holding ``w``
itself scores in both (the exact-form boost), one holding only ``echoes`` or
``echo`` for ``echoing`` in the stems alone.

Only words of 3 to 40 ASCII letters (the Snowball English stemmer,
``snowballstemmer``; a word written with accents by the form the index folds it to, ``café`` as
``cafe``) or of 3 to 40 letters of the Russian alphabet (the Snowball
Russian stemmer, which also reads ``ё`` as ``е``: ``ёлку`` meets ``елка``;
decision 518) are stemmed; tokens with digits, CJK and other scripts are left alone,
so ``sha512``, ``机器`` or ``v2`` never change. A word's script picks its stemmer:
a Cyrillic word is never English. A Latin word does not tell its language, its
text does: every Latin word has its English stem, and the words of a chunk written
in German, French, Spanish, Portuguese or Italian (:func:`text_language`, by its
function words) also that language's stem, of the word as written and folded as the index folds
its tokens (decision 1192: the French and Portuguese stemmers read the accents); a
query that reads as one of those languages (``search/stopwords.py``) matches the
English stem or its own (:func:`query_stems`). Identifiers written with
punctuation (``Rc::strong_count``) are matched as phrases of exact tokens and
never stemmed on the query side; a word joined by hyphens (``fine-tuned``) also
matches the phrase of its parts' stems (``fts5.hyphen_stems``, decision 1017).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer

__all__ = [
    "LANGUAGES",
    "STEM_MARK",
    "is_stemmable",
    "language_stem",
    "query_stems",
    "stem",
    "stem_index_text",
    "stem_tokens",
    "text_language",
    "written_word",
]

STEM_MARK = "~"  # PostgreSQL: a stem lexeme is "~" + stem, so it never equals an exact token
_ASCII_WORD = re.compile(r"[a-z]{3,40}")
_RUSSIAN_WORD = re.compile("[\u0430-\u044f\u0451]{3,40}")  # а-я and ё, lower-case
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # a unicode61 token (approximately)
# In ASCII text _WORD's tokens are the runs of [A-Za-z0-9]; only those of 3 or more characters
# can be stemmed, and this finds exactly them (a run shorter than 3 fails at every position).
_ASCII_CANDIDATE = re.compile(r"[A-Za-z0-9]{3,}")
_STEMMER = snowballstemmer.stemmer("english")
_RUSSIAN = snowballstemmer.stemmer("russian")

# German, French, Spanish, Portuguese, Italian (decision 518): a Latin word does not tell its
# language, a text does. A chunk whose commonest function words (:data:`_MARKERS`) are of one of
# these languages gets that language's stems of its words beside the English ones; a query whose
# stop words say it is in that language (``search/stopwords.py``) is stemmed in it.
LANGUAGES = ("de", "fr", "es", "pt", "it")
_SNOWBALL = {"de": "german", "fr": "french", "es": "spanish", "pt": "portuguese", "it": "italian"}
_STEMMERS = {lang: snowballstemmer.stemmer(name) for lang, name in _SNOWBALL.items()}


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Function words each language writes often and English (or code) hardly ever, folded as the index
# folds them; English's own are many, so an English text is never outvoted by a few borrowed words.
_MARKERS = {
    "en": _set("the and is are of to that with for this be in on it as or by you can not an"),
    "de": _set("der die das und ist nicht mit den dem wird sind auf ein eine einen sich von zu im"),
    "fr": _set("le les est une dans pour sont avec aux ce cette qui sur pas"),
    "es": _set("el los las una por para con del está esta son como pero"),
    "pt": _set("uma para não nao são sao pelo pela você voce também tambem"),
    "it": _set("il gli della delle sono nel nella che questo anche"),
}
# each marker word -> the languages it marks
_MARKER_OF = {w: tuple(lang for lang, ws in _MARKERS.items() if w in ws) for ws in _MARKERS.values() for w in ws}
# every other language's markers: a chunk whose space-separated words hold none is English (a set
# test in C; most chunks stop there)
_OTHER_MARKERS = frozenset(w for lang, ws in _MARKERS.items() if lang != "en" for w in ws)
_MARKER_EVIDENCE = 3  # marker words (counted with repeats) a chunk needs to read as a language
_LETTERS = re.compile(r"[^\W\d_]+")
_LATIN_WORD = re.compile(r"[a-z\u00df-\u00f6\u00f8-\u00ff]{3,40}")  # lower-case, folded by unicode61 but ß


@lru_cache(maxsize=1 << 16)
def _folded(word: str) -> str:
    """A word lower-cased with its accents dropped, as unicode61 folds the letters of these
    languages (``Verfügung`` -> ``verfugung``; the query side asks unicode61 itself). Not
    through ``cjk`` and apsw: parse workers stem chunks and never load a storage library."""
    word = word.lower()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def text_language(*texts: str) -> str:
    """The language a chunk's stems follow: one of :data:`LANGUAGES` when more of its words are
    that language's markers than English's or any other's, and at least three; else ``en``."""
    if all(_OTHER_MARKERS.isdisjoint(text.lower().split()) for text in texts):
        return "en"
    counts = dict.fromkeys(_MARKERS, 0)
    for text in texts:
        for word in _LETTERS.findall(text.lower()):
            for lang in _MARKER_OF.get(word, ()):
                counts[lang] += 1
    best = max(LANGUAGES, key=lambda lang: counts[lang])
    return best if counts[best] >= _MARKER_EVIDENCE and counts[best] > counts["en"] else "en"


@lru_cache(maxsize=1 << 16)
def language_stem(word: str, language: str) -> str:
    """The ``language`` stem of a lower-case word as written, folded as the index folds its tokens
    (its English or Russian stem for ``en``); the word itself when it is not a word that language's
    stemmer takes. The French and Portuguese stemmers' suffixes are written with their accents
    (``fermée`` -> ``ferm``, but ``fermee`` -> ``ferme``), so the word is stemmed as written and
    its stem folded (``désactivée`` -> ``désactiv`` -> ``desactiv``, as ``désactiver``); a word
    given folded stems as it folds (decision 1192)."""
    stemmer = _STEMMERS.get(language)
    if stemmer is None or not _LATIN_WORD.fullmatch(word):
        return stem(word)
    return _folded(str(stemmer.stemWord(word)))


def _stem_word(word: str) -> str:
    """The stem of a lower-cased word, "" when it is not stemmable."""
    if _ASCII_WORD.fullmatch(word):
        return str(_STEMMER.stemWord(word))
    if _RUSSIAN_WORD.fullmatch(word):
        return str(_RUSSIAN.stemWord(word))
    return ""


def _index_stem(word: str) -> str:
    """The English (or Russian) stem the index holds for a lower-cased word as written: a Latin
    word written with accents has the English stem of its folded form, which is what a query's
    token (folded by unicode61) is stemmed as (``résumés`` meets ``résumé``, decision 1192);
    "" when it is not stemmable."""
    out = _stem_word(word)
    if out or word.isascii():
        return out
    folded = _folded(word)
    return str(_STEMMER.stemWord(folded)) if _ASCII_WORD.fullmatch(folded) else ""


def is_stemmable(token: str) -> bool:
    """Whether a lower-cased token is an English or Russian word this module stems."""
    return _ASCII_WORD.fullmatch(token) is not None or _RUSSIAN_WORD.fullmatch(token) is not None


@lru_cache(maxsize=1 << 16)
def _stem_lower(token: str) -> str:
    return _stem_word(token)


def stem(token: str) -> str:
    """The stem of one token (lower-cased); the token itself when it is not 3-40 ASCII or
    Russian letters."""
    token = token.lower()
    return _stem_lower(token) if is_stemmable(token) else token


def stem_tokens(tokens: list[str]) -> list[str]:
    """The stems of the stemmable lower-cased ``tokens``, in order (what an adapter
    indexes beside the exact tokens)."""
    return [_stem_lower(t) for t in tokens if is_stemmable(t)]


_INDEX_CACHE: dict[str, str] = {}  # token as written -> its stem, "" when not stemmable (cleared when large)
_INDEX_CACHE_MAX = 200_000


def stem_index_text(*texts: str, language: str | None = None) -> str:
    """A chunk's stems as one space-separated text: the English (or Russian) stem of every text's
    unicode61-like tokens that are words (:func:`_index_stem`: a word written with accents by its
    folded form; empty when none is a word); for a chunk in another language
    (:func:`text_language`), also that language's stem of each of its Latin words, stemmed as
    written and folded (:func:`language_stem`), where it differs from the English one (decision
    1192). ``language``: the chunk's, when ``texts`` are only a part of it (PostgreSQL stems
    heading and body apart)."""
    language = text_language(*texts) if language is None else language
    english = _english_index_text(texts)
    if language == "en":
        return english
    extra = [
        s
        for text in texts
        for word in map(_latin_form, _WORD.findall(text))
        if word and (s := language_stem(word, language)) != stem(_folded(word))
    ]
    return " ".join(filter(None, [english, *extra]))


@lru_cache(maxsize=1 << 16)
def _latin_form(token: str) -> str:
    """The form of a word its language's stemmer is given: lower-cased as written when its letters
    are of Latin-1 (the stemmers' alphabet), else folded when that makes them so (``tiếng`` ->
    ``tieng``, as every word was before decision 1192); "" when neither."""
    word = token.lower()
    if _LATIN_WORD.fullmatch(word):
        return word
    folded = _folded(word)
    return folded if folded != word and _LATIN_WORD.fullmatch(folded) else ""


def _english_index_text(texts: tuple[str, ...]) -> str:
    cache = _INDEX_CACHE
    if len(cache) > _INDEX_CACHE_MAX:
        cache.clear()
    out: list[str] = []
    for text in texts:
        # most chunks are ASCII: a cheaper pattern, and the tokens too short to stem never come back
        tokens = (_ASCII_CANDIDATE if text.isascii() else _WORD).findall(text)
        stems = list(map(cache.get, tokens))
        if None in stems:
            for i, token in enumerate(tokens):
                if stems[i] is None:
                    s = cache.get(token)
                    if s is None:
                        s = cache[token] = _index_stem(token.lower())
                    stems[i] = s
        out.extend(filter(None, stems))
    return " ".join(out)


def query_stems(token: str, language: str = "en", written: str = "") -> list[str]:
    """What a one-word query term of ``language`` matches among the stems: its English (or
    Russian) stem, and for a Latin word of another language that language's stem too, when it
    differs (an OR of both: an index written before ``stems-3`` has the English stems only, and
    a German page's English words are stemmed in English as well). ``token`` is the word as
    unicode61 folds it, ``written`` the term as the query wrote it: the language stem is of the
    word as written (:func:`language_stem`), as the index's is (decision 1192)."""
    out = [stem(token)] if is_stemmable(token) else []
    if language != "en":
        word = _latin_form(written_word(written, token))
        if word:
            other = language_stem(word, language)
            if other not in out:
                out.append(other)
    return out


def written_word(text: str, token: str) -> str:
    """``text``'s one word lower-cased as written, when it folds to the query token ``token``;
    else ``token`` (a term of several words, or one unicode61 reads otherwise)."""
    words: list[str] = _WORD.findall(text)
    if len(words) == 1:
        word = words[0].lower()
        if word != token and _folded(word) == token:
            return word
    return token
