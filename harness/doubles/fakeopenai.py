"""A fake OpenAI Responses API on 127.0.0.1 (`POST /v1/responses`, streamed as server-sent
events), enough for the real Codex CLI to run a scripted agent in tests: point a Codex
model provider at it (`base_url = URL + "/v1"`, `wire_api = "responses"`).

Each request takes the next step of the script, as harness/doubles/fakeapi.py does for the
Messages API. A step is a dict, or a callable(request_body) -> dict:

    {"text": "...", "tools": [("exec_command", {"cmd": "ls"}), ...]}

Every request body is recorded in `requests`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from collections.abc import Callable

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class FakeResponses:
    def __init__(self, script: list[Step] | None = None, default: Step | None = None) -> None:
        self.script: list[Step] = list(script or [])
        self.default: Step = default or {"text": "Done."}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._n = 0
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            step = self.script.pop(0) if self.script else self.default
            self._n += 1
        return dict(step(body) if callable(step) else step)

    def items(self, step: dict[str, Any], n: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if step.get("text"):
            out.append({"type": "message", "id": f"msg_{n}", "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": step["text"],
                                     "annotations": []}]})
        for i, (name, args) in enumerate(step.get("tools", [])):
            out.append({"type": "function_call", "id": f"fc_{n}_{i}", "call_id": f"call_{n}_{i}",
                        "name": name, "arguments": json.dumps(args), "status": "completed"})
        return out

    def render(self, step: dict[str, Any]) -> list[bytes]:
        with self.lock:
            n = self._n
        rid = f"resp_{n}"
        items = self.items(step, n)
        events = [_sse({"type": "response.created", "response": {
            "id": rid, "object": "response", "status": "in_progress", "output": []}})]
        for i, item in enumerate(items):
            events.append(_sse({"type": "response.output_item.added", "output_index": i,
                                "item": {**item, "status": "in_progress"}}))
            if item["type"] == "message":
                events.append(_sse({"type": "response.output_text.delta", "item_id": item["id"],
                                    "output_index": i, "content_index": 0,
                                    "delta": item["content"][0]["text"]}))
            events.append(_sse({"type": "response.output_item.done", "output_index": i,
                                "item": item}))
        events.append(_sse({"type": "response.completed", "response": {
            "id": rid, "object": "response", "status": "completed", "output": items,
            "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}}))
        return events

    def start(self) -> FakeResponses:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _empty(self, status: int) -> None:
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:  # noqa: N802 - model lists and the like: none here
                self._empty(404)

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if not self.path.rstrip("/").endswith("/responses"):
                    self._empty(404)
                    return
                with fake.lock:
                    fake.requests.append(body)
                parts = fake.render(fake._next(body))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for p in parts:
                        self.wfile.write(p)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self) -> FakeResponses:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def input_text(body: dict[str, Any]) -> str:
    """Everything the request's input holds, as one string (for assertions)."""
    return json.dumps(body.get("input") or [], ensure_ascii=False)
