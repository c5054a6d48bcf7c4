from __future__ import annotations

import unicodedata

import apsw
from hypothesis import given
from hypothesis import strategies as st

from local_vector_search_mcp.index.cjk import cjk_index_text
from local_vector_search_mcp.index.fts5 import render_match, render_stems
from local_vector_search_mcp.index.query import CjkRun, Term
from local_vector_search_mcp.search.text import build_lexical_query, make_snippet


def fts(query):
    """The FTS5 strict (AND) and loose (OR) expressions of ``query``, as the SQLite adapter renders them."""
    parsed = build_lexical_query(query)
    if not parsed.leaves:
        return None, None, None, None
    no_stats = lambda tokens: {}  # noqa: E731
    return (
        render_match(parsed.strict(), no_stats),
        render_match(parsed.loose(), no_stats),
        render_match(parsed.ranked(), no_stats),
        render_stems(parsed.ranked(), no_stats, 10),
    )


def test_cjk_runs_become_bigrams_and_final_char():
    assert cjk_index_text("机器学习").split() == ["机器", "器学", "学习", "习"]
    assert cjk_index_text("plain English text") == "plain English text"


def test_query_is_a_tree_of_user_text_and_fts5_quotes_and_bigrams_it():
    assert build_lexical_query("共享状态 Rc::strong_count").leaves == (CjkRun("共享状态"), Term("Rc::strong_count"))
    strict, loose, *_ = fts("共享状态 Rc::strong_count")
    assert strict == '"共享" AND "享状" AND "状态" AND "Rc::strong_count"'
    assert loose == '"共享" OR "享状" OR "状态" OR "Rc::strong_count"'


def test_single_cjk_char_is_a_prefix_term():
    assert fts("雨")[0] == '"雨"*'


def test_punctuation_only_query_is_empty():
    assert build_lexical_query('??? ( ) * "').leaves == ()
    assert fts('??? ( ) * "') == (None, None, None, None)


def test_or_row_budget_keeps_the_rarest_alternatives():
    parsed = build_lexical_query("common rare medium")
    df = {"common": 5000, "rare": 3, "medium": 900}
    budgeted = render_match(parsed.loose(row_budget=1000), lambda tokens: {t: df[t] for t in tokens if t in df})
    assert budgeted == '"rare" OR "medium"'
    assert render_match(parsed.loose(), lambda tokens: df) == '"common" OR "rare" OR "medium"'


def _fts() -> apsw.Connection:
    c = apsw.Connection(":memory:")
    c.execute("CREATE VIRTUAL TABLE f USING fts5(body, heading, tokenize='unicode61 remove_diacritics 2')")
    text = cjk_index_text("東京都の天気は晴れです。雨。 NEAR AND OR")
    c.execute("INSERT INTO f(body, heading) VALUES(?, '')", (text,))
    return c


@given(st.text(max_size=60))
def test_any_user_text_is_valid_fts_syntax(text):
    c = _fts()
    for expr in fts(text):
        if expr is not None:
            list(c.execute("SELECT rowid FROM f WHERE f MATCH ?", (expr,)))


def test_cjk_words_of_any_length_match():
    c = _fts()
    for word in ("東京都", "天気", "雨", "晴れ"):
        expr = fts(word)[0]
        assert list(c.execute("SELECT rowid FROM f WHERE f MATCH ?", (expr,))), word


def test_snippet_marks_matches_and_cuts():
    text = " ".join(f"word{i}" for i in range(40)) + " target " + " ".join(f"tail{i}" for i in range(40))
    snip = make_snippet(text, ("target",))
    assert "[target]" in snip and snip.startswith("...") and snip.endswith("...")
    assert make_snippet("no match here", ("zzz",)) == "no match here"
    assert make_snippet("x" * 300, ()).endswith("...")


