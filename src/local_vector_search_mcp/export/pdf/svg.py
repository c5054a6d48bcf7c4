"""SVG pictures drawn as vector graphics: vetted here, converted by svglib, scaled to the frame.

An SVG is a program of sorts: it can name other files and addresses, carry scripts, declare
entities, nest ``<use>`` references into a bomb, or claim a size of a billion points. Before svglib
sees one, the file is parsed here (no network, no DTD, no entities resolved) and refused, to
become the usual placeholder, when it is malformed, larger than ``MAX_SVG_BYTES``, holds a script
or ``<foreignObject>``, refers to anything but its own elements and embedded PNG/JPEG data, or
would expand to more than ``MAX_SVG_NODES`` drawn elements (path data counted in). svglib then
reads the bytes from memory, not from the path, so even a reference the vetting missed resolves to
nothing (decision 1155).
"""

from __future__ import annotations

import base64
import binascii
import io
import logging
import math
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from ...lazy_imports import IMPORT_LOCK

__all__ = ["MAX_SVG_BYTES", "MAX_SVG_NODES", "MAX_SVG_POINTS", "Vector", "load_svg"]

MAX_SVG_BYTES = 5 * 1024 * 1024
# What drawing an SVG costs once every <use> is expanded, counted in elements, ten numbers of path
# data (``d``, ``points``) counting as one more: svglib converted 95,000 rectangles in 25 CPU-s and
# 437 MiB here and a path of 800,000 numbers in 8 CPU-s, so 20,000 keep one picture to a few
# seconds and about 100 MiB (the rust book's diagrams: 100-700 elements, 3-30 ms each).
MAX_SVG_NODES = 20_000
_NUMBERS_PER_NODE = 10
# The largest side an SVG may claim, in points (about 35 m): larger is a mistake or a trap.
MAX_SVG_POINTS = 100_000.0
MAX_DEPTH = 64
# Embedded rasters are decoded by reportlab when the page is drawn: bounded like pictures are.
MAX_EMBEDDED_PIXELS = 40_000_000
# Elements that are never drawn and only ever run or embed something else.
_REFUSED = {"script": "a script", "foreignObject": "foreign (HTML) content", "iframe": "an iframe"}
_DATA_IMAGE = re.compile(r"\s*data:image/(?:png|jpe?g);base64,", re.IGNORECASE)
_NUMBER = re.compile(r"[-+]?(?:\d*\.\d+|\d+\.?)(?:[eE][-+]?\d+)?")
_URL = re.compile(r"url\(\s*['\"]?\s*([^'\")\s]*)", re.IGNORECASE)
_SVG_NS = "{http://www.w3.org/2000/svg}"


@dataclass(frozen=True)
class Vector:
    """An SVG converted to a reportlab Drawing, and the size in points it is drawn at."""

    drawing: Any
    width: float
    height: float


@dataclass(frozen=True)
class Refused:
    reason: str


