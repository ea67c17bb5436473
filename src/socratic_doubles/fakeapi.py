"""A fake Anthropic Messages API on 127.0.0.1, speaking the real SSE streaming protocol.

Used by the tests, the overhead benchmark and the demo recording: point the real
anthropic client at it with `base_url=server.url`. Each POST /v1/messages takes the next
step of a script. A step is a dict (or a callable(request_body) -> dict):

    {"text": "...", "tools": [("bash", {"command": "ls"}), ...], "stop": "tool_use"}
    {"content": [{"type": "text", "text": ...}, {"type": "tool_use", "name": .., "input": ..}]}
    {"status": 429}                      # an HTTP error (429, 529, 500 ...), no body stream
    {"stream_error": "overloaded_error", "text": "partial"}   # an SSE error event mid-stream
    {"delay": 0.5}                       # sleep before answering (any step)

`stop` defaults to "tool_use" when the step has tool calls, else "end_turn". When the
script runs out, `default` (a step or callable) answers; by default an end_turn "Done.".
Every request is recorded (`requests`: parsed body, headers) for assertions.
`cache_usage=False` answers as a server without prompt caching does (vLLM, llama.cpp):
no cache fields in `usage`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from socratic_doubles.httpfake import Exchange, FakeServer, Step

ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
    429: "rate_limit_error", 500: "api_error", 529: "overloaded_error",
}


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _chunks(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(0, len(s), n)] or [""]


def estimate_tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body)) // 4)


class FakeAnthropic(FakeServer):
    """The scripted server. Use as a context manager or call start()/stop()."""

    def __init__(self, script: list[Step] | None = None, default: Step | None = None,
                 chunk: int = 24, model: str | None = None, cache_usage: bool = True,
                 port: int = 0) -> None:
        super().__init__(script, default or {"text": "Done.", "stop": "end_turn"}, port)
        self.cache_usage = cache_usage
        self.chunk = chunk
        self.model = model
        self._n_tool = 0
        self._n_msg = 0
        self._cached_prefix = 0

    def post(self, ex: Exchange, body: dict[str, Any]) -> None:
        self.record(ex, body)
        if not ex.path.startswith("/v1/messages"):
            self._error(ex, 404, "unknown path")
            return
        step = self.next_step(body)
        if step.get("delay"):
            time.sleep(float(step["delay"]))
        if "status" in step:
            self._error(ex, int(step["status"]), step.get("message", "scripted error"),
                        step.get("retry_after"))
            return
        ex.send_stream(self.render(body, step), {"cache-control": "no-cache"})

    @staticmethod
    def _error(ex: Exchange, status: int, message: str, retry_after: Any = None) -> None:
        headers = {"x-should-retry": "false"}
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        ex.send_json({"type": "error", "error": {
            "type": ERROR_TYPES.get(status, "api_error"), "message": message}}, status, headers)

    # -- protocol -----------------------------------------------------------------
    def content_of(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        if "content" in step:
            blocks = [dict(b) for b in step["content"]]
        else:
            blocks = []
            if step.get("text"):
                blocks.append({"type": "text", "text": step["text"]})
            for name, inp in step.get("tools", []):
                blocks.append({"type": "tool_use", "name": name, "input": inp})
        for b in blocks:
            if b["type"] == "tool_use" and "id" not in b:
                with self.lock:
                    self._n_tool += 1
                    b["id"] = f"toolu_fake_{self._n_tool:04d}"
        return blocks

    def render(self, body: dict[str, Any], step: dict[str, Any]):
        blocks = self.content_of(step)
        stop = step.get("stop") or ("tool_use" if any(b["type"] == "tool_use" for b in blocks)
                                    else "end_turn")
        with self.lock:
            self._n_msg += 1
            msg_id = f"msg_fake_{self._n_msg:04d}"
        total_in = estimate_tokens(body)
        cached = "cache_control" in json.dumps(body.get("tools", [])) or any(
            isinstance(s, dict) and "cache_control" in s for s in (body.get("system") or []))
        with self.lock:
            cache_read = min(self._cached_prefix, total_in) if cached else 0
            cache_write = max(0, total_in - cache_read) if cached else 0
            if cached:
                self._cached_prefix = total_in
        usage_in = step.get("usage", {})
        usage = {
            "input_tokens": usage_in.get("input_tokens", max(1, total_in - cache_read - cache_write)),
            "output_tokens": 1,
            "cache_read_input_tokens": usage_in.get("cache_read_input_tokens", cache_read),
            "cache_creation_input_tokens": usage_in.get("cache_creation_input_tokens", cache_write),
        }
        if not self.cache_usage:
            usage = {"input_tokens": total_in, "output_tokens": 1}
        yield _sse("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant",
            "model": self.model or body.get("model", "fake"), "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}})
        yield _sse("ping", {"type": "ping"})
        out_tokens = 0
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                yield _sse("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}})
                for piece in _chunks(b["text"], self.chunk):
                    out_tokens += max(1, len(piece) // 4)
                    yield _sse("content_block_delta", {"type": "content_block_delta", "index": i,
                               "delta": {"type": "text_delta", "text": piece}})
                    if step.get("chunk_delay"):
                        time.sleep(float(step["chunk_delay"]))
            else:
                yield _sse("content_block_start", {"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                             "input": {}}})
                js = json.dumps(b.get("input", {}))
                for piece in _chunks(js, self.chunk * 4):
                    out_tokens += max(1, len(piece) // 4)
                    yield _sse("content_block_delta", {"type": "content_block_delta", "index": i,
                               "delta": {"type": "input_json_delta", "partial_json": piece}})
            if step.get("stream_error") and i == len(blocks) - 1:
                yield _sse("error", {"type": "error", "error": {
                    "type": step["stream_error"], "message": "scripted stream error"}})
                return
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": i})
        if step.get("stream_error") and not blocks:
            yield _sse("error", {"type": "error", "error": {
                "type": step["stream_error"], "message": "scripted stream error"}})
            return
        yield _sse("message_delta", {"type": "message_delta",
                   "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": usage_in.get("output_tokens", max(1, out_tokens))}})
        yield _sse("message_stop", {"type": "message_stop"})


# -- helpers for scripted agents -----------------------------------------------------------

def last_user_text(body: dict[str, Any]) -> str:
    """All text of the last user message (tool results and text blocks), for reactive scripts."""
    msgs = body.get("messages") or []
    if not msgs:
        return ""
    content = msgs[-1].get("content")
    if isinstance(content, str):
        return content
    out: list[str] = []
    for b in content or []:
        if b.get("type") == "text":
            out.append(b.get("text", ""))
        elif b.get("type") == "tool_result":
            c = b.get("content")
            if isinstance(c, str):
                out.append(c)
            else:
                out.extend(x.get("text", "") for x in c or [] if isinstance(x, dict))
    return "\n".join(out)