def test_snippet_highlights_whole_tokens_only():
    query = "how do I keep edits safe when two agents change the same file"
    terms = build_lexical_query(query).terms
    snip = make_snippet("Every pointer carries two hashes, so an agent can tell that the file changed.", terms)
    assert "[two]" in snip and "[file]" in snip
    assert "po[i]nter" not in snip and "carr[i]es" not in snip
    import re

    for marked in re.findall(r"\[([^\]]+)\]", snip):  # every mark is a whole word of the text
        assert re.search(rf"(?<![\w]){re.escape(marked)}(?![\w])", snip.replace("[", "").replace("]", ""))
    # identifiers split the way unicode61 splits them; CJK inside runs; Latin next to CJK
    assert make_snippet("call Rc::strong_count here", build_lexical_query("strong_count").terms) == (
        "call Rc::[strong]_[count] here"
    )
    assert make_snippet("在组件之间共享状态", build_lexical_query("共享").terms) == "在组件之间[共享]状态"
    assert make_snippet("用Vue组件", build_lexical_query("vue").terms) == "用[Vue]组件"
    assert make_snippet("Vuex and Vue", build_lexical_query("vue").terms) == "Vuex and [Vue]"


def test_stop_words_are_dropped_when_other_words_remain():
    parsed = build_lexical_query("How do I prompt the user for a password?")
    assert parsed.leaves == (Term("prompt"), Term("user"), Term("password?"))
    assert parsed.terms == ("prompt", "user", "password?")


def test_a_query_of_stop_words_only_keeps_them():
    assert build_lexical_query("what is it").leaves == (Term("what"), Term("is"), Term("it"))
    assert build_lexical_query("to be or not to be").leaves == (Term("not"),)  # "not" is searchable


def test_identifiers_are_never_stop_words():
    assert Term("a&&b") in build_lexical_query("the a&&b of it").leaves
    assert build_lexical_query("it's the i++").leaves == (Term("i++"),)


def test_ranked_query_ors_every_word_and_words_splits_punctuated_pieces():
    parsed = build_lexical_query("title::SHA-512 hashing")
    no_stats = lambda tokens: {}  # noqa: E731
    assert render_match(parsed.ranked(), no_stats) == '"title::SHA-512" OR "hashing"'
    words = parsed.words()
    assert words is not None
    assert render_match(words, no_stats) == '"title" OR "SHA" OR "512" OR "hashing"'
    assert build_lexical_query("plain words only").words() is None
    assert render_match(build_lexical_query("Rc::strong_count").ranked(), no_stats) == '"Rc::strong_count"'


def test_snippet_never_highlights_stop_words():
    parsed = build_lexical_query("how to prompt for the password")
    snippet = make_snippet("Use the prompt to read the password without echo.", parsed.terms)
    assert "[prompt]" in snippet and "[password]" in snippet
    assert "[the]" not in snippet and "[to]" not in snippet


def test_adjacent_content_words_add_a_phrase_for_proximity():
    no_stats = lambda tokens: {}  # noqa: E731
    ranked = render_match(build_lexical_query("keyword field ignore case").ranked(), no_stats)
    assert ranked is not None and ranked.endswith('"keyword field" OR "field ignore" OR "ignore case"')
    # not across a clause break or an identifier, nor a stop word in a sentence; punctuation is trimmed
    assert build_lexical_query("the number of replicas of an index in a cluster").pairs == ()
    assert build_lexical_query("file, bucket").pairs == ()
    assert build_lexical_query("Rc::strong_count docs").pairs == ()
    assert [p.words for p in build_lexical_query("back up to an S3 bucket?").pairs] == [("S3", "bucket")]
    assert build_lexical_query("pip").ranked() == Term("pip")  # one word: no group at all


