"""The links of a simple inline run, read without markdown-it's tokenizer (decision 1040).

Link extraction reads every inline run that may hold a link with markdown-it's inline parser
(``links._MD_INLINE``). Most runs are prose with plain links (``[text](dest)``, ``![alt](src)``,
``[[Note]]``) and code spans, and the parser's rule-by-rule walk and its tokens were most of the
links table's cost in a cold index. This module reads such a run in a few regular-expression
steps and gives what that parser would: the same links with the same destination offsets, and
the same text tokens (tags are read in them).

Why the result is the parser's: the reader follows markdown-it's tokenizer. Text runs to the next
character where a rule can start (``[``, ``![``, a backtick, ``<``); a ``]`` or a ``!`` no ``[``
follows starts none. A backslash anywhere hands the whole run to markdown-it (escapes change
destinations and what a bracket is), and so do more ``[`` than the parser's nesting levels (see
``read_simple``). At each place the reader either

* reads a form whose every character markdown-it reads the same way, by the same steps: a code
  span (the backtick rule); a wikilink (``read_wikilink``, the wikilink rule's own reading); a
  link or picture whose labels hold nothing but text and code spans, inline with a plain
  destination and at most a plain title, or through a reference definition; or
* asks the parser's own rules, in validation mode, which one reads a token there, as its
  tokenizer does: none means the character is text; inline HTML (``<!-- ignore -->``, ``<kbd>``)
  is skipped as the token it is; anything else (an autolink, a nested or odd link) means the run
  is parsed by markdown-it whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.html_inline import html_inline

__all__ = ["Found", "SimpleRun", "Wikilink", "read_simple", "read_wikilink"]


class Found(NamedTuple):
    """One link of a run, as ``links._inline_links`` builds it from the parser's tokens."""

    kind: Literal["inline", "reference", "image", "wikilink", "embed"]
    destination: str
    text: str | None
    at: int  # where the destination is written in the run (-1 through a reference definition)
    end: int
    label: str | None = None  # the reference definition's, as markdown-it keys it


class SimpleRun(NamedTuple):
    links: list[Found]
    texts: list[str]  # the contents of the parser's text tokens, in order, empty ones left out


class Wikilink(NamedTuple):
    target: str
    alias: str | None
    embed: bool
    at: int  # where the target is written
    inner: str  # between the brackets, as written
    end: int  # after the closing "]]"


_WIKILINK_INNER = re.compile(r"[^\[\]\n]*")


def read_wikilink(src: str, pos: int) -> Wikilink | None:
    """``[[target|alias]]`` or ``![[target]]`` at ``pos``, on one line with no brackets inside: the
    reading of ``links.wikilink_rule``."""
    embed = src.startswith("![[", pos)
    if not embed and not src.startswith("[[", pos):
        return None
    begin = pos + (3 if embed else 2)
    # the inner text stops at the first bracket or line end, which must start "]]": a search for
    # "]]" alone ran to the end of the run from every "[[" (a square in a run of brackets)
    match = _WIKILINK_INNER.match(src, begin)
    close = match.end() if match else begin
    if not src.startswith("]]", close):
        return None
    inner = src[begin:close]
    if not inner.strip():
        return None
    if not embed and src.startswith("(", close + 2):
        return None  # `[[1]](#note-1)`: a link whose text is `[1]`, as every renderer but Obsidian reads it
    if not embed and inner.strip().lower() == "toc" and not src[:pos].strip() and not src[close + 2 :].strip():
        return None  # a paragraph of `[[toc]]` alone: the table-of-contents marker (VitePress, markdown-it-toc)
    target, pipe, alias = inner.partition("|")
    if pipe and target.endswith("\\"):
        # `[[Note\|alias]]`: the pipe Obsidian writes escaped in a table, read the same anywhere
        # (Obsidian does; decision 913), so the name is `Note`, not `Note\`
        target = target[:-1]
    at = begin + len(target) - len(target.lstrip())
    return Wikilink(target.strip(), alias.strip() or None, embed, at, inner, close + 2)


# Inside a label: its end, a code span, or what makes the label one this module does not read (a
# nested bracket: a link, an image or a wikilink; "<": an autolink or HTML that may hide the "]").
_LABEL_STOP = re.compile(r"[\[\]`<]")
_TICKS = re.compile("`+")
# After the label: "](", blanks, a plain destination (what links._PLAIN_DESTINATION takes, and no
# "&": an entity would be resolved), then ")" or blanks and a title without escapes. markdown-it
# takes a title only after a blank, and reads the destination up to a blank or ")".
_TAIL = (
    r"\]\([ \t\n]*(?P<dest>[^\x00-\x20\x7f()<\\&]+)"
    r"""(?:[ \t\n]+(?:(?:"[^"\\]*"|'[^'\\]*'|\([^()\\]*\))[ \t\n]*)?)?\)"""
)
_INLINE_TAIL = re.compile(_TAIL)


