"""A scripted OpenAI-compatible model server on loopback, for tests that drive `pa dev` (or the API) with a model
that is not ours: it speaks the Chat Completions wire format (streamed and not), logs every request it is sent, and
answers what a test's script says (text, or tool calls). `seen_text()` is everything that reached it, so a test can
assert what a provider of that tier never saw."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from tests.live_server import LiveServer

Reply = dict[str, Any]
"""`{"content": "text"}` or `{"tool_calls": [{"name": "tool", "arguments": {...}}]}`."""
Script = Callable[[list[dict[str, Any]]], Reply]


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """The newest user message's text (a script's usual key)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return _text(message.get("content"))
    return ""


def tool_results(messages: list[dict[str, Any]]) -> list[str]:
    """The tool results in the conversation so far, oldest first."""
    return [_text(m.get("content")) for m in messages if m.get("role") == "tool"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


def echo(messages: list[dict[str, Any]]) -> Reply:
    """The default script: answer with the last user text."""
    return {"content": f"You said: {last_user_text(messages)}"}


class FakeProvider:
    """The server, the requests it received (JSON bodies, oldest first) and its script."""

    def __init__(self, script: Script = echo, models: tuple[str, ...] = ("fake-model",)) -> None:
        self.script = script
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str] = []
        self.peers: list[tuple[str, int]] = []
        """The client address and port of each chat request (one port twice: a connection kept and used again)."""
        self.model_list_headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        routes = [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]
        self.server = LiveServer(Starlette(routes=routes))

    @property
    def base_url(self) -> str:
        return f"{self.server.url}/v1"

    def seen_text(self) -> str:
        """Every message text it was sent (system, user, assistant and tool), one string."""
        with self._lock:
            bodies = list(self.requests)
        return "\n".join(_text(m.get("content")) for body in bodies for m in body.get("messages", []))

    async def _models(self, request: Request) -> Any:
        """GET /v1/models, as OpenAI (and Ollama, vLLM) answer it."""
        with self._lock:
            self.model_list_headers.append(dict(request.headers))
        data = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in self.models]
        return JSONResponse({"object": "list", "data": data})

    async def _chat(self, request: Request) -> Any:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.keys.append(request.headers.get("authorization", "").removeprefix("Bearer "))
            self.peers.append((request.client.host, request.client.port) if request.client else ("", 0))
        reply = self.script(list(body.get("messages", [])))
        n = len(self.requests)
        calls = [
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
            }
            for i, c in enumerate(reply.get("tool_calls", []))
        ]
        content = reply.get("content")
        usage = {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = calls
            return JSONResponse(
                {
                    "id": f"c{n}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                }
            )
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": content or ""}]
        deltas += [{"tool_calls": [{"index": i, **call}]} for i, call in enumerate(calls)]
        chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage})

        async def frames() -> AsyncIterator[str]:
            for chunk in chunks:
                frame = {"id": f"c{n}", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
                yield f"data: {json.dumps({**frame, **chunk})}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")


@contextmanager
def running_fake_provider(script: Script = echo, models: tuple[str, ...] = ("fake-model",)) -> Iterator[FakeProvider]:
    """A fake provider served on loopback until the block ends (`models`: what its GET /v1/models lists)."""
    provider = FakeProvider(script, models)
    provider.server.start()
    try:
        yield provider
    finally:
        provider.server.stop()
