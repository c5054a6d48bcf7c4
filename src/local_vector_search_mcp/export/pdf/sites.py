"""A documentation site's own markup as its site shows it, for print (decision 1028).

Docusaurus, VitePress, MDX, Jekyll (Liquid, kramdown) and Hugo pages hold markup their site
generator consumes: CommonMark reads it as text, so a PDF printed ``:::tip``, ``import Tabs from
'@theme/Tabs';`` and ``{% include toc.html %}`` as lines of prose. Without the generator only the
markup whose effect is known is read:

* a ``:::type [title]`` ... ``:::`` container (markdown-it-container, remark-directive) becomes a
  quote, which the export draws as a GitHub alert or Obsidian callout of that type (1009), or as a
  plain box headed by its title when the type is no admonition;
* a MyST directive in a backtick or tilde fence (```` ```{note} ````) is read as its colon form: an
  admonition, a ``versionadded``/``versionchanged``/``deprecated`` note or a tab a box, a
  ``code-block`` a code block of its language without its options, a ``toctree`` left out (the PDF
  has its own contents); other directives stay code blocks (decision 1163);
* a MyST ``image`` or ``figure`` (either form) is a picture, the figure's caption a paragraph in
  italics under it; a ``list-table`` a table; an ``include`` of a Markdown file the text of that
  file, read by the caller (decision 1176);
* an HTML ``<details>`` block is a plain box headed by its ``<summary>`` (decision 1177);
* a MyST target line (``(label)=``) is left out; the heading after it takes the label as its id
  (``{#label}``), which links and ``{ref}`` roles reach;
* an MDX ``import``/``export`` statement at the top level is left out, as MDX compiles it away;
* a kramdown attribute list (``{: .note}``, ``{:toc}``) and a Liquid or Hugo tag standing alone
  on its lines (``{% include x.html %}``, ``{{< figure ... >}}``, ``{{% notice %}}``) are left out,
  and so is the body of a Liquid ``comment``, which the page never shows.

Inline tags and ``{{ variables }}`` stay as written: their value is the site's (decision 474).
Code blocks and the front matter are never read for any of it. Every rewrite is of whole lines,
so the text is parsed again as any other.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from ...markdown import Document, ElementKind
from ...markdown.links import document_link_source

__all__ = ["Include", "as_the_site_shows", "holds_site_markup", "included_part", "label_id"]

# Reads a MyST ``include``: the path as written and the directive's options, to the included text as
# the site shows it; None when it is not read (the caller has said why), and the directive stays code.
Include = Callable[[str, dict[str, str]], "str | None"]

# Any line that could hold such markup.
_MAYBE = re.compile(
    r"^[ \t>]*(?::::|\{[%:]|\{\{[<%]|(?:```|~~~)[`~]*[ \t]*\{|\([^()\n]+\)=[ \t]*$|<[Dd][Ee][Tt][Aa][Ii][Ll][Ss]\b)"
    r"|^(?:import|export)\b",
    re.MULTILINE,
)
_OPENER = re.compile(r"^([ \t]*)(:{3,})[ \t]*([A-Za-z][\w-]*|\{[A-Za-z][\w:-]*\})(.*)$")
# A MyST directive's options, the first lines of its body (``:sync: linux``, ``:open:``).
_OPTION = re.compile(r"^[ \t]*:[A-Za-z][\w-]*:(?:[ \t].*)?$")
_CLOSER = re.compile(r"^([ \t]*)(:{3,}|`{3,}|~{3,})[ \t]*$")
# A MyST directive in a code fence (```` ```{note} Title ````) and a fence of any kind; a target line
_FENCED = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*\{([A-Za-z][\w:-]*)\}(.*)$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_TARGET = re.compile(r"^[ \t]{0,3}\(([^()\n]*[^()\s])\)=[ \t]*$")
_ATX = re.compile(r"^([ \t]{0,3}#{1,6}[ \t]+.*?)(?:[ \t]+#+)?[ \t]*$")
# Fenced directives read as a box (beside the admonitions), as code of their language, or left out
_VERSIONS = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
_BOXED = {"admonition", "tab-item", "tab", "dropdown", "card", *_VERSIONS}
_CODE = {"code-block", "code", "sourcecode", "code-cell"}
_LEFT_OUT = {"toctree", "tableofcontents", "contents"}
# Directives rewritten as the Markdown that shows the same (decision 1176), in either form
_RENDERED = {"image", "figure", "figure-md", "list-table", "include"}
_OPTION_VALUE = re.compile(r"^[ \t]*:([A-Za-z][\w-]*):(?:[ \t]+(.*?))?[ \t]*$")
_LENGTH = re.compile(r"^\d+(?:\.\d+)?(?:px|%)?$")
_ROW = re.compile(r"^([*+-])(?:[ \t]+(.*)|[ \t]*)$")
_MARKDOWN_FILE = re.compile(r"\.(?:md|markdown)$", re.IGNORECASE)
# An HTML ``<details>`` block: its opening line, its summary and its closing line (decision 1177)
_DETAILS = re.compile(r"^([ \t]*)<details\b[^>]*>(.*)$", re.IGNORECASE)
_SUMMARY = re.compile(r"^\s*<summary\b[^>]*>(.*?)</summary\s*>(.*)$", re.IGNORECASE | re.DOTALL)
_END_DETAILS = re.compile(r"^[ \t]*</details\s*>[ \t]*$", re.IGNORECASE)
_HTML_TAG = re.compile(r"<[^<>]*>")
# How deep ``<details>`` blocks are read as boxes: each line of a box is written with a quote mark a
# level, so a page of thousands nested took seconds; deeper ones stay HTML, as before.
_DETAILS_DEPTH = 8
# A directive's label (``:::danger[Take care]``) and trailing attributes (``{open}``, ``{#id}``).
_LABEL = re.compile(r"^\[(.*)\]")
_ATTRIBUTES = re.compile(r"[ \t]*\{[^{}]*\}[ \t]*$")
# The admonition types of Docusaurus and VitePress as the callout type that draws them and the
# title a container without one is given; Docusaurus' ``caution`` is its amber ``warning``.
_ADMONITIONS = {
    **{kind: (kind, "") for kind in ("note", "info", "tip", "important", "warning", "danger")},
    "caution": ("warning", "Caution"),
}
# MyST's own admonitions (``:::{hint}``), as the callout that draws them and their default title.
_MYST_ADMONITIONS = {
    "hint": ("tip", "Hint"),
    "attention": ("warning", "Attention"),
    "error": ("danger", "Error"),
    "seealso": ("note", "See also"),
}
# VitePress' ``details`` is a plain box that opens on a click; a PDF shows its body.
_PLAIN_TITLES = {"details": "Details"}
# MyST containers that only group others (``::::{tab-set}`` around its ``:::{tab-item}``s): no box.
_MYST_GROUPS = {"tab-set", "grid", "card-carousel"}
# A line that is only tags: Liquid (``{% %}``, ``{%- -%}``), Hugo shortcodes (``{{< >}}``,
# ``{{% %}}``; not ``{{</* */>}}``, which shows the shortcode as text) or kramdown attribute lists.
# Each body stops at its own closing mark: ``.*?`` could run past it, and a line of many tags then
# tried every grouping of them (two more tags, four times the time).
_TAG = r"\{%(?:[^%]|%(?!\}))*%\}|\{\{<(?!/\*)(?:[^>]|>(?!\}\}))*>\}\}|\{\{%(?!/\*)(?:[^%]|%(?!\}\}))*%\}\}|\{:[^{}]*\}"
_TAG_LINE = re.compile(rf"^[ \t>]*(?:(?:{_TAG})[ \t]*)+$")
_TOC = re.compile(r"^[ \t]*\{:[ \t]*toc[ \t]*\}[ \t]*$")
_LIST_LINE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
# A tag opened on a line of its own and closed on a later one (opensearch-docs' ``{% include
# code-block.html`` with an argument a line); at most this many lines, none blank.
_TAG_START = re.compile(r"^[ \t>]*(?:\{%|\{\{<(?!/\*)|\{\{%(?!/\*))")
_TAG_LINES = 20
# A Liquid comment is never shown (a ``capture``'s body is, where its variable is used: left as
# written); ``raw`` shows its body as written.
_COMMENT = re.compile(r"^[ \t]*\{%-?[ \t]*comment[ \t]*-?%\}[ \t]*$")
_ENDCOMMENT = re.compile(r"^[ \t]*\{%-?[ \t]*endcomment[ \t]*-?%\}[ \t]*$")
_RAW = re.compile(r"^[ \t]*\{%-?[ \t]*raw[ \t]*-?%\}[ \t]*$")
_ENDRAW = re.compile(r"^[ \t]*\{%-?[ \t]*endraw[ \t]*-?%\}[ \t]*$")
# An MDX ESM statement: ``import X from 'm'``, ``import {a, b} from "m"``, ``import 'm'``, ``export
# const|default|function ...``; ``import the data from ...`` or ``export PATH=...`` are prose.
_ESM = re.compile(
    r"^(?:import[ \t]+(?:type[ \t]+)?(?:['\"]|(?:[\w$]+[ \t]*,?[ \t]*)?(?:\{[^}]*\}|\*[ \t]*as[ \t]+[\w$]+)?"
    r"[ \t]*from[ \t]*['\"])|export[ \t]+(?:default|const|let|var|function|async|class|type|interface)\b"
    r"|export[ \t]*[{*])"
)


@dataclass(frozen=True)
class _Box:
    """An open container: its fence's length and its indentation (in its parent's content)."""

    fence: int
    indent: str
    quoted: bool = True
    char: str = ":"
    """The fence's character: ``:``, or a backtick or tilde for a MyST directive in a code fence."""
    """False for a MyST group: its lines are not set in a box of its own (decision 1138)."""
    options: bool = False
    """A MyST directive whose option lines (``:key: value``) may still come: they are not shown."""


