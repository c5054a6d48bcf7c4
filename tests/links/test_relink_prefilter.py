"""plan_move parses only the files that may hold a link the move rewrites (decision 301): the
plan must be exactly the one a parse of every file gives."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local_vector_search_mcp.index import relink
from local_vector_search_mcp.index.relink import plan_move

SRC = "guides/Übersicht.md"  # a capital letter outside ASCII: bytes.lower() leaves it alone

TRICKY = {
    "plain.md": "[a](guides/Übersicht.md) and [b](guides/Übersicht.md#teil)\n",
    "encoded.md": "[a](guides/%C3%9Cbersicht.md) and [b](guides/%C3%9Cbersich%74.md)\n",
    "dots.md": "[a](./guides/./Übersicht.md) [b](guides/x/../Übersicht.md) [c](guides/Übersicht.md/.)\n",
    "angle.md": "[a](<guides/Übersicht.md>)\n",
    "refs.md": '[a][r] [b][s]\n\n[r]: guides/Übersicht.md\n[s]:\n  guides/Übersicht.md "t"\n',
    "nested/up.md": "[a](../guides/Übersicht.md)\r\n",
    "guides/same.md": "> [a](Übersicht.md)\n",
    "wiki.md": "[[übersicht]] and ![[ÜBERSICHT#Teil]] and [[guides/Übersicht|alias]]\n",
    "dst-name.md": "[[Neu]]\n\n# other\n",
    "Neu.md": "# a note called Neu, made ambiguous by the move\n",
    "other/Übersicht.md": "# another file with the same name\n",
    "mentions.md": "Übersicht.md is mentioned here, and [x](other/Übersicht.md) links elsewhere.\n",
    "code.md": "```\n[a](guides/Übersicht.md)\n```\n",
    "escaped.md": "[a](guides/Übersicht\\.md)\n",
    # a srcset candidate after a comma and no space (decision 1156)
    "srcset.md": '<img srcset="a.png 1x,guides/Übersicht.md 2x">\n',
}


def _write(root: Path, files: dict[str, str]) -> list[str]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    (root / SRC).parent.mkdir(parents=True, exist_ok=True)
    (root / SRC).write_bytes(b"# \xc3\x9cbersicht\n\n[back](../plain.md)\n")
    return sorted({*files, SRC})


def _unfiltered(monkeypatch: pytest.MonkeyPatch, root: Path, docs: list[str], dst: str) -> relink.RelinkPlan:
    with monkeypatch.context() as m:
        m.setattr(relink, "_may_link", lambda *args: True)
        return plan_move(root, docs, {}, SRC, dst)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files a plan parses from now on (its calls of ``_relink_file``), in order."""
    parsed: list[str] = []
    real = relink._relink_file

    def counting(raw: bytes, rel: str, *args: object) -> bytes | None:
        parsed.append(rel)
        return real(raw, rel, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(relink, "_relink_file", counting)
    return parsed


@pytest.mark.parametrize("dst", ["manual/Neu.md", "guides/Übersicht2.md", "Übersicht.md"])
def test_the_prefilter_keeps_every_file_a_full_parse_rewrites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dst: str
) -> None:
    docs = _write(tmp_path, TRICKY)
    plan = plan_move(tmp_path, docs, {}, SRC, dst)
    assert plan == _unfiltered(monkeypatch, tmp_path, docs, dst)
    # the names with a capital non-ASCII letter, the encodings and every written form are kept
    assert {
        "plain.md",
        "encoded.md",
        "dots.md",
        "refs.md",
        "nested/up.md",
        "guides/same.md",
        "wiki.md",
        "srcset.md",
    } <= set(plan.edits)
    assert not {"mentions.md", "code.md", "other/Übersicht.md"} & set(plan.edits)