def test_stop_words_of_a_name_written_as_words_stay_in_a_phrase():
    # one word besides stop words: the stop words are part of a name (search_after, if let)
    assert [p.words for p in build_lexical_query("search after").pairs] == [("search", "after")]
    assert [p.words for p in build_lexical_query("if let syntax").pairs] == [("if", "let"), ("let", "syntax")]
    no_stats = lambda tokens: {}  # noqa: E731
    assert render_match(build_lexical_query("search after").ranked(), no_stats) == '"search" OR "search after"'
    # a question's stop words are its phrasing; two other words: as before (decision 181)
    assert build_lexical_query("what is sharding").pairs == ()
    assert build_lexical_query("sharding after?").pairs == ()
    assert build_lexical_query("if let").pairs == ()  # only stop words: every word is kept as it is


def test_stop_words_between_two_words_of_a_short_query_join_them_in_a_phrase():
    # a name written as words (decision 1019): search_after, point in time, search-as-you-type
    def phrases(query: str) -> list[tuple[str, ...]]:
        return [p.words for p in build_lexical_query(query).pairs]

    assert phrases("search after parameter") == [("search", "after", "parameter")]
    assert phrases("learning to rank") == [("learning", "to", "rank")]
    assert phrases("point in time API") == [("time", "API"), ("point", "in", "time")]
    assert phrases("search as you type") == [("search", "as", "you", "type")]
    # not over three stop words, a clause break, in a question or a sentence of more than five words
    assert phrases("index of all of the shards") == []
    assert phrases("cost of, speed") == []
    assert phrases("what is point in time?") == []
    assert phrases("the number of replicas of an index in a cluster") == []


def test_stems_query_mirrors_the_tree_with_english_words_stemmed():
    no_stats = lambda tokens: {}  # noqa: E731
    parsed = build_lexical_query("echoing Rc::strong_count 机器 indexes")
    assert render_stems(parsed.ranked(), no_stats) == '"echo" OR "index"'  # others match exactly only
    assert render_stems(parsed.strict(), no_stats) is None  # an identifier must match: exact table only
    assert render_stems(build_lexical_query("echoing indexes").strict(), no_stats) == '"echo" AND "index"'
    assert render_stems(Term("v2"), no_stats) is None


def test_snippet_highlights_words_sharing_a_query_words_stem():
    parsed = build_lexical_query("how do I keep edits safe when agents change the file")
    snippet = make_snippet("Agents edit documents; editing a file is safe. Editorial notes stay.", parsed.terms, 40)
    assert "[Agents]" in snippet and "[edit]" in snippet and "[editing]" in snippet and "[file]" in snippet
    assert "[Editorial]" not in snippet and "[a]" not in snippet  # another stem; a stop word
    snippet = make_snippet(
        "Be happy: echoes of Echo, not echolocation.", build_lexical_query("echoing happiness").terms
    )
    assert "[happy]" in snippet and "[echoes]" in snippet and "[Echo]" in snippet and "[echolocation]" not in snippet


def test_query_words_are_what_the_index_calls_words():
    """unicode61 reads characters Unicode 6.1 had not assigned (``🤖``) as word characters, and
    marks as part of a word: the query side asks it, not Python's idea of a letter (decision 370)."""
    assert build_lexical_query("🤖 🚀").leaves == (Term("🤖"),)
    assert build_lexical_query("a🤖b::c").words() is not None


def test_snippet_lights_words_as_the_index_folds_them():
    assert make_snippet("Un café crème.", build_lexical_query("CAFE creme").terms) == "Un [café] [crème]."
    assert make_snippet("Noe\u0308l, noel", build_lexical_query("NOËL").terms) == "[Noe\u0308l], [noel]"
    # a word holding another character is one word: ``caf`` never lights up inside ``café``
    assert make_snippet("un café", build_lexical_query("caf").terms) == "un café"
    assert make_snippet("robot🤖 🤖", build_lexical_query("robot 🤖").terms) == "robot🤖 [🤖]"


