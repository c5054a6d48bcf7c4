"""The index's settings record (index/manifest.py): what a run that differs is told."""

from __future__ import annotations

from pathlib import Path

import pytest
from kb_fakes import HashEmbedder, client

from local_vector_search_mcp.errors import IndexNotReady


@pytest.mark.parametrize(
    ("built", "run", "hint"),
    [
        (
            "none",
            "local",
            "It was built without embeddings: run with embedding.provider none (CLI: --embedding-provider none)",
        ),
        # the converse (built with embeddings, a run without them) is used as it is: decision 630,
        # tests/index/test_lexical_run.py
    ],
)
def test_a_run_with_the_other_provider_is_told_it_can_use_the_index_as_it_is(
    kb: Path, built: str, run: str, hint: str
) -> None:
    """Decision 557: an index built with --embedding-provider none and a later command without it
    (the local model is the default) was only told to rebuild; running with the setting it was
    built with uses it as it is, and costs nothing."""
    first = client(kb, built, embedder=HashEmbedder() if built == "local" else None)
    first.reindex()
    first.wait_vectors(30)
    first.shutdown()
    other = client(kb, run, embedder=HashEmbedder() if run == "local" else None)
    try:
        with pytest.raises(IndexNotReady) as refused:
            other.search("pip", mode="lexical")
    finally:
        other.shutdown()
    message = refused.value.message
    assert hint in message
    assert "or rebuild it with kb_reindex force=true (CLI: --reindex --force)" in message
    same = client(kb, built, embedder=HashEmbedder() if built == "local" else None)
    try:
        assert same.search("pip", mode="lexical")["results"]  # the advice holds
    finally:
        same.shutdown()


def test_another_difference_is_told_to_rebuild(kb: Path) -> None:
    first = client(kb, "none")
    first.reindex()
    first.shutdown()
    other = client(kb, "none", chunking__max_elements=3)
    try:
        with pytest.raises(IndexNotReady, match=r"\)\. Rebuild it with kb_reindex force=true"):
            other.search("pip")
    finally:
        other.shutdown()
