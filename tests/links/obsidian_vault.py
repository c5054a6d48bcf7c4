"""Random vaults laid out as Obsidian users keep them, each link written with the answer it must
give (H53, decisions 480-484).

The answer comes from how the link was made, not from the resolver: a link is written *for* a
chosen note in one of the forms Obsidian itself writes or accepts for that note (its name when no
other note shares it, its root path, a relative ``./``/``../`` path, an alias, the name in another
case or Unicode normal form, with ``.md``), with a fragment that names a heading, a heading chain
or a block; or for a name several notes share (no note of that name at the root), which must reach
the one Obsidian opens (in the source's folder, else nearest the root, then by path order; decision
914) with those notes as candidates; or for a name no note has. The links sit where
Obsidian users put them: paragraphs, callouts, nested lists, table cells (``\\|`` before the
alias), footnotes, front-matter properties; embeds of notes and of attachments that exist or not.
The expected orphans and missing attachments follow from the same construction.
"""

from __future__ import annotations

import posixpath
import random
import unicodedata
from dataclasses import dataclass, field

FOLDERS = ["", "Projects", "Projects/2024", "Areas/Health", "Archive", "Daily/2024-01"]
NAMES = [
    "Index", "Plan", "Meeting.notes", "Café", "Ünïcode Ölçek", "🚀 Launch", "Note (draft)", "v1.2 release",
    "Ann O'Lee", "Roadmap", "Reading List", "2024-01-05", "C++ tips", "Über uns", "Weekly review",
]  # fmt: skip
HEADINGS = ["Goals", "Open questions", "Next steps: soon", "Résumé", "Week 1"]


@dataclass
class Note:
    path: str
    headings: list[tuple[int, str]]
    block: str
    alias: str
    lines: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Expected:
    """One link's answer in kb_links: ``target`` as reported, and for a resolved link its fragment check."""

    target: str
    exists: bool
    candidates: tuple[str, ...] | None = None
    fragment_found: bool | None = None


@dataclass
class Vault:
    files: dict[str, bytes]
    outgoing: dict[str, list[Expected]]  # per note, in the order its links are written
    orphans: list[str]
    missing_images: list[str]  # "source -> target as written"