def test_a_cjk_match_lights_the_whole_stretch_it_shares_with_the_query():
    # a run is matched as overlapping bigrams; lit one by one it cut the words they make up
    question = build_lexical_query("computed 和 watch 的区别是什么").terms
    assert make_snippet("表达方式和语法结构的区别，常常一个", question) == "表达方式[和]语法结构[的区别]，常常一个"
    template = build_lexical_query("怎么在模板里使用计算属性").terms
    assert make_snippet("这样的代码在模板里重复好多遍。", template) == "这样的代码[在模板里]重复好多遍。"
    # a lit stretch the window's last token cuts is shown whole (it read "[计算]属...")
    table = "译 | 备注 | | --- | --- | --- | | property | 属性 | 组件的属性（数据、计算属性、方法等）的统称" * 3
    assert make_snippet(table, template).endswith(" | 组件的[属性]（数据、[计算属性]...")
    # pieces that only touch stay apart: 件共 is not in the query
    sharing = build_lexical_query("组件之间如何共享状态").terms
    assert make_snippet("们有多个组件共享一个共同的状态时", sharing) == "们有多个[组件][共享]一个共同的[状态]时"
    assert make_snippet("共享状态", build_lexical_query("共享 状态").terms) == "[共享][状态]"


def test_a_snippet_stays_within_its_character_budget_when_symbols_surround_the_match():
    # a box-drawing tree holds no token: the window, or the "no cut for punctuation" rule, ran
    # over all of it (2,433 characters where about 16 tokens are promised)
    tree = " │ ├── ─── ═══ ▶" * 150
    project = build_lexical_query("project").terms
    assert make_snippet("# Layout\n\nLayout of the project:" + tree, project) == "# Layout Layout of the [project]..."
    assert make_snippet(tree + " the project layout", project) == "...the [project] layout"  # the start side
    assert make_snippet("Layout of the project:" + tree + " end of the tree", project) == "Layout of the [project]..."
    # a short punctuation tail is still shown whole, not cut behind "..."
    assert make_snippet("Un café crème.", build_lexical_query("CAFE creme").terms) == "Un [café] [crème]."
    code = "handler: (err) => { /* ... */ } } }) ```"
    assert make_snippet(code, build_lexical_query("handler").terms) == "[handler]: (err) => { /* ... */ } } }) ```"


def test_a_cjk_window_holding_the_whole_query_run_beats_an_earlier_fragment():
    # each hit counted one word: 京都 of 京都大学 (another word) tied with 東京都 and came first
    kyoto = "京都大学は有名です。たくさんの学生がいます。そして東京都庁舎で会議を開催しました。"
    assert make_snippet(kyoto, build_lexical_query("東京都").terms) == "...す。そして[東京都]庁舎で会議を開催し..."
    database = "数据库很好用。我们在这里讨论很多其他的事情，然后说到检索数据库的方法。"
    assert make_snippet(database, build_lexical_query("检索数据").terms) == "...他的事情，然后说到[检索数据]库的方法。"
    thai = "ข้อมูลสำคัญมากสำหรับเรา และเรามีเรื่องอื่นๆ อีกมากมายที่จะพูดถึง การสำรองข้อมูล"
    assert make_snippet(thai, build_lexical_query("การสำรองข้อมูล").terms).endswith(" [การสำรองข้อมูล]")