def load_svg(path: Path, max_width: float, max_height: float) -> Vector | Refused:
    """``path`` (already through the path guard) as a drawing at most ``max_width`` by
    ``max_height`` points, keeping its aspect; or why it cannot be drawn."""
    try:
        size = os.stat(path).st_size
        if not path.is_file():
            return Refused("it is not a file")
        if size > MAX_SVG_BYTES:
            return Refused(f"the SVG is larger than {MAX_SVG_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()[: MAX_SVG_BYTES + 1]
    except OSError:
        return Refused("the file does not exist")
    if len(data) > MAX_SVG_BYTES:
        return Refused(f"the SVG is larger than {MAX_SVG_BYTES // (1024 * 1024)} MiB")
    reason = vet(data)
    if reason is not None:
        return Refused(reason)
    drawing = _convert(data)
    if drawing is None:
        return Refused("the SVG cannot be read")
    width, height = float(drawing.width or 0), float(drawing.height or 0)
    if not (math.isfinite(width) and math.isfinite(height)) or width < 0.5 or height < 0.5:
        return Refused("the SVG has no size")
    if width > MAX_SVG_POINTS or height > MAX_SVG_POINTS:
        return Refused(f"the SVG claims a size over {int(MAX_SVG_POINTS):,} points")
    shrink = min(1.0, max_width / width, max_height / height)
    drawn_w, drawn_h = width * shrink, height * shrink
    if not _draws(drawing):
        return Refused("the SVG cannot be drawn")
    return Vector(drawing, drawn_w, drawn_h)


def vet(data: bytes) -> str | None:
    """Why the SVG ``data`` is not handed to svglib, or None when it may be."""
    with IMPORT_LOCK:
        from lxml import etree

    # no_network and load_dtd=False: a DOCTYPE's DTD is never fetched or read; entities are left
    # unresolved (a billion-laughs document stays small) and refused below
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(data, parser=parser)
    except (etree.XMLSyntaxError, ValueError):
        return "the SVG is not well-formed XML"
    if root is None or root.tag not in (f"{_SVG_NS}svg", "svg"):
        return "the file is not an SVG picture"
    ids: dict[str, Any] = {}
    for node in root.iter():
        if isinstance(node, etree._Entity):
            return "the SVG uses entities declared in its DOCTYPE"
        if not isinstance(node.tag, str):
            continue  # comments, processing instructions
        name = etree.QName(node).localname
        if name in _REFUSED:
            return f"the SVG holds {_REFUSED[name]}"
        if (node_id := node.get("id")) is not None:
            ids.setdefault(node_id, node)
        for attr, value in node.attrib.items():
            local = etree.QName(attr).localname
            if local == "href" and name != "a" and not _internal(value):
                return "the SVG refers to another file or an address"
            if (why := _urls(value)) is not None:
                return why
        if name == "style" and (why := _urls(node.text or "", style=True)) is not None:
            return why
        if name == "image" and (why := _embedded(node)) is not None:
            return why
    nodes = _expanded(root, ids)
    if nodes is None:
        return f"the SVG nests deeper than {MAX_DEPTH} levels or its <use> references loop"
    if nodes > MAX_SVG_NODES:
        return (
            f"the SVG would draw more than {MAX_SVG_NODES:,} elements "
            f"(or {MAX_SVG_NODES * _NUMBERS_PER_NODE:,} numbers of path data)"
        )
    return None


def _internal(href: str) -> bool:
    href = href.strip()
    return href.startswith("#") or bool(_DATA_IMAGE.match(href))


def _urls(text: str, style: bool = False) -> str | None:
    if style and "@import" in text:
        return "the SVG's style sheet imports another"
    for target in _URL.findall(text):
        if target and not target.startswith("#"):
            return "the SVG refers to another file or an address"
    return None


def _embedded(node: Any) -> str | None:
    href = next((v for k, v in node.attrib.items() if k.rsplit("}", 1)[-1] == "href"), "")
    match = _DATA_IMAGE.match(href)
    if match is None:
        return None  # no picture at all (an <image> without href draws nothing)
    try:
        raw = base64.b64decode(href[match.end() :], validate=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # its size is checked below
            with Image.open(io.BytesIO(raw)) as img:
                width, height = img.size
    except Image.DecompressionBombError:
        return f"a picture embedded in the SVG has more than {MAX_EMBEDDED_PIXELS // 1_000_000} million pixels"
    except (OSError, ValueError, binascii.Error):
        return "a picture embedded in the SVG cannot be decoded"
    if width * height > MAX_EMBEDDED_PIXELS:
        return f"a picture embedded in the SVG has more than {MAX_EMBEDDED_PIXELS // 1_000_000} million pixels"
    return None


def _expanded(root: Any, ids: dict[str, Any]) -> int | None:
    """How many elements drawing ``root`` visits once each ``<use>`` is replaced by its target (a
    target counted as often as it is used; ten numbers of path data count as one element), or None
    when the tree or a chain of references is deeper than ``MAX_DEPTH`` or a reference loops."""
    # keyed by the elements themselves: lxml makes a new proxy object (and id) for an element no
    # one holds, so id() of one visited earlier may be reused by another
    sizes: dict[Any, int] = {}
    open_: set[Any] = set()

    def size(node: Any, depth: int) -> int | None:
        if depth > MAX_DEPTH:
            return None
        key = node
        if key in sizes:
            return sizes[key]
        if not isinstance(node.tag, str):
            return 1  # a comment or processing instruction
        if key in open_:
            return None
        open_.add(key)
        total = 1
        for attr in ("d", "points"):
            if (data := node.get(attr)) is not None:
                total += len(_NUMBER.findall(data)) // _NUMBERS_PER_NODE
        children = list(node)
        if node.tag.rsplit("}", 1)[-1] == "use":
            href = next((v for k, v in node.attrib.items() if k.rsplit("}", 1)[-1] == "href"), "").strip()
            target = ids.get(href[1:]) if href.startswith("#") else None
            if target is not None:
                children.append(target)
        for child in children:
            inner = size(child, depth + 1)
            if inner is None:
                return None
            total += inner
            if total > MAX_SVG_NODES:
                break  # already too many: no need to count the rest
        open_.discard(key)
        sizes[key] = total
        return total

    return size(root, 0)


def _convert(data: bytes) -> Any:
    with IMPORT_LOCK:
        from svglib.svglib import svg2rlg

        # svglib logs every colour and attribute it does not know at WARNING: not the reader's concern
        logging.getLogger("svglib").setLevel(logging.ERROR)
    try:
        # from memory, not the path: svglib resolves no file reference for a source without a path
        return svg2rlg(io.BytesIO(data))
    except Exception:  # svglib raises whatever its parsing of odd input meets (decision 1155)
        return None


def _draws(drawing: Any) -> bool:
    """Whether reportlab draws ``drawing`` without an error, tried on a canvas that is thrown away:
    an error on the real page would fail the whole export."""
    from reportlab.graphics import renderPDF
    from reportlab.pdfgen.canvas import Canvas

    try:
        renderPDF.draw(drawing, Canvas(io.BytesIO()), 0, 0)
    except Exception:  # as in _convert
        return False
    return True