def holds_site_markup(text: str) -> bool:
    """Whether ``text`` may hold such markup: most pages hold none and are not read again."""
    return _MAYBE.search(text) is not None


def as_the_site_shows(doc: Document, include: Include | None = None) -> str:
    """``doc``'s text with its site generator's markup read as the site shows it (module docstring),
    ``doc.text`` itself when nothing changes; its line breaks must be LF. ``include`` reads a MyST
    ``include``'s file; without it the directive stays code."""
    text = doc.text
    if not holds_site_markup(text):
        return text
    lines = text.split("\n")
    code = _code_lines(doc)
    rewritten, openers = _fenced_directives(doc, lines, code, include)
    details = _details(lines, code)
    labels = _targets(lines, code)
    esm = _esm_lines(doc, lines)
    hidden = _hidden_lines(lines, code)
    out: list[str | None] = []
    boxes: list[_Box] = []
    raw = False
    for i, line in enumerate(lines):
        if i in rewritten:
            shown_line = rewritten[i]
            out.append(
                None if shown_line is None else "\n".join(_inside(boxes, part) for part in shown_line.split("\n"))
            )
            continue
        if i in details:
            out.append(_details_line(boxes, line, details[i]))
            continue
        if i in code:
            out.append(_inside(boxes, line))
            continue
        if i in labels:
            line = labels[i]
            if not line:
                out.append(None)
                continue
        if raw:
            raw = _ENDRAW.match(line) is None
            out.append(_inside(boxes, line) if raw else None)
            continue
        if i in hidden or (i in esm and not boxes):
            out.append(None)
        elif _RAW.match(line):
            raw = True
            out.append(None)
        elif _TAG_LINE.match(line):
            if _TOC.match(line):
                _drop_toc_list(out, lines, i)
            out.append(None)
        elif boxes and boxes[-1].options and _OPTION.match(_content(list(boxes), line)):
            out.append(None)
        else:
            if boxes and boxes[-1].options:
                boxes[-1] = _Box(boxes[-1].fence, boxes[-1].indent, boxes[-1].quoted, boxes[-1].char)
            out.append(_container_line(boxes, line, i in openers))
    shown = "\n".join(line for line in out if line is not None)
    return text if shown == text else shown