def test_a_cut_never_separates_a_mark_or_a_joined_character_from_its_letter():
    nfd = unicodedata.normalize("NFD", "Résumé élève café naïve " * 8 + "keyword " + "Résumé élève café naïve " * 8)
    snippet = make_snippet(nfd, build_lexical_query("keyword").terms)
    assert snippet.startswith("...R") and snippet.endswith("e\u0301...")  # the window's edges: whole words
    assert unicodedata.normalize("NFC", snippet) == "...Résumé élève café naïve [keyword] " + (
        "Résumé élève café naïve " * 2 + "Résumé élève café..."
    )
    # a Thai vowel goes with its letter: a window counts ข้ as one token and never begins on ้
    thai = make_snippet("ข้" * 10 + "กก" + "ข้" * 20, build_lexical_query("กก").terms, 20)
    assert thai == "..." + "ข้" * 5 + "[กก]" + "ข้" * 13 + "..."
    # the first 240 characters of a text without a match end after a whole emoji
    assert make_snippet("x" * 239 + "👩\u200d💻 and more", ("zzz",)) == "x" * 239 + "👩\u200d💻..."
    assert make_snippet("x" * 239 + "❤\ufe0f and more", ("zzz",)) == "x" * 239 + "❤\ufe0f..."
    # a Hangul syllable written as its jamo (macOS) is one character to a cut too (decision 1105)
    korean = unicodedata.normalize("NFD", "컴포넌트를 등록합니다 " * 60)
    for lead in range(4):
        head = make_snippet("가" * lead + korean, ("zzz",))[:-3].rstrip()
        assert "\u1160" <= head[-1] <= "\u11ff", head[-3:]  # a syllable ends on its vowel or final
        window = make_snippet("가" * lead + korean + " 끝", build_lexical_query("끝").terms, 4)
        assert not "\u1160" <= window[3] <= "\u11ff", window[:6]
    # a lit emoji inside a zero-width-joiner sequence: the cut after it keeps the sequence whole
    tree = " │ ├── ─── ═══ ▶" * 150
    assert make_snippet("word 🧑\u200d💻" + tree, build_lexical_query("🧑").terms) == "word [🧑]\u200d💻..."


def test_the_end_of_a_contraction_never_lights_up():
    # unicode61 splits don’t into don + t, so the T of Option<T> matched it and lit don’[t]
    generic = build_lexical_query("Option<T>").terms
    assert make_snippet("We don’t have a value. So, why is having `Option<T>` better", generic) == (
        "We don’t have a value. So, why is having `[Option]<[T]>` better"
    )
    assert make_snippet("This won’t make your program slower.", generic) == "This won’t make your program slower."
    pasted = build_lexical_query("error: cannot borrow `s` as mutable").terms
    assert make_snippet("Here’s the error for `s`; Let's see the café’s s.", pasted) == (
        "Here’s the [error] for `[s]`; Let's see the café’s [s]."
    )
    assert make_snippet("the T-shirt", generic) == "the [T]-shirt"  # a hyphen is no apostrophe


def test_stop_words_around_punctuation_and_inside_identifiers_stay_dark():
    assert build_lexical_query("(the) binaries `a`").leaves == (Term("binaries"),)
    terms = build_lexical_query("[ValidateSet('a','b')]").terms
    assert make_snippet("Restrict a value with [ValidateSet('a','b')]", terms) == (
        "Restrict a value with [[ValidateSet]('a','[b]')]"
    )
    assert make_snippet("a b", build_lexical_query("`a`").terms) == "[a] b"  # nothing else: lit


def test_snippet_shows_where_the_query_words_meet():
    # the first match ("two" in "two hashes") is not where the passage answers the question
    text = (
        "Every pointer carries two hashes: one of the element itself and one of its subtree. "
        "When two agents change the same paragraph, the second edit is refused with CONFLICT."
    )
    terms = build_lexical_query("how do I keep edits safe when two agents change the same file").terms
    snippet = make_snippet(text, terms)
    assert "[two] [agents] [change]" in snippet and "[edit]" in snippet
    # on a tie the earliest window wins, as before
    assert make_snippet("alpha one. " + "x " * 40 + "alpha two.", ("alpha",)).startswith("[alpha] one.")


def test_pieces_the_index_reads_alike_are_one_leaf():
    """Case and accents are folded by FTS5, so ``le Le`` or ``café Cafe`` are one word to it; as
    two leaves they were scored twice where ``le le`` counts once (decision 374). A piece with
    other punctuation stays a leaf of its own, as before (``fields fields?``)."""
    assert build_lexical_query("title: le Le").leaves == build_lexical_query("title: le le").leaves
    assert build_lexical_query("café Cafe CAFÉ").leaves == (Term("café"),)
    assert build_lexical_query("fields fields?").leaves == (Term("fields"), Term("fields?"))
    assert [p.words for p in build_lexical_query("Rust book rust BOOK").pairs] == [("Rust", "book"), ("book", "rust")]


