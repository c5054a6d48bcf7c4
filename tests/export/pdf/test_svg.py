"""SVG pictures: drawn as vector graphics scaled to the frame, or placeholders when they cannot be
drawn safely; nothing is fetched and no file outside the knowledge base is read (decision 1155)."""

from __future__ import annotations

import base64
import io
import re
import shutil
import socket
import zlib
from pathlib import Path

import pytest
from PIL import Image

from local_vector_search_mcp.export.pdf import svg as svg_module
from local_vector_search_mcp.export.pdf.images import ImageStore, Missing
from local_vector_search_mcp.export.pdf.styles import PROFILES
from local_vector_search_mcp.export.pdf.svg import Vector
from local_vector_search_mcp.paths import PathGuard

from . import poppler
from .conftest import export

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "svg"
GREEN = (0x12, 0xAB, 0x34)


def _svg(body: str, size: str = 'width="200" height="100"', head: str = "") -> str:
    return (
        f'{head}<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" {size}>{body}</svg>'
    )


# a filled green box over the whole picture, a red line and a word: what a diagram is made of
GOOD = _svg(
    '<rect x="0" y="0" width="200" height="100" fill="#12ab34"/>'
    '<path d="M10 10 L190 90" stroke="#ff0000" stroke-width="3"/>'
    '<text x="20" y="60" font-family="Helvetica" font-size="20">Vectorword</text>'
)


def _store(root: Path) -> ImageStore:
    return ImageStore(PathGuard(root, root / ".lvsm" / "index.db"), PROFILES["standard"])


def _content(pdf: Path) -> bytes:
    """Every stream of the PDF, decoded (reportlab writes ASCII85 over Flate): the pages' drawing
    operators."""
    out = []
    for match in re.finditer(rb"stream\r?\n(.*?)endstream", pdf.read_bytes(), re.DOTALL):
        data = match.group(1).strip()
        try:
            if data.endswith(b"~>"):
                data = (
                    base64.a85decode(data, adobe=data.startswith(b"<~"))
                    if data.startswith(b"<~")
                    else (base64.a85decode(b"<~" + data, adobe=True))
                )
            out.append(zlib.decompress(data))
        except (ValueError, zlib.error):
            out.append(data)
    return b"\n".join(out)


