"""An Upstash-REST-compatible HTTP bridge over a Redis protocol server (the embedded Valkey), for tests.

It speaks what `upstash-redis` uses of the Upstash REST API:

- `POST /` with one command as a JSON array (`["XADD", "k", "*", "d", "v"]`) → `{"result": ...}` or
  `{"error": "..."}` (status 400);
- `POST /pipeline` and `POST /multi-exec` with an array of commands → an array of those objects
  (`/multi-exec` runs them in one MULTI/EXEC transaction);
- `Authorization: Bearer <token>` (or `?_token=`), else 401 `{"error": "WRONGPASS invalid or missing auth token"}`;
- `Upstash-Encoding: base64`: every string in a result is base64 except the status reply `OK`
  (the client decodes exactly that way); errors stay plain text.

Like the real service it refuses blocking commands (REST has no blocking read), so a backend that
relied on `XREAD BLOCK` would fail here rather than pass by accident.
"""

from __future__ import annotations

import base64
import contextlib
import hmac
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import uvicorn
from redis import exceptions as redis_errors
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from personal_agent.local.serving import ReadyServer

UNAUTHORIZED = "WRONGPASS invalid or missing auth token"
BLOCKING_COMMANDS = frozenset(
    {
        "BLPOP",
        "BRPOP",
        "BRPOPLPUSH",
        "BLMOVE",
        "BLMPOP",
        "BZPOPMIN",
        "BZPOPMAX",
        "BZMPOP",
        "SUBSCRIBE",
        "PSUBSCRIBE",
        "SSUBSCRIBE",
        "MONITOR",
        "WAIT",
        "WAITAOF",
    }
)


class CommandRefused(Exception):
    """A request the bridge will not forward (malformed, or blocking)."""


def _command(raw: Any) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise CommandRefused("ERR a command is a non-empty JSON array")
    if not all(isinstance(part, str | int | float) and not isinstance(part, bool) for part in raw):
        raise CommandRefused("ERR command arguments must be strings or numbers")
    args = [str(part) for part in raw]
    name = args[0].upper()
    upper = [a.upper() for a in args]
    if name in BLOCKING_COMMANDS or (name in ("XREAD", "XREADGROUP") and "BLOCK" in upper):
        raise CommandRefused(f"ERR blocking command {name} is not supported over REST")
    return args


def _encode(value: Any, b64: bool) -> Any:
    if isinstance(value, bytes):
        if not b64:
            return value.decode("utf-8", "replace")
        return "OK" if value == b"OK" else base64.b64encode(value).decode("ascii")
    if isinstance(value, str):
        return _encode(value.encode(), b64)
    if isinstance(value, list | tuple):
        return [_encode(item, b64) for item in value]
    return value  # int or None (RESP2 has nothing else)


def _outcome(value: Any, b64: bool) -> dict[str, Any]:
    if isinstance(value, Exception):
        return {"error": str(value)}
    return {"result": _encode(value, b64)}


def create_app(redis_url: str, token: str) -> Starlette:
    """The bridge as an ASGI app; its Redis client lives on the loop that serves it."""
    state: dict[str, Redis] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # RESP2 and no response callbacks: results pass through exactly as the server sent them.
        client = Redis.from_url(redis_url, decode_responses=False, protocol=2)
        client.response_callbacks.clear()
        state["redis"] = client
        try:
            yield
        finally:
            await client.aclose()

    def authorized(request: Request) -> bool:
        header = request.headers.get("authorization", "")
        given = header[7:] if header.startswith("Bearer ") else request.query_params.get("_token", "")
        return hmac.compare_digest(given.encode(), token.encode())

    async def body(request: Request) -> Any:
        try:
            return await request.json()
        except ValueError:
            raise CommandRefused("ERR the request body is not JSON") from None

    async def handle(request: Request) -> JSONResponse:
        if not authorized(request):
            return JSONResponse({"error": UNAUTHORIZED}, status_code=401)
        b64 = request.headers.get("upstash-encoding", "").lower() == "base64"
        client: Any = state["redis"]
        try:
            payload = await body(request)
            if request.url.path == "/":
                args = _command(payload)
                try:
                    result = await client.execute_command(*args)
                except redis_errors.ResponseError as exc:
                    return JSONResponse({"error": str(exc)}, status_code=400)
                return JSONResponse({"result": _encode(result, b64)})
            if not isinstance(payload, list) or not payload:
                raise CommandRefused("ERR a pipeline is a non-empty JSON array of commands")
            commands = [_command(raw) for raw in payload]
            transaction = request.url.path == "/multi-exec"
            async with client.pipeline(transaction=transaction) as pipe:
                for args in commands:
                    pipe.execute_command(*args)
                try:
                    results = await pipe.execute(raise_on_error=False)
                except redis_errors.ResponseError as exc:  # a transaction refused before it ran
                    return JSONResponse({"error": f"EXECABORT {exc}"}, status_code=400)
            return JSONResponse([_outcome(result, b64) for result in results])
        except CommandRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)

    routes = [Route(path, handle, methods=["POST"]) for path in ("/", "/pipeline", "/multi-exec")]
    return Starlette(routes=routes, lifespan=lifespan)


@contextlib.contextmanager
def running_bridge(redis_url: str, token: str, timeout: float = 10.0) -> Iterator[str]:
    """Serve the bridge on 127.0.0.1 (a port the OS picks) on a thread; yield its base URL."""
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on sockets whose proto says TCP, and
    # without it every response waits out Nagle + delayed ACK (~40 ms a request on loopback).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(redis_url, token), lifespan="on", log_level="warning", access_log=False, ws="none"
    )
    server = ReadyServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="upstash-bridge", daemon=True)
    thread.start()
    if not server.ready.wait(timeout):
        server.should_exit = True
        raise RuntimeError("the Upstash REST bridge did not start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()
