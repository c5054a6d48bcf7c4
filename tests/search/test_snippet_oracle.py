"""The snippet path gives, character for character, the snippet of the slower implementation it
replaced (``snippet_oracle.py``, frozen at 06ef3a4; decision 390), for any text and query.

The faster path rests on claims about Python's ``re`` and the tokenizer that hold for every
input, not only for the corpora measured: one scan of the whole text finds what the old scans of
pieces of it found; lower-cased text scanned case-sensitively matches what ``re.IGNORECASE``
matched (``İ ı ſ K`` equal ``i i s k`` to it); the words holding a non-ASCII character are found
from that character outward; CJK runs are read whole and spread into characters; the first
window wins when it holds every word. The texts below are built to break each: those four
characters, accents in both normal forms, CJK runs and the CJK-range characters that are not
word characters (``・ ゠``), emoji and characters newer than Unicode 6.1 that the tokenizer joins
into words, the 21 recent letters it splits, underscores, digits, Markdown punctuation, odd
whitespace, words longer than the scan reaches, and query words sharing a stem (``iing`` stems
to ``i``, whose prefix is empty: a pattern that also matches nothing). And for decision 1002's
rules: combining marks in decomposed, Thai and Devanagari words, zero-width-joiner sequences,
variation selectors and skin tones (no cut between them and their character), runs of symbols
and emoji longer than the character budget, CJK query runs found whole and in pieces. And for
decision 1020's: texts far longer than the anchors around the first match reach (words of up to 900
characters, 120 of them), query terms of several words matched whole.
"""

from __future__ import annotations

from pathlib import Path

import snippet_oracle
from hypothesis import example, given, settings
from hypothesis import strategies as st

from local_vector_search_mcp.search.text import build_lexical_query, make_snippet


def _examples(n: int) -> int:
    """``n`` examples under the default profile, scaled with the loaded one (``quick``, ``long``)."""
    return max(5, n * settings.default.max_examples // 200)


_WORDS = [
    "edit", "edits", "editing", "Editorial", "EDIT", "edit2", "2edit", "use", "because", "user",
    "happy", "happiness", "happily", "iing", "iings", "i", "a", "the", "is", "skip", "Kelvin",
    "k", "s", "sk", "kiss", "pointer", "rust", "Rust", "x", "yes", "sha512", "v2", "strong_count",
    "Rc::strong_count", "café", "cafe", "CAFÉ", "Noe\u0308l", "Noël", "noel", "crème", "échec",
    "robot", "robot🤖", "🤖", "👍🏽", "\ue000x", "we’ll", "don’t", "Damerau–Levenshtein", "±0",
    "共享", "共享状态", "状态", "组件", "Vue组件", "vue", "Vue", "学习", "机器学习很有趣", "東京",
    "の", "カタカナ", "ｶﾀｶﾅ", "・", "゠", "ア・イ", "한국어", "Ωmega", "ΣΑΣ", "straße",
    "東京都", "京都", "京都大学", "ข้อมูล", "การสำรองข้อมูล", "สำรอง", "élève", "e\u0301le\u0300ve", "हिन्दी",
    "🧑\u200d💻", "❤\ufe0f", "葛\U000e0100", "葛\U000e0100飾区", "様々", "\u30ab\u3099\u30a4\u30c8\u3099", "ガイド",
    "\u1112\u1161\u11ab\u1100\u1173\u11af", "한글",
]  # fmt: skip
_ODD = ["\u0130", "\u0131", "\u017f", "\u212a", "\u19b0", "\u1cf2", "\u00b7", "\u200b", "_", "é", "e\u0301",
        "\u0301", "\u0e49", "\u200d", "\ufe0f", "\U0001f3fd"]  # fmt: skip
_PUNCT = [" ", " ", " ", "  ", "\n", "\t", "\u00a0", "\u3000", ". ", ", ", "，", "。", "：", "“", "”", "—", "-",
          "*", "**", "`", "[", "](", ")", "#", "> ", "|", "::", "/", "'", '"', "...", "!", "?",
          " │ ├── ─── ═══ ▶" * 20, "═" * 90, "🎉" * 40]  # fmt: skip

_word = st.one_of(
    st.sampled_from(_WORDS),
    st.sampled_from(_WORDS).map(str.upper),
    st.builds(lambda a, o, b: a + o + b, st.sampled_from(_WORDS), st.sampled_from(_ODD), st.sampled_from(_WORDS)),
    st.sampled_from(_ODD),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=4),
    st.integers(1, 900).map(lambda n: "x" * n),  # longer than the 600 characters the anchors reach
)
_text = st.lists(st.tuples(_word, st.sampled_from(_PUNCT)), max_size=120).map(
    lambda pairs: "".join(w + p for w, p in pairs)
)
_query = st.lists(st.sampled_from(_WORDS + _ODD + ["(the)", "`a`", "edits?", "title:", "共享 状态"]), max_size=6).map(
    " ".join
)