@poppler.needs_poppler
def test_a_good_svg_is_drawn_as_vector_graphics_not_a_placeholder(kb: Path) -> None:
    """An SVG printed "Image not available" (decision 1144): it is now drawn with PDF path
    operators, its text as text, and no raster picture is embedded."""
    (kb / "img").mkdir()
    (kb / "img" / "x.svg").write_text(GOOD, encoding="utf-8")
    (kb / "a.md").write_text("# A\n\nbefore\n\n![diagram](img/x.svg)\n\nafter\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    assert "not available" not in text
    poppler.in_order(text, ["before", "Vectorword", "after"])
    assert poppler.images(pdf) == []
    ops = _content(pdf)
    assert b".070588 .670588 .203922 rg" in ops  # the box's green as a fill colour
    assert re.search(rb" re\b", ops) and re.search(rb" l\b", ops)  # a rectangle and a line, as paths
    assert poppler.area(pdf, GREEN) > 1000


@poppler.needs_poppler
def test_the_rust_books_diagram_is_drawn(kb: Path) -> None:
    """A real Graphviz diagram (the rust book's Figure 4-1, in an HTML ``<img>`` as the book writes
    it): its table labels are text in the PDF."""
    shutil.copy(FIXTURES / "trpl04-01.svg", kb / "trpl04-01.svg")
    (kb / "a.md").write_text(
        '# A\n\n<img alt="Two tables" src="trpl04-01.svg" class="center" />\n\nafter\n', encoding="utf-8"
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    flat = poppler.flat(pdf)
    assert "notavailable" not in flat
    for label in ("name", "value", "ptr", "len", "capacity", "index"):
        assert label in flat
    loaded = _store(kb).load("trpl04-01.svg", "a.md", 300, 1000)
    # 1000 x 700 CSS pixels (its viewBox) are 750 x 525 points: shrunk to the width, aspect kept
    assert isinstance(loaded, Vector)
    assert loaded.width == pytest.approx(300) and loaded.height == pytest.approx(210)


def test_a_small_svg_keeps_its_size_and_a_tall_one_fits_the_height(tmp_path: Path) -> None:
    (tmp_path / "small.svg").write_text(GOOD, encoding="utf-8")
    (tmp_path / "tall.svg").write_text(_svg("<rect width='10' height='10'/>", 'width="100" height="1000"'))
    small = _store(tmp_path).load("small.svg", "a.md", 300, 400)
    assert isinstance(small, Vector) and (small.width, small.height) == pytest.approx((150, 75))  # 96 px/in
    tall = _store(tmp_path).load("tall.svg", "a.md", 300, 400)
    assert isinstance(tall, Vector) and (tall.width, tall.height) == pytest.approx((40, 400))


@poppler.needs_poppler
def test_an_svg_follows_the_width_it_is_given(kb: Path) -> None:
    """``<img width="50%">`` and ``style="width: 50%"`` halve the picture as they halve a raster
    one: a quarter of the green area, the aspect kept."""
    # 2000 x 1000 CSS pixels: wider than the frame, which it fills whole, or half of it
    (kb / "x.svg").write_text(_svg('<rect width="2000" height="1000" fill="#12ab34"/>', 'viewBox="0 0 2000 1000"'))
    (kb / "full.md").write_text('# A\n\n<img src="x.svg">\n', encoding="utf-8")
    (kb / "half.md").write_text('# A\n\n<img src="x.svg" style="width: 50%;">\n', encoding="utf-8")
    areas = []
    for name in ("full.md", "half.md"):
        pdf, warnings = export(kb, name)
        assert warnings == []
        areas.append(poppler.area(pdf, GREEN))
    assert areas[0] > 5000
    assert areas[1] == pytest.approx(areas[0] / 4, rel=0.1)


BOMB_PNG = io.BytesIO()
Image.new("1", (10000, 10000)).save(BOMB_PNG, "PNG")  # 100 million pixels in a few kilobytes
BOMB_URI = "data:image/png;base64," + base64.b64encode(BOMB_PNG.getvalue()).decode()


def _use_bomb() -> str:
    """Ten levels of ten ``<use>`` each: 10^10 elements once expanded, in 2 kB."""
    defs = ['<rect id="l0" width="1" height="1"/>']
    for level in range(1, 11):
        uses = "".join(f'<use xlink:href="#l{level - 1}"/>' for _ in range(10))
        defs.append(f'<g id="l{level}">{uses}</g>')
    return _svg(f"<defs>{''.join(defs)}</defs><use xlink:href='#l10'/>")


BAD = {
    "malformed": ("<svg xmlns='http://www.w3.org/2000/svg'><rect></svg", "not well-formed"),
    "not an svg": ("<html><body/></html>", "not an SVG picture"),
    "binary": ("\x00\x01PNG garbage", "not well-formed"),
    "local image": (_svg('<image href="secret.png" width="10" height="10"/>'), "refers to another file"),
    "remote image": (
        _svg('<image xlink:href="http://127.0.0.1:9/x.png" width="10" height="10"/>'),
        "refers to another file",
    ),
    "outside image": (_svg('<image href="../outside.png" width="9" height="9"/>'), "refers to another file"),
    "file url": (_svg('<image href="file:///etc/passwd" width="9" height="9"/>'), "refers to another file"),
    "external use": (_svg('<use href="other.svg#a"/>'), "refers to another file"),
    "css url": (_svg('<rect width="9" height="9" style="fill: url(http://127.0.0.1:9/p)"/>'), "refers to another"),
    "css import": (_svg("<style>@import 'x.css'; rect {fill: red}</style>"), "imports another"),
    "script": (_svg("<script>alert(1)</script><rect width='9' height='9'/>"), "a script"),
    "foreign object": (_svg("<foreignObject><p xmlns='http://www.w3.org/1999/xhtml'>x</p></foreignObject>"), "foreign"),
    "entities": (
        _svg(
            "<text>&lol3;</text>",
            head='<!DOCTYPE svg [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;">]>',
        ),
        "entities",
    ),
    "huge size": (_svg("<rect width='9' height='9'/>", 'width="1e9" height="1e9"'), "claims a size"),
    "no size": (_svg("<rect width='9' height='9'/>", 'width="0" height="0"'), "has no size"),
    "use bomb": (_use_bomb(), "more than 20,000 elements"),
    "long path": (_svg(f'<path d="M0 0 {"L1 2 " * 100_001}"/>'), "200,000 numbers of path data"),
    "use loop": (_svg('<g id="a"><use href="#a"/></g>'), "loop"),
    "deep": (_svg("<g>" * 100 + "<rect width='9' height='9'/>" + "</g>" * 100), "deeper than 64"),
    "embedded bomb": (_svg(f'<image href="{BOMB_URI}" width="9" height="9"/>'), "more than 40 million pixels"),
    "embedded garbage": (_svg('<image href="data:image/png;base64,AAAA" width="9" height="9"/>'), "cannot be decoded"),
}


@pytest.mark.parametrize("case", BAD)
def test_an_svg_that_cannot_be_drawn_safely_is_a_placeholder(tmp_path: Path, case: str) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    Image.new("RGB", (9, 9), GREEN).save(root / "secret.png")
    Image.new("RGB", (9, 9), GREEN).save(tmp_path / "outside.png")
    (root / "other.svg").write_text(_svg('<rect id="a" width="9" height="9"/>'))
    text, reason = BAD[case]
    (root / "bad.svg").write_text(text, encoding="utf-8")
    loaded = _store(root).load("bad.svg", "a.md", 300, 400)
    assert isinstance(loaded, Missing) and reason in loaded.reason, loaded


def test_a_large_svg_is_a_placeholder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(svg_module, "MAX_SVG_BYTES", 1000)
    (tmp_path / "big.svg").write_text(_svg("<rect width='9' height='9'/>" * 50))
    loaded = _store(tmp_path).load("big.svg", "a.md", 300, 400)
    assert isinstance(loaded, Missing) and "larger than" in loaded.reason


@poppler.needs_poppler
def test_a_bad_svg_prints_the_placeholder_and_a_warning(kb: Path) -> None:
    (kb / "bad.svg").write_text(_svg("<script>fetch('http://example.com')</script>"), encoding="utf-8")
    (kb / "good.svg").write_text(GOOD, encoding="utf-8")
    (kb / "a.md").write_text("# A\n\n![evil](bad.svg)\n\n![fine](good.svg)\n\nend\n", encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == ["Image 'bad.svg' in a.md was replaced by a placeholder: the SVG holds a script."]
    poppler.in_order(poppler.text(pdf), ["Image not available: evil", "Vectorword", "end"])


def test_svglib_itself_reaches_no_network_and_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second wall: with the vetting switched off, svglib is handed the bytes, not the path, so
    an ``<image>`` naming a file beside the SVG, one outside the knowledge base or a listening local
    address draws nothing and reads or connects to nothing."""
    monkeypatch.setattr(svg_module, "vet", lambda data: None)
    root = tmp_path / "kb"
    root.mkdir()
    Image.new("RGB", (9, 9), GREEN).save(root / "beside.png")
    Image.new("RGB", (9, 9), GREEN).save(tmp_path / "outside.png")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.2)
        port = server.getsockname()[1]
        refs = ["beside.png", "../outside.png", str(tmp_path / "outside.png"), f"http://127.0.0.1:{port}/x.png"]
        images = "".join(f'<image xlink:href="{ref}" width="9" height="9"/>' for ref in refs)
        (root / "x.svg").write_text(_svg(images + '<rect width="5" height="5"/>'), encoding="utf-8")
        loaded = _store(root).load("x.svg", "a.md", 300, 400)
        with pytest.raises(TimeoutError):
            server.accept()
    assert isinstance(loaded, Vector)

    def drawn(node: object) -> list[str]:
        names = [type(node).__name__]
        for child in getattr(node, "contents", []):
            names += drawn(child)
        return names

    assert "Image" not in drawn(loaded.drawing)
