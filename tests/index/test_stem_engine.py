"""The stemmer in use is the C one (PyStemmer) and stems exactly as the pure-Python Snowball
English stemmer does (decision 232): indexes built with either agree."""

from __future__ import annotations

import re
from pathlib import Path

from snowballstemmer.english_stemmer import EnglishStemmer

from local_vector_search_mcp.index import stem

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _words() -> list[str]:
    words: set[str] = set()
    for path in sorted(DOCS.rglob("*.md")):
        words.update(w for w in re.findall(r"[a-z]+", path.read_text(encoding="utf-8").lower()) if 3 <= len(w) <= 40)
    words.update(["running", "indexes", "echoing", "generously", "skies", "dying", "news", "sensational"])
    return sorted(words)


def test_the_c_stemmer_is_in_use() -> None:
    assert type(stem._STEMMER).__module__ == "Stemmer"


def test_c_and_python_stems_are_identical() -> None:
    words = _words()
    assert len(words) > 1000
    python = EnglishStemmer()
    assert [stem._STEMMER.stemWord(w) for w in words] == [python.stemWord(w) for w in words]
