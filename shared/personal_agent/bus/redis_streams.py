"""Redis/Valkey backend over TCP: XADDs with MAXLEN ~ and EXPIRE for retention in one script, XREAD BLOCK."""

from __future__ import annotations

from typing import Any

from personal_agent.bus.base import BusEntry
from personal_agent.bus.publish_scripts import PUBLISH_BATCH
from personal_agent.bus.slot_scripts import ACQUIRE, RENEW

# Every waiting SSE client holds one connection for its XREAD BLOCK, so the pool must be large, and the
# socket timeout must outlast the longest block (redis-py's default of 5 s would cut idle streams).
MAX_CONNECTIONS = 10_000
MAX_BLOCK_SECONDS = 30.0


class RedisStreamsBus:
    """EventBus over a Redis protocol server."""

    def __init__(self, url: str) -> None:
        import redis.asyncio as aioredis

        self._client: Any = aioredis.from_url(
            url,
            decode_responses=True,
            health_check_interval=30,
            max_connections=MAX_CONNECTIONS,
            socket_timeout=MAX_BLOCK_SECONDS + 15,
            socket_connect_timeout=5,
        )
        self._publish = self._client.register_script(PUBLISH_BATCH)  # EVALSHA, loading the script on NOSCRIPT

    async def publish(self, stream: str, data: str, *, retention_seconds: int, maxlen: int) -> str:
        return (await self.publish_batch(stream, [data], retention_seconds=retention_seconds, maxlen=maxlen))[0]

    async def publish_batch(self, stream: str, data: list[str], *, retention_seconds: int, maxlen: int) -> list[str]:
        if not data:
            return []
        # One EVALSHA (`publish_scripts`): one command and one reply per batch, where a MULTI/EXEC pipeline packed
        # and parsed an XADD per event; atomic, so a relay blocked in XREAD wakes once for the whole batch.
        ids = await self._publish(keys=[stream], args=[maxlen, retention_seconds, *data])
        return [str(entry_id) for entry_id in ids]

    async def read(self, stream: str, after: str, *, block_ms: int, count: int = 100) -> list[BusEntry]:
        block = min(block_ms, int(MAX_BLOCK_SECONDS * 1000))
        result = await self._client.xread({stream: after}, count=count, block=block or None)
        entries: list[BusEntry] = []
        for _name, items in result or []:
            entries.extend(BusEntry(entry_id, fields.get("d", "")) for entry_id, fields in items)
        return entries

    async def first_id(self, stream: str) -> str | None:
        items = await self._client.xrange(stream, count=1)
        return str(items[0][0]) if items else None

    async def last_id(self, stream: str) -> str | None:
        items = await self._client.xrevrange(stream, count=1)
        return str(items[0][0]) if items else None

    async def last_entry(self, stream: str) -> BusEntry | None:
        items = await self._client.xrevrange(stream, count=1)
        return BusEntry(str(items[0][0]), items[0][1].get("d", "")) if items else None

    async def acquire_slot(self, key: str, holder: str, *, limit: int, lease_ms: int, now_ms: int) -> int:
        return int(await self._client.eval(ACQUIRE, 1, key, now_ms, limit, lease_ms, holder))

    async def renew_slot(self, key: str, holder: str, *, lease_ms: int, now_ms: int) -> None:
        await self._client.eval(RENEW, 1, key, now_ms, lease_ms, holder)

    async def release_slot(self, key: str, holder: str) -> None:
        await self._client.zrem(key, holder)

    async def counter(self, key: str) -> int:
        return int(await self._client.get(key) or 0)

    async def bump(self, key: str, *, ttl_seconds: int | None = None) -> int:
        if ttl_seconds is None:
            return int(await self._client.incr(key))
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, ttl_seconds)
            value, _ = await pipe.execute()
        return int(value)

    async def ping(self) -> bool:
        return bool(await self._client.ping())

    async def close(self) -> None:
        await self._client.aclose()