def _code_lines(doc: Document) -> set[int]:
    """The lines of ``doc``'s code blocks, nested ones too, and of its front matter."""
    lines = {n for first, end in document_link_source(doc).code for n in range(first, end)}
    front = next((e for e in doc.elements if e.kind is ElementKind.FRONT_MATTER), None)
    if front is not None:
        lines.update(range(doc.lines.line_of(front.end) + 1))
    return lines


def _fenced_directives(
    doc: Document, lines: list[str], code: set[int], include: Include | None = None
) -> tuple[dict[int, str | None], set[int]]:
    """MyST directives in code fences (decision 1163): the lines rewritten (None: left out), and
    the openers of those read as boxes, whose lines are taken out of ``code`` (changed in place)
    but for the code blocks inside them, which were text of the outer fence to the parser. The
    directives shown as other Markdown (1176) are read in their colon form too."""
    rewritten: dict[int, str | None] = {}
    openers: set[int] = set()
    for first, end in document_link_source(doc).code:
        if first in rewritten or first in openers:
            continue
        _directive(lines, first, end, code, rewritten, openers, include)
    i = 0
    while i < len(lines):
        opener = _OPENER.match(lines[i]) if i not in code and i not in rewritten and ":::" in lines[i] else None
        kind = opener.group(3).lower() if opener is not None else ""
        if opener is None or kind.strip("{}") not in _RENDERED or not kind.startswith("{"):
            i += 1
            continue
        indent, marker, _, rest = opener.groups()
        close = next(
            (n for n in range(i + 1, len(lines)) if re.fullmatch(f":{{{len(marker)},}}", lines[n].strip())), None
        )
        if close is None:
            i += 1
            continue
        shown = _rendered(kind.strip("{}"), rest, [_dedent(line, indent) for line in lines[i + 1 : close]], include)
        if shown is not None:
            _rewrite(rewritten, i, close + 1, indent, shown)
            code.difference_update(range(i, close + 1))
        i = close + 1
    return rewritten, openers


