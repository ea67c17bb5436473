"""The fake model APIs (harness/doubles) answered directly over HTTP, without an agent: the
script, the recorded requests and the answers to paths and methods they do not serve. The
real agents run against them in test_attach_*.py, which skip where the agent is missing."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from socratic_doubles.fakeapi import FakeAnthropic
from socratic_doubles.fakegemini import FakeGemini
from socratic_doubles.fakeopenai import FakeResponses


def call(url: str, body: bytes | None = None, method: str = "POST") -> tuple[int, str, str]:
    """(status, content type, body text) of one request."""
    req = urllib.request.Request(url, data=body, method=method,
                                 headers={"content-type": "application/json", "x-probe": "1"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("content-type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read().decode()


def sse_data(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: "):]) for line in text.splitlines()
            if line.startswith("data: ")]


def test_messages_script_errors_and_recording() -> None:
    seen: list[dict[str, Any]] = []

    def reactive(body: dict[str, Any]) -> dict[str, Any]:
        seen.append(body)
        return {"text": "from a callable"}

    with FakeAnthropic([{"text": "hello", "tools": [("bash", {"command": "ls"})]},
                        {"status": 429, "retry_after": 3}, reactive]) as api:
        status, ctype, text = call(api.url + "/v1/messages", b'{"model": "m"}')
        assert (status, ctype) == (200, "text/event-stream")
        events = sse_data(text)
        assert events[0]["message"]["model"] == "m"
        kinds = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
        assert kinds == ["text", "tool_use"]
        assert events[-2]["delta"]["stop_reason"] == "tool_use"

        status, ctype, text = call(api.url + "/v1/messages", b"{}")
        assert status == 429 and json.loads(text)["error"]["type"] == "rate_limit_error"

        status, _, text = call(api.url + "/v1/messages", b'{"n": 3}')
        assert status == 200 and seen == [{"n": 3}] and "from a callable" in text

        status, _, text = call(api.url + "/v1/messages", b"not json")   # the default answers
        assert status == 200 and "Done." in text
        assert call(api.url + "/v1/other", b"{}")[0] == 404
        assert call(api.url + "/v1/messages", method="GET")[0] == 501
        # every POST is recorded, the unknown path too, with its headers
        assert api.requests == [{"model": "m"}, {}, {"n": 3}, {}, {}]
        assert all(h["x-probe"] == "1" for h in api.headers) and len(api.headers) == 5


def test_responses_script_and_recording() -> None:
    with FakeResponses([{"text": "hi", "tools": [("exec_command", {"cmd": "ls"})]}]) as api:
        status, ctype, text = call(api.url + "/v1/responses", b'{"input": ["q"]}')
        assert (status, ctype) == (200, "text/event-stream")
        events = sse_data(text)
        assert [e["type"] for e in events][0] == "response.created"
        done = events[-1]["response"]
        assert done["id"] == "resp_1" and [i["type"] for i in done["output"]] == [
            "message", "function_call"]
        assert json.loads(done["output"][1]["arguments"]) == {"cmd": "ls"}
        assert "Done." in call(api.url + "/v1/responses/", b"{}")[2]   # then the default
        assert call(api.url + "/v1/models", method="GET")[0] == 404
        assert call(api.url + "/v1/other", b"{}")[0] == 404             # not recorded
        assert api.requests == [{"input": ["q"]}, {}]


def test_gemini_stream_side_requests_and_recording() -> None:
    with FakeGemini([{"tools": [("run_shell_command", {"command": "ls"})]}]) as api:
        base = api.url + "/v1beta/models/gm"
        status, ctype, text = call(base + ":streamGenerateContent?alt=sse", b'{"contents": []}')
        assert (status, ctype) == (200, "text/event-stream")
        [chunk] = sse_data(text)
        assert chunk["modelVersion"] == "gm"
        assert chunk["candidates"][0]["content"]["parts"] == [
            {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]
        status, ctype, text = call(base + ":countTokens", b"{}")
        assert (status, ctype, json.loads(text)) == (200, "application/json", {"totalTokens": 100})
        assert call(base + ":generateContent", b"{}")[0] == 200       # a side request
        assert call(base, method="GET")[0] == 404
        assert api.requests == [{"contents": []}]                     # only the streamed one


@pytest.mark.parametrize("fake", [FakeAnthropic, FakeResponses, FakeGemini])
def test_stop_frees_the_server(fake: type) -> None:
    api = fake().start()
    url = api.url
    api.stop()
    api.stop()   # twice is harmless
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/", timeout=2)
