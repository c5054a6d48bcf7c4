"""Every row a cold lexical index stores, dumped so that two builds (two commits) can be compared.

A change meant to make indexing cheaper must leave the index as it was: this builds a cold
SQLite lexical index of a tree in a fresh process of whatever source tree is on ``sys.path``
and writes each table's rows, sorted, to a pickle; ``compare`` says which tables differ and
shows their first differing rows. FTS5 tables are contentless, so their contents are read
through ``fts5vocab``'s ``instance`` view (term, chunk, column, offset: every token as indexed);
``chunks.body`` is compared unpacked: ISA-L's deflate (decision 276) does not always write the
same bytes for the same text from one process to the next (two builds of one commit differed in
3-5 of 17,861 bodies, every text equal), so the bytes compare nothing. The columns that hold the
time of the build (``indexed_at_utc``, manifest times) are left out.

Run (the old code from a detached worktree, same venv)::

    PYTHONPATH=../base/src .venv/bin/python bench/index_rows.py dump ROOT /tmp/old.pickle
    PYTHONPATH=src .venv/bin/python bench/index_rows.py dump ROOT /tmp/new.pickle
    .venv/bin/python bench/index_rows.py compare /tmp/old.pickle /tmp/new.pickle

``--workers N`` (default 2) is ``knowledgeBase.indexWorkers``: 1 builds in-process.
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# (table, columns read): the time-dependent columns are left out
TABLES = {
    "documents": "path, source_hash, size, mtime_ns",
    "chunks": "(SELECT path FROM documents d WHERE d.id = document_id), id, ordinal, anchor, heading_path, "
    "embedding_text_hash, vector_pending, body",
    "links": "(SELECT path FROM documents d WHERE d.id = document_id), ordinal, kind, destination, text, anchor",
    "document_meta": "(SELECT path FROM documents d WHERE d.id = document_id), tags, aliases, headings, block_ids",
    "document_tags": "tag, (SELECT path FROM documents d WHERE d.id = document_id)",
    "unreadable_files": "*",
    "term_stats": "term, doc",
    "chunks_fts_vocab": "term, doc, cnt",
}
# contentless FTS5 tables, read token by token
FTS = ("chunks_fts", "chunks_stems")
TIMELY_MANIFEST_KEYS = ("created", "updated", "time", "_at")


def dump(root: Path, out: Path, workers: int) -> None:
    from common import bench_service

    db = Path(tempfile.mkdtemp(prefix="lvsm-rows-")) / "index.db"
    svc = bench_service(root, db, knowledge_base__index_workers=workers)
    svc.reindex()
    svc.store.close()
    import apsw

    conn = apsw.Connection(str(db))
    tables: dict[str, list[tuple[Any, ...]]] = {}
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    for table, columns in TABLES.items():
        if table in names:
            rows = conn.execute(f"SELECT {columns} FROM {table}")
            if table == "chunks":  # the body last, unpacked
                rows = ((*row[:-1], zlib.decompress(row[-1]).decode("utf-8")) for row in rows)
            tables[table] = sorted(rows, key=repr)
    for fts in FTS:
        conn.execute(f"CREATE VIRTUAL TABLE temp.{fts}_instance USING fts5vocab(main, {fts}, instance)")
        tables[f"{fts} (instance)"] = sorted(conn.execute(f"SELECT term, doc, col, offset FROM temp.{fts}_instance"))
    tables["index_manifest"] = sorted(
        (k, v) for k, v in conn.execute("SELECT key, value FROM index_manifest") if not k.endswith(TIMELY_MANIFEST_KEYS)
    )
    conn.close()
    shutil.rmtree(db.parent, ignore_errors=True)
    with out.open("wb") as f:
        pickle.dump(tables, f, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"{root}: " + ", ".join(f"{name} {len(rows)}" for name, rows in tables.items()))


def compare(a: Path, b: Path) -> int:
    with a.open("rb") as f:
        left: dict[str, list[tuple[Any, ...]]] = pickle.load(f)
    with b.open("rb") as f:
        right: dict[str, list[tuple[Any, ...]]] = pickle.load(f)
    differ = 0
    for name in sorted(set(left) | set(right)):
        x, y = left.get(name), right.get(name)
        if x == y:
            print(f"equal   {name}: {len(x or [])} rows")
            continue
        differ += 1
        print(f"DIFFER  {name}: {len(x or [])} vs {len(y or [])} rows")
        only_x = sorted(set(x or []) - set(y or []), key=repr)[:5]
        only_y = sorted(set(y or []) - set(x or []), key=repr)[:5]
        for row in only_x:
            print(f"   - {row!r:.300}")
        for row in only_y:
            print(f"   + {row!r:.300}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("root", type=Path)
    d.add_argument("out", type=Path)
    d.add_argument("--workers", type=int, default=2)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.root, args.out, args.workers)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    raise SystemExit(main())
