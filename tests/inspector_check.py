"""Run the MCP Inspector CLI against our server and check it lists every tool we publish.

Usage: python tests/inspector_check.py <mcp-inspector> <server-executable>  (see `make inspector`)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path


def main() -> int:
    inspector, server = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a.md").write_text("# A\n")
        out = subprocess.run(
            [inspector, "--cli", server, "--root", tmp, "--method", "tools/list"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    if out.returncode != 0:
        print(out.stdout, out.stderr, file=sys.stderr)
        return 1
    listing = json.JSONDecoder().raw_decode(out.stdout)[0]  # a portability summary may follow the JSON
    names = [tool["name"] for tool in listing["tools"]]
    from local_vector_search_mcp.dispatch import available_tools

    expected = [tool.name for tool in available_tools()]
    if names != expected:
        print(f"inspector listed {names}, expected {expected}", file=sys.stderr)
        return 1
    missing_schema = [t["name"] for t in listing["tools"] if "inputSchema" not in t]
    if missing_schema:
        print(f"tools without inputSchema: {missing_schema}", file=sys.stderr)
        return 1
    print(f"MCP Inspector CLI lists {len(names)} tools: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
