"""Run the MCP Inspector CLI against our server, over stdio and over Streamable HTTP.

Over stdio it must list every tool we publish; over HTTP (a real `--transport http` server with a
bearer token) it must list the same tools and call one, and be refused without the token.

Usage: python tests/inspector_check.py <mcp-inspector> <server-executable>  (see `make inspector`)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOKEN = "inspector-check-token-0123456789"


def inspect(inspector: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([inspector, "--cli", *args], capture_output=True, text=True, timeout=120)


def listing(out: subprocess.CompletedProcess[str]) -> Any:
    return json.JSONDecoder().raw_decode(out.stdout)[0]  # a portability summary may follow the JSON


def check_tools(where: str, out: subprocess.CompletedProcess[str]) -> list[str]:
    if out.returncode != 0:
        print(out.stdout, out.stderr, file=sys.stderr)
        raise SystemExit(f"inspector failed over {where}")
    tools = listing(out)["tools"]
    names = [tool["name"] for tool in tools]
    from local_vector_search_mcp.dispatch import available_tools

    expected = [tool.name for tool in available_tools(["kb"])]  # the default server.toolsets
    if names != expected:
        raise SystemExit(f"inspector over {where} listed {names}, expected {expected}")
    missing_schema = [t["name"] for t in tools if "inputSchema" not in t]
    if missing_schema:
        raise SystemExit(f"tools without inputSchema over {where}: {missing_schema}")
    return names


def check_image_round_trip(inspector: str, server: str, root: Path) -> None:
    """A client without OpenAI file references saves an image as `data` and sees it again."""
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (3, 2), (9, 8, 7)).save(buffer, format="PNG")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    base = [server, "--root", str(root), "--storage-path", f"{root}/../index.db"]
    saved = inspect(inspector, *base, "--allow-writes", "--method", "tools/call", "--tool-name", "kb_save_image",
                    "--tool-arg", f"data={data}", "--tool-arg", "fileName=inspector")  # fmt: skip
    if saved.returncode != 0 or listing(saved).get("isError"):
        print(saved.stdout, saved.stderr, file=sys.stderr)
        raise SystemExit("inspector could not save an image with data")
    if (root / "images" / "inspector.png").read_bytes() != buffer.getvalue():
        raise SystemExit("the image saved through the inspector differs from the bytes sent")
    loaded = inspect(inspector, *base, "--method", "tools/call", "--tool-name", "kb_load_image",
                     "--tool-arg", "path=images/inspector.png")  # fmt: skip
    blocks = listing(loaded).get("content", []) if loaded.returncode == 0 else []
    if not blocks or blocks[0].get("type") != "image" or blocks[0].get("data") != data:
        print(loaded.stdout, loaded.stderr, file=sys.stderr)
        raise SystemExit("inspector did not get the image back from kb_load_image")


def start_http(server: str, root: str, log: Any) -> tuple[subprocess.Popen[bytes], str]:
    env = {**os.environ, "LOCAL_VECTOR_SEARCH_MCP_TOKEN": TOKEN}
    args = [server, "--root", root, "--storage-path", f"{root}/../index.db", "--transport", "http", "--port", "0"]
    proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        match = re.search(r"serving MCP at (http://\S+/mcp)", Path(log.name).read_text())
        if match:
            return proc, match.group(1)
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the HTTP server did not start:\n{Path(log.name).read_text()}")


def main() -> int:
    inspector, server = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "kb"
        root.mkdir()
        (root / "a.md").write_text("# A\n")
        names = check_tools("stdio", inspect(inspector, server, "--root", str(root), "--method", "tools/list"))
        print(f"MCP Inspector CLI (stdio) lists {len(names)} tools: {', '.join(names)}")
        check_image_round_trip(inspector, server, root)
        print("MCP Inspector CLI (stdio) saves an image sent as base64 data and loads it back byte-identical")

        with open(Path(tmp) / "server.log", "w") as log:
            proc, url = start_http(server, str(root), log)
            try:
                auth = ["--transport", "http", "--server-url", url, "--header", f"Authorization: Bearer {TOKEN}"]
                check_tools("http", inspect(inspector, *auth, "--method", "tools/list"))
                called = inspect(inspector, *auth, "--method", "tools/call", "--tool-name", "kb_status")
                if called.returncode != 0 or listing(called).get("isError"):
                    print(called.stdout, called.stderr, file=sys.stderr)
                    raise SystemExit("inspector could not call kb_status over http")
                refused = inspect(inspector, "--transport", "http", "--server-url", url, "--method", "tools/list")
                if refused.returncode == 0:
                    raise SystemExit("inspector listed tools over http without the bearer token")
            finally:
                proc.terminate()
                proc.wait(30)
        print(f"MCP Inspector CLI (http) lists the same tools at {url}, calls kb_status, is refused without the token")
    return 0


if __name__ == "__main__":
    sys.exit(main())
