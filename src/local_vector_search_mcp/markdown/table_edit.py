"""kb_edit_table planning (contract §6): one action on one GFM table, pure.

Cell updates splice only the trimmed content span of a cell; row inserts and
deletes add or remove whole lines; column actions rebuild every line of the
table keeping each line's own indentation, pipe style and line break. The
result is re-parsed and must still be the expected table (columns, rows,
names, alignments and the display text of plain-text values); otherwise
nothing is written. A no-op returns the text unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields

from local_vector_search_mcp.errors import Conflict, ConflictReason, InvalidArgument

from .document import parse_text
from .kinds import ElementKind
from .model import Document, Element
from .tables import TableRow, TableSource, cell_display_text, renders_alike, table_source

__all__ = ["CellUpdate", "RowMatch", "TableEdit", "edit_table", "escape_cell_text"]

ACTIONS = (
    "update_cells",
    "insert_row",
    "delete_row",
    "insert_column",
    "delete_column",
    "rename_column",
    "set_alignment",
)
_ALIGNMENTS = ("none", "left", "center", "right")
_ESCAPED = set("\\|*_`[]!~#")


@dataclass(frozen=True, slots=True)
class RowMatch:
    equals: str
    column: str | None = None
    column_index: int | None = None


@dataclass(frozen=True, slots=True)
class CellUpdate:
    value: str
    row_index: int | None = None
    where: RowMatch | None = None
    column: str | None = None
    column_index: int | None = None
    value_format: str = "text"


@dataclass(frozen=True, slots=True)
class TableEdit:
    """The flat kb_edit_table arguments (snake_case); ``None`` means absent."""

    action: str
    updates: list[CellUpdate] | None = None
    row_index: int | None = None
    where: RowMatch | None = None
    column: str | None = None
    column_index: int | None = None
    values: list[str] | None = None
    values_by_column: dict[str, str] | None = None
    before_row_index: int | None = None
    before_column: str | None = None
    before_column_index: int | None = None
    name: str | None = None
    new_name: str | None = None
    default_value: str | None = None
    alignment: str | None = None
    value_format: str | None = None  # insert_row: how ``values`` / ``values_by_column`` are written


_WIRE = {
    "updates": "updates",
    "row_index": "rowIndex",
    "where": "where",
    "column": "column",
    "column_index": "columnIndex",
    "values": "values",
    "values_by_column": "valuesByColumn",
    "before_row_index": "beforeRowIndex",
    "before_column": "beforeColumn",
    "before_column_index": "beforeColumnIndex",
    "name": "name",
    "new_name": "newName",
    "default_value": "defaultValue",
    "alignment": "alignment",
    "value_format": "valueFormat",
}
_ALLOWED = {
    "update_cells": {"updates"},
    "insert_row": {"values", "values_by_column", "before_row_index", "value_format"},
    "delete_row": {"row_index", "where"},
    "insert_column": {"name", "default_value", "alignment", "before_column", "before_column_index"},
    "delete_column": {"column", "column_index"},
    "rename_column": {"column", "column_index", "new_name"},
    "set_alignment": {"column", "column_index", "alignment"},
}


# -- values ----------------------------------------------------------------------------


def _check_line(value: str, what: str) -> None:
    for ch in value:
        code = ord(ch)
        if code < 0x20 or code == 0x7F or 0x80 <= code <= 0x9F:
            raise InvalidArgument(
                f"{what} contains a line break or control character (U+{code:04X}); a cell must be one line of text."
            )


def escape_cell_text(value: str) -> str:
    """Plain text → cell Markdown that displays literally (§6)."""
    out: list[str] = []
    for ch in value:
        if ch == "&":
            out.append("&amp;")
        elif ch == "<":
            out.append("&lt;")
        elif ch == ">":
            out.append("&gt;")
        elif ch in _ESCAPED:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _format(value: str, value_format: str, what: str) -> str:
    _check_line(value, what)
    if value_format == "markdown":
        escaped = False
        for ch in value:
            if ch == "|" and not escaped:
                raise InvalidArgument(f"{what} contains an unescaped '|'; write '\\|' or use valueFormat text.")
            escaped = ch == "\\" and not escaped
        return value.strip()
    if value_format != "text":
        raise InvalidArgument(f"valueFormat must be 'text' or 'markdown', not {value_format!r}.")
    return escape_cell_text(value.strip())


# -- the table as a grid -------------------------------------------------------------------


@dataclass(slots=True)
class _Grid:
    source: TableSource
    names: list[str]
    alignments: list[str]
    rows: list[list[str]]  # display text, padded to the column count

    @property
    def width(self) -> int:
        return len(self.names)


def _grid(source: TableSource) -> _Grid:
    width = source.column_count
    names = [cell_display_text(c.raw) for c in source.header.cells]
    aligns = list(source.alignments[:width]) + ["none"] * max(0, width - len(source.alignments))
    rows = []
    for row in source.rows:
        cells = [cell_display_text(c.raw) for c in row.cells[:width]]
        rows.append(cells + [""] * (width - len(cells)))
    return _Grid(source, names, aligns, rows)


def _column(grid: _Grid, name: str | None, index: int | None, what: str = "column", *, by_index: bool = True) -> int:
    if (name is None) == (index is None):
        raise InvalidArgument(f"Give exactly one of {what} (name) and {what}Index.")
    if index is not None:
        if not 0 <= index < grid.width:
            raise InvalidArgument(f"{what}Index {index} is out of range; the table has {grid.width} column(s).")
        return index
    hits = [i for i, n in enumerate(grid.names) if n == name]
    if not hits:
        raise InvalidArgument(
            f"No column is named {name!r}; names match exactly (case-sensitive display text). The columns "
            f"are {_names(grid.names)}{f'; or select one by {what}Index' if by_index else ''}."
        )
    if len(hits) > 1:
        raise Conflict(
            f"{len(hits)} columns are named {name!r}; select the column by {what}Index.",
            ConflictReason.AMBIGUOUS_SELECTOR,
        )
    return hits[0]


def _row(grid: _Grid, index: int | None, where: RowMatch | None) -> int:
    if (index is None) == (where is None):
        raise InvalidArgument("Give exactly one of rowIndex and where.")
    if index is not None:
        if not 0 <= index < len(grid.rows):
            raise InvalidArgument(f"rowIndex {index} is out of range; the table has {len(grid.rows)} data row(s).")
        return index
    assert where is not None
    col = _column(grid, where.column, where.column_index)
    hits = [i for i, cells in enumerate(grid.rows) if cells[col] == where.equals]
    if not hits:
        raise InvalidArgument(
            f"No row has {where.equals!r} in column {grid.names[col]!r} (where.equals matches a cell's whole "
            "display text, case-sensitive); kb_read from the table's anchor lists its rows."
        )
    if len(hits) > 1:
        raise Conflict(
            f"{len(hits)} rows have {where.equals!r} in column {grid.names[col]!r}; select the row by rowIndex.",
            ConflictReason.AMBIGUOUS_SELECTOR,
        )
    return hits[0]


# -- rendering -------------------------------------------------------------------------------


def _indent(text: str, row: TableRow) -> str:
    k = row.start
    while k < row.end and text[k] in " \t":
        k += 1
    return text[row.start : k]


def _render(cells: list[str], leading: bool, trailing: bool, indent: str = "") -> str:
    """``| a | b |`` in the line's own pipe style; pipes are added where a cell would vanish without them."""
    if len(cells) == 1:
        leading = trailing = True  # a one-column table needs its pipes
    if cells and (not cells[0] or _opens_block(cells[0])):
        leading = True
    if cells and not cells[-1]:
        trailing = True
    body = " | ".join(cells)
    return indent + ("| " if leading else "") + body + (" |" if trailing else "")