def test_files_naming_only_another_file_of_the_same_name_are_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"f{i}/index.md": f"[up](../index.md) [here](index.md) [src](../{SRC})\n" for i in range(5)}
    files.update({f"g{i}/page.md": "[a](index.md) [b](../f1/index.md)\n" for i in range(5)})
    docs = _write(tmp_path, files)
    parsed = _count_parses(monkeypatch)
    plan = plan_move(tmp_path, docs, {}, SRC, "moved/Übersicht.md")
    assert sorted(parsed) == sorted([SRC, *(f"f{i}/index.md" for i in range(5))])
    assert sorted(plan.edits) == [f"f{i}/index.md" for i in range(5)]


def test_a_file_with_escapes_that_names_another_file_of_the_same_name_is_not_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 940: a file holding ``&`` or ``\\`` anywhere (prose, a table, code) and linking some
    other ``index.md`` was parsed on every move of an ``index.md``: 149 of opensearch-docs' 1,758
    files instead of 56, three times the plan's time. Only a line whose unescaped text reaches the
    moved file makes a file worth parsing."""
    files = {
        f"f{i}/index.md": "Fish & chips, C:\\temp and a\\_b.\n\n[up](../index.md) [here](index.md)\n" for i in range(5)
    }
    files["x/esc.md"] = "Q&A\n\n[a](../hub/index\\.md) and [b](../index.md)\n"
    files["x/ent.md"] = "[a](../hub/index&#46;md#part)\n"
    files["x/far.md"] = "A & B.\n\nSee [it](\n../hub/index.md)\n"
    files["index.md"] = "# Root\n"
    docs = _write(tmp_path, {**files, "hub/index.md": "# Hub\n"})
    parsed = _count_parses(monkeypatch)
    plan = plan_move(tmp_path, docs, {}, "hub/index.md", "moved/index.md")
    assert sorted(parsed) == ["hub/index.md", "x/ent.md", "x/esc.md", "x/far.md"]
    assert sorted(plan.edits) == ["x/ent.md", "x/esc.md", "x/far.md"]
    assert plan.edits["x/esc.md"][1] == b"Q&A\n\n[a](../moved/index.md) and [b](../index.md)\n"
    assert plan.edits["x/ent.md"][1] == b"[a](../moved/index.md#part)\n"
    assert plan == _unfiltered_move(monkeypatch, tmp_path, docs, "hub/index.md", "moved/index.md")


def _unfiltered_move(
    monkeypatch: pytest.MonkeyPatch, root: Path, docs: list[str], src: str, dst: str
) -> relink.RelinkPlan:
    with monkeypatch.context() as m:
        m.setattr(relink, "_may_link", lambda *args: True)
        return plan_move(root, docs, {}, src, dst)


_FORMS = st.sampled_from(["[a]({})", "[a](<{}>)", "![i]({})", "[a][r]\n\n[r]: {}", "[[{}]]", "![[{}]]", "{}"])


@st.composite
def _destination(draw: st.DrawFn) -> str:
    """A written destination of ``SRC`` from ``nested/x/``: relative, dotted, percent-encoded at random."""
    parts = ["..", "..", *draw(st.sampled_from([[], ["nested", ".."], ["."]])), "guides", "Übersicht.md"]
    text = "/".join(parts)
    encode = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    out = "".join(quote(ch, safe="") if flag and ch not in "/." else ch for ch, flag in zip(text, encode, strict=True))
    # written with backslash escapes or entities (decisions 451, 940): read unescaped by the parser
    escape = draw(st.sampled_from([{}, {".md": "\\.md"}, {"/": "\\/"}, {"Ü": "&Uuml;"}, {".md": "&#46;md"}]))
    for plain, written in escape.items():
        out = out.replace(plain, written)
    return out + draw(st.sampled_from(["", "#teil", "?q=1"]))


# the suite-wide profile suppresses too_slow (a loaded machine draws slowly); a list given here replaces it
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    form=_FORMS,
    dest=_destination(),
    wiki=st.sampled_from(["übersicht", "ÜBERSICHT", "guides/Übersicht", "neu"]),
    noise=st.sampled_from(["", "\nQ&A: see other/Übersicht.md, a\\_b\n", "\n[x](Übersicht.md) & \\*\n"]),
)
def test_any_written_form_is_planned_as_a_full_parse_plans_it(
    tmp_path_factory: pytest.TempPathFactory, form: str, dest: str, wiki: str, noise: str
) -> None:
    root = tmp_path_factory.mktemp("kb")
    target = wiki if form.startswith(("[[", "![[")) else dest
    text = "Text " + form.format(target) + "\n" + noise
    docs = _write(root, {"nested/x/doc.md": text, "neu.md": "# Neu\n"})
    plan = plan_move(root, docs, {}, SRC, "b/Neu.md")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(relink, "_may_link", lambda *args: True)
        assert plan == plan_move(root, docs, {}, SRC, "b/Neu.md")


def test_a_link_written_with_escapes_is_found_next_to_a_plain_mention(tmp_path: Path) -> None:
    """Decision 451: ``note.md`` named in plain text and linked as ``../note\\.md`` (an escape) and
    ``../note&#46;md`` (an entity); the pre-filter used to stop at the plain mention (which reaches
    no file from ``x/``) and never parse the file."""
    (tmp_path / "x").mkdir()
    (tmp_path / "note.md").write_bytes(b"# N\n")
    (tmp_path / "x/a.md").write_bytes(b"About note.md:\n\nsee [n](../note\\.md) and [m](../note&#46;md)\n")
    plan = plan_move(tmp_path, ["note.md", "x/a.md"], {}, "note.md", "sub/note.md")
    assert plan.edits["x/a.md"][1] == b"About note.md:\n\nsee [n](../sub/note.md) and [m](../sub/note.md)\n"


def test_a_link_typed_in_another_normal_form_is_planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decision 943: a Markdown link reaches a file whose name differs only in Unicode normalisation
    (decision 505), but the pre-filter looked for the name's bytes as the file has them, so a
    move of ``Café.md`` written NFD (a Mac's copy) skipped every note linking it as typed (NFC),
    percent-encoded or not, and left those links broken. Both ways round."""
    for on_disk, typed in (("NFD", "NFC"), ("NFC", "NFD")):
        root = tmp_path / on_disk
        name = unicodedata.normalize(on_disk, "Café.md")
        folder = unicodedata.normalize(on_disk, "Thé")
        written = unicodedata.normalize(typed, "Café.md")
        files = {
            "x/plain.md": f"[c](../{folder}/{written})\\n",
            "x/encoded.md": f"[c](../{quote(unicodedata.normalize(typed, 'Thé'))}/{quote(written)}#part)\\n",
            f"{folder}/same.md": f"See [c]({written}) and [d](./{unicodedata.normalize(typed, 'Café.md')}).\\n",
            "x/other.md": "[o](../other/Café.md)\\n",
        }
        for rel, text in {**files, f"{folder}/{name}": "# Café\\n"}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(text.encode("utf-8"))
        docs = sorted(relink.markdown_files(root))
        src = f"{folder}/{name}"
        plan = plan_move(root, docs, {}, src, "moved/" + name)
        assert sorted(plan.edits) == sorted(["x/plain.md", "x/encoded.md", f"{folder}/same.md"]), on_disk
        assert plan == _unfiltered_move(monkeypatch, root, docs, src, "moved/" + name)


