"""Edit planning (contract §5.2): every operation becomes one source splice.

Anchors resolve against one revision (§3.4, §3.5) and fragments are
pre-validated (``fragments.py``) before any splice is planned; duplicates and
overlapping claims are refused. Nothing is ever re-serialised: every byte
outside the splices survives and replacement text takes the document's EOL.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import replace

from local_vector_search_mcp.errors import InvalidArgument

from .edits import (
    DELETE,
    DELETE_SECTION,
    INSERT_AFTER,
    INSERT_BEFORE,
    KINDS,
    NEWLINES,
    NO_MARKDOWN,
    REPLACE,
    REPLACE_ELEMENT,
    REPLACE_SECTION,
    REPLACE_SUBTREE,
    SUBTREE_KINDS,
    Edit,
    PatchOperation,
    normalize_eol,
    unsupported,
)
from .fragments import check_closed_fences, check_list_fragment, check_section, check_single_element
from .kinds import ElementKind
from .list_markers import item_marker
from .model import Document, Element
from .pointers import DOCUMENT, Anchor, parse_anchor
from .resolve import ChangedKey, MutationScope, resolve_for_mutation
from .source import detect_eol

__all__ = ["apply_edits", "plan_edits"]


def _scope(kind: str, target_kind: ElementKind | None) -> MutationScope:
    """Whether the operation's anchor must match the target's subtree or only itself."""
    if kind in SUBTREE_KINDS or (kind == DELETE and target_kind is ElementKind.LIST_ITEM):
        return MutationScope.SUBTREE
    return MutationScope.SELF


def _check_arguments(kind: str, anchor: Anchor, markdown: str | None) -> None:
    if kind not in KINDS:
        raise InvalidArgument(f"Unknown operation kind '{kind}'; expected one of: {', '.join(KINDS)}.")
    if kind in NO_MARKDOWN and markdown is not None:
        raise InvalidArgument(f"Operation '{kind}' at '{anchor.logical}' does not take markdown; omit it.")
    if kind not in NO_MARKDOWN and markdown is None:
        raise InvalidArgument(
            f"Operation '{kind}' at '{anchor.logical}' requires markdown (the new Markdown text); send it in the "
            "operation's `markdown`."
        )
    if kind in (INSERT_BEFORE, INSERT_AFTER) and markdown is not None and not markdown.strip(" \t\r\n"):
        # Decision 406: an insert of nothing would only add blank lines.
        raise InvalidArgument(f"The markdown for {kind} is empty or blank; there is nothing to insert.")
    target_kind = anchor.kind
    if anchor.is_document:
        return
    if kind in (REPLACE_SECTION, DELETE_SECTION) and target_kind is not ElementKind.HEADING:
        raise InvalidArgument(
            f"{kind} requires a heading pointer; '{anchor.logical}' is not a heading "
            "(section operations require a heading pointer)."
        )
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
    return text.rstrip(NEWLINES)


def _trim_start(text: str) -> str:
    return text.lstrip(NEWLINES)


def _separator(text_end: str, eol: str) -> str:
    """What makes ``text_end`` end with one blank line (nothing if it already does).

    Any line break counts, not only the document's: an LF file whose last line ends in a lone CR
    (read as a break, decision 55) already ends its line (decision 528)."""
    return eol * (2 - _trailing_breaks(text_end))


def _trailing_breaks(text: str, limit: int = 2) -> int:
    count, end = 0, len(text)
    while count < limit and end > 0 and text[end - 1] in NEWLINES:
        end -= 2 if text.endswith("\r\n", 0, end) else 1
        count += 1
    return count


def _document_edit(doc: Document, kind: str, markdown: str) -> Edit:
    text, eol, length = doc.text, doc.eol, len(doc.text)
    if not text:  # an empty file simply takes the content
        return Edit(0, 0, markdown, DOCUMENT, kind, 0, 0)
    if kind == INSERT_BEFORE:
        front_matter = doc.get("frontmatter")
        if front_matter is None:
            rest, insert_at, lead = text, 0, ""
        else:  # "before the document" means after its front matter
            insert_at = doc.break_after(front_matter.end)
            rest = text[insert_at:]
            lead = eol if insert_at > front_matter.end else eol + eol
        body = _trim_end(markdown)
        if not rest:  # only front matter: keep the file's final line break, if any
            separator = eol if front_matter is not None and insert_at > front_matter.end else ""
        elif rest.startswith(eol + eol):
            separator = ""
        elif rest.startswith(eol):
            separator = eol
        else:
            separator = eol + eol
        return Edit(insert_at, insert_at, lead + body + separator, DOCUMENT, kind, insert_at, insert_at)
    if kind == INSERT_AFTER:
        return Edit(length, length, _separator(text, eol) + _trim_start(markdown), DOCUMENT, kind, length, length)
    raise InvalidArgument(
        f"Operation '{kind}' is not supported for the document pointer; use insert_before or insert_after "
        "(or a concrete element's anchor)."
    )


def _list_edit(doc: Document, kind: str, target: Element, markdown: str) -> Edit:
    text, eol, pointer = doc.text, doc.eol, target.pointer
    if item_marker(doc, target) is None:
        raise unsupported(pointer, "unsupported list container (unknown marker style or indentation)")
    start, end = target.start, target.end
    if kind == REPLACE_ELEMENT:
        # Only the item's own text before its nested items is replaced.
        own_start, own_end = target.segments[0] if target.segments else (start, start)
        if own_start != start:
            raise unsupported(pointer, "the item has no own text before its nested items")
        while own_end > own_start and text[own_end - 1] in NEWLINES:
            own_end -= 1  # keep the blank line that separated the first nested item
        return Edit(own_start, own_end, _trim_end(markdown), pointer, kind, own_start, own_end, target, True)
    if kind == REPLACE_SUBTREE:
        return Edit(start, end, _trim_end(markdown), pointer, kind, start, end, target, True)
    after = doc.break_after(end)
    if kind == DELETE:
        stop = _loose_gap_after(doc, target, after)
        return Edit(start, stop, "", pointer, kind, start, stop, target)
    if kind == INSERT_BEFORE:
        return Edit(start, start, _trim_end(markdown) + eol, pointer, kind, start, start, target, True)
    if kind == INSERT_AFTER:
        fragment = _trim_end(markdown)
        # No line break after the item means it ends the file: the break goes first.
        new = fragment + eol if after > 0 and text[after - 1] in NEWLINES else eol + fragment
        return Edit(after, after, new, pointer, kind, after, after, target, True)
    raise InvalidArgument(
        f"{kind} requires a heading pointer; '{pointer}' is a list item (section operations require a heading pointer)."
    )


def _loose_gap_after(doc: Document, target: Element, after: int) -> int:
    """Where a list item's deletion stops: past its line break, and past the one blank line
    that separated it from its next sibling when that gap would otherwise double up or open
    under the parent's text (decision 493).

    In a loose list (`- a` blank `- b` blank `- c`), removing `- b` with its line break left
    two blank lines, and removing a parent's first child left a blank line between the
    parent's text and the next child: inside a parent item both change the parent's own text
    (the blank line joins its segment, §4.4), so the structural check refused a plain delete.
    """
    text = doc.text
    if after >= len(text) or not _blank(text[after : doc.line_end(after)]):
        return after
    gap_end = doc.break_after(doc.line_end(after))
    index = doc.elements.index(target)
    following = next((e for e in doc.elements[index + 1 :] if e.start >= after), None)
    if following is None or following.kind is not ElementKind.LIST_ITEM or following.start != gap_end:
        return after  # no item right after one blank line: leave the spacing alone
    if not _glued_before(doc, target.start):
        return gap_end  # a blank line above too: one of the two goes
    parent = doc.get(target.parent) if target.parent is not None else None
    if parent is not None and doc.children(parent)[0] is target and following.parent == target.parent:
        return gap_end  # the next child moves up under the parent's text, as the deleted one was
    return after


def _blank(line: str) -> bool:
    return not line.strip(" \t")


def _glued_before(doc: Document, start: int) -> bool:
    """Whether the line above ``start`` (a line start) holds text, with no blank line between."""
    text = doc.text
    if text.endswith("\r\n", 0, start):
        stop = start - 2
    elif start > 0 and text[start - 1] in NEWLINES:
        stop = start - 1
    else:
        return False
    return not _blank(text[doc.line_start(stop) : stop])


def _glued_after(doc: Document, end: int) -> bool:
    """Whether the line below the one ending at ``end`` holds text, with no blank line between."""
    after = doc.break_after(end)
    if after == end or after >= len(doc.text):
        return False
    return not _blank(doc.text[after : doc.line_end(after)])


def _block_edit(doc: Document, kind: str, target: Element, markdown: str) -> Edit:
    eol, pointer = doc.eol, target.pointer
    start, end = target.start, target.end
    quote = target.kind is ElementKind.BLOCK_QUOTE
    if kind == REPLACE_ELEMENT:
        return Edit(start, end, markdown, pointer, kind, start, end, target, quote)
    # Inserted blocks get one blank line on both sides (decision 405): a neighbour written
    # without one ("# Title\ntext") would otherwise run into the new block.
    if kind == INSERT_BEFORE:
        lead = eol if _glued_before(doc, start) else ""
        return Edit(start, start, lead + _trim_end(markdown) + eol + eol, pointer, kind, start, start, target)
    if kind == INSERT_AFTER:
        trail = eol if _glued_after(doc, end) else ""
        return Edit(end, end, eol + eol + _trim_start(markdown) + trail, pointer, kind, end, end, target)
    if kind == DELETE:
        stop = doc.break_after(end) if quote else end
        return Edit(start, stop, "", pointer, kind, start, stop, target)
    section_end = target.section_end if target.section_end is not None else end
    if kind == REPLACE_SECTION:
        body = markdown
        if section_end < len(doc.text):  # keep a blank line before the next section
            body += _separator(body, eol)
        return Edit(start, section_end, body, pointer, kind, start, section_end, target)
    if kind == DELETE_SECTION:
        return Edit(start, section_end, "", pointer, kind, start, section_end, target)
    raise InvalidArgument(f"Operation '{kind}' is not valid for '{pointer}'.")  # pragma: no cover - checked earlier


def _plan_one(doc: Document, kind: str, target: Element | None, markdown: str) -> Edit:
    if target is None:
        if kind in (INSERT_BEFORE, INSERT_AFTER) or not doc.text:
            check_closed_fences(kind, DOCUMENT, markdown)
        return _document_edit(doc, kind, markdown)
    if target.kind is ElementKind.LIST_ITEM:
        if kind in (REPLACE_ELEMENT, REPLACE_SUBTREE, INSERT_BEFORE, INSERT_AFTER):
            check_list_fragment(doc, target, markdown, kind)
        return _list_edit(doc, kind, target, markdown)
    if kind == REPLACE_ELEMENT:
        check_single_element(target, markdown)
    elif kind == REPLACE_SECTION:
        check_section(target, markdown)
    if kind not in NO_MARKDOWN:
        check_closed_fences(kind, target.pointer, markdown)
    return _block_edit(doc, kind, target, markdown)


def plan_edits(
    doc: Document,
    path: str,
    operations: Sequence[PatchOperation],
    changed: Collection[ChangedKey] = (),
) -> list[Edit]:
    """Resolve and plan every operation against ``doc``; sorted, overlap-free splices (``changed``:
    elements changed in place, never relocated to, :func:`resolve`)."""
    if not operations:
        raise InvalidArgument("At least one operation is required.")
    # Every anchor is resolved before any fragment is checked (§5.1 steps 3 and 4): a stale
    # anchor anywhere in the batch is the CONFLICT that sends the agent to re-read, and it must
    # not hide behind another operation's fragment refusal (decision 840).
    resolved: list[tuple[int, str, Element | None, str]] = []  # (operation index, kind, target, markdown)
    seen: dict[str, int] = {}  # target pointer -> operation index
    for op_index, op in enumerate(operations):
        kind = op.kind.lower()
        anchor = parse_anchor(op.pointer)
        _check_arguments(kind, anchor, op.markdown)
        if kind == REPLACE:
            kind = REPLACE_ELEMENT
        target = resolve_for_mutation(doc, anchor, path, _scope(kind, anchor.kind), changed)
        key = DOCUMENT if target is None else target.pointer
        if key in seen:
            raise InvalidArgument(
                f"Operations {seen[key] + 1} and {op_index + 1} both target '{key}' (conflict at pointer); "
                "combine them into one operation."
            )
        seen[key] = op_index
        resolved.append((op_index, kind, target, normalize_eol(op.markdown or "", doc.eol)))
    edits = [(op_index, _plan_one(doc, kind, target, markdown)) for op_index, kind, target, markdown in resolved]
    # At one offset an insertion after the element ending there goes first (decision 1067).
    edits.sort(key=lambda pair: (pair[1].claim_start, pair[1].claim_end, pair[1].kind != INSERT_AFTER))
    for (prev_index, prev), (next_index, nxt) in itertools.pairwise(edits):
        if (
            nxt.claim_start < prev.claim_end
            or (nxt.claim_start == prev.claim_start and not _inserted_between(prev, nxt))
            or _in_section(prev, nxt)
        ):
            raise InvalidArgument(
                f"Operations {min(prev_index, next_index) + 1} and {max(prev_index, next_index) + 1} overlap "
                f"('{prev.pointer}' and '{nxt.pointer}'); {_overlap_reason(prev, nxt)}. Split the patch."
            )
    return [edit for _, edit in edits]


def _inserted_between(prev: Edit, nxt: Edit) -> bool:
    """Whether ``prev`` only inserts after the element that ends where ``nxt``'s target starts.

    A list item's ``insert_after`` lands after its line break (§5.2), where the next item or
    block starts, so with any edit of that next element both claims start at one offset and
    were refused as an overlap, while the same pair on paragraphs (whose insertion point is
    before the line break) was accepted (decision 1067). Nothing is removed by ``prev`` and
    the order is the document's: what follows an element comes before what replaces, precedes
    or deletes the next one, so ``prev`` is spliced first. Two insertions after elements ending
    at one offset (a parent and its last nested item, the document's end and a last paragraph)
    stay refused: which goes first is not said.
    """
    return (
        prev.kind == INSERT_AFTER
        and prev.target is not None
        and prev.start == prev.end == nxt.claim_start
        and nxt.kind != INSERT_AFTER
        and nxt.target is not None
        and nxt.target.start == nxt.claim_start
    )


def _in_section(section: Edit, other: Edit) -> bool:
    """Whether ``other`` targets an element inside ``section``'s section (decision 668).

    Claims are half-open, so an insertion point exactly at the section's end (``insert_after`` on
    the last paragraph of a file without a final line break, or on a list item that runs straight
    into the next heading) did not count as inside, and the batch wrote the inserted text where the
    section had been. What the operation targets decides: the next heading, where the section
    ends, stays outside. Checking the next edit in start order is enough: once no claim starts
    inside an earlier one, only an insertion at the section's end can follow a section unseen.
    """
    if section.kind not in (REPLACE_SECTION, DELETE_SECTION) or other.target is None:
        return False
    return section.claim_start <= other.target.start < section.claim_end


def _overlap_reason(prev: Edit, nxt: Edit) -> str:
    """Why two claims collide, in the words of the operations involved (decision 841)."""
    if prev.kind in (REPLACE_SECTION, DELETE_SECTION):
        return "a section operation covers everything inside its section"
    if nxt.claim_start == prev.claim_start:
        return "both would change the text at the same place"
    if prev.target is not None and prev.target.kind is ElementKind.LIST_ITEM:
        return f"{prev.kind} on a list item covers its nested items"
    return "their source ranges overlap"


def seal_joins(text: str, edits: Sequence[Edit]) -> list[Edit]:
    """``edits`` widened so that splicing them never makes a CRLF that was not there.

    A lone CR left just before a piece that now starts with LF would make a CRLF of two breaks:
    the text keeps both breaks, but the file would count as CRLF from then on (§4.7) and every
    later edit would write CRLF into it (decision 528). The CR then takes the document's EOL, or,
    in a file whose lines end in CR, the LF becomes a CR. Only a join an edit made counts (a
    CRLF of the original is never touched).

    The changed character is taken into the edit next to it (its start moves back over the CR,
    or its end forward over the LF), so the splices still describe the new text exactly: the
    incremental re-parse and the validator's offset map read them (decision 920; before, the
    character was changed outside every edit, the map was one off after it, and a delete in a
    file of mixed CR and LF lines was refused as changing an untouched element).
    """
    out = list(edits)
    eol: str | None = None

    def piece(index: int) -> str:
        # Pieces alternate: original text before edit 0, edit 0's text, original text after it, ...
        # Only a piece's first and last characters are looked at: an original piece is sliced to
        # them, never copied whole (it may be most of a large file).
        k = index // 2
        if index % 2:
            return out[k].text
        lo, hi = (out[k - 1].end if k else 0), (out[k].start if k < len(out) else len(text))
        return text[lo:hi] if hi - lo <= 2 else text[lo] + text[hi - 1]

    prev: int | None = None  # index of the last non-empty piece
    for index in range(2 * len(out) + 1):
        current = piece(index)
        if not current:
            continue
        if (
            prev is not None
            and current.startswith("\n")
            and piece(prev).endswith("\r")
            and not (prev % 2 == 0 and index % 2 == 0 and _contiguous(out, prev, index))
        ):
            eol = eol or detect_eol(text)
            if eol == "\r":
                k = index // 2
                if index % 2:
                    out[k] = replace(out[k], text="\r" + out[k].text[1:])
                else:  # the LF opens original text: the edit before it takes it
                    out[k - 1] = replace(out[k - 1], end=out[k - 1].end + 1, text=out[k - 1].text + "\r")
            else:
                k = prev // 2
                if prev % 2:
                    out[k] = replace(out[k], text=out[k].text[:-1] + eol)
                else:  # the CR closes original text: the edit after it takes it
                    out[k] = replace(out[k], start=out[k].start - 1, text=eol + out[k].text)
        # An original piece that was a lone LF may now be empty; the edit before it ends the text.
        prev = index if piece(index) else index - 1
    return out


def _contiguous(edits: Sequence[Edit], prev: int, index: int) -> bool:
    """Whether original pieces ``prev`` and ``index`` meet in the original text (every edit
    between them removed nothing; they added nothing, or they would lie between)."""
    return all(edits[k].start == edits[k].end for k in range(prev // 2, index // 2))


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Splice sorted, non-overlapping edits (already through :func:`seal_joins`) into ``text``."""
    parts: list[str] = []
    pos = 0
    for edit in edits:
        parts += [text[pos : edit.start], edit.text]
        pos = edit.end
    parts.append(text[pos:])
    return "".join(parts)
