"""Random hostile link syntax x random moves with ``updateLinks`` (H47, decisions 450-453): every
link that resolved before still reaches the same (moved) file, no other byte of any file changes,
``updatedPaths`` names exactly the rewritten documents, and a refused move changes nothing.
``MOVE_FUZZ_RUNS`` sets how many trees (default 40; the audit ran several hundred)."""

from __future__ import annotations

import os
import posixpath
import random
import shutil
from pathlib import Path

import pytest
from kb_fakes import client

from local_vector_search_mcp.dispatch import invoke
from local_vector_search_mcp.errors import AlreadyExists, Conflict, InvalidArgument

from .move_fuzz import check_bytes, files_on_disk, make_tree, resolutions, sha

RUNS = int(os.environ.get("MOVE_FUZZ_RUNS", "40"))


def _mapped(reach: str | None, src: str, dst: str) -> str | None:
    return dst if reach == src else reach


def _target(rng: random.Random, src: str, files: dict[str, bytes]) -> str:
    folder, name = posixpath.split(src)
    stem, ext = posixpath.splitext(name)
    choice = rng.random()
    if choice < 0.2:
        new = posixpath.join(folder, stem.swapcase() + ext)  # only the case changes
    elif choice < 0.5:
        new = posixpath.join(rng.choice(["", "a", "a/b", "new dir", "a/Ü"]), name)
    else:
        new = posixpath.join(
            rng.choice(["", "a", "a/b/c", "z z"]),
            rng.choice(["moved", "Moved (2)", "ü ber", "r%s", "r%41", "C# y", "a [b]"]) + ext,
        )
    return new if new != src and new not in files else posixpath.join("fresh", new)


def run_one(seed: int, root: Path) -> list[str]:
    rng = random.Random(seed)
    tree = make_tree(rng)
    tree.write(root)
    kb = client(root, knowledge_base__allow_writes=True)
    try:
        kb.reindex()  # aliases come from the index
        before = files_on_disk(root)
        image = rng.random() < 0.3
        src = rng.choice(tree.images if image else sorted(tree.docs))
        dst = _target(rng, src, before)
        request = {"sourcePath": src, "targetPath": dst, "updateLinks": True}
        if not image:
            request["expectedSourceHash"] = sha(before[src])
        tool = "kb_move_image" if image else "kb_move"
        if rng.random() < 0.1:  # a refused move: a stale hash, or a target that exists
            if image:
                request["expectedSha256"] = "0" * 64
            else:
                request["targetPath"] = next(d for d in sorted(tree.docs) if d != src)
            try:
                invoke(kb.ws, tool, {"request": request})
            except (AlreadyExists, Conflict):
                after = files_on_disk(root)
                return [] if after == before else [f"seed {seed}: refused {tool} {request} changed files"]
            return [f"seed {seed}: {tool} {request} was not refused"]
        resolved_before = resolutions(before)
        try:
            result = invoke(kb.ws, tool, {"request": request})
        except InvalidArgument as refused:  # a wikilink would have to name a file holding # | ^ [ ]
            after = files_on_disk(root)
            if "updateLinks cannot keep" not in refused.message or not set("#|^[]") & set(dst) or after != before:
                return [f"seed {seed}: {tool} {src} -> {dst} refused: {refused.message}"]
            return []
        after = files_on_disk(root)
        problems = check_bytes(tree, src if not image else "", dst, before, after)
        resolved_after = resolutions(after)
        for rel, row in resolved_before.items():
            now = dst if rel == src else rel
            new_row = resolved_after.get(now)
            if new_row is None or len(new_row) != len(row):
                problems.append(f"{now}: links {row} -> {new_row}")
                continue
            for (kind, reach), (kind2, reach2) in zip(row, new_row, strict=True):
                if reach is not None and (kind2 != kind or reach2 != _mapped(reach, src, dst)):
                    problems.append(f"{now}: a {kind} link reaching {reach} now reaches {reach2}")
        changed = sorted(
            (dst if rel == src else rel)
            for rel in before
            if rel.endswith(".md") and after.get(dst if rel == src else rel) != before[rel]
        )
        if result.get("updatedPaths") != changed:
            problems.append(f"updatedPaths {result.get('updatedPaths')} but changed {changed}")
        return [f"seed {seed}: {tool} {src} -> {dst}: {p}" for p in problems]
    finally:
        kb.shutdown()


@pytest.mark.parametrize("chunk", range(4))
def test_random_moves_keep_every_link_and_every_other_byte(chunk: int, tmp_path: Path) -> None:
    problems: list[str] = []
    for seed in range(chunk, RUNS, 4):
        root = tmp_path / f"kb{seed}"
        problems.extend(run_one(seed, root))
        shutil.rmtree(root, ignore_errors=True)
    assert not problems, "\n".join(problems[:5])
