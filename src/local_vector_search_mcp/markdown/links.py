"""Links, tags and aliases of one parsed document, read from markdown-it's tokens.

What counts (spec/decisions.md 43, widened by 138): inline links and images,
reference-style links (the definition's destination), autolinks, and the
Obsidian forms ``[[Note]]``, ``[[Note#Heading]]``, ``[[Note#^block]]``,
``[[Note|alias]]``, ``[[folder/Note]]`` and the embeds ``![[Note]]`` /
``![[image.png]]``. Code spans, fenced and indented code and HTML (comments
included) hide links, because markdown-it's own rules consume them first: the
wikilink rule is one more inline rule of the same parser, not a second parser.

Cost: the block pass collects reference definitions; only inline runs that
could hold a link or a tag (a ``[``, ``<`` or ``#``) are parsed inline, which
keeps indexing within a few percent of the block-only parse.

Every link carries the span of its destination in ``Document.text``, so a move
can rewrite exactly those bytes (``rewrite``) and nothing else.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it import helpers as _helpers
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from .model import Document, Element
from .scan import MAX_NESTING

__all__ = [
    "DocumentLinks",
    "Link",
    "LinkKind",
    "LinkSource",
    "extract_links",
    "link_source",
    "load_yaml",
    "normalize_label",
    "rewrite",
]

LinkKind = Literal["inline", "reference", "autolink", "image", "wikilink", "embed"]


@dataclass(frozen=True, slots=True)
class Link:
    """One link as written.

    ``destination`` is the target as the author wrote it (backslash escapes and
    entities resolved; for a wikilink the part before ``|``, fragment included).
    ``start``/``end`` is its span in ``Document.text`` (``-1`` when it could not be
    located exactly, e.g. written with escapes; such a link is never rewritten).
    ``pointer`` is the v2 anchor of the innermost element holding the link.
    """

    kind: LinkKind
    destination: str
    text: str | None
    pointer: str | None
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class DocumentLinks:
    """What the link graph keeps of one document."""

    links: tuple[Link, ...]
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    headings: tuple[str, ...]  # heading titles, in order (fragments resolve against them)
    block_ids: tuple[str, ...]  # Obsidian ``^id`` block markers


@dataclass(frozen=True, slots=True)
class LinkSource:
    """What extraction needs of a block parse: reference definitions, the inline runs
    that could hold a link or a tag (first line, end line, source) and the front matter."""

    references: dict[str, Any]
    runs: tuple[tuple[int, int, str], ...]
    front_matter: str | None


def link_source(tokens: Sequence[Token], env: dict[str, Any]) -> LinkSource:
    """Collected from the block tokens of the element model's own full parse."""
    runs: list[tuple[int, int, str]] = []
    front_matter = None
    references = bool(env.get("references"))
    maybe = (_MAYBE_WITH_REFERENCES if references else _MAYBE_INLINE).search
    for token in tokens:
        if token.type == "inline":
            content = token.content
            # the pattern cannot match without one of these substrings, and ``in`` finds them
            # at C speed where the pattern tries every position (decision 271)
            if (
                token.map is not None
                and ("#" in content or (("[" in content) if references else ("](" in content or "[[" in content)))
                and maybe(content)
            ):
                runs.append((token.map[0], token.map[1], content))
        elif token.type == "front_matter":
            front_matter = token.content
    return LinkSource(dict(env.get("references", {})), tuple(runs), front_matter)


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """``[[target|alias]]`` and ``![[target]]`` on one line, no brackets inside."""
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    if not embed and not src.startswith("[[", pos):
        return False
    begin = pos + (3 if embed else 2)
    close = src.find("]]", begin)
    if close < 0:
        return False
    inner = src[begin:close]
    if not inner.strip() or any(c in inner for c in "[]\n"):
        return False
    if not silent:
        target, _, alias = inner.partition("|")
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target.strip(), "alias": alias.strip() or None, "embed": embed}
        token.content = inner
    state.pos = close + 2
    return True


def _identity(url: str) -> str:
    return url


def _always(url: str) -> bool:
    return True


# markdown-it's parseLinkDestination walks character by character and was a quarter of the
# extraction time; a plain destination (no "<", parentheses, backslash, entity or control
# character) ends at the first space or ")" and is taken in one regex step, anything else goes
# to markdown-it's own function, so the result is always the one markdown-it would give.
_PLAIN_DESTINATION = re.compile(r"[^\x00-\x20\x7f()<\\&]+")


