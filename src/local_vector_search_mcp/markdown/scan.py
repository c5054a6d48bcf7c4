"""Phase 1 of element building: one record per top-level block.

markdown-it's block tokens are turned into one :class:`BlockRecord` per
top-level block: the element events the block holds, in line numbers relative
to the block's first line. A record does not depend on where the block sits
nor on the section it lands in, so an incremental re-parse can reuse the
records of every block it does not re-parse, only shifted (``incremental.py``);
numbering and hashing happen in phase 2 (``assemble.py``).
"""

from __future__ import annotations

import re
import types
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .dispatch import dispatch_by_first_char, fast_line_tables, fast_normalize, lean_tables, one_pass_paragraphs
from .footnotes import FOOTNOTE, footnote_definitions
from .front_matter import front_matter_plugin
from .source import LineIndex

__all__ = [
    "CONTAINER_CLOSE",
    "CONTINUABLE",
    "LIST_OPEN",
    "NO_RESTART",
    "OP_CODE",
    "OP_FRONT_MATTER",
    "OP_HEADING",
    "OP_ITEM",
    "OP_PARAGRAPH",
    "OP_QUOTE",
    "OP_TABLE",
    "PARAGRAPH_FOOTNOTE",
    "PARSER_HEAD",
    "PARSER_REST",
    "BlockOp",
    "BlockRecord",
    "block_only",
    "is_blank",
    "scan_blocks",
    "trimmed_end",
]


class _Quiet:
    """A logger that drops debug records (see :func:`_quiet_rules`)."""

    def debug(self, *args: object, **kwargs: object) -> None:
        return None


_QUIET = _Quiet()


_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _escaped_split(string: str) -> list[str]:
    """markdown-it's ``table.escapedSplit`` (a table row's cells): without a backslash no
    pipe is escaped, so the cells are a plain split, in C instead of a loop per character
    (spec/decisions.md 253). With one, the same rule in two C passes: a pipe right after a
    backslash is escaped (whatever precedes that backslash) and loses the backslash. markdown-it's
    own loop grew each cell by string concatenation, quadratic in a cell's escaped pipes: one row
    of 2 MB of ``\\|`` took 100 s to index (decision 1005); a property test holds the two equal."""
    if "\\" not in string:
        return string.split("|")
    return [cell.replace("\\|", "|") for cell in _UNESCAPED_PIPE.split(string)]


# Module globals our copies of the block rules see instead of markdown-it's own.
_REPLACED_GLOBALS: dict[str, object] = {"LOGGER": _QUIET, "escapedSplit": _escaped_split}


def _quiet_rules(md: MarkdownIt) -> None:
    """Give this parser's block rules copies that log to :data:`_QUIET`.

    markdown-it's block rules call ``LOGGER.debug(...)`` each time they are tried,
    over a million calls in a cold index of a large tree, about a tenth of the
    tokenizing time. The copies share the rules' code and differ only in the
    module global ``LOGGER``, so they tokenize exactly as the originals do; only
    this module's parsers use them, markdown-it's own module state is untouched
    (spec/decisions.md 231).
    """
    ruler = md.block.ruler
    for rule in list(ruler.__rules__):
        fn = rule.fn
        scope = getattr(fn, "__globals__", None)
        if not isinstance(fn, types.FunctionType) or scope is None:
            continue
        replaced = {name: value for name, value in _REPLACED_GLOBALS.items() if name in scope}
        if not replaced:
            continue
        quiet = types.FunctionType(fn.__code__, {**scope, **replaced}, fn.__name__, fn.__defaults__, fn.__closure__)
        quiet.__kwdefaults__ = fn.__kwdefaults__
        ruler.at(rule.name, quiet, {"alt": list(rule.alt)})


# Token nesting markdown-it follows before it stops parsing a container's content (its
# default, 20, is ten list levels). Each level costs about two Python frames, so 100 (fifty
# list levels, a hundred quote levels) stays far below the interpreter's recursion limit
# (decision 435).
MAX_NESTING = 100


def block_only(md: MarkdownIt, *, footnotes: bool = False) -> MarkdownIt:
    # Spans and hashes need block structure only; the inline rules would double the cost.
    md.options["maxNesting"] = MAX_NESTING
    md.disable(["inline", "text_join"])
    _quiet_rules(md)
    if footnotes:  # the element model's parsers; the historical ones read definitions as before
        footnote_definitions(md)
    lean_tables(md)
    one_pass_paragraphs(md)
    fast_normalize(md)
    fast_line_tables(md)
    return dispatch_by_first_char(md)  # last: any later rule change would recompile the chains


