"""kb_links updates its kept graph from the documents that changed (decision 302): after any
sequence of edits, creations, deletions and renames the graph equals one built from every link."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from kb_fakes import KbClient, client

from local_vector_search_mcp.handlers import links as links_handler
from local_vector_search_mcp.handlers.links import load_graph
from local_vector_search_mcp.index.graph import Graph, Resolver
from local_vector_search_mcp.index.port import StoredLink

NAMES = ["Home", "Setup", "Note", "Ghost", "Start", "Other", "deep/Note", "deep/Setup", "x/y/Home"]


def _text(rng: random.Random) -> str:
    """A document with Markdown links, wikilinks, embeds, fragments, aliases and headings."""
    lines = []
    if rng.random() < 0.4:
        lines += ["---", f"aliases: [{rng.choice(NAMES).split('/')[-1]}, Alias{rng.randrange(3)}]", "---"]
    for _ in range(rng.randrange(1, 6)):
        name = rng.choice(NAMES)
        kind = rng.randrange(7)
        if kind == 0:
            lines.append(f"# {rng.choice(['Install', 'Home', 'Top', 'Usage'])}")
        elif kind == 1:
            lines.append(f"See [[{name}]] and [[{name}#{rng.choice(['Install', 'Top', 'Nope'])}]].")
        elif kind == 2:
            lines.append(f"An [inline](../{name}.md#{rng.choice(['install', 'top', 'x'])}) and [b]({name}.md).")
        elif kind == 3:
            lines.append(f"![[{rng.choice(['diagram.png', 'missing.png', name])}]] ![i](img/logo.png)")
        elif kind == 4:
            lines.append(f"[[Alias{rng.randrange(3)}]] and [web](https://example.com/{name}.md)")
        elif kind == 5:
            lines.append(f"[ref][r{len(lines)}]\n\n[r{len(lines)}]: {name}.md")
        else:
            lines.append("Plain text without links.")
        lines.append("")
    return "\n".join(lines) + "\n"


def _same(kept: Graph, fresh: Graph) -> None:
    assert kept.links == fresh.links
    assert kept.outgoing == fresh.outgoing
    assert kept.incoming == fresh.incoming
    assert kept.documents == fresh.documents
    assert kept.orphans() == fresh.orphans()


@pytest.mark.parametrize("seed", range(6))
def test_every_update_equals_a_graph_built_from_every_link(
    kb: KbClient, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    root = kb.ws.root
    updates = []
    real = Graph.updated

    def spy(self: Graph, *args: object, **kwargs: object) -> Graph:
        updates.append(args[0])
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Graph, "updated", spy)
    monkeypatch.setattr(links_handler, "INCREMENTAL_SHARE", 1.0)  # always update, never rebuild
    load_graph(kb.ws)
    for _ in range(12):
        docs = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
        for _ in range(rng.randrange(1, 4)):
            op = rng.random()
            if op < 0.45 and docs:  # rewrite
                (root / rng.choice(docs)).write_text(_text(rng), encoding="utf-8")
            elif op < 0.75:  # create (maybe a name that makes wikilinks ambiguous)
                path = root / f"{rng.choice(NAMES)}{rng.choice(['', '', '2'])}.md"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(_text(rng), encoding="utf-8")
            elif op < 0.9 and docs:  # delete
                (root / rng.choice(docs)).unlink(missing_ok=True)
            elif docs:  # rename
                src = root / rng.choice(docs)
                dst = root / f"moved/{rng.choice(NAMES)}.md"
                if src.exists() and not dst.exists():
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    src.rename(dst)
        kb.reindex()
        store = kb.ws.store
        _same(load_graph(kb.ws), Graph(store.links(), store.document_states(), store.document_meta()))
    assert len(updates) >= 10  # the kept graph was updated, not rebuilt


def test_a_key_move_without_a_document_change_keeps_the_graph(kb: KbClient) -> None:
    first = load_graph(kb.ws)
    kb.ws.store.set_unreadable("elsewhere.md", "a reason")  # a write to another table
    assert load_graph(kb.ws) is first


def _body(rng: random.Random) -> str:
    text = _text(rng)
    return text.split("---\n", 2)[2] if text.startswith("---\n") else text


@pytest.mark.parametrize("seed", range(6))
def test_edits_that_keep_every_name_resolve_only_what_reaches_them(
    kb: KbClient, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Edits that keep every document and alias (decision 484): wikilinks keep their targets
    unresolved again, those reaching an edited document get its new headings and block ids."""
    rng = random.Random(seed)
    root = kb.ws.root
    monkeypatch.setattr(links_handler, "INCREMENTAL_SHARE", 1.0)
    load_graph(kb.ws)
    for _ in range(12):
        docs = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
        for rel in rng.sample(docs, rng.randrange(1, 3)):
            old = (root / rel).read_text(encoding="utf-8")
            head = old[: old.index("---\n", 4) + 4] if old.startswith("---\n") else ""
            (root / rel).write_text(head + _body(rng), encoding="utf-8")
        kb.reindex()
        store = kb.ws.store
        _same(load_graph(kb.ws), Graph(store.links(), store.document_states(), store.document_meta()))


def test_a_document_gone_resolves_again_only_the_wikilinks_its_names_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document came or went (decision 1023): a wikilink can reach another document only through a
    name or alias of one that changed, so `[[Other]]` is not resolved again when `Lonely.md` goes,
    and `[[Lonely]]`, `[[sub/Lonely.md]]` and `[[Loner]]` (its alias) are."""
    root = tmp_path / "kb"
    (root / "sub").mkdir(parents=True)
    (root / "sub/Lonely.md").write_text("---\naliases: [Loner]\n---\n# Lonely\n", encoding="utf-8")
    (root / "Other.md").write_text("# Other\n", encoding="utf-8")
    many = "".join(f"[[Other#{i}]] " for i in range(50))
    (root / "hub.md").write_text(f"# Hub\n\n{many}\n\n[[Lonely]] [[sub/Lonely.md]] [[Loner]] [[./Other]]\n", "utf-8")
    kb = client(root)
    try:
        kb.reindex()
        load_graph(kb.ws)
        (root / "sub/Lonely.md").unlink()
        kb.reindex()
        resolved: list[str] = []
        real = Resolver.resolve

        def spy(self: Resolver, link: StoredLink, *, files: bool = False) -> object:
            resolved.append(link.destination)
            return real(self, link, files=files)

        monkeypatch.setattr(Resolver, "resolve", spy)
        graph = load_graph(kb.ws)
        assert resolved == ["Lonely", "sub/Lonely.md", "Loner", "./Other"]  # a relative name: always
        store = kb.ws.store
        monkeypatch.setattr(Resolver, "resolve", real)
        _same(graph, Graph(store.links(), store.document_states(), store.document_meta()))
    finally:
        kb.shutdown()
