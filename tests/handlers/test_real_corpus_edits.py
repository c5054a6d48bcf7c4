"""The editing promises over real pages: a seeded handful of each shared corpus's files, every
element and table edited through the handlers (``tests/real_edits.py``; the full sample runs as
``bench/sweep_real_edits.py``, session 35). Slow-marked: about fifteen seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
from kb_fakes import make_workspace
from real_edits import Sweep, copy_sample, sample_files
from shared_data import CORPORA

NAMES = ["rust-book", "vue-docs-zh-cn", "opensearch-docs"]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_element_of_a_sample_of_real_pages_keeps_the_editing_promises(tmp_path: Path, name: str) -> None:
    folder = CORPORA / name
    if not folder.is_dir():
        pytest.skip("corpora folder missing")
    names = copy_sample(sample_files(folder, 4, seed=35), folder, tmp_path)
    ws = make_workspace(tmp_path, knowledge_base__allow_writes=True, knowledge_base__exclude=["**"])
    sweep = Sweep(ws, seed=35)
    try:
        for rel in names:
            sweep.sweep_file(rel)
    finally:
        ws.close()
    tally = sweep.tally
    assert tally.files == len(names)
    assert sum(tally.elements.values()) > 20
    # a column round trip re-renders the table's lines (contract §6), nothing else may differ
    found = [d.line() for d in tally.divergences if not d.check.endswith(":rerendered")]
    assert found == []
    for rel in names:
        assert (tmp_path / rel).read_bytes() == (folder / rel).read_bytes()
