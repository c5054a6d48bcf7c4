"""A random knowledge base of hostile link syntax, a random move, and the invariants a move with
``updateLinks`` must keep (H47): every link that resolved before resolves to the same (moved)
target, no byte outside a live link's destination changes, ``updatedPaths`` names exactly the
rewritten documents, and a refused move changes nothing.

Each generated file is a template: literal text and *slots* (the destinations of live links).
After the move the file must match the template with only the slots changed; look-alike links
in code spans, fences, indented code and HTML comments are literal text, so they must not move.
Resolution is checked with the graph's resolver over a fresh parse of the files on disk (an
oracle for images: the path, or for a bare ``![[name]]`` any file of that name).
"""

from __future__ import annotations

import hashlib
import posixpath
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from local_vector_search_mcp.index.graph import Resolver, nearest
from local_vector_search_mcp.index.port import DocumentMeta, StoredLink
from local_vector_search_mcp.markdown import parse_document
from local_vector_search_mcp.markdown.links import extract_links

FOLDERS = ["", "a", "a/b", "c d", "Ünï"]
NAMES = ["note", "Note 2", "über", "a(b)", "x.y", "readme", "Plan%", "q&a", "été", "C# x", "50%41"]
IMAGES = ["pic.png", "my pic.png", "Fig(1).png", "é.gif"]
BOM = b"\xef\xbb\xbf"


@dataclass
class Template:
    parts: list[tuple[bool, str]] = field(default_factory=list)  # (is a slot, text)

    def add(self, text: str, slot: bool = False) -> None:
        self.parts.append((slot, text))

    def text(self) -> str:
        return "".join(t for _, t in self.parts)

    def pattern(self, newline: str) -> re.Pattern[str]:
        out = []
        for slot, t in self.parts:
            t = t.replace("\n", newline)
            out.append(r"[^\r\n]+?" if slot else re.escape(t))
        return re.compile(r"\A" + "".join(out) + r"\Z", re.DOTALL)


@dataclass
class Tree:
    docs: dict[str, Template]
    newline: dict[str, str]
    bom: dict[str, bool]
    images: list[str]
    raw: dict[str, bytes]  # files that are not templates (not UTF-8)

    def write(self, root: Path) -> None:
        for rel, tpl in self.docs.items():
            data = tpl.text().replace("\n", self.newline[rel]).encode("utf-8")
            _put(root / rel, (BOM if self.bom[rel] else b"") + data)
        for rel in self.images:
            magic = b"GIF89a" if rel.endswith(".gif") else b"\x89PNG\r\n\x1a\n"
            _put(root / rel, magic + rel.encode("utf-8"))
        for rel, data in self.raw.items():
            _put(root / rel, data)


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _path(rng: random.Random, names: list[str], ext: str, taken: set[str]) -> str:
    while True:
        folder = rng.choice(FOLDERS)
        name = rng.choice(names)
        rel = posixpath.join(folder, name if name.endswith(ext) else name + ext)
        if rel.casefold() not in {t.casefold() for t in taken}:
            taken.add(rel)
            return rel


def _relative(target: str, source: str, rng: random.Random) -> str:
    rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
    if rng.random() < 0.2 and not rel.startswith("../"):
        rel = "./" + rel
    if rng.random() < 0.1 and "/" in rel and not rel.startswith("."):  # a detour: x/../x/y
        head = rel.split("/", 1)[0]
        rel = f"{head}/../{rel}"
    return rel


def _destination(rng: random.Random, written: str, allow_suffix: bool = True) -> tuple[str, str, str]:
    """(opening, destination slot, closing) for an inline destination: percent-encoded or in <...>."""
    needs = any(c in written for c in " ()<>") or "%" in written
    style = rng.random()
    if "%" in written or (needs and style < 0.5) or (not needs and style < 0.2):
        dest = quote(written, safe="/!$&'*+,;=:@-._~")
        if rng.random() < 0.3:
            dest = quote(written, safe="/")
        wrap = False
    elif needs:
        wrap = True
        dest = written
    else:
        wrap = rng.random() < 0.2
        dest = written
    suffix = ""
    if allow_suffix:
        suffix = rng.choice(["", "", "#sec", "#Sec", "?v=1", "?v=1#sec"])
    if rng.random() < 0.1:  # a backslash escape the parser resolves: note\.md is note.md
        dest = dest.replace(".", "\\.", 1)
    return ("<" if wrap else ""), dest, suffix + (">" if wrap else "")


