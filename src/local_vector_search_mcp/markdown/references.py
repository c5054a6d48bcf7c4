"""Link reference definitions under an edit (decision 990): untouched links keep their targets.

A definition (``[lbl]: target.md``) is not an element: the element comparison of
``validate.py`` never sees one, yet it decides where every ``[text][lbl]`` of the
document goes, and CommonMark takes the *first* definition of a label. So an
inserted ``[lbl]: other.md`` placed before an existing one sent an untouched
paragraph's link elsewhere. For every label whose resolution (destination and
title) differs after the edit:

* an untouched winning definition must stay the winner: an edit may not take a
  label over (a duplicate placed after it changes nothing and passes);
* a definition the edit itself replaced or deleted may be redefined by the
  edit's own text, but may not vanish, or hand the label to a later untouched
  duplicate, while untouched text still links through it;
* a new label may be defined freely: untouched ``[text][lbl]`` or ``[lbl]`` written before
  their definition become the links they were waiting to be.

Only edits whose old or new text holds ``]:`` can add, remove or reorder a
definition (every other change of untouched text is refused by the element
checks), so the block parses here run for those edits only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .edits import Edit, unsupported
from .links import LinkSource, document_link_source, links_through
from .model import Document

if TYPE_CHECKING:
    from .validate import OffsetMapper

__all__ = ["check_references"]

# Whether a span of a document (start, end offsets) lies outside everything the edits wrote.
Untouched = Callable[[int, int], bool]

_MARK = "]:"  # a definition's label is followed directly by its colon (CommonMark 4.7)
_WRITTEN_LABEL = re.compile(r"\[((?:[^\[\]\\\r\n]|\\.)+)\]:")


@dataclass(frozen=True, slots=True)
class _Definition:
    """Where a label's winning definition is and what it resolves to."""

    label: str  # as written, for messages (the reference map's key is upper-cased)
    target: tuple[str, str]  # destination and title
    start: int  # offset of its first line
    end: int  # end of its last line
    line: int  # 1-based


def check_references(old: Document, new: Document, mapper: OffsetMapper) -> None:
    """Refuse an edit that changes where an untouched reference link goes (module docstring)."""
    if not any(_may_define(old.text, edit) for edit in mapper.edits):
        return
    old_source, new_source = document_link_source(old), document_link_source(new)
    was, now = old_source.references, new_source.references
    # a label new to the document is always accepted: the links waiting for it (`[text][lbl]`,
    # `[^1]`, written before their definition, the order an agent writes in) are what adding it
    # is for (review of 990); in document order, so the first change is the one named
    for key in was:
        if _resolution(was[key]) != _resolution(now.get(key)):
            before = _definition(old, key, was[key])
            assert before is not None  # a label of the map has a resolution
            _check_label(old, mapper, old_source, key, before, _definition(new, key, now.get(key)))


def _resolution(ref: Any) -> tuple[str, str] | None:
    """Destination and title a reference map entry gives its label."""
    return (ref["href"], ref["title"]) if isinstance(ref, dict) else None


def _may_define(text: str, edit: Edit) -> bool:
    return _MARK in edit.text or text.find(_MARK, edit.start, edit.end) >= 0


def _definition(doc: Document, key: str, ref: Any) -> _Definition | None:
    target = _resolution(ref)
    if target is None:
        return None
    first, stop = ref["map"]
    lines = doc.lines
    start, end = lines.start_of(first), lines.ends[max(stop - 1, first)]
    written = _WRITTEN_LABEL.search(doc.text, start, end)
    label = written.group(1) if written else key.casefold()  # a label written over lines
    return _Definition(label, target, start, end, first + 1)


def _check_label(
    old: Document,
    mapper: OffsetMapper,
    old_source: LinkSource,
    key: str,
    before: _Definition,
    after: _Definition | None,
) -> None:
    """Refuse the change of label ``key``'s resolution unless the edit owns it and no untouched text sees it."""
    written_by = _edit_writing(mapper, after) if after is not None else None
    if mapper.touching(before.start, before.end) is None:
        blame = mapper.edits[written_by] if written_by is not None else mapper.nearest(before.start)
        raise unsupported(blame.pointer, _taken_over(before, after))
    if written_by is not None:
        return  # the edit replaced the definition it targeted with one of its own
    line = _untouched_use(old, old_source, key, _outside_old_edits(mapper))
    if line is not None:
        raise unsupported(mapper.nearest(before.start).pointer, _lost_definition(before, after, line))


def _edit_writing(mapper: OffsetMapper, definition: _Definition) -> int | None:
    """Index of the edit whose new text holds the definition's first line, if any."""
    for index in range(len(mapper.edits)):
        new_start, new_end = mapper.new_range(index)
        if new_start <= definition.start < new_end:
            return index
    return None


def _outside_old_edits(mapper: OffsetMapper) -> Untouched:
    return lambda start, end: mapper.touching(start, end) is None


def _untouched_use(doc: Document, source: LinkSource, key: str, untouched: Untouched) -> int | None:
    """1-based line of the first untouched inline run that links through ``key``, if any."""
    lines = doc.lines
    for first, stop, content, _cell in source.runs:
        if "[" not in content or not untouched(lines.start_of(first), lines.ends[max(stop - 1, first)]):
            continue
        if links_through(content, source.references, key):
            return first + 1
    return None


def _shown(definition: _Definition | None) -> str:
    if definition is None:
        return "no destination (plain text)"
    href, title = definition.target
    return f"'{href}'" + (f' "{title}"' if title else "")


def _taken_over(before: _Definition, after: _Definition | None) -> str:
    return (
        f"the edit would change where the untouched definition [{before.label}] at line {before.line} "
        f"sends its links, from {_shown(before)} to {_shown(after)} (the first definition of a label "
        "wins); nothing was changed: give the new definition a label of its own"
    )


def _lost_definition(before: _Definition, after: _Definition | None, line: int) -> str:
    return (
        f"the edit would remove the definition [{before.label}] ({_shown(before)}) that the untouched "
        f"link at line {line} uses: it would go to {_shown(after)}; nothing was changed: keep the "
        "definition in the new text or edit that link too"
    )