# Front matter is only recognised at the very start of a document, so a region
# re-parsed from a later line uses the parser without the plugin.
PARSER_HEAD = block_only(MarkdownIt("commonmark").enable("table").use(front_matter_plugin), footnotes=True)
PARSER_REST = block_only(MarkdownIt("commonmark").enable("table"), footnotes=True)

LIST_OPEN = frozenset({"bullet_list_open", "ordered_list_open"})
_LIST_CLOSE = frozenset({"bullet_list_close", "ordered_list_close"})
CONTAINER_CLOSE = _LIST_CLOSE | {"list_item_close", "blockquote_close"}
# Top-level blocks that may continue across a blank line (historical rule).
CONTINUABLE = frozenset({"bullet_list_open", "ordered_list_open", "fence", "code_block", "html_block"})
# A re-parse may not restart right after these (nor end the re-parsed region with one).
NO_RESTART = CONTINUABLE | {"front_matter"}

# Element events of a block record. Every op is ``(code, first, end, arg, title)``:
# ``[first, end)`` are lines relative to the block's first line (``end`` trimmed of
# trailing blank lines) and the meaning of ``arg`` depends on the code:
OP_HEADING = 0  # arg: heading level; title: the heading's title
OP_PARAGRAPH = 1  # arg: 1 for a top-level paragraph (an element), 0 for a hidden one, 2 for a footnote's
# ``arg`` of the paragraph a top-level footnote definition is (``footnotes.py``): an element whose
# ordinal comes after those of the section's other paragraphs (``numbering.paragraph_pointers``).
PARAGRAPH_FOOTNOTE = 2
OP_CODE = 2  # arg: 1 for a top-level code block (an element), 0 for a hidden one
OP_TABLE = 3
OP_QUOTE = 4
OP_FRONT_MATTER = 5
OP_ITEM = 6  # arg: index of the parent item in the block (-1 for none); end -1 if never closed

BlockOp = tuple[int, int, int, int, str]


@dataclass(frozen=True, slots=True)
class BlockRecord:
    """One top-level block: its token type, its line count and its element events."""

    kind: str
    line_count: int
    has_table: bool
    ops: tuple[BlockOp, ...]


def is_blank(text: str, lines: LineIndex, line: int) -> bool:
    return not text[lines.starts[line] : lines.ends[line]].strip(" \t")


def trimmed_end(text: str, lines: LineIndex, first: int, end: int) -> int:
    """End line of ``[first, end)`` without trailing blank lines (at least one line)."""
    end = min(end, lines.count)
    if end <= first:
        return min(first + 1, lines.count)
    starts, ends = lines.starts, lines.ends
    while end - 1 > first and not text[starts[end - 1] : ends[end - 1]].strip(" \t"):
        end -= 1
    return end


def _skip_to(tokens: Sequence[Token], token_index: int, closing: str) -> int:
    # a paragraph or heading is its open, inline and close tokens (our parsers make no inline
    # children): the close is two tokens on, the loop below is for anything else
    if (
        token_index + 2 < len(tokens)
        and tokens[token_index + 2].type == closing
        and tokens[token_index + 1].type != closing
    ):
        return token_index + 2
    while token_index < len(tokens) and tokens[token_index].type != closing:
        token_index += 1
    return token_index


def _heading_title(token: Token, inline: Token | None, text: str, lines: LineIndex, first: int) -> str:
    if token.markup.startswith("#"):
        return (inline.content if inline is not None else "").strip()
    return text[lines.starts[first] : lines.ends[first]].strip()  # setext: the first line


