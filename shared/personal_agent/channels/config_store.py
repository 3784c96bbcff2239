"""An org's channels (`channel_configs`): which workspace, bot or address, which agent answers, the sealed secrets.
Calls run in the caller's transaction; `org_of` runs in a system transaction (it names no org yet)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from uuid import UUID

from personal_agent.db.pool import Conn

ChannelKind = Literal["slack", "telegram", "email"]
_COLUMNS = (
    "id, org_id, kind, external_key, agent, secret_ciphertext, secret_nonce, secret_data_key, updated_at,"
    " allowed_roles, allowed_users"
)

# A PUT without secrets (e-mail's) keeps the sealed ones the channel has; one with secrets replaces all three.
_KEEP_SECRETS = ", ".join(
    f"{column} = CASE WHEN EXCLUDED.secret_ciphertext IS NULL THEN channel_configs.{column} ELSE EXCLUDED.{column} END"
    for column in ("secret_ciphertext", "secret_nonce", "secret_data_key")
)


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
    allowed_roles: tuple[str, ...] = ()
    allowed_users: tuple[UUID, ...] = ()
    """Who may use the channel: members with one of these roles or one of these ids; both empty: every member."""

    def allows(self, user_id: UUID, roles: frozenset[str]) -> bool:
        if not self.allowed_roles and not self.allowed_users:
            return True
        return user_id in self.allowed_users or bool(roles & set(self.allowed_roles))


def _row(row: dict[str, object]) -> ChannelConfig:
    values = {k: (bytes(v) if isinstance(v, memoryview) else v) for k, v in row.items()}
    values["allowed_roles"] = tuple(values.get("allowed_roles") or ())  # type: ignore[arg-type]
    values["allowed_users"] = tuple(values.get("allowed_users") or ())  # type: ignore[arg-type]
    return ChannelConfig(**values)  # type: ignore[arg-type]


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
    allowed: tuple[list[str], list[UUID]] = ([], []),
) -> ChannelConfig:
    """Create or replace the org's `kind` channel (`sealed`: ciphertext, nonce, data key; None keeps the secrets it
    has, as an e-mail channel's answer key; `allowed`: the roles and member ids who may use it, both empty for every
    member)."""
    ciphertext, nonce, data_key = sealed or (None, None, None)
    cur = await conn.execute(
        "INSERT INTO channel_configs (org_id, kind, external_key, agent, secret_ciphertext, secret_nonce,"
        " secret_data_key, allowed_roles, allowed_users) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (org_id, kind) DO UPDATE SET external_key = EXCLUDED.external_key, agent = EXCLUDED.agent,"
        f" {_KEEP_SECRETS}, allowed_roles = EXCLUDED.allowed_roles,"
        f" allowed_users = EXCLUDED.allowed_users, updated_at = now() RETURNING {_COLUMNS}",
        [org_id, kind, external_key, agent, ciphertext, nonce, data_key, allowed[0], allowed[1]],
    )
    row = await cur.fetchone()
    assert row is not None
    return _row(row)


async def set_secrets_if_none(conn: Conn, kind: ChannelKind, sealed: tuple[bytes, bytes, bytes | None]) -> bool:
    """Store sealed secrets for the org's `kind` channel when it has none yet (False: it has, or no such channel)."""
    cur = await conn.execute(
        "UPDATE channel_configs SET secret_ciphertext = %s, secret_nonce = %s, secret_data_key = %s, updated_at = now()"
        " WHERE kind = %s AND secret_ciphertext IS NULL",
        [*sealed, kind],
    )
    return cur.rowcount > 0


async def delete(conn: Conn, kind: ChannelKind) -> bool:
    cur = await conn.execute("DELETE FROM channel_configs WHERE kind = %s", [kind])
    return cur.rowcount > 0


async def non_members(conn: Conn, org_id: UUID, user_ids: list[UUID]) -> list[UUID]:
    """The ids among `user_ids` that are no member of the org."""
    if not user_ids:
        return []
    cur = await conn.execute(
        "SELECT user_id FROM memberships WHERE org_id = %s AND user_id = ANY(%s)", [org_id, user_ids]
    )
    found = {r["user_id"] for r in await cur.fetchall()}
    return [u for u in user_ids if u not in found]
