"""Test oracle (formerly markdown/parser.py; production uses markdown/blocks.py, and
property tests hold both equal).

Build the element model from markdown-it block tokens (contract §4).

Only the block parser runs (core rules ``normalize`` and ``block``): inline
parsing is never needed for spans or hashes and would double the cost.

Spans come from token line maps plus ``LineIndex``; every span is a whole
physical line range (see spec/decisions.md), except a list item that starts on the
same line as its parent item (``- - a``), which starts at its own marker.

Ordinals: ``pN`` and ``codeN`` count every paragraph / code block of a section,
also those hidden inside lists and quotes (their pointers are reserved). ``pN``
additionally follows the historical rule of §4.6: ordinals are those of a parse
without the table extension wherever a paragraph's line range is unchanged.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from local_vector_search_mcp.markdown.hashing import segments_hash, span_hash
from local_vector_search_mcp.markdown.kinds import ElementKind
from local_vector_search_mcp.markdown.model import Element
from local_vector_search_mcp.markdown.pointers import FRONT_MATTER
from local_vector_search_mcp.markdown.source import LineIndex

__all__ = ["ParseResult", "build_elements"]


def _block_only(md: MarkdownIt) -> MarkdownIt:
    # ``inline`` and ``text_join`` are the expensive core rules we never need.
    md.disable(["inline", "text_join"])
    return md


_MD_CURRENT = _block_only(MarkdownIt("commonmark").enable("table").use(front_matter_plugin))
_MD_HISTORICAL_HEAD = _block_only(MarkdownIt("commonmark").use(front_matter_plugin))
# Front matter is only recognised on line 0; a chunk starting later must not
# mistake a ``---`` line for it.
_MD_HISTORICAL = _block_only(MarkdownIt("commonmark"))

_LIST_OPEN = frozenset({"bullet_list_open", "ordered_list_open"})
_LIST_CLOSE = frozenset({"bullet_list_close", "ordered_list_close"})
# Top-level blocks that may continue across a blank line.
_CONTINUABLE = frozenset({"bullet_list_open", "ordered_list_open", "fence", "code_block", "html_block"})


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


@dataclass(slots=True)
class _TopBlock:
    l0: int
    l1: int
    has_table: bool = False


@dataclass(frozen=True, slots=True)
class ParseResult:
    elements: tuple[Element, ...]
    reserved: frozenset[str]


def _prefix(section: str) -> str:
    return f"{section}." if section else ""


class _Builder:
    def __init__(self, text: str, lines: LineIndex) -> None:
        self.text = text
        self.lines = lines
        self.drafts: list[_Draft] = []
        self.reserved: set[str] = set()
        self.counters: dict[tuple[str, str], int] = {}
        self.sections: list[_Heading] = []
        self.root_headings = 0
        self.heading_lines: list[int] = []
        self.heading_keys: list[str] = []
        # (section, l0, l1, published draft or None) of every counted paragraph.
        self.paragraphs: list[tuple[str, int, int, _Draft | None]] = []
        self.top_blocks: list[_TopBlock] = []
        self.has_tables = False
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
            if depth == 0 and tok.nesting >= 0 and tok.map is not None:
                l0, l1 = self.map_of(tok)
                self.top_blocks.append(_TopBlock(l0, l1))
            if kind == "heading_open":
                if depth == 0:
                    self.heading(tok, tokens[i + 1] if i + 1 < n else None)
                i = self.skip_to(tokens, i, "heading_close")
            elif kind == "paragraph_open":
                self.paragraph(tok, stack)
                i = self.skip_to(tokens, i, "paragraph_close")
            elif kind in ("fence", "code_block"):
                self.code(tok, depth)
            elif kind == "table_open":
                self.has_tables = True
                if self.top_blocks:
                    self.top_blocks[-1].has_table = True
                if depth == 0:
                    l0, l1 = self.map_of(tok)
                    self.add(ElementKind.TABLE, l0, self.trim(l0, l1), self.leaf("t"))
                i = self.skip_to(tokens, i, "table_close")
            elif kind == "front_matter" and depth == 0:
                l0, l1 = self.map_of(tok)
                self.add(ElementKind.FRONT_MATTER, l0, self.trim(l0, l1), FRONT_MATTER)
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
            start = self._after_marker(parent.start)
        draft = _Draft(ElementKind.LIST_ITEM, start, start, l0, l1, self.section, self.heading_path, pointer)
        draft.parent = parent
        if parent is not None:
            parent.children.append(draft)
        self.drafts.append(draft)
        return _Frame("item", l0, l1, draft)

    def _after_marker(self, pos: int) -> int:
        """Offset of the content after the list marker starting at/after ``pos``."""
        text, end = self.text, self.lines.line_end(pos)
        while pos < end and text[pos] in " \t":
            pos += 1
        if pos < end and text[pos] in "-+*":
            pos += 1
        else:
            while pos < end and text[pos].isdigit():
                pos += 1
            if pos < end and text[pos] in ".)":
                pos += 1
        while pos < end and text[pos] in " \t":
            pos += 1
        return pos

    def close_item(self, draft: _Draft) -> None:
        draft.l1 = self.trim(draft.l0, draft.l1)
        draft.end = max(draft.start, self.lines.ends[draft.l1 - 1])

    # -- paragraph ordinals (§4.6) -------------------------------------------

    def assign_paragraphs(self) -> None:
        history = self.historical_paragraphs() if self.has_tables else None
        current: dict[str, list[tuple[int, int, _Draft | None]]] = {}
        for section, l0, l1, draft in self.paragraphs:
            current.setdefault(section, []).append((l0, l1, draft))
        historical: dict[str, dict[tuple[int, int], int]] = {}
        if history is None:
            for section, occurrences in current.items():
                historical[section] = {(l0, l1): k for k, (l0, l1, _) in enumerate(occurrences, 1)}
        else:
            for l0, l1 in history:
                table = historical.setdefault(self.section_at(l0), {})
                table[(l0, l1)] = len(table) + 1
        for section in current.keys() | historical.keys():
            known = historical.get(section, {})
            occurrences = current.get(section, [])
            ordinals: list[int | None] = [known.get((l0, l1)) for l0, l1, _ in occurrences]
            used = {o for o in ordinals if o is not None}
            lowest = 1
            for k, ordinal in enumerate(ordinals):
                if ordinal is None:
                    while lowest in used:
                        lowest += 1
                    ordinals[k] = lowest
                    used.add(lowest)
            prefix = _prefix(section)
            for (_, _, draft), ordinal in zip(occurrences, ordinals, strict=True):
                if draft is None:
                    self.reserved.add(f"{prefix}p{ordinal}")
                else:
                    draft.pointer = f"{prefix}p{ordinal}"
            self.reserved.update(f"{prefix}p{o}" for o in known.values() if o not in used)

    def historical_paragraphs(self) -> list[tuple[int, int]]:
        """Paragraph line ranges of a parse without the table extension.

        Only chunks holding a table are re-parsed. A chunk is a run of
        top-level blocks; chunks are cut where a top-level block starts after
        a blank line, where block structure cannot depend on earlier lines.
        """
        blocks = self.top_blocks
        chunks: list[list[int]] = []  # [first block, last block, has table]
        for k, block in enumerate(blocks):
            prev = blocks[k - 1] if k else None
            cut = (
                prev is not None
                and block.l0 > 0
                and self.blank(block.l0 - 1)
                and all(self.blank(x) for x in range(min(prev.l1, block.l0), block.l0))
            )
            if not chunks or cut:
                chunks.append([k, k, int(block.has_table)])
            else:
                chunks[-1][1] = k
                chunks[-1][2] |= int(block.has_table)
        regions: list[tuple[int, int]] = []
        result: list[tuple[int, int]] = []
        c = 0
        while c < len(chunks):
            if not chunks[c][2]:
                c += 1
                continue
            first = c
            while True:
                a = blocks[chunks[first][0]].l0 if first else 0
                b = blocks[chunks[c + 1][0]].l0 if c + 1 < len(chunks) else self.lines.count
                found, last_type = self.parse_region(a, b)
                if last_type in _CONTINUABLE and c + 1 < len(chunks):
                    c += 1  # the old parse may run on past the cut: re-parse wider
                    continue
                break
            regions.append((a, b))
            result.extend(found)
            c += 1
        starts = [a for a, _ in regions]
        for _, l0, l1, _ in self.paragraphs:
            r = bisect_right(starts, l0) - 1
            if r < 0 or l0 >= regions[r][1]:
                result.append((l0, l1))
        result.sort()
        return result

    def parse_region(self, a: int, b: int) -> tuple[list[tuple[int, int]], str | None]:
        src = "\n".join(self.text[self.lines.starts[x] : self.lines.ends[x]] for x in range(a, b))
        md = _MD_HISTORICAL_HEAD if a == 0 else _MD_HISTORICAL
        tokens = md.parse(src)
        found: list[tuple[int, int]] = []
        quotes: list[tuple[int, int] | None] = []  # quote ranges; None for lists/items
        last_type: str | None = None
        for tok in tokens:
            if tok.level == 0 and tok.nesting >= 0 and tok.map is not None:
                last_type = tok.type
            if tok.type == "blockquote_open":
                l0, l1 = self.map_of(tok)
                quotes.append((l0 + a, self.trim(l0 + a, l1 + a)))
            elif tok.type in _LIST_OPEN or tok.type == "list_item_open":
                quotes.append(None)
            elif tok.type in _LIST_CLOSE or tok.type in ("list_item_close", "blockquote_close"):
                if quotes:
                    quotes.pop()
            elif tok.type == "paragraph_open":
                l0, l1 = self.map_of(tok)
                rng = (l0 + a, self.trim(l0 + a, l1 + a))
                if not (quotes and quotes[-1] == rng):
                    found.append(rng)
        return found, last_type

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
                segments = self.own_segments(d)
                parts = [text[s:e] for s, e in segments]
                own = "".join(parts)
                self_hash = segments_hash(parts)
                subtree = span_hash(text[d.start : d.end]) if d.children else self_hash
            else:
                segments = ((d.start, d.end),)
                own = text[d.start : d.end]
                self_hash = span_hash(own)
                subtree = self_hash
            end_of_section = section_end.get(k)
            if end_of_section is not None:
                subtree = span_hash(text[d.start : end_of_section])
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

    def own_segments(self, d: _Draft) -> tuple[tuple[int, int], ...]:
        """Item range minus direct children; the break before a child is cut
        from the preceding segment and the break after a child skipped (§4.4)."""
        text = self.text
        segments: list[tuple[int, int]] = []
        pos = d.start
        for child in d.children:
            cut = child.start
            if cut - 2 >= pos and text.startswith("\r\n", cut - 2):
                cut -= 2
            elif cut - 1 >= pos and text[cut - 1] in "\r\n":
                cut -= 1
            if cut > pos:
                segments.append((pos, cut))
            pos = max(pos, child.end)
            if text.startswith("\r\n", pos):
                pos += 2
            elif pos < len(text) and text[pos] in "\r\n":
                pos += 1
        if d.end > pos:
            segments.append((pos, d.end))
        return tuple(segments)


def build_elements(text: str, lines: LineIndex) -> ParseResult:
    """Parse ``text`` and return its addressable elements and reserved pointers."""
    builder = _Builder(text, lines)
    builder.walk(_MD_CURRENT.parse(text))
    return builder.finish()


def build_historical_full(text: str, lines: LineIndex) -> list[tuple[int, int]]:
    """Test oracle: paragraph ranges of a whole-document parse without tables."""
    builder = _Builder(text, lines)
    found, _ = builder.parse_region(0, lines.count)
    return found


def historical_paragraphs(text: str, lines: LineIndex) -> list[tuple[int, int]]:
    """Test hook: the chunked historical paragraph ranges (tables parsed or not)."""
    builder = _Builder(text, lines)
    builder.walk(_MD_CURRENT.parse(text))
    return builder.historical_paragraphs()