def _dedent(line: str, indent: str) -> str:
    return line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")


def _rewrite(rewritten: dict[int, str | None], first: int, end: int, indent: str, shown: list[str]) -> None:
    """Lines ``first`` to ``end`` (exclusive) shown as ``shown``, indented as the directive was; the
    last line blank, so that no text after the directive joins what it became."""
    rewritten.update(dict.fromkeys(range(first, end)))
    rewritten[first] = "\n".join(indent + line if line else "" for line in shown)
    if end - 1 > first:
        rewritten[end - 1] = ""


def _directive(
    lines: list[str],
    first: int,
    end: int,
    code: set[int],
    rewritten: dict[int, str | None],
    openers: set[int],
    include: Include | None = None,
) -> None:
    """The fenced directive whose fence spans lines ``first`` to ``end`` (exclusive), if it is one."""
    fenced = _FENCED.match(lines[first])
    if fenced is None:
        return
    indent, fence, kind, rest = fenced.groups()
    kind = kind.lower()
    if kind in _RENDERED:
        stop = end - 1 if end - 1 > first and _closes(lines[end - 1], fence) else end
        shown = _rendered(kind, rest, [_dedent(line, indent) for line in lines[first + 1 : stop]], include)
        if shown is not None:
            _rewrite(rewritten, first, end, indent, shown)
            code.difference_update(range(first, end))
    elif kind in _LEFT_OUT:
        rewritten.update(dict.fromkeys(range(first, end)))
    elif kind in _CODE:
        rewritten[first] = f"{indent}{fence}{rest.strip()}"
        n = first + 1
        while n < end and _OPTION.match(lines[n]):
            rewritten[n] = None
            n += 1
    elif kind in _BOXED or kind in _ADMONITIONS or kind in _MYST_ADMONITIONS or kind in _MYST_GROUPS:
        openers.add(first)
        code.difference_update(range(first, end))
        stop = end - 1 if end - 1 > first and _closes(lines[end - 1], fence) else end
        # the fences inside its body: code blocks, or directives in turn
        n = first + 1
        while n < stop:
            inner = _FENCE.match(lines[n])
            if inner is None:
                n += 1
                continue
            mark = inner.group(1)
            close = next((c for c in range(n + 1, stop) if _closes(lines[c], mark)), stop - 1)
            if _FENCED.match(lines[n]) is None:
                code.update(range(n, close + 1))
            else:
                _directive(lines, n, close + 1, code, rewritten, openers, include)
            n = close + 1


