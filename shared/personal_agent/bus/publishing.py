"""The publish methods both backends share, over each one's call of the publish script."""

from __future__ import annotations

from personal_agent.bus import entry_ids
from personal_agent.bus.base import Published, published_reply


class Publishing:
    """`publish`, `publish_batch` and `publish_items` of both backends, over each one's call of the publish script
    (`bus.publish_scripts`): `_run_publish(stream, args)` answers the script's reply."""

    async def _run_publish(self, stream: str, args: list[str | int]) -> list[object]:
        raise NotImplementedError

    async def publish(
        self, stream: str, data: str, *, retention_seconds: int, maxlen: int, writer: str = "", seq: int = 0
    ) -> str:
        ids = await self.publish_batch(
            stream, [data], retention_seconds=retention_seconds, maxlen=maxlen, writer=writer, seq=seq
        )
        return ids[0]

    async def publish_batch(
        self, stream: str, data: list[str], *, retention_seconds: int, maxlen: int, writer: str = "", seq: int = 0
    ) -> list[str]:
        published = await self.publish_items(
            stream, data, retention_seconds=retention_seconds, maxlen=maxlen, writer=writer, seq=seq
        )
        return published.ids

    async def publish_items(
        self, stream: str, data: list[str], *, retention_seconds: int, maxlen: int, writer: str, seq: int
    ) -> Published:
        if not data:
            return Published([], None)
        entry_ids.check(data)
        return published_reply(await self._run_publish(stream, [maxlen, retention_seconds, writer, seq, *data]))
