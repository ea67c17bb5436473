"""A fake OpenAI Responses API on 127.0.0.1 (`POST /v1/responses`, streamed as server-sent
events), enough for the real Codex CLI to run a scripted agent in tests: point a Codex
model provider at it (`base_url = URL + "/v1"`, `wire_api = "responses"`).

Each request takes the next step of the script, as src/socratic_doubles/fakeapi.py does for the
Messages API. A step is a dict, or a callable(request_body) -> dict:

    {"text": "...", "tools": [("exec_command", {"cmd": "ls"}), ...]}

Every request to /responses is recorded in `requests` (its headers in `headers`).
"""

from __future__ import annotations

import json
from typing import Any

from socratic_doubles.httpfake import Exchange, FakeServer, Step


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


class FakeResponses(FakeServer):
    def __init__(self, script: list[Step] | None = None, default: Step | None = None) -> None:
        super().__init__(script, default or {"text": "Done."})
        self._n = 0

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self._n += 1  # numbers the response and its items
        return super().next_step(body)

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

    def get(self, ex: Exchange) -> None:  # model lists and the like: none here
        ex.send_empty(404)

    def post(self, ex: Exchange, body: dict[str, Any]) -> None:
        if not ex.path.rstrip("/").endswith("/responses"):
            ex.send_empty(404)
            return
        self.record(ex, body)
        ex.send_stream(self.render(self.next_step(body)))


def input_text(body: dict[str, Any]) -> str:
    """Everything the request's input holds, as one string (for assertions)."""
    return json.dumps(body.get("input") or [], ensure_ascii=False)