def _rendered(kind: str, argument: str, body: list[str], include: Include | None) -> list[str] | None:
    """The Markdown lines a directive that has one is shown as (decision 1176), None to keep it as
    written: ``image`` and ``figure`` a picture (a figure's caption under it in italics, its legend
    after), ``list-table`` an HTML table (which the export prints as a table; its cells hold
    Markdown), ``include`` the included text."""
    options, content = _options(body)
    argument = argument.strip()
    if kind in ("image", "figure"):
        picture = _picture(argument, options)
        if picture is None:
            return None
        if kind == "image" or not "".join(content).strip():
            return [picture, ""]
        while content and not content[0].strip():
            content = content[1:]
        blank = next((n for n, line in enumerate(content) if not line.strip()), len(content))
        caption = " ".join(line.strip() for line in content[:blank])
        return [picture, "", f"<em>{caption}</em>", "", *content[blank:], ""]
    if kind == "figure-md":
        return [*content, ""]
    if kind == "list-table":
        return _list_table(argument, options, content)
    if include is None or not argument or not _MARKDOWN_FILE.search(argument.strip("<>")):
        return None
    shown = include(argument.strip("<>"), options)
    return None if shown is None else [*shown.split("\n"), ""]


def _options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A MyST directive's options (``:key: value`` lines, or a YAML block between ``---`` lines) and
    the rest of its body."""
    options: dict[str, str] = {}
    n = 0
    if body and body[0].strip() == "---":
        end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), None)
        if end is not None:
            for line in body[1:end]:
                key, colon, value = line.partition(":")
                if colon:
                    options[key.strip().lower()] = value.strip().strip("\"'")
            n = end + 1
    while n < len(body):
        option = _OPTION_VALUE.match(body[n])
        if option is None:
            break
        options[option.group(1).lower()] = option.group(2) or ""
        n += 1
    return options, body[n:]


def _picture(path: str, options: dict[str, str]) -> str | None:
    """An ``image``'s path and options as a Markdown picture: its alt text, and its width and height
    (pixels or a share) as the kramdown attributes the export applies (decision 1142)."""
    if not path or any(c in path for c in "<>\n"):
        return None
    alt = re.sub(r"([\\\[\]])", r"\\\1", options.get("alt", ""))
    target = f"<{path}>" if re.search(r"[\s()]", path) else path
    sizes = [
        f'{name}="{options[name]}"' for name in ("width", "height") if _LENGTH.match(options.get(name, "").strip())
    ]
    return f"![{alt}]({target})" + (f"{{: {' '.join(sizes)}}}" if sizes else "")


def _list_table(title: str, options: dict[str, str], body: list[str]) -> list[str] | None:
    """A ``list-table``'s rows (top-level items) of cells (their items) as an HTML table, its first
    ``:header-rows:`` rows a header: the first as the table's header row, the others in bold."""
    rows: list[list[list[str]]] = []
    for line in body:
        row = _ROW.match(line)
        if row is not None:
            rows.append([])
            if not row.group(2):
                continue
            line = "  " + row.group(2)  # the row's first cell, as its later ones are indented
        elif not rows:
            if line.strip():
                return None  # text before the first row: not a list table
            continue
        if not line.strip():
            if rows[-1]:
                rows[-1][-1].append("")
            continue
        content = line[2:] if line.startswith("  ") else line.lstrip(" \t")
        cell = _ROW.match(content)
        if cell is not None:
            rows[-1].append([cell.group(2) or ""])
        elif rows[-1]:
            rows[-1][-1].append(content[2:] if content.startswith("  ") else content.strip())
        else:
            return None
    if not rows or not any(rows):
        return None
    try:
        header = max(0, int(options.get("header-rows", "0").strip() or 0))
    except ValueError:
        header = 0
    out = [f"**{title}**", ""] if title else []
    out.append("<table>")
    for n, items in enumerate(rows):
        cells = [_cell(cell) for cell in items]
        if n == 0 and header:
            out.append("<tr>" + "".join(f"<th>{cell}</th>" for cell in cells) + "</tr>")
        elif n < header:
            out.append(
                "<tr>"
                + "".join(f"<td><strong>{cell}</strong></td>" if cell else "<td></td>" for cell in cells)
                + "</tr>"
            )
        else:
            out.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    out += ["</table>", ""]
    return out


