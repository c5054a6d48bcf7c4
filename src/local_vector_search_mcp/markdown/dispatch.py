"""Shortcuts for our block parsers, tokens unchanged (spec/decisions.md 252, 270).

**Trying only the block rules a line can start.**

markdown-it tries its block rules one by one at every block start, and a
paragraph tries every *terminator* rule (table, fence, quote, rule, list,
HTML, heading) at each of its lines: about 1.5 million calls in a cold index
of a large tree, nearly all of them returning False at their first look at
the line's first non-space character. :func:`dispatch_by_first_char` replaces
each rule chain of one parser with a single function that calls, in the
chain's order, only the rules whose opening test that character (and, for a
few, a cheap condition) can pass. A rule left out is one that would have
returned False before touching the parser state, so the tokens are exactly
the same (a test compares them token for token with stock markdown-it over
the shared corpora, and the property tests compare the element model with a
reference built on stock parsers). A rule this module does not know is
always called.

**Line tables at C speed.** markdown-it's block state measures every line
(start, end, indentation) in a Python loop per line; :class:`_LineTables`
computes the same lists from one ``split`` with ``map`` and ``accumulate``
(a test holds them equal to markdown-it's for any text).

**Tokens made without the dataclass constructor.** markdown-it's ``Token`` is a
slotted dataclass whose generated ``__init__`` (13 parameters, two default
factories, ``__post_init__``) was most of ``StateBlock.push``; a cold index pushes
half a million block tokens. :class:`_FastState` fills the same slots with the
values that constructor and ``push`` give them, at less than half the cost. It is
used only while ``Token``'s fields are the ones it fills (checked at import).

**Tables without their row and cell tokens.** A table is ``table_open``, then
``thead``/``tbody``/``tr``/``th``/``td`` open and close tokens around one ``inline``
token per cell, then ``table_close``: two fifths of a cold pass's block tokens,
and nothing of ours reads the structure ones (the element model takes the
table's line range from ``table_open``, link extraction the cells' ``inline``
tokens). :func:`lean_tables` runs the table rule with a state that counts those
tokens' levels but keeps none of them (spec/decisions.md 279): every other token,
each cell's ``inline`` token included (level and all), is what markdown-it makes.

**A paragraph's lines scanned once.** markdown-it tries ``lheading`` (a setext
heading) before ``paragraph`` at every line that starts neither: ``lheading``
walks the following lines, trying every paragraph terminator at each, looking
for a ``===``/``---`` underline, and when it finds none returns False, and
``paragraph`` walks the same lines with the same terminators again. Both walks
stop at the same line (an empty line or the first line a terminator accepts;
the underline test changes nothing), so :func:`one_pass_paragraphs` makes
``lheading`` a rule that, having found no underline, makes the paragraph
``paragraph`` would make from where it stopped, parent type included (the stock
``lheading`` leaves ``state.parentType`` at ``"paragraph"`` when it fails, and
``paragraph`` then restores that). Where the two walks could differ (``lheading``
bounded by its ``endLine``, ``paragraph`` by ``state.lineMax``, and each hands its
bound to the terminators) or ``lheading`` declines at once (an indented line),
the stock rules run (spec/decisions.md 710).

**Normalizing only what needs it.** markdown-it's first core rule rewrites every
line break with a regular expression (``\\r\\n?|\\n`` to ``\\n``, one match per line)
and every NUL; :func:`fast_normalize` gives the rule a text without ``\\r`` or NUL
back as it is (the same string the substitutions would build) and leaves any
other text to markdown-it's own rule.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from itertools import accumulate
from operator import add, eq, methodcaller, sub
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.rules_core.normalize import normalize as _stock_normalize
from markdown_it.rules_core.state_core import StateCore
from markdown_it.token import Token

__all__ = [
    "TABLE_STRUCTURE",
    "dispatch_by_first_char",
    "fast_line_tables",
    "fast_normalize",
    "lean_tables",
    "line_tables",
    "one_pass_paragraphs",
]

Rule = Callable[[Any, int, int, bool], bool]

ALWAYS, PIPE, INDENTED, FIRST_LINE = 0, 1, 2, 3

# The characters a rule's opening test accepts as the line's first non-space character
# (markdown-it-py 4: each returns False for any other character before changing anything).
_OPENERS: dict[str, str] = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "reference": "[",
    "html_block": "<",
    "heading": "#",
    "front_matter": "-+",  # YAML's ``---``, TOML's ``+++``
}
# Rules gated by a condition instead: a table's header line holds a "|"; an indented code
# block needs 4 columns of indentation; front matter starts on the first line ("-" or "+" too).
_CONDITIONS = {"table": PIPE, "code": INDENTED, "front_matter": FIRST_LINE}


def _dispatcher(entries: list[tuple[Rule, str]]) -> Rule:
    special = {ch for _, name in entries for ch in _OPENERS.get(name, "")}

    def applicable(ch: str | None) -> tuple[tuple[Rule, int], ...]:
        """The chain's rules (in order) whose opening test can pass on first character ``ch``
        (None: any character without an opener of its own)."""
        out = []
        for fn, name in entries:
            chars = _OPENERS.get(name)
            if chars is not None and (ch is None or ch not in chars):
                continue
            out.append((fn, _CONDITIONS.get(name, ALWAYS)))
        return tuple(out)

    by_char = {ch: applicable(ch) for ch in special}
    other = applicable(None)

    def dispatch(state: Any, line: int, end_line: int, silent: bool) -> bool:
        src = state.src
        pos = state.bMarks[line] + state.tShift[line]
        for fn, condition in by_char.get(src[pos], other) if pos < len(src) else other:
            if condition:
                if condition == PIPE:
                    if src.find("|", pos, state.eMarks[line]) < 0:
                        continue
                elif condition == INDENTED:
                    if not state.is_code_block(line):
                        continue
                elif line != 0:  # FIRST_LINE
                    continue
            if fn(state, line, end_line, silent):
                return True
        return False

    return dispatch


def dispatch_by_first_char(md: MarkdownIt) -> MarkdownIt:
    """Replace each compiled block rule chain of ``md`` by one dispatching function.

    Must be the last change to ``md``'s block rules: enabling, disabling or
    replacing a rule recompiles the chains (dropping the dispatchers, which is
    slower but still correct)."""
    ruler = md.block.ruler
    ruler.getRules("")  # compiles every chain
    cache: dict[str, list[Rule]] | None = ruler.__cache__
    if cache is None:  # pragma: no cover - getRules always compiles
        return md
    names = {id(rule.fn): rule.name for rule in ruler.__rules__}
    for chain, fns in list(cache.items()):
        cache[chain] = [_dispatcher([(fn, names.get(id(fn), "")) for fn in fns])]
    return md


_LSTRIP = methodcaller("lstrip", " \t")


def line_tables(src: str) -> tuple[list[int], list[int], list[int], list[int]]:
    """``(bMarks, eMarks, tShift, sCount)`` of ``src`` (``\n`` breaks only, as markdown-it
    sees it), with markdown-it's fake entry at the end: a last line of nothing but spaces
    and tabs gets no entry, nor does the empty rest after a final break."""
    parts = src.split("\n")
    if not _LSTRIP(parts[-1]):
        parts.pop()
    lengths = list(map(len, parts))
    shifts = list(map(sub, lengths, map(len, map(_LSTRIP, parts))))
    begins = [0, *accumulate(map((1).__add__, lengths[:-1]))] if parts else []
    ends = list(map(add, begins, lengths))
    if "\t" in src:
        counts = []
        for part, shift in zip(parts, shifts, strict=True):
            offset = 0
            for character in part[:shift]:
                offset += 4 - offset % 4 if character == "\t" else 1
            counts.append(offset)
    else:
        counts = shifts.copy()
    length = len(src)
    begins.append(length)
    ends.append(length)
    shifts.append(0)
    counts.append(0)
    return begins, ends, shifts, counts


_TOKEN_FIELDS = (
    *("type", "tag", "nesting", "attrs", "map", "level", "children"),
    *("content", "markup", "info", "meta", "block", "hidden"),
)
_new = object.__new__
_plus_one = (1).__add__


class _FastState(StateBlock):
    """A block state whose :meth:`push` makes the token ``StateBlock.push`` makes, slot by slot."""

    def push(self, ttype: str, tag: str, nesting: Any) -> Token:
        token: Token = _new(Token)
        token.type = ttype
        token.tag = tag
        token.nesting = nesting
        token.attrs = {}
        token.map = None
        token.children = None
        token.content = ""
        token.markup = ""
        token.info = ""
        token.meta = {}
        token.block = True
        token.hidden = False
        if nesting < 0:
            self.level -= 1
        token.level = self.level
        if nesting > 0:
            self.level += 1
        self.tokens.append(token)
        return token

    def getLines(self, begin: int, end: int, indent: int, keepLastLF: bool) -> str:
        """markdown-it's ``getLines``; with nothing to unindent and lines that follow each
        other in the source (a blockquote moves its lines' starts past the ``>``), the
        pieces it would join are one slice of the source."""
        if indent or begin >= end:
            return str(StateBlock.getLines(self, begin, end, indent, keepLastLF))
        b_marks, e_marks = self.bMarks, self.eMarks
        if end - begin > 1 and not all(map(eq, b_marks[begin + 1 : end], map(_plus_one, e_marks[begin : end - 1]))):
            return str(StateBlock.getLines(self, begin, end, indent, keepLastLF))
        return self.src[b_marks[begin] : e_marks[end - 1] + 1 if keepLastLF else e_marks[end - 1]]


TABLE_STRUCTURE = frozenset(
    f"{name}_{side}" for name in ("thead", "tbody", "tr", "th", "td") for side in ("open", "close")
)
_DISCARDED = Token("", "", 0)  # what the table rule gets back for a structure token: written to, never read


class _LeanTableState(_FastState):
    """The block state while the table rule runs (:func:`lean_tables`)."""

    def push(self, ttype: str, tag: str, nesting: Any) -> Token:
        if ttype in TABLE_STRUCTURE:
            self.level += nesting  # the level markdown-it's push would leave, for the cells' tokens
            return _DISCARDED
        return _FastState.push(self, ttype, tag, nesting)


def lean_tables(md: MarkdownIt) -> MarkdownIt:
    """``md``'s table rule keeps no row or cell structure tokens (before :func:`dispatch_by_first_char`)."""
    ruler = md.block.ruler
    found = [rule for rule in ruler.__rules__ if rule.name == "table"]
    if not found or not FAST_PUSH:
        return md
    stock = found[0].fn

    def table(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
        if silent or type(state) is not _FastState:
            return bool(stock(state, start_line, end_line, silent))
        state.__class__ = _LeanTableState
        try:
            return bool(stock(state, start_line, end_line, silent))
        finally:
            state.__class__ = _FastState

    ruler.at("table", table, {"alt": list(found[0].alt)})
    return md


def one_pass_paragraphs(md: MarkdownIt) -> MarkdownIt:
    """``md``'s ``lheading`` rule also makes the paragraph when it finds no underline (see the
    module's docstring); before :func:`dispatch_by_first_char`, and only where ``paragraph`` is
    the rule that follows ``lheading``."""
    ruler = md.block.ruler
    names = [rule.name for rule in ruler.__rules__ if rule.enabled]
    if "lheading" not in names or names[names.index("lheading") + 1 :][:1] != ["paragraph"]:
        return md
    stock = next(rule for rule in ruler.__rules__ if rule.name == "lheading")
    stock_lheading = stock.fn

    def lheading(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
        if end_line != state.lineMax or state.is_code_block(start_line):
            return bool(stock_lheading(state, start_line, end_line, silent))
        # markdown-it's lheading, line for line, up to its "Didn't find valid underline"
        level = 0
        marker = ""
        next_line = start_line + 1
        terminators = state.md.block.ruler.getRules("paragraph")
        old_parent = state.parentType
        state.parentType = "paragraph"
        src, b_marks, e_marks, t_shift, s_count = state.src, state.bMarks, state.eMarks, state.tShift, state.sCount
        blk_indent = state.blkIndent
        while next_line < end_line and b_marks[next_line] + t_shift[next_line] < e_marks[next_line]:
            if s_count[next_line] - blk_indent > 3:
                next_line += 1
                continue
            if s_count[next_line] >= blk_indent:
                pos = b_marks[next_line] + t_shift[next_line]
                maximum = e_marks[next_line]
                if pos < maximum:
                    marker = src[pos]
                    if marker in ("-", "="):
                        pos = state.skipSpaces(state.skipCharsStr(pos, marker))
                        if pos >= maximum:
                            level = 1 if marker == "=" else 2
                            break
            if s_count[next_line] < 0:
                next_line += 1
                continue
            for rule in terminators:
                if rule(state, next_line, end_line, True):
                    break
            else:
                next_line += 1
                continue
            break
        if level:
            content = mdTrim(state.getLines(start_line, next_line, blk_indent, False))
            state.line = next_line + 1
            token = state.push("heading_open", "h" + str(level), 1)
            token.markup = marker
            token.map = [start_line, state.line]
            token = state.push("inline", "", 0)
            token.content = content
            token.map = [start_line, state.line - 1]
            token.children = []
            token = state.push("heading_close", "h" + str(level), -1)
            token.markup = marker
            state.parentType = old_parent
            return True
        # markdown-it's paragraph after a failed lheading: its walk over the same lines, bounded
        # by lineMax (== end_line), with the same terminators, stopped where this one did
        content = mdTrim(state.getLines(start_line, next_line, blk_indent, False))
        state.line = next_line
        token = state.push("paragraph_open", "p", 1)
        token.map = [start_line, state.line]
        token = state.push("inline", "", 0)
        token.content = content
        token.map = [start_line, state.line]
        token.children = []
        token = state.push("paragraph_close", "p", -1)
        state.parentType = "paragraph"  # what the failed lheading left and paragraph restored
        return True

    ruler.at("lheading", lheading, {"alt": list(stock.alt)})
    return md


# Another markdown-it release may add or change Token's fields: then the stock state is used.
FAST_PUSH = tuple(f.name for f in dataclasses.fields(Token)) == _TOKEN_FIELDS
_STATE: type[StateBlock] = _FastState if FAST_PUSH else StateBlock


def _state(src: str, md: MarkdownIt, env: Any, tokens: list[Token]) -> StateBlock:
    """markdown-it's block state for ``src``: made for an empty text (so every field a
    markdown-it release sets is set), then given ``src`` and its line tables."""
    state = _STATE("", md, env, tokens)
    state.src = src
    state.bMarks, state.eMarks, state.tShift, state.sCount = line_tables(src)
    state.bsCount = [0] * len(state.bMarks)
    state.lineMax = len(state.bMarks) - 1
    return state


def _parse(self: Any, src: str, md: MarkdownIt, env: Any, out_tokens: list[Token]) -> list[Token] | None:
    """``ParserBlock.parse`` with :func:`_state`."""
    if not src:
        return None
    state = _state(src, md, env, out_tokens)
    self.tokenize(state, state.line, state.lineMax)
    return state.tokens


def fast_line_tables(md: MarkdownIt) -> MarkdownIt:
    """``md``'s block parser builds its line tables with :func:`line_tables`."""
    md.block.parse = types.MethodType(_parse, md.block)  # type: ignore[method-assign]
    return md


def _normalize(state: StateCore) -> None:
    """markdown-it's ``normalize`` core rule, skipped when it could change nothing."""
    src = state.src
    if "\r" in src or "\0" in src:
        _stock_normalize(state)


def fast_normalize(md: MarkdownIt) -> MarkdownIt:
    """``md``'s ``normalize`` core rule runs only on a text holding a carriage return or NUL."""
    md.core.ruler.at("normalize", _normalize)
    return md
