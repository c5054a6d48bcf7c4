from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.index.stem import is_stemmable, stem, stem_index_text, stem_tokens

_WORD = re.compile(r"[^\W_]+")


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
    assert stem_index_text(text) == " ".join(stem_tokens([t.lower() for t in _WORD.findall(text)]))
