"""Following a user's feed in a test, as a page does: XREAD blocks until the next announcement arrives."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import redis

from personal_agent.bus.key_names import feed_stream
from personal_agent.settings import get_settings


class FeedCursor:
    """A position in `user_id`'s feed: `next` returns the value of the first later CUSTOM `name` event that
    `matches` (None once `timeout` passes). Make the cursor before reading the state it announces changes to,
    so no announcement falls between the read and the wait."""

    def __init__(self, org_id: Any, user_id: Any, after: str | None = None) -> None:
        self.stream = feed_stream(org_id, user_id)
        self.redis = redis.from_url(str(get_settings().redis_url))
        if after is None:
            newest = self.redis.xrevrange(self.stream, count=1)
            after = newest[0][0].decode() if newest else "0"
        self.last = after

    def next(
        self, name: str, matches: Callable[[dict[str, Any]], bool] = lambda _: True, timeout: float = 30
    ) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            # At most 4 s a call: redis-py 8's default socket timeout (5 s) would end a longer block with an error.
            for _, entries in self.redis.xread({self.stream: self.last}, block=max(1, int(min(left, 4) * 1000))) or []:
                for entry_id, fields in entries:
                    self.last = entry_id.decode()
                    event = json.loads(fields[b"d"])
                    if event.get("name") == name and matches(event.get("value") or {}):
                        return dict(event["value"])
        return None

    def close(self) -> None:
        self.redis.close()


async def my_feed(http: httpx.AsyncClient, headers: dict[str, str]) -> FeedCursor:
    """A cursor at the end of the caller's own feed (who the caller is comes from `/api/v1/me`)."""
    me = (await http.get("/api/v1/me", headers=headers)).json()
    return FeedCursor(me["org"]["id"], me["user_id"])
