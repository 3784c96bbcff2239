"""A minimal SSE client over raw asyncio streams (HTTP/1.1, chunked), for benchmarks.

httpx costs tens of microseconds and a few kilobytes per frame and per connection; with 500 clients in
the same process as the publisher, that overhead would be charged to the relay. This client does only
what the figures need: send the GET (or POST), check the status, un-chunk, split frames, hand back `data:` bytes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator


class SseError(RuntimeError):
    """The server answered something other than a 200 event stream."""


class RawSseClient:
    """One open request of an SSE endpoint; iterate `frames()` for each event's `data:` payload."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, chunked: bool) -> None:
        self._reader = reader
        self._writer = writer
        self._chunked = chunked
        self._buffer = b""
        self.head = b""

    @classmethod
    async def connect(
        cls, host: str, port: int, path: str, headers: dict[str, str], body: bytes | None = None
    ) -> RawSseClient:
        """Open the connection, send the request (a GET, or a POST of the JSON `body`) and read the response head
        (raises `SseError` unless 200); `head` keeps its headers."""
        reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
        method = "GET" if body is None else "POST"
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Accept: text/event-stream"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status != 200:
            answer = await reader.read(4096)
            writer.close()
            raise SseError(f"{method} {path} answered {status}: {answer[:300]!r}")
        client = cls(reader, writer, b"transfer-encoding: chunked" in head.lower())
        client.head = head
        return client

    async def _read_more(self) -> bool:
        if not self._chunked:
            data = await self._reader.read(65536)
            self._buffer += data
            return bool(data)
        size_line = await self._reader.readline()
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            return False
        self._buffer += (await self._reader.readexactly(size + 2))[:-2]
        return True

    async def frames(self) -> AsyncIterator[bytes]:
        """Each event's data (comments such as `: ping` are skipped) until the server ends the stream."""
        async for _id, data, _size in self.events():
            yield data

    async def events(self) -> AsyncIterator[tuple[bytes | None, bytes, int]]:
        """Each event's (`id:` or None, data, bytes of the frame on the wire) until the server ends the stream."""
        while True:
            while b"\n\n" not in self._buffer:
                try:
                    if not await self._read_more():
                        return
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
            frame, self._buffer = self._buffer.split(b"\n\n", 1)
            lines = frame.split(b"\n")
            data = [line[5:].lstrip() for line in lines if line.startswith(b"data:")]
            ids = [line[3:].strip() for line in lines if line.startswith(b"id:")]
            if data:
                yield (ids[-1] if ids else None), b"\n".join(data), len(frame) + 2

    async def close(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except ConnectionError:
            pass
