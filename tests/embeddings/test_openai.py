from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import numpy as np
import pytest
from kb_fakes import client

from local_vector_search_mcp.embeddings import EmbeddingError
from local_vector_search_mcp.embeddings.local import LocalEmbedder
from local_vector_search_mcp.embeddings.openai import OpenAICompatibleEmbedder, is_loopback_url


def mock(handler):
    return OpenAICompatibleEmbedder(
        endpoint="http://127.0.0.1:9/v1", api_key="k", model="m", transport=httpx.MockTransport(handler)
    )


def reply(data, status=200):
    return lambda request: httpx.Response(status, json=data)


def test_loopback_policy():
    assert is_loopback_url("http://localhost:11434/v1")
    assert is_loopback_url("http://127.0.0.2/v1") and is_loopback_url("http://[::1]:80/v1")
    assert not is_loopback_url("http://example.com/v1") and not is_loopback_url("http://10.0.0.1/v1")
    with pytest.raises(EmbeddingError, match="allowRemoteEndpoint"):
        OpenAICompatibleEmbedder(endpoint="https://api.example.com/v1", api_key="k", model="m")
    OpenAICompatibleEmbedder(endpoint="https://api.example.com/v1", api_key="k", model="m", allow_remote_endpoint=True)


def test_request_shape_and_ordering_by_index():
    seen = {}

    def handler(request):
        seen["auth"] = request.headers["authorization"]
        seen["url"] = str(request.url)
        body = json.loads(request.content)
        seen["body"] = body
        data = [{"index": i, "embedding": [float(i + 1), 0.0]} for i in range(len(body["input"]))]
        return httpx.Response(200, json={"data": list(reversed(data))})

    emb = mock(handler)
    out = emb.embed_passages(["a", "b"])
    assert seen["auth"] == "Bearer k" and seen["url"].endswith("/v1/embeddings")
    assert seen["body"] == {"model": "m", "input": ["a", "b"]}
    assert out.shape == (2, 2) and np.allclose(out[:, 0], 1.0)
    assert emb.dimensions() == 2


@pytest.mark.parametrize(
    "payload, message",
    [
        ({"nope": 1}, "data"),
        ({"data": [{"index": 0, "embedding": [1.0]}]}, "1 items for 2"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}, "duplicate"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [1.0]}]}, "out of range"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": ["x"]}]}, "non-numeric"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": []}]}, "no embedding"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}, "differ"),
    ],
)
def test_strict_validation(payload, message):
    with pytest.raises(EmbeddingError, match=message):
        mock(reply(payload)).embed_passages(["a", "b"])


def test_http_errors_and_timeouts_are_embedding_errors():
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        mock(reply({}, 404)).embed_query("q")

    def timeout(request):
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(EmbeddingError, match="timed out"):
        mock(timeout).embed_query("q")
    unreachable = OpenAICompatibleEmbedder(endpoint="http://127.0.0.1:9/v1", api_key="k", model="m", timeout_seconds=2)
    with pytest.raises(EmbeddingError, match="unreachable"):
        unreachable.embed_query("q")


class _LocalModelServer(BaseHTTPRequestHandler):
    model = LocalEmbedder()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        vectors = self.model.embed_passages(list(body["input"]))
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        raw = json.dumps({"object": "list", "model": body["model"], "data": data}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def local_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LocalModelServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_hybrid_search_through_a_real_loopback_server(kb, local_server):
    svc = client(
        kb, "openai-compatible", embedding__endpoint=local_server, embedding__model="e5-small", embedding__batch_size=4
    )
    result = svc.reindex()
    assert result["warning"] is None and result["indexedFiles"] == 3
    status = svc.status_fields()
    assert status["embeddingProvider"] == "openai-compatible" and status["embeddingDimensions"] == 384
    out = svc.search(query="如何在组件之间共享数据", mode="semantic")
    assert out["results"][0]["path"] == "notes/zh.md"
    out = svc.search(query="how do I install it", mode="hybrid")
    assert out["warning"] is None and out["results"][0]["path"] == "guide.md"


def test_provider_down_keeps_lexical_working(kb, local_server):
    svc = client(kb, "openai-compatible", embedding__endpoint=local_server, embedding__model="e5-small")
    svc.reindex()
    svc2 = client(
        kb,
        "openai-compatible",
        embedding__endpoint="http://127.0.0.1:9/v1",
        embedding__model="e5-small",
        embedding__dimensions=384,
    )
    out = svc2.search(query="pip", mode="hybrid")
    assert "Falling back to lexical search" in out["warning"] and out["results"]


def test_a_server_not_running_or_a_model_not_installed_is_named_with_what_to_do():
    """Decision 882 (notes 16: "Ollama not running or model missing"): the messages said
    "Embedding endpoint unreachable (ConnectError)." and "answered HTTP 404; check embedding.model
    and endpoint", naming neither the address nor the model. Now both are named (never the
    endpoint's user or password), with the usual fix."""
    down = OpenAICompatibleEmbedder(
        endpoint="http://user:secret@127.0.0.1:9/v1", api_key="k", model="bge-m3", timeout_seconds=2
    )
    with pytest.raises(EmbeddingError) as caught:
        down.embed_query("q")
    text = str(caught.value)
    assert "http://127.0.0.1:9/v1" in text and "ollama serve" in text and "secret" not in text
    missing = {"error": 'model "bge-m3" not found, try pulling it first'}
    with pytest.raises(EmbeddingError) as caught:
        mock(reply(missing, 404)).embed_query("q")
    text = str(caught.value)
    assert "'m'" in text and "ollama pull m" in text and "HTTP 404" in text