def _destination(string: str, pos: int, maximum: int) -> Any:
    match = _PLAIN_DESTINATION.match(string, pos, maximum)
    if match is not None:
        end = match.end()
        if end == maximum or string[end] in " )" or string[end] < " " or string[end] == "\x7f":
            result = _helpers.parse_link_destination._Result()
            result.ok, result.pos, result.str = True, end, string[pos:end]
            return result
    return _helpers.parseLinkDestination(string, pos, maximum)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    md.options["maxNesting"] = MAX_NESTING  # the element parser's depth, so links map to its elements
    md.helpers = SimpleNamespace(  # type: ignore[assignment]  # this instance's own, never the shared module
        parseLinkLabel=_helpers.parseLinkLabel,
        parseLinkDestination=_destination,
        parseLinkTitle=_helpers.parseLinkTitle,
    )
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    # destinations exactly as written (no percent-encoding, no scheme filter): they are
    # matched against the source text and resolved as paths, never rendered
    md.normalizeLink = _identity  # type: ignore[method-assign]
    md.validateLink = _always  # type: ignore[method-assign]
    md.disable(["inline", "text_join"])  # inline runs only where a link can be (below)
    # what cannot hide or make a link is not parsed: emphasis, entities, line breaks
    md.disable(["emphasis", "entity", "newline", "balance_pairs", "fragments_join"])
    # Text runs stop only where a remaining rule can start (or where a link label can end,
    # which parseLinkLabel looks for): every other character is plain text in one step.
    md.inline.terminator_re = re.compile(r"[\[\]!`\\<]")
    return md


_MD = _parser()
# A run can hold a link only with "](" (inline links and images), "[[" (wikilinks, embeds) or,
# when the document defines references, any "[" (reference links); CommonMark autolinks need a
# scheme, so none is a relative path. A tag needs "#" after a space or at the start of the run.
_MAYBE_INLINE = re.compile(r"\]\(|\[\[|(?:^|\s)#[^\s#]", re.MULTILINE)
_MAYBE_WITH_REFERENCES = re.compile(r"\[|(?:^|\s)#[^\s#]", re.MULTILINE)
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]*[^\W\d][\w/-]*)", re.UNICODE)
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*(?=\r|\n|\Z)")
_WS = re.compile(r"\s+")


def normalize_label(label: str) -> str:
    """Reference labels match case-insensitively with collapsed whitespace (CommonMark)."""
    return _WS.sub(" ", label.strip()).casefold()