def _places(label: str, code: str) -> re.Pattern[str]:
    """What is at a place where a rule other than text may start ("\\" never reaches here: such a run
    goes to markdown-it), the common forms read in the same step: a plain link or picture ("[" or
    "![", a ``label``, the tail above) and a ``code`` span."""
    return re.compile(rf"(?P<bang>!?)\[(?P<label>{label}){_TAIL}|(?P<code>{code})|[\[`<]|!\[")


# With no longer backtick run written, an opener's closer is the next backtick (markdown-it's
# rule), so a code span is "`" up to the next "`", in a label too. Else code spans are found one
# by one (``_code_span``) and a plain label holds none.
_NEXT_SINGLE = _places(r"(?:[^\[\]`<\\]|`[^`]*`)*", r"`[^`]*`")
_NEXT = _places(r"[^\[\]`<\\]*", r"(?!)")
# Their first characters, searched alone: a pattern of alternatives is tried at every character
# of the text, a set of characters is found four times faster.
_RULE_CHAR = re.compile(r"[!\[`<]")


def read_simple(content: str, md: MarkdownIt, env: dict[str, Any]) -> SimpleRun | None:
    """The links and text tokens ``md``'s inline parse of ``content`` gives, or ``None`` when the
    run holds a form this module does not read (markdown-it must parse it)."""
    # A backslash escapes (destinations and what a bracket is change). With more "[" than the
    # parser's nesting levels, a skip it remembers from a question asked below (``state.cache``,
    # reused by its own parse inside a later link) may have been cut at its nesting limit and
    # differ from a fresh reading; with fewer it never does, and such runs are rare (one in the
    # three shared corpora).
    if "\\" in content or content.count("[") > md.options["maxNesting"]:
        return None
    references: dict[str, Any] | None = env.get("references")
    links: list[Found] = []
    texts: list[str] = []
    state: StateInline | None = None  # made only to ask the parser's rules
    places = _NEXT if "``" in content else _NEXT_SINGLE
    pos = text_from = 0
    while (found := _RULE_CHAR.search(content, pos)) is not None:
        at = found.start()
        place = places.match(content, at)
        if place is None:  # a "!" no "[" follows: text
            pos = at + 1
            continue
        if place.group("dest") is not None:
            pos = text_from = _add_plain(place, content, text_from, links, texts)
            continue
        if content[at] == "`":  # a code span: a token of its own, hiding what it holds
            end = place.end() if place.group("code") is not None else _code_span(content, at, want_content=False)[0]
            if end < 0:  # no closer: the backticks are text
                pos = -end
                continue
            texts.append(content[text_from:at])
            pos = text_from = end
            continue
        read = _link_at(content, at, references) if content[at] != "<" else None
        if read is not None:
            if read.found is None:  # no link starts here: the character is text
                pos = at + 1
                continue
            texts.append(content[text_from:at])
            texts.extend(read.texts)
            links.append(read.found)
            pos = text_from = read.end
            continue
        if state is None:
            state = StateInline(content, md, env, [])
        rule = _first_rule(state, at)
        if rule is None:  # nothing starts here: the character is text, as in markdown-it's tokenizer
            pos = at + 1
        elif rule is html_inline:  # `<!-- ignore -->`, `<kbd>`: a token that hides what it holds
            texts.append(content[text_from:at])
            pos = text_from = state.pos
        else:
            return None
    texts.append(content[text_from:])
    return SimpleRun(links, [text for text in texts if text])


def _add_plain(match: re.Match[str], content: str, text_from: int, links: list[Found], texts: list[str]) -> int:
    """Add the plain link or picture ``match`` read, and the text tokens up to its end."""
    label, destination = match.group("label"), match.group("dest")
    at, end = match.span("dest")
    texts.append(content[text_from : match.start()])
    if match.group("bang"):  # a picture's description is its label as written; its tokens are its own
        links.append(Found("image", destination, label or None, at, end))
    elif "`" not in label:  # a link's text is its label's (``links._plain_text``), a text token
        links.append(Found("inline", destination, " ".join(label.split()), at, end))
        texts.append(label)
    else:  # code spans in the label: text and code tokens, as ``_label`` reads them
        read = _label(content, match.start("label"))
        assert read is not None  # the pattern matched a label with no "[" or "<" outside code
        pieces = read[1]
        links.append(Found("inline", destination, " ".join("".join(p for p, _ in pieces).split()), at, end))
        texts.extend(piece for piece, code in pieces if not code)
    return match.end()


class _Read(NamedTuple):
    found: Found | None  # None: no link starts there (its first character is text)
    texts: list[str]  # the text tokens of the link's label
    end: int  # after the link; after what was read to know, when there is none


