"""The agent's own words, read from its transcript file at each hook call: only what was
added since the last call (a byte offset for JSON Lines, a message count for Gemini's one
JSON document), so `socratic watch` and `replay` show the agent's text as in a `run`
campaign.

Formats (the `transcript` key of an agent file):
- claude-jsonl: Claude Code, one entry a line; `{"type": "assistant", "message": {"id",
  "model", "content": [{"type": "text", "text"}, ...], "usage": {...}}}`; each content
  block is an entry of its own, the usage repeated on each.
- codex-rollout: Codex, one `{"timestamp", "type", "payload"}` a line; the agent's words
  are `response_item` payloads `{"type": "message", "role": "assistant", "content":
  [{"type": "output_text", "text"}]}`.
- gemini-json: Gemini CLI. 0.61 writes JSON Lines (`session-*.jsonl`): message records
  `{"id", "type": "gemini", "content", "tokens": {"input", "output", "cached"}, "model"}`
  (a message is written again, same id, as its tool calls complete) between `{"$set": ...}`
  patches; earlier releases wrote one JSON document `{"messages": [...]}`, rewritten as
  the session goes.

A text comes with a key when the format can repeat it (Gemini's message id): the reader's
caller logs each key once.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socratic.eventlog import parse_jsonl

MAX_READ = 64 << 20   # bytes of a transcript read at one hook call (the rest at the next)


@dataclass
class Chunk:
    """What one read found: the agent's texts in order, and token usage per message."""

    texts: list[str] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)      # one per text: log once per key
    usage: list[dict[str, Any]] = field(default_factory=list)  # {id, model, input_tokens, ...}

    def add(self, texts: list[str], key: str | None = None) -> None:
        for i, t in enumerate(texts):
            self.texts.append(t)
            self.keys.append(f"{key}:{i}" if key else None)


def read_new(fmt: str, path: str | None, offset: int) -> tuple[Chunk, int]:
    """What was added to the transcript since `offset`; returns it and the next offset.
    A missing or unreadable file, or an unknown format, reads as nothing new."""
    if not path or fmt == "none":
        return Chunk(), offset
    p = Path(path)
    # the path comes in the agent's payload (a hand-made one too), read outside its domain:
    # a FIFO or a device (/dev/zero) would hold the session server, the campaign's lock held,
    # and a file swapped for one after a check too: the descriptor opened is what is checked
    # (without blocking), and at most MAX_READ bytes are read a call (a sparse file of 100 GB)
    try:
        data = _regular_bytes(p, 0 if fmt == "gemini-json" and p.suffix != ".jsonl" else offset)
    except OSError:
        return Chunk(), offset
    if data is None:
        return Chunk(), offset
    if fmt == "gemini-json" and p.suffix != ".jsonl":
        return _gemini(data, offset)
    records, used, _ = parse_jsonl(data)
    nxt = offset + used
    if fmt == "claude-jsonl":
        return _claude(records), nxt
    if fmt == "codex-rollout":
        return _codex(records), nxt
    if fmt == "gemini-json":
        return _gemini_lines(records), nxt
    return Chunk(), offset


def _text_of(content: Any, kinds: tuple[str, ...]) -> list[str]:
    if isinstance(content, str):
        return [content] if content.strip() else []
    out = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") in kinds and isinstance(b.get("text"), str):
            if b["text"].strip():
                out.append(b["text"])
    return out


def _claude(records: list[dict[str, Any]]) -> Chunk:
    chunk = Chunk()
    for r in records:
        if r.get("type") != "assistant" or r.get("isSidechain"):
            continue
        msg = r["message"] if isinstance(r.get("message"), dict) else {}
        chunk.add(_text_of(msg.get("content"), ("text",)))
        u = msg.get("usage")
        if isinstance(u, dict) and msg.get("id"):
            chunk.usage.append({
                "id": str(msg["id"]), "model": str(msg.get("model") or ""),
                "input_tokens": _int(u.get("input_tokens")),
                "output_tokens": _int(u.get("output_tokens")),
                "cache_read": _int(u.get("cache_read_input_tokens")),
                "cache_write": _int(u.get("cache_creation_input_tokens"))})
    return chunk


def _codex(records: list[dict[str, Any]]) -> Chunk:
    chunk = Chunk()
    for r in records:
        p = r["payload"] if isinstance(r.get("payload"), dict) else {}
        if r.get("type") == "response_item" and p.get("type") == "message" \
                and p.get("role") == "assistant":
            chunk.add(_text_of(p.get("content"), ("output_text", "text")))
    return chunk


def _regular_bytes(path: Path, offset: int) -> bytes | None:
    """The bytes of `path` from `offset` (at most MAX_READ), or None when it is no regular
    file: opened without blocking (a FIFO), the kind checked on the descriptor itself."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.lseek(fd, offset, os.SEEK_SET)
        chunks, left = [], MAX_READ
        while left > 0 and (block := os.read(fd, min(left, 1 << 20))):
            chunks.append(block)
            left -= len(block)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _gemini(data: bytes, seen: int) -> tuple[Chunk, int]:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return Chunk(), seen  # caught mid-rewrite: next time
    msgs = doc.get("messages") if isinstance(doc, dict) else None
    if not isinstance(msgs, list):
        return Chunk(), seen
    chunk = Chunk()
    for m in msgs[seen:]:
        _gemini_message(chunk, m)
    return chunk, len(msgs)


def _gemini_lines(records: list[dict[str, Any]]) -> Chunk:
    chunk = Chunk()
    for r in records:
        _gemini_message(chunk, r)
    return chunk


def _gemini_message(chunk: Chunk, m: Any) -> None:
    if not isinstance(m, dict) or m.get("type") not in ("gemini", "model"):
        return
    content = m.get("content")
    if isinstance(content, list):  # parts: [{"text": ...}]
        content = [{"type": "text", **c} for c in content if isinstance(c, dict)]
    key = str(m["id"]) if m.get("id") else None
    chunk.add(_text_of(content, ("text",)), key)
    tokens = m.get("tokens")
    if key and isinstance(tokens, dict):
        chunk.usage.append({"id": key, "model": str(m.get("model") or ""),
                            "input_tokens": _int(tokens.get("input")),
                            "output_tokens": _int(tokens.get("output")),
                            "cache_read": _int(tokens.get("cached")), "cache_write": 0})


def _int(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0