@settings(max_examples=_examples(1500), deadline=None)
@given(text=_text, query=_query, width=st.sampled_from([16, 16, 16, 1, 2, 5, 40]))
@example(text="robot🤖 🤖", query="robot 🤖", width=16)  # a single anchor
@example(text="edit2 edit", query="edit2 edits", width=16)  # a shorter alternative wins, then fails
@example(text="x" * 700 + " edit " + "edit " * 5, query="edit", width=16)
@example(text="ſkip \u212aelvin \u0130s \u0131s iing", query="skip kelvin is iings", width=16)
@example(text="Layout of the project: " + "│ ├── ─── ═══ ▶ " * 150 + "end", query="project", width=16)  # budget
@example(text="京都大学は有名です。たくさんの学生がいます。そして東京都庁舎で", query="東京都", width=16)  # whole run
@example(text="word 🧑\u200d💻" + " │ ├── ─── ═══ ▶" * 20, query="🧑", width=16)  # a cut after a joined emoji
@example(text="ข้" * 10 + "กก" + "ข้" * 20, query="กก", width=20)  # a mark goes with its letter
@example(text="東京都\ufe0fedit 葛\U000e0100飾区", query="東京都 葛飾区", width=16)  # a selector in the light (1103)
@example(text="\u30ab\u3099\u30a4\u30c8\u3099 \u1112\u1161\u11ab", query="ガイド 한", width=16)  # decomposed (1102)
@example(
    text="edit " + "x " * 40 + "xedit_edit_edit", query="edit_edit", width=16
)  # a whole term after a rejected start
@example(
    text="fst err plugin timeout " + "x " * 400 + "FST_ERR_PLUGIN_TIMEOUT", query="FST_ERR_PLUGIN_TIMEOUT", width=16
)
def test_snippet_equals_the_oracle(text: str, query: str, width: int) -> None:
    terms = build_lexical_query(query).terms
    assert make_snippet(text, terms, width) == snippet_oracle.make_snippet(text, terms, width)


@settings(max_examples=_examples(400), deadline=None)
@given(text=_text, terms=st.lists(st.sampled_from(_WORDS + _ODD), max_size=5).map(tuple))
def test_snippet_equals_the_oracle_for_raw_terms(text: str, terms: tuple[str, ...]) -> None:
    """Terms as given, not as the query builder cleans them (stop words, punctuation kept)."""
    assert make_snippet(text, terms) == snippet_oracle.make_snippet(text, terms)


_ROOT = Path(__file__).resolve().parents[2]
_DOCS = [*sorted(p for p in (_ROOT / "docs").rglob("*.md") if p.stat().st_size > 2000), _ROOT / "spec" / "decisions.md"]


@st.composite
def _passage(draw: st.DrawFn) -> tuple[str, str]:
    """A chunk-sized piece of this project's own Markdown and a query of words found in it."""
    text = draw(st.sampled_from(_DOCS)).read_text(encoding="utf-8")
    start = draw(st.integers(0, max(0, len(text) - 4000)))
    piece = text[start : start + draw(st.integers(200, 4000))]
    words = piece.split() or ["none"]
    picked = draw(st.lists(st.sampled_from(words), min_size=1, max_size=5))
    return piece, " ".join(picked + draw(st.lists(st.sampled_from(_WORDS), max_size=2)))


@settings(max_examples=_examples(400), deadline=None)
@given(passage=_passage())
def test_snippet_equals_the_oracle_on_real_markdown(passage: tuple[str, str]) -> None:
    text, query = passage
    terms = build_lexical_query(query).terms
    assert make_snippet(text, terms) == snippet_oracle.make_snippet(text, terms)