class _Locator:
    """Finds each destination's span in the source, once per occurrence."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.used: set[int] = set()
        self._definitions: _Definitions | None = None

    @property
    def definitions(self) -> _Definitions:
        if self._definitions is None:
            self._definitions = _Definitions(self.text)
        return self._definitions

    def find(self, pattern: str, start: int, end: int, value: str) -> tuple[int, int]:
        for match in re.finditer(pattern, self.text[start:end]):
            at = start + match.end()
            if at not in self.used and self.text.startswith(value, at):
                self.used.add(at)
                return at, at + len(value)
        return -1, -1


def _plain_text(children: Sequence[Token]) -> str:
    return " ".join("".join(t.content for t in children if t.type in ("text", "code_inline")).split())


def _element_at(doc: Document, starts: list[int], offset: int) -> Element | None:
    """Innermost element whose span holds ``offset`` (elements are in pre-order, so the
    innermost is the last one starting at or before ``offset`` that still covers it)."""
    i = bisect_right(starts, offset) - 1
    while i >= 0:
        element = doc.elements[i]
        if offset < max(element.end, element.start + 1):
            return element
        i -= 1
    return None


def extract_links(doc: Document) -> DocumentLinks:
    """Links, tags, aliases, headings and block ids of ``doc``."""
    text = doc.text
    source = getattr(doc._state, "link_source", None)
    if not isinstance(source, LinkSource):  # a document re-parsed incrementally: parse its blocks here
        env: dict[str, Any] = {}
        source = link_source(_MD.parse(text, env), env)
    env = {"references": source.references}
    locate = _Locator(text)
    starts = [e.start for e in doc.elements]
    links: list[Link] = []
    tags: list[str] = []
    aliases: list[str] = []
    if source.front_matter is not None:
        tags, aliases = _front_matter(source.front_matter)
    for first, end, content in source.runs:
        children: list[Token] = []
        _MD.inline.parse(content, _MD, env, children)
        region = (doc.lines.start_of(first), doc.lines.start_of(end))
        anchor = _element_at(doc, starts, region[0])
        pointer = anchor.anchor if anchor is not None else None
        links.extend(_inline_links(children, source.references, region, locate, pointer, text))
        if "#" in content:
            for child in children:
                if child.type == "text" and "#" in child.content:
                    tags.extend(m.group(1) for m in _TAG.finditer(child.content))
    headings = tuple(e.title or "" for e in doc.headings)
    block_ids = tuple(
        m.group(1) for m in _BLOCK_ID.finditer(text) if m.start() == 0 or text[m.start() - 1] in " \t\r\n"
    )
    return DocumentLinks(tuple(links), tuple(dict.fromkeys(tags)), tuple(dict.fromkeys(aliases)), headings, block_ids)


def _inline_links(
    children: list[Token],
    references: dict[str, Any],
    region: tuple[int, int],
    locate: _Locator,
    pointer: str | None,
    text: str,
) -> Iterable[Link]:
    start, end = region
    for i, tok in enumerate(children):
        if tok.type == "link_open":
            href = str(tok.attrGet("href") or "")
            close = next((j for j in range(i + 1, len(children)) if children[j].type == "link_close"), len(children))
            label = _plain_text(children[i + 1 : close])
            if tok.markup == "autolink":
                span = locate.find(r"<", start, end, href + ">")
                yield Link("autolink", href, None, pointer, span[0], span[1] - 1 if span[0] >= 0 else -1)
            elif tok.info == "auto" or tok.markup == "linkify":
                continue
            else:
                span = locate.find(r"\]\(\s*<?", start, end, href)
                if span[0] >= 0:
                    yield Link("inline", href, label, pointer, *span)
                    continue
                found = _find_reference(text, href, references, locate.definitions)
                if found is not None:
                    yield Link("reference", href, label, pointer, *found)
                else:  # an inline link written with escapes or entities: counted, never rewritten
                    yield Link("inline", href, label, pointer, -1, -1)
        elif tok.type == "image":
            src = str(tok.attrGet("src") or "")
            span = locate.find(r"\]\(\s*<?", start, end, src)
            if span[0] < 0:
                found = _find_reference(text, src, references, locate.definitions)
                if found is not None:
                    yield Link("image", src, tok.content or None, pointer, *found)
                    continue
            yield Link("image", src, tok.content or None, pointer, *span)
        elif tok.type == "wikilink":
            target = str(tok.meta["target"])
            opener = r"!\[\[[ \t]*" if tok.meta["embed"] else r"(?<!!)\[\[[ \t]*"
            span = locate.find(opener, start, end, target)
            kind: LinkKind = "embed" if tok.meta["embed"] else "wikilink"
            yield Link(kind, target, tok.meta["alias"], pointer, *span)


_DEFINITION = re.compile(
    r"^(?:[ \t]*>)*[ \t]{0,3}\[((?:[^\[\]\\]|\\.)+)\]:[ \t]*(?:\r?\n(?:[ \t]*>)*[ \t]*)?(?:<([^<>\n]*)>|(\S+))",
    re.MULTILINE,
)


class _Definitions:
    """Reference definitions as written: normalised label -> destination span (first wins,
    as in CommonMark)."""

    def __init__(self, text: str) -> None:
        self.spans: dict[str, tuple[int, int]] = {}
        at = text.find("]:")
        while at >= 0:  # only lines holding "]:" can define anything
            line = max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1
            match = _DEFINITION.match(text, line)
            if match is not None:
                group = 2 if match.group(2) is not None else 3
                self.spans.setdefault(normalize_label(match.group(1)), match.span(group))
            at = text.find("]:", at + 2)


def _find_reference(
    text: str, href: str, references: dict[str, Any], definitions: _Definitions
) -> tuple[int, int] | None:
    """The written span of the definition an href came from (markdown-it keeps no source form)."""
    written = {href, unquote(href)}
    for key, ref in references.items():
        if ref.get("href") == href:
            span = definitions.spans.get(normalize_label(str(key)))
            if span is not None and text[span[0] : span[1]] in written:
                return span
    return None


def _front_matter(source: str) -> tuple[list[str], list[str]]:
    """``tags``/``tag`` and ``aliases``/``alias`` of YAML front matter (lists or comma strings)."""
    if "tag" not in source and "alias" not in source:
        return [], []
    try:
        data = load_yaml(source)
    except ValueError:
        return [], []  # broken front matter is the author's to fix; the links still count
    if not isinstance(data, dict):
        return [], []

    def values(*keys: str) -> list[str]:
        out: list[str] = []
        for key in keys:
            raw = data.get(key)
            items = raw if isinstance(raw, list) else str(raw).split(",") if raw is not None else []
            out.extend(str(v).strip() for v in items if v is not None and str(v).strip())
        return out

    return [t.lstrip("#") for t in values("tags", "tag")], values("aliases", "alias")


def load_yaml(source: str) -> Any:
    """``yaml.safe_load`` of front matter, through libyaml when PyYAML has it (20x faster: the
    pure-Python loader was a sixth of a cold reindex). What libyaml refuses is tried again with
    the pure-Python loader, so no header that loaded before is lost. Raises ``ValueError``
    when neither loads it."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.load(source, Loader=fast)  # the C build of SafeLoader
        except yaml.YAMLError:
            pass
    try:
        return yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def rewrite(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end)`` span replaced; spans must not overlap."""
    out: list[str] = []
    at = 0
    for start, end, value in sorted(set(edits)):
        if start < at:
            raise ValueError("overlapping link spans")
        out.append(text[at:start])
        out.append(value)
        at = end
    out.append(text[at:])
    return "".join(out)
