"""Start-up cost: server start to a completed MCP `initialize`, next to importing the SDK.

Goal (issue 2): at most 0.15 s more than `python -c "import mcp.server.lowlevel"`.
Both are measured interleaved in the same run so machine load affects them alike.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def time_import() -> float:
    """Until the import is done (not until exit: interpreter teardown is not start-up)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", "import mcp.server.lowlevel; print('ready', flush=True)"], stdout=subprocess.PIPE
    )
    assert proc.stdout
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.wait(timeout=10)
    assert line.strip() == b"ready"
    return elapsed


def time_initialize(root: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "local_vector_search_mcp", "--root", str(root), "--storage-path", str(root / "i.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(timeout=10)
    assert b'"result"' in line, line
    return elapsed


def main() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.md").write_text("# A\n")
        time_import(), time_initialize(root)  # warm the OS file cache
        imports, inits = [], []
        for _ in range(RUNS):
            imports.append(time_import())
            inits.append(time_initialize(root))
    base, ours = statistics.median(imports), statistics.median(inits)
    result = {"import_mcp_s": base, "initialize_s": ours, "overhead_s": ours - base, "ratio": ours / base}
    print(
        f"startup: import mcp.server.lowlevel {base:.3f} s | our initialize round trip {ours:.3f} s | "
        f"overhead {ours - base:+.3f} s (goal <= +0.150) | ratio {ours / base:.2f}x"
    )
    return result


if __name__ == "__main__":
    main()
