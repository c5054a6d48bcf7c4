"""Stop words: query words that say how a question is asked, not what it is about.

BM25 gives a word that occurs in half the chunks almost no weight, but it still
lets every chunk holding it into the OR-ed candidate set (cost grows with the
posting lists read) and into the snippet highlights (``[the]``, ``[to]``). The
engine drops these words from a lexical query when other words remain and
keeps them when the query is only stop words (``to be or not to be`` must
still find something). The lists are about query *phrasing*: question words,
auxiliaries, pronouns, articles and prepositions; nothing a technical term
could be (``not``, ``null``, ``all``, ``any``, ``one``, ``first`` stay
searchable, so do all identifiers: a piece with punctuation inside is never a
stop word).

Other languages (decision 515): German, French, Spanish, Portuguese, Italian
and Russian have lists of the same kind. A Latin-script language's list applies
to a query only when the query reads as that language: at least two of its
different words are in the list, and more than are in the English list. One
word is no evidence (``die``, ``come``, ``a`` are English words too; ``de la
soul`` is not English, ``how to die`` is). Russian words cannot be English, so
its list applies whenever the query holds one of them. Negations and
quantifiers stay searchable in every language, as ``not`` and ``all`` do in
English (``не``, ``nicht``, ``pas``, ``все``); so do ``des`` and ``man``, which
are also technical terms.

Chinese (decision 718): CJK runs are matched as character bigrams, where a function
character (``的``) only ever appears inside a pair, so there is no list of single
characters. What a question adds is its phrasing, written inside the run:
``Suspense 是什么``, ``为什么解构 reactive 对象之后就失去响应性了``. Its bigrams (``是什``,
``什么``) are rare as pairs and outranked the page about the question's subject.
:func:`chinese_phrasing` cuts those question words and sentence-final particles out of a
run; the rest of the run is searched as before. Only words no technical term contains.

Japanese (decision 1174): a Japanese question keeps its grammar inside the run as well
(``設定を無効にするにはどうすればいい``, ``ルールとは何ですか``), and its kana pairs (``すれ``, ``れば``,
``すか``) counted like the topic's. A run holding kana is Japanese (Chinese has none), and
:func:`japanese_phrasing` cuts out of it the hiragana stretches that read as a sequence of the
function words of :data:`JAPANESE_FUNCTION` (particles, endings, the copula, light verbs:
``には``, ``するには``, ``どうすればいい``, ``ですか``) where they tie nothing: at either end of
the run (before a Latin word, at the query's end), next to ``何``, or holding an interrogative
(``どう``, ``なぜ``). A particle between two words (``設定を無効``) stays: the pairs across it are the
phrase a page writes the same way. A stretch that reads so only from some point on keeps its head
with the word before it (the okurigana of ``使うには`` stays ``使う``); ``何`` or ``何故`` alone asks.
Those pieces are phrasing, dropped as Chinese question words are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..index.cjk import CJK_RUN, word_tokens

__all__ = [
    "CHINESE_QUESTION",
    "ENGLISH",
    "EVERY_QUERY",
    "JAPANESE_FUNCTION",
    "LATIN_LANGUAGES",
    "RUSSIAN",
    "asks_in_chinese",
    "asks_in_japanese",
    "chinese_phrasing",
    "cjk_phrasing",
    "is_stop_word",
    "japanese_phrasing",
    "query_language",
    "query_stop_words",
]

_ENGLISH_WORDS = """
    a about above after again against am an and are as at be because been before being below between both but by
    can could did do does doing down during each else ever for from further had has have having he her here hers
    herself him himself his how i i'm if in into is it it's its itself just let me might more most must my myself
    no nor of off on once only or other our ours ourselves out over own same shall she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up upon us
    very was we were what when where whether which while who whom whose why will with within without would you
    your yours yourself yourselves