def _delimiter(alignment: str, dashes: int = 3) -> str:
    n = max(3, dashes)
    return {"left": ":" + "-" * n, "right": "-" * n + ":", "center": ":" + "-" * n + ":"}.get(alignment, "-" * n)


# What a line may not start with without a leading pipe: a list marker, a quote, an ATX heading, a
# fence or HTML would start another block and end (or never start) the table (decision 408).
_BLOCK_START = re.compile(r"(?:[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|>|#{1,6}(?:[ \t]|$)|```|~~~|<)")


def _opens_block(first_cell: str) -> bool:
    return _BLOCK_START.match(first_cell) is not None


def _needs_render(row: TableRow, col: int, content: str) -> bool:
    """Whether writing ``content`` into cell ``col`` in place would break the row, so it is re-rendered.

    Emptying an outer cell with no pipe on its outer side drops it (``1 | 2`` -> `` | 2`` is one cell,
    decision 407); a first cell that opens a block (``- x | 2``) needs the leading pipe (decision 408).
    """
    if col == 0 and not row.leading_pipe and (not content or _opens_block(content)):
        return True
    return not content and col == len(row.cells) - 1 and not row.trailing_pipe


def _kept(row: TableRow, col: int, content: str) -> str:
    """``content``, or the cell's own source when that shows the same: text values are escaped
    (`[` -> `\\[`), so a cell's display text written back would rewrite `[0, 29]` as `\\[0, 29\\]`,
    move the table's pointer and stale others' for nothing a reader sees (decision 1091)."""
    if col < len(row.cells) and renders_alike(row.cells[col].raw, content):
        return row.cells[col].raw
    return content