def _wiki_name(rng: random.Random, target: str, docs: list[str]) -> str:
    stem = target[:-3]
    base = posixpath.basename(stem)
    choice = rng.random()
    if choice < 0.4:
        name = base
    elif choice < 0.7:
        name = stem
    elif choice < 0.8:
        name = base.upper() if rng.random() < 0.5 else base.lower()
    else:
        name = base + ".md"
    return name


def make_tree(rng: random.Random) -> Tree:
    taken: set[str] = set()
    docs = [_path(rng, NAMES, ".md", taken) for _ in range(rng.randint(2, 5))]
    images = [_path(rng, IMAGES, "", taken) for _ in range(rng.randint(1, 2))]
    templates: dict[str, Template] = {}
    for source in docs:
        templates[source] = _document(rng, source, docs, images)
    raw: dict[str, bytes] = {}
    if rng.random() < 0.3:  # a neighbour that is not UTF-8 but links to a document
        target = rng.choice(docs)
        raw["latin.md"] = b"# caf\xe9\n\n[x](" + quote(target).encode() + b")\n"
    newline = {d: rng.choice(["\n", "\n", "\r\n"]) for d in docs}
    bom = {d: rng.random() < 0.2 for d in docs}
    return Tree(templates, newline, bom, images, raw)


def _document(rng: random.Random, source: str, docs: list[str], images: list[str]) -> Template:
    tpl = Template()
    if rng.random() < 0.3:
        tpl.add("---\naliases: [Al " + str(docs.index(source)) + "]\n---\n")
    tpl.add("# Title\n\n## Sec\n\n")
    definitions: list[Definition] = []
    for _ in range(rng.randint(1, 4)):
        line = Template()
        for _ in range(rng.randint(1, 4)):
            _link(rng, line, source, docs, images, definitions)
            line.add(rng.choice([" ", " and ", "", "; "]))
        container = rng.random()
        if container < 0.15:
            tpl.add("> ")
        elif container < 0.3:
            tpl.add("- ")
        elif container < 0.4:
            tpl.add("1. ")
        if container >= 0.4 and container < 0.5:  # a table row: pipes in a cell are written \| (Obsidian)
            cell = Template()
            _link(rng, cell, source, docs, images, definitions)
            cell.add(rng.choice(["", " | x"]))
            tpl.add("| h | i |\n|---|---|\n| ")
            tpl.parts.extend((slot, t if slot else t.replace("|", "\\|")) for slot, t in line.parts)
            tpl.add(" | ")
            tpl.parts.extend((slot, t if slot else t.replace("|", "\\|")) for slot, t in cell.parts)
            tpl.add(" |\n\n")
            continue
        tpl.parts.extend(line.parts)
        tpl.add("\n\n")
    for label, (open_, dest, close) in definitions:
        tpl.add(f"[{label}]: {open_}")
        tpl.add(dest, slot=True)
        tpl.add(close + "\n")
    return tpl


def _hidden(rng: random.Random, text: str) -> str:
    return rng.choice([f"`{text}`", f"<!-- {text} -->", f"``{text}``"])


Definition = tuple[str, tuple[str, str, str]]


