"""Apply the SQL migrations under `infra/migrations` in order, as the owner, recording each one."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

MIGRATIONS_DIR = Path(__file__).resolve().parents[3] / "infra" / "migrations"
_LOCK_KEY = 0x7061_6D69  # "pami": one migrator at a time


class MigrationFailed(RuntimeError):
    """A migration's SQL failed; the message names the migration and Postgres's error."""


@dataclass(frozen=True)
class Migration:
    version: str
    path: Path

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """The migrations on disk, ordered by their numeric prefix."""
    return [Migration(p.stem, p) for p in sorted(directory.glob("*.sql"))]


def apply_migrations(
    admin_url: str,
    *,
    app_role: str = "pa_app",
    app_password: str | None = None,
    directory: Path = MIGRATIONS_DIR,
    atomic: bool = False,
) -> list[str]:
    """Apply pending migrations; return the versions applied now. Safe to run concurrently.

    `atomic` applies the role, every pending migration and the grants in one transaction (the deploy's custom
    resource): a failure anywhere leaves the database as it was. Otherwise each migration commits on its own.
    """
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if atomic:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
                return _apply_all(conn, app_role, app_password, directory)
        conn.execute("SELECT pg_advisory_lock(%s)", [_LOCK_KEY])
        try:
            return _apply_all(conn, app_role, app_password, directory)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])


def _apply_all(
    conn: psycopg.Connection[tuple[object, ...]],
    app_role: str,
    app_password: str | None,
    directory: Path,
) -> list[str]:
    applied_now: list[str] = []
    _ensure_app_role(conn, app_role, app_password)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    done = {r[0]: r[1] for r in conn.execute("SELECT version, checksum FROM schema_migrations")}
    for migration in discover(directory):
        if migration.version in done:
            if done[migration.version] != migration.checksum:
                raise RuntimeError(f"migration {migration.version} changed after it was applied")
            continue
        # A nested transaction is a savepoint: in atomic mode the outer transaction still decides.
        try:
            with conn.transaction():
                conn.execute(migration.path.read_text())
                conn.execute(
                    "INSERT INTO schema_migrations (version, checksum) VALUES (%s, %s)",
                    [migration.version, migration.checksum],
                )
        except psycopg.Error as exc:
            raise MigrationFailed(f"migration {migration.version} failed: {exc}") from exc
        applied_now.append(migration.version)
    _grant_app_role(conn, app_role)
    return applied_now


def _ensure_app_role(conn: psycopg.Connection[tuple[object, ...]], role: str, password: str | None) -> None:
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
    if not exists:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS").format(sql.Identifier(role)))
    if password:
        conn.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))


def _grant_app_role(conn: psycopg.Connection[tuple[object, ...]], role: str) -> None:
    ident = sql.Identifier(role)
    conn.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(ident))
    conn.execute(sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {}").format(ident))
    conn.execute(sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(ident))
    conn.execute(sql.SQL("REVOKE ALL ON schema_migrations FROM {}").format(ident))
    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'pa_metering'").fetchone():  # 0025: the metering sums
        conn.execute(sql.SQL("GRANT pa_metering TO {}").format(ident))
