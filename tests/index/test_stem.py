from __future__ import annotations

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.index.stem import is_stemmable, stem, stem_index_text, stem_tokens

_WORD = re.compile(r"[^\W_]+")


def _query_form(token: str) -> str:
    """A lower-cased token as a query's is stemmed: folded when it is a Latin word written with
    accents (``café`` -> ``cafe``; decision 1192), else as it is (Russian keeps its ``ё``)."""
    if is_stemmable(token):
        return token
    folded = "".join(c for c in unicodedata.normalize("NFD", token) if not unicodedata.combining(c))
    return folded if folded.isascii() else token


def _rule(texts: list[str]) -> str:
    return " ".join(stem_tokens([_query_form(t.lower()) for text in texts for t in _WORD.findall(text)]))


def test_english_words_stem_and_everything_else_stays():
    assert [stem(w) for w in ("echoing", "Echoes", "indexes", "configuration")] == ["echo", "echo", "index", "configur"]
    assert [stem(w) for w in ("sha512", "v2", "机器", "go", "café")] == ["sha512", "v2", "机器", "go", "café"]
    assert is_stemmable("index") and not is_stemmable("sha512") and not is_stemmable("ab")


def test_index_text_holds_the_stem_of_every_english_word_in_order():
    assert stem_index_text("Rc::strong_count counts", "Echoing 机器 v2") == "strong count count echo"
    assert stem_index_text("", "12 机器") == ""


@given(st.text(max_size=80))
def test_index_text_agrees_with_the_token_by_token_rule(text):
    # the indexing fast path must stem exactly what the query side and PostgreSQL stem
    assert stem_index_text(text) == _rule([text])


# ASCII text takes a cheaper tokenizer (runs of 3+ letters or digits): words, digits, short words,
# underscores and punctuation side by side, and the odd non-ASCII letter that switches paths
_ASCII_MIX = st.lists(
    st.sampled_from(["echoing", "Indexes", "ab", "a", "sha512", "2024", "_", "::", " ", "\n", "-", "K", "\u212a", "é"])
    | st.text(alphabet="abcXYZ019_ .-", max_size=6),
    max_size=20,
).map("".join)


@given(_ASCII_MIX, _ASCII_MIX)
def test_ascii_and_mixed_texts_agree_with_the_token_by_token_rule(heading, text):
    assert stem_index_text(heading, text) == _rule([heading, text])
