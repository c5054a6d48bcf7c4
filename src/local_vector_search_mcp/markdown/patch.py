"""kb_patch planning (contract §5): operations in, new document text out.

Pure functions over a parsed :class:`Document`: resolve every operation's
anchor against one revision (§3.4, §3.5), pre-validate the fragments (§5.3),
turn each operation into a source splice (§5.2), refuse duplicates and
overlaps, apply the splices and run the structural validator (§5.4) on a
re-parse of the result. Nothing is ever re-serialised: every byte outside the
splices survives, replacement text takes the document's EOL, and the BOM is
the caller's business (it is not part of ``Document.text``).

Any refusal raises a :class:`KbError`; the caller then writes nothing.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from local_vector_search_mcp.errors import InvalidArgument

from .blocks import BlockState, reused_elements
from .document import parse_edited, parse_text
from .kinds import ElementKind
from .model import Document, Element
from .pointers import DOCUMENT, Anchor, containing_section, parse_anchor
from .resolve import MutationScope, resolve_for_mutation

__all__ = [
    "Edit",
    "Op",
    "PatchOperation",
    "apply_edits",
    "list_marker",
    "normalize_eol",
    "patch_text",
    "plan_edits",
    "plan_patch",
    "validate_structure",
]

REPLACE = "replace"
REPLACE_ELEMENT = "replace_element"
REPLACE_SUBTREE = "replace_subtree"
REPLACE_SECTION = "replace_section"
DELETE_SECTION = "delete_section"
INSERT_BEFORE = "insert_before"
INSERT_AFTER = "insert_after"
DELETE = "delete"
KINDS = (
    REPLACE,
    REPLACE_ELEMENT,
    REPLACE_SUBTREE,
    REPLACE_SECTION,
    DELETE_SECTION,
    INSERT_BEFORE,
    INSERT_AFTER,
    DELETE,
)
_NO_MARKDOWN = (DELETE, DELETE_SECTION)
_SUBTREE_KINDS = (REPLACE_SUBTREE, REPLACE_SECTION, DELETE_SECTION)

_EOL_RE = re.compile(r"\r\n|\r|\n")
_MARKER_RE = re.compile(r"([ \t]*)([-+*]|[0-9]{1,9}[.)])(?=[ \t]|$)")
_NEWLINES = "\r\n"


class PatchOperation(Protocol):
    """What ``plan_patch`` reads from an operation (the generated request model fits)."""

    @property
    def kind(self) -> str: ...

    @property
    def pointer(self) -> str: ...

    @property
    def markdown(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Op:
    """A plain operation, for callers that do not hold a request model."""

    kind: str
    pointer: str
    markdown: str | None = None


@dataclass(frozen=True, slots=True)
class Edit:
    """One splice: ``text`` replaces ``doc.text[start:end]``.

    ``claim_start``/``claim_end`` is the range the operation owns for overlap
    checks (a section operation owns its whole section). ``target`` is the
    resolved element (``None`` for ``document``); ``structured`` marks list and
    quote edits whose result must be exactly one new root element (§5.4).
    """

    start: int
    end: int
    text: str
    pointer: str
    kind: str
    claim_start: int
    claim_end: int
    target: Element | None = None
    structured: bool = False


# -- small helpers -------------------------------------------------------------


def normalize_eol(markdown: str, eol: str) -> str:
    """Every line break of ``markdown`` becomes ``eol`` (§4.7)."""
    return _EOL_RE.sub(eol, markdown)


def _unsupported(pointer: str, reason: str) -> InvalidArgument:
    return InvalidArgument(f"Unsupported Markdown structure at '{pointer}': {reason}")


def list_marker(text: str, start: int) -> tuple[str, int] | None:
    """``(style, indent)`` of the list item whose line starts at ``start``.

    Style is the bullet character or ``ordered:.`` / ``ordered:)`` (numbers
    ignored); indent is the leading whitespace length (§4.4). ``None`` when
    the line does not start with a recognised marker.
    """
    m = _MARKER_RE.match(text, start)
    if m is None:
        return None
    marker = m.group(2)
    style = marker if marker in "-+*" else f"ordered:{marker[-1]}"
    return style, len(m.group(1))


def _item_marker(doc: Document, item: Element) -> tuple[str, int] | None:
    if doc.line_start(item.start) != item.start:
        return None  # an item opening on its parent's line (``- - a``)
    return list_marker(doc.text, item.start)


def _depth(item: Element) -> int:
    return sum(1 for part in item.pointer.split(".") if part.startswith("li"))


def _kind_name(kind: ElementKind) -> str:
    return kind.value.replace("_", " ")


# -- fragment pre-validation (§5.3) -----------------------------------------------


def _check_single_element(target: Element, md: str) -> None:
    frag = parse_text(md)
    pointer = target.pointer
    hint = " Use replace_section to replace a heading together with its section." if target.level else ""
    if len(frag.elements) != 1:
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' must be exactly one editable Markdown element "
            f"(a {_kind_name(target.kind)}); it holds {len(frag.elements)}.{hint}"
        )
    element = frag.elements[0]
    if md[: element.start].strip() or md[element.end :].strip():
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' must be exactly one editable Markdown element "
            f"with only whitespace around it.{hint}"
        )
    if element.kind is not target.kind:
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' is a {_kind_name(element.kind)}, but the target is a "
            f"{_kind_name(target.kind)}; the replacement must be exactly one editable Markdown element of the same "
            "kind (use delete and insert_before/insert_after to change the kind)."
        )
    if target.level is not None and element.level != target.level:
        raise InvalidArgument(
            f"The markdown for replace_element at '{pointer}' is a level-{element.level} heading; the target is "
            f"level {target.level}.{hint}"
        )


def _check_section(target: Element, md: str) -> None:
    frag = parse_text(md)
    level = target.level or 1
    headings = frag.headings
    first = frag.elements[0] if frag.elements else None
    ok = (
        first is not None
        and first.kind is ElementKind.HEADING
        and first.level == level
        and not md[: first.start].strip()
        and all((h.level or 0) > level for h in headings[1:])
    )
    if not ok:
        raise InvalidArgument(
            f"The markdown for replace_section at '{target.pointer}' must be exactly one root section: it must "
            f"start with a level-{level} heading, and every later heading must be deeper (level > {level})."
        )


def _check_list_fragment(doc: Document, target: Element, md: str, kind: str) -> None:
    marker = _item_marker(doc, target)
    if marker is None:
        raise _unsupported(target.pointer, "unsupported list container (unknown marker style or indentation)")
    style, indent = marker
    what = f"The markdown for {kind} at '{target.pointer}'"
    stripped = md.lstrip(_NEWLINES)
    own = list_marker(stripped, 0)
    if own is None or own[1] != indent:
        raise InvalidArgument(
            f"{what} must be exactly one list item indented by {indent} space(s) with a '{_style_hint(style)}' marker."
        )
    if own[0] != style:
        raise InvalidArgument(
            f"{what} uses marker style '{_style_hint(own[0])}'; the list uses '{_style_hint(style)}' "
            "(ordered numbers may differ)."
        )
    # Parse the fragment as if it stood at column 0 (an item indented by four
    # spaces would otherwise read as indented code).
    lines = stripped.split(doc.eol) if doc.eol in stripped else [stripped]
    dedented = doc.eol.join(_dedent(line, indent) for line in lines)
    frag = parse_text(dedented)
    roots = [e for e in frag.elements if e.kind is ElementKind.LIST_ITEM and e.parent is None]
    others = [e for e in frag.elements if e.kind is not ElementKind.LIST_ITEM]
    if len(roots) != 1 or others:
        raise InvalidArgument(f"{what} must be exactly one list item (nested items inside it only), nothing else.")
    root = roots[0]
    if dedented[: root.start].strip() or dedented[root.end :].strip():
        raise InvalidArgument(f"{what} must be exactly one list item with nothing outside it.")
    if kind == REPLACE_ELEMENT and any(e.parent is not None for e in frag.elements):
        raise InvalidArgument(
            f"{what} may not contain nested items: replace_element keeps the existing nested items. "
            "Use replace_subtree to replace the item with its nested items."
        )


def _dedent(line: str, indent: int) -> str:
    k = 0
    while k < indent and k < len(line) and line[k] in " \t":
        k += 1
    return line[k:]


def _style_hint(style: str) -> str:
    return "1" + style[-1] if style.startswith("ordered:") else style


# -- planning (§5.2) ------------------------------------------------------------------


def _scope(kind: str, target_kind: ElementKind | None) -> MutationScope:
    if kind in _SUBTREE_KINDS or (kind == DELETE and target_kind is ElementKind.LIST_ITEM):
        return MutationScope.SUBTREE
    return MutationScope.SELF


def _check_arguments(kind: str, anchor: Anchor, markdown: str | None) -> None:
    if kind not in KINDS:
        raise InvalidArgument(f"Unknown operation kind '{kind}'; expected one of: {', '.join(KINDS)}.")
    if kind in _NO_MARKDOWN and markdown is not None:
        raise InvalidArgument(f"Operation '{kind}' does not take markdown; omit it.")
    if kind not in _NO_MARKDOWN and markdown is None:
        raise InvalidArgument(f"Operation '{kind}' requires markdown.")
    target_kind = anchor.kind
    if anchor.is_document:
        return
    if kind in (REPLACE_SECTION, DELETE_SECTION) and target_kind is not ElementKind.HEADING:
        raise InvalidArgument(f"{kind} requires a heading pointer; '{anchor.logical}' is not a heading.")
    if kind == REPLACE_SUBTREE and target_kind is not ElementKind.LIST_ITEM:
        raise InvalidArgument(
            f"replace_subtree requires a list item pointer; '{anchor.logical}' is not a list item "
            "(use replace_section for a heading with its section, replace_element otherwise)."
        )
    if kind == INSERT_BEFORE and target_kind is ElementKind.FRONT_MATTER:
        raise InvalidArgument(
            "Nothing can be inserted before the front matter; use insert_before on 'document', which inserts "
            "after the front matter."
        )


def _trim_end(text: str) -> str:
    return text.rstrip(_NEWLINES)


def _trim_start(text: str) -> str:
    return text.lstrip(_NEWLINES)


def _document_edit(doc: Document, kind: str, md: str) -> Edit:
    text, eol, n = doc.text, doc.eol, len(doc.text)
    if not text:  # an empty file simply takes the content
        return Edit(0, 0, md, DOCUMENT, kind, 0, 0)
    if kind == INSERT_BEFORE:
        fm = doc.get("frontmatter")
        if fm is None:
            rest, pos, lead = text, 0, ""
        else:
            pos = doc.break_after(fm.end)
            rest = text[pos:]
            lead = eol if pos > fm.end else eol + eol
        body = _trim_end(md)
        if not rest:  # only front matter: keep the file's final line break, if any
            sep = eol if fm is not None and pos > fm.end else ""
        elif rest.startswith(eol + eol):
            sep = ""
        elif rest.startswith(eol):
            sep = eol
        else:
            sep = eol + eol
        return Edit(pos, pos, lead + body + sep, DOCUMENT, kind, pos, pos)
    if kind == INSERT_AFTER:
        if text.endswith(eol + eol):
            sep = ""
        elif text.endswith(eol):
            sep = eol
        else:
            sep = eol + eol
        return Edit(n, n, sep + _trim_start(md), DOCUMENT, kind, n, n)
    raise InvalidArgument(
        f"Operation '{kind}' is not supported for the document pointer; use insert_before or insert_after "
        "(or a concrete element's anchor)."
    )


def _list_edit(doc: Document, kind: str, target: Element, md: str) -> Edit:
    text, eol, p = doc.text, doc.eol, target.pointer
    if _item_marker(doc, target) is None:
        raise _unsupported(p, "unsupported list container (unknown marker style or indentation)")
    start, end = target.start, target.end
    if kind == REPLACE_ELEMENT:
        seg_start, seg_end = target.segments[0] if target.segments else (start, start)
        if seg_start != start:
            raise _unsupported(p, "the item has no own text before its nested items")
        while seg_end > seg_start and text[seg_end - 1] in _NEWLINES:
            seg_end -= 1  # keep the blank line that separated the first nested item
        return Edit(seg_start, seg_end, _trim_end(md), p, kind, seg_start, seg_end, target, True)
    if kind == REPLACE_SUBTREE:
        return Edit(start, end, _trim_end(md), p, kind, start, end, target, True)
    after = doc.break_after(end)
    if kind == DELETE:
        return Edit(start, after, "", p, kind, start, after, target)
    if kind == INSERT_BEFORE:
        return Edit(start, start, _trim_end(md) + eol, p, kind, start, start, target, True)
    if kind == INSERT_AFTER:
        frag = _trim_end(md)
        # No line break after the item means it ends the file: the break goes first.
        new = frag + eol if after > 0 and text[after - 1] in _NEWLINES else eol + frag
        return Edit(after, after, new, p, kind, after, after, target, True)
    raise InvalidArgument(f"{kind} requires a heading pointer; '{p}' is a list item.")


def _block_edit(doc: Document, kind: str, target: Element, md: str) -> Edit:
    eol, p = doc.eol, target.pointer
    start, end = target.start, target.end
    quote = target.kind is ElementKind.BLOCK_QUOTE
    if kind == REPLACE_ELEMENT:
        return Edit(start, end, md, p, kind, start, end, target, quote)
    if kind == INSERT_BEFORE:
        return Edit(start, start, _trim_end(md) + eol + eol, p, kind, start, start, target)
    if kind == INSERT_AFTER:
        return Edit(end, end, eol + eol + _trim_start(md), p, kind, end, end, target)
    if kind == DELETE:
        stop = doc.break_after(end) if quote else end
        return Edit(start, stop, "", p, kind, start, stop, target)
    section_end = target.section_end if target.section_end is not None else end
    if kind == REPLACE_SECTION:
        body = md
        if section_end < len(doc.text):
            if body.endswith(eol + eol):
                pass
            elif body.endswith(eol):
                body += eol
            else:
                body += eol + eol
        return Edit(start, section_end, body, p, kind, start, section_end, target)
    if kind == DELETE_SECTION:
        return Edit(start, section_end, "", p, kind, start, section_end, target)
    raise InvalidArgument(f"Operation '{kind}' is not valid for '{p}'.")  # pragma: no cover - checked earlier


def plan_edits(doc: Document, path: str, operations: Sequence[PatchOperation]) -> list[Edit]:
    """Resolve and plan every operation against ``doc``; sorted, overlap-free splices."""
    if not operations:
        raise InvalidArgument("At least one operation is required.")
    edits: list[tuple[int, Edit]] = []
    seen: dict[str, int] = {}
    for index, op in enumerate(operations):
        kind = op.kind.lower()
        anchor = parse_anchor(op.pointer)
        _check_arguments(kind, anchor, op.markdown)
        if kind == REPLACE:
            kind = REPLACE_ELEMENT
        md = normalize_eol(op.markdown or "", doc.eol)
        target = resolve_for_mutation(doc, anchor, path, _scope(kind, anchor.kind))
        key = DOCUMENT if target is None else target.pointer
        if key in seen:
            raise InvalidArgument(
                f"Operations {seen[key] + 1} and {index + 1} both target '{key}' (conflict at pointer); "
                "combine them into one operation."
            )
        seen[key] = index
        if target is None:
            edit = _document_edit(doc, kind, md)
        elif target.kind is ElementKind.LIST_ITEM:
            if kind in (REPLACE_ELEMENT, REPLACE_SUBTREE, INSERT_BEFORE, INSERT_AFTER):
                _check_list_fragment(doc, target, md, kind)
            edit = _list_edit(doc, kind, target, md)
        else:
            if kind == REPLACE_ELEMENT:
                _check_single_element(target, md)
            elif kind == REPLACE_SECTION:
                _check_section(target, md)
            edit = _block_edit(doc, kind, target, md)
        edits.append((index, edit))
    edits.sort(key=lambda pair: (pair[1].claim_start, pair[1].claim_end))
    for (i_prev, prev), (i_next, nxt) in itertools.pairwise(edits):
        if nxt.claim_start < prev.claim_end or nxt.claim_start == prev.claim_start:
            raise InvalidArgument(
                f"Operations {min(i_prev, i_next) + 1} and {max(i_prev, i_next) + 1} overlap ('{prev.pointer}' and "
                f"'{nxt.pointer}'); a section operation covers everything inside its section. Split the patch."
            )
    return [edit for _, edit in edits]


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Splice sorted, non-overlapping edits into ``text``."""
    parts: list[str] = []
    pos = 0
    for edit in edits:
        parts.append(text[pos : edit.start])
        parts.append(edit.text)
        pos = edit.end
    parts.append(text[pos:])
    return "".join(parts)


