"""kb_links over random Obsidian-style vaults, each link checked against the answer it was written
for (``obsidian_vault.py``; decisions 480-484). ``OBSIDIAN_VAULTS`` runs more seeds."""

from __future__ import annotations

import hashlib
import os
import random
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from kb_fakes import client

from local_vector_search_mcp.dispatch import invoke

from .obsidian_vault import FOLDERS, Expected, make_vault

SEEDS = range(int(os.environ.get("OBSIDIAN_VAULTS", "4")))


def _answer(link: dict[str, Any]) -> Expected:
    candidates = tuple(link["candidates"]) if link.get("candidates") else None
    return Expected(link["target"], link["targetExists"], candidates, link.get("fragmentFound"))


@pytest.mark.parametrize("seed", SEEDS)
def test_links_give_the_answer_they_were_written_for(seed: int, tmp_path: Path) -> None:
    vault = make_vault(seed)
    root = tmp_path / "vault"
    for rel, data in vault.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    kb = client(root)
    try:
        kb.reindex()
        for source, expected in vault.outgoing.items():
            out = invoke(kb.ws, "kb_links", {"request": {"path": source, "direction": "outgoing"}})
            assert [_answer(ln) for ln in out["links"]] == expected, source
        whole = invoke(kb.ws, "kb_links", {"request": {}})
        assert whole["orphans"] == vault.orphans
        assert sorted(f"{m['source']} -> {m['target']}" for m in whole["missingImages"]) == sorted(vault.missing_images)
        assert all(not m["source"].startswith((".obsidian/", ".trash/")) for m in whole["missing"])
    finally:
        kb.shutdown()


def _targets(kb: Any, sources: list[str]) -> dict[str, list[str | None]]:
    """Per document, what each link reaches (None when it reaches no note)."""
    found: dict[str, list[str | None]] = {}
    for source in sources:
        out = invoke(kb.ws, "kb_links", {"request": {"path": source, "direction": "outgoing"}})
        found[source] = [ln["target"] if ln["targetExists"] else None for ln in out["links"]]
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_moves_keep_every_link_reaching_its_note(seed: int, tmp_path: Path) -> None:
    """kb_move with updateLinks over the same vaults: relative names, NFC/NFD names and property
    links included, every link that reached a note reaches it (at its new path) afterwards."""
    vault = make_vault(seed)
    root = tmp_path / "vault"
    for rel, data in vault.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    kb = client(root, knowledge_base__allow_writes=True)
    rng = random.Random(seed)
    try:
        kb.reindex()
        for _ in range(3):
            sources = sorted(vault.outgoing)
            before = _targets(kb, sources)
            src = rng.choice(sources)
            name = rng.choice([Path(src).name, f"Renamed {rng.randrange(100)}.md"])
            dst = str(Path(rng.choice(FOLDERS)) / name).lstrip("./") if rng.random() < 0.9 else name
            nfc = unicodedata.normalize("NFC", dst)
            if dst == src or any(unicodedata.normalize("NFC", s) == nfc for s in sources):
                continue  # a name taken, in either normal form (decision 505 refuses it as taken)
            data = (root / src).read_bytes()
            request = {"sourcePath": src, "targetPath": dst, "updateLinks": True}
            request["expectedSourceHash"] = hashlib.sha256(data).hexdigest()
            invoke(kb.ws, "kb_move", {"request": request})
            kb.reindex()
            moved = {s: (dst if s == src else s) for s in sources}
            after = _targets(kb, [moved[s] for s in sources])
            for source in sources:
                want = [None if t is None else moved.get(t, t) for t in before[source]]
                got = after[moved[source]]
                assert [g for g, w in zip(got, want, strict=True) if w is not None] == [w for w in want if w], (
                    f"{src} -> {dst}: links of {source}"
                )
            vault.outgoing = {moved[s]: v for s, v in vault.outgoing.items()}
    finally:
        kb.shutdown()