"""
ENGLISH = frozenset(_ENGLISH_WORDS.split())

# Question words, auxiliaries, pronouns, articles, prepositions and conjunctions of each language,
# compared as the index folds them (:func:`_word`: ``où`` and ``ou`` are one word to it).
_GERMAN = """
    aber als am an auch auf aus bei bin bis bist da damit dann das dass dem den denn der dich dir die
    doch du durch ein eine einem einen einer eines er es euch euer für habe haben hast hat hatte hier ich
    ihm ihn ihnen ihr im in ist kann kannst können könnte mein meine mich mir mit muss müssen nach noch ob
    oder sehr sein seine sich sie sind soll sollte über um und uns unser vom von vor war waren warum was
    weil welche welcher welches wenn wer werde werden wie wieso wir wird wo woher wohin zu zum zur
"""
_FRENCH = """
    à au aux avec ce ces cet cette comment dans de du elle elles en est et être il ils je la le les leur
    lui ma mais me mes moi mon ne nos notre nous on ou où par peut peux pour pourquoi qu quand que quel
    quelle quelles quels qui sa se ses si son sont sur ta te tes toi ton tu un une vos votre vous y
"""
_SPANISH = """
    a al como cómo con cual cuál cuando cuándo de del donde dónde el él ella ellos en es esta está este
    esto estos ha hay la las le les lo los me mi mis muy nos o para pero por porque puedo que qué se si
    su sus te tu tú un una unas uno unos y ya yo
"""
_PORTUGUESE = """
    a ao aos as à às com como da das de do dos e é ela ele em entre essa esse esta este eu isso isto na
    nas no nos o os ou para pela pelo por porque posso qual quando que quem se seu sua são um uma você
"""
_ITALIAN = """
    a ad al alla alle allo che chi ci come con cosa da dal dalla dei del della delle dello di dove e è
    gli ha ho i il in io la le lo ma mi ne nel nella perché per posso qual quale quando se si sono su
    sul sulla ti tu un una uno vi
"""
_RUSSIAN = """
    а без бы был была были было в вам вас во вот где да для до его ее её если есть же за и из или им их
    к как какая какие каким какой когда кто ли либо мне может можно мой мы на над о об он она они оно от
    по под почему при с со так также там то тоже у уже хотя чего чем что чтобы эта эти это этот я