# -- structural validator (§5.4) -------------------------------------------------------


class _Mapper:
    """Maps offsets of the old text to the new text through sorted edits."""

    def __init__(self, edits: Sequence[Edit]) -> None:
        self.edits = list(edits)
        self.starts = [e.start for e in edits]
        self.ends = [e.end for e in edits]
        self.shift = [0]
        for e in edits:
            self.shift.append(self.shift[-1] + len(e.text) - (e.end - e.start))
        self.new_starts = [e.start + self.shift[k] for k, e in enumerate(edits)]

    def map(self, pos: int) -> int:
        return pos + self.shift[bisect_right(self.ends, pos)]

    def touching(self, start: int, end: int) -> Edit | None:
        """The edit that changes or inserts into ``[start, end)``, if any."""
        k = bisect_right(self.starts, end) - 1
        while k >= 0:
            e = self.edits[k]
            if e.end < start:
                break
            if e.start == e.end:
                if start < e.start < end:
                    return e
            elif e.start < end and e.end > start:
                return e
            k -= 1
        return None

    def new_range(self, k: int) -> tuple[int, int]:
        a = self.new_starts[k]
        return a, a + len(self.edits[k].text)

    def edit_at_new(self, pos: int) -> int | None:
        """Index of the edit whose new text contains ``pos`` (boundaries included)."""
        k = bisect_right(self.new_starts, pos) - 1
        while k >= 0:
            a, b = self.new_range(k)
            if a <= pos <= b:
                return k
            if b < pos:
                return None
            k -= 1
        return None

    def nearest(self, pos: int) -> Edit:
        k = bisect_right(self.starts, pos) - 1
        return self.edits[max(k, 0)]


