"""Hypothesis strategies producing realistic Markdown documents."""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "x",
    "Hello",
    "world",
    "中文",
    "文本",
    "测试",
    "`code`",
    "*em*",
    "**b**",
    "a|b",
]

# Lines that are never addressable when they appear between blocks.
RAW_LINES = {"<div>", "html text", "</div>", "---", "***", "___", "[ref]: https://example.com", "<!-- note -->"}

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def paragraph(draw: st.DrawFn, indent: str = "") -> str:
    lines = draw(st.lists(words, min_size=1, max_size=3))
    return "\n".join(indent + line for line in lines)


@st.composite
def heading(draw: st.DrawFn) -> str:
    title = draw(words)
    if draw(st.booleans()):
        level = draw(st.integers(1, 6))
        closing = " " + "#" * draw(st.integers(1, 3)) if draw(st.booleans()) else ""
        return f"{'#' * level} {title}{closing}"
    return f"{title}\n{draw(st.sampled_from(['===', '---', '=====']))}"


@st.composite
def fence(draw: st.DrawFn) -> str:
    body = draw(
        st.lists(
            st.sampled_from(["- not an item", "1. nor this", "> nor quote", "| a | b |", "", "code()", "# no"]),
            max_size=4,
        )
    )
    mark = draw(st.sampled_from(["```", "~~~", "````"]))
    info = draw(st.sampled_from(["", "py", "text"]))
    return "\n".join([mark + info, *body, mark])


@st.composite
def indented_code(draw: st.DrawFn) -> str:
    return "\n".join("    " + line for line in draw(st.lists(words, min_size=1, max_size=3)))


@st.composite
def table(draw: st.DrawFn) -> str:
    cols = draw(st.integers(1, 4))
    pipes = draw(st.booleans())

    def row(cells: list[str]) -> str:
        body = " | ".join(cells)
        return f"| {body} |" if pipes or cols == 1 else body

    header = row([draw(st.sampled_from(["Name", "名", "Value", "a\\|b", "`c`"])) for _ in range(cols)])
    delim = row([draw(st.sampled_from(["---", ":--", "--:", ":-:"])) for _ in range(cols)])
    rows = []
    for _ in range(draw(st.integers(0, 3))):
        count = draw(st.integers(max(1, cols - 1), cols + 1))
        rows.append(row([draw(st.sampled_from(["1", "two", "", "&amp;", "**x**", "中"])) for _ in range(count)]))
    return "\n".join([header, delim, *rows])


MARKERS = ["-", "*", "+", "1.", "2)"]


@st.composite
def list_block(draw: st.DrawFn, depth: int = 0, indent: str = "") -> str:
    marker = draw(st.sampled_from(MARKERS))
    items = []
    for _ in range(draw(st.integers(1, 3))):
        first = draw(words) if draw(st.integers(0, 5)) else ""
        pad = " " * (len(marker) + 1)
        lines = [f"{indent}{marker} {first}".rstrip()]
        if depth < 2 and draw(st.booleans()):
            gap = "\n" if draw(st.booleans()) else ""
            lines.append(gap + draw(list_block(depth + 1, indent + pad)))
        if draw(st.integers(0, 3)) == 0:
            lines.append("\n" + draw(paragraph(indent + pad)))
        if draw(st.integers(0, 5)) == 0:
            lines.append(f"{indent}{pad}```\n{indent}{pad}- fenced\n{indent}{pad}```")
        if draw(st.integers(0, 6)) == 0:
            lines.append(f"{indent}{pad}> quoted in item")
        items.append("\n".join(lines))
    sep = "\n\n" if draw(st.integers(0, 3)) == 0 else "\n"
    return sep.join(items)


@st.composite
def quote(draw: st.DrawFn) -> str:
    inner = draw(st.one_of(paragraph(), list_block(1), heading(), fence()))
    lines = inner.split("\n")
    if draw(st.booleans()):
        lines = [*lines, "", *draw(paragraph()).split("\n")]
    out = ["> " + line if line else ">" for line in lines]
    if draw(st.integers(0, 4)) == 0:
        out.append(draw(words))  # lazy continuation
    return "\n".join(out)


raw_block = st.sampled_from(["<div>\nhtml text\n</div>", "---", "***", "[ref]: https://example.com", "<!-- note -->"])

# Footnote definitions CommonMark reads as reference definitions: each is a paragraph of the element
# model (decision 1194), whose ordinal follows its section's other paragraphs; one may run on to a
# title line, be followed at once by a paragraph or a table, or stand in a list item or a quote.
footnote = st.sampled_from(
    [
        "[^1]: https://example.com/paper",
        "[^n]: Smith2020\n[^m]: <page.md>",
        '  [^a]: x.md\n"title"',
        "[^2]: one\nnext words",
        "[^3]: ![a](x.png)\n| a | b |\n|---|---|\n| 1 | 2 |",
        "- [^4]: item.md",
        "> [^5]: quoted",
        "[^6]: two words",
    ]
)

block = st.one_of(heading(), paragraph(), fence(), indented_code(), table(), list_block(), quote(), raw_block, footnote)


@st.composite
def markdown_doc(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(block, max_size=10))
    parts: list[str] = []
    if draw(st.integers(0, 3)) == 0:
        parts.append("---\ntitle: " + draw(words) + "\n---")
    for b in blocks:
        parts.append(b)
    text = ""
    for k, part in enumerate(parts):
        if k:
            text += "\n\n" if draw(st.integers(0, 4)) else "\n\n\n"
        text += part
    if draw(st.booleans()):
        text += "\n"
    return text


@st.composite
def with_eol(draw: st.DrawFn, text: str) -> str:
    eol = draw(st.sampled_from(["\n", "\r\n", "\r", "mixed"]))
    if eol == "mixed":
        lines = text.split("\n")
        out = lines[0]
        for line in lines[1:]:
            out += draw(st.sampled_from(["\n", "\r\n", "\r"])) + line
        return out
    return text.replace("\n", eol)


documents = markdown_doc().flatmap(lambda t: with_eol(t))