def _link(
    rng: random.Random, tpl: Template, source: str, docs: list[str], images: list[str], definitions: list[Definition]
) -> None:
    kind = rng.random()
    is_image = rng.random() < 0.3
    target = rng.choice(images if is_image else docs)
    if rng.random() < 0.1:
        target = posixpath.join(rng.choice(FOLDERS), "missing.md")
    written = _relative(target, source, rng)
    if is_image:
        if kind < 0.5:
            open_, dest, close = _destination(rng, written, allow_suffix=False)
            title = rng.choice(["", ' "t"', " 'x'"])
            if rng.random() < 0.15:
                tpl.add(_hidden(rng, f"![i]({open_}{dest}{close})"))
            tpl.add(f"![alt]({open_}")
            tpl.add(dest, slot=True)
            tpl.add(f"{close}{title})")
        else:
            name = posixpath.basename(target) if rng.random() < 0.6 else target
            if rng.random() < 0.15:
                tpl.add(_hidden(rng, f"![[{name}]]"))
            tpl.add("![[")
            tpl.add(name, slot=True)
            tpl.add(rng.choice(["]]", "|200]]"]))
        return
    if kind < 0.45:
        open_, dest, close = _destination(rng, written)
        if rng.random() < 0.2:
            tpl.add(_hidden(rng, f"[x]({open_}{dest}{close})"))
        title = rng.choice(["", "", ' "title"', " (t)"])
        tpl.add(f"[text]({open_}")
        tpl.add(dest, slot=True)
        tpl.add(f"{close}{title})")
    elif kind < 0.6:
        label = f"r{len(definitions)}"
        if rng.random() < 0.2:
            tpl.add(_hidden(rng, f"[{label}]: {written}"))
        definitions.append((label, _destination(rng, written)))
        tpl.add(rng.choice([f"[text][{label}]", f"[{label}][]", f"[{label}]"]))
    elif kind < 0.65:
        tpl.add(rng.choice(["[self](#sec)", "[[#Sec]]", "<https://example.com/x.md>", "[web](https://e.com/a.md)"]))
    else:
        name = _wiki_name(rng, target, docs)
        if rng.random() < 0.2:
            tpl.add(_hidden(rng, f"[[{name}]]"))
        tpl.add("[[")
        tpl.add(name, slot=True)
        tpl.add(rng.choice(["]]", "|alias]]", "#Sec]]", "#Sec|a b]]"]))


# --- the oracle -------------------------------------------------------------------------------------


def files_on_disk(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not any(part.startswith(".") for part in rel.split("/")):
            out[rel] = path.read_bytes()
    return out


def resolutions(files: dict[str, bytes]) -> dict[str, list[tuple[str, str | None]]]:
    """Per document, each link's (kind, what it reaches) in order; None when it reaches nothing
    (unresolved, missing, or an alias several notes carry)."""
    docs = sorted(r for r in files if r.endswith(".md"))
    parsed: dict[str, Any] = {}
    meta: dict[str, DocumentMeta] = {}
    for rel in docs:
        try:
            doc = parse_document(files[rel])
        except Exception:
            continue
        found = extract_links(doc)
        parsed[rel] = found
        meta[rel] = DocumentMeta(aliases=found.aliases, headings=found.headings, block_ids=found.block_ids)
    resolver = Resolver(docs, meta)
    images = {r for r in files if not r.endswith(".md")}
    by_name: dict[str, list[str]] = {}
    for rel in images:
        by_name.setdefault(posixpath.basename(rel).lower(), []).append(rel)
    out: dict[str, list[tuple[str, str | None]]] = {}
    for rel, found in parsed.items():
        row: list[tuple[str, str | None]] = []
        for i, link in enumerate(found.links):
            got = resolver.resolve(StoredLink(rel, i, link.kind, link.destination, link.text, link.pointer))
            reach: str | None = None
            if got is not None:  # a name several notes share reaches the one Obsidian opens (decision 914)
                if got.is_image:  # the file by path, else (a bare embed) every file of that name
                    if got.target in images:
                        reach = got.target
                    elif link.kind == "embed" and "/" not in got.target and by_name.get(got.target.lower()):
                        # several of that name: the one Obsidian opens (decision 915)
                        reach = nearest(by_name[got.target.lower()], rel)
                elif got.exists:
                    reach = got.target
            row.append((link.kind, reach))
        out[rel] = row
    return out


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_bytes(tree: Tree, src: str, dst: str, before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """Every byte outside a live destination unchanged; non-template files untouched."""
    problems = []
    for rel, tpl in tree.docs.items():
        now = dst if rel == src else rel
        data = after.get(now)
        if data is None:
            problems.append(f"{now} vanished")
            continue
        bom = BOM if tree.bom[rel] else b""
        if not data.startswith(bom):
            problems.append(f"{now}: BOM lost")
            continue
        if not tpl.pattern(tree.newline[rel]).match(data[len(bom) :].decode("utf-8")):
            problems.append(f"{now}: bytes outside link destinations changed:\n{before[rel]!r}\n{data!r}")
    for rel, data in tree.raw.items():
        if after.get(rel) != data:
            problems.append(f"{rel}: a file that is not UTF-8 was changed")
    return problems