def _containers(text: str, elements: Sequence[Element]) -> dict[str, int]:
    """List container of every item: consecutive siblings with only whitespace
    between them and the same marker style share one (CommonMark list rules).

    ``elements`` is a run of a document's elements that starts at the document
    start or at a top-level heading: no item after a heading continues a list
    from before it (its key, parent or section, is new), so a run gives every
    item in it the same container as the whole document does.
    """
    result: dict[str, int] = {}
    last: dict[tuple[str | None, str | None], Element] = {}
    list_item = ElementKind.LIST_ITEM
    for e in elements:
        if e.kind is not list_item:
            continue
        key = (e.parent, None if e.parent else containing_section(e.pointer))
        prev = last.get(key)
        style = _style_at(text, e.start)
        if prev is not None and not text[prev.end : e.start].strip() and _style_at(text, prev.start) == style:
            result[e.pointer] = result[prev.pointer]
        else:
            result[e.pointer] = e.start
        last[key] = e
    return result


def _style_at(text: str, start: int) -> str | None:
    m = _MARKER_RE.match(text, start)
    if m is None:
        return None
    marker = m.group(2)
    return marker if marker in "-+*" else marker[-1]


def _window(old: Document, new: Document, edits: Sequence[Edit]) -> tuple[int, int]:
    """How many leading and trailing elements the validator may skip.

    When ``new`` was re-parsed from ``old`` (``reused_elements``), its first
    ``prefix`` elements are ``old``'s and its last ``suffix`` are ``old``'s shifted
    by the length delta. If every edit lies between the two runs, the full
    validator provably passes on them: each is untouched, maps to its own copy
    (nothing else starts at its mapped offset: the prefix ends before the first
    edit, the suffix starts after the last), keeps its parent, and its list
    container maps to its own copy. Both runs end / start at a top-level heading,
    where list containers restart, so the containers of the middle window are
    those of the whole document, and old and new window ids (offsets between the
    runs) never collide with the runs' ids. ``(0, 0)`` (validate everything)
    whenever one of these conditions cannot be confirmed.
    """
    prefix, suffix = reused_elements(old, new)
    if not prefix and not suffix:
        return 0, 0
    n_old, n_new = len(old.elements), len(new.elements)
    if prefix + suffix > min(n_old, n_new):
        return 0, 0
    heading = ElementKind.HEADING
    if prefix:
        if prefix >= n_old or prefix >= n_new:
            return 0, 0
        a_old, a_new = old.elements[prefix], new.elements[prefix]
        if a_old.kind is not heading or a_new.kind is not heading or a_old.start != a_new.start:
            return 0, 0
        if a_old.start > edits[0].start:
            return 0, 0
    if suffix:
        b_old, b_new = old.elements[n_old - suffix], new.elements[n_new - suffix]
        if b_old.kind is not heading or b_new.kind is not heading:
            return 0, 0
        if b_old.start + len(new.text) - len(old.text) != b_new.start or b_old.start < max(e.end for e in edits):
            return 0, 0
    for edit in edits:  # the container checks look structured targets up in the window only
        if edit.structured and edit.target is not None:
            k = old.index_of(edit.target.pointer)
            if k is None or k < prefix or k >= n_old - suffix:
                return 0, 0
    return prefix, suffix


