"""An org's channels (`channel_configs`): which workspace, bot or address, which agent answers, the sealed secrets.
Calls run in the caller's transaction; `org_of` runs in a system transaction (it names no org yet)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

from personal_agent.db.pool import Conn

ChannelKind = Literal["slack", "telegram", "email"]
_COLUMNS = "id, org_id, kind, external_key, agent, secret_ciphertext, secret_nonce, secret_data_key, updated_at"


@dataclass(frozen=True)
class ChannelConfig:
    id: UUID
    org_id: UUID
    kind: ChannelKind
    external_key: str
    agent: str | None
    secret_ciphertext: bytes | None
    secret_nonce: bytes | None
    secret_data_key: bytes | None
    updated_at: datetime


def _row(row: dict[str, object]) -> ChannelConfig:
    return ChannelConfig(**{k: (bytes(v) if isinstance(v, memoryview) else v) for k, v in row.items()})  # type: ignore[arg-type]


async def org_of(conn: Conn, kind: ChannelKind, key: str) -> UUID | None:
    """The org whose `kind` channel is `key` (a Slack team id, an inbound address)."""
    row = await (await conn.execute("SELECT pa_channel_org(%s, %s) AS org_id", [kind, key])).fetchone()
    return row["org_id"] if row and row["org_id"] else None


async def orgs_with(conn: Conn, kind: ChannelKind) -> list[UUID]:
    rows = await (await conn.execute("SELECT pa_channel_orgs(%s) AS org_id", [kind])).fetchall()
    return [r["org_id"] for r in rows]


async def get(conn: Conn, kind: ChannelKind) -> ChannelConfig | None:
    cur = await conn.execute(f"SELECT {_COLUMNS} FROM channel_configs WHERE kind = %s", [kind])
    row = await cur.fetchone()
    return _row(row) if row else None


async def put(
    conn: Conn,
    org_id: UUID,
    kind: ChannelKind,
    external_key: str,
    agent: str | None,
    sealed: tuple[bytes, bytes, bytes | None] | None,
) -> ChannelConfig:
    """Create or replace the org's `kind` channel (`sealed`: ciphertext, nonce, data key; None keeps none)."""
    ciphertext, nonce, data_key = sealed or (None, None, None)
    cur = await conn.execute(
        "INSERT INTO channel_configs (org_id, kind, external_key, agent, secret_ciphertext, secret_nonce,"
        " secret_data_key) VALUES (%s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (org_id, kind) DO UPDATE SET external_key = EXCLUDED.external_key, agent = EXCLUDED.agent,"
        " secret_ciphertext = EXCLUDED.secret_ciphertext, secret_nonce = EXCLUDED.secret_nonce,"
        f" secret_data_key = EXCLUDED.secret_data_key, updated_at = now() RETURNING {_COLUMNS}",
        [org_id, kind, external_key, agent, ciphertext, nonce, data_key],
    )
    row = await cur.fetchone()
    assert row is not None
    return _row(row)


async def delete(conn: Conn, kind: ChannelKind) -> bool:
    cur = await conn.execute("DELETE FROM channel_configs WHERE kind = %s", [kind])
    return cur.rowcount > 0
