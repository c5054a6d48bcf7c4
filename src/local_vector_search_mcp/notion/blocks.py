"""Markdown -> Notion block objects (the request shapes of Notion's public API).

The document is tokenised by markdown-it-py, the project's own parser (same
CommonMark + tables + strikethrough dialect as the element model and the PDF
export), and its syntax tree is mapped to block dictionaries ready to be sent as
``children``. Nothing here talks to Notion: the pusher decides how the blocks are
cut into requests (``push.py``), this module only respects the per-block limits
(2,000 characters per rich-text item, 100 items per rich-text array).

What maps to what (decision 129):

* headings 1-3 -> ``heading_1..3``; 4-6 -> ``heading_3`` (Notion has three levels);
* paragraphs -> ``paragraph`` with bold/italic/strikethrough/code annotations and
  links: absolute ``http(s)`` as written; a relative link is given to the caller's
  ``resolve`` (the pusher turns a link to a pushed document into its page's URL,
  decision 1167), and one it does not resolve keeps its text and loses its target
  (Notion refuses relative and other URLs);
* bullet / ordered items -> ``bulleted_list_item`` / ``numbered_list_item``; an item
  starting ``[ ]``/``[x]`` -> ``to_do``; the item's later blocks become its children; an
  ordered list that does not start at 1 -> ``paragraph`` items that begin with their number
  (Notion numbers every list from 1, decision 1169);
* fenced / indented code -> ``code`` (language mapped to Notion's list, else ``plain text``);
* block quotes -> ``quote``; GitHub alerts (``> [!NOTE]`` ...) -> ``callout`` with an icon;
* tables -> ``table`` with ``table_row`` children, first row as column header;
* thematic breaks -> ``divider``; HTML blocks -> ``code`` (``html``), comments dropped;
* images with an absolute ``http(s)`` URL -> ``image`` (external); any other image is given
  to the caller's ``upload`` (the pusher uploads a local file, decision 1170), else a
  placeholder paragraph naming it (Notion cannot fetch a local file).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.tree import SyntaxTreeNode

from local_vector_search_mcp.markdown.anchors import Slugger, own_id
from local_vector_search_mcp.markdown.front_matter import TOML_FENCE, front_matter_plugin
from local_vector_search_mcp.markdown.links import load_front_matter

__all__ = [
    "MAX_RICH_TEXT_ITEMS",
    "MAX_TEXT",
    "Block",
    "Converted",
    "convert",
    "heading_anchors",
    "pieces",
    "rich_text",
    "truncate",
    "uploaded_image",
    "utf16_len",
    "web_url",
    "without_images",
]

Block = dict[str, Any]

MD = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin)

MAX_TEXT = 2000  # characters per rich-text item (text.content) and per URL, in UTF-16 code units
MAX_RICH_TEXT_ITEMS = 100  # items per rich-text array

_TASK = re.compile(r"^\[([ xX])\][ \t]+")
_ALERT = re.compile(r"^\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*$", re.IGNORECASE)
_ALERTS = {
    "note": ("ℹ️", "blue_background"),
    "tip": ("💡", "green_background"),
    "important": ("❗", "purple_background"),
    "warning": ("⚠️", "yellow_background"),
    "caution": ("🛑", "red_background"),
}
_ABSOLUTE = re.compile(r"^https?://[^\s/?#\\]+[^\s]*$", re.IGNORECASE)  # http(s) with a host (decisions 465, 1147)

# Notion's code-block languages (the API refuses any other value) and common Markdown aliases.
_LANGUAGES = frozenset(
    [
        "abap",
        "arduino",
        "bash",
        "basic",
        "c",
        "clojure",
        "coffeescript",
        "c++",
        "c#",
        "css",
        "dart",
        "diff",
        "docker",
        "elixir",
        "elm",
        "erlang",
        "flow",
        "fortran",
        "f#",
        "gherkin",
        "glsl",
        "go",
        "graphql",
        "groovy",
        "haskell",
        "html",
        "java",
        "javascript",
        "json",
        "julia",
        "kotlin",
        "latex",
        "less",
        "lisp",
        "livescript",
        "lua",
        "makefile",
        "markdown",
        "markup",
        "matlab",
        "mermaid",
        "nix",
        "objective-c",
        "ocaml",
        "pascal",
        "perl",
        "php",
        "powershell",
        "prolog",
        "protobuf",
        "python",
        "r",
        "reason",
        "ruby",
        "rust",
        "sass",
        "scala",
        "scheme",
        "scss",
        "shell",
        "sql",
        "swift",
        "typescript",
        "verilog",
        "vhdl",
        "xml",
        "yaml",
    ]
) | {"plain text", "vb.net", "visual basic", "webassembly", "java/c/c++/c#"}
_ALIASES = {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "sh": "shell",
    "console": "shell",
    "zsh": "shell",
    "rs": "rust",
    "yml": "yaml",
    "cpp": "c++",
    "cxx": "c++",
    "h": "c",
    "cs": "c#",
    "csharp": "c#",
    "fsharp": "f#",
    "md": "markdown",
    "dockerfile": "docker",
    "rb": "ruby",
    "kt": "kotlin",
    "golang": "go",
    "ps1": "powershell",
    "proto": "protobuf",
    "tex": "latex",
    "objc": "objective-c",
    "wasm": "webassembly",
    "text": "plain text",
    "txt": "plain text",
    "plaintext": "plain text",
    "toml": "plain text",
    "jsonc": "json",  # JSON with comments (VS Code settings, tsconfig)
    "json5": "json",
    "patch": "diff",
    "shell-session": "shell",
    "sh-session": "shell",
    "make": "makefile",
    "terminal": "shell",
}


def web_url(url: str) -> bool:
    """Whether Notion takes ``url`` as a link or an external image: http(s), a host, at most 2,000 units.

    Notion refuses the whole request over one link it calls invalid ("Invalid URL for link"):
    another scheme (decision 465), and also ``http://`` or ``https:///path`` with no host
    (decision 1147), which the document then failed with at every push.
    """
    return bool(_ABSOLUTE.match(url)) and utf16_len(url) <= MAX_TEXT


def utf16_len(text: str) -> int:
    """Length as Notion counts it: UTF-16 code units (a character outside the BMP, most emoji, weighs 2)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def pieces(text: str, limit: int = MAX_TEXT) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` UTF-16 code units, never inside a character (decision 465)."""
    if utf16_len(text) == len(text):  # no character outside the BMP: code points are code units
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    out: list[str] = []
    start = weight = 0
    for i, ch in enumerate(text):
        w = 2 if ord(ch) > 0xFFFF else 1
        if weight + w > limit:
            out.append(text[start:i])
            start, weight = i, 0
        weight += w
    out.append(text[start:])
    return out


def truncate(text: str, limit: int = MAX_TEXT) -> str:
    """The longest prefix of ``text`` within ``limit`` UTF-16 code units."""
    return pieces(text, limit)[0] if text else text


Resolve = Callable[[str], str | None]  # a link's href as written -> the URL Notion is given, or None
Upload = Callable[[str, str], "Block | None"]  # a local image (src, alt) -> its uploaded image block, or None


@dataclass(frozen=True)
class Converted:
    title: str | None  # front matter ``title``, else the first heading's text
    blocks: list[Block]
    # (index in ``blocks``, anchor) of each first-level heading: what ``#anchor`` links name (decision 1167)
    anchors: list[tuple[int, str]] = field(default_factory=list)


def code_language(info: str) -> str:
    word = info.strip().split(maxsplit=1)[0].split(",")[0].lower() if info.strip() else ""
    word = _ALIASES.get(word, word)
    return word if word in _LANGUAGES else "plain text"


# ---------------------------------------------------------------------------- rich text
def _item(text: str, bold: bool, italic: bool, strike: bool, code: bool, url: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": text}
    if url:
        body["link"] = {"url": url}
    item: dict[str, Any] = {"type": "text", "text": body}
    if bold or italic or strike or code:
        item["annotations"] = {
            "bold": bold,
            "italic": italic,
            "strikethrough": strike,
            "underline": False,
            "code": code,
            "color": "default",
        }
    return item


class _Runs:
    """Collects (text, style) runs, merges neighbours of one style, cuts at the 2,000-character limit."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, tuple[bool, bool, bool, bool, str | None]]] = []

    def add(self, text: str, style: tuple[bool, bool, bool, bool, str | None]) -> None:
        if not text:
            return
        if self.runs and self.runs[-1][1] == style:
            self.runs[-1] = (self.runs[-1][0] + text, style)
        else:
            self.runs.append((text, style))

    def items(self) -> list[dict[str, Any]]:
        out = []
        for text, (bold, italic, strike, code, url) in self.runs:
            for piece in pieces(text):
                out.append(_item(piece, bold, italic, strike, code, url))
        return out


@dataclass(frozen=True)
class _Image:
    src: str
    alt: str


def _plain(tokens: Sequence[Token]) -> str:
    return "".join(t.content if t.type in ("text", "code_inline") else " " if "break" in t.type else "" for t in tokens)


def _inline(tokens: Sequence[Token], runs: _Runs, images: list[_Image] | None, resolve: Resolve | None = None) -> None:
    """Add the runs of ``tokens``; images go to ``images``, or stay in the text where no block can hold them.

    With ``images`` None (a table cell, which holds rich text only) an image is its alt text linked
    to its URL, or ``alt (source)`` (decision 1150): it used to vanish without a trace.
    """
    bold = italic = strike = False
    links: list[str | None] = []
    for tok in tokens:
        url = next((u for u in reversed(links) if u), None) if links else None
        style = (bold, italic, strike, False, url)
        kind = tok.type
        if kind == "text":
            runs.add(tok.content, style)
        elif kind == "softbreak":
            runs.add(" ", style)
        elif kind == "hardbreak":
            runs.add("\n", style)
        elif kind == "code_inline":
            runs.add(tok.content, (bold, italic, strike, True, url))
        elif kind in ("strong_open", "strong_close"):
            bold = kind == "strong_open"
        elif kind in ("em_open", "em_close"):
            italic = kind == "em_open"
        elif kind in ("s_open", "s_close"):
            strike = kind == "s_open"
        elif kind == "link_open":
            href = str(tok.attrGet("href") or "")
            target = href if web_url(href) else resolve(href) if resolve is not None and href else None
            links.append(target if target is not None and web_url(target) else None)
        elif kind == "link_close":
            if links:
                links.pop()
        elif kind == "image":
            image = _Image(str(tok.attrGet("src") or ""), _plain(tok.children or []))
            if images is not None:
                images.append(image)
            elif web_url(image.src):
                runs.add(image.alt.strip() or "image", (bold, italic, strike, False, image.src))
            else:
                runs.add(f"{image.alt.strip() or 'image'} ({image.src or 'no source'})", style)
        elif kind == "html_inline" and tok.content.lower().startswith("<br"):
            runs.add("\n", style)
        # other inline HTML tags are dropped; the text between them stays


def rich_text(markdown: str) -> list[dict[str, Any]]:
    """Rich-text items of one line of inline Markdown (images dropped)."""
    tokens = MD.parseInline(markdown, {})
    runs = _Runs()
    _inline(tokens[0].children or [] if tokens else [], runs, [])
    return runs.items()


# ---------------------------------------------------------------------------- blocks
MAX_BLOCK_BYTES = 300_000  # UTF-8 bytes of one block's text: a block must fit a 500 KB request on its own


def _text_block(kind: str, items: list[dict[str, Any]], **extra: Any) -> list[Block]:
    """One block of ``kind``; several when the rich text has more than 100 items or 300 KB of text.

    Notion refuses a request over 500 KB (request limits): 100 items of 2,000 CJK characters
    are 600 KB, so a block is also cut by the bytes its text takes (decision 469).
    """
    chunks: list[list[dict[str, Any]]] = [[]]
    size = 0
    for item in items:
        weight = len(item["text"]["content"].encode("utf-8")) + 200  # the item's JSON around its text
        if chunks[-1] and (len(chunks[-1]) >= MAX_RICH_TEXT_ITEMS or size + weight > MAX_BLOCK_BYTES):
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += weight
    return [{"type": kind, kind: {"rich_text": chunk, **extra}} for chunk in chunks]


def _fit(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A rich-text array within 100 items where the block cannot be split (a heading, a table cell).

    Past 100 items the runs' styles give way to their text (decision 862): one plain run cut
    into 2,000-unit pieces holds 200,000 characters, where keeping the first 100 styled items
    dropped the rest of the text. Only text beyond that is cut.
    """
    if len(items) <= MAX_RICH_TEXT_ITEMS:
        return items
    runs = _Runs()
    runs.add("".join(i["text"]["content"] for i in items), (False, False, False, False, None))
    return runs.items()[:MAX_RICH_TEXT_ITEMS]


def _with_children(block: Block, children: list[Block]) -> Block:
    if children:
        block[block["type"]]["children"] = children
    return block


def uploaded_image(upload_id: str, alt: str) -> Block:
    """An image block of a file uploaded to Notion (file object of type ``file_upload``), the alt as caption."""
    body: dict[str, Any] = {"type": "file_upload", "file_upload": {"id": upload_id}}
    if alt:
        body["caption"] = [_item(truncate(alt), False, False, False, False, None)]
    return {"type": "image", "image": body}


def image_block(image: _Image) -> Block:
    if web_url(image.src):
        body: dict[str, Any] = {"type": "external", "external": {"url": image.src}}
        if image.alt.strip():
            body["caption"] = [_item(truncate(image.alt.strip()), False, False, False, False, None)]
        return {"type": "image", "image": body}
    label = f"Image not uploaded: {image.alt.strip() or 'image'} ({image.src or 'no source'})"
    return {"type": "paragraph", "paragraph": {"rich_text": [_item(truncate(label), False, True, False, False, None)]}}


def without_images(block: Block) -> Block:
    """``block`` with every image in it (itself, its children) as a paragraph linking to the image.

    Notion refuses a whole append over an external image it will not take ("Content creation
    Failed. Fix the following: Invalid image url.", reported for URLs a browser shows), and says
    neither which one nor why; the pusher then sends the batch again so (decision 1153).
    """
    kind = block["type"]
    if kind == "image" and block["image"].get("type") != "external":
        return block  # an uploaded file: Notion has it already
    if kind == "image":
        url = block["image"]["external"]["url"]
        caption = "".join(i["text"]["content"] for i in block["image"].get("caption", []))
        label = _item("Image Notion did not take: ", False, True, False, False, None)
        return {
            "type": "paragraph",
            "paragraph": {"rich_text": [label, _item(truncate(caption or url), False, True, False, False, url)]},
        }
    children = block[kind].get("children")
    if not isinstance(children, list):
        return block
    return {**block, kind: {**block[kind], "children": [without_images(c) for c in children]}}


class _Converter:
    def __init__(self, env: dict[str, Any], resolve: Resolve | None = None, upload: Upload | None = None) -> None:
        self.first_heading: str | None = None
        self.front_title: str | None = None
        self.env = env  # the document's parse environment: its link reference definitions
        self.resolve = resolve
        self.upload = upload

    def image_block(self, image: _Image) -> Block:
        if self.upload is not None and image.src and not web_url(image.src):
            uploaded = self.upload(image.src, image.alt.strip())
            if uploaded is not None:
                return uploaded
        return image_block(image)

    def reparse(self, source: str) -> tuple[list[dict[str, Any]], list[_Image]]:
        """Rich text and images of inline Markdown cut from a block (a task's text after ``[ ]``, an alert's).

        Parsed with the document's environment, so ``[text][ref]`` finds the definition written
        elsewhere in the document, and the images it holds are kept (decision 1146).
        """
        tokens = MD.parseInline(source, self.env)
        runs = _Runs()
        images: list[_Image] = []
        _inline(tokens[0].children or [] if tokens else [], runs, images, self.resolve)
        return runs.items(), images

    def inline(
        self, node: SyntaxTreeNode | None, *, blocks_for_images: bool = True
    ) -> tuple[list[dict[str, Any]], list[_Image]]:
        runs = _Runs()
        images: list[_Image] = []
        if node is not None and node.type == "inline":
            _inline(
                node.token.children or [] if node.token else [],
                runs,
                images if blocks_for_images else None,
                self.resolve,
            )
        return runs.items(), images

    def blocks(self, nodes: Sequence[SyntaxTreeNode]) -> list[Block]:
        out: list[Block] = []
        for node in nodes:
            out.extend(self.block(node))
        return out

    def block(self, node: SyntaxTreeNode) -> list[Block]:
        kind = node.type
        if kind == "paragraph":
            items, images = self.inline(node.children[0] if node.children else None)
            # a paragraph of images only is its image blocks, without a paragraph of the blanks between them
            blank = images and not "".join(i["text"]["content"] for i in items).strip()
            head = _text_block("paragraph", items) if items and not blank else []
            return head + [self.image_block(i) for i in images]
        if kind == "heading":
            level = int(node.tag[1:]) if node.tag[1:].isdigit() else 1
            items, images = self.inline(node.children[0] if node.children else None)
            if self.first_heading is None:
                self.first_heading = "".join(i["text"]["content"] for i in items).strip() or None
            name = f"heading_{min(level, 3)}"
            return [{"type": name, name: {"rich_text": _fit(items)}}] + [self.image_block(i) for i in images]
        if kind in ("bullet_list", "ordered_list"):
            item_kind = "bulleted_list_item" if kind == "bullet_list" else "numbered_list_item"
            start = node.attrs.get("start", 1) if kind == "ordered_list" else 1
            if isinstance(start, int) and start != 1:
                # Notion numbers every list from 1 and no API version takes a start (decision 1169):
                # the items are paragraphs that begin with the number the author wrote.
                delimiter = node.markup or "."
                return [
                    b
                    for i, item in enumerate(node.children)
                    for b in self.list_item(item, item_kind, number=f"{start + i}{delimiter} ")
                ]
            return [b for item in node.children for b in self.list_item(item, item_kind)]
        if kind == "blockquote":
            return self.quote(node)
        if kind in ("fence", "code_block"):
            text = node.content[:-1] if node.content.endswith("\n") else node.content
            language = code_language(node.info) if kind == "fence" else "plain text"
            return self.code(text, language)
        if kind == "hr":
            return [{"type": "divider", "divider": {}}]
        if kind == "html_block":
            text = node.content.strip()
            if not text or (text.startswith("<!--") and text.endswith("-->")):
                return []
            return self.code(text, "html")
        if kind == "table":
            return [self.table(node)]
        if kind == "front_matter":
            self.front_title = _front_matter_title(node.content, toml=node.markup == TOML_FENCE)
            return []
        return self.blocks(node.children)

    def code(self, text: str, language: str) -> list[Block]:
        runs = _Runs()
        runs.add(text, (False, False, False, False, None))
        return _text_block("code", runs.items() or [], language=language)

    def list_item(self, node: SyntaxTreeNode, item_kind: str, number: str | None = None) -> list[Block]:
        children = list(node.children)
        items: list[dict[str, Any]] = []
        extra: list[Block] = []
        kind, body = item_kind, {}
        if children and children[0].type == "paragraph":
            first = children.pop(0)
            inline = first.children[0] if first.children else None
            source = inline.content if inline is not None else ""
            task = _TASK.match(source)
            if task:
                kind, body = "to_do", {"checked": task.group(1) in "xX"}
                items, images = self.reparse(source[task.end() :])
            else:
                items, images = self.inline(inline)
            extra = [self.image_block(i) for i in images]
        if number is not None and kind == item_kind:  # a task keeps its checkbox, not its number
            kind, items = "paragraph", [_item(number, False, False, False, False, None), *items]
        blocks = _text_block(kind, items, **body)
        _with_children(blocks[-1], extra + self.blocks(children))
        return blocks

    def quote(self, node: SyntaxTreeNode) -> list[Block]:
        """A quote or GitHub alert; past 100 items (or 300 KB) of text several, like a paragraph (decision 862)."""
        children = list(node.children)
        alert = None
        items: list[dict[str, Any]] = []
        extra: list[Block] = []
        if children and children[0].type == "paragraph":
            inline = children[0].children[0] if children[0].children else None
            source = inline.content if inline is not None else ""
            first_line, _, rest = source.partition("\n")
            match = _ALERT.match(first_line.strip())
            if match:
                alert = match.group(1).lower()
                children.pop(0)
                items, images = self.reparse(rest)
                extra = [self.image_block(i) for i in images]
            else:
                children.pop(0)
                items, images = self.inline(inline)
                extra = [self.image_block(i) for i in images]
        if alert is not None:
            emoji, color = _ALERTS[alert]
            icon = {"type": "emoji", "emoji": emoji}
            blocks = _text_block("callout", items, icon=icon, color=color)
        else:
            blocks = _text_block("quote", items)
        _with_children(blocks[-1], extra + self.blocks(children))
        return blocks

    def table(self, node: SyntaxTreeNode) -> Block:
        rows: list[list[list[dict[str, Any]]]] = []
        for section in node.children:
            for tr in section.children:
                cells = []
                for cell in tr.children:
                    items, _ = self.inline(cell.children[0] if cell.children else None, blocks_for_images=False)
                    cells.append(_fit(items))
                rows.append(cells)
        width = max((len(r) for r in rows), default=1) or 1
        children = [{"type": "table_row", "table_row": {"cells": r + [[]] * (width - len(r))}} for r in rows]
        return {
            "type": "table",
            "table": {"table_width": width, "has_column_header": True, "has_row_header": False, "children": children},
        }


def _front_matter_title(content: str, *, toml: bool) -> str | None:
    try:
        # the indexer's reading: aliases and nesting bounded (decision 1005), TOML too (1026)
        data = load_front_matter(content, toml=toml)
    except ValueError:
        return None
    title = data.get("title") if isinstance(data, dict) else None
    # A scalar only: str() of a list or mapping is Python's text, and of nested YAML aliases (a
    # few hundred bytes) billions of characters (decision 404).
    if title is None or isinstance(title, list | dict):
        return None
    return str(title).strip() or None


def heading_anchors(blocks: Sequence[Block]) -> list[tuple[int, str]]:
    """(index, anchor) of each first-level heading in ``blocks``, as a Markdown renderer names them
    (``markdown/anchors.py``, the link checker's rule): the heading's own ``{#id}``, else GitHub's
    slug of its text, numbered when repeated. Headings nested in a list item or a quote are not
    first-level blocks and have no anchor here (the link goes to the page).
    """
    out: list[tuple[int, str]] = []
    slugger = Slugger()
    for i, block in enumerate(blocks):
        kind = block["type"]
        if not kind.startswith("heading_"):
            continue
        text = "".join(item["text"]["content"] for item in block[kind]["rich_text"])
        own = own_id(text)
        out.append((i, own if own is not None else slugger.slug(text)))
    return out


def convert(markdown: str, resolve: Resolve | None = None, upload: Upload | None = None) -> Converted:
    """The Notion blocks of one Markdown document, and the title it names for itself.

    ``resolve`` is asked for the URL of each link that is not an absolute web URL (``other.md#part``,
    ``#part``); None keeps the link's text without a target. ``upload`` is asked for the block of
    each image that is not an absolute web URL; None leaves a placeholder paragraph.
    """
    env: dict[str, Any] = {}
    tree = SyntaxTreeNode(MD.parse(markdown, env))
    converter = _Converter(env, resolve, upload)
    blocks = converter.blocks(tree.children)
    return Converted(converter.front_title or converter.first_heading, blocks, heading_anchors(blocks))
