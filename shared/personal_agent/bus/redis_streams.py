"""Redis/Valkey backend over TCP: XADDs with MAXLEN ~ and EXPIRE for retention in one script, XREAD BLOCK.

Every wait is bounded (connect, each reply), and a server that is gone, restarting or read-only after a failover
raises `BusUnavailable` (retried by callers that can wait, `bus.outage`), never a hang or a bare redis error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from personal_agent.bus import entry_ids
from personal_agent.bus.base import BusEntry, BusUnavailable, writer_behind
from personal_agent.bus.publish_scripts import PUBLISH_BATCH
from personal_agent.bus.publishing import Publishing
from personal_agent.bus.slot_scripts import ACQUIRE, RENEW

# Every waiting SSE client holds one connection for its XREAD BLOCK, so the pool must be large, and its socket
# timeout must outlast the longest block (redis-py's default of 5 s would cut idle streams). Other commands go
# through a pool of their own whose replies are due within COMMAND_TIMEOUT_SECONDS.
MAX_CONNECTIONS = 10_000
MAX_BLOCK_SECONDS = 30.0
COMMAND_TIMEOUT_SECONDS = 5.0
CONNECT_TIMEOUT_SECONDS = 2.0
# redis-py tries a command again at once on a fresh connection when the connection failed (a pooled one the server
# closed when it restarted fails on first use), not when it timed out (that would double the wait on a hung server);
# any longer wait is the caller's, within its bound.
CLIENT_RETRIES = 1


@asynccontextmanager
async def _answering(what: str) -> AsyncIterator[None]:
    """Raise `BusUnavailable` for a failure worth another try (the message names the command, never the URL's
    password), and `WriterBehind` for the publish script's refusal."""
    from redis import exceptions

    try:
        yield
    except (exceptions.ConnectionError, exceptions.TimeoutError, exceptions.ReadOnlyError, OSError) as exc:
        # (OSError covers the builtin TimeoutError that `asyncio.timeout` raises)
        raise BusUnavailable(f"Redis {what} failed: {type(exc).__name__}") from exc
    except exceptions.ResponseError as exc:
        behind = writer_behind(str(exc))
        if behind is None:
            raise
        raise behind from None


class RedisStreamsBus(Publishing):
    """EventBus over a Redis protocol server."""

    def __init__(self, url: str, *, command_timeout_s: float = COMMAND_TIMEOUT_SECONDS) -> None:
        import redis.asyncio as aioredis
        from redis import exceptions
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        def client(socket_timeout: float) -> Any:
            return aioredis.from_url(
                url,
                decode_responses=True,
                health_check_interval=30,
                max_connections=MAX_CONNECTIONS,
                socket_timeout=socket_timeout,
                socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
                retry=Retry(NoBackoff(), CLIENT_RETRIES, supported_errors=(exceptions.ConnectionError,)),
            )

        self._timeout = command_timeout_s
        self._client: Any = client(command_timeout_s)
        self._reader: Any = client(MAX_BLOCK_SECONDS + 15)
        self._publish = self._client.register_script(PUBLISH_BATCH)  # EVALSHA, loading the script on NOSCRIPT

    async def _run_publish(self, stream: str, args: list[str | int]) -> list[object]:
        # One EVALSHA (`publish_scripts`): one command, one XADD (the batch is one entry) and one reply per batch;
        # atomic, so a relay blocked in XREAD wakes once for the whole batch.
        async with _answering("publish"):
            return list(await self._publish(keys=[stream], args=args))

    async def read(
        self, stream: str, after: str, *, block_ms: int, count: int = 100, patience_ms: int = 0
    ) -> list[BusEntry]:
        if entry_ids.inside(after):  # a resume point inside an entry: the rest of it is there, no need to wait
            async with _answering("read"):
                items = await self._client.xrange(stream, min=entry_ids.entry_of(after), count=count)
            found = entry_ids.items_after([(i, f.get("d", "")) for i, f in items], after, count)
            if found:
                return found
            after = entry_ids.entry_of(after)  # that entry is gone (trimmed) and nothing follows: wait after it
        block = min(block_ms, int(MAX_BLOCK_SECONDS * 1000))
        # A server that stopped answering without closing the connection (a failover behind a dead address) is
        # noticed one command timeout after the block ends, not when the reader's socket gives up.
        async with _answering("read"), asyncio.timeout(block / 1000 + self._timeout):
            result = await self._reader.xread({stream: after}, count=count, block=block or None)
        entries = [(entry_id, fields.get("d", "")) for _name, items in result or [] for entry_id, fields in items]
        return entry_ids.items_after(entries, "0", count)

    async def first_id(self, stream: str) -> str | None:
        async with _answering("first_id"):
            items = await self._client.xrange(stream, count=1)
        return entry_ids.unpack(str(items[0][0]), items[0][1].get("d", ""))[0].id if items else None

    async def last_id(self, stream: str) -> str | None:
        async with _answering("last_id"):
            items = await self._client.xrevrange(stream, count=1)
        return str(items[0][0]) if items else None  # the last item of an entry has the entry's id

    async def last_entry(self, stream: str) -> BusEntry | None:
        async with _answering("last_entry"):
            items = await self._client.xrevrange(stream, count=1)
        return entry_ids.unpack(str(items[0][0]), items[0][1].get("d", ""))[-1] if items else None

    async def acquire_slot(self, key: str, holder: str, *, limit: int, lease_ms: int, now_ms: int) -> int:
        async with _answering("acquire_slot"):
            return int(await self._client.eval(ACQUIRE, 1, key, now_ms, limit, lease_ms, holder))

    async def renew_slot(self, key: str, holder: str, *, lease_ms: int, now_ms: int) -> None:
        async with _answering("renew_slot"):
            await self._client.eval(RENEW, 1, key, now_ms, lease_ms, holder)

    async def release_slot(self, key: str, holder: str) -> None:
        async with _answering("release_slot"):
            await self._client.zrem(key, holder)

    async def counter(self, key: str) -> int:
        async with _answering("counter"):
            return int(await self._client.get(key) or 0)

    async def bump(self, key: str, *, ttl_seconds: int | None = None) -> int:
        async with _answering("bump"):
            if ttl_seconds is None:
                return int(await self._client.incr(key))
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.expire(key, ttl_seconds)
                value, _ = await pipe.execute()
        return int(value)

    async def ping(self) -> bool:
        async with _answering("ping"):
            return bool(await self._client.ping())

    async def close(self) -> None:
        await self._client.aclose()
        await self._reader.aclose()
