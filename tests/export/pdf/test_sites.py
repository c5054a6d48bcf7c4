"""A documentation site's own markup in the PDF, read back with poppler (decision 1028)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from local_vector_search_mcp.export.pdf.book import for_print
from local_vector_search_mcp.markdown import parse_text

from . import poppler
from .conftest import export

pytestmark = poppler.needs_poppler

_NOTE_PAPER, _TIP_PAPER = (0xEE, 0xF5, 0xFF), (0xEE, 0xFA, 0xF1)
_WARNING_PAPER, _CAUTION_PAPER = (0xFF, 0xF8, 0xE5), (0xFF, 0xEF, 0xEF)
_PLAIN_PAPER = (0xF2, 0xF2, 0xF2)  # a plain quote's box in the default (sans) style


def _flat_text(pdf: Path) -> str:
    return " ".join(poppler.text(pdf).split())


def test_admonition_containers_are_drawn_as_callouts_of_their_type(kb: Path) -> None:
    """Docusaurus and VitePress write admonitions as ``:::type [title]`` ... ``:::``; the PDF printed
    the markers as lines of prose ("::: note Custom Title ... :::"). Each is now a box like a GitHub
    alert of its type, headed by its title or its type's name (Docusaurus' ``caution`` is its amber
    warning); nested ones are nested boxes, closed as markdown-it-container closes them."""
    (kb / "a.md").write_text(
        "# Admonitions\n\n:::note Custom Title\n\nThe **walrus** option.\n\n:::\n\n"
        ":::tip\n\nUse the `--fast` flag.\n\n:::\n"
        "Right after the tip.\n\n"
        ":::danger[Take care]\nDeleting the narwhal database.\n:::\n\n"
        "::::info Nested\nOuter badger.\n\n:::warning\nInner ferret.\n:::\n\nOuter again.\n::::\n\n"
        "::: caution\nAmber otter.\n:::\n\nThe capybara paragraph.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "Custom Title\nThe walrus option.",
            "Tip\nUse the --fast flag.",
            "Right after the tip.",
            "Take care\nDeleting the narwhal database.",
            "Nested\nOuter badger.",
            "Warning\nInner ferret.",
            "Outer again.",
            "Caution\nAmber otter.",
            "The capybara paragraph.",
        ],
    )
    assert ":::" not in text and "[!" not in text and "[Take care]" not in text
    colours = poppler.colours(pdf)
    assert {_NOTE_PAPER, _TIP_PAPER, _WARNING_PAPER, _CAUTION_PAPER} <= colours


def test_other_containers_are_plain_boxes_with_their_titles(kb: Path) -> None:
    """VitePress' ``::: details`` (a box that opens on a click) and a type no site names an
    admonition are plain boxes headed by their title, ``details`` by "Details" without one; a
    container in a list item is a box in the item."""
    (kb / "a.md").write_text(
        "# Boxes\n\n::: details Click to see {open}\nThe hidden heron.\n:::\n\n"
        "::: details\nUntitled body.\n:::\n\n:::code-group\n```js\nconst x = 1;\n```\n:::\n\n"
        "1. Step one\n\n   :::tip In the step\n   Inside the item.\n   :::\n\n2. Step two\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "Click to see\nThe hidden heron.",
            "Details\nUntitled body.",
            "const x = 1;",
            "In the step\nInside the item.",
            "Step two",
        ],
    )
    assert ":::" not in text and "{open}" not in text and "code-group" not in text.lower()
    assert _PLAIN_PAPER in poppler.colours(pdf)


def test_myst_colon_directives_are_boxes_without_their_markers_and_options(kb: Path) -> None:
    """Decision 1138: mystmd and MyST name a colon fence's directive in braces (``:::{note} Title``,
    ``::::{tab-set}`` around ``:::{tab-item} Linux``): the scientific-python guide printed
    ":::{note} Optional Alternative", ":::{tab-item} Linux/macOS :sync: linux" and lone ":::" as prose.
    An admonition is drawn as its callout (MyST's ``hint``, ``error`` ... as the nearest), another
    directive as a plain box headed by its argument, a tab set as no box, options are not shown."""
    (kb / "a.md").write_text(
        "# MyST\n\n:::{note} Optional Alternative\nUse the walrus.\n:::\n\n"
        "::::{tab-set}\n:::{tab-item} Linux/macOS\n:sync: linux\n\n```bash\n. .venv/bin/activate\n```\n:::\n"
        ":::{tab-item} Windows\n:sync: windows\nRun the batch file.\n:::\n::::\n\n"
        ":::{hint}\nA heron hint.\n:::\n\n:::{dropdown} Setuptools-specific instructions\n:open:\nThe otter.\n:::\n\n"
        "After the boxes.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "Optional Alternative\nUse the walrus.",
            "Linux/macOS",
            ". .venv/bin/activate",
            "Windows\nRun the batch file.",
            "Hint\nA heron hint.",
            "Setuptools-specific instructions\nThe otter.",
            "After the boxes.",
        ],
    )
    assert ":::" not in text and "{" not in text and ":sync:" not in text and ":open:" not in text
    assert {_NOTE_PAPER, _TIP_PAPER, _PLAIN_PAPER} <= poppler.colours(pdf)


def test_container_fences_in_code_stay_code(kb: Path) -> None:
    """A ``:::`` in a code block is code, at the top level as in a container: it neither opens nor
    closes a box, and a tag line there is printed."""
    (kb / "a.md").write_text(
        "# Code\n\n```md\n:::note\nIn the fence.\n:::\n{% include x.html %}\n```\n\n"
        ":::tip\n```md\n:::\n```\nStill in the tip.\n:::\n\nAfter.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text, [":::note\nIn the fence.\n:::\n{% include x.html %}", "Tip", ":::", "Still in the tip.", "After."]
    )


def test_mdx_import_and_export_statements_are_left_out(kb: Path) -> None:
    """MDX compiles its top-level ``import``/``export`` statements away; the PDF printed them as
    paragraphs ("import Tabs from '@theme/Tabs';"), a multi-line ``export const`` whole. Prose that
    only starts with the word, or a shell ``export``, is no statement and stays."""
    (kb / "a.md").write_text(
        "---\ntitle: Widget\n---\nimport Tabs from '@theme/Tabs';\nimport {A, B} from \"./parts\";\n"
        "export const Highlight = ({children}) => (\n  <span>{children}</span>\n);\n\n"
        "# Widget\n\nimport the data from 'x.csv' first.\n\nexport PATH=/opt/bin\n\n"
        "- import Y from 'y'\n\nThe pelican.\n\nexport default ({ children }) => <Layout>{children}</Layout>\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = _flat_text(pdf)
    poppler.in_order(text, ["Widget", "import the data from", "export PATH=/opt/bin", "import Y from", "The pelican."])
    assert "@theme" not in text and "./parts" not in text and "Highlight" not in text and "Layout" not in text


def test_liquid_and_hugo_tag_lines_and_kramdown_attributes_are_left_out(kb: Path) -> None:
    """Jekyll and Hugo pages printed ``{% include toc.html %}``, ``{: .lead}``, ``{{% notice %}}``
    and ``{{< figure ... >}}`` lines as text. A tag alone on its lines is left out, and so is the
    body of a Liquid ``comment`` (never shown) and the ``* TOC`` list a ``{:toc}`` marks; the body of
    ``raw`` and of ``capture`` (shown where its variable is used) is printed. Inline tags and
    ``{{ variables }}`` stay (their value is the site's), as does ``{{</* x */>}}``, Hugo's way to
    show a shortcode."""
    (kb / "a.md").write_text(
        "---\ntitle: Liquid\n---\n{% include toc.html %}\n\n# Start\n\n* TOC\n{:toc}\n\n"
        'Welcome to {{ site.title }}. See {{< ref "other.md" >}} now.\n{: .lead}\n\n'
        "> Configure the jaguar.\n{: .note}\n\n{% raw %}\nUse {{ variable }} for the cougar.\n{% endraw %}\n\n"
        "{% comment %}\nA private puma.\n{% endcomment %}\n\n{%- capture note -%}\nCaptured lynx.\n{%- endcapture -%}\n"
        "{% include code-block.html\n    rest=note %}\n\n"
        '{{% notice warning %}}\nFlush the kestrel.\n{{% /notice %}}\n\n{{< figure src="/owl.png" >}}\n\n'
        '{{</* figure src="x" */>}}\n\nThe albatross.\n',
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = _flat_text(pdf)
    poppler.in_order(
        text,
        [
            "Start",
            'Welcome to {{ site.title }}. See {{< ref "other.md" >}} now.',
            "Configure the jaguar.",
            "Use {{ variable }} for the cougar.",
            "Captured lynx.",
            "Flush the kestrel.",
            '{{</* figure src="x" */>}}',
            "The albatross.",
        ],
    )
    for gone in ("{%", "{:", "TOC", "puma", "rest=", "notice", "owl"):
        assert gone not in text


def test_a_page_without_site_markup_is_read_as_before() -> None:
    """Markup that only looks like a site's is left as it was: a fence in code, a ``{{ variable }}``,
    prose starting "import", a bare ``:::`` that closes nothing, a tag inside a line."""
    for page in (
        "# A\n\nPlain *text*.\n",
        "# A\n\n```\n:::note\n{% include x %}\nimport X from 'y'\n```\n\n"
        "Use {{ site.url }} and {% link a.md %} inline.\n\nimport the data from 'x'.\n\n:::\n\n"
        "{ not: an attribute list }\n",
    ):
        doc = parse_text(page)
        assert for_print(doc, "a.md", print) is doc


def test_a_line_of_many_tags_is_read_in_linear_time() -> None:
    # each tag's body stops at its own closing mark: `.*?` ran past it, and a line of 24 tags then
    # took seconds (two more tags, four times the time)
    from local_vector_search_mcp.export.pdf import sites

    started = time.perf_counter()
    assert sites._TAG_LINE.match("{% x %}" * 40 + " text") is None
    assert sites._TAG_LINE.match("{% x %}" * 40) is not None
    assert sites._TAG_LINE.match("{{< a >}} {{% b %}} {: .note}") is not None
    assert time.perf_counter() - started < 1.0


def test_myst_directives_in_code_fences_are_read_as_their_colon_form(kb: Path) -> None:
    """Decision 1163: MyST writes most directives in backtick fences (pip: 13 ```` ```{note} ````, 21
    ``{versionadded}``, 15 ``{toctree}``); they printed as code blocks showing ``{note}``. A fenced
    admonition is now its callout, a version note a box headed "New in version 1.3", a tab a box, a
    longer fence holding a code block keeps it as code inside the box, ``{code-block}`` a code block
    without its options, ``{toctree}`` is left out; another directive (``{eval-rst}``) stays code."""
    (kb / "a.md").write_text(
        "# Fenced\n\n```{note}\nA heron note with `code`.\n```\n\n```{versionadded} 1.3\nThe otter option.\n```\n\n"
        "````{warning} Careful\nBody before code.\n```python\nprint('inside')\n```\nAfter code.\n````\n\n"
        "```{tab} Unix\nThe badger tab.\n```\n\n"
        "```{code-block} python\n:linenos:\n:caption: Setup\nx = 1\n```\n\n"
        "```{toctree}\n:maxdepth: 1\n\nauthentication\ncaching\n```\n\n"
        "```{eval-rst}\n.. note:: stays code\n```\n\nAfter all.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "Note\nA heron note with code.",
            "New in version 1.3\nThe otter option.",
            "Careful\nBody before code.",
            "print('inside')",
            "After code.",
            "Unix\nThe badger tab.",
            "x = 1",
            ".. note:: stays code",
            "After all.",
        ],
    )
    for gone in ("{note}", "{versionadded}", "{warning}", "{tab}", "{code-block}", ":linenos:", "```", "caching"):
        assert gone not in text, gone
    assert {_NOTE_PAPER, _WARNING_PAPER, _PLAIN_PAPER} <= poppler.colours(pdf)


def test_myst_roles_show_their_text_and_targets_label_their_heading(kb: Path) -> None:
    """Decision 1163: ``{ref}`Install <install>``` printed as written, and so did the ``(install)=``
    target line above the heading it labels. A cross-reference role now shows its title, or the
    title of the heading its label targets, linked to it (in another chapter too); ``{pep}`8`` is
    "PEP 8", ``{sub}`` is lowered, a role of a domain (``{py:func}``, ``{file}``) is code; the
    target line is left out."""
    (kb / "SUMMARY.md").write_text("# Book\n\n- [Setup](setup.md)\n- [Usage](usage.md)\n", encoding="utf-8")
    (kb / "setup.md").write_text("# Setup\n\n(install-pip)=\n\n## Installing the heron\n\nSteps.\n", encoding="utf-8")
    (kb / "usage.md").write_text(
        "# Usage\n\nSee {ref}`the install steps <install-pip>`, {ref}`install-pip`, {doc}`setup`, "
        "{term}`wheel`, {pep}`8`, H{sub}`2`O, {py:func}`~pkg.mod.walrus` and {ref}`Unknown <nowhere>`.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "SUMMARY.md")
    assert warnings == []
    text = _flat_text(pdf)
    assert (
        "See the install steps, Installing the heron, Setup, wheel, PEP 8, H 2 O, walrus and Unknown." in text
        or "See the install steps, Installing the heron, Setup, wheel, PEP 8, H2O, walrus and Unknown." in text
    ), text
    assert "{" not in text and "(install-pip)=" not in text and "`" not in text
    usage = (kb / "usage.md").read_text(encoding="utf-8")
    (kb / "usage.md").write_text(usage.replace("{ref}", "").replace("{doc}", ""), encoding="utf-8")
    unlinked, _ = export(kb, "SUMMARY.md", out=kb / "plain.pdf")
    links = len(re.findall(rb"/Subtype\s*/Link", pdf.read_bytes()))
    assert links == len(re.findall(rb"/Subtype\s*/Link", unlinked.read_bytes())) + 3  # two refs, one doc


def _png(path: Path, size: tuple[int, int], colour: tuple[int, int, int]) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)


def test_myst_images_and_figures_are_drawn_with_the_caption_under_the_figure(kb: Path) -> None:
    """Decision 1176: ```` ```{figure} img/heron.png ```` and ``:::{image}`` printed as code blocks
    showing the path and options. Now each is the picture, through the same store as a Markdown
    picture (a path outside the root is refused with its warning), the figure's caption in
    italics under it and its legend after; the options are not shown."""
    _png(kb / "img" / "heron.png", (210, 110), (200, 40, 40))
    _png(kb / "img" / "otter.png", (90, 90), (40, 40, 200))
    _png(kb.parent / "secret.png", (50, 50), (0, 0, 0))
    (kb / "a.md").write_text(
        "# Figures\n\n```{figure} img/heron.png\n:alt: A heron\n:width: 200px\n:name: fig-heron\n\n"
        "The heron *caption*.\n\nA legend line.\n```\n\n:::{image} img/otter.png\n:alt: An otter\n:::\n\n"
        "```{image} ../secret.png\n```\n\nAfter all.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert len(warnings) == 1 and "../secret.png" in warnings[0], warnings
    drawn = sorted((int(row["width"]), int(row["height"])) for row in poppler.images(pdf))
    assert drawn == [(90, 90), (210, 110)], drawn
    text = poppler.text(pdf)
    poppler.in_order(text, ["Figures", "The heron caption.", "A legend line.", "After all."])
    for gone in ("{figure}", "{image}", ":alt:", ":width:", "img/heron.png", "img/otter.png", "fig-heron"):
        assert gone not in text, gone
    # the caption is set in the oblique face (the legend and the rest of the text are not)
    assert any("Oblique" in font["name"] or "Italic" in font["name"] for font in poppler.fonts(pdf))


def test_a_list_table_is_a_table_with_its_header_rows(kb: Path) -> None:
    """Decision 1176: a ``{list-table}`` (rows as items of a list, cells as the items of each) was
    printed as a code block. It is now a table: each row's cells side by side, a cell's lines and
    Markdown joined (code spans as code), a list in a cell one item a line; its ``:header-rows:``
    set in bold as a table's header is, and no row in bold without it."""
    table = (
        "```{list-table}\n:header-rows: 1\n:widths: 1 2\n\n* - Animal\n  - Food\n* - Heron\n  - `fish`, frogs\n"
        "    and more\n* - Otter\n  - - crabs\n    - clams\n```\n\nAfter the table.\n"
    )
    (kb / "a.md").write_text(table, encoding="utf-8")
    (kb / "b.md").write_text(table.replace(":header-rows: 1", ":header-rows: 0"), encoding="utf-8")
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    rows = [" ".join(line.split()) for line in poppler.layout(pdf).splitlines() if line.strip()]
    assert rows[:5] == ["Animal Food", "Heron fish, frogs and more", "Otter - crabs", "- clams", "After the table."], (
        rows
    )
    assert any("Bold" in font["name"] for font in poppler.fonts(pdf))
    assert any("Mono" in font["name"] for font in poppler.fonts(pdf))  # `fish` is code
    for gone in ("{list-table}", ":header-rows:", "* -", "`"):
        assert gone not in poppler.text(pdf), gone
    plain, _ = export(kb, "b.md")
    assert not any("Bold" in font["name"] for font in poppler.fonts(plain))
    assert "Animal Food" in " ".join(poppler.layout(plain).split())


def test_a_myst_include_prints_the_file_in_place_and_refuses_cycles_and_escapes(kb: Path) -> None:
    """Decision 1176: ```` ```{include} ../_partials/pyproject.md ```` (scientific-python's guides)
    printed an empty code block. The included Markdown file is now printed where the directive
    stands (its path relative to the including file; ``:start-after:``/``:end-before:`` cut it; its
    own directives read in turn). A file that includes its includer, a path out of the root and a
    missing file each give a warning and a line naming them in place, and the export goes on."""
    (kb / "_partials").mkdir()
    (kb / "_partials" / "part.md").write_text(
        "Not shown\n<!-- START -->\n## Included heading\n\nThe included **badger**.\n\n"
        "```{include} ../guides/a.md\n```\n\n```{note}\nA nested note.\n```\n<!-- END -->\nNot shown either\n",
        encoding="utf-8",
    )
    (kb / "guides").mkdir()
    (kb / "guides" / "a.md").write_text(
        "# Guide\n\n```{include} ../_partials/part.md\n:start-after: <!-- START -->\n:end-before: <!-- END -->\n```\n\n"
        "```{include} ../../outside.md\n```\n\n:::{include} missing.md\n:::\n\nAfter all.\n",
        encoding="utf-8",
    )
    (kb.parent / "outside.md").write_text("SECRET outside text\n", encoding="utf-8")
    pdf, warnings = export(kb, "guides/a.md")
    assert len(warnings) == 3, warnings
    assert "includes the file that includes it" in warnings[0]
    assert "../../outside.md" in warnings[1] and "missing.md" in warnings[2]
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "Guide",
            "Included heading",
            "The included badger.",
            "Not included: ../guides/a.md",
            "Note\nA nested note.",
            "Not included: ../../outside.md",
            "Not included: missing.md (the file does not exist)",
            "After all.",
        ],
    )
    for gone in ("Not shown", "SECRET", "{include}", "START", "{note}"):
        assert gone not in text, gone


def test_an_html_details_block_is_a_box_headed_by_its_summary(kb: Path) -> None:
    """Decision 1177: ``<details><summary>See notes</summary>`` printed its summary as a line of
    small text and the body after it unboxed, and opensearch-docs' ``<details markdown="block">``
    with its summary on lines of its own the same. Each is now a plain box headed by its summary in
    bold (nested ones inside it), its Markdown body read as Markdown."""
    (kb / "a.md").write_text(
        "# Details\n\n<details><summary>See <b>the notes</b></summary>\n\n### Inside the box\n\nThe heron text.\n\n"
        '</details>\n\n<details open markdown="block">\n  <summary>\n    YAML template\n  </summary>\n'
        "  {: .text-delta}\n\n```yaml\nkey: 1\n```\n\n<details>\n\nNested body.\n\n</details>\n</details>\n\n"
        "After all.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    text = poppler.text(pdf)
    poppler.in_order(
        text,
        [
            "See the notes\nInside the box\nThe heron text.",
            "YAML template\nkey: 1",
            "Details\nNested body.",
            "After all.",
        ],
    )
    for gone in ("summary", "details", "<", "text-delta"):
        assert gone not in text, gone
    assert _PLAIN_PAPER in poppler.colours(pdf)


def test_html_blocks_keep_line_breaks_pictures_and_callout_boxes(kb: Path) -> None:
    """Decision 1177: an HTML block's text was run together into one line (``<br>`` and ``<p>``
    as spaces) and a Foundation ``<div class="callout warning">`` printed as plain small text. A
    ``<br>`` now breaks the line, a block's tags (``<p>``, ``<div>``, ``<li>``) start a new
    paragraph, the ``<img>`` of a centred banner is drawn, a callout ``<div>`` is a box of its
    colours, and the text of unknown tags is kept."""
    _png(kb / "img" / "logo.png", (64, 64), (40, 160, 40))
    (kb / "a.md").write_text(
        '# Html\n\n<p align="center"><img src="img/logo.png" width="60"><br>Banner line one<br/>Banner line two</p>\n\n'
        '<div class="callout warning">\n  <p>First callout paragraph.</p>\n'
        "  <p>Second <x-unknown>kept</x-unknown> one.</p>\n"
        "</div>\n\nAfter all.\n",
        encoding="utf-8",
    )
    pdf, warnings = export(kb, "a.md")
    assert warnings == []
    assert len(poppler.images(pdf)) == 1
    text = poppler.text(pdf)
    poppler.in_order(
        text, ["Banner line one\nBanner line two", "First callout paragraph.\nSecond kept one.", "After all."]
    )
    assert "Banner line one Banner" not in text and "paragraph. Second" not in text
    assert _WARNING_PAPER in poppler.colours(pdf)
