"""A fake Gemini API on 127.0.0.1 (`POST /v1beta/models/M:streamGenerateContent?alt=sse`),
enough for the real Gemini CLI to run a scripted agent in tests: point it there with
GOOGLE_GEMINI_BASE_URL (API-key auth).

Each streamed request takes the next step of the script, as src/socratic_doubles/fakeapi.py does for
the Messages API; a step is a dict or a callable(request_body) -> dict:

    {"text": "...", "tools": [("run_shell_command", {"command": "ls"}), ...]}

Every streamed request body is recorded in `requests` (its headers in `headers`). Other
calls (token counts, the CLI's small side requests) get a plain answer and are not recorded.
"""

from __future__ import annotations

import json
from typing import Any

from socratic_doubles.httpfake import Exchange, FakeServer, Step


class FakeGemini(FakeServer):
    def __init__(self, script: list[Step] | None = None, default: Step | None = None) -> None:
        super().__init__(script, default or {"text": "Done."})

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

    def get(self, ex: Exchange) -> None:
        ex.send_json({}, 404)

    def post(self, ex: Exchange, body: dict[str, Any]) -> None:
        if ":countTokens" in ex.path:
            ex.send_json({"totalTokens": 100})
            return
        model = ex.path.split("/models/")[-1].split(":")[0]
        if ":streamGenerateContent" not in ex.path:  # side requests: a bare answer
            ex.send_json(self.chunk({"text": "{}"}, model))
            return
        self.record(ex, body)
        data = self.chunk(self.next_step(body), model)
        ex.send_stream([f"data: {json.dumps(data)}\r\n\r\n".encode()])


def contents_text(body: dict[str, Any]) -> str:
    """Everything the request's contents hold, as one string (for assertions)."""
    return json.dumps(body.get("contents") or [], ensure_ascii=False)
