"""A real OpenAI-compatible ``/v1/embeddings`` server on loopback that misbehaves on request.

It answers the way Ollama, llama.cpp's server, LM Studio, vLLM or a hosted API do, good and
bad: deterministic bag-of-words vectors (similar word sets give similar vectors, so semantic
search finds something), and, when a test asks for it,

- ``refuse``: an input containing this text is refused, with ``refuse_status`` (400 as OpenAI
  and vLLM answer an over-long input, 500 as llama.cpp does) and an OpenAI error body; the whole
  request fails, as real endpoints fail the batch that holds it;
- ``zero`` / ``odd``: an input containing this text gets a zero vector / one of another size;
- ``broken``: an input containing this text gets a vector with one unusable value, ``broken_value``:
  ``NaN`` (Python's and vLLM's JSON write the literal), ``None`` (llama.cpp's nlohmann JSON writes
  a NaN as ``null``) or ``1e39`` (finite in JSON, infinite as float32);
- ``max_batch``: a request with more inputs answers 413;
- ``faults``: one-shot faults for the next requests, in order: ``(429, retry_after)``,
  ``(503, None)``, ``"reset"`` (the connection is closed without an answer), ``("sleep", s)``;
- ``dims``: the vector size, changeable between runs (a model switched behind the endpoint);
- ``delay``: seconds every answer takes (a slow model on a CPU, a busy hosted API);
- ``before_answer``: called with a request's inputs before it is answered (a test edits a file
  while the pass waits for the vectors of its old text);
- ``malformed``: every answer with more than one input breaks one of the notes' strict checks
  (§9.1): ``count`` (an item missing), ``duplicate`` (an index twice), ``range`` (an index past
  the inputs), ``empty`` (an empty vector), ``nodata`` (no ``data`` list, also for one input).

Every request is recorded (``requests``: the input lists; ``models``: the model names asked;
``paths`` and ``authorizations``: the URL path and ``Authorization`` header of each).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Endpoint", "endpoint_server", "handler_for", "word_vector"]

_WORD = re.compile(r"\w+")


def word_vector(text: str, dims: int) -> list[float]:
    """Bag-of-words hashing vector (never zero: a constant component keeps every text apart from 0)."""
    vec = [0.0] * dims
    vec[0] = 0.1
    for word in _WORD.findall(text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
        vec[1 + h % (dims - 1)] += 1.0
    return vec


class Endpoint:
    """The server's behaviour, changed by tests while it runs (attributes are read per request)."""

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self.refuse: str | None = None
        self.refuse_status = 400
        self.zero: str | None = None
        self.odd: str | None = None
        self.broken: str | None = None
        self.broken_value: float | None = float("nan")
        self.max_batch: int | None = None
        self.delay = 0.0
        self.faults: list[Any] = []
        self.before_answer: Callable[[list[str]], None] | None = None
        self.malformed: str | None = None
        self.requests: list[list[str]] = []
        self.models: list[str] = []
        self.paths: list[str] = []
        self.authorizations: list[str | None] = []
        self.lock = threading.Lock()
        self.url = ""

    def texts_sent(self) -> int:
        with self.lock:
            return sum(len(r) for r in self.requests)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        with self.lock:
            self.requests.append(list(inputs))
            self.models.append(str(body.get("model")))
            self.paths.append(handler.path)
            self.authorizations.append(handler.headers.get("Authorization"))
            fault = self.faults.pop(0) if self.faults else None
        if self.delay:
            time.sleep(self.delay)
        if self.before_answer is not None:
            self.before_answer(list(inputs))
        if fault == "reset":
            handler.close_connection = True
            handler.connection.shutdown(2)  # no answer at all: the client sees the connection drop
            return
        if isinstance(fault, tuple) and fault[0] == "sleep":
            time.sleep(float(fault[1]))
        elif isinstance(fault, tuple):
            status, retry_after = fault
            headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
            return _send(handler, status, {"error": {"message": "busy", "type": "server_error"}}, headers)
        if self.max_batch is not None and len(inputs) > self.max_batch:
            return _send(handler, 413, {"error": {"message": "request too large", "type": "invalid_request_error"}})
        if self.refuse is not None and any(self.refuse in t for t in inputs):
            error = {"message": "input exceeds the context length", "type": "invalid_request_error"}
            return _send(handler, self.refuse_status, {"error": error})
        data = []
        for i, text in enumerate(inputs):
            if self.zero is not None and self.zero in text:
                vec = [0.0] * self.dims
            elif self.odd is not None and self.odd in text:
                vec = word_vector(text, self.dims + 1)
            elif self.broken is not None and self.broken in text:
                vec = word_vector(text, self.dims)
                vec[1] = self.broken_value  # type: ignore[call-overload]
            else:
                vec = word_vector(text, self.dims)
            data.append({"object": "embedding", "index": i, "embedding": vec})
        if self.malformed == "nodata":
            return _send(handler, 200, {"object": "list", "model": body.get("model")})
        if len(data) > 1:
            if self.malformed == "count":
                data.pop()
            elif self.malformed == "duplicate":
                data[1]["index"] = 0
            elif self.malformed == "range":
                data[1]["index"] = len(data)
            elif self.malformed == "empty":
                data[1]["embedding"] = []
        _send(handler, 200, {"object": "list", "model": body.get("model"), "data": data})


def _send(handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
    raw = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(raw)


def handler_for(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    """The request handler answering as ``endpoint`` (for a test that serves it on a socket of
    its own, e.g. a port reserved before the server listens)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            endpoint.answer(self)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def endpoint_server(dims: int = 64) -> Iterator[Endpoint]:
    """Serve an :class:`Endpoint` on a free loopback port (``endpoint.url`` ends in ``/v1``)."""
    endpoint = Endpoint(dims)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(endpoint))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint.url = f"http://127.0.0.1:{server.server_port}/v1"
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