def _raw_cells(row: TableRow, width: int) -> list[str]:
    cells = [c.raw for c in row.cells[:width]]
    return cells + [""] * (width - len(cells))


# -- actions ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Splice:
    start: int
    end: int
    text: str


def _apply(text: str, splices: list[_Splice]) -> str:
    out, pos = [], 0
    for s in sorted(splices, key=lambda s: s.start):
        out.append(text[pos : s.start])
        out.append(s.text)
        pos = s.end
    out.append(text[pos:])
    return "".join(out)


def _takes(action: str) -> str:
    """The fields ``action`` takes, in the published names (decision 1119)."""
    taken = ", ".join(wire for name, wire in _WIRE.items() if name in _ALLOWED[action])
    extra = "; each update carries its own valueFormat" if action == "update_cells" else ""
    return f"{action} takes {taken}{extra}"


def _names(names: list[str], most: int = 12) -> str:
    """Column names as a refusal lists them (decision 1119): quoted, the first ``most``."""
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _check_fields(edit: TableEdit) -> None:
    if edit.action not in _ALLOWED:
        raise InvalidArgument(f"Unknown action {edit.action!r}; expected one of: {', '.join(ACTIONS)}.")
    allowed = _ALLOWED[edit.action]
    for f in fields(edit):
        if f.name == "action":
            continue
        if getattr(edit, f.name) is not None and f.name not in allowed:
            raise InvalidArgument(
                f"Field {_WIRE[f.name]} is not valid for action {edit.action}: omit it ({_takes(edit.action)})."
            )


def _table_eol(doc: Document, source: TableSource) -> str:
    for row in (source.header, source.delimiter, *source.rows):
        if row.eol:
            return row.eol
    return doc.eol