"""
# quotes, brackets, backticks and sentence marks around a word; not a sigil (``$i``, ``@when``)
_AROUND = "\"'`()[]{}<>\u2018\u2019\u201c\u201d\u00ab\u00bb\u00bf\u00a1.,;:!?\u2026"


def _word(piece: str) -> str:
    """A piece as the lists are compared: without the punctuation around it, lower-cased, and a
    non-ASCII one folded as the index folds it (``où`` -> ``ou``), so a query typed without its
    accents has the same stop words (decision 372)."""
    word = piece.strip(_AROUND).lower()
    return word if word.isascii() else "".join(word_tokens(word))


def _words(text: str) -> frozenset[str]:
    return frozenset(_word(w) for w in text.split())


LATIN_LANGUAGES: dict[str, frozenset[str]] = {
    "de": _words(_GERMAN),
    "fr": _words(_FRENCH),
    "es": _words(_SPANISH),
    "pt": _words(_PORTUGUESE),
    "it": _words(_ITALIAN),
}
RUSSIAN = _words(_RUSSIAN)
EVERY_QUERY = ENGLISH | RUSSIAN  # the stop words of every query: Russian words cannot be English
_EVIDENCE = 2  # different words of a Latin-script language's list that make a query read as it


def _readings(pieces: Iterable[str]) -> dict[str, int]:
    """Each Latin-script language a query of whitespace-free ``pieces`` reads as (see the module
    docstring), with how many different words of its list the query holds; in the order of
    ``LATIN_LANGUAGES``."""
    words = {_word(p) for p in pieces}
    english = len(words & ENGLISH)
    hits = {language: len(words & stop) for language, stop in LATIN_LANGUAGES.items()}
    return {language: n for language, n in hits.items() if n >= _EVIDENCE and n > english}


def query_stop_words(pieces: Iterable[str]) -> frozenset[str]:
    """The stop words of a query made of whitespace-free ``pieces``: English, Russian, and each
    Latin-script language the query reads as (see the module docstring)."""
    out = EVERY_QUERY
    for language in _readings(pieces):
        out |= LATIN_LANGUAGES[language]
    return out


def query_language(pieces: Iterable[str]) -> str:
    """The language whose stems a query's words match (``stem.query_stems``, decision 518): the
    Latin-script language it reads as with the most of its words in that list (the first of
    ``LATIN_LANGUAGES`` on a tie), else ``en``."""
    readings = _readings(pieces)
    return max(readings, key=readings.__getitem__, default="en")


# English words that open a question (interrogatives and auxiliaries: ``How do I ...``, ``Can I ...``).
INTERROGATIVES = frozenset(
    (
        "how",
        "what",
        "why",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "can",
        "could",
        "should",
        "shall",
        "is",
        "are",
        "am",
        "was",
        "were",
        "do",
        "does",
        "did",
        "will",
        "would",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
    )
)


def reads_as_question(query: str) -> bool:
    """Whether ``query`` is phrased as an English question: a question mark at its end, or an
    interrogative or auxiliary word first (``fusion.is_question`` adds that it reads as prose)."""
    pieces = query.split()
    if not pieces:
        return False
    return query.rstrip().endswith(("?", "\uff1f")) or pieces[0].lower().strip("\"'") in INTERROGATIVES


def is_stop_word(piece: str, stop_words: frozenset[str] = EVERY_QUERY) -> bool:
    """Whether a whitespace-free query piece is one of ``stop_words`` (those of its query,
    :func:`query_stop_words`; by default :data:`EVERY_QUERY`'s, which apply to every query):
    case-insensitive, quotes, brackets, backticks and sentence punctuation around it ignored
    (``(the)``, ```a```, ``when?``; decision 371)."""
    return _word(piece) in stop_words


# Chinese question words and phrasings, longest first where one holds another (是什么 before 什么).
# Simplified and Traditional forms alike (是什么 / 是什麼).
_CHINESE_WORDS = """
    是什么 什么是 为什么 有什么 有没有 是不是 能不能 可不可以 会不会 怎么样 怎么办 怎么 怎样 如何 为何
    什么 哪些 哪个 哪里 是否 能否
    是什麼 什麼是 為什麼 有什麼 有沒有 會不會 怎麼樣 怎麼辦 怎麼 為何 什麼 哪個 哪裡
"""
# Phrasing that asks, cut only from a query that asks (holds a question word above): 可以 and 应该
# are terms in some other text, and Japanese has 可以 nowhere but 需要 ("demand") as a noun.
_CHINESE_ASKING = "请问 請問 可以 应该 應該"
_CHINESE_QUESTION = _CHINESE_WORDS.split()
_CHINESE_FILLER = _CHINESE_ASKING.split()
_CHINESE_FINAL = "吗呢吧"  # sentence-final particles, only at the end of a run
CHINESE_QUESTION = re.compile("|".join(_CHINESE_QUESTION))
_CHINESE_PHRASING = re.compile("|".join([*_CHINESE_QUESTION, *_CHINESE_FILLER]) + f"|[{_CHINESE_FINAL}]$")
_CHINESE_BARE = re.compile("|".join(_CHINESE_QUESTION) + f"|[{_CHINESE_FINAL}]$")  # a query that does not ask
_CHINESE_YES_NO = re.compile(f"[{_CHINESE_FINAL[:2]}][\\s?？!！。.]*$")  # …吗？ …呢


def asks_in_chinese(text: str) -> bool:
    """Whether ``text`` asks a question in Chinese: it holds a question word, or ends with 吗 or 呢."""
    return CHINESE_QUESTION.search(text) is not None or _CHINESE_YES_NO.search(text) is not None


def chinese_phrasing(run: str, asks: bool | None = None) -> list[tuple[str, bool]]:
    """A CJK ``run`` cut into its pieces, each with whether it is question phrasing
    (``列表渲染时为什么要加`` -> ``列表渲染时``, ``为什么`` (phrasing), ``要加``); in order,
    none empty. A run without phrasing is one piece. ``asks``: whether the whole query holds a
    question word (the fillers 请问, 可以, 应该 are phrasing only then); by default, this run's."""
    out: list[tuple[str, bool]] = []
    at = 0
    if asks is None:
        asks = CHINESE_QUESTION.search(run) is not None
    pattern = _CHINESE_PHRASING if asks else _CHINESE_BARE
    for m in pattern.finditer(run):
        if m.start() > at:
            out.append((run[at : m.start()], False))
        out.append((m.group(), True))
        at = m.end()
    if at < len(run):
        out.append((run[at:], False))
    return out


# Japanese function words, from its grammar (decision 1174): the case and binding particles, the
# compound particles, the interrogatives written in kana, the copula and the polite endings, the
# question endings, and the light verbs (する, できる, なる, ある, いる) in the forms a question
# takes. A hiragana stretch reads as phrasing when it is a sequence of them (``にはどうすればいい`` is
# に + は + どう + すれば + いい). No bare okurigana (い, し, う, く ...): ``新しい`` must stay whole.
_JAPANESE_WORDS = """
    は が を に で と の へ も や か ね よ な ば だ から まで より など だけ しか ほど くらい ぐらい
    について として による により における において によって ので のに けど けれど けれども でも って
    という といった ように よう ため こと もの とき
    なに なぜ どう どうして どうやって どの どこ どれ どんな どのよう どちら いつ いかが
    です でした でしょう だろう である ではない じゃない ない なく なかった なければ
    ます ました ません ましょう たい たく たら れば れる られる せる させる
    する した して しない します しました しません したい したら すれば すると される させ
    できる でき できます できない できれば なる なり なります なって ある あり あります
    いる います いない いて いい よい ください
"""
JAPANESE_FUNCTION = frozenset(_JAPANESE_WORDS.split())
_JAPANESE_LONGEST = max(map(len, JAPANESE_FUNCTION))
_JAPANESE_INTERROGATIVES = frozenset(
    [
        "なに",
        "なぜ",
        "どう",
        "どうして",
        "どうやって",
        "どの",
        "どこ",
        "どれ",
        "どんな",
        "どのよう",
        "どちら",
        "いつ",
        "いかが",
    ]
)
_JAPANESE_ASKING = frozenset(("何", "何故"))  # kanji interrogatives, a stretch of their own
_KANA = re.compile("[\u3041-\u30ff\u31f0-\u31ff\uff66-\uff9f]")  # a run holding one is Japanese
_HIRAGANA = re.compile("[\u3041-\u309f]")
_HIRAGANA_STRETCHES = re.compile("[\u3041-\u309f]+|[^\u3041-\u309f]+")


def _function_words(stretch: str) -> tuple[int, list[str]]:
    """Where the longest end of a hiragana ``stretch`` that reads as a sequence of Japanese function
    words starts (``len(stretch)`` when none does), and those words (the longest first where two
    readings exist: ``などの`` is など + の, not な + どの)."""
    n = len(stretch)
    reads = [False] * n + [True]  # reads[i]: stretch[i:] is a sequence of function words
    for i in range(n - 1, -1, -1):
        reads[i] = any(
            reads[j] and stretch[i:j] in JAPANESE_FUNCTION for j in range(i + 1, min(n, i + _JAPANESE_LONGEST) + 1)
        )
    at = next(i for i in range(n + 1) if reads[i])
    words: list[str] = []
    i = at
    while i < n:
        j = next(
            j for j in range(min(n, i + _JAPANESE_LONGEST), i, -1) if reads[j] and stretch[i:j] in JAPANESE_FUNCTION
        )
        words.append(stretch[i:j])
        i = j
    return at, words


def japanese_phrasing(run: str) -> list[tuple[str, bool]]:
    """A Japanese ``run`` cut into its pieces, each with whether it is phrasing (see the module
    docstring): ``設定を無効にするにはどうすればいい`` -> ``設定を無効``, ``にするにはどうすればいい``
    (phrasing); in order, none empty, neighbours alike joined."""
    stretches = [m.group() for m in _HIRAGANA_STRETCHES.finditer(run)]
    pieces: list[tuple[str, bool]] = []
    for k, stretch in enumerate(stretches):
        if not _HIRAGANA.match(stretch):
            pieces.append((stretch, stretch in _JAPANESE_ASKING))
            continue
        at, words = _function_words(stretch)
        # what the phrasing touches: the kanji or katakana after it, and before it only when the
        # whole stretch is phrasing (else the stretch's own head is there: `よく` of `よくある質問`)
        near = (stretches[k - 1 : k] if at == 0 else [stretch[:at]]) + stretches[k + 1 : k + 2]
        edge = len(near) < 2 or any(s in _JAPANESE_ASKING for s in near)
        if at == len(stretch) or not (edge or _JAPANESE_INTERROGATIVES.intersection(words)):
            pieces.append((stretch, False))  # no function word, or a particle tying two words
            continue
        if at:
            pieces.append((stretch[:at], False))  # okurigana or a word in kana: with the word before
        pieces.append((stretch[at:], True))
    out: list[tuple[str, bool]] = []
    for text, phrasing in pieces:
        if out and out[-1][1] == phrasing:
            out[-1] = (out[-1][0] + text, phrasing)
        else:
            out.append((text, phrasing))
    return _no_single_letter(out)


def _no_single_letter(pieces: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """``pieces`` without a content piece of one letter next to phrasing, which would search as
    the prefix of every pair starting with it (``型`` of ``型とは``): it takes the letter after it
    from the phrasing that follows (else the one before it), the pair the run had there."""
    out = list(pieces)
    for i, (text, phrasing) in enumerate(out):
        if phrasing or len(text) != 1:
            continue
        if i + 1 < len(out) and out[i + 1][0]:
            after = out[i + 1][0]
            out[i : i + 2] = [(text + after[0], False), (after[1:], True)]
        elif i and out[i - 1][0]:
            before = out[i - 1][0]
            out[i - 1 : i + 1] = [(before[:-1], True), (before[-1] + text, False)]
    return [(text, phrasing) for text, phrasing in out if text]


def cjk_phrasing(run: str, asks: bool | None = None) -> list[tuple[str, bool]]:
    """A CJK ``run`` cut into its pieces, each with whether it is question phrasing: by
    :func:`japanese_phrasing` when it holds kana, else by :func:`chinese_phrasing` (``asks``)."""
    if _KANA.search(run):
        return japanese_phrasing(run)
    return chinese_phrasing(run, asks)


_QUESTION_END = re.compile("[\\s?\uff1f!\uff01\u3002.]*$")  # what may follow a question's last word


def asks_in_japanese(text: str) -> bool:
    """Whether ``text`` asks a question in Japanese (decision 1175): a run holding kana holds an
    interrogative (``何``, ``なぜ``, ``どう``, ``どの`` ...), or ``text`` ends with the question particle
    ``か`` after function words (``ですか``, ``できますか``, ``でしょうか``, ``のか``)."""
    runs = [run for run in CJK_RUN.findall(text) if _KANA.search(run)]
    for run in runs:
        for stretch in _HIRAGANA_STRETCHES.findall(run):
            if stretch in _JAPANESE_ASKING:
                return True
            if _HIRAGANA.match(stretch) and _JAPANESE_INTERROGATIVES.intersection(_function_words(stretch)[1]):
                return True
    if not runs or not text[: _QUESTION_END.search(text).start()].endswith(runs[-1]):  # type: ignore[union-attr]
        return False
    last = _HIRAGANA_STRETCHES.findall(runs[-1])[-1]
    words = _function_words(last)[1] if _HIRAGANA.match(last) else []
    return bool(words) and words[-1] == "か"