def test_chinese_question_phrasing_is_cut_out_of_its_run():
    """Decision 718: ``Suspense 是什么`` ranked passages saying 是什么 (a rare bigram pair) above the
    Suspense page; the phrasing is dropped when other words remain, as English stop words are."""
    from local_vector_search_mcp.search.stopwords import chinese_phrasing

    assert build_lexical_query("Suspense 是什么").leaves == (Term("Suspense"),)
    assert build_lexical_query("Suspense 是什么").terms == ("Suspense",)  # never lit in a snippet
    assert build_lexical_query("列表渲染时为什么要加 key").leaves == (CjkRun("列表渲染时"), CjkRun("要加"), Term("key"))
    assert build_lexical_query("可以同时使用 v-if 和 v-for 吗").leaves == (
        CjkRun("同时使用"),
        Term("v-if"),
        CjkRun("和"),
        Term("v-for"),
    )
    assert build_lexical_query("是什么").leaves == (CjkRun("是什么"),)  # only phrasing: still searched
    assert build_lexical_query("生命周期钩子").leaves == (CjkRun("生命周期钩子"),)  # no phrasing: one run
    assert chinese_phrasing("什么是组合式") == [("什么是", True), ("组合式", False)]
    assert chinese_phrasing("能用吗") == [("能用", False), ("吗", True)]  # a particle only ends a run
    assert chinese_phrasing("吗啡") == [("吗啡", False)]


def test_chinese_fillers_are_cut_only_from_a_question_and_traditional_forms_count():
    """Review of 718: 需要 ("demand" in Japanese, 需要予測) was cut from every run, and 是什麼 (Traditional)
    was kept whole."""
    assert build_lexical_query("需要予測").leaves == (CjkRun("需要予測"),)
    assert build_lexical_query("可以 组件").leaves == (CjkRun("可以"), CjkRun("组件"))  # asks nothing
    assert build_lexical_query("请问 组件").leaves == (CjkRun("请问"), CjkRun("组件"))
    assert build_lexical_query("请问 Suspense 是什么").leaves == (Term("Suspense"),)
    assert build_lexical_query("Suspense 是什麼").leaves == (Term("Suspense"),)
    assert build_lexical_query("為什麼要加 key").leaves == (CjkRun("要加"), Term("key"))


def test_japanese_question_phrasing_is_cut_where_it_ties_nothing():
    """Decision 1174: a Japanese question keeps its grammar inside the run (``すれ``, ``れば``,
    ``すか`` counted like the topic's pairs); a function-word stretch at a run's end, before a Latin
    word, next to 何 or holding an interrogative is phrasing, a particle between two words is not."""
    from local_vector_search_mcp.search.stopwords import japanese_phrasing

    assert japanese_phrasing("設定を無効にするにはどうすればいい") == [
        ("設定を無効", False),
        ("にするにはどうすればいい", True),
    ]
    assert japanese_phrasing("ルールとは何ですか") == [("ルール", False), ("とは何ですか", True)]
    assert japanese_phrasing("使うには") == [("使う", False), ("には", True)]  # okurigana stays
    assert japanese_phrasing("新しい設定") == [("新しい設定", False)]  # no bare okurigana is listed
    assert japanese_phrasing("どのルールを使う") == [("どの", True), ("ルールを使う", False)]
    assert japanese_phrasing("などの設定") == [("などの", True), ("設定", False)]  # など + の, not な + どの
    assert japanese_phrasing("何を設定") == [("何を", True), ("設定", False)]
    assert japanese_phrasing("インストール方法") == [("インストール方法", False)]
    # a letter left alone would search as the prefix of every pair starting with it: it keeps its pair
    assert japanese_phrasing("型とは") == [("型と", False), ("は", True)]
    assert japanese_phrasing("色の値は何") == [("色の値", False), ("は何", True)]
    assert build_lexical_query("ESLintとは何ですか").leaves == (Term("ESLint"),)
    assert build_lexical_query("a要素にhref属性を設定するには").leaves == (
        CjkRun("要素"),
        Term("href"),
        CjkRun("属性を設定"),
    )
    assert build_lexical_query("画像の代替テキストを設定したい").terms == ("画像の代替テキストを設定",)
    assert build_lexical_query("どうすればいいですか").leaves == (CjkRun("どうすればいいですか"),)  # only phrasing
    assert build_lexical_query("是什么 组件").leaves == (CjkRun("组件"),)  # no kana: the Chinese rule