def test_a_file_whose_only_link_is_an_unquoted_img_src_is_planned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decision 717: ``<img src=img/pic.png>`` (unquoted, as HTML allows) is rewritten by a move
    (decision 761), but the pre-filter looked for the path after a space, quote or bracket only, so
    a note holding no other link to the picture was never parsed and kept the broken path. A name
    outside ASCII typed in the other normal form (decision 716) the same."""
    for stem in ("pic", unicodedata.normalize("NFC", "café")):
        root = tmp_path / stem
        (root / "img").mkdir(parents=True)
        (root / "img" / f"{stem}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
        typed = unicodedata.normalize("NFD", stem)
        (root / "a.md").write_text(f"# A\n\n<img src=img/{typed}.png width=9>\n", encoding="utf-8")
        (root / "b.md").write_text(f"# B\n\n<p><img alt=x src={typed}.png></p>\n", encoding="utf-8")
        (root / "img" / "b.md").write_text(f"# B\n\n<p><img alt=x src={typed}.png></p>\n", encoding="utf-8")
        docs = relink.markdown_files(root)
        plan = plan_move(root, docs, {}, f"img/{stem}.png", f"new/{stem}.png", is_document=False)
        assert {rel: new.decode() for rel, (_, new) in plan.edits.items()} == {
            "a.md": f"# A\n\n<img src=new/{stem}.png width=9>\n",
            "img/b.md": f"# B\n\n<p><img alt=x src=../new/{stem}.png></p>\n",
        }, stem
        with monkeypatch.context() as m:
            m.setattr(relink, "_may_link", lambda *args: True)
            assert plan == plan_move(root, docs, {}, f"img/{stem}.png", f"new/{stem}.png", is_document=False)


def test_a_move_sweeping_more_files_than_the_parse_cache_keeps_the_cached_documents(tmp_path: Path) -> None:
    """Decision 639: a move parses every file that may link the moved one (35 on opensearch-docs'
    hub), more than the parse cache holds; those parses must not evict what an agent has open."""
    from local_vector_search_mcp.markdown import document

    linking = {f"l{i}.md": f"[link {i}]({SRC})\n" for i in range(document.CACHE_SIZE + 8)}
    docs = _write(tmp_path, {**linking, "open.md": "# kept\n\nan agent reads this one\n"})
    document.clear_cache()
    held = document.parse_document((tmp_path / "open.md").read_bytes())
    plan = plan_move(tmp_path, docs, {}, SRC, "moved.md")
    assert len(plan.edits) == len(linking)
    assert document.parse_document((tmp_path / "open.md").read_bytes()) is held


ASCII_SRC = "guides/index.md"  # a name the pre-filter looks for in bytes, line by line (decision 645)


@st.composite
def _ascii_destination(draw: st.DrawFn) -> str:
    """A written destination of ``ASCII_SRC`` from ``nested/x/``: any character percent-encoded
    (either hex case), the extension's dot escaped or an entity."""
    text = "../../guides/index.md"
    encoded = draw(st.booleans())  # else only escapes: the percent-decoding must not find it first
    out = ""
    for ch in text:
        form = draw(st.sampled_from(["plain", "upper", "lower"])) if encoded and ch != "/" else "plain"
        out += ch if form == "plain" else (f"%{ord(ch):02X}" if form == "upper" else f"%{ord(ch):02x}")
    escape = draw(st.sampled_from([{}, {".md": "\\.md"}, {".md": "&#46;md"}, {".md": "&period;md"}]))
    for plain, written in escape.items():
        out = out.replace(plain, written)
    return out


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    dest=_ascii_destination(),
    noise=st.sampled_from(
        ["", "\n100% & more: a\\_b %2e\n", "\nsee index.md & \\*\n", "\r\n[x](%69ndex.md)\r\n", "\n&amp; %%\n"]
    ),
    first=st.booleans(),
)
def test_a_name_encoded_or_escaped_on_one_line_of_many_is_planned_as_a_full_parse_plans_it(
    tmp_path_factory: pytest.TempPathFactory, dest: str, noise: str, first: bool
) -> None:
    """Decision 645: the pre-filter percent-decodes only the lines holding a `%` and unescapes only
    those holding a `\\` or `&` (it decoded the whole file before); a destination never spans
    lines, so the plan is still the one a parse of every file gives."""
    root = tmp_path_factory.mktemp("kb")
    link = f"Text [a]({dest})\n"
    text = link + noise if first else noise + "\n" + link
    (root / "guides").mkdir()
    (root / ASCII_SRC).write_bytes(b"# Index\n")
    (root / "nested/x").mkdir(parents=True)
    (root / "nested/x/doc.md").write_bytes(text.encode("utf-8"))
    docs = [ASCII_SRC, "nested/x/doc.md"]
    plan = plan_move(root, docs, {}, ASCII_SRC, "b/new.md")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(relink, "_may_link", lambda *args: True)
        assert plan == plan_move(root, docs, {}, ASCII_SRC, "b/new.md")
