"""Killing and starting again the test session's embedded Valkey, on its own port, with its data or without.

The session's stack (`tests/conftest.py`) started it; every client of the session (the test's loop, the live
server's thread) stays pointed at its port, so they see what a client sees when ElastiCache fails over or a Valkey
restarts: refused connections, then the same server again.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from typing import Any


class RestartableValkey:
    """The session's Valkey: `kill` it (SIGKILL, as a crash), `start` it again (empty, or reloading its data)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.port = int(server.port)

    def kill(self) -> None:
        self.server.terminate()

    def start(self, *, empty: bool = False) -> None:
        if empty:  # what a node that lost its disk, or an evicting Upstash, comes back with
            shutil.rmtree(self.server.data_dir / "appendonlydir", ignore_errors=True)
            (self.server.data_dir / "dump.rdb").unlink(missing_ok=True)
        self.server.start(timeout=20.0)
        assert self.server.port == self.port


@contextlib.contextmanager
def restartable_valkey(stack: object) -> Iterator[RestartableValkey]:
    """The session's Valkey, running again (with whatever data it has) when the block ends, whatever happened."""
    server = getattr(stack, "_valkey", None)
    assert server is not None, "the session's stack did not start an embedded Valkey"
    valkey = RestartableValkey(server)
    try:
        yield valkey
    finally:
        if not server.is_running():
            valkey.start()
