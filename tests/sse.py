"""A small SSE client for tests: frames with their ids, Last-Event-ID resume, bounded reads."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Frame:
    id: str | None
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data.get("type"))


def parse_frames(lines: list[str]) -> tuple[list[Frame], list[str]]:
    """Complete frames in `lines` and the leftover lines of an incomplete one."""
    frames, event_id, data = [], None, []
    for line in lines:
        if line == "":
            if data:
                frames.append(Frame(event_id, json.loads("\n".join(data))))
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    return frames, []


async def read_events(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    *,
    last_event_id: str | None = None,
    limit: int | None = None,
    timeout: float = 30.0,
    connected: asyncio.Event | None = None,
) -> list[Frame]:
    """Read frames until the server closes the stream or `limit` frames arrived (then drop the connection)."""
    request_headers = dict(headers)
    if last_event_id:
        request_headers["Last-Event-ID"] = last_event_id
    async with client.stream("GET", url, headers=request_headers, timeout=timeout) as response:
        if response.status_code != 200:
            await response.aread()
            raise httpx.HTTPStatusError(
                f"{response.status_code}: {response.text}", request=response.request, response=response
            )
        if connected is not None:
            connected.set()  # the server fixed its resume point before sending the headers
        return await response_frames(response, limit)


async def response_frames(response: httpx.Response, limit: int | None = None) -> list[Frame]:
    """The frames of an open event-stream response, until it ends or `limit` frames arrived."""
    frames: list[Frame] = []
    pending: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith(":"):
            continue
        pending.append(line)
        if line == "":
            got, pending = parse_frames(pending)
            frames.extend(got)
            if limit is not None and len(frames) >= limit:
                return frames[:limit]
    return frames