def edit_table(doc: Document, element: Element, edit: TableEdit) -> str:
    """The document text after ``edit`` on table ``element`` (unchanged text for a no-op)."""
    _check_fields(edit)
    if element.kind is not ElementKind.TABLE:
        raise InvalidArgument(f"'{element.pointer}' is not a table.")
    source = table_source(doc, element)
    if not source.editable:
        raise InvalidArgument(
            f"Table '{element.pointer}' has rows with more cells than its header (editable: false); kb_edit_table "
            "would lose them. Fix the table with kb_patch replace_element."
        )
    grid = _grid(source)
    text = doc.text
    expected = _Grid(source, list(grid.names), list(grid.alignments), [list(r) for r in grid.rows])
    unknown: set[tuple[int, int]] = set()  # cells whose display text is not predicted (markdown values)
    splices: list[_Splice] = []
    action = edit.action
    lines = [source.header, source.delimiter, *source.rows]

    def set_cell(row: TableRow, col: int, content: str) -> None:
        if col < len(row.cells) and row.cells[col].raw == content:
            return
        if col < len(row.cells) and not _needs_render(row, col, content):
            cell = row.cells[col]
            if cell.start == cell.end and content:
                # An empty cell: give the new content a space on each side of its pipes.
                a = cell.start
                while a > row.start and text[a - 1] in " \t":
                    a -= 1
                before = " " if a > row.start and text[a - 1] == "|" else ""
                after = " " if cell.end < row.end and text[cell.end] == "|" else ""
                splices.append(_Splice(a, cell.end, before + content + after))
            else:
                splices.append(_Splice(cell.start, cell.end, content))
        else:  # the row lacks this cell, or it needs an outer pipe: re-render the whole line
            cells = _raw_cells(row, grid.width)
            cells[col] = content
            rendered = _render(cells, row.leading_pipe, row.trailing_pipe, _indent(text, row))
            splices.append(_Splice(row.start, row.end, rendered))

    if action == "update_cells":
        if not edit.updates:
            raise InvalidArgument("updates must not be empty.")
        seen: dict[tuple[int, int], int] = {}
        per_row: dict[int, dict[int, str]] = {}
        for n, update in enumerate(edit.updates):
            r = _row(grid, update.row_index, update.where)
            c = _column(grid, update.column, update.column_index)
            if (r, c) in seen:
                raise InvalidArgument(f"Updates {seen[(r, c)] + 1} and {n + 1} both set row {r}, column {c}.")
            seen[(r, c)] = n
            content = _kept(source.rows[r], c, _format(update.value, update.value_format, f"updates[{n}].value"))
            per_row.setdefault(r, {})[c] = content
            if update.value_format == "text":
                expected.rows[r][c] = update.value.strip()
            else:
                unknown.add((r, c))
        for r, cells in per_row.items():
            row = source.rows[r]
            if any(c >= len(row.cells) or _needs_render(row, c, content) for c, content in cells.items()):
                raw = _raw_cells(row, grid.width)
                for c, content in cells.items():
                    raw[c] = content
                if raw != [c.raw for c in row.cells]:
                    rendered = _render(raw, row.leading_pipe, row.trailing_pipe, _indent(text, row))
                    splices.append(_Splice(row.start, row.end, rendered))
            else:
                for c, content in cells.items():
                    set_cell(row, c, content)
    elif action == "insert_row":
        if (edit.values is None) == (edit.values_by_column is None):
            raise InvalidArgument("Give exactly one of values and valuesByColumn.")
        if edit.values is not None:
            if len(edit.values) != grid.width:
                raise InvalidArgument(f"values has {len(edit.values)} cell(s); the table has {grid.width} column(s).")
            plain = list(edit.values)
        else:
            assert edit.values_by_column is not None
            plain = [""] * grid.width
            for name, value in edit.values_by_column.items():
                plain[_column(grid, name, None, by_index=False)] = value
        value_format = edit.value_format or "text"
        new_row = [_format(v, value_format, f"values[{k}]") for k, v in enumerate(plain)]
        at_row = len(source.rows) if edit.before_row_index is None else edit.before_row_index
        if value_format == "markdown":  # what Markdown displays is not predicted: the re-parse checks the shape
            unknown.update((at_row, c) for c in range(grid.width))
        style = source.rows[0] if source.rows else source.header
        line = _render(new_row, style.leading_pipe, style.trailing_pipe, _indent(text, style))
        eol = _table_eol(doc, source)
        if edit.before_row_index is not None:
            if not 0 <= edit.before_row_index < len(source.rows):
                bounds = f" (0..{len(source.rows) - 1})" if source.rows else ": the table has no data rows"
                raise InvalidArgument(
                    f"beforeRowIndex {edit.before_row_index} is out of range{bounds}; omit it to append a row."
                )
            at = source.rows[edit.before_row_index].start
            splices.append(_Splice(at, at, line + eol))
            expected.rows.insert(edit.before_row_index, [v.strip() for v in plain])
        else:
            last = lines[-1]
            splices.append(_Splice(last.end, last.end, eol + line))
            expected.rows.append([v.strip() for v in plain])
    elif action == "delete_row":
        r = _row(grid, edit.row_index, edit.where)
        row = source.rows[r]
        if row.eol:
            splices.append(_Splice(row.start, row.end + len(row.eol), ""))
        else:  # the last line of the file: take the break before it
            prev = lines[lines.index(row) - 1]
            splices.append(_Splice(prev.end, row.end, ""))
        del expected.rows[r]
    elif action == "rename_column":
        c = _column(grid, edit.column, edit.column_index)
        if edit.new_name is None or not edit.new_name.strip():
            raise InvalidArgument("rename_column requires a non-blank newName.")
        set_cell(source.header, c, _kept(source.header, c, _format(edit.new_name, "text", "newName")))
        expected.names[c] = edit.new_name.strip()
    elif action == "set_alignment":
        c = _column(grid, edit.column, edit.column_index)
        if edit.alignment not in _ALIGNMENTS:
            raise InvalidArgument(f"set_alignment requires alignment: one of {', '.join(_ALIGNMENTS)}.")
        delim = source.delimiter
        current = delim.cells[c].raw if c < len(delim.cells) else ""
        # the alignment it has already: a no-op writes nothing, as for a cell set to its value
        # (decision 77); rewritten, `:--` became `:---` and the table's pointer moved (decision 994)
        if grid.alignments[c] != edit.alignment:
            set_cell(delim, c, _delimiter(edit.alignment, current.count("-")))
        expected.alignments[c] = edit.alignment
    elif action == "insert_column":
        if edit.name is None or not edit.name.strip():
            raise InvalidArgument("insert_column requires a non-blank name.")
        if edit.before_column is not None and edit.before_column_index is not None:
            raise InvalidArgument("Give at most one of beforeColumn and beforeColumnIndex.")
        if edit.before_column is not None or edit.before_column_index is not None:
            at = _column(grid, edit.before_column, edit.before_column_index, "beforeColumn")
        else:
            at = grid.width
        alignment = edit.alignment or "none"
        if alignment not in _ALIGNMENTS:
            raise InvalidArgument(f"alignment must be one of {', '.join(_ALIGNMENTS)}.")
        default = edit.default_value or ""
        new_cells = [
            _format(edit.name, "text", "name"),
            _delimiter(alignment),
            *([_format(default, "text", "defaultValue")] * len(source.rows)),
        ]
        splices.extend(_rebuild(text, lines, grid.width, lambda cells, k: cells.insert(at, new_cells[k])))
        expected.names.insert(at, edit.name.strip())
        expected.alignments.insert(at, alignment)
        for row_cells in expected.rows:
            row_cells.insert(at, default.strip())
    elif action == "delete_column":
        c = _column(grid, edit.column, edit.column_index)
        if grid.width == 1:
            raise InvalidArgument("The table's last column cannot be deleted; delete the table with kb_patch delete.")
        splices.extend(_rebuild(text, lines, grid.width, lambda cells, k: cells.pop(c)))
        del expected.names[c]
        del expected.alignments[c]
        for row_cells in expected.rows:
            del row_cells[c]
    if not splices:
        return text
    new_text = _apply(text, splices)
    if new_text == text:
        return text
    _verify(new_text, doc, element, expected, unknown, action)
    return new_text


