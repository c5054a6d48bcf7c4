"""Resource bounds: huge and pathological documents end in a result or a clear error, in bounded memory.

Each case runs in a child process (so a regression that hangs or eats memory
fails this test instead of the whole suite) which calls the tools through the
dispatcher and reports each outcome and its peak memory. The timeout is a
hang guard, not a speed goal (speed lives in bench/).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HANG_GUARD_SECONDS = 600
MAX_RSS_MB = 1500

CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    from pathlib import Path
    from local_vector_search_mcp import dispatch
    from local_vector_search_mcp.config import CliOptions, load_settings
    from local_vector_search_mcp.errors import KbError
    from local_vector_search_mcp.workspace import Workspace

    root, rel = Path(sys.argv[1]), sys.argv[2]
    options = CliOptions(root=str(root), embedding_provider="none", allow_writes=True, watch_files=False)
    ws = Workspace(load_settings(options, cwd=root, environ={}))
    report = {}

    def run(name, tool, arguments):
        start = time.perf_counter()
        try:
            result = dispatch.invoke(ws, tool, arguments)
            outcome = "ok"
        except KbError as exc:
            result, outcome = None, exc.code
            report[name + ".message"] = exc.message
        report[name] = outcome
        report[name + ".seconds"] = round(time.perf_counter() - start, 2)
        return result

    read = run("read", "kb_read", {"request": {"path": rel}})
    run("outline", "kb_outline", {"request": {"path": rel}})
    if read is not None:
        run("read_last", "kb_read", {"request": {"path": rel, "pointer": read["elements"][-1]["pointer"]}})
        tables = [e["pointer"] for e in read["elements"] if e["kind"] == "table"]
        if tables:
            edit = {"path": rel, "pointer": tables[0], "action": "insert_row", "valuesByColumn": {"c0": "new"}}
            run("edit_table", "kb_edit_table", edit)
    operation = {"kind": "insert_after", "pointer": "document", "markdown": "Appended."}
    run("pdf", "kb_create_pdf_book", {"request": {"path": rel, "outputPath": "out.pdf"}})
    run("patch", "kb_patch", {"request": {"path": rel, "operations": [operation]}})
    # VmHWM is this process's own peak; ru_maxrss also counts the parent's size at the fork (a
    # pytest grown to 1.5 GB by earlier tests failed every case)
    status = Path("/proc/self/status")
    hwm = [line for line in status.read_text().splitlines() if line.startswith("VmHWM:")] if status.exists() else []
    peak_kb = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report["maxrss_mb"] = peak_kb // 1024
    ws.close()
    print(json.dumps(report))
    """
)

CASES: dict[str, bytes] = {
    "50 MB document": (b"# Title\n\nA paragraph of ordinary words, repeated to fill the file.\n\n" * 800_000)[
        : 50 * 1024 * 1024
    ],
    "1 MB single line": b"# Long\n\n" + b"word " * 210_000 + b"\n",
    "10,000-deep nested quotes": b"> " * 10_000 + b"deep\n",
    "10,000-deep nested lists": b"- " * 10_000 + b"deep\n",
    "10,000-deep quotes and lists": b"> - " * 5_000 + b"deep\n",
    "5,000-column table": (
        b"| " + b" | ".join(b"c%d" % i for i in range(5000)) + b" |\n|" + b"---|" * 5000 + b"\n"
        b"| " + b" | ".join(b"v" for _ in range(5000)) + b" |\n"
    ),
}
if os.environ.get("HYPOTHESIS_PROFILE") == "long":
    # Just under the size cap: a result, in about 900 MB and a minute on a busy machine.
    CASES["8 MB document"] = (b"# Title\n\nOrdinary words in a paragraph.\n\n" * 300_000)[: 8 * 1024 * 1024 - 1]
# What each case may end in: a result, or the clear refusal of a document over the size cap.
ALLOWED = {"ok", "UNSUPPORTED_FORMAT", "INVALID_ARGUMENT", "CONFLICT"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pathological_documents_end_in_a_result_or_a_clear_error(tmp_path: Path, case: str) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    data = CASES[case]
    (root / "doc.md").write_bytes(data)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), "doc.md"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    print(case, report)
    outcomes = {k: v for k, v in report.items() if "." not in k and k != "maxrss_mb"}
    assert set(outcomes.values()) <= ALLOWED, report
    assert report["maxrss_mb"] < MAX_RSS_MB, report
    if len(data) > 8 * 1024 * 1024:
        assert outcomes["read"] == outcomes["patch"] == outcomes["pdf"] == "UNSUPPORTED_FORMAT"
        assert "MiB" in report["read.message"] and "Split it" in report["read.message"]
        assert (root / "doc.md").read_bytes() == data
    else:
        assert outcomes["read"] == outcomes["outline"] == outcomes["pdf"] == "ok", report
        assert (root / "out.pdf").read_bytes().startswith(b"%PDF-")  # wide, deep and long: all printed
