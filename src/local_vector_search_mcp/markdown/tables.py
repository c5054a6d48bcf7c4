"""GFM table source map and structured projection (contract §4.6).

``table_source`` splits every physical line of a standalone table into cells
with exact content spans, which the table editor splices; ``table_projection``
is the read-only view returned by ``kb_read`` for an addressed table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .kinds import ElementKind
from .model import Document, Element

__all__ = [
    "ProjectedColumn",
    "ProjectedRow",
    "TableCell",
    "TableProjection",
    "TableRow",
    "TableSource",
    "cell_display_text",
    "renders_alike",
    "table_projection",
    "table_source",
]

# Cell display text needs inline parsing (entities, code spans, emphasis).
_MD_INLINE = MarkdownIt("commonmark")
# What CommonMark's inline rules (escapes, code, emphasis, links, images, autolinks, HTML, entities,
# line breaks) and its normalisation (CR, NUL) can act on; a cell without any of these parses to its
# own text (`~` kept for safety, strikethrough being off in this preset).
_INLINE_SYNTAX = re.compile(r"[\\`*_\[\]!<&~\r\n\x00]")


@dataclass(frozen=True, slots=True)
class TableCell:
    """``start``/``end``: the cell content in ``Document.text``, spaces trimmed."""

    start: int
    end: int
    raw: str


@dataclass(frozen=True, slots=True)
class TableRow:
    start: int  # line start
    end: int  # line end, break excluded
    eol: str  # the line break after this line ("" on the last line of the file)
    leading_pipe: bool
    trailing_pipe: bool
    cells: tuple[TableCell, ...]


@dataclass(frozen=True, slots=True)
class TableSource:
    header: TableRow
    delimiter: TableRow
    rows: tuple[TableRow, ...]
    alignments: tuple[str, ...]

    @property
    def column_count(self) -> int:
        return len(self.header.cells)

    @property
    def editable(self) -> bool:
        """False when a row has cells beyond the header's (they would be lost)."""
        return all(len(r.cells) <= self.column_count for r in self.rows)


def _split_row(text: str, start: int, end: int, eol: str) -> TableRow:
    pos, stop = start, end
    while pos < stop and text[pos] in " \t":
        pos += 1
    while stop > pos and text[stop - 1] in " \t":
        stop -= 1
    leading = pos < stop and text[pos] == "|"
    if leading:
        pos += 1
    trailing = stop > pos and text[stop - 1] == "|" and (stop - 2 < pos or text[stop - 2] != "\\")
    if trailing:
        stop -= 1
    bounds: list[tuple[int, int]] = []
    cell_start, escaped = pos, False
    # Same rule as markdown-it's escapedSplit: a pipe right after a backslash
    # is literal, everything else separates cells (code spans do not protect).
    for i in range(pos, stop):
        ch = text[i]
        if ch == "|" and not escaped:
            bounds.append((cell_start, i))
            cell_start = i + 1
        escaped = ch == "\\"
    bounds.append((cell_start, stop))
    cells = []
    for a, b in bounds:
        while a < b and text[a] in " \t":
            a += 1
        while b > a and text[b - 1] in " \t":
            b -= 1
        cells.append(TableCell(a, b, text[a:b]))
    return TableRow(start, end, eol, leading, trailing, tuple(cells))


def _alignment(cell: str) -> str:
    left, right = cell.startswith(":"), cell.endswith(":") and len(cell) > 1
    if left and right:
        return "center"
    if right:
        return "right"
    if left:
        return "left"
    return "none"


def table_source(doc: Document, element: Element) -> TableSource:
    """Cell map of a table element (requires ``element.kind == TABLE``)."""
    if element.kind is not ElementKind.TABLE:
        raise ValueError("table_source needs a table element")
    lines = doc.lines
    first, last = lines.line_of(element.start), lines.line_of(element.end)
    rows = []
    for n in range(first, last + 1):
        s, e = lines.starts[n], lines.ends[n]
        nxt = lines.start_of(n + 1)
        eol = doc.text[e:nxt] if n + 1 < lines.count else ""
        rows.append(_split_row(doc.text, s, e, eol))
    header, delimiter, body = rows[0], rows[1] if len(rows) > 1 else rows[0], rows[2:]
    return TableSource(header, delimiter, tuple(body), tuple(_alignment(c.raw) for c in delimiter.cells))


def _inline_text(tokens: list[Token] | None) -> str:
    out: list[str] = []
    for tok in tokens or []:
        if tok.type in ("text", "text_special", "code_inline"):
            out.append(tok.content)
        elif tok.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif tok.children:
            out.append(_inline_text(tok.children))
    return "".join(out)


def cell_display_text(raw: str) -> str:
    """Display text of a cell: inline markup removed, entities decoded, ``\\|`` → ``|``."""
    unescaped = raw.replace("\\|", "|")
    if _INLINE_SYNTAX.search(unescaped) is None:  # most cells: no parse (decision 704)
        return unescaped.strip()
    return _parsed_display_text(unescaped)


def renders_alike(raw: str, other: str) -> bool:
    """Whether two cell sources show the same: equal, or the same HTML when each is parsed alone as
    a cell is (``\\|`` read as ``|``), e.g. ``[0, 29]`` and ``\\[0, 29\\]`` (decision 1091)."""
    if raw == other:
        return True
    return _shown(raw) == _shown(other)


def _shown(cell: str) -> str:
    """A cell source's HTML, parsed alone as a cell is (``\\|`` read as ``|``)."""
    return str(_MD_INLINE.renderInline(cell.replace("\\|", "|"))).strip()


@lru_cache(maxsize=8192)
def _parsed_display_text(unescaped: str) -> str:
    """The display text of a cell with inline markup, by a parse of the cell alone: the same for the
    same text, so a table read and then edited (its projection, the edit's grid, the check of the
    result) parses each such cell once, not three times per call (decision 955)."""
    tokens = _MD_INLINE.parseInline(unescaped)
    return "".join(_inline_text(t.children) for t in tokens).strip()


@dataclass(frozen=True, slots=True)
class ProjectedColumn:
    index: int
    name: str
    alignment: str  # none | left | center | right


@dataclass(frozen=True, slots=True)
class ProjectedRow:
    index: int
    cells: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TableProjection:
    """The read-only view of an addressed table that ``kb_read`` returns."""

    columns: tuple[ProjectedColumn, ...]
    rows: tuple[ProjectedRow, ...]
    editable: bool

    @property
    def column_count(self) -> int:
        return len(self.columns)

    @property
    def row_count(self) -> int:
        return len(self.rows)


def table_projection(doc: Document, element: Element) -> TableProjection:
    """Header columns, data rows as display text (padded to the column count), editability."""
    source = table_source(doc, element)
    count = source.column_count
    columns = tuple(
        ProjectedColumn(
            index=i,
            name=cell_display_text(cell.raw),
            alignment=source.alignments[i] if i < len(source.alignments) else "none",
        )
        for i, cell in enumerate(source.header.cells)
    )
    rows = []
    for index, row in enumerate(source.rows):
        cells = [cell_display_text(c.raw) for c in row.cells[:count]]
        cells.extend("" for _ in range(count - len(cells)))
        rows.append(ProjectedRow(index=index, cells=tuple(cells)))
    return TableProjection(columns=columns, rows=tuple(rows), editable=source.editable)