def _cell(lines: list[str]) -> str:
    """A list table's cell on one line: its paragraphs (and the items of a list in it) apart by a line
    break."""
    parts: list[list[str]] = [[]]
    for line in lines:
        if not line.strip() or (_ROW.match(line.strip()) and parts[-1]):
            if parts[-1]:
                parts.append([])
            if not line.strip():
                continue
        parts[-1].append(line.strip())
    return "<br>".join(" ".join(part) for part in parts if part)


def included_part(text: str, options: dict[str, str]) -> str:
    """The part of an included file that a MyST ``include``'s options choose: ``:start-line:`` and
    ``:end-line:`` (as a Python slice of its lines), then the text after the first ``:start-after:``
    and before the next ``:end-before:`` (docutils' order). A marker not found leaves the text whole
    on that side; other options (``:heading-offset:``, ``:relative-images:``) are not applied."""
    start_line, end_line = _line_number(options.get("start-line")), _line_number(options.get("end-line"))
    if start_line is not None or end_line is not None:
        text = "\n".join(text.split("\n")[start_line:end_line])
    after, before = options.get("start-after", ""), options.get("end-before", "")
    if after and after in text:
        text = text[text.index(after) + len(after) :]
    if before and before in text:
        text = text[: text.index(before)]
    return text.strip("\n")


def _line_number(value: str | None) -> int | None:
    try:
        return int(value) if value is not None and value.strip() else None
    except ValueError:
        return None


def _details(lines: list[str], code: set[int]) -> dict[int, tuple[str, str] | None]:
    """HTML ``<details>`` blocks (decision 1177): each opening line as ("open", its summary), the
    other lines up to the summary's end left out (None), each closing line as ("close", ""). Only
    blocks that close are read; the summary's tags are dropped."""
    found: dict[int, tuple[str, str] | None] = {}
    stack: list[tuple[int, dict[int, tuple[str, str] | None]]] = []
    deeper = 0
    for i, line in enumerate(lines):
        if i in code or "details" not in line.lower():
            continue
        opener = _DETAILS.match(line)
        if opener is not None and len(stack) >= _DETAILS_DEPTH:
            deeper += 1
        elif opener is not None:
            here: dict[int, tuple[str, str] | None] = {}
            rest, last = opener.group(2), i
            while not _SUMMARY.match(rest) and last + 1 < len(lines) and lines[last + 1].strip() and last - i < 10:
                last += 1
                rest += "\n" + lines[last]
            summary = _SUMMARY.match(rest)
            if summary is None or summary.group(2).strip():
                last, title = i, ""  # no summary, or text after it: the lines after the tag stay
                if opener.group(2).strip():
                    continue
            else:
                title = " ".join(html.unescape(_HTML_TAG.sub(" ", summary.group(1))).split())
            here[i] = ("open", title)
            here.update(dict.fromkeys(range(i + 1, last + 1)))
            stack.append((i, here))
        elif _END_DETAILS.match(line) and deeper:
            deeper -= 1
        elif _END_DETAILS.match(line) and stack:
            _, here = stack.pop()
            found.update(here)
            found[i] = ("close", "")
    return found