def scan_blocks(tokens: Sequence[Token], text: str, lines: LineIndex, base: int) -> tuple[list[int], list[BlockRecord]]:
    """Block records of a token stream whose line 0 is document line ``base``.

    Returns the absolute first line of every top-level block and its record.
    """
    first_lines: list[int] = []
    records: list[BlockRecord] = []
    ops: list[BlockOp] = []
    item_ops: list[int] = []  # position in ``ops`` of the block's n-th visible list item
    block_first, block_kind, block_length, block_has_table = -1, "", 0, False
    # Open containers: (kind, first line, end line, item number or -1), absolute lines.
    frames: list[tuple[str, int, int, int]] = []
    open_quotes = 0

    def absolute(token: Token) -> tuple[int, int]:
        line_map = token.map
        if line_map is None:  # pragma: no cover - block tokens always carry a map
            return base, base + 1
        return line_map[0] + base, line_map[1] + base

    token_index, token_count = 0, len(tokens)
    while token_index < token_count:
        token = tokens[token_index]
        token_type = token.type
        depth = len(frames)
        if depth == 0 and token.nesting >= 0 and token.map is not None:
            if block_first >= 0:
                first_lines.append(block_first)
                records.append(BlockRecord(block_kind, block_length, block_has_table, tuple(ops)))
            ops = []
            item_ops = []
            block_first, block_kind = token.map[0] + base, token_type
            block_length, block_has_table = token.map[1] - token.map[0], False
        if block_first < 0:  # pragma: no cover - defensive: a stream opening inside a block
            block_first, block_kind, block_length, block_has_table = 0, "", 0, False
        if token_type == "heading_open":
            if depth == 0:
                first, end = absolute(token)
                end = trimmed_end(text, lines, first, end)
                level = int(token.tag[1:]) if token.tag[1:].isdigit() else 1
                inline = tokens[token_index + 1] if token_index + 1 < token_count else None
                title = _heading_title(token, inline, text, lines, first)
                ops.append((OP_HEADING, first - block_first, end - block_first, level, title))
            token_index = _skip_to(tokens, token_index, "heading_close")
        elif token_type == "paragraph_open":
            first, end = absolute(token)
            end = trimmed_end(text, lines, first, end)
            parent = frames[-1] if frames else None
            # §4.5 quirk: a paragraph that fills its quote exactly takes no ordinal.
            if not (parent is not None and parent[0] == "quote" and parent[1] == first and parent[2] == end):
                arg = 0 if frames else PARAGRAPH_FOOTNOTE if token.info == FOOTNOTE else 1
                ops.append((OP_PARAGRAPH, first - block_first, end - block_first, arg, ""))
            token_index = _skip_to(tokens, token_index, "paragraph_close")
        elif token_type == "fence" or token_type == "code_block":
            first, end = absolute(token)
            end = trimmed_end(text, lines, first, end)
            ops.append((OP_CODE, first - block_first, end - block_first, 0 if depth else 1, ""))
        elif token_type == "table_open":
            block_has_table = True
            if depth == 0:
                first, end = absolute(token)
                ops.append((OP_TABLE, first - block_first, trimmed_end(text, lines, first, end) - block_first, 0, ""))
            token_index = _skip_to(tokens, token_index, "table_close")
        elif token_type == "front_matter" and depth == 0:
            first, end = absolute(token)
            end = trimmed_end(text, lines, first, end)
            ops.append((OP_FRONT_MATTER, first - block_first, end - block_first, 0, ""))
        elif token_type == "blockquote_open":
            first, end = absolute(token)
            end = trimmed_end(text, lines, first, end)
            if depth == 0:
                ops.append((OP_QUOTE, first - block_first, end - block_first, 0, ""))
            frames.append(("quote", first, end, -1))
            open_quotes += 1
        elif token_type in LIST_OPEN:
            first, end = absolute(token)
            frames.append(("list", first, end, -1))
        elif token_type == "list_item_open":
            first, end = absolute(token)
            if open_quotes:  # everything inside a quote is opaque
                frames.append(("item", first, end, -1))
            else:
                parent_number = next((frame[3] for frame in reversed(frames) if frame[0] == "item"), -1)
                frames.append(("item", first, end, len(item_ops)))
                item_ops.append(len(ops))
                ops.append((OP_ITEM, first - block_first, -1, parent_number, ""))  # end set when it closes
        elif token_type in CONTAINER_CLOSE:
            frame = frames.pop() if frames else None
            if frame is not None and frame[0] == "quote":
                open_quotes -= 1
            elif frame is not None and frame[0] == "item" and frame[3] >= 0:
                op_position = item_ops[frame[3]]
                code, first_rel, _, parent_number, title = ops[op_position]
                end_rel = trimmed_end(text, lines, frame[1], frame[2]) - block_first
                ops[op_position] = (code, first_rel, end_rel, parent_number, title)
        token_index += 1
    if block_first >= 0:
        first_lines.append(block_first)
        records.append(BlockRecord(block_kind, block_length, block_has_table, tuple(ops)))
    return first_lines, records
