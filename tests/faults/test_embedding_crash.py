"""kill -9 during the embedding pass: the next run resumes where it stopped, nothing is embedded twice.

A child process reindexes with an OpenAI-compatible provider (a real loopback
HTTP server in this process, slowed down); after a few batches the child is
killed. The next reindex in this process skips the unchanged files and
embeds only the chunks that still wait for a vector.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml
from embedding_endpoint import Endpoint, endpoint_server

from local_vector_search_mcp import dispatch
from local_vector_search_mcp.config import CliOptions, load_settings
from local_vector_search_mcp.workspace import Workspace


def test_kill_during_the_embedding_pass_resumes_where_it_stopped(tmp_path: Path) -> None:
    with endpoint_server(dims=3) as server:
        server.delay = 0.3  # slowed down, so the kill lands between batches
        _kill_and_resume(tmp_path, server)


def _kill_and_resume(tmp_path: Path, server: Endpoint) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    for i in range(60):
        (root / f"d{i:02}.md").write_text(f"# Doc {i}\n\nparagraph {i} with words\n", "utf-8")
    config = tmp_path / "config.yml"
    endpoint = server.url
    embedding = {"provider": "openai-compatible", "endpoint": endpoint, "model": "m", "dimensions": 3, "batchSize": 4}
    config.write_text(yaml.safe_dump({"embedding": embedding}))
    args = ["--config", str(config), "--root", str(root), "--project-root", str(tmp_path), "--reindex"]
    child = subprocess.Popen([sys.executable, "-m", "local_vector_search_mcp", *args], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while server.texts_sent() < 20 and time.monotonic() < deadline:  # a few batches are stored
            time.sleep(0.05)
        assert server.texts_sent() >= 20, "the child never embedded anything"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        before_kill = server.texts_sent()
        server.delay = 0.0
        ws = Workspace(load_settings(CliOptions(config=str(config), root=str(root)), cwd=tmp_path, environ={}))
        try:
            embedded_before = dispatch.invoke(ws, "kb_status", None)["vectors"]["embeddedChunks"]
            assert 0 < embedded_before < 120  # the killed run stored some batches, not all
            result = ws.indexing.reindex()
            assert result.indexed_files == 0 and result.skipped_files == 60  # nothing re-parsed
            vectors = dispatch.invoke(ws, "kb_status", None)["vectors"]
            total = vectors["embeddedChunks"]
            assert vectors["pendingChunks"] == 0 and total > embedded_before
            # Only the missing chunks were sent again (plus at most the batch that was in flight).
            assert server.texts_sent() - before_kill <= total - embedded_before + 4
        finally:
            ws.close()
    finally:
        if child.poll() is None:
            child.kill()