def validate_structure(old: Document, new: Document, edits: Sequence[Edit]) -> None:
    """Refuse a result whose untouched elements changed or whose new blocks leak (§5.4).

    Only the elements between the runs a re-parse reused (``_window``) are
    compared; the outcome and message equal those of a full comparison.
    """
    prefix, suffix = _window(old, new, edits)
    old_window = old.elements[prefix : len(old.elements) - suffix]
    new_window = new.elements[prefix : len(new.elements) - suffix]
    mapper = _Mapper(edits)
    by_start: dict[tuple[int, ElementKind], Element] = {(e.start, e.kind): e for e in new_window}
    matched: set[str] = set()
    survivors: dict[str, str] = {}  # old pointer -> new pointer
    for e in old_window:
        touched = None
        for s, t in e.segments or ((e.start, e.end),):
            touched = mapper.touching(s, t)
            if touched is not None:
                break
        if touched is not None:
            continue
        twin = by_start.get((mapper.map(e.start), e.kind))
        if twin is None or twin.text != e.text:
            edit = mapper.nearest(e.start)
            raise _unsupported(edit.pointer, f"the edit would change the untouched {_kind_name(e.kind)} '{e.pointer}'")
        if e.kind is ElementKind.LIST_ITEM:
            old_parent = old.get(e.parent) if e.parent else None
            new_parent = new.get(twin.parent) if twin.parent else None
            same = (old_parent is None and new_parent is None) or (
                old_parent is not None and new_parent is not None and mapper.map(old_parent.start) == new_parent.start
            )
            if not same or _depth(twin) != _depth(e):
                edit = mapper.nearest(e.start)
                raise _unsupported(edit.pointer, f"the edit would move the untouched list item '{e.pointer}'")
        matched.add(twin.pointer)
        survivors[e.pointer] = twin.pointer
    # New elements must stay inside the inserted text.
    roots: dict[int, list[Element]] = {}
    for e in new_window:
        if e.pointer in matched:
            continue
        first = e.segments[0][0] if e.segments else e.start
        k = mapper.edit_at_new(first)
        if k is None:
            raise _unsupported(mapper.nearest(first).pointer, "the edit would absorb untouched text into a new block")
        _a, b = mapper.new_range(k)
        stop = (e.segments[0][1] if e.segments else e.end) if e.kind is ElementKind.LIST_ITEM else e.end
        while stop > first and new.text[stop - 1] in " \t\r\n":
            stop -= 1
        if stop > b:
            raise _unsupported(mapper.edits[k].pointer, "the edit would absorb untouched text into a new block")
        roots.setdefault(k, []).append(e)
    old_c = _containers(old.text, old_window)
    new_c = _containers(new.text, new_window)
    _check_structured(old, new, mapper, roots, survivors, old_c, new_c)
    _check_raw_blocks(old, new, mapper)


