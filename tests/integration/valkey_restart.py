"""Killing and starting again the test session's embedded Valkey, on its own port, with its data or without.

The session's stack (`tests/conftest.py`) started it; every client of the session (the test's loop, the live
server's thread) stays pointed at its port, so they see what a client sees when ElastiCache fails over or a Valkey
restarts: refused connections, then the same server again.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class RestartableValkey:
    """The session's Valkey: `kill` it (SIGKILL, as a crash), `start` it again (empty, reloading its data, or from a
    `copy` of its data made earlier: a replica that lagged, promoted in a failover)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.port = int(server.port)

    def kill(self) -> None:
        """SIGKILL: what it acknowledged in its last second or two may not be in its append-only file (fsynced every
        second, and a write waits while an fsync runs), as with a replica that lagged."""
        self.server.terminate()

    def stop(self) -> None:
        """SIGTERM: it writes out everything it acknowledged, then exits (a restart, a planned failover)."""
        self.server.stop(timeout=10.0)

    def copy(self, to: Path) -> Path:
        """A copy of its data now (while it is stopped, so the files are whole)."""
        assert not self.server.is_running()
        shutil.copytree(self.server.data_dir / "appendonlydir", to / "appendonlydir")
        return to

    def start(self, *, empty: bool = False, data_from: Path | None = None) -> None:
        if empty or data_from is not None:  # what a node that lost its disk, or an evicting Upstash, comes back with
            shutil.rmtree(self.server.data_dir / "appendonlydir", ignore_errors=True)
            (self.server.data_dir / "dump.rdb").unlink(missing_ok=True)
        if data_from is not None:
            shutil.copytree(data_from / "appendonlydir", self.server.data_dir / "appendonlydir")
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