def _rebuild(text: str, lines: list[TableRow], width: int, change: Callable[[list[str], int], object]) -> list[_Splice]:
    """Re-render every line with ``change(cells, line_number)`` applied."""
    out: list[_Splice] = []
    rendered_cells: list[list[str]] = []
    for k, row in enumerate(lines):
        cells = _raw_cells(row, width)
        change(cells, k)
        rendered_cells.append(cells)
    for row, cells in zip(lines, rendered_cells, strict=True):
        out.append(_Splice(row.start, row.end, _render(cells, row.leading_pipe, row.trailing_pipe, _indent(text, row))))
    return out


def _verify(
    new_text: str, doc: Document, element: Element, expected: _Grid, unknown: set[tuple[int, int]], action: str
) -> None:
    """Re-parse: the table must still be there with the predicted shape and values."""
    new_doc = parse_text(new_text, bom=doc.bom)
    table = next((e for e in new_doc.elements if e.kind is ElementKind.TABLE and e.start == element.start), None)

    def broken(reason: str) -> InvalidArgument:
        return InvalidArgument(
            f"The {action} edit would break the table '{element.pointer}': {reason}; nothing was written."
        )

    if table is None:
        raise broken("it would no longer parse as a table")
    grid = _grid(table_source(new_doc, table))
    if grid.width != expected.width or len(grid.rows) != len(expected.rows):
        raise broken("its column or row count would differ")
    if grid.names != expected.names:
        raise broken("its header names would differ")
    if grid.alignments != expected.alignments:
        raise broken("its alignments would differ")
    for r, cells in enumerate(expected.rows):
        for c, value in enumerate(cells):
            if (r, c) not in unknown and grid.rows[r][c] != value:
                raise broken(f"row {r}, column {c} would display {grid.rows[r][c]!r} instead of {value!r}")
    # Everything outside the table must parse as before.
    after = new_doc.elements
    before = doc.elements
    if len(after) != len(before):
        raise broken("text around the table would change its meaning")