def _details_line(boxes: list[_Box], line: str, details: tuple[str, str] | None) -> str | None:
    """A line of a ``<details>`` block: its opening line starts a plain box headed by its summary
    (the browser's "Details" without one), its closing line ends it, the summary's lines go."""
    if details is None:
        return None
    if details[0] == "close":
        n = next((k for k in range(len(boxes) - 1, -1, -1) if boxes[k].char == "<"), None)
        if n is not None:
            del boxes[n:]
        return _inside(boxes, "")
    content = _content(boxes, line)
    boxes.append(_Box(0, content[: len(content) - len(content.lstrip(" \t"))], char="<"))
    prefix = _prefix(boxes)
    return "\n".join(prefix + part if part else prefix.rstrip() for part in _head("details", details[1]))


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` is a closing fence for an opening ``fence``: the same character, as long or
    longer, nothing after it."""
    closing = _FENCE.match(line)
    return (
        closing is not None
        and closing.group(1)[0] == fence[0]
        and len(closing.group(1)) >= len(fence)
        and not line.strip().strip(fence[0])
    )


def _targets(lines: list[str], code: set[int]) -> dict[int, str]:
    """MyST target lines (``(label)=``) as "" (left out), and the ATX heading after each (blank lines
    between them aside) with the label as its id: ``# Title {#label}`` (decision 1163)."""
    found: dict[int, str] = {}
    for i, line in enumerate(lines):
        target = _TARGET.match(line) if i not in code and line.rstrip().endswith(")=") else None
        if target is None:
            continue
        found[i] = ""
        n = i + 1
        while n < len(lines) and (not lines[n].strip() or _TARGET.match(lines[n])):
            n += 1
        heading = _ATX.match(lines[n]) if n < len(lines) and n not in code else None
        if heading is not None and n not in found and "{#" not in lines[n]:
            found[n] = f"{heading.group(1)} {{#{label_id(target.group(1))}}}"
    return found


def label_id(label: str) -> str:
    """A MyST label as a heading id: pip's labels hold spaces (``(vcs support)=``), which an id
    (``{#...}``) cannot; each run of them is written ``%20``."""
    return re.sub(r"\s+", "%20", label.strip())


def _esm_lines(doc: Document, lines: list[str]) -> set[int]:
    """The lines of each top-level paragraph that starts with an MDX ``import`` or ``export``: MDX
    reads the paragraph whole as JavaScript (an ``export const`` spans lines up to a blank)."""
    found: set[int] = set()
    for element in doc.elements:
        if element.kind is ElementKind.PARAGRAPH and element.text[:6] in ("import", "export"):
            first = doc.lines.line_of(element.start)
            if doc.lines.starts[first] == element.start and _ESM.match(lines[first]):
                found.update(range(first, doc.lines.line_of(element.end) + 1))
    return found


def _hidden_lines(lines: list[str], code: set[int]) -> set[int]:
    """The lines of each closed Liquid ``comment`` block, its tags included, and of each tag that
    stands alone on several lines."""
    hidden: set[int] = set()
    i = 0
    while i < len(lines):
        end = None if i in code else _block_end(lines, code, i)
        if end is not None:
            hidden.update(range(i, end + 1))
            i = end
        i += 1
    return hidden


def _block_end(lines: list[str], code: set[int], at: int) -> int | None:
    """The last line of the comment block or of the tag of several lines that starts at ``at``."""
    if _COMMENT.match(lines[at]):
        return next((j for j in range(at + 1, len(lines)) if j not in code and _ENDCOMMENT.match(lines[j])), None)
    if not _TAG_START.match(lines[at]) or _TAG_LINE.match(lines[at]):
        return None
    for j in range(at + 1, min(at + _TAG_LINES, len(lines))):
        if j in code or not lines[j].strip():
            return None
        if _TAG_LINE.match(" ".join(lines[at : j + 1])):
            return j
    return None


def _drop_toc_list(out: list[str | None], lines: list[str], at: int) -> None:
    """kramdown replaces the one-item list a ``{:toc}`` follows (``* TOC``) with the page's table of
    contents; the PDF has its own, so the list is left out with the marker."""
    before = at - 1
    alone = before == 0 or (before > 0 and not lines[before - 1].strip())
    if alone and out[before] is not None and _LIST_LINE.match(lines[before]):
        out[before] = None


def _container_line(boxes: list[_Box], line: str, fenced: bool = False) -> str:
    """``line`` within the open containers ``boxes`` (changed in place): an opener starts a quote, a
    closing fence ends the containers it closes and is left blank (so no line after it continues
    the quote), any other line is a line of the quotes. ``fenced``: the line opens a MyST
    directive in a code fence (:func:`_fenced_directives`)."""
    content = _content(boxes, line)
    closer = _CLOSER.match(content)
    if closer is not None:
        # as markdown-it-container reads it, a fence closes the outermost container whose fence is
        # no longer, and every container inside it; a code fence closes its own directive
        length, char = len(closer.group(2)), closer.group(2)[0]
        outermost = next((n for n, box in enumerate(boxes) if box.char == char and box.fence <= length), None)
        if outermost is not None:
            del boxes[outermost:]
            return _inside(boxes, "")
    opener = (_FENCED if fenced else _OPENER).match(content)
    if opener is None:
        return _inside(boxes, line)
    indent, marker, kind, rest = opener.groups()
    if fenced:
        kind = "{" + kind + "}"
    # MyST (Sphinx, mystmd) names its directive in braces: ``:::{note} Title``, ``::::{tab-set}``
    myst = kind.startswith("{")
    kind = kind.strip("{}").lower()
    if myst and kind in _MYST_GROUPS:
        boxes.append(_Box(len(marker), indent, quoted=False, options=True, char=marker[0]))
        return _inside(boxes, "")
    head = _head(kind, rest, myst)
    boxes.append(_Box(len(marker), indent, options=myst, char=marker[0]))
    prefix = _prefix(boxes)
    return "\n".join(prefix + part if part else prefix.rstrip() for part in head)


def _head(kind: str, rest: str, myst: bool = False) -> list[str]:
    """The first lines of the quote a ``:::kind rest`` container becomes."""
    label = _LABEL.match(rest.strip())
    title = label.group(1) if label is not None else _ATTRIBUTES.sub("", rest)
    title = title.strip()
    if kind in _ADMONITIONS or (myst and kind in _MYST_ADMONITIONS):
        callout, default = _ADMONITIONS.get(kind) or _MYST_ADMONITIONS[kind]
        return [f"[!{callout}] {title or default}".rstrip()]
    if myst and kind in _VERSIONS:  # Sphinx: "New in version 1.3", "Deprecated since version 2"
        title = f"{_VERSIONS[kind]} {title}".strip()
    title = title or _PLAIN_TITLES.get(kind, "")
    # a plain box: its title set in bold as a paragraph of its own, so the body is not joined to it
    return [f"**{title}**", ""] if title else [""]


def _content(boxes: list[_Box], line: str) -> str:
    """``line`` without the indentation of the open containers; a line indented less than one of
    them (the end of a list item that held it) closes that container and those inside it."""
    for n, box in enumerate(boxes):
        if box.indent and line.strip() and not line.startswith(box.indent):
            del boxes[n:]
            break
        line = line[len(box.indent) :] if line.startswith(box.indent) else line.lstrip(" \t")
    return line


def _inside(boxes: list[_Box], line: str) -> str:
    """``line`` as a line of the quotes the open containers ``boxes`` became."""
    if not boxes:
        return line
    prefix = _prefix(boxes)
    content = line
    for box in boxes:
        content = content[len(box.indent) :] if content.startswith(box.indent) else content.lstrip(" \t")
    return prefix + content if content else prefix.rstrip()


def _prefix(boxes: list[_Box]) -> str:
    return "".join(f"{box.indent}> " if box.quoted else box.indent for box in boxes)
