"""A real, tiny PNG made in the test (what the chat's image checks and a vision model accept)."""

from __future__ import annotations

import struct
import zlib


def tiny_png(width: int = 2, height: int = 2, grey: int = 0x80) -> bytes:
    """A `width` x `height` grey PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes([grey]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