def _link_at(content: str, at: int, references: dict[str, Any] | None) -> _Read | None:
    """What starts at ``at`` (a ``[`` or ``![``) if this module can tell exactly: a wikilink, an
    inline or reference link or image, or nothing (the character is text); else ``None``."""
    wikilink = read_wikilink(content, at)
    if wikilink is not None:  # the wikilink rule runs before the link and image rules
        kind: Literal["wikilink", "embed"] = "embed" if wikilink.embed else "wikilink"
        target, written = wikilink.target, wikilink.at
        return _Read(Found(kind, target, wikilink.alias, written, written + len(target)), [], wikilink.end)
    image = content[at] == "!"
    label_start = at + 2 if image else at + 1
    label = _label(content, label_start)
    if label is None:
        return None
    label_end, pieces = label
    # a picture's description is its label as written (its tokens are its own); a link's text is
    # its label's text and code (``links._plain_text``), and its text tokens hold tags
    text = (content[label_start:label_end] or None) if image else " ".join("".join(p for p, _ in pieces).split())
    texts = [] if image else [piece for piece, code in pieces if not code]
    if content.startswith("(", label_end + 1):  # an inline link, or one markdown-it reads otherwise
        tail = _INLINE_TAIL.match(content, label_end)
        if tail is None:
            return None
        dest_at, dest_end = tail.span("dest")
        found = Found("image" if image else "inline", tail.group("dest"), text, dest_at, dest_end)
        return _Read(found, texts, tail.end())
    # a reference: `[text][label]`, `[label][]` or `[label]` (the link and image rules' own steps)
    if references is None:
        return _Read(None, [], label_end + 1)
    end = label_end + 1
    name = ""
    if content.startswith("[", end):
        second = _label(content, end + 1)
        if second is None:
            return None
        name, end = content[end + 1 : second[0]], second[0] + 1
    key = normalizeReference(name or content[label_start:label_end])
    ref = references.get(key)
    if not ref:
        return _Read(None, [], end)
    return _Read(Found("image" if image else "reference", str(ref["href"] or ""), text, -1, -1, key), texts, end)


def _label(content: str, start: int) -> tuple[int, list[tuple[str, bool]]] | None:
    """Where the label that starts at ``start`` ends (its "]"), and its tokens' contents (text,
    or code: ``True``), as markdown-it's ``parseLinkLabel`` and the label's own parse read them;
    ``None`` when it holds a "[" or "<"."""
    pieces: list[tuple[str, bool]] = []
    pos = text_from = start
    while (stop := _LABEL_STOP.search(content, pos)) is not None:
        at = stop.start()
        char = content[at]
        if char == "]":
            pieces.append((content[text_from:at], False))
            return at, [(piece, code) for piece, code in pieces if piece]
        if char != "`":
            return None
        end, code = _code_span(content, at, want_content=True)
        if end < 0:
            pos = -end
            continue
        pieces += [(content[text_from:at], False), (code, True)]
        pos = text_from = end
    return None


def _code_span(content: str, start: int, *, want_content: bool) -> tuple[int, str]:
    """markdown-it's backtick rule at ``start`` of the whole run: the code span's end and its
    content (with ``want_content``), or, when no run of as many backticks follows, minus the end
    of the opening run (those backticks are text)."""
    opener = _TICKS.match(content, start)
    assert opener is not None
    length = opener.end() - start
    if _last_runs(content).get(length, -1) < opener.end():
        # no later run of as many backticks, known without a scan: markdown-it's own shortcut (a
        # scan from every such opener is quadratic in a run of backtick runs of many lengths)
        return -opener.end(), ""
    for closer in _TICKS.finditer(content, opener.end()):
        if closer.end() - closer.start() == length:
            if not want_content:
                return closer.end(), ""
            code = content[opener.end() : closer.start()].replace("\n", " ")
            # one space is stripped from each side, unless the content is all spaces
            if code.startswith(" ") and code.endswith(" ") and code.strip(" "):
                code = code[1:-1]
            return closer.end(), code
    return -opener.end(), ""


@lru_cache(maxsize=8)
def _last_runs(content: str) -> dict[int, int]:
    """Where the last run of backticks of each length starts in ``content``."""
    return {match.end() - match.start(): match.start() for match in _TICKS.finditer(content)}


def _first_rule(state: StateInline, at: int) -> Callable[[StateInline, bool], bool] | None:
    """The first of the parser's rules that reads a token at ``at`` (its tokenizer's question,
    asked in validation mode), which moves ``state.pos`` past it; ``None`` if none does."""
    for rule in state.md.inline.ruler.getRules(""):
        state.pos = at
        if rule(state, True):
            return rule
    return None
