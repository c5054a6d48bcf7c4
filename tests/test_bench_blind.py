"""bench/bench_blind.py takes only the pinned archive's Markdown, into its own folder (review of decision 1045)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_blind


def _archive(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_member_named_by_an_absolute_path_is_not_written_outside_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``<prefix>//abs/x.md`` left ``/abs/x.md`` as the path in the corpus, and ``root / "/abs/x.md"``
    is ``/abs/x.md``; a cached archive was never checked against its pin either."""
    outside = tmp_path / "outside" / "evil.md"
    data = _archive({"starlette-1.10.0/docs/ok.md": b"# ok\n", f"starlette-1.10.0/docs/{outside}": b"# evil\n"})
    source = bench_blind.SETS["starlette"]
    monkeypatch.setattr(bench_blind, "CACHE", tmp_path / "cache")
    archive = tmp_path / "cache" / "starlette" / f"{source.package}-{source.version}.tgz"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(data)
    assert bench_blind.corpus("starlette") is None  # not the pinned archive: nothing is taken from it
    pinned = dataclasses.replace(source, sha256=hashlib.sha256(data).hexdigest())
    monkeypatch.setattr(bench_blind, "SETS", {"starlette": pinned})
    root = bench_blind.corpus("starlette")
    assert root is not None
    assert sorted(p.name for p in root.rglob("*.md")) == ["ok.md"]
    assert not outside.exists()


def test_a_member_ending_in_a_skipped_suffix_is_not_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mand-mobile ships each component page twice, ``README.md`` in Chinese beside
    ``README.en-US.md``; its set is the Chinese pages alone (decision 1050)."""
    data = _archive(
        {
            "package/components/button/README.md": b"# \xe6\x8c\x89\xe9\x92\xae\n",
            "package/components/button/README.en-US.md": b"# Button\n",
        }
    )
    source = bench_blind.Source(
        "npm", "demo", "1.0.0", hashlib.sha256(data).hexdigest(), (("package/components/", "c/"),), skip=(".en-US.md",)
    )
    monkeypatch.setattr(bench_blind, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(bench_blind, "SETS", {"demo": source})
    archive = tmp_path / "cache" / "demo" / "demo-1.0.0.tgz"
    archive.parent.mkdir(parents=True)
    archive.write_bytes(data)
    root = bench_blind.corpus("demo")
    assert root is not None
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")) == ["c/button/README.md"]


def test_every_set_has_its_queries_and_every_query_file_a_set() -> None:
    """``evaluate`` reads ``bench/blind/<set>.jsonl`` for each entry of ``SETS``: a set added
    without its queries stops the bench, a query file without its set is never scored."""
    files = {path.stem for path in (bench_blind.HERE / "blind").glob("*.jsonl")}
    assert files == set(bench_blind.SETS)
    for name in files:
        for line in (bench_blind.HERE / "blind" / f"{name}.jsonl").read_text("utf-8").splitlines():
            query = json.loads(line)
            assert query["kind"] in {"nl", "kw", "para", "ident"}, (name, query["id"])
            assert query["rel"] and any(grade > 0 for _, _, grade in query["rel"]), (name, query["id"])
