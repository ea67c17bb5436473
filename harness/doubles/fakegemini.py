"""A fake Gemini API on 127.0.0.1 (`POST /v1beta/models/M:streamGenerateContent?alt=sse`),
enough for the real Gemini CLI to run a scripted agent in tests: point it there with
GOOGLE_GEMINI_BASE_URL (API-key auth).

Each streamed request takes the next step of the script, as harness/doubles/fakeapi.py does for
the Messages API; a step is a dict or a callable(request_body) -> dict:

    {"text": "...", "tools": [("run_shell_command", {"command": "ls"}), ...]}

Every streamed request body is recorded in `requests`. Other calls (token counts, the
CLI's small side requests) get a plain answer and are not recorded.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from collections.abc import Callable

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class FakeGemini:
    def __init__(self, script: list[Step] | None = None, default: Step | None = None) -> None:
        self.script: list[Step] = list(script or [])
        self.default: Step = default or {"text": "Done."}
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            step = self.script.pop(0) if self.script else self.default
        return dict(step(body) if callable(step) else step)

    @staticmethod
    def chunk(step: dict[str, Any], model: str) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if step.get("text"):
            parts.append({"text": step["text"]})
        for name, args in step.get("tools", []):
            parts.append({"functionCall": {"name": name, "args": args}})
        return {"candidates": [{"content": {"role": "model", "parts": parts},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                                  "totalTokenCount": 110},
                "modelVersion": model}

    def start(self) -> FakeGemini:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, obj: Any, status: int = 200) -> None:
                raw = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:  # noqa: N802
                self._json({}, 404)

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if ":countTokens" in self.path:
                    self._json({"totalTokens": 100})
                    return
                model = self.path.split("/models/")[-1].split(":")[0]
                if ":streamGenerateContent" not in self.path:  # side requests: a bare answer
                    self._json(fake.chunk({"text": "{}"}, model))
                    return
                with fake.lock:
                    fake.requests.append(body)
                data = fake.chunk(fake._next(body), model)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    self.wfile.write(f"data: {json.dumps(data)}\r\n\r\n".encode())
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

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def contents_text(body: dict[str, Any]) -> str:
    """Everything the request's contents hold, as one string (for assertions)."""
    return json.dumps(body.get("contents") or [], ensure_ascii=False)