# Top-level blocks that are not elements but must survive edits unchanged (§4.2, §5.4).
_RAW_KINDS = {"html_block": "HTML block", "hr": "thematic break"}


def _raw_blocks(doc: Document) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of the top-level HTML blocks and thematic breaks, trailing blanks trimmed."""
    state = doc._state
    if not isinstance(state, BlockState):  # pragma: no cover - every parse keeps its block state
        return []
    text, lines = doc.text, doc.lines
    out = []
    for l0, rec in zip(state.l0, state.recs, strict=True):
        if rec.kind not in _RAW_KINDS:
            continue
        last = l0 + max(rec.n, 1) - 1
        while last > l0 and not text[lines.start_of(last) : lines.ends[last]].strip():
            last -= 1
        out.append((lines.start_of(l0), lines.ends[last], rec.kind))
    return out


def _check_raw_blocks(old: Document, new: Document, mapper: _Mapper) -> None:
    """An untouched HTML block or thematic break must reappear as itself at its mapped place.

    Elements are checked above; this catches a new block that swallows raw source,
    e.g. an inserted ``<!-- unclosed`` comment running on into an existing comment.
    """
    kept = set(_raw_blocks(new))
    for start, end, kind in _raw_blocks(old):
        if mapper.touching(start, end) is not None:
            continue
        at = mapper.map(start)
        if (at, at + end - start, kind) not in kept or new.text[at : at + end - start] != old.text[start:end]:
            line = old.lines.line_of(start) + 1
            raise _unsupported(
                mapper.nearest(start).pointer, f"the edit would change the untouched {_RAW_KINDS[kind]} at line {line}"
            )


def _check_structured(
    old: Document,
    new: Document,
    mapper: _Mapper,
    created: dict[int, list[Element]],
    survivors: dict[str, str],
    old_c: dict[str, int],
    new_c: dict[str, int],
) -> None:
    allowed: dict[str, int] = {}  # new root item -> new container it may join
    for k, edit in enumerate(mapper.edits):
        target = edit.target
        if not edit.structured or target is None:
            continue
        items = created.get(k, [])
        if target.kind is ElementKind.BLOCK_QUOTE:
            if len(items) != 1 or items[0].kind is not ElementKind.BLOCK_QUOTE:
                raise _unsupported(edit.pointer, "the replacement must remain exactly one block quote")
            continue
        new_ids = {e.pointer for e in items}
        depth = _depth(target)
        if any(e.kind is not ElementKind.LIST_ITEM for e in items):
            raise _unsupported(edit.pointer, "the fragment would create a block outside the new list item")
        tops = [e for e in items if e.parent is None or e.parent not in new_ids]
        if len(tops) != 1:
            raise _unsupported(edit.pointer, "the fragment must become exactly one list item at the target's depth")
        root = tops[0]
        if _depth(root) != depth or _item_marker(new, root) != _item_marker(old, target):
            raise _unsupported(edit.pointer, "the new item has a different depth, indent or marker style")
        old_parent = old.get(target.parent) if target.parent else None
        new_parent = new.get(root.parent) if root.parent else None
        if (old_parent is None) != (new_parent is None) or (
            old_parent is not None and new_parent is not None and mapper.map(old_parent.start) != new_parent.start
        ):
            raise _unsupported(edit.pointer, "the new item would get a different parent")
        a, b = mapper.new_range(k)
        inserted = new.text[a:b]
        offset = root.start - a
        if inserted[: max(offset, 0)].strip() or inserted[root.end - a :].strip():
            raise _unsupported(edit.pointer, "the fragment leaves text outside the new list item")
        # The container the new item must share: the target's (through any surviving sibling).
        mates = [survivors[p] for p, c in old_c.items() if c == old_c[target.pointer] and p in survivors]
        if mates:
            allowed[root.pointer] = new_c[mates[0]]
    # Containers map one to one: no split, no merge, no new item joining an old list.
    image: dict[int, int] = {}
    reverse: dict[int, int] = {}
    for p_old, p_new in survivors.items():
        if p_old not in old_c:
            continue
        a, b = old_c[p_old], new_c[p_new]
        if image.setdefault(a, b) != b or reverse.setdefault(b, a) != a:
            item = old.get(p_old)
            raise _unsupported(
                mapper.nearest(item.start if item else 0).pointer,
                f"the edit would split or merge the list holding '{p_old}'",
            )
    kept = set(survivors.values())
    for p_new, c in new_c.items():
        if p_new in kept or c not in reverse:
            continue
        if allowed.get(p_new) == c:
            continue
        element = new.get(p_new)
        if element is not None and element.parent is not None and element.parent not in kept:
            continue  # nested inside a new item
        raise _unsupported(
            mapper.nearest(0).pointer if element is None else _edit_for_new(mapper, element.start),
            "the new list item would join an existing list",
        )


def _edit_for_new(mapper: _Mapper, pos: int) -> str:
    k = mapper.edit_at_new(pos)
    return mapper.edits[k].pointer if k is not None else mapper.edits[0].pointer


# -- entry points ---------------------------------------------------------------------


def patch_text(doc: Document, path: str, operations: Sequence[PatchOperation]) -> tuple[str, Document]:
    """Plan, apply and validate; return the new text and its parsed document."""
    edits = plan_edits(doc, path, operations)
    text = apply_edits(doc.text, edits)
    # Only the region around the edits is re-parsed; the result lands in the
    # parse cache, so the re-read that usually follows a patch is free.
    text.encode("utf-8")  # the text must be writable as UTF-8 (as before)
    new = parse_edited(doc, text, edits[0].start, max(e.end for e in edits))
    if doc.text:
        validate_structure(doc, new, edits)
    return text, new


def plan_patch(doc: Document, path: str, operations: Sequence[PatchOperation]) -> str:
    """The document text after ``operations`` (BOM not included; EOLs preserved)."""
    return patch_text(doc, path, operations)[0]
