"""What the fake model APIs (`fakeapi`, `fakeopenai`, `fakegemini`) share: a threaded HTTP
server on 127.0.0.1, a script of steps taken one per model call, and every recorded request
(body and headers) kept for assertions. Each fake adds only its wire format, in `post`.

A step is a dict, or a callable(request_body) -> dict; when the script runs out, `default`
answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

_F = TypeVar("_F", bound="FakeServer")


class Exchange(BaseHTTPRequestHandler):
    """One HTTP request, handed to the fake that owns the server, with the ways to answer it."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.server.fake.get(self)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:  # a body that is not JSON is answered as an empty one
            body = {}
        self.server.fake.post(self, body)

    def send_json(self, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def send_empty(self, status: int) -> None:
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def send_stream(self, parts: Iterable[bytes], headers: dict[str, str] | None = None) -> None:
        """A 200 event stream of `parts`, then close; a client that went away ends it quietly."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for p in parts:  # parts may be a generator: it runs inside the try
                self.wfile.write(p)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, fake: FakeServer) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", port), Exchange)


class FakeServer:
    """The scripted server. Use as a context manager or call start()/stop()."""

    def __init__(self, script: list[Step] | None, default: Step, port: int = 0) -> None:
        self.port = port
        self.script: list[Step] = list(script or [])
        self.default: Step = default
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # -- script -------------------------------------------------------------------
    def add(self, *steps: Step) -> None:
        with self.lock:
            self.script.extend(steps)

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            step = self.script.pop(0) if self.script else self.default
        return dict(step(body) if callable(step) else step)

    def record(self, ex: Exchange, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in ex.headers.items()})

    # -- protocol: what each fake answers -----------------------------------------
    def post(self, ex: Exchange, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def get(self, ex: Exchange) -> None:
        # as http.server answers a method the handler does not define
        ex.send_error(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({ex.command!r})")

    # -- server -------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self: _F) -> _F:
        self.server = _Server(self.port, self)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self: _F) -> _F:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
