"""The index manifest and the compatibility check (contract §8.2).

``index_manifest`` holds one value per key; the index is compatible with the
running configuration when every expected key is present with an equal value.
Beyond the upstream keys we record ``lexical_tokenizer`` (the CJK bigram
rewrite changes what the FTS index holds), ``storage_layout`` (bumped when the
stored tables change shape) and, in vector-enabled mode, ``vector_storage``
(float32 / int8 / binary tables differ), with int8 ``int8_scale`` (what the codes
mean: ``per-vector`` since decision 425; an int8 index without the key holds the fixed
scale 1/127 and is rebuilt, never mixed) and, for the local model,
``embedding_max_input_tokens`` (the passage cap changes every vector). An index of
an earlier ``lexical_tokenizer`` whose chunks hold none of the letters that one
indexed otherwise (:data:`CHANGED_LETTERS`) holds what this one writes; one whose
chunks hold some is served as it is and brought up to date in place by the next
reindex, which re-reads the documents holding them (decisions 518, 1006).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..embeddings import Embedder
from .chunker import CHUNKER_VERSION, CONTRACT_CHUNKER_VERSION, EMBEDDING_TEXT_BUILDER_VERSION
from .cjk import FOLDS, HALF_WIDTH_KANA, SIGNS, SYMBOL_LETTERS, VARIATION_SELECTORS
from .port import IndexStore
from .quantized import INT8_SCALE_KEY, INT8_SCALE_PER_VECTOR

__all__ = [
    "CHANGED_LETTERS",
    "DEFERRED_UPGRADES",
    "LEXICAL_TOKENIZER",
    "RESTEMMED_BYTES",
    "SCHEMA_VERSION",
    "STORAGE_LAYOUT",
    "VECTOR_KEYS",
    "borrows_vectors",
    "compatibility_problems",
    "current_manifest",
    "enum_value",
    "expected_manifest",
    "incompatible_message",
    "index_problems",
]

SCHEMA_VERSION = "5"
# cjk-bigram-2: Hangul as bigrams; stems-2: Russian stems; cjk-bigram-3: Thai, Lao, Myanmar, Khmer
# as bigrams of their letters; stems-3: German, French, Spanish, Portuguese, Italian stems of the
# chunks in those languages (decisions 517-519); folds-1: Indic marks kept in their words, Greek
# accents and full-width letters and digits folded (``cjk.fold``, decision 1001); folds-2: a two-part
# Indic vowel sign typed as its parts indexed as the composed one (decision 1012); folds-3: a kana and its
# voiced mark, or a Hangul syllable's conjoining jamo, indexed as the composed letter (decision 1102);
# cjk-bigram-4: the letters of the CJK symbols block (``々``, ``〇``) in their runs, and a CJK letter's
# variation selector read as part of it (decision 1103); folds-4: half-width katakana indexed as the
# full-width letters (decision 1113); stems-4: a Latin word written with accents has the English stem
# of its folded form, and a German, French, Spanish, Portuguese or Italian chunk's words their
# language's stems of the word as written, folded (decision 1192)
LEXICAL_TOKENIZER = "unicode61+cjk-bigram-4+stems-4+folds-4"
_SEA_LETTERS = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
# Every letter of the Indic blocks (an earlier index holds their words cut at each mark, the letters
# alone, so the letters are what its vocabulary shows), and the letters ``cjk.fold`` rewrites of Greek
# and the full-width forms (their other letters are indexed as they were).
_FOLDED_LETTERS = "\u0900-\u0dff" + "".join(re.escape(chr(c)) for c in sorted(FOLDS) if not 0x0900 <= c <= 0x0DFF)
# A two-part vowel sign typed as its parts: folds-1 indexed each part as its own stand-in (decision
# 1012). Each such text holds the sequence's first part where that is a sign of its own (Sinhala ො
# before ්, Kannada ೊ before ೕ), else its second (a vowel or length sign after a bare ে, ெ, ಿ; never
# the Sinhala virama, which nearly every Sinhala word holds), as written (PostgreSQL scans the chunk
# texts) and as folds-1's stand-in (SQLite reads its vocabulary): those are the letters. The second
# part is often a sign of its own too (Tamil ா), so a page holding only composed signs may be re-read.
_SIGN_CODES = {ord(parts[0] if unicodedata.decomposition(parts[0]) else parts[1]) for parts in SIGNS}
_SIGN_LETTERS = "".join(re.escape(chr(c)) for c in sorted(_SIGN_CODES | {FOLDS[c] for c in _SIGN_CODES}))
# Kana with their voiced marks apart and Hangul as conjoining jamo (decision 1102): every earlier
# tokenizer indexed them otherwise. As written, the marks and the jamo (PostgreSQL scans the chunk
# texts); SQLite's vocabulary holds the jamo (unicode61 read a jamo word as one token) but never the
# marks (separators to it), so a page holding decomposed kana and no jamo is read again only when it
# changes or by a forced reindex, and is found as before meanwhile.
_DECOMPOSED_LETTERS = "\u3099\u309a\u1100-\u11ff"
# The letters of the CJK symbols block, cut off their runs by every earlier tokenizer (SQLite's vocabulary
# holds them: unicode61 reads them as letters), and the variation selectors, separators to unicode61 (as
# written: PostgreSQL finds them; a page whose only change is one is read again on SQLite when it changes
# or by a forced reindex, as 1102 says of the kana marks) (decision 1103).
_RUN_LETTERS = SYMBOL_LETTERS + VARIATION_SELECTORS
# Half-width katakana, which every earlier tokenizer indexed as letters of their own (decision 1113):
# as written (PostgreSQL) and in SQLite's vocabulary, whose CJK bigrams hold them
_HALF_LETTERS = HALF_WIDTH_KANA
# Earlier tokenizers, and the letters each indexed otherwise: an index of one whose chunks hold none
# of them holds what this one writes (decision 518), and one whose chunks hold some is brought up to
# date by re-reading just the documents holding them (decision 1006). Stems of other Latin-script
# languages change nothing it holds: they are added beside the English ones, and a query ORs both,
# so an index without them answers as it did (decision 518).
CHANGED_LETTERS = {
    "unicode61+cjk-bigram-1+stems-1": "\uac00-\ud7a3\u0430-\u044f\u0451\u0410-\u042f\u0401"
    + _SEA_LETTERS
    + _FOLDED_LETTERS
    + _DECOMPOSED_LETTERS
    + _RUN_LETTERS
    + _HALF_LETTERS,
    "unicode61+cjk-bigram-2+stems-2": _SEA_LETTERS
    + _FOLDED_LETTERS
    + _DECOMPOSED_LETTERS
    + _RUN_LETTERS
    + _HALF_LETTERS,
    "unicode61+cjk-bigram-3+stems-2": _FOLDED_LETTERS + _DECOMPOSED_LETTERS + _RUN_LETTERS + _HALF_LETTERS,
    "unicode61+cjk-bigram-3+stems-3": _FOLDED_LETTERS + _DECOMPOSED_LETTERS + _RUN_LETTERS + _HALF_LETTERS,
    "unicode61+cjk-bigram-3+stems-3+folds-1": _SIGN_LETTERS + _DECOMPOSED_LETTERS + _RUN_LETTERS + _HALF_LETTERS,
    "unicode61+cjk-bigram-3+stems-3+folds-2": _DECOMPOSED_LETTERS + _RUN_LETTERS + _HALF_LETTERS,
    "unicode61+cjk-bigram-3+stems-3+folds-3": _RUN_LETTERS + _HALF_LETTERS,
    "unicode61+cjk-bigram-4+stems-3+folds-3": _HALF_LETTERS,
    "unicode61+cjk-bigram-4+stems-3+folds-4": "",
}
# Every tokenizer above stemmed a Latin word written with accents otherwise than stems-4 (none, or a
# language's stem of its folded form: decision 1192). SQLite's vocabulary holds such words folded
# (``fermee``), so the pass looks for them in the files' bytes (as chunker v8 does for HTML blocks)
# and re-reads those holding a letter of Latin-1, Latin Extended-A/B or Additional, or a combining
# accent (a decomposed one), but ``×`` and ``÷``; a page without one has the stems stems-4 writes.
RESTEMMED_BYTES = re.compile(
    rb"\xc3[\x80-\x96\x98-\xb6\xb8-\xbf]|[\xc4-\xc8][\x80-\xbf]|\xc9[\x80-\x8f]|\xcc[\x80-\xbf]|\xcd[\x80-\xaf]"
    rb"|\xe1[\xb8-\xbb][\x80-\xbf]"
)

STORAGE_LAYOUT = "3"  # 3: links, document_meta, document_tags (link graph)
# 2: the links of a document include the ``src`` of its HTML ``<img>`` tags (kind ``html``,
# decision 820); an index without the key holds none of them and is brought up in place
# 3: and its relative autolinks ``<page.md>`` (decision 901); an index of 2 is brought up in place
# 4: and the tags, aliases and fields of TOML front matter (``+++``, decision 1026), whose documents
# an index of 3 read as paragraphs: their elements, chunks and links are derived again in place
# 5: and the ``href`` of its HTML ``<a>`` tags (kind ``href``, decision 1032); brought up in place
# 6: and each candidate URL of the ``srcset`` of ``<img>`` and ``<source>`` tags (kind ``html``,
# decision 1156), and the links in a footnote that CommonMark read as a reference definition
# (``[^1]: ![x](a.png)``), whose ``[^1]`` is no reference link (decision 1157), and its tags in NFC
# (decision 1129); brought up in place
LINK_GRAPH_VERSION = "6"
LINK_GRAPH_KEY = "link_graph_version"


def enum_value(value: Any) -> str:
    """Plain lower-case string of a config enum (pydantic enum or str)."""
    return str(getattr(value, "value", value)).lower()


def _flag(value: Any) -> str:
    return "true" if value else "false"


def expected_manifest(
    config: Any, model: str | None, dimensions: int | None, max_input_tokens: int | None = None
) -> dict[str, str]:
    chunking = config.chunking
    values = {
        "schema_version": SCHEMA_VERSION,
        "chunker_version": CHUNKER_VERSION,
        "embedding_text_builder_version": EMBEDDING_TEXT_BUILDER_VERSION,
        "embedding_model": model or "none",
        "chunking_max_chunk_bytes": str(chunking.max_chunk_bytes),
        "chunking_max_elements": str(chunking.max_elements),
        "chunking_include_heading_context": _flag(chunking.include_heading_context),
        "chunking_include_front_matter": _flag(chunking.include_front_matter),
        "index_mode": "vector-enabled" if model else "lexical",
        "lexical_tokenizer": LEXICAL_TOKENIZER,
        "storage_layout": STORAGE_LAYOUT,
        LINK_GRAPH_KEY: LINK_GRAPH_VERSION,
    }
    if model:
        if dimensions is not None:
            values["embedding_dimensions"] = str(dimensions)
        values["vector_storage"] = enum_value(config.embedding.vector_storage)
        if values["vector_storage"] == "int8":
            values[INT8_SCALE_KEY] = INT8_SCALE_PER_VECTOR
        if max_input_tokens is not None:
            values["embedding_max_input_tokens"] = str(max_input_tokens)
    return values


# What an int8 index without ``int8_scale`` holds: codes of the fixed scale (before decision 425).
INT8_SCALE_BEFORE = "1/127"


_RELEASE_KEYS = (
    "schema_version",
    "storage_layout",
    "chunker_version",
    "embedding_text_builder_version",
    LINK_GRAPH_KEY,
)


def _newer(key: str, stored: str, current: str) -> str:
    """Say so when a newer release wrote the index (decision 499's neighbour): a forced rebuild by
    this one replaces its work, and the newer release would rebuild it again (a shared index)."""
    if key in _RELEASE_KEYS and stored.isdigit() and current.isdigit() and int(stored) > int(current):
        return " (written by a newer release of local-vector-search-mcp: upgrade this one, or rebuild the index for it)"
    return ""


# Versions a stored index is brought to in place, by the next reindex (its start-up catch-up):
# chunker v7 only adds chunks to documents that had none of their own (decision 781), v8 the
# visible text of HTML blocks to the chunks of the documents holding one (decision 1025), v9 the
# text of one-token footnote definitions to those holding one (decision 1194); that pass re-reads
# those (``IndexStore.documents_without_own_chunks``, the files whose bytes may hold an HTML block
# or a footnote definition, each as its stored version lacks), keeps the vector of every chunk whose
# text did not change, and writes the version once it has. Every other row is v6's.
# An index from before link graph v2 (no key) lacks the links of HTML ``<img>`` tags, one before v3
# its relative autolinks, one before v4 its TOML front matter, one before v5 its HTML ``<a href>``,
# one before v6 its ``srcset`` candidates and footnote links: that pass re-reads the documents that
# may hold what their version lacks and writes the key only once it has (decisions 820, 901, 1026,
# 1032, 1156, 1157).
# An earlier lexical tokenizer's index is searched as it is meanwhile (only the documents holding the
# letters it indexed otherwise answer by its tokens): that pass re-reads those documents, which
# rewrites their lexical rows from the same chunk texts and keeps every vector, and writes the
# current name once it has (decision 1006; a forced rebuild re-embedded everything).
UPGRADED_IN_PLACE: set[tuple[str, str | None, str]] = {
    ("chunker_version", "6", CHUNKER_VERSION),
    ("chunker_version", "7", CHUNKER_VERSION),
    ("chunker_version", "8", CHUNKER_VERSION),
    (LINK_GRAPH_KEY, None, LINK_GRAPH_VERSION),
    (LINK_GRAPH_KEY, "2", LINK_GRAPH_VERSION),
    (LINK_GRAPH_KEY, "3", LINK_GRAPH_VERSION),
    (LINK_GRAPH_KEY, "4", LINK_GRAPH_VERSION),
    (LINK_GRAPH_KEY, "5", LINK_GRAPH_VERSION),
    *(("lexical_tokenizer", earlier, LEXICAL_TOKENIZER) for earlier in CHANGED_LETTERS),
}
# The upgrades whose key is written only once a whole pass has re-read what it names
DEFERRED_UPGRADES = frozenset({"chunker_version", LINK_GRAPH_KEY, "lexical_tokenizer"})


def in_place_upgrades(stored: dict[str, str], expected: dict[str, str]) -> set[str]:
    """The keys whose stored value is an older one the next reindex brings up to date."""
    return {key for key, old, new in UPGRADED_IN_PLACE if stored.get(key) == old and expected.get(key) == new}


def _shown(key: str, value: str) -> str:
    """The current value as kb_status reports it: our chunker revision 7 makes the notes' v6 chunks
    (kb_status says ``chunkerVersion: "6"``, decision 630), so a problem names that version too
    (decision 871); the manifest and every comparison keep the revision."""
    return CONTRACT_CHUNKER_VERSION if key == "chunker_version" and value == CHUNKER_VERSION else value


def compatibility_problems(stored: dict[str, str], expected: dict[str, str]) -> list[str]:
    """``<key>: indexed '<old>', current '<new>'`` (or ``indexed <missing>``) per difference."""
    problems = []
    upgraded = in_place_upgrades(stored, expected)
    if upgraded:
        stored = {**stored, **{key: expected[key] for key in upgraded}}
    if stored.get("vector_storage") == "int8":
        stored = {INT8_SCALE_KEY: INT8_SCALE_BEFORE, **stored}
    for key, value in expected.items():
        if key == INT8_SCALE_KEY and stored.get("vector_storage") != "int8":
            continue  # another vector storage (or none) is the difference, already named
        if key not in stored:
            problems.append(f"{key}: indexed <missing>, current '{_shown(key, value)}'")
        elif stored[key] != value:
            newer = _newer(key, stored[key], value)
            problems.append(f"{key}: indexed '{stored[key]}', current '{_shown(key, value)}'{newer}")
    for key in sorted(set(stored) - set(expected)):
        if key in ("embedding_dimensions", "vector_storage", "embedding_max_input_tokens"):
            problems.append(f"{key}: indexed '{stored[key]}', current <none>")
    return problems


# The commonest mismatch at a terminal: an index built with `--embedding-provider none` and a later
# command without it (the local model is the default). Rebuilding is one way out; running with the
# setting the index was built with is the other, and costs nothing (decision 557). The converse (an
# index built with embeddings, a run without them) is no problem (decision 630). The hint holds only
# when the embedding setting is all that differs: otherwise that run would be refused too.
_MODE_HINTS = {
    "index_mode: indexed 'lexical', current 'vector-enabled'": (
        "It was built without embeddings: run with embedding.provider none (CLI: --embedding-provider none) "
        "to use it as it is, or rebuild it"
    ),
}


def incompatible_message(problems: list[str]) -> str:
    only_vectors = all(p.split(":", 1)[0] in VECTOR_KEYS for p in problems)
    hint = next((_MODE_HINTS[p] for p in problems if p in _MODE_HINTS and only_vectors), "Rebuild it")
    return (
        "The index was built with different settings and cannot be used as it is ("
        + "; ".join(problems)
        + f"). {hint} with kb_reindex force=true (CLI: --reindex --force); "
        "nothing is deleted without force."
    )


def current_manifest(config: Any, embedder: Embedder | None, store: IndexStore, probe: bool) -> dict[str, str]:
    """The manifest the running configuration expects. ``probe`` lets an
    openai-compatible provider be asked for its vector size."""
    if embedder is None:
        return expected_manifest(config, None, None)
    dims = config.embedding.dimensions
    if dims is None and (probe or embedder.provider == "local"):
        dims = embedder.dimensions()
    if dims is None:
        stored = store.read_manifest().get("embedding_dimensions")
        dims = int(stored) if stored else None
    cap = getattr(embedder, "max_tokens", None)
    return expected_manifest(config, embedder.model, dims, cap if isinstance(cap, int) else None)


# What only the vectors depend on. A run without embeddings uses everything else of an index built
# with them as it is (decision 630): lexical search, reads, outlines, links; its writes store their
# changed chunks pending, for the next run with the model, and leave these keys as they are.
VECTOR_KEYS = frozenset(
    {
        "embedding_model",
        "index_mode",
        "embedding_dimensions",
        "vector_storage",
        INT8_SCALE_KEY,
        "embedding_max_input_tokens",
    }
)


def borrows_vectors(stored: dict[str, str], embedder: Embedder | None) -> bool:
    """Whether this run has no embeddings and the index was built with them (decision 630)."""
    return embedder is None and stored.get("index_mode") == "vector-enabled"


def _lexical_part(manifest: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in manifest.items() if key not in VECTOR_KEYS}


def index_problems(config: Any, embedder: Embedder | None, store: IndexStore, probe: bool = False) -> list[str]:
    """Why the stored index cannot serve the running configuration (empty: it can)."""
    stored = store.read_manifest()
    if not stored and store.counts().documents == 0:
        return []
    expected = current_manifest(config, embedder, store, probe)
    if "embedding_dimensions" not in expected and "embedding_dimensions" in stored:
        expected["embedding_dimensions"] = stored["embedding_dimensions"]
    # an earlier tokenizer's index is searched as it is and upgraded in place by the next reindex
    # (``UPGRADED_IN_PLACE``, decision 1006): nothing here scans it, so a search costs what it did
    if borrows_vectors(stored, embedder) and not compatibility_problems(_lexical_part(stored), _lexical_part(expected)):
        return []  # used as it is, vectors kept (decision 630)
    # otherwise every difference, index_mode's too: its hint says how to use the index as it is
    return compatibility_problems(stored, expected)
