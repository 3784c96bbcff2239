"""Upstash REST backend: one atomic EVAL per publish, XREAD polled with backoff (REST cannot block)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import httpx

from personal_agent.bus import entry_ids
from personal_agent.bus.base import BusEntry, BusUnavailable, writer_behind
from personal_agent.bus.publish_scripts import PUBLISH_BATCH
from personal_agent.bus.publishing import Publishing
from personal_agent.bus.slot_scripts import ACQUIRE, RENEW

T = TypeVar("T")


class UpstashBusError(RuntimeError):
    """Upstash REST refused or failed a bus command; the message says which and why (never the token)."""


class UpstashUnavailable(UpstashBusError, BusUnavailable):
    """Upstash did not answer this once (unreachable, timed out, a 5xx whose body is not the REST API's JSON, a
    server loading or failing over): worth another try, unlike a refusal (a wrong token, a bad command)."""

    def __init__(self, message: str) -> None:
        BusUnavailable.__init__(self, message)


# Redis error prefixes that say "not now" rather than "no": the server is loading, busy or failing over.
TRANSIENT_REPLIES = ("LOADING", "BUSY", "TRYAGAIN", "READONLY", "MASTERDOWN", "CLUSTERDOWN")


def _entries(items: Any) -> list[tuple[str, str]]:
    """XRANGE's `[[id, [field, value, ...]], ...]` as (entry id, payload in field `d`)."""
    entries: list[tuple[str, str]] = []
    for entry_id, fields in items or []:
        pairs = dict(zip(fields[::2], fields[1::2], strict=True))
        entries.append((str(entry_id), str(pairs.get("d", ""))))
    return entries


class UpstashBus(Publishing):
    """EventBus over the Upstash REST API (`upstash-redis`).

    REST has no blocking read, so `read` polls XREAD, sleeping `poll_initial_s` doubling up to
    `poll_max_s` (or the reader's `patience_ms`: an idle feed polls every 2 s, not 4 times a second, each poll a
    billed command) until entries arrive or `block_ms` runs out. The client retries nothing: a failure worth another
    try raises `UpstashUnavailable`, and callers that can wait retry (`bus.outage`; a publish with a writer is
    idempotent, `publish_scripts`).
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        request_timeout_s: float = 10.0,
        poll_initial_s: float = 0.01,
        poll_max_s: float = 0.25,
    ) -> None:
        from upstash_redis.asyncio import Redis

        self._url = url.rstrip("/")
        self._client: Any = Redis(url=self._url, token=token, rest_retries=0, allow_telemetry=False)
        self._timeout = request_timeout_s
        self._poll_initial = poll_initial_s
        self._poll_max = poll_max_s

    async def _call(self, what: str, request: Awaitable[T]) -> T:
        """One REST request with a deadline (the client's own HTTP timeout is None) and a clear error."""
        from upstash_redis.errors import UpstashError

        where = f"Upstash REST {what} at {self._url}"
        try:
            async with asyncio.timeout(self._timeout):
                return await request
        except UpstashError as exc:
            message = str(exc)
            if (behind := writer_behind(message)) is not None:
                raise behind from None
            if message.startswith(TRANSIENT_REPLIES):
                raise UpstashUnavailable(f"{where} failed: {message}") from None
            hint = " (check UPSTASH_REDIS_REST_TOKEN)" if "WRONGPASS" in message or "auth" in message.lower() else ""
            raise UpstashBusError(f"{where} failed: {message}{hint}") from None
        except TimeoutError:
            raise UpstashUnavailable(f"{where} timed out after {self._timeout} s") from None
        except (httpx.HTTPError, ValueError) as exc:  # transport failure, or a body that is not JSON (a 5xx page)
            raise UpstashUnavailable(f"{where} failed: {type(exc).__name__}: {exc}") from exc

    async def _run_publish(self, stream: str, args: list[str | int]) -> list[object]:
        # XADDs with approximate trimming and the retention EXPIRE in one script: atomic, one REST request, and
        # (unlike /multi-exec) a rejected request surfaces as a plain `{"error": ...}` the client raises.
        text = [str(arg) for arg in args]
        return list(await self._call("publish", self._client.eval(PUBLISH_BATCH, keys=[stream], args=text)))

    async def _xread(self, stream: str, after: str, count: int) -> list[BusEntry]:
        result = await self._call("read", self._client.xread({stream: after}, count=count))
        entries = [entry for _name, items in result or [] for entry in _entries(items)]
        return entry_ids.items_after(entries, "0", count)

    async def read(
        self, stream: str, after: str, *, block_ms: int, count: int = 100, patience_ms: int = 0
    ) -> list[BusEntry]:
        if after == "$":  # "only what comes next": pin it to the current tail once, or every poll moves it
            after = await self.last_id(stream) or "0-0"
        if entry_ids.inside(after):  # a resume point inside an entry: the rest of it is there, no need to wait
            items = await self._call("read", self._client.xrange(stream, entry_ids.entry_of(after), "+", count=count))
            if found := entry_ids.items_after(_entries(items), after, count):
                return found
            after = entry_ids.entry_of(after)  # that entry is gone (trimmed) and nothing follows: wait after it
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(block_ms, 0) / 1000
        delay = max(self._poll_initial, patience_ms / 4000)  # a patient reader starts slow too: each read restarts
        while True:
            entries = await self._xread(stream, after, count)
            remaining = deadline - loop.time()
            if entries or remaining <= 0:
                return entries
            await asyncio.sleep(min(delay, remaining))
            delay = min(delay * 2, max(self._poll_max, patience_ms / 1000))

    async def first_id(self, stream: str) -> str | None:
        items = _entries(await self._call("first_id", self._client.xrange(stream, "-", "+", count=1)))
        return entry_ids.unpack(*items[0])[0].id if items else None

    async def last_id(self, stream: str) -> str | None:
        items = await self._call("last_id", self._client.xrevrange(stream, "+", "-", count=1))
        return str(items[0][0]) if items else None

    async def last_entry(self, stream: str) -> BusEntry | None:
        items = _entries(await self._call("last_entry", self._client.xrevrange(stream, "+", "-", count=1)))
        return entry_ids.unpack(*items[0])[-1] if items else None

    async def acquire_slot(self, key: str, holder: str, *, limit: int, lease_ms: int, now_ms: int) -> int:
        args = [str(now_ms), str(limit), str(lease_ms), holder]
        return int(await self._call("acquire_slot", self._client.eval(ACQUIRE, keys=[key], args=args)))

    async def renew_slot(self, key: str, holder: str, *, lease_ms: int, now_ms: int) -> None:
        args = [str(now_ms), str(lease_ms), holder]
        await self._call("renew_slot", self._client.eval(RENEW, keys=[key], args=args))

    async def release_slot(self, key: str, holder: str) -> None:
        await self._call("release_slot", self._client.zrem(key, holder))

    async def counter(self, key: str) -> int:
        return int(await self._call("counter", self._client.get(key)) or 0)

    async def bump(self, key: str, *, ttl_seconds: int | None = None) -> int:
        if ttl_seconds is None:
            return int(await self._call("bump", self._client.incr(key)))
        script = "local v = redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], ARGV[1]) return v"
        return int(await self._call("bump", self._client.eval(script, keys=[key], args=[str(ttl_seconds)])))

    async def ping(self) -> bool:
        return bool(await self._call("ping", self._client.ping()) == "PONG")

    async def close(self) -> None:
        await self._client.close()
