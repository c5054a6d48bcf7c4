"""Element building in two phases, with an incremental re-parse for kb_patch.

Phase 1 (:func:`_scan`) turns markdown-it block tokens into one :class:`BlockRec`
per top-level block: the block's element events in block-relative line numbers,
independent of the block's position and of the section it lands in. Phase 2
(:class:`_Assembler`) walks the records, numbers elements per section, applies
the historical paragraph ordinals (§4.6) and hashes. It yields exactly what the
reference builder in ``tests/markdown/reference_builder.py`` yields (a property test holds them equal).

Incremental re-parse (:func:`reparse`). CommonMark block structure restarts at
a top-level block that starts after a blank line when the block before it cannot
continue past a blank line (not a list, fence, indented code, HTML block or
front matter): the text from there on parses the same on its own. For an edit
of the old range ``[a, b)`` the last such cut at or before ``a`` and the first
after ``b`` are found in the old document; only the new text between them is
parsed, and the seam is checked in the new text (the cut line still follows a
blank line and the re-parsed region does not end in a continuable block), else
the region widens, up to a full parse. Records before and after are reused
(line-shifted). Assembly re-runs from the heading that opens the section of the
first changed block, with the section state saved at that heading, until a
heading after the edit where the state (root count, open headings with their
child counts and titles) equals the one saved in the old document: from there
on the old elements are reused, shifted by the length delta. Historical
paragraph ordinals are recomputed the same way, from a chunk the old computation
started afresh to one after the edit where it again started afresh.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from .hashing import segments_hash, span_hash
from .kinds import ElementKind
from .model import Document, Element
from .pointers import FRONT_MATTER
from .source import LineIndex

__all__ = ["BlockState", "build_state", "reparse", "reused_elements"]


def _block_only(md: MarkdownIt) -> MarkdownIt:
    md.disable(["inline", "text_join"])
    return md


_MD_HEAD = _block_only(MarkdownIt("commonmark").enable("table").use(front_matter_plugin))
_MD_REST = _block_only(MarkdownIt("commonmark").enable("table"))
_MD_HIST_HEAD = _block_only(MarkdownIt("commonmark").use(front_matter_plugin))
_MD_HIST = _block_only(MarkdownIt("commonmark"))

_LIST_OPEN = frozenset({"bullet_list_open", "ordered_list_open"})
_LIST_CLOSE = frozenset({"bullet_list_close", "ordered_list_close"})
_CLOSERS = _LIST_CLOSE | {"list_item_close", "blockquote_close"}
# Top-level blocks that may continue across a blank line (historical rule).
_CONTINUABLE = frozenset({"bullet_list_open", "ordered_list_open", "fence", "code_block", "html_block"})
# A re-parse may not restart right after these (nor end the re-parsed region with one).
_NO_RESTART = _CONTINUABLE | {"front_matter"}
_BREAK_RE = re.compile(r"\r\n|\r|\n")

# Op codes of a block record; every line is relative to the block's first line.
_H, _P, _C, _T, _Q, _F, _LI = range(7)

Snap = tuple[int, tuple[tuple[int, str, str, int], ...]]


@dataclass(frozen=True, slots=True)
class BlockRec:
    """One top-level block: its token type, map length and element events."""

    kind: str
    n: int
    has_table: bool
    ops: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True, slots=True)
class BlockState:
    """What an incremental re-parse needs of a parsed document (kept on ``Document``)."""

    l0: list[int]  # absolute first line of every top-level block
    recs: list[BlockRec]
    elem: list[int]  # index of the block's first element
    snaps: list[Snap | None]  # section state before a heading block
    has_tables: bool
    hist: list[tuple[int, int]] | None  # historical paragraph ranges (only with tables)
    regions: list[tuple[int, int]] | None  # line ranges re-parsed without tables
    # Set by ``reparse``: the sourceHash of the document this one was re-parsed
    # from, and how many of its leading elements were reused as they are and how
    # many trailing ones were reused shifted (``reused_elements``).
    base: str | None = None
    reused: tuple[int, int] = (0, 0)


def _blank(text: str, lines: LineIndex, line: int) -> bool:
    return not text[lines.starts[line] : lines.ends[line]].strip(" \t")


def _trim(text: str, lines: LineIndex, l0: int, l1: int) -> int:
    l1 = min(l1, lines.count)
    if l1 <= l0:
        return min(l0 + 1, lines.count)
    starts, ends = lines.starts, lines.ends
    while l1 - 1 > l0 and not text[starts[l1 - 1] : ends[l1 - 1]].strip(" \t"):
        l1 -= 1
    return l1


# -- phase 1 -------------------------------------------------------------------------


def _scan(tokens: Sequence[Token], text: str, lines: LineIndex, base: int) -> tuple[list[int], list[BlockRec]]:
    """Block records of a token stream whose line 0 is document line ``base``."""
    out_l0: list[int] = []
    out: list[BlockRec] = []
    ops: list[list[Any]] = []
    cur: list[Any] = [-1, "", 0, False]  # l0, kind, n, has_table
    stack: list[list[Any]] = []  # [kind, l0, l1, li index or -1]
    quotes = 0
    li_count = 0

    def flush() -> None:
        if cur[0] >= 0:
            out_l0.append(cur[0])
            out.append(BlockRec(cur[1], cur[2], cur[3], tuple(tuple(o) for o in ops)))

    def rel(m: list[int] | None) -> tuple[int, int]:
        if m is None:  # pragma: no cover - block tokens always carry a map
            return -base - cur[0], 1 - base - cur[0]
        return m[0] + base, m[1] + base

    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        kind = tok.type
        depth = len(stack)
        if depth == 0 and tok.nesting >= 0 and tok.map is not None:
            flush()
            ops = []
            li_count = 0
            cur = [tok.map[0] + base, kind, tok.map[1] - tok.map[0], False]
        if cur[0] < 0:  # pragma: no cover - defensive
            cur = [0, "", 0, False]
        b0 = cur[0]
        if kind == "heading_open":
            if depth == 0:
                l0, l1 = rel(tok.map)
                l1 = _trim(text, lines, l0, l1)
                level = int(tok.tag[1:]) if tok.tag[1:].isdigit() else 1
                if tok.markup.startswith("#"):
                    inline = tokens[i + 1] if i + 1 < n else None
                    title = (inline.content if inline is not None else "").strip()
                else:
                    title = text[lines.starts[l0] : lines.ends[l0]].strip()
                ops.append([_H, l0 - b0, l1 - b0, level, title])
            while i < n and tokens[i].type != "heading_close":
                i += 1
        elif kind == "paragraph_open":
            l0, l1 = rel(tok.map)
            l1 = _trim(text, lines, l0, l1)
            top = stack[-1] if stack else None
            if not (top is not None and top[0] == "quote" and top[1] == l0 and top[2] == l1):
                ops.append([_P, l0 - b0, l1 - b0, 0 if stack else 1])
            while i < n and tokens[i].type != "paragraph_close":
                i += 1
        elif kind == "fence" or kind == "code_block":
            l0, l1 = rel(tok.map)
            ops.append([_C, l0 - b0, _trim(text, lines, l0, l1) - b0, 0 if depth else 1])
        elif kind == "table_open":
            cur[3] = True
            if depth == 0:
                l0, l1 = rel(tok.map)
                ops.append([_T, l0 - b0, _trim(text, lines, l0, l1) - b0])
            while i < n and tokens[i].type != "table_close":
                i += 1
        elif kind == "front_matter" and depth == 0:
            l0, l1 = rel(tok.map)
            ops.append([_F, l0 - b0, _trim(text, lines, l0, l1) - b0])
        elif kind == "blockquote_open":
            l0, l1 = rel(tok.map)
            l1 = _trim(text, lines, l0, l1)
            if depth == 0:
                ops.append([_Q, l0 - b0, l1 - b0])
            stack.append(["quote", l0, l1, -1])
            quotes += 1
        elif kind in _LIST_OPEN:
            l0, l1 = rel(tok.map)
            stack.append(["list", l0, l1, -1])
        elif kind == "list_item_open":
            l0, l1 = rel(tok.map)
            if quotes:
                stack.append(["item", l0, l1, -1])
            else:
                parent = next((f[3] for f in reversed(stack) if f[0] == "item"), -1)
                ops.append([_LI, l0 - b0, -1, parent, l1])  # end line filled at close
                stack.append(["item", l0, l1, li_count])
                li_count += 1
        elif kind in _CLOSERS:
            frame = stack.pop() if stack else None
            if frame is not None and frame[0] == "quote":
                quotes -= 1
            elif frame is not None and frame[0] == "item" and frame[3] >= 0:
                k = frame[3]
                for op in ops:
                    if op[0] == _LI:
                        if k == 0:
                            op[2] = _trim(text, lines, frame[1], frame[2]) - b0
                            break
                        k -= 1
        i += 1
    flush()
    # Drop the untrimmed end kept for unclosed items.
    out = [
        BlockRec(r.kind, r.n, r.has_table, tuple(o[:4] if o[0] == _LI else o for o in r.ops)) if r.ops else r
        for r in out
    ]
    return out_l0, out


# -- phase 2 -------------------------------------------------------------------------


def _prefix(section: str) -> str:
    return f"{section}." if section else ""


def _after_marker(text: str, lines: LineIndex, pos: int) -> int:
    end = lines.line_end(pos)
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


class _Draft:
    __slots__ = (
        "children",
        "end",
        "kind",
        "level",
        "n",
        "n_line",
        "parent",
        "path",
        "pointer",
        "section",
        "start",
        "title",
    )

    def __init__(self, kind: ElementKind, start: int, end: int, pointer: str, section: str, path: str | None) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.pointer = pointer
        self.section = section
        self.path = path
        self.level: int | None = None
        self.title: str | None = None
        self.parent: _Draft | None = None
        self.children: list[_Draft] = []
        self.n = 0
        self.n_line = -1


class _Assembler:
    """Phase 2 over a run of blocks, from a saved section state."""

    def __init__(self, text: str, lines: LineIndex, snap: Snap) -> None:
        self.text = text
        self.lines = lines
        self.root = snap[0]
        self.stack: list[list[Any]] = [list(h) for h in snap[1]]  # [level, key, title, child_count]
        self.path: str | None = " > ".join(h[2] for h in self.stack) if self.stack else None
        self.section = self.stack[-1][1] if self.stack else ""
        self.counters: dict[str, int] = {}
        self.drafts: list[_Draft] = []
        self.reserved: set[str] = set()
        self.paragraphs: list[tuple[str, int, int, _Draft | None]] = []
        self.sections: list[str] = [self.section]
        self.head_lines: list[int] = []
        self.head_keys: list[str] = []
        self.elem: list[int] = []
        self.snaps: list[Snap | None] = []

    def snap(self) -> Snap:
        return self.root, tuple((h[0], h[1], h[2], h[3]) for h in self.stack)

    def leaf(self, leaf: str) -> str:
        n = self.counters.get(leaf, 0) + 1
        self.counters[leaf] = n
        return f"{_prefix(self.section)}{leaf}{n}"

    def block(self, b0: int, rec: BlockRec) -> None:
        self.elem.append(len(self.drafts))
        text, lines = self.text, self.lines
        starts, ends = lines.starts, lines.ends
        drafts = self.drafts
        items: list[_Draft] = []
        snap: Snap | None = None
        for op in rec.ops:
            code = op[0]
            l0 = op[1] + b0
            if code == _P:
                l1 = op[2] + b0
                d = None
                if op[3]:
                    d = _Draft(ElementKind.PARAGRAPH, starts[l0], ends[l1 - 1], "", self.section, self.path)
                    drafts.append(d)
                self.paragraphs.append((self.section, l0, l1, d))
            elif code == _LI:
                parent = items[op[3]] if op[3] >= 0 else None
                if parent is not None:
                    parent.n += 1
                    pointer = f"{parent.pointer}.li{parent.n}"
                else:
                    pointer = self.leaf("li")
                start = starts[l0]
                if parent is not None and parent.n_line == l0:
                    start = _after_marker(text, lines, parent.start)
                d = _Draft(ElementKind.LIST_ITEM, start, start, pointer, self.section, self.path)
                d.n_line = l0
                if op[2] >= 0:
                    d.end = max(start, ends[op[2] + b0 - 1])
                d.parent = parent
                if parent is not None:
                    parent.children.append(d)
                items.append(d)
                drafts.append(d)
            elif code == _C:
                pointer = self.leaf("code")
                if op[3]:
                    drafts.append(
                        _Draft(
                            ElementKind.CODE_BLOCK, starts[l0], ends[op[2] + b0 - 1], pointer, self.section, self.path
                        )
                    )
                else:
                    self.reserved.add(pointer)
            elif code == _H:
                snap = self.snap()
                level, title = op[3], op[4]
                stack = self.stack
                while stack and stack[-1][0] >= level:
                    stack.pop()
                if stack:
                    stack[-1][3] += 1
                    key = f"{stack[-1][1]}.{stack[-1][3]}"
                else:
                    self.root += 1
                    key = str(self.root)
                stack.append([level, key, title, 0])
                self.path = " > ".join(h[2] for h in stack)
                self.section = key
                self.counters = {}
                self.sections.append(key)
                self.head_lines.append(l0)
                self.head_keys.append(key)
                d = _Draft(ElementKind.HEADING, starts[l0], ends[op[2] + b0 - 1], key, key, self.path)
                d.level = level
                d.title = title
                drafts.append(d)
            elif code == _T:
                drafts.append(
                    _Draft(ElementKind.TABLE, starts[l0], ends[op[2] + b0 - 1], self.leaf("t"), self.section, self.path)
                )
            elif code == _Q:
                drafts.append(
                    _Draft(
                        ElementKind.BLOCK_QUOTE,
                        starts[l0],
                        ends[op[2] + b0 - 1],
                        self.leaf("q"),
                        self.section,
                        self.path,
                    )
                )
            else:  # _F
                drafts.append(
                    _Draft(
                        ElementKind.FRONT_MATTER,
                        starts[l0],
                        ends[op[2] + b0 - 1],
                        FRONT_MATTER,
                        self.section,
                        self.path,
                    )
                )
        self.snaps.append(snap)

    def section_at(self, line: int, default: str) -> str:
        i = bisect_right(self.head_lines, line) - 1
        return self.head_keys[i] if i >= 0 else default

    def assign_paragraphs(self, history: Sequence[tuple[int, int]] | None, first: str) -> None:
        """§4.6 ordinals for the sections of this run (``history``: its historical ranges)."""
        current: dict[str, list[tuple[int, int, _Draft | None]]] = {}
        for section, l0, l1, draft in self.paragraphs:
            current.setdefault(section, []).append((l0, l1, draft))
        historical: dict[str, dict[tuple[int, int], int]] = {}
        if history is None:
            for section, occurrences in current.items():
                historical[section] = {(l0, l1): k for k, (l0, l1, _) in enumerate(occurrences, 1)}
        else:
            for l0, l1 in history:
                table = historical.setdefault(self.section_at(l0, first), {})
                table[(l0, l1)] = len(table) + 1
        reserved = self.reserved
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
                    reserved.add(f"{prefix}p{ordinal}")
                else:
                    draft.pointer = f"{prefix}p{ordinal}"
            reserved.update(f"{prefix}p{o}" for o in known.values() if o not in used)


def _own_segments(text: str, d: _Draft) -> tuple[tuple[int, int], ...]:
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


def _element(text: str, d: _Draft, section_end: int | None) -> Element:
    if d.kind is ElementKind.LIST_ITEM:
        segments = _own_segments(text, d)
        parts = [text[s:e] for s, e in segments]
        own = "".join(parts)
        self_hash = segments_hash(parts)
        subtree = span_hash(text[d.start : d.end]) if d.children else self_hash
    else:
        segments = ((d.start, d.end),)
        own = text[d.start : d.end]
        self_hash = span_hash(own)
        subtree = self_hash
    if section_end is not None:
        subtree = span_hash(text[d.start : section_end])
    return Element(
        d.pointer,
        d.kind,
        d.start,
        d.end,
        segments,
        own,
        self_hash,
        subtree,
        d.path,
        d.level,
        section_end,
        d.parent.pointer if d.parent is not None else None,
        d.title,
    )


def _shifted(elements: Sequence[Element], delta: int) -> list[Element]:
    """Copies of ``elements`` moved by ``delta`` (the suffix a re-parse reuses).

    The hot loop of a re-parse near the start of a big document: a single-range
    ``segments`` (every kind but a parent list item) is rebuilt without a
    generator, and the constructor is bound locally.
    """
    make = Element
    out: list[Element] = []
    append = out.append
    for e in elements:
        segments = e.segments
        if len(segments) == 1:
            ((s, t),) = segments
            moved: tuple[tuple[int, int], ...] = ((s + delta, t + delta),)
        else:
            moved = tuple([(s + delta, t + delta) for s, t in segments])
        end = e.section_end
        append(
            make(
                e.pointer,
                e.kind,
                e.start + delta,
                e.end + delta,
                moved,
                e.text,
                e.self_hash,
                e.subtree_hash,
                e.heading_path,
                e.level,
                None if end is None else end + delta,
                e.parent,
                e.title,
            )
        )
    return out


# -- historical paragraphs (§4.6) -------------------------------------------------------


def _hist_cut(text: str, lines: LineIndex, l0s: list[int], recs: list[BlockRec], k: int) -> bool:
    l0 = l0s[k]
    prev_end = l0s[k - 1] + recs[k - 1].n
    return l0 > 0 and _blank(text, lines, l0 - 1) and all(_blank(text, lines, x) for x in range(min(prev_end, l0), l0))


def _parse_region(text: str, lines: LineIndex, a: int, b: int) -> tuple[list[tuple[int, int]], str | None]:
    src = "\n".join(text[lines.starts[x] : lines.ends[x]] for x in range(a, b))
    tokens = (_MD_HIST_HEAD if a == 0 else _MD_HIST).parse(src)
    found: list[tuple[int, int]] = []
    quotes: list[tuple[int, int] | None] = []
    last_type: str | None = None
    for tok in tokens:
        m = tok.map
        if tok.level == 0 and tok.nesting >= 0 and m is not None:
            last_type = tok.type
        ttype = tok.type
        if ttype == "blockquote_open":
            l0, l1 = (m[0], m[1]) if m else (0, 1)
            quotes.append((l0 + a, _trim(text, lines, l0 + a, l1 + a)))
        elif ttype in _LIST_OPEN or ttype == "list_item_open":
            quotes.append(None)
        elif ttype in _CLOSERS:
            if quotes:
                quotes.pop()
        elif ttype == "paragraph_open":
            l0, l1 = (m[0], m[1]) if m else (0, 1)
            rng = (l0 + a, _trim(text, lines, l0 + a, l1 + a))
            if not (quotes and quotes[-1] == rng):
                found.append(rng)
    return found, last_type


def _historical(
    text: str,
    lines: LineIndex,
    l0s: list[int],
    recs: list[BlockRec],
    c_first: int,
    stop: int,
    can_stop: Callable[[int], bool] | None = None,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """Historical ranges from block ``c_first`` (a fresh chunk start) on.

    Stops at the first fresh chunk start whose block index is ``>= stop``; returns
    ``(ranges, regions, block index stopped at or len(blocks))``.
    """
    nb = len(l0s)
    starts = [c_first]
    scanned = c_first + 1  # blocks below this were tested for a chunk cut

    def chunk_start(c: int) -> int | None:
        nonlocal scanned
        while len(starts) <= c and scanned < nb:
            if _hist_cut(text, lines, l0s, recs, scanned):
                starts.append(scanned)
            scanned += 1
        return starts[c] if c < len(starts) else None

    result: list[tuple[int, int]] = []
    regions: list[tuple[int, int]] = []
    count = lines.count
    c = 0
    stopped = nb

    def chunk_end(c: int) -> int:
        nxt = chunk_start(c + 1)
        return nb if nxt is None else nxt

    def has_table(c: int) -> bool:
        return any(recs[k].has_table for k in range(starts[c], chunk_end(c)))

    def current(c: int) -> None:
        for k in range(starts[c], chunk_end(c)):
            base = l0s[k]
            for op in recs[k].ops:
                if op[0] == _P:
                    result.append((op[1] + base, op[2] + base))

    while chunk_start(c) is not None:
        if c > 0 and (starts[c] >= stop or (can_stop is not None and can_stop(starts[c]))):
            stopped = starts[c]
            break
        if not has_table(c):
            current(c)
            c += 1
            continue
        first = c
        while True:
            a = l0s[starts[first]] if starts[first] else 0
            nxt = chunk_start(c + 1)
            b = l0s[nxt] if nxt is not None else count
            found, last_type = _parse_region(text, lines, a, b)
            if last_type in _CONTINUABLE and nxt is not None:
                c += 1
                continue
            break
        regions.append((a, b))
        result.extend(found)
        c += 1
    result.sort()
    return result, regions, stopped


# -- building -------------------------------------------------------------------------


def _finish(
    text: str,
    asm: _Assembler,
    prefix_open: list[tuple[int, int, str]],
    stop_start: int | None,
    stop_level: int,
    old_end: Callable[[str], int],
) -> tuple[list[Element], dict[int, int]]:
    """Elements of the assembled run, and the new section ends of the
    ``prefix_open`` headings ``(level, element index, key)`` open when it started.

    The run stops at EOF (``stop_start`` None) or right before a heading at
    ``stop_start`` of level ``stop_level`` after which the old document is
    reused: headings still open there end at it or where they ended before.
    """
    drafts = asm.drafts
    ends: dict[int, int] = {}
    prefix_ends: dict[int, int] = {}
    open_h: list[tuple[int, int, bool, str]] = [(lv, idx, True, key) for lv, idx, key in prefix_open]
    for k, d in enumerate(drafts):
        if d.kind is ElementKind.HEADING and d.level is not None:
            while open_h and open_h[-1][0] >= d.level:
                _, idx, ext, _ = open_h.pop()
                (prefix_ends if ext else ends)[idx] = d.start
            open_h.append((d.level, k, False, d.pointer))
    for lv, idx, ext, key in open_h:
        if stop_start is None:
            end = len(text)
        elif lv >= stop_level:
            end = stop_start
        else:
            end = old_end(key)
        (prefix_ends if ext else ends)[idx] = end
    elements = [_element(text, d, ends.get(k)) for k, d in enumerate(drafts)]
    return elements, prefix_ends


def build_state(text: str, lines: LineIndex) -> tuple[tuple[Element, ...], frozenset[str], BlockState]:
    """Full parse: elements, reserved pointers and the state for later re-parses."""
    l0s, recs = _scan(_MD_HEAD.parse(text), text, lines, 0)
    return _assemble(text, lines, l0s, recs)


def _assemble(
    text: str, lines: LineIndex, l0s: list[int], recs: list[BlockRec]
) -> tuple[tuple[Element, ...], frozenset[str], BlockState]:
    has_tables = any(r.has_table for r in recs)
    hist = regions = None
    if has_tables:
        hist, regions, _ = _historical(text, lines, l0s, recs, 0, len(l0s) + 1)
    asm = _Assembler(text, lines, (0, ()))
    for b0, rec in zip(l0s, recs, strict=True):
        asm.block(b0, rec)
    asm.assign_paragraphs(hist, "")
    elements, _ = _finish(text, asm, [], None, 0, _no_end)
    state = BlockState(l0s, recs, asm.elem, asm.snaps, has_tables, hist, regions)
    return tuple(elements), frozenset(asm.reserved), state


def _no_end(key: str) -> int:  # pragma: no cover - only called when a run stops at a sync point
    raise AssertionError(key)


# -- incremental re-parse -----------------------------------------------------------------


def _inside(regions: list[tuple[int, int]], line: int) -> tuple[int, int] | None:
    r = bisect_right(regions, (line, -1)) - 1
    if r >= 0 and regions[r][0] < line < regions[r][1]:
        return regions[r]
    return None


def reparse(
    old: Document, st: BlockState, new_text: str, a: int, b: int
) -> tuple[tuple[Element, ...], frozenset[str], LineIndex, BlockState] | None:
    """Elements of ``new_text``, which is ``old.text`` with ``[a, b)`` replaced.

    ``None`` when the region cannot be bounded (the caller then parses fully).
    """
    text, lines = old.text, old.lines
    l0s, recs = st.l0, st.recs
    nb = len(l0s)
    if nb == 0:
        return None
    delta = len(new_text) - len(text)

    def cut(k: int) -> bool:
        l0 = l0s[k]
        return l0 > 0 and recs[k - 1].kind not in _NO_RESTART and _blank(text, lines, l0 - 1)

    def stable(k: int) -> bool:
        # Inserting "\n" right after a "\r" would merge two breaks into one.
        start = lines.starts[l0s[k]]
        return start < a or not (text[start - 1] == "\r" and new_text.startswith("\n", start))

    i = bisect_right(l0s, lines.line_of(a)) - 1
    while i > 0 and not (cut(i) and stable(i)):
        i -= 1
    if text.startswith("---") and recs[0].kind != "front_matter":
        i = 0  # an unclosed front matter opener: a later edit may close it
    i = max(i, 0)
    big_l = l0s[i] if i > 0 else 0
    s_off = lines.starts[big_l]
    j = max(bisect_right(l0s, lines.line_of(b)), i + 1)
    for _attempt in range(6):
        while j < nb and not (cut(j) and lines.starts[l0s[j] - 1] >= b):
            j += 1
        if _attempt == 5:  # pragma: no cover - seams rarely fail five times
            j = nb
        big_m = l0s[j] if j < nb else lines.count
        m_end = lines.starts[big_m] + delta if j < nb else len(new_text)
        mid_starts = [s_off]
        mid_ends: list[int] = []
        for m in _BREAK_RE.finditer(new_text, s_off, m_end):
            mid_ends.append(m.start())
            mid_starts.append(m.end())
        if j < nb:
            if not mid_ends or mid_starts[-1] != m_end:
                j += 1
                continue
            mid_starts.pop()
            if new_text[mid_starts[-1] : mid_ends[-1]].strip(" \t"):
                j += 1
                continue
        else:
            mid_ends.append(len(new_text))
        mp = big_l + len(mid_starts)
        shift_l = mp - big_m
        new_lines = LineIndex(
            lines.starts[:big_l] + tuple(mid_starts) + tuple([x + delta for x in lines.starts[big_m:]]),
            lines.ends[:big_l] + tuple(mid_ends) + tuple([x + delta for x in lines.ends[big_m:]]),
            len(new_text),
        )
        tokens = (_MD_HEAD if big_l == 0 else _MD_REST).parse(new_text[s_off:m_end])
        mid_l0, mid_recs = _scan(tokens, new_text, new_lines, big_l)
        if j < nb and mid_recs and mid_recs[-1].kind in _NO_RESTART:
            j += 1
            continue
        fm_closed = bool(mid_recs) and mid_recs[0].kind == "front_matter"
        if j < nb and big_l == 0 and new_text.startswith("---") and not fm_closed:
            j = nb  # an unclosed front matter opener may close anywhere later
            continue
        break
    else:  # pragma: no cover - the last attempt always parses to EOF
        return None
    n_l0 = l0s[:i] + mid_l0 + [x + shift_l for x in l0s[j:]]
    n_recs = recs[:i] + mid_recs + recs[j:]
    jn = i + len(mid_l0)
    db = jn - j
    nbn = len(n_l0)
    has_tables = any(r.has_table for r in n_recs)

    # Historical ranges.
    hist: list[tuple[int, int]] | None = None
    regions: list[tuple[int, int]] | None = None
    hist_sync = 0
    if has_tables:
        if st.hist is None or st.regions is None:
            hist, regions, _ = _historical(new_text, new_lines, n_l0, n_recs, 0, nbn + 1)
            hist_sync = nbn
        else:
            old_regions = st.regions
            k = i - 1
            while k > 0 and not _hist_cut(text, lines, l0s, recs, k):
                k -= 1
            k = max(k, 0)
            while k > 0:
                region = _inside(old_regions, l0s[k])
                if region is None:
                    break
                k = bisect_left(l0s, region[0]) if region[0] else 0
            start_line = l0s[k] if k else 0

            def can_stop(s: int) -> bool:
                return s > jn and _inside(old_regions, l0s[s - db]) is None

            found, new_regions, stopped = _historical(new_text, new_lines, n_l0, n_recs, k, nbn + 1, can_stop)
            hist_sync = stopped
            old_hist = st.hist
            lo = bisect_left(old_hist, (start_line, -1))
            lo_r = bisect_left(old_regions, (start_line, -1))
            hist = old_hist[:lo] + found
            regions = old_regions[:lo_r] + new_regions
            if stopped < nbn:
                old_line = l0s[stopped - db]
                hi = bisect_left(old_hist, (old_line, -1))
                hi_r = bisect_left(old_regions, (old_line, -1))
                hist += [(x + shift_l, y + shift_l) for x, y in old_hist[hi:]]
                regions += [(x + shift_l, y + shift_l) for x, y in old_regions[hi_r:]]

    # Assembly from the heading opening the section of the first changed block.
    bh = i - 1
    while bh >= 0 and st.snaps[bh] is None:
        bh -= 1
    snap: Snap = (0, ())
    at_heading = bh >= 0
    if at_heading:
        snap = st.snaps[bh] or snap
    else:
        bh = 0
    asm = _Assembler(new_text, new_lines, snap)
    g = nbn
    for k in range(bh, nbn):
        rec = n_recs[k]
        if k >= jn and k >= hist_sync and st.snaps[k - db] is not None and asm.snap() == st.snaps[k - db]:
            g = k
            break
        asm.block(n_l0[k], rec)
    win_lo = n_l0[bh] if at_heading else 0
    win_hi = n_l0[g] if g < nbn else new_lines.count
    history = None
    if hist is not None:
        history = hist[bisect_left(hist, (win_lo, -1)) : bisect_left(hist, (win_hi, -1))]
    asm.assign_paragraphs(history, "")

    old_elements = old.elements
    prefix_open: list[tuple[int, int, str]] = []
    for level, key, _, _ in snap[1]:
        idx = old.index_of(key)
        if idx is None:  # pragma: no cover - saved state always names old headings
            return None
        prefix_open.append((level, idx, key))

    def old_end(key: str) -> int:
        idx = old.index_of(key)
        end = old_elements[idx].section_end if idx is not None else None
        if end is None:  # pragma: no cover - synced headings exist in the old document
            raise AssertionError(key)
        return end + delta

    stop_start: int | None = None
    stop_level = 0
    if g < nbn:
        h_op = n_recs[g].ops[0]
        stop_start = new_lines.starts[n_l0[g] + h_op[1]]
        stop_level = h_op[3]
    window, prefix_ends = _finish(new_text, asm, prefix_open, stop_start, stop_level, old_end)
    e_bh = st.elem[bh] if bh < nb else len(old_elements)
    prefix = list(old_elements[:e_bh])
    for _, idx, _ in prefix_open:
        e = prefix[idx]
        end = prefix_ends[idx]
        prefix[idx] = Element(
            e.pointer,
            e.kind,
            e.start,
            e.end,
            e.segments,
            e.text,
            e.self_hash,
            span_hash(new_text[e.start : end]),
            e.heading_path,
            e.level,
            end,
            e.parent,
            e.title,
        )
    suffix: Sequence[Element] = ()
    new_elem = st.elem[:bh] + [x + e_bh for x in asm.elem]
    snaps = st.snaps[:bh] + asm.snaps
    old_keys: set[str] = set() if at_heading else {""}
    g_old = g - db if g < nbn else nb
    for k in range(bh, g_old):
        if st.snaps[k] is not None:
            old_keys.add(old_elements[st.elem[k]].pointer)
    if g < nbn:
        e_g = st.elem[g_old]
        suffix = old_elements[e_g:] if delta == 0 else _shifted(old_elements[e_g:], delta)
        shift_e = e_bh + len(window) - e_g
        new_elem += [x + shift_e for x in st.elem[g_old:]]
        snaps += st.snaps[g_old:]
    elements = (*prefix, *window, *suffix)
    reserved = {r for r in old.reserved if r.rpartition(".")[0] not in old_keys}
    reserved |= asm.reserved
    state = BlockState(n_l0, n_recs, new_elem, snaps, has_tables, hist, regions, old.source_hash, (e_bh, len(suffix)))
    return elements, frozenset(reserved), new_lines, state


def reused_elements(old: Document, new: Document) -> tuple[int, int]:
    """``(prefix, suffix)``: ``new`` was re-parsed from ``old`` and reuses its first
    ``prefix`` elements unchanged (same pointer, kind, span, text and parent; an
    open heading's section end may differ) and its last ``suffix`` elements shifted
    by the length delta. A non-empty prefix is followed, and a non-empty suffix
    starts, with a top-level heading in both documents. ``(0, 0)`` when unknown."""
    st = new._state
    if not isinstance(st, BlockState) or st.base != old.source_hash:
        return 0, 0
    return st.reused