def test_japanese_phrasing_between_a_words_kana_head_and_the_next_word_ties_them():
    """Decision 1181: a hiragana stretch opening the run was taken as at the run's edge whole, so
    its function-word tail was cut although its own head stood before it and a word after it:
    ``よくある質問`` searched ``よく`` and ``質問`` apart, losing ``くあ``, ``ある``, ``る質``."""
    from local_vector_search_mcp.search.stopwords import japanese_phrasing

    assert japanese_phrasing("よくある質問") == [("よくある質問", False)]
    assert japanese_phrasing("いろいろな設定") == [("いろいろな設定", False)]
    assert build_lexical_query("よくある質問は").terms == ("よくある質問",)
    # the tail still goes at the run's end, and a stretch of phrasing only at the run's start
    assert japanese_phrasing("よくある") == [("よく", False), ("ある", True)]
    assert japanese_phrasing("などの設定") == [("などの", True), ("設定", False)]


def test_a_cut_keeps_a_character_whole_within_the_stream_safe_limit():
    # 20,000 marks after a letter (or 5,000 joined emoji) carried a snippet without bound (decision 1013)
    marks = "a" * 239 + "\u0301" * 20_000
    assert len(make_snippet(marks, ("zzz",))) < 300
    joined = "\U0001f469\u200d" * 5_000
    assert len(make_snippet("word " * 60 + joined, ("word",))) < 400


def test_the_written_out_marks_are_those_unicodedata_names() -> None:
    """The mark classes are written out, not scanned at import (decision 1012): a Python whose
    Unicode assigns other marks fails here until ``_BMP_MARK_RANGES`` is written out again."""
    import unicodedata

    from local_vector_search_mcp.search import text

    def scanned(low: int, high: int) -> set[int]:
        return {c for c in range(low, high) if unicodedata.category(chr(c))[0] == "M"}

    def written(ranges: str) -> set[int]:
        bounds = [[int(code, 16) for code in item.split("-")] for item in ranges.split()]
        return {c for b in bounds for c in range(b[0], b[-1] + 1)}

    assert unicodedata.unidata_version == text._MARKS_UNICODE
    assert written(text._BMP_MARK_RANGES) == scanned(0, 0x10000)
    assert written(text._OTHER_MARK_RANGES) == scanned(0x10000, 0x20000) | scanned(0xE0100, 0xE01F0)
    assert scanned(0x20000, 0xE0100) | scanned(0xE01F0, 0x110000) == set()


def _error_table(rows: int, target: str, at_row: int) -> str:
    """A Markdown error-code table as decision 873 keeps it, one chunk: every code shares its
    first words (``FST_ERR``), ``target`` is row ``at_row``."""
    codes = [f"FST_ERR_{('NOT_FOUND', 'CTP_INVALID', 'HOOK')[i % 3]}_{i}" for i in range(rows)]
    codes[at_row] = target
    lines = ["| Code | Description | How to solve | Discussion |", "|---|---|---|---|"]
    lines += [
        f'| <a id="{c.lower()}">{c}</a> | Something about {c.split("_")[2].lower()} went wrong. | '
        f"Read the [manual](./Manual.md#{c.lower()}). | [#1168](https://github.com/fastify/fastify/pull/1168) |"
        for c in codes
    ]
    return "\n".join(lines)


