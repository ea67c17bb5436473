"""One model response: a streaming Messages API call with tool use and prompt caching,
retried with backoff on 429/529/5xx, timeouts and dropped connections (each retry is
reported to the campaign, which logs it; the campaign never dies of one)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from socratic.harness.core.config import Config, cost_usd

RETRY_BODY_TYPES = {"overloaded_error", "rate_limit_error", "api_error", "timeout_error"}


class ContextTooLong(Exception):
    """The request no longer fits the model's context window."""


class FatalAPIError(Exception):
    """An error retrying cannot fix (bad key, bad request): the campaign ends cleanly."""


@dataclass
class Response:
    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text")

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]


def block_to_param(block: Any) -> dict[str, Any]:
    t = getattr(block, "type", None)
    if t == "text":
        return {"type": "text", "text": block.text}
    if t == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if t == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if t == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return block.model_dump(exclude_none=True)  # pragma: no cover - sent back unchanged


def with_cache_breakpoints(tools: list[dict[str, Any]], system: str,
                           messages: list[dict[str, Any]]) -> tuple[list, list, list]:
    """Prompt caching: tools, system and the conversation so far each end in a breakpoint.
    The stored messages are not modified (the marker moves every turn)."""
    tools = [dict(t) for t in tools]
    if tools:
        tools[-1]["cache_control"] = {"type": "ephemeral"}
    sys_blocks = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    msgs = list(messages)
    if msgs and msgs[-1].get("role") == "user":
        last = dict(msgs[-1])
        content = last.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        content = [dict(b) for b in content or []]
        if content:
            content[-1]["cache_control"] = {"type": "ephemeral"}
        last["content"] = content
        msgs[-1] = last
    return tools, sys_blocks, msgs


class Agent:
    def __init__(self, config: Config, api_key: str | None, *, base_url: str | None = None,
                 on_retry: Callable[[int, str, float], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        import anthropic  # heavy: imported only when a campaign runs

        self.anthropic = anthropic
        self.config = config
        self.client = anthropic.Anthropic(api_key=api_key or "missing-key", base_url=base_url,
                                          max_retries=0, timeout=config.api_timeout_s)
        self.on_retry = on_retry
        self.sleep = sleep

    def _retryable(self, exc: Exception) -> tuple[bool, float | None]:
        a = self.anthropic
        if isinstance(exc, a.APIConnectionError):  # includes APITimeoutError
            return True, None
        if isinstance(exc, a.APIStatusError):
            status = getattr(exc, "status_code", 0) or 0
            retry_after = None
            try:
                ra = exc.response.headers.get("retry-after")
                retry_after = float(ra) if ra is not None else None
            except (AttributeError, TypeError, ValueError):
                pass
            body = exc.body if isinstance(getattr(exc, "body", None), dict) else {}
            etype = ((body.get("error") or {}).get("type") if isinstance(body.get("error"), dict)
                     else body.get("type"))
            if status in (408, 409, 429) or status >= 500 or etype in RETRY_BODY_TYPES:
                return True, retry_after
            msg = str(exc).lower()
            if status == 400 and ("too long" in msg or "context" in msg and "exceed" in msg):
                raise ContextTooLong(str(exc)) from exc
            raise FatalAPIError(f"{type(exc).__name__} ({status}): {exc}") from exc
        return False, None

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        base = min(self.config.retry_max_s, self.config.retry_base_s * 2 ** (attempt - 1))
        wait = base * random.uniform(0.5, 1.0)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.config.retry_max_s))
        return wait

    def respond(self, system: str, tools: list[dict[str, Any]], messages: list[dict[str, Any]],
                on_text: Callable[[str], None] | None = None) -> Response:
        tools_c, system_c, msgs_c = with_cache_breakpoints(tools, system, messages)
        attempt = 0
        while True:
            attempt += 1
            try:
                with self.client.messages.stream(
                        model=self.config.model, max_tokens=self.config.max_tokens,
                        system=system_c, tools=tools_c, messages=msgs_c) as stream:
                    for event in stream:
                        if event.type == "text" and on_text is not None:
                            on_text(event.text)
                    final = stream.get_final_message()
                break
            except (ContextTooLong, FatalAPIError):
                raise
            except Exception as exc:
                retry, retry_after = self._retryable(exc)
                if not retry:
                    raise
                limit = self.config.retry_max_attempts
                if limit is not None and attempt >= limit:
                    raise FatalAPIError(f"gave up after {attempt} attempts: {exc}") from exc
                wait = self.backoff(attempt, retry_after)
                if self.on_retry:
                    self.on_retry(attempt, f"{type(exc).__name__}: {exc}"[:500], wait)
                self.sleep(wait)
        u = final.usage
        usage: dict[str, Any] = {
            "input_tokens": int(u.input_tokens or 0),
            "output_tokens": int(u.output_tokens or 0),
            "cache_read": int(getattr(u, "cache_read_input_tokens", 0) or 0),
            "cache_write": int(getattr(u, "cache_creation_input_tokens", 0) or 0),
        }
        usage["cost_usd"] = round(cost_usd(self.config.model, usage["input_tokens"],
                                           usage["output_tokens"], usage["cache_read"],
                                           usage["cache_write"]), 6)
        return Response([block_to_param(b) for b in final.content], final.stop_reason, usage)
