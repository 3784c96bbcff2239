"""The tests' Upstash REST bridge (`tests/upstash_bridge.py`) with a count of what goes through it: REST requests,
and the commands they carry by name (a pipeline's each; a script is one EVAL/EVALSHA, whatever it runs inside).

This is what `pa dev` configured with `UPSTASH_REDIS_REST_URL` sends Upstash, request for request. Behind the
bridge, Valkey's own `INFO commandstats` counts a script's inner commands too; the two counts are the bounds of
what Upstash bills (see `bench/economics.py` on how it bills a script).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import uvicorn

from personal_agent.local.serving import ReadyServer
from tests.upstash_bridge import create_app


class Counting:
    """ASGI wrapper counting requests and the command names in their JSON bodies."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests = 0
        self.commands: Counter[str] = Counter()
        self.lock = threading.Lock()

    def snapshot(self) -> tuple[int, Counter[str]]:
        with self.lock:
            return self.requests, Counter(self.commands)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        self._count(scope.get("path", "/"), body)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _count(self, path: str, body: bytes) -> None:
        try:
            payload = json.loads(body or b"null")
        except ValueError:
            payload = None
        commands = payload if path != "/" and isinstance(payload, list) else [payload]
        with self.lock:
            self.requests += 1
            for command in commands:
                if isinstance(command, list) and command:
                    self.commands[str(command[0]).lower()] += 1


@contextlib.contextmanager
def counting_bridge(redis_url: str, token: str, timeout: float = 10.0) -> Iterator[tuple[str, Counting]]:
    """Serve the counted bridge on 127.0.0.1; yield its base URL and its counter."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    counting = Counting(create_app(redis_url, token))
    config = uvicorn.Config(counting, lifespan="on", log_level="warning", access_log=False, ws="none")
    server = ReadyServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="counting-bridge", daemon=True)
    thread.start()
    if not server.ready.wait(timeout):
        server.should_exit = True
        raise RuntimeError("the counting Upstash REST bridge did not start")
    try:
        yield f"http://127.0.0.1:{port}", counting
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()
