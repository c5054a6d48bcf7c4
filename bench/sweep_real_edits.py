"""The editing promises swept over real Markdown: a seeded sample of each corpus's files, every
element and every table edited through the handlers (``tests/real_edits.py`` says what is
checked). Not part of ``make bench``; one corpus of 200 files takes minutes.

```
OMP_NUM_THREADS=1 .venv/bin/python bench/sweep_real_edits.py --files 200
.venv/bin/python bench/sweep_real_edits.py --corpus rust-book --files 20 --seed 7
```

Corpora: the shared ones (``../shared/corpora``) and the blind sets' cached pages
(``bench/.cache/blind/*/kb``, or ``--blind DIR``); each sample is copied to a temporary root,
the originals are never written. Divergences go to stdout and, with ``--out``, to a JSON file.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent / "tests"))

from kb_fakes import make_workspace  # noqa: E402
from real_edits import Sweep, Tally, copy_sample, sample_files  # noqa: E402
from shared_data import CORPORA  # noqa: E402


def corpora(blind: Path) -> dict[str, Path]:
    found = {p.name: p for p in sorted(CORPORA.iterdir()) if p.is_dir()} if CORPORA.is_dir() else {}
    if blind.is_dir():
        found.update({f"blind/{p.name}": p / "kb" for p in sorted(blind.iterdir()) if (p / "kb").is_dir()})
    return found


def run(name: str, folder: Path, files: int, seed: int, others: int, crlf: bool = False, bom: bool = False) -> Tally:
    with tempfile.TemporaryDirectory(prefix="lvsm-sweep-") as tmp:
        root = Path(tmp)
        names = copy_sample(sample_files(folder, files, seed), folder, root, crlf=crlf, bom=bom)
        # the sample is not indexed: every edit still runs the handler's whole path, and no
        # background re-index of each write loads the shared machine (the sync queue is not the subject)
        ws = make_workspace(root, knowledge_base__allow_writes=True, knowledge_base__exclude=["**"])
        sweep = Sweep(ws, seed=seed, others=others)
        try:
            for rel in names:
                sweep.sweep_file(rel)
        finally:
            ws.close()
        return sweep.tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", help="a corpus name (repeatable); default: all")
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument(
        "--others", type=int, default=6, help="untouched elements read after each edit, besides neighbours"
    )
    parser.add_argument("--blind", type=Path, default=HERE / ".cache" / "blind")
    parser.add_argument("--crlf", action="store_true", help="the copies' line breaks written as CRLF")
    parser.add_argument("--bom", action="store_true", help="the copies written with a UTF-8 BOM")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--limit", type=int, default=40, help="divergences printed per corpus")
    args = parser.parse_args()
    found = corpora(args.blind)
    names = args.corpus or list(found)
    report: dict[str, object] = {}
    for name in names:
        started = time.process_time()
        tally = run(name, found[name], args.files, args.seed, args.others, args.crlf, args.bom)
        summary = tally.summary()
        summary["cpuSeconds"] = round(time.process_time() - started, 1)
        print(name, json.dumps(summary))
        # a column round trip re-renders the table's lines (contract §6): counted, not listed
        listed = [d for d in tally.divergences if not d.check.endswith(":rerendered")]
        for divergence in listed[: args.limit]:
            print("  " + divergence.line())
        report[name] = {**summary, "divergenceList": [vars(d) for d in tally.divergences]}
        sys.stdout.flush()
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False), "utf-8")


if __name__ == "__main__":
    main()
