"""Test oracle: the element model built the plain way (contract §4).

Production builds elements in phases that an incremental re-parse can resume
(``markdown/scan.py``, ``assemble.py``, ``numbering.py``, ``elements.py``); this
builder walks one whole-document token stream instead, and property tests hold
both equal. It shares no code with production: line splitting, hashing, marker
offsets, own segments and the paragraph ordinals of §4.6 are written here again,
and the historical ordinals come from one parse of the whole document without
the table extension, exactly as the contract words the rule (production parses
only the chunks that hold a table). Only the output types (``Element``,
``ElementKind``) come from production.

Spans are whole physical line ranges (see spec/decisions.md), except a list item
that starts on the same line as its parent item (``- - a``), which starts at its
own marker. ``pN`` and ``codeN`` count every paragraph / code block of a section,
also those hidden inside lists and quotes (their pointers are reserved).
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

import xxhash
from markdown_it import MarkdownIt
from markdown_it.token import Token

from local_vector_search_mcp.markdown.front_matter import front_matter_plugin
from local_vector_search_mcp.markdown.kinds import ElementKind
from local_vector_search_mcp.markdown.model import Element

__all__ = ["ParseResult", "build_elements", "historical_paragraph_ranges", "line_spans"]

# Block structure only: spans never need the inline rules. The current parse notes each reference
# definition as a token (markdown-it's ``inline_definitions``): a top-level one whose label starts
# with ``^`` is a footnote, a paragraph of the element model (decision 1194).
_DEFINITIONS = {"inline_definitions": True}
_MD_CURRENT = (
    MarkdownIt("commonmark", _DEFINITIONS).enable("table").use(front_matter_plugin).disable(["inline", "text_join"])
)
_MD_HISTORICAL = MarkdownIt("commonmark").use(front_matter_plugin).disable(["inline", "text_join"])
# Without the plugin: it also fires in a list item's nested parse of line 0 (`-    x--` then
# `title: a` and `---` gave a front matter inside the item), which CommonMark never does. Front
# matter can only open a document whose text starts with `---` (decision 62) or `+++` (1026).
_FENCES = ("---", "+++")
_MD_CURRENT_PLAIN = MarkdownIt("commonmark", _DEFINITIONS).enable("table").disable(["inline", "text_join"])
_MD_HISTORICAL_PLAIN = MarkdownIt("commonmark").disable(["inline", "text_join"])

_LIST_OPEN = ("bullet_list_open", "ordered_list_open")
_LIST_CLOSE = ("bullet_list_close", "ordered_list_close")
_MARKER_RE = re.compile(r"[ \t]*(?:[-+*]|[0-9]+[.)])[ \t]*")


def _hash(text: str) -> str:
    """§3.3: XxHash64, seed 0, over the UTF-8 bytes, 16 lowercase hex digits."""
    return xxhash.xxh64(text.encode("utf-8", "surrogatepass"), seed=0).hexdigest()


def _segments_hash(parts: list[str]) -> str:
    """§3.3: one segment hashes like a span; several are framed (count, then length + bytes each)."""
    if len(parts) <= 1:
        return _hash(parts[0] if parts else "")
    data = [part.encode("utf-8", "surrogatepass") for part in parts]
    framed = struct.pack("<i", len(data)) + b"".join(struct.pack("<i", len(d)) + d for d in data)
    return xxhash.xxh64(framed, seed=0).hexdigest()


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end before its break) of every line; CRLF, CR and LF each end a line."""
    spans = []
    start = 0
    for match in re.finditer(r"\r\n|\r|\n", text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


class _Lines:
    def __init__(self, text: str) -> None:
        spans = line_spans(text)
        self.starts = [start for start, _ in spans]
        self.ends = [end for _, end in spans]
        self.count = len(spans)


def _after_marker(text: str, pos: int) -> int:
    """Offset just past the list marker (and the blanks after it) at ``pos``."""
    match = _MARKER_RE.match(text, pos)
    return match.end() if match else pos


@dataclass(slots=True)
class _Draft:
    kind: ElementKind
    start: int
    end: int
    l0: int
    l1: int
    section: str
    heading_path: str | None
    pointer: str = ""
    level: int | None = None
    title: str | None = None
    parent: _Draft | None = None
    children: list[_Draft] = field(default_factory=list)
    child_count: int = 0


@dataclass(slots=True)
class _Frame:
    kind: str  # "quote", "list" or "item"
    l0: int
    l1: int
    draft: _Draft | None = None


@dataclass(slots=True)
class _Heading:
    level: int
    key: str
    title: str
    child_count: int = 0


@dataclass(frozen=True, slots=True)
class ParseResult:
    elements: tuple[Element, ...]
    reserved: frozenset[str]


def _prefix(section: str) -> str:
    return f"{section}." if section else ""


def _own_segments(text: str, d: _Draft) -> tuple[tuple[int, int], ...]:
    """§4.4: the item's range minus each direct child's range, together with the
    line break just before the child and the one just after it."""
    removed = []
    for child in d.children:
        start, end = child.start, child.end
        for brk in ("\r\n", "\r", "\n"):
            if text.endswith(brk, 0, start):
                start -= len(brk)
                break
        for brk in ("\r\n", "\r", "\n"):
            if text.startswith(brk, end):
                end += len(brk)
                break
        removed.append((start, end))
    segments = []
    pos = d.start
    for start, end in sorted(removed):
        if start > pos:
            segments.append((pos, min(start, d.end)))
        pos = max(pos, end)
    if d.end > pos:
        segments.append((pos, d.end))
    return tuple(segment for segment in segments if segment[1] > segment[0])


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _Lines(text)
        self.drafts: list[_Draft] = []
        self.reserved: set[str] = set()
        self.counters: dict[tuple[str, str], int] = {}
        self.sections: list[_Heading] = []
        self.root_headings = 0
        self.heading_lines: list[int] = []
        self.heading_keys: list[str] = []
        # (section, l0, l1, published draft or None) of every counted paragraph.
        self.paragraphs: list[tuple[str, int, int, _Draft | None]] = []
        self.footnotes: set[int] = set()  # positions in ``paragraphs`` of footnote definitions
        self._heading_path: str | None = None

    # -- line helpers -------------------------------------------------------

    def blank(self, line: int) -> bool:
        return not self.text[self.lines.starts[line] : self.lines.ends[line]].strip(" \t")

    def trim(self, l0: int, l1: int) -> int:
        """End line of ``[l0, l1)`` without trailing blank lines (at least one line)."""
        l1 = min(l1, self.lines.count)
        if l1 <= l0:
            return min(l0 + 1, self.lines.count)
        while l1 - 1 > l0 and self.blank(l1 - 1):
            l1 -= 1
        return l1

    def span(self, l0: int, l1: int) -> tuple[int, int]:
        return self.lines.starts[l0], self.lines.ends[l1 - 1]

    @staticmethod
    def map_of(token: Token) -> tuple[int, int]:
        m = token.map
        return (m[0], m[1]) if m else (0, 1)

    # -- sections -----------------------------------------------------------

    @property
    def section(self) -> str:
        return self.sections[-1].key if self.sections else ""

    @property
    def heading_path(self) -> str | None:
        return self._heading_path

    def count(self, section: str, leaf: str) -> int:
        n = self.counters.get((section, leaf), 0) + 1
        self.counters[(section, leaf)] = n
        return n

    def open_heading(self, level: int, title: str, l0: int) -> str:
        while self.sections and self.sections[-1].level >= level:
            self.sections.pop()
        if self.sections:
            top = self.sections[-1]
            top.child_count += 1
            key = f"{top.key}.{top.child_count}"
        else:
            self.root_headings += 1
            key = str(self.root_headings)
        self.sections.append(_Heading(level, key, title))
        self._heading_path = " > ".join(h.title for h in self.sections)
        self.heading_lines.append(l0)
        self.heading_keys.append(key)
        return key

    def section_at(self, line: int) -> str:
        i = bisect_right(self.heading_lines, line) - 1
        return self.heading_keys[i] if i >= 0 else ""

    # -- the walk -----------------------------------------------------------

    def add(self, kind: ElementKind, l0: int, l1: int, pointer: str = "") -> _Draft:
        start, end = self.span(l0, l1)
        draft = _Draft(kind, start, end, l0, l1, self.section, self.heading_path, pointer)
        self.drafts.append(draft)
        return draft

    def walk(self, tokens: Sequence[Token]) -> None:
        stack: list[_Frame] = []
        quotes = 0
        i, n = 0, len(tokens)
        while i < n:
            tok = tokens[i]
            kind = tok.type
            depth = len(stack)
            if kind == "heading_open":
                if depth == 0:
                    self.heading(tok, tokens[i + 1] if i + 1 < n else None)
                i = self.skip_to(tokens, i, "heading_close")
            elif kind == "paragraph_open":
                self.paragraph(tok, stack)
                i = self.skip_to(tokens, i, "paragraph_close")
            elif kind == "definition" and depth == 0 and str(tok.meta.get("label", "")).startswith("^"):
                l0, l1 = self.map_of(tok)
                l1 = self.trim(l0, l1)
                self.footnotes.add(len(self.paragraphs))
                self.paragraphs.append((self.section, l0, l1, self.add(ElementKind.PARAGRAPH, l0, l1)))
            elif kind in ("fence", "code_block"):
                self.code(tok, depth)
            elif kind == "table_open":
                if depth == 0:
                    l0, l1 = self.map_of(tok)
                    self.add(ElementKind.TABLE, l0, self.trim(l0, l1), self.leaf("t"))
                i = self.skip_to(tokens, i, "table_close")
            elif kind == "front_matter" and depth == 0:
                l0, l1 = self.map_of(tok)
                self.add(ElementKind.FRONT_MATTER, l0, self.trim(l0, l1), "frontmatter")
            elif kind == "blockquote_open":
                l0, l1 = self.map_of(tok)
                l1 = self.trim(l0, l1)
                draft = self.add(ElementKind.BLOCK_QUOTE, l0, l1, self.leaf("q")) if depth == 0 else None
                stack.append(_Frame("quote", l0, l1, draft))
                quotes += 1
            elif kind in _LIST_OPEN:
                stack.append(_Frame("list", *self.map_of(tok)))
            elif kind == "list_item_open":
                stack.append(self.open_item(tok, stack, quotes))
            elif kind == "blockquote_close" or kind in _LIST_CLOSE or kind == "list_item_close":
                frame = stack.pop() if stack else None
                if frame is not None and frame.kind == "quote":
                    quotes -= 1
                elif frame is not None and frame.draft is not None and frame.kind == "item":
                    self.close_item(frame.draft)
            i += 1

    @staticmethod
    def skip_to(tokens: Sequence[Token], i: int, closing: str) -> int:
        while i < len(tokens) and tokens[i].type != closing:
            i += 1
        return i

    def leaf(self, leaf: str) -> str:
        section = self.section
        return f"{_prefix(section)}{leaf}{self.count(section, leaf)}"

    def heading(self, tok: Token, inline: Token | None) -> None:
        l0, l1 = self.map_of(tok)
        l1 = self.trim(l0, l1)
        level = int(tok.tag[1:]) if tok.tag[1:].isdigit() else 1
        if tok.markup.startswith("#"):
            title = (inline.content if inline is not None else "").strip()
        else:  # setext: the first line, trimmed
            title = self.text[self.lines.starts[l0] : self.lines.ends[l0]].strip()
        key = self.open_heading(level, title, l0)
        draft = self.add(ElementKind.HEADING, l0, l1, key)
        draft.level = level
        draft.title = title

    def paragraph(self, tok: Token, stack: list[_Frame]) -> None:
        l0, l1 = self.map_of(tok)
        l1 = self.trim(l0, l1)
        if stack and stack[-1].kind == "quote" and (stack[-1].l0, stack[-1].l1) == (l0, l1):
            return  # §4.5 quirk: a paragraph filling its quote takes no ordinal
        draft = self.add(ElementKind.PARAGRAPH, l0, l1) if not stack else None
        self.paragraphs.append((self.section, l0, l1, draft))

    def code(self, tok: Token, depth: int) -> None:
        pointer = self.leaf("code")
        if depth:
            self.reserved.add(pointer)
            return
        l0, l1 = self.map_of(tok)
        self.add(ElementKind.CODE_BLOCK, l0, self.trim(l0, l1), pointer)

    def open_item(self, tok: Token, stack: list[_Frame], quotes: int) -> _Frame:
        l0, l1 = self.map_of(tok)
        if quotes:  # everything inside a quote is opaque
            return _Frame("item", l0, l1)
        parent = next((f.draft for f in reversed(stack) if f.kind == "item"), None)
        if parent is not None:
            parent.child_count += 1
            pointer = f"{parent.pointer}.li{parent.child_count}"
        else:
            pointer = self.leaf("li")
        start = self.lines.starts[l0]
        if parent is not None and parent.l0 == l0:
            start = _after_marker(self.text, parent.start)
        draft = _Draft(ElementKind.LIST_ITEM, start, start, l0, l1, self.section, self.heading_path, pointer)
        draft.parent = parent
        if parent is not None:
            parent.children.append(draft)
        self.drafts.append(draft)
        return _Frame("item", l0, l1, draft)

    def close_item(self, draft: _Draft) -> None:
        draft.l1 = self.trim(draft.l0, draft.l1)
        draft.end = max(draft.start, self.lines.ends[draft.l1 - 1])

    # -- paragraph ordinals (§4.6) -------------------------------------------

    def assign_paragraphs(self) -> None:
        """A paragraph whose line range a table-less parse also finds keeps that
        parse's ordinal in its section; the others take the lowest free ordinal,
        in order; historical ordinals nobody took are reserved."""
        historical: dict[tuple[int, int], tuple[str, int]] = {}
        seen: dict[str, int] = {}
        for l0, l1 in historical_paragraph_ranges(self.text):
            section = self.section_at(l0)
            seen[section] = seen.get(section, 0) + 1
            historical[(l0, l1)] = (section, seen[section])
        taken: dict[str, set[int]] = {}
        counted = [p for k, p in enumerate(self.paragraphs) if k not in self.footnotes]
        for section, l0, l1, _ in counted:
            if historical.get((l0, l1), ("", 0))[0] == section and (l0, l1) in historical:
                taken.setdefault(section, set()).add(historical[(l0, l1)][1])
        for section, l0, l1, draft in counted:
            known = historical.get((l0, l1))
            if known is not None and known[0] == section:
                ordinal = known[1]
            else:
                used = taken.setdefault(section, set())
                ordinal = next(n for n in range(1, len(used) + 2) if n not in used)
                used.add(ordinal)
            pointer = f"{_prefix(section)}p{ordinal}"
            if draft is None:
                self.reserved.add(pointer)
            else:
                draft.pointer = pointer
        for section, ordinal in historical.values():
            if ordinal not in taken.get(section, set()):
                self.reserved.add(f"{_prefix(section)}p{ordinal}")
        # A footnote definition, which the historical parse reads as a reference definition, takes
        # the lowest ordinal of its section that no other paragraph and no historical one holds.
        for k in sorted(self.footnotes):
            section, _, _, draft = self.paragraphs[k]
            held = taken.setdefault(section, set()) | {n for s, n in historical.values() if s == section}
            ordinal = next(n for n in range(1, len(held) + 2) if n not in held)
            taken[section].add(ordinal)
            assert draft is not None
            draft.pointer = f"{_prefix(section)}p{ordinal}"

    # -- finishing ----------------------------------------------------------

    def finish(self) -> ParseResult:
        self.assign_paragraphs()
        text = self.text
        # Owned section ranges: a heading's section ends at the next heading of
        # the same or a higher level (a smaller number), else at EOF.
        section_end: dict[int, int] = {}
        open_headings: list[tuple[int, int]] = []  # (level, draft index)
        for k, d in enumerate(self.drafts):
            if d.kind is ElementKind.HEADING and d.level is not None:
                while open_headings and open_headings[-1][0] >= d.level:
                    section_end[open_headings.pop()[1]] = d.start
                open_headings.append((d.level, k))
        for _, k in open_headings:
            section_end[k] = len(text)
        elements = []
        for k, d in enumerate(self.drafts):
            if d.kind is ElementKind.LIST_ITEM:
                segments = _own_segments(text, d)
                parts = [text[s:e] for s, e in segments]
                own = "".join(parts)
                self_hash = _segments_hash(parts)
                subtree = _hash(text[d.start : d.end]) if d.children else self_hash
            else:
                segments = ((d.start, d.end),)
                own = text[d.start : d.end]
                self_hash = _hash(own)
                subtree = self_hash
            end_of_section = section_end.get(k)
            if end_of_section is not None:
                subtree = _hash(text[d.start : end_of_section])
            elements.append(
                Element(
                    pointer=d.pointer,
                    kind=d.kind,
                    start=d.start,
                    end=d.end,
                    segments=segments,
                    text=own,
                    self_hash=self_hash,
                    subtree_hash=subtree,
                    heading_path=d.heading_path,
                    level=d.level,
                    section_end=end_of_section,
                    parent=d.parent.pointer if d.parent is not None else None,
                    title=d.title,
                )
            )
        return ParseResult(tuple(elements), frozenset(self.reserved))


def build_elements(text: str) -> ParseResult:
    """Parse ``text`` and return its addressable elements and reserved pointers."""
    builder = _Builder(text)
    builder.walk((_MD_CURRENT if text.startswith(_FENCES) else _MD_CURRENT_PLAIN).parse(text))
    return builder.finish()


def historical_paragraph_ranges(text: str) -> list[tuple[int, int]]:
    """Paragraph line ranges of the whole document parsed without tables (§4.6),
    trailing blank lines trimmed; a paragraph filling its quote is not counted."""
    builder = _Builder(text)
    found: list[tuple[int, int]] = []
    quotes: list[tuple[int, int] | None] = []  # quote ranges; None for lists and items
    for tok in (_MD_HISTORICAL if text.startswith(_FENCES) else _MD_HISTORICAL_PLAIN).parse(text):
        if tok.type == "blockquote_open":
            l0, l1 = builder.map_of(tok)
            quotes.append((l0, builder.trim(l0, l1)))
        elif tok.type in _LIST_OPEN or tok.type == "list_item_open":
            quotes.append(None)
        elif tok.type in _LIST_CLOSE or tok.type in ("list_item_close", "blockquote_close"):
            if quotes:
                quotes.pop()
        elif tok.type == "paragraph_open":
            l0, l1 = builder.map_of(tok)
            rng = (l0, builder.trim(l0, l1))
            if not (quotes and quotes[-1] == rng):
                found.append(rng)
    return sorted(found)