def test_a_long_tables_snippet_shows_the_row_that_matched():
    # decision 1020: the first rows' FST_ERR was all a snippet of a 21 KB table could show
    table = _error_table(120, "FST_ERR_CTP_BODY_TOO_LARGE", 90)
    assert len(table) > 20_000 and table.index("FST_ERR_CTP_BODY_TOO_LARGE") > 15_000
    snippet = make_snippet(table, build_lexical_query("FST_ERR_CTP_BODY_TOO_LARGE").terms)
    assert "[FST]_[ERR]_[CTP]_[BODY]_TOO_[LARGE]" in snippet
    assert len(snippet) <= 16 * 16 + 6


def test_an_identifier_matched_whole_beats_its_parts_met_earlier():
    terms = build_lexical_query("FST_ERR_PLUGIN_TIMEOUT").terms
    parts = "The fst logger writes err lines when a plugin hits its timeout. "
    # near the first match: a window holding every part loses to the one holding the identifier
    near = parts + "Then it throws FST_ERR_PLUGIN_TIMEOUT and stops."
    assert "throws [FST]_[ERR]_[PLUGIN]_[TIMEOUT]" in make_snippet(near, terms)
    # and far from it, past the anchors tried around the first match, in a text longer than a chunk's
    # usual size (a table kept whole)
    far = parts + "Nothing else here. " * 230 + "Then it throws FST_ERR_PLUGIN_TIMEOUT and stops."
    assert len(far) > 4096 and "throws [FST]_[ERR]_[PLUGIN]_[TIMEOUT]" in make_snippet(far, terms)
    # a chunk of the usual size keeps its first match's neighbourhood (decision 1035: the whole
    # text's pass cost every search ~3 ms at 50k chunks)
    usual = parts + "Nothing else here. " * 60 + "Then it throws FST_ERR_PLUGIN_TIMEOUT and stops."
    assert make_snippet(usual, terms).startswith("The [fst] logger")
    # the parts alone elsewhere in the text, no identifier: the earliest window, as before
    assert make_snippet(parts + "x " * 300 + parts, terms).startswith("The [fst] logger")


def test_a_short_chunks_snippet_is_the_same_as_before():
    text = (
        "Every pointer carries two hashes: one of the element itself and one of its subtree. "
        "When two agents change the same paragraph, the second edit is refused with CONFLICT."
    )
    terms = build_lexical_query("how do I keep edits safe when two agents change the same file").terms
    assert make_snippet(text, terms) == (
        "...of its subtree. When [two] [agents] [change] the same paragraph, the second [edit] is refused with..."
    )
    table = _error_table(3, "FST_ERR_CTP_BODY_TOO_LARGE", 0)
    assert make_snippet(table, build_lexical_query("manual").terms) == (
        "...went wrong. | Read the [[manual]](./[Manual].md#fst_err_ctp_body_too_large). | [#1168](https://github..."
    )


def test_the_case_blind_pattern_is_compiled_only_for_text_lower_casing_would_shift():
    # compiling the alternation with IGNORECASE was most of a new question's highlighter (~0.5 of
    # 0.8 ms); lower-cased text is scanned with the plain one (decisions 390, 1097)
    from local_vector_search_mcp.search import text

    terms = build_lexical_query("editing pointers").terms
    text._ignoring_case.cache_clear()
    assert make_snippet("Every Pointer edit is checked.", terms) == "Every [Pointer] [edit] is checked."
    assert text._ignoring_case.cache_info().currsize == 0
    assert make_snippet("\u0130 pointer edits", terms) == "\u0130 [pointer] [edits]"
    assert text._ignoring_case.cache_info().currsize == 1