def _key(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def make_vault(seed: int, notes: int = 40) -> Vault:
    rng = random.Random(seed)
    vault: dict[str, Note] = {}
    while len(vault) < notes:
        name = rng.choice(NAMES)
        if name == "Café" and rng.random() < 0.5:
            name = unicodedata.normalize("NFD", name)  # a file a Mac named
        path = posixpath.join(rng.choice(FOLDERS), f"{name}.md")
        if any(_key(p) == _key(path) for p in vault):
            continue
        levels = sorted(rng.sample(HEADINGS, 3), key=HEADINGS.index)
        headings = [(1, levels[0]), (2, levels[1]), (3, levels[2])]
        vault[path] = Note(path, headings, f"b{len(vault)}", f"aka {len(vault)}")
    paths = sorted(vault)
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(_key(posixpath.basename(path)[:-3]), []).append(path)
    outgoing: dict[str, list[Expected]] = {p: [] for p in paths}
    reached: set[str] = set()
    missing_images: list[str] = []
    attachments = {f"attachments/pic{i}.png" for i in range(3)} | {"attachments/paper.pdf"}

    def name_forms(source: str, target: str) -> list[str]:
        stem = target[:-3]
        base = posixpath.basename(stem)
        forms = [stem, stem + ".md", _relative(source, stem)]
        if len(by_name[_key(base)]) == 1:
            nfc = unicodedata.normalize("NFC", base)
            forms += [base, base.lower(), base + ".md", nfc, unicodedata.normalize("NFD", base)]
        return forms

    for source in paths:
        note = vault[source]
        for _ in range(rng.randrange(1, 7)):
            roll = rng.random()
            if roll < 0.6:  # a link made for one note
                target = rng.choice(paths)
                written = rng.choice([*name_forms(source, target), vault[target].alias])
                fragment, found = _fragment(rng, vault[target])
                expected = Expected(target, True, None, found)
                if target != source:
                    reached.add(target)
            elif roll < 0.7:  # a name several notes share and none holds at the root
                shared = [n for n, ps in by_name.items() if len(ps) > 1 and all("/" in p for p in ps)]
                if not shared:
                    continue
                key = rng.choice(sorted(shared))
                written = posixpath.basename(by_name[key][0])[:-3]
                fragment, found = "", None
                folder = posixpath.dirname(source)
                opened = sorted(by_name[key], key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), p))[0]
                expected = Expected(opened, True, tuple(sorted(by_name[key])))
                if opened != source:
                    reached.add(opened)
            elif roll < 0.8:  # a name no note has
                written, fragment, found = f"Nowhere {rng.randrange(5)}", "", None
                expected = Expected(f"{written}.md", False)
            else:  # an attachment, there or not
                file = rng.choice(sorted(attachments | {"attachments/gone.png", "attachments/gone.pdf"}))
                name = posixpath.basename(file)
                size = rng.choice(["", "|300", "|120x80"])
                note.lines.append(f"Embedded ![[{name}{size}]] here.")
                if file not in attachments:
                    missing_images.append(f"{source} -> {name}")
                continue
            place = rng.randrange(7)
            if place == 6 and "#" not in fragment:  # a front-matter property (Obsidian 1.4+)
                note.properties.append(f"[[{written}{fragment}]]")
                outgoing[source].insert(len(note.properties) - 1, expected)
                continue
            outgoing[source].append(expected)
            embed = "!" if rng.random() < 0.15 else ""
            alias = rng.choice(["", "shown text"])
            link = f"{embed}[[{written}{fragment}{'|' + alias if alias else ''}]]"
            if place == 0:
                note.lines.append(f"See {link} for more.")
            elif place == 1:
                note.lines.append(f"> [!note] Callout\n> with {link} inside")
            elif place == 2:
                note.lines.append(f"- item\n  - nested {link}")
            elif place == 3:  # Obsidian escapes the alias pipe inside a table
                cell = link.replace("|", "\\|")
                note.lines.append(f"| a | b |\n|---|---|\n| {cell} | x |")
            elif place == 4:
                n = len(note.lines)
                note.lines.append(f"Claim[^{n}].\n\n[^{n}]: Source {link}")
            else:
                note.lines.append(f"1. step with {link}")
    files = {path: _render(vault[path]).encode("utf-8") for path in paths}
    files.update({a: b"\x89PNG\r\n\x1a\n" if a.endswith(".png") else b"%PDF-1.4\n" for a in attachments})
    files[".obsidian/app.json"] = b'{"newLinkFormat": "shortest"}'
    files[".trash/Deleted.md"] = b"# Deleted\n\n[[Index]] [[Nowhere 9]]\n"
    files["Board.canvas"] = b'{"nodes": [], "edges": []}'
    orphans = sorted(set(paths) - reached)
    return Vault(files, outgoing, orphans, missing_images)


def _relative(source: str, stem: str) -> str:
    rel = posixpath.relpath(stem, posixpath.dirname(source) or ".")
    return rel if rel.startswith("../") else f"./{rel}"


def _fragment(rng: random.Random, note: Note) -> tuple[str, bool | None]:
    (_, h1), (_, h2), (_, h3) = note.headings
    choice = rng.randrange(6)
    if choice == 0:
        return "", None
    if choice == 1:
        return f"#{rng.choice([h1, h2, h3])}", True
    if choice == 2:
        return f"#{h1}#{h3}", True  # a chain of headings, in order
    if choice == 3:
        return f"#{h3}#{h1}", False  # out of order
    if choice == 4:
        return f"#^{note.block}", True
    return "#No such heading", False


def _render(note: Note) -> str:
    head = ["---"]
    style = int(note.block[1:]) % 4  # the forms Obsidian users' aliases come in
    if style == 0:
        head.append(f"aliases: [{note.alias}]")
    elif style == 1:
        head += ["aliases:", f"  - {note.alias}"]
    elif style == 2:
        head.append(f"aliases: {note.alias}")
    else:
        head.append(f"alias: {note.alias}")
    head.append("tags: [vault, project/alpha]")
    if note.properties:
        head += ["related:", *(f'  - "{p}"' for p in note.properties)]
    head.append("---")
    (l1, h1), (l2, h2), (l3, h3) = note.headings
    body = [f"{'#' * l1} {h1}", "", f"Intro paragraph. ^{note.block}", "", f"{'#' * l2} {h2}", ""]
    body += [line + "\n" for line in note.lines]
    body += [f"{'#' * l3} {h3}", "", "`[[Not a link]]` and ```[[nor this]]```", ""]
    return "\n".join(head + body)
